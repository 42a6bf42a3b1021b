public import Foundation
import HTTPClient
import Receipts

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

/// A client for Apple's verifyReceipt endpoints (or a stand-in such as `VerifyReceiptEndpoint`),
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
    let transport: HTTPClientTransport

    /// Creates a client with an ephemeral session of its own (no cookies, no cache), its own
    /// deadline of ``Configuration/timeout`` per request and the response bounded by
    /// ``Configuration/maximumResponseSize`` while it arrives. Redirects are not followed: the
    /// request carries the receipt and the shared secret.
    public init(configuration: Configuration) {
        self.configuration = configuration
        transport = HTTPClientTransport(timeout: configuration.timeout, maximumResponseSize: configuration.maximumResponseSize)
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
        if Task.isCancelled { throw fail(.cancelled, "the task was cancelled") }
        let outcome = await transport.send(
            HTTPClientRequest(
                method: "POST", url: url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                body: request.jsonBody))
        let body: [UInt8]
        switch outcome {
        case .timedOut:
            throw fail(.timedOut, "no response within \(configuration.timeout) s")
        case .cancelled:
            throw fail(.cancelled, "the task was cancelled")
        case .failure(let code, let text):
            throw fail(Self.code(of: code), "\(text) (URLError \(code.rawValue))")
        case .tooLarge(let status, let limit):
            throw fail(.invalidResponse, "the response is larger than \(limit) bytes", status: status)
        case .response(let status, _, let received):
            guard status == 200 else { throw fail(.httpStatus, "HTTP \(status)", status: status) }
            body = received
        }
        do throws(VerifyReceiptResponse.Malformed) {
            return try VerifyReceiptResponse(body: body)
        } catch {
            throw fail(.invalidResponse, error.reason)
        }
    }

    static func code(of error: URLError.Code) -> VerifyReceiptClientError.Code {
        switch error {
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet: .cannotConnect
        default: .transport
        }
    }
}
