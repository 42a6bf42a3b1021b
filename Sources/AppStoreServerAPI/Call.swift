import Foundation
import HTTPClient
import Internals
import JSON
import JWS
import ReceiptVerification

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One API request: its URL, the retry loop, and the errors it reports with their context.
struct Call: Sendable {
    let client: AppStoreServerAPIClient
    let endpoint: AppStoreServerEndpoint
    let method: String
    let url: URL
    let body: [UInt8]?
    /// The page number within a paging call, for error locations.
    var page: Int?
    /// The byte and time budget of the paging call this request belongs to.
    var budget: PagingBudget?

    /// Characters a path segment or query value may carry unescaped (RFC 3986 unreserved).
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// Percent-encodes everything but unreserved characters.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if isUnreserved(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + Hex.encode([byte], uppercase: true)
            }
        }
        return out
    }

    /// Builds the URL from the environment's base, the path segments (the last may be a caller's
    /// identifier: it must be 1 to 256 unreserved characters, so it can never change the path) and
    /// the query.
    init(
        _ client: AppStoreServerAPIClient, _ endpoint: AppStoreServerEndpoint, _ method: String, _ segments: [String],
        query: [(String, String)] = [], body: [UInt8]? = nil
    ) throws(AppStoreServerAPIError) {
        self.client = client
        self.endpoint = endpoint
        self.method = method
        self.body = body
        var base = client.configuration.environment.baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        for segment in segments {
            guard !segment.isEmpty, segment.utf8.count <= 256, segment.utf8.allSatisfy(Self.isUnreserved) else {
                throw AppStoreServerAPIError(
                    code: .invalidRequest, endpoint: endpoint,
                    reason: "\(VerificationTextQuote.quoted(segment)) is not an identifier (1 to 256 letters, digits, '-', '.', '_' or '~')"
                )
            }
        }
        var text = base + "/" + segments.joined(separator: "/")
        if !query.isEmpty {
            text += "?" + query.map { Self.percentEncoded($0.0) + "=" + Self.percentEncoded($0.1) }.joined(separator: "&")
        }
        guard let url = URL(string: text) else {
            throw AppStoreServerAPIError(code: .invalidRequest, endpoint: endpoint, reason: "\(text) is not a URL")
        }
        self.url = url
    }

    /// An error of this call.
    func failure(
        _ code: AppStoreServerAPIError.Code, at location: String? = nil, status: Int? = nil, attempts: Int = 0,
        failedCheck: VerificationCheck? = nil, _ reason: String
    ) -> AppStoreServerAPIError {
        let place: String? =
            switch (page, location) {
            case (let page?, let location?): "page \(page): \(location)"
            case (let page?, nil): "page \(page)"
            case (nil, let location): location
            }
        return AppStoreServerAPIError(
            code: code, endpoint: endpoint, url: url, httpStatus: status, attempts: attempts, failedCheck: failedCheck, location: place,
            reason: reason)
    }

    /// Sends the request, retrying 429 and 5xx as the policy allows; returns a 2xx body.
    func send() async throws(AppStoreServerAPIError) -> [UInt8] {
        let configuration = client.configuration
        let policy = configuration.retry
        var attempt = 0
        while true {
            attempt += 1
            do throws(CancellationError) {
                try await client.throttle.acquire(endpoint)
            } catch {
                throw failure(.cancelled, attempts: attempt - 1, "the task was cancelled while waiting for the rate limit")
            }
            let token = try client.tokens.token(now: configuration.clock())
            var headers = [
                ("Authorization", "Bearer \(token.text)"), ("Accept", "application/json"), ("User-Agent", configuration.userAgent),
            ]
            if body != nil { headers.append(("Content-Type", endpoint.requestContentType)) }
            if let budget, let reason = budget.exhausted() {
                throw failure(budget.remainingSeconds <= 0 ? .timedOut : .invalidResponse, attempts: attempt - 1, reason)
            }
            let request = HTTPClientRequest(method: method, url: url, headers: headers, body: body)
            let outcome = await client.transport.send(request, limit: budget?.remainingBytes, timeout: budget?.remainingSeconds)
            switch outcome {
            case .timedOut:
                if let budget, budget.remainingSeconds <= 0 { throw failure(.timedOut, attempts: attempt, budget.deadlineReason) }
                throw failure(.timedOut, attempts: attempt, "no response within \(configuration.timeout) s")
            case .cancelled:
                throw failure(.cancelled, attempts: attempt, "the task was cancelled")
            case .failure(let code, let text):
                let kind: AppStoreServerAPIError.Code =
                    switch code {
                    case .timedOut: .timedOut
                    case .cancelled: .cancelled
                    case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet: .cannotConnect
                    case .cannotDecodeContentData: .invalidResponse
                    default: .transport
                    }
                throw failure(kind, attempts: attempt, "\(text) (URLError \(code.rawValue))")
            case .tooLarge(let status, let limit):
                if let budget, limit < configuration.maximumResponseSize {
                    throw failure(.invalidResponse, status: status, attempts: attempt, budget.sizeReason)
                }
                throw failure(.invalidResponse, status: status, attempts: attempt, "the response body is larger than \(limit) bytes")
            case .response(let status, let responseHeaders, let responseBody):
                budget?.spend(responseBody.count)
                if (200..<300).contains(status) { return responseBody }
                let apiError = Self.errorBody(responseBody)
                let retryAfter = responseHeaders["retry-after"].flatMap { RetryAfter.seconds($0, now: Date()) }
                let retryable = status == 429 || (500...599).contains(status)
                if let retryAfter { client.throttle.holdOff(endpoint, seconds: min(retryAfter, policy.maximumRetryAfter)) }
                if retryable, attempt < policy.attempts, (retryAfter ?? 0) <= policy.maximumRetryAfter {
                    let wait = retryAfter ?? policy.backoff(after: attempt)
                    let seconds = wait.isFinite ? max(0, min(wait, 86_400)) : 0
                    if let budget, seconds >= budget.remainingSeconds {
                        throw failure(.timedOut, status: status, attempts: attempt, budget.deadlineReason)
                    }
                    do {
                        try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
                    } catch {
                        throw failure(.cancelled, status: status, attempts: attempt, "the task was cancelled while waiting to retry")
                    }
                    continue
                }
                let code: AppStoreServerAPIError.Code =
                    status == 401 ? .unauthorized : status == 429 ? .rateLimited : apiError != nil ? .apiError : .httpStatus
                var reason = "HTTP \(status)"
                if let message = apiError?.message { reason += ": \(TerminalEscaping.escaped(message))" }
                if retryable {
                    if let retryAfter, retryAfter > policy.maximumRetryAfter {
                        reason += " (Retry-After \(retryAfter) s is longer than the \(policy.maximumRetryAfter) s allowed)"
                    } else {
                        reason += " (after \(attempt) attempt\(attempt == 1 ? "" : "s"))"
                    }
                }
                throw AppStoreServerAPIError(
                    code: code, endpoint: endpoint, url: url, httpStatus: status, apiErrorCode: apiError?.code,
                    apiErrorMessage: apiError?.message, retryAfter: retryAfter, attempts: attempt, reason: reason)
            }
        }
    }

    /// Apple's error body `{"errorCode": n, "errorMessage": "…"}`, when the body is one.
    static func errorBody(_ body: [UInt8]) -> (code: APIErrorCode?, message: String?)? {
        guard !body.isEmpty, body.count <= 64 << 10, let value = try? JSONValue.parse(body), case .object = value else { return nil }
        let code = value["errorCode"]?.int64Value.map(APIErrorCode.init(rawValue:))
        let message = value["errorMessage"]?.stringValue
        guard code != nil || message != nil else { return nil }
        return (code, message)
    }

    /// The body as a JSON object.
    func object(_ body: [UInt8]) throws(AppStoreServerAPIError) -> ResponseObject {
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONValue.parse(body, options: JSONParseOptions(maximumInputSize: client.configuration.maximumResponseSize))
        } catch {
            throw failure(.invalidResponse, "the body is not strict JSON: \(error)")
        }
        guard case .object(let members) = value else {
            throw failure(.invalidResponse, "the body is \(value.kindName), not an object")
        }
        return ResponseObject(members: members, call: self, path: nil)
    }
}

/// Quoting for messages (ReceiptVerification's is internal).
enum VerificationTextQuote {
    static func quoted(_ text: String) -> String {
        let shown = text.count > 80 ? String(text.prefix(80)) + "…" : text
        return "\"" + shown.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 ? String($0) : $0.escaped(asASCII: true) }.joined() + "\""
    }
}

/// A JSON object of a response, read member by member with typed errors that say where.
struct ResponseObject {
    let members: [(String, JSONValue)]
    /// The call that received the body; nil for a body read on its own (``parsed(_:endpoint:)``).
    let call: Call?
    let endpoint: AppStoreServerEndpoint
    let path: String?

    init(members: [(String, JSONValue)], call: Call, path: String?) {
        self.members = members
        self.call = call
        self.endpoint = call.endpoint
        self.path = path
    }

    init(members: [(String, JSONValue)], endpoint: AppStoreServerEndpoint, path: String?) {
        self.members = members
        self.call = nil
        self.endpoint = endpoint
        self.path = path
    }

    /// A body of `endpoint` read on its own, outside a call.
    static func parsed(_ body: [UInt8], endpoint: AppStoreServerEndpoint) throws(AppStoreServerAPIError) -> ResponseObject {
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONValue.parse(body)
        } catch {
            throw AppStoreServerAPIError(code: .invalidResponse, endpoint: endpoint, reason: "the body is not strict JSON: \(error)")
        }
        guard case .object(let members) = value else {
            throw AppStoreServerAPIError(code: .invalidResponse, endpoint: endpoint, reason: "the body is \(value.kindName), not an object")
        }
        return ResponseObject(members: members, endpoint: endpoint, path: nil)
    }

    func fail(_ code: AppStoreServerAPIError.Code, at location: String, _ reason: String) -> AppStoreServerAPIError {
        call?.failure(code, at: location, reason)
            ?? AppStoreServerAPIError(code: code, endpoint: endpoint, location: location, reason: reason)
    }

    func location(_ name: String, _ at: String?) -> String {
        let base = at ?? path
        return base.map { "\($0).\(name)" } ?? name
    }

    /// The member's value; JSON `null` counts as absent.
    func value(_ name: String) -> JSONValue? {
        guard let value = members.first(where: { $0.0 == name })?.1 else { return nil }
        if case .null = value { return nil }
        return value
    }

    func missing(_ name: String, _ at: String?) -> AppStoreServerAPIError {
        fail(.invalidResponse, at: location(name, at), "the member is missing")
    }

    func wrongType(_ name: String, _ at: String?, _ value: JSONValue, _ expected: String) -> AppStoreServerAPIError {
        fail(.invalidResponse, at: location(name, at), "is \(value.kindName), expected \(expected)")
    }

    /// The member `name` as `read` takes it: nil when absent (``missing(_:_:)`` when
    /// `required`), ``wrongType(_:_:_:_:)`` naming `expected` when `read` refuses it.
    func member<Value>(
        _ name: String, required: Bool, at: String?, expected: String, _ read: (JSONValue) -> Value?
    ) throws(AppStoreServerAPIError) -> Value? {
        guard let value = value(name) else {
            if required { throw missing(name, at) }
            return nil
        }
        guard let typed = read(value) else { throw wrongType(name, at, value, expected) }
        return typed
    }

    func string(_ name: String, required: Bool = false, at: String? = nil) throws(AppStoreServerAPIError) -> String? {
        try member(name, required: required, at: at, expected: "a string", \.stringValue)
    }

    func int64(_ name: String, required: Bool = false, at: String? = nil) throws(AppStoreServerAPIError) -> Int64? {
        try member(name, required: required, at: at, expected: "an integer", \.int64Value)
    }

    func bool(_ name: String, required: Bool = false, at: String? = nil) throws(AppStoreServerAPIError) -> Bool? {
        try member(name, required: required, at: at, expected: "true or false", \.boolValue)
    }

    /// The elements of the array member `name` as `read` takes them (each with its location;
    /// absent: empty): ``wrongType(_:_:_:_:)`` naming `expected` for another type, an element
    /// `read` refuses named with its index.
    func elements<Element>(
        _ name: String, at: String?, expected: String, element: String, _ read: (JSONValue, String) -> Element?
    ) throws(AppStoreServerAPIError) -> [Element] {
        guard let value = value(name) else { return [] }
        guard case .array(let items) = value else { throw wrongType(name, at, value, expected) }
        var result: [Element] = []
        for (index, item) in items.enumerated() {
            let here = location("\(name)[\(index)]", at)
            guard let typed = read(item, here) else { throw fail(.invalidResponse, at: here, "is \(item.kindName), expected \(element)") }
            result.append(typed)
        }
        return result
    }

    /// An array of strings (absent: empty).
    func strings(_ name: String, at: String? = nil) throws(AppStoreServerAPIError) -> [String] {
        try elements(name, at: at, expected: "an array of strings", element: "a string") { item, _ in item.stringValue }
    }

    /// An array of objects (absent: empty).
    func objects(_ name: String, at: String? = nil) throws(AppStoreServerAPIError) -> [ResponseObject] {
        try elements(name, at: at, expected: "an array of objects", element: "an object") { item, here in
            guard case .object(let members) = item else { return nil }
            return call.map { ResponseObject(members: members, call: $0, path: here) }
                ?? ResponseObject(members: members, endpoint: endpoint, path: here)
        }
    }

    /// `environment`, which must be the configured one when present.
    func environment() throws(AppStoreServerAPIError) -> Environment? {
        guard let text = try string("environment") else { return nil }
        guard let expected = call?.client.configuration.environment.payloadEnvironment else { return Environment(rawValue: text) }
        guard text == expected.rawValue else {
            throw fail(
                .invalidResponse, at: "environment",
                "the response is for \(TerminalEscaping.escaped(text)), the client expects \(expected.rawValue)")
        }
        return Environment(rawValue: text)
    }

    /// `bundleId`, which must be the configured one when present.
    func bundleID() throws(AppStoreServerAPIError) -> String? {
        guard let text = try string("bundleId") else { return nil }
        guard let expected = call?.client.configuration.bundleID else { return text }
        guard text == expected else {
            throw fail(
                .invalidResponse, at: "bundleId", "the response is for \(TerminalEscaping.escaped(text)), the client expects \(expected)")
        }
        return text
    }
}

/// Verifies the JWS of responses with the package's JWS verifier.
struct ResponseVerifier: Sendable {
    let anchors: TrustAnchors
    let policy: VerificationPolicy
    let expectations: JWSExpectations
    let time: ValidationTime

    init(configuration: AppStoreServerAPIClient.Configuration) {
        anchors = configuration.anchors
        policy = configuration.policy
        expectations = JWSExpectations(
            bundleIdentifier: configuration.bundleID, appAppleId: configuration.appAppleID,
            environments: [configuration.environment.payloadEnvironment])
        time = configuration.validationTime
    }

    /// The verified token, or the call's ``AppStoreServerAPIError/Code/verificationFailed``.
    func verify<Value: AppStoreSignedPayload>(
        _ token: String, as type: Value.Type, at location: String, _ call: Call
    ) throws(AppStoreServerAPIError) -> SignedJWS<Value> {
        let verifier = SignedDataVerifier<JWSFormat<Value>>(anchors: anchors, policy: policy)
        // The app's expectations where the kind carries them (renewal info names no bundle id, a
        // transaction no app Apple id): passed as they are, those would be refused.
        let verdict = verifier.verify(token: token, expecting: expectations.applicable(to: Value.self), at: time)
        guard verdict.isValid, let signed = verdict.payload else {
            let failed = verdict.firstFailure
            let reason =
                failed.map { "the \(Value.payloadName) failed \($0.name): \($0.reason)" } ?? "the \(Value.payloadName) did not verify"
            throw call.failure(.verificationFailed, at: location, failedCheck: failed, reason)
        }
        return signed
    }

    func verifyAll<Value: AppStoreSignedPayload>(
        _ tokens: [String], as type: Value.Type, field: String, _ call: Call
    ) throws(AppStoreServerAPIError) -> [SignedJWS<Value>] {
        var result: [SignedJWS<Value>] = []
        result.reserveCapacity(tokens.count)
        for (index, token) in tokens.enumerated() {
            result.append(try verify(token, as: type, at: "\(field)[\(index)]", call))
        }
        return result
    }
}
