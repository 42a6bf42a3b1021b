public import Foundation
public import HTTPServer
import Internals
import JSON
public import ReceiptVerification
import Receipts
public import VerifyReceipt

/// A local stand-in for Apple's `verifyReceipt` endpoint that verifies receipts offline and answers
/// in Apple's JSON, so an existing backend can point at it unchanged.
///
/// Routes: `POST /verifyReceipt` (the path is configurable) and `GET /health`. Everything else is
/// 404; a known path with another method is 405. Like Apple's endpoint, every verifyReceipt answer
/// is HTTP 200 and the outcome is the JSON `status`, decided in this order:
///
/// | status | when |
/// |---|---|
/// | 21000 | the body is not a JSON object (or an option has the wrong type) |
/// | 21002 | `receipt-data` is missing, not a string, not base64, or not a receipt that parses |
/// | 21003 | the receipt does not verify (signature, chain at the validation time, pinned certificates, policy) |
/// | 21007 | a (verified) sandbox receipt on a production endpoint |
/// | 21008 | a (verified) production receipt on a sandbox endpoint |
/// | 21004 | a shared secret is configured and `password` differs (or is missing for subscriptions) |
/// | 21006 | an iOS 6 auto-renewable transaction receipt that is valid but expired at the request time |
/// | 0 | valid: `environment`, `receipt` and, for subscriptions, `latest_receipt_info`, `latest_receipt` |
///
/// Verification comes before routing, so 21007/21008 are only said about authentic receipts.
///
/// Environments: app receipts are production when their type is `Production`/`ProductionVPP`;
/// transaction receipts when `environment` is `Production` or absent (that value is not signed).
///
/// Stateless: every request is answered from its body and the configuration alone, so any number of
/// instances can run behind a load balancer.
public struct VerifyReceiptEndpoint: HTTPHandler {
    /// How the endpoint answers.
    public struct Configuration: Sendable {
        /// Which endpoint this stands in for (decides 21007/21008 and the `environment` written).
        public var environment: VerifyReceiptEnvironment
        /// The path of the verifyReceipt route.
        public var path: String
        /// The shared secret to require in `password`, if any.
        public var sharedSecret: String?
        /// When app receipts' chains are validated: their creation date by default, as Apple's
        /// endpoint accepted receipts whose certificates have expired since.
        public var appReceiptTime: ValidationTime
        /// When transaction receipts' chains are validated: their purchase date by default.
        public var transactionReceiptTime: ValidationTime
        /// Answer 21006 for a valid iOS 6 auto-renewable receipt whose `expires-date` is before the
        /// request time, as Apple did (on by default).
        public var reportsExpiredSubscriptions: Bool
        /// The clock for `request_date` and subscription expiry (tests pass a fixed one).
        public var clock: @Sendable () -> Date

        /// Creates a configuration.
        public init(
            environment: VerifyReceiptEnvironment = .production, path: String = "/verifyReceipt", sharedSecret: String? = nil,
            appReceiptTime: ValidationTime = .signedDate, transactionReceiptTime: ValidationTime = .signedDate,
            reportsExpiredSubscriptions: Bool = true, clock: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.environment = environment
            self.path = path
            self.sharedSecret = sharedSecret
            self.appReceiptTime = appReceiptTime
            self.transactionReceiptTime = transactionReceiptTime
            self.reportsExpiredSubscriptions = reportsExpiredSubscriptions
            self.clock = clock
        }
    }

    /// The configuration.
    public let configuration: Configuration
    /// The verifier for app receipts.
    public let appReceiptVerifier: AppReceiptVerifier
    /// The verifier for legacy transaction receipts.
    public let transactionReceiptVerifier: TransactionReceiptVerifier
    /// Where each verifyReceipt answer is reported (route ``EndpointOutcome/Route/verifyReceipt``,
    /// status 200, outcome the JSON status, detail the reason); nil: nowhere.
    public var report: OutcomeHook?

    /// Creates an endpoint with the given verifiers (their anchors decide what is trusted).
    public init(
        configuration: Configuration = Configuration(), appReceiptVerifier: AppReceiptVerifier,
        transactionReceiptVerifier: TransactionReceiptVerifier
    ) {
        self.configuration = configuration
        self.appReceiptVerifier = appReceiptVerifier
        self.transactionReceiptVerifier = transactionReceiptVerifier
    }

    /// An endpoint that trusts what Apple's did: the bundled Apple roots (App Store policy) for app
    /// receipts, and the bundled Apple Inc. Root through the pinned iTunes Store CA for transaction
    /// receipts.
    /// - Throws: `TrustAnchorError` when a bundled certificate is missing or altered.
    public static func apple(configuration: Configuration = Configuration()) throws(TrustAnchorError) -> VerifyReceiptEndpoint {
        VerifyReceiptEndpoint(
            configuration: configuration, appReceiptVerifier: try AppReceiptVerifier.appStore(),
            transactionReceiptVerifier: try TransactionReceiptVerifier.apple())
    }

    /// Routes a request (see the table above).
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        switch request.path {
        case configuration.path:
            guard request.method == "POST" else {
                return .text("use POST", status: 405, headers: [HTTPHeader("Allow", "POST")])
            }
            let answer = verifyReceipt(body: request.body)
            report?.report(
                EndpointOutcome(
                    route: .verifyReceipt, method: request.method, path: request.path, remoteAddress: request.remoteAddress, status: 200,
                    outcome: String(answer.status.rawValue), detail: answer.reason))
            return .json(answer.body)
        case "/health":
            guard request.method == "GET" || request.method == "HEAD" else {
                return .text("use GET", status: 405, headers: [HTTPHeader("Allow", "GET, HEAD")])
            }
            var json = JSONWriter(indent: 0)
            json.beginObject()
            json.string("status", "ok")
            json.string("environment", configuration.environment.rawValue)
            json.endObject()
            return .json(json.output)
        default:
            return .text("not found", status: 404)
        }
    }

    /// The outcome of one verifyReceipt request, without HTTP.
    public struct Answer: Sendable {
        /// The JSON status.
        public let status: VerifyReceiptStatus
        /// The JSON body.
        public let body: [UInt8]
        /// Why, for logs (not sent).
        public let reason: String
    }

    /// Answers a verifyReceipt request body.
    public func verifyReceipt(body: [UInt8]) -> Answer {
        let request: VerifyReceiptRequest
        do throws(VerifyReceiptRequest.Rejection) {
            request = try VerifyReceiptRequest(body: body)
        } catch {
            return failure(error.status, error.reason)
        }
        let input: ReceiptInput
        do throws(ReceiptError) {
            input = try ReceiptInput.detect(Array(request.receiptData.utf8), limits: transactionReceiptVerifier.limits)
        } catch {
            return failure(.malformedReceiptData, "receipt-data: \(error)")
        }
        switch input {
        case .transactionReceipt(let text):
            return transactionReceipt(text, request: request)
        case .appReceipt(let der):
            return appReceipt(der, request: request)
        }
    }

    func appReceipt(_ der: [UInt8], request: VerifyReceiptRequest) -> Answer {
        let verdict = appReceiptVerifier.verify(der, at: configuration.appReceiptTime)
        guard let receipt = verdict.receipt else {
            return failure(.malformedReceiptData, verdict.firstFailure.map { "\($0)" } ?? "the receipt does not parse")
        }
        guard verdict.isValid else {
            return failure(.notAuthenticated, verdict.firstFailure.map { "\($0)" } ?? "verification failed")
        }
        let hasSubscription = receipt.inAppPurchases.contains {
            $0.productType == .autoRenewableSubscription || $0.subscriptionExpirationDate != nil
        }
        if let misrouted = route(VerifyReceiptEnvironment(receipt.environment)) { return misrouted }
        if let refusal = checkSecret(request, hasSubscription: hasSubscription) { return refusal }
        let body = VerifyReceiptResponseWriter.appReceipt(
            receipt, environment: configuration.environment,
            options: .init(
                requestDate: configuration.clock(), excludeOldTransactions: request.excludeOldTransactions ?? false,
                latestReceipt: Base64.encode(der)))
        return Answer(
            status: .valid, body: body,
            reason: "app receipt \(receipt.bundleIdentifier ?? "?") with \(receipt.inAppPurchases.count) purchase(s) verified")
    }

    func failure(_ status: VerifyReceiptStatus, _ reason: String) -> Answer {
        Answer(status: status, body: VerifyReceiptResponseWriter.status(status), reason: reason)
    }

    func checkSecret(_ request: VerifyReceiptRequest, hasSubscription: Bool) -> Answer? {
        guard let secret = configuration.sharedSecret else { return nil }
        if let password = request.password {
            return password == secret ? nil : failure(.sharedSecretMismatch, "the password does not match the shared secret")
        }
        return hasSubscription ? failure(.sharedSecretMismatch, "a subscription receipt needs the shared secret") : nil
    }

    func transactionReceipt(_ text: [UInt8], request: VerifyReceiptRequest) -> Answer {
        let receipt: TransactionReceipt
        do throws(ReceiptError) {
            receipt = try TransactionReceipt(text: text, limits: transactionReceiptVerifier.limits)
        } catch {
            return failure(.malformedReceiptData, "transaction receipt: \(error)")
        }
        let verdict = transactionReceiptVerifier.verify(receipt, at: configuration.transactionReceiptTime)
        guard verdict.isValid else {
            return failure(.notAuthenticated, verdict.firstFailure.map { "\($0)" } ?? "verification failed")
        }
        let isSubscription = receipt.purchaseInfo.expiresDate != nil
        if let misrouted = route(VerifyReceiptEnvironment(receipt.environmentKind)) { return misrouted }
        if let refusal = checkSecret(request, hasSubscription: isSubscription) { return refusal }
        var status = VerifyReceiptStatus.valid
        if configuration.reportsExpiredSubscriptions, let expires = receipt.purchaseInfo.expiresDate,
            expires < configuration.clock()
        {
            status = .subscriptionExpired
        }
        let body = VerifyReceiptResponseWriter.transactionReceipt(
            receipt, status: status, environment: configuration.environment, latestReceipt: receipt.base64Encoded)
        return Answer(status: status, body: body, reason: "transaction \(receipt.purchaseInfo.transactionIdentifier ?? "?") verified")
    }

    /// 21007 or 21008 when the receipt belongs to the other environment.
    func route(_ receiptEnvironment: VerifyReceiptEnvironment) -> Answer? {
        guard receiptEnvironment != configuration.environment else { return nil }
        return receiptEnvironment == .sandbox
            ? failure(.sandboxReceiptOnProduction, "a sandbox receipt on the production endpoint")
            : failure(.productionReceiptOnSandbox, "a production receipt on the sandbox endpoint")
    }
}
