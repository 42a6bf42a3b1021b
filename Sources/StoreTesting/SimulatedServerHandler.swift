import AppStoreServerAPI
import Foundation
import HTTPServer
import Internals
import JSON
import JWS
import RMStore
import ReceiptCrypto
import ReceiptSigning

/// Signs the JWS of one response, in order, with the App Store's signer, except the one a
/// `forgedSignature` fault names.
struct ResponseSigner {
    let genuine: JWSSigner
    let forger: (signer: JWSSigner, index: Int)?
    var count = 0

    mutating func sign(_ payload: [UInt8]) throws -> String {
        defer { count += 1 }
        if let forger, forger.index == count { return try forger.signer.sign(payload: payload) }
        return try genuine.sign(payload: payload)
    }
}

/// The HTTP handler of ``SimulatedAppStoreServer``: authentication, routing, faults and answers.
final class SimulatedServerHandler: HTTPHandler {
    typealias Endpoint = SimulatedAppStoreServer.Endpoint
    typealias Fault = SimulatedAppStoreServer.Fault

    let configuration: SimulatedAppStoreServer.Configuration
    let issuer: JWSIssuer
    let clock: SimulatedClock
    let transport: any NotificationTransport
    let state = Locked(ServerState())

    init(
        configuration: SimulatedAppStoreServer.Configuration, issuer: JWSIssuer, clock: SimulatedClock, transport: any NotificationTransport
    ) {
        self.configuration = configuration
        self.issuer = issuer
        self.clock = clock
        self.transport = transport
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let route = Self.route(method: request.method, path: request.path)
        let token = Self.bearerToken(request)
        let rejection = authenticate(token)
        let response: HTTPResponse
        if rejection != nil {
            response = HTTPResponse(status: 401)
        } else if let route {
            response = limited(route.endpoint) ?? answer(route, request)
        } else {
            response = .json(Array("{}".utf8), status: 404)
        }
        let recorded = SimulatedAppStoreServer.RecordedRequest(
            method: request.method, path: request.path, query: request.query, endpoint: route?.endpoint, bearerToken: token,
            rejection: rejection, status: response.status, body: request.body, contentType: request.header("Content-Type"))
        state.withLock { $0.requests.append(recorded) }
        return response
    }

    // MARK: - Authentication

    static func bearerToken(_ request: HTTPRequest) -> String? {
        guard let value = request.header("Authorization") else { return nil }
        let prefix = "Bearer "
        guard value.hasPrefix(prefix) else { return nil }
        return String(value.dropFirst(prefix.count))
    }

    /// Why the token is refused, or nil when it is good.
    func authenticate(_ token: String?) -> String? {
        guard let token, !token.isEmpty else { return "no bearer token" }
        let jws: CompactJWS
        do {
            jws = try CompactJWS(token)
        } catch {
            return "not a compact JWS: \(error)"
        }
        let header = jws.header
        guard header.algorithm == .es256 else { return "alg is \(header.algorithm), not ES256" }
        guard header.type == "JWT" else { return "typ is \(header.type ?? "absent"), not JWT" }
        guard header.keyID == configuration.keyID else { return "kid is \(header.keyID ?? "absent"), not the registered key" }
        guard configuration.publicKey.verify(rawECDSASignature: jws.signature[...], over: jws.signingInput, digest: .sha256) else {
            return "the signature does not verify with the registered key"
        }
        let claims: JSONValue
        do {
            claims = try JSONValue.parse(jws.unverifiedPayload)
        } catch {
            return "the claims are not strict JSON: \(error)"
        }
        guard case .object = claims else { return "the claims are not an object" }
        guard claims["aud"]?.stringValue == "appstoreconnect-v1" else { return "aud is not appstoreconnect-v1" }
        guard claims["iss"]?.stringValue == configuration.issuerID else { return "iss is not the registered issuer" }
        guard claims["bid"]?.stringValue == configuration.bundleIdentifier else { return "bid is not the app's bundle id" }
        guard case .number = claims["iat"], let iat = claims["iat"]?.int64Value else { return "iat is not an integer" }
        guard case .number = claims["exp"], let exp = claims["exp"]?.int64Value else { return "exp is not an integer" }
        let now = configuration.now().timeIntervalSince1970
        guard Double(exp) > now else { return "the token expired at \(exp)" }
        guard Double(iat) <= now + configuration.clockSkew else { return "iat \(iat) is in the future" }
        guard exp > iat, Double(exp - iat) <= configuration.maximumTokenLifetime else {
            return "exp - iat is \(exp &- iat) s; at most \(Int(configuration.maximumTokenLifetime)) s is allowed"
        }
        return nil
    }

    // MARK: - Routing

    struct Route {
        let endpoint: Endpoint
        /// The path's identifiers, decoded, in the template's order.
        let arguments: [String]
        /// The last identifier (most endpoints take one).
        var parameter: String? { arguments.last }
    }

    /// The endpoint the client's wire table (``AppStoreServerEndpoint/match(method:segments:)``)
    /// finds for the request, with its identifiers decoded.
    static func route(method: String, path: String) -> Route? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.first == "", parts.count >= 2 else { return nil }
        guard let (endpoint, raw) = Endpoint.match(method: method, segments: Array(parts.dropFirst())) else { return nil }
        var arguments: [String] = []
        for text in raw {
            guard let decoded = Self.percentDecoded(text) else { return nil }
            arguments.append(decoded)
        }
        return Route(endpoint: endpoint, arguments: arguments)
    }

    /// `%XX` decoded (nil when an escape is malformed or the result is not UTF-8).
    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(), let value = Hex.decode([high, low])?.first else { return nil }
                bytes.append(value)
            } else if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The query's items in order (names and values decoded).
    static func queryItems(_ query: String?) -> [(String, String)]? {
        guard let query, !query.isEmpty else { return [] }
        var items: [(String, String)] = []
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = percentDecoded(String(parts[0])), let value = percentDecoded(parts.count > 1 ? String(parts[1]) : "") else {
                return nil
            }
            items.append((name, value))
        }
        return items
    }

    func takeFault(for endpoint: Endpoint) -> Fault? {
        state.withLock { state in
            guard let index = state.faults.firstIndex(where: { $0.0 == nil || $0.0 == endpoint }) else { return nil }
            return state.faults.remove(at: index).1
        }
    }

    func answer(_ route: Route, _ request: HTTPRequest) -> HTTPResponse {
        var forger: (JWSSigner, Int)?
        if let fault = takeFault(for: route.endpoint) {
            switch fault {
            case .none: break
            case .rateLimited(let retryAfter):
                var response = RouteError(status: 429, errorCode: 4_290_000, message: "Rate limit exceeded.").response
                if let retryAfter { response.headers.append(HTTPHeader("Retry-After", retryAfter)) }
                return response
            case .rateLimitedFor(let seconds):
                var response = RouteError(status: 429, errorCode: 4_290_000, message: "Rate limit exceeded.").response
                let wait = seconds.isFinite ? max(0, min(seconds, 86_400)) : 0
                let retryAt = (Date().timeIntervalSince1970 + wait) * 1000
                response.headers.append(HTTPHeader("Retry-After", String(Int64(retryAt.rounded(.up)))))
                return response
            case .error(let status, let code, let message):
                guard let code else { return HTTPResponse(status: status) }
                return RouteError(status: status, errorCode: code, message: message ?? "").response
            case .delay(let seconds):
                Thread.sleep(forTimeInterval: seconds.isFinite ? max(0, min(seconds, 60)) : 0)
            case .hold(let gate):
                gate.pass(timeout: 60)
            case .forgedSignature(let signer, let index):
                forger = (signer, index)
            case .body(let status, let body):
                return .json(body, status: status)
            }
        }
        var signer = ResponseSigner(genuine: issuer.signer, forger: forger.map { (signer: $0.0, index: $0.1) })
        do {
            switch route.endpoint {
            case .transactionInfo: return try transactionInfo(route.parameter, &signer)
            case .transactionHistory: return try transactionHistory(route.parameter, request.query, &signer)
            case .subscriptionStatuses: return try subscriptionStatuses(route.parameter, request.query, &signer)
            case .orderLookup: return try orderLookup(route.parameter, &signer)
            case .refundHistory: return try refundHistory(route.parameter, request.query, &signer)
            case .notificationHistory: return try notificationHistory(request.body, request.query)
            case .requestTestNotification: return try requestTestNotification(&signer)
            case .testNotificationStatus: return try testNotificationStatus(route.parameter)
            case .sendConsumptionInformation: return try consumption(route.parameter, request.body)
            case .extendSubscriptionRenewalDate: return try extend(route.parameter, request.body)
            case .sendConsumptionInformationV2: return try consumptionV2(route.parameter, request.body)
            case .setAppAccountToken: return try setAppAccountToken(route.parameter, request.body)
            case .appTransactionInfo: return try appTransactionInfo(route.parameter, &signer)
            case .finishTransaction: return try finishTransaction(route.parameter)
            case .extendRenewalDateForAllActiveSubscribers: return try massExtend(request.body)
            case .renewalDateExtensionStatus: return try massExtensionStatus(route.arguments)
            case .uploadRetentionImage, .retentionImageList, .deleteRetentionImage, .uploadRetentionMessage, .retentionMessageList,
                .deleteRetentionMessage, .configureDefaultRetentionMessage, .defaultRetentionMessage, .deleteDefaultRetentionMessage:
                return try retention(route, request)
            case .advancedCommerceChangePrice, .advancedCommerceCancel, .advancedCommerceChangeMetadata, .advancedCommerceMigrate,
                .advancedCommerceRevoke, .advancedCommerceRequestRefund:
                return try advancedCommerce(route, request, &signer)
            }
        } catch let error as RouteError {
            return error.response
        } catch {
            return RouteError.internalError.response
        }
    }
}
