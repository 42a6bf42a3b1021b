import Dispatch
public import Foundation
import Internals
import Receipts

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Why a verifyReceipt call produced no answer. Every case means "unable to complete
/// verification": the receipt was neither accepted nor rejected, so a store should keep the
/// transaction unfinished and try again later.
public struct VerifyReceiptClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a stable value that can grow without breaking callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String

        /// No response within the configured timeout.
        public static let timedOut = Code(name: "timedOut")
        /// The server could not be reached (refused, unreachable, DNS failure).
        public static let cannotConnect = Code(name: "cannotConnect")
        /// Another network failure (connection lost, TLS failure, …).
        public static let transport = Code(name: "transport")
        /// The server answered with an HTTP status other than 200 (see ``VerifyReceiptClientError/httpStatus``).
        public static let httpStatus = Code(name: "httpStatus")
        /// The body is not a verifyReceipt response (not JSON, no integer `status`, or too large).
        public static let invalidResponse = Code(name: "invalidResponse")
        /// The calling task was cancelled.
        public static let cancelled = Code(name: "cancelled")

        /// The code's name, for example `timedOut`.
        public var description: String { name }
    }

    /// What went wrong.
    public let code: Code
    /// The endpoint that failed.
    public let environment: VerifyReceiptEnvironment
    /// Its URL.
    public let url: URL
    /// The HTTP status, for ``Code/httpStatus``.
    public let httpStatus: Int?
    /// A sentence for people; not part of equality.
    public let reason: String

    /// Creates an error.
    public init(code: Code, environment: VerifyReceiptEnvironment, url: URL, httpStatus: Int? = nil, reason: String) {
        self.code = code
        self.environment = environment
        self.url = url
        self.httpStatus = httpStatus
        self.reason = reason
    }

    /// Always true: no verdict was obtained (kept as a property so callers can state the mapping).
    public var isUnableToComplete: Bool { true }

    /// Whether the same call may succeed later: timeouts, connection failures, transport errors,
    /// HTTP 429 and 5xx.
    public var isRetryable: Bool {
        switch code {
        case .timedOut, .cannotConnect, .transport: true
        case .httpStatus: httpStatus.map { $0 == 429 || $0 >= 500 } ?? false
        default: false
        }
    }

    /// `"<code> from <environment> (<url>): <reason>"`.
    public var description: String { "\(code) from \(environment) (\(url.absoluteString)): \(reason)" }

    /// Errors are equal when code, environment, URL and HTTP status are.
    public static func == (lhs: VerifyReceiptClientError, rhs: VerifyReceiptClientError) -> Bool {
        lhs.code == rhs.code && lhs.environment == rhs.environment && lhs.url == rhs.url && lhs.httpStatus == rhs.httpStatus
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(environment)
        hasher.combine(url)
        hasher.combine(httpStatus)
    }
}

/// A client for Apple's verifyReceipt endpoints (or a stand-in such as ``VerifyReceiptEndpoint``),
/// with the routing every implementation used: production first; on 21007 ("sandbox receipt") the
/// sandbox; on 21008 ("production receipt") production. Each endpoint is called at most once per
/// verification, so routing can never loop.
public struct VerifyReceiptClient: Sendable {
    /// Endpoints, secrets and limits.
    public struct Configuration: Sendable {
        /// Apple's production endpoint by default.
        public var productionURL: URL
        /// Apple's sandbox endpoint by default.
        public var sandboxURL: URL
        /// Which endpoint to call first.
        public var initialEnvironment: VerifyReceiptEnvironment
        /// The app's shared secret, sent as `password`.
        public var sharedSecret: String?
        /// Sent as `exclude-old-transactions` when set.
        public var excludeOldTransactions: Bool?
        /// Follow 21007 to sandbox and 21008 to production.
        public var followsEnvironmentRedirects: Bool
        /// Time allowed for each HTTP request.
        public var timeout: TimeInterval
        /// Largest accepted response body.
        public var maximumResponseSize: Int

        /// `https://buy.itunes.apple.com/verifyReceipt`.
        public static let appleProductionURL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")
        /// `https://sandbox.itunes.apple.com/verifyReceipt`.
        public static let appleSandboxURL = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")

        /// Creates a configuration.
        public init(
            productionURL: URL, sandboxURL: URL, initialEnvironment: VerifyReceiptEnvironment = .production,
            sharedSecret: String? = nil, excludeOldTransactions: Bool? = nil, followsEnvironmentRedirects: Bool = true,
            timeout: TimeInterval = 30, maximumResponseSize: Int = 32 << 20
        ) {
            self.productionURL = productionURL
            self.sandboxURL = sandboxURL
            self.initialEnvironment = initialEnvironment
            self.sharedSecret = sharedSecret
            self.excludeOldTransactions = excludeOldTransactions
            self.followsEnvironmentRedirects = followsEnvironmentRedirects
            self.timeout = timeout
            self.maximumResponseSize = maximumResponseSize
        }

        /// Apple's two endpoints.
        public static var apple: Configuration? {
            guard let production = appleProductionURL, let sandbox = appleSandboxURL else { return nil }
            return Configuration(productionURL: production, sandboxURL: sandbox)
        }

        /// The URL of `environment`.
        public func url(for environment: VerifyReceiptEnvironment) -> URL {
            environment == .production ? productionURL : sandboxURL
        }
    }

    /// A response and how it was obtained.
    public struct Result: Sendable {
        /// The final response.
        public let response: VerifyReceiptResponse
        /// The endpoint that gave it.
        public let environment: VerifyReceiptEnvironment
        /// Every endpoint called, in order (one or two).
        public let attempts: [VerifyReceiptEnvironment]
    }

    /// The configuration.
    public let configuration: Configuration
    let sessionOwner: SessionOwner
    var session: URLSession { sessionOwner.session }

    /// Holds the URLSession; one the client created itself is invalidated when the last copy of the
    /// client goes away (URLSession keeps its resources until invalidated).
    final class SessionOwner: Sendable {
        let session: URLSession
        let owned: Bool

        init(session: URLSession, owned: Bool) {
            self.session = session
            self.owned = owned
        }

        deinit {
            if owned { session.finishTasksAndInvalidate() }
        }
    }

    /// Creates a client. Without `session`, an ephemeral session (no cookies, no cache) with the
    /// configured timeout is used.
    public init(configuration: Configuration, session: URLSession? = nil) {
        self.configuration = configuration
        if let session {
            sessionOwner = SessionOwner(session: session, owned: false)
        } else {
            let sessionConfiguration = URLSessionConfiguration.ephemeral
            // A backstop only: the client enforces ``Configuration/timeout`` itself, because
            // URLSession on Linux truncates timeouts to whole seconds (0.5 s becomes "at once").
            sessionConfiguration.timeoutIntervalForRequest = (configuration.timeout + 1).rounded(.up)
            sessionConfiguration.timeoutIntervalForResource = (configuration.timeout + 1).rounded(.up)
            sessionConfiguration.httpCookieStorage = nil
            sessionConfiguration.urlCache = nil
            sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
            sessionOwner = SessionOwner(session: URLSession(configuration: sessionConfiguration), owned: true)
        }
    }

    /// Verifies receipt bytes (an app receipt's DER, or a transaction receipt's text); they are
    /// base64-encoded for `receipt-data`.
    public func verify(receipt: [UInt8]) async throws(VerifyReceiptClientError) -> Result {
        try await verify(
            VerifyReceiptRequest(
                receipt: receipt, password: configuration.sharedSecret,
                excludeOldTransactions: configuration.excludeOldTransactions))
    }

    /// Verifies a request, following 21007/21008 once each (see the type's description).
    public func verify(_ request: VerifyReceiptRequest) async throws(VerifyReceiptClientError) -> Result {
        var environment = configuration.initialEnvironment
        var attempts: [VerifyReceiptEnvironment] = []
        while true {
            attempts.append(environment)
            let response = try await send(request, to: environment)
            guard configuration.followsEnvironmentRedirects else {
                return Result(response: response, environment: environment, attempts: attempts)
            }
            let next: VerifyReceiptEnvironment? =
                switch response.status {
                case .sandboxReceiptOnProduction where environment == .production: .sandbox
                case .productionReceiptOnSandbox where environment == .sandbox: .production
                default: nil
                }
            guard let next, !attempts.contains(next) else {
                return Result(response: response, environment: environment, attempts: attempts)
            }
            environment = next
        }
    }

    /// One POST to one endpoint, without routing.
    public func send(
        _ request: VerifyReceiptRequest, to environment: VerifyReceiptEnvironment
    ) async throws(VerifyReceiptClientError) -> VerifyReceiptResponse {
        let url = configuration.url(for: environment)
        func fail(_ code: VerifyReceiptClientError.Code, _ reason: String, status: Int? = nil) -> VerifyReceiptClientError {
            VerifyReceiptClientError(code: code, environment: environment, url: url, httpStatus: status, reason: reason)
        }
        var urlRequest = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: (configuration.timeout + 1).rounded(.up))
        urlRequest.httpMethod = "POST"
        urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        urlRequest.httpBody = Data(request.jsonBody)

        if Task.isCancelled { throw fail(.cancelled, "the task was cancelled") }
        let exchange = Exchange()
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Exchange.Outcome, Never>) in
                exchange.begin(continuation)
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        exchange.finish(.failure(error as? URLError ?? URLError(.unknown), "\(error)"))
                    } else if let http = response as? HTTPURLResponse {
                        exchange.finish(.response(data ?? Data(), http.statusCode))
                    } else {
                        exchange.finish(.failure(URLError(.badServerResponse), "not an HTTP response"))
                    }
                }
                exchange.attach(task)
                task.resume()
                // Our own deadline: URLSession on Linux truncates timeouts to whole seconds.
                DispatchQueue.global().asyncAfter(deadline: .now() + configuration.timeout) { exchange.expire() }
            }
        } onCancel: {
            exchange.cancel()
        }
        let data: Data
        switch outcome {
        case .timedOut:
            throw fail(.timedOut, "no response within \(configuration.timeout) s")
        case .cancelled:
            throw fail(.cancelled, "the task was cancelled")
        case .failure(let error, let text):
            throw fail(Self.code(of: error), "\(text) (URLError \(error.code.rawValue))")
        case .response(let body, let status):
            guard status == 200 else { throw fail(.httpStatus, "HTTP \(status)", status: status) }
            data = body
        }
        guard data.count <= configuration.maximumResponseSize else {
            throw fail(.invalidResponse, "the response has \(data.count) bytes, more than \(configuration.maximumResponseSize)")
        }
        do throws(VerifyReceiptResponse.Malformed) {
            return try VerifyReceiptResponse(body: [UInt8](data))
        } catch {
            throw fail(.invalidResponse, error.reason)
        }
    }

    /// One HTTP exchange: resumes its continuation exactly once, with the response, the failure,
    /// or the deadline or cancellation that came first.
    final class Exchange: Sendable {
        enum Outcome: Sendable {
            case response(Data, Int)
            case failure(URLError, String)
            case timedOut
            case cancelled
        }

        struct State {
            var continuation: CheckedContinuation<Outcome, Never>?
            var task: URLSessionDataTask?
            /// The outcome, once decided (possibly before the continuation existed).
            var outcome: Outcome?
        }

        let state = Locked(State())

        func begin(_ continuation: CheckedContinuation<Outcome, Never>) {
            let decided = state.withLock { state -> Outcome? in
                if state.outcome == nil { state.continuation = continuation }
                return state.outcome
            }
            if let decided { continuation.resume(returning: decided) }
        }

        func attach(_ task: URLSessionDataTask) {
            let decided = state.withLock { state -> Bool in
                state.task = task
                return state.outcome != nil
            }
            if decided { task.cancel() }
        }

        /// Decides the outcome if nothing did yet: resumes the caller and, for a deadline or a
        /// cancellation, cancels the HTTP task.
        func finish(_ outcome: Outcome) {
            let taken = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, URLSessionDataTask?)? in
                guard state.outcome == nil else { return nil }
                state.outcome = outcome
                defer { state.continuation = nil }
                return (state.continuation, state.task)
            }
            guard let (continuation, task) = taken else { return }
            continuation?.resume(returning: outcome)
            switch outcome {
            case .timedOut, .cancelled: task?.cancel()
            case .response, .failure: break
            }
        }

        func expire() { finish(.timedOut) }

        func cancel() { finish(.cancelled) }
    }

    static func code(of error: URLError) -> VerifyReceiptClientError.Code {
        switch error.code {
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet: .cannotConnect
        default: .transport
        }
    }
}
