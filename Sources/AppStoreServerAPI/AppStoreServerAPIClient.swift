public import Foundation
import HTTPClient
import Internals
import JSON
public import JWS
public import ReceiptVerification

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where the client sends requests, and which environment the signed payloads must name.
public struct AppStoreServerEnvironment: Sendable, Hashable, CustomStringConvertible {
    /// The scheme, host and port (and an optional path prefix) of the API.
    public var baseURL: URL
    /// The `environment` every signed payload and response must name.
    public var payloadEnvironment: Environment

    /// Creates an environment.
    public init(baseURL: URL, payloadEnvironment: Environment) {
        self.baseURL = baseURL
        self.payloadEnvironment = payloadEnvironment
    }

    /// `https://api.storekit.apple.com` (Apple's recommended host since May 2026), payloads in
    /// `Production`.
    public static let production = AppStoreServerEnvironment(
        baseURL: URL(string: "https://api.storekit.apple.com") ?? URL(fileURLWithPath: "/"), payloadEnvironment: .production)
    /// `https://api.storekit-sandbox.apple.com` (Apple's recommended host since May 2026),
    /// payloads in `Sandbox`.
    public static let sandbox = AppStoreServerEnvironment(
        baseURL: URL(string: "https://api.storekit-sandbox.apple.com") ?? URL(fileURLWithPath: "/"), payloadEnvironment: .sandbox)
    /// `https://api.storekit.itunes.apple.com`, the older production host (still answering).
    public static let productionLegacyHost = AppStoreServerEnvironment(
        baseURL: URL(string: "https://api.storekit.itunes.apple.com") ?? URL(fileURLWithPath: "/"), payloadEnvironment: .production)
    /// `https://api.storekit-sandbox.itunes.apple.com`, the older sandbox host (still answering).
    public static let sandboxLegacyHost = AppStoreServerEnvironment(
        baseURL: URL(string: "https://api.storekit-sandbox.itunes.apple.com") ?? URL(fileURLWithPath: "/"), payloadEnvironment: .sandbox)

    /// The same environment served from another URL (a simulated App Store Server on 127.0.0.1, a
    /// proxy): only where requests go changes; the payloads must still name this environment.
    public func at(_ baseURL: URL) -> AppStoreServerEnvironment {
        AppStoreServerEnvironment(baseURL: baseURL, payloadEnvironment: payloadEnvironment)
    }

    /// `Sandbox at https://…`.
    public var description: String { "\(payloadEnvironment) at \(baseURL.absoluteString)" }
}

/// A client for the App Store Server API.
///
/// - **Authentication**: an ES256 JWT from the developer's `.p8` key (``APITokenSigner``), reused
///   for every request until ``Configuration/tokenRefreshMargin`` before it expires.
/// - **Verification**: every JWS in every response (transactions, renewal info, notifications with
///   their nested tokens) is verified with the package's JWS verifier against
///   ``Configuration/anchors`` and must name the configured bundle id and environment; the
///   response's own `bundleId` and `environment` must too. One value that fails makes the whole
///   call fail with ``AppStoreServerAPIError/Code/verificationFailed``: there is no partial
///   success, and the paging calls return nothing from earlier pages either. Each answer must
///   also match its request (the transaction asked for, the filters asked for, a TEST test
///   notification, notifications in the requested range), or the call fails the same way with the
///   check `answerMatchesRequest`.
/// - **Errors**: Apple's `errorCode` is kept as an ``APIErrorCode`` with the HTTP status. HTTP 429
///   and 5xx are retried (``RetryPolicy``), waiting at least what `Retry-After` asks; each HTTP
///   attempt has ``Configuration/timeout`` and a bounded body.
public final class AppStoreServerAPIClient: Sendable {
    /// What the client needs to know.
    public struct Configuration: Sendable {
        /// The App Store Connect API key (issuer id, key id, private key).
        public var key: AppStoreConnectKey
        /// The app's bundle id: `bid` in the token, and what every signed payload must name.
        public var bundleID: String
        /// Where requests go and which environment payloads must name.
        public var environment: AppStoreServerEnvironment
        /// The roots a JWS chain must end at (`TrustAnchors.appleRoots` for Apple's API).
        public var anchors: TrustAnchors
        /// The chain policy of the JWS verifier.
        public var policy: VerificationPolicy
        /// The app's Apple id, checked on production payloads when set.
        public var appAppleID: Int64?
        /// When the JWS chains must be valid (each payload's `signedDate` by default).
        public var validationTime: ValidationTime
        /// Seconds allowed for each HTTP attempt.
        public var timeout: TimeInterval
        /// Retries of 429 and 5xx answers.
        public var retry: RetryPolicy
        /// Seconds a token lives (at most 3600; Apple's libraries use 300).
        public var tokenLifetime: TimeInterval
        /// A new token is made this many seconds before the current one expires.
        public var tokenRefreshMargin: TimeInterval
        /// The largest response body accepted (the transfer stops there). Bodies are asked for,
        /// and accepted, only in the identity encoding, so the limit counts the bytes the
        /// response really holds.
        public var maximumResponseSize: Int
        /// The most pages one paging call reads.
        public var maximumPages: Int
        /// The most response bytes one paging call (every page of a history) reads, all pages
        /// together (16 MiB by default: some 5,000 transactions); the transfer that would pass it
        /// stops there and the call fails with ``AppStoreServerAPIError/Code/invalidResponse``.
        public var maximumTotalResponseSize: Int
        /// The longest one paging call may take, every page and retry included, in seconds (300
        /// by default); past it the call fails with ``AppStoreServerAPIError/Code/timedOut``.
        public var pagingDeadline: TimeInterval
        /// The `User-Agent` header.
        public var userAgent: String
        /// The clock tokens are issued by.
        public var clock: @Sendable () -> Date
        /// The request rates kept, per endpoint; nil (the default) keeps Apple's published limits
        /// for the payload environment (``APIRateLimits/apple(for:)``).
        public var rateLimits: APIRateLimits?

        /// Creates a configuration.
        public init(
            key: AppStoreConnectKey, bundleID: String, environment: AppStoreServerEnvironment, anchors: TrustAnchors,
            policy: VerificationPolicy = .appStore, appAppleID: Int64? = nil, validationTime: ValidationTime = .signedDate,
            timeout: TimeInterval = 30, retry: RetryPolicy = .default, tokenLifetime: TimeInterval = 300,
            tokenRefreshMargin: TimeInterval = 60,
            maximumResponseSize: Int = 8 << 20, maximumPages: Int = 10_000, maximumTotalResponseSize: Int = 16 << 20,
            pagingDeadline: TimeInterval = 300, userAgent: String = "rmstore-swift-app-store-server-api/1",
            clock: @escaping @Sendable () -> Date = { Date() }, rateLimits: APIRateLimits? = nil
        ) {
            self.key = key
            self.bundleID = bundleID
            self.environment = environment
            self.anchors = anchors
            self.policy = policy
            self.appAppleID = appAppleID
            self.validationTime = validationTime
            self.timeout = timeout
            self.retry = retry
            self.tokenLifetime = tokenLifetime
            self.tokenRefreshMargin = tokenRefreshMargin
            self.maximumResponseSize = maximumResponseSize
            self.maximumPages = maximumPages
            self.maximumTotalResponseSize = maximumTotalResponseSize
            self.pagingDeadline = pagingDeadline
            self.userAgent = userAgent
            self.clock = clock
            self.rateLimits = rateLimits
        }
    }

    /// The configuration.
    public let configuration: Configuration
    let tokens: TokenCache
    let transport: HTTPClientTransport
    let verifier: ResponseVerifier
    /// The throttle every call of this client shares.
    public let throttle: RequestThrottle

    /// Creates a client.
    /// - Throws: ``AppStoreServerAPIError/Code/invalidConfiguration`` for a token lifetime out of
    ///   range, an empty bundle id, or a timeout or size that is not positive.
    public init(configuration: Configuration) throws(AppStoreServerAPIError) {
        guard configuration.timeout > 0, configuration.timeout.isFinite else {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "the timeout must be positive, not \(configuration.timeout)")
        }
        guard configuration.maximumResponseSize > 0, configuration.maximumPages > 0, configuration.maximumTotalResponseSize > 0 else {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "the response size and page limits must be positive")
        }
        guard configuration.pagingDeadline > 0, configuration.pagingDeadline.isFinite else {
            throw AppStoreServerAPIError(
                code: .invalidConfiguration, reason: "the paging deadline must be positive, not \(configuration.pagingDeadline)")
        }
        self.configuration = configuration
        let signer = try APITokenSigner(key: configuration.key, bundleID: configuration.bundleID, lifetime: configuration.tokenLifetime)
        tokens = TokenCache(signer: signer, refreshMargin: configuration.tokenRefreshMargin)
        transport = HTTPClientTransport(timeout: configuration.timeout, maximumResponseSize: configuration.maximumResponseSize)
        verifier = ResponseVerifier(configuration: configuration)
        throttle = RequestThrottle(limits: configuration.rateLimits ?? .apple(for: configuration.environment.payloadEnvironment))
    }

    /// The bearer token the next request will carry (the cached one while it is fresh).
    /// - Throws: ``AppStoreServerAPIError/Code/invalidConfiguration`` when it cannot be signed.
    public func currentToken() throws(AppStoreServerAPIError) -> APIToken {
        try tokens.token(now: configuration.clock())
    }

    // MARK: - Endpoints

    /// Get Transaction Info: one transaction, verified.
    public func transactionInfo(transactionID: String) async throws(AppStoreServerAPIError) -> SignedJWS<JWSTransaction> {
        let call = try Call(self, .transactionInfo, arguments: [transactionID])
        let body = try await call.send()
        let response = try call.object(body)
        let token = try response.string("signedTransactionInfo", required: true) ?? ""
        let signed = try verifier.verify(token, as: JWSTransaction.self, at: "signedTransactionInfo", call)
        try AnswerMatching.transaction(signed.value, requested: transactionID, at: "signedTransactionInfo", call)
        return signed
    }

    /// Get Transaction History (v2), one page: `revision` nil for the first page.
    public func transactionHistoryPage(
        transactionID: String, request: TransactionHistoryRequest = TransactionHistoryRequest(), revision: String? = nil
    ) async throws(AppStoreServerAPIError) -> TransactionHistoryPage {
        try await transactionHistoryPage(transactionID: transactionID, request: request, revision: revision, pageNumber: 1, budget: nil)
    }

    func transactionHistoryPage(
        transactionID: String, request: TransactionHistoryRequest, revision: String?, pageNumber: Int, budget: PagingBudget?
    ) async throws(AppStoreServerAPIError) -> TransactionHistoryPage {
        var query: [(String, String)] = []
        if let revision { query.append(("revision", revision)) }
        query += request.queryItems()
        var call = try Call(self, .transactionHistory, arguments: [transactionID], query: query)
        call.page = pageNumber
        call.budget = budget
        let response = try call.object(try await call.send())
        let environment = try response.environment()
        let bundleId = try response.bundleID()
        let appAppleId = try response.int64("appAppleId")
        let tokens = try response.strings("signedTransactions")
        let transactions = try verifier.verifyAll(tokens, as: JWSTransaction.self, field: "signedTransactions", call)
        for (index, signed) in transactions.enumerated() {
            try AnswerMatching.historyTransaction(signed.value, request: request, at: "signedTransactions[\(index)]", call)
        }
        return TransactionHistoryPage(
            revision: try response.string("revision", required: true) ?? "", hasMore: try response.bool("hasMore", required: true) ?? false,
            bundleId: bundleId, appAppleId: appAppleId, environment: environment, transactions: transactions)
    }

    /// Get Transaction History (v2), every page in order (following `revision` while `hasMore`).
    /// A failure on any page fails the call: nothing from earlier pages is returned.
    public func transactionHistory(
        transactionID: String, request: TransactionHistoryRequest = TransactionHistoryRequest(), revision: String? = nil
    ) async throws(AppStoreServerAPIError) -> TransactionHistory {
        var transactions: [SignedJWS<JWSTransaction>] = []
        var revision = revision
        var pages = 0
        let budget = PagingBudget(configuration)
        if let revision { _ = budget.recordToken(revision) }
        while true {
            pages += 1
            let page = try await transactionHistoryPage(
                transactionID: transactionID, request: request, revision: revision, pageNumber: pages, budget: budget)
            transactions += page.transactions
            guard page.hasMore else { return TransactionHistory(transactions: transactions, revision: page.revision, pageCount: pages) }
            try checkPaging(.transactionHistory, next: page.revision, budget: budget, pages: pages, name: "revision")
            revision = page.revision
        }
    }

    /// Get All Subscription Statuses, optionally only those with the given statuses.
    public func subscriptionStatuses(
        transactionID: String, status: [SubscriptionStatus] = []
    ) async throws(AppStoreServerAPIError) -> SubscriptionStatuses {
        let query = status.map { ("status", String($0.rawValue)) }
        let wanted = status
        let call = try Call(self, .subscriptionStatuses, arguments: [transactionID], query: query)
        let response = try call.object(try await call.send())
        let environment = try response.environment()
        let bundleId = try response.bundleID()
        let appAppleId = try response.int64("appAppleId")
        var groups: [SubscriptionGroupStatus] = []
        for (groupIndex, group) in try response.objects("data").enumerated() {
            let groupPath = "data[\(groupIndex)]"
            let identifier = try group.string("subscriptionGroupIdentifier", required: true, at: groupPath) ?? ""
            var items: [LastTransaction] = []
            for (itemIndex, item) in try group.objects("lastTransactions", at: groupPath).enumerated() {
                let path = "\(groupPath).lastTransactions[\(itemIndex)]"
                let original = try item.string("originalTransactionId", required: true, at: path) ?? ""
                let status = try item.int64("status", required: true, at: path) ?? 0
                try AnswerMatching.status(SubscriptionStatus(rawValue: status), wanted: wanted, at: path + ".status", call)
                let transactionToken = try item.string("signedTransactionInfo", required: true, at: path) ?? ""
                let renewalToken = try item.string("signedRenewalInfo", required: true, at: path) ?? ""
                let transaction = try verifier.verify(transactionToken, as: JWSTransaction.self, at: path + ".signedTransactionInfo", call)
                let renewal = try verifier.verify(renewalToken, as: JWSRenewalInfo.self, at: path + ".signedRenewalInfo", call)
                if transaction.value.originalTransactionId != original || renewal.value.originalTransactionId != original {
                    throw call.failure(
                        .verificationFailed, at: path,
                        "the signed transaction (\(transaction.value.originalTransactionId ?? "none")) and renewal info (\(renewal.value.originalTransactionId ?? "none")) must both be for original transaction \(original)"
                    )
                }
                items.append(
                    LastTransaction(
                        status: SubscriptionStatus(rawValue: status), originalTransactionId: original, transaction: transaction,
                        renewalInfo: renewal))
            }
            groups.append(SubscriptionGroupStatus(subscriptionGroupIdentifier: identifier, lastTransactions: items))
        }
        return SubscriptionStatuses(environment: environment, bundleId: bundleId, appAppleId: appAppleId, groups: groups)
    }

    /// Look Up Order ID: the transactions of the order on a customer's invoice.
    public func lookUpOrder(orderID: String) async throws(AppStoreServerAPIError) -> OrderLookup {
        let call = try Call(self, .orderLookup, arguments: [orderID])
        let response = try call.object(try await call.send())
        let status = try response.int64("status", required: true) ?? 0
        let tokens = try response.strings("signedTransactions")
        let transactions = try verifier.verifyAll(tokens, as: JWSTransaction.self, field: "signedTransactions", call)
        return OrderLookup(status: OrderLookupStatus(rawValue: status), transactions: transactions)
    }

    /// Get Refund History, one page: `revision` nil for the first page.
    public func refundHistoryPage(transactionID: String, revision: String? = nil) async throws(AppStoreServerAPIError) -> RefundHistoryPage
    {
        try await refundHistoryPage(transactionID: transactionID, revision: revision, pageNumber: 1, budget: nil)
    }

    func refundHistoryPage(
        transactionID: String, revision: String?, pageNumber: Int, budget: PagingBudget?
    ) async throws(AppStoreServerAPIError)
        -> RefundHistoryPage
    {
        let query = revision.map { [("revision", $0)] } ?? []
        var call = try Call(self, .refundHistory, arguments: [transactionID], query: query)
        call.page = pageNumber
        call.budget = budget
        let response = try call.object(try await call.send())
        let tokens = try response.strings("signedTransactions")
        let transactions = try verifier.verifyAll(tokens, as: JWSTransaction.self, field: "signedTransactions", call)
        return RefundHistoryPage(
            revision: try response.string("revision", required: true) ?? "", hasMore: try response.bool("hasMore", required: true) ?? false,
            transactions: transactions)
    }

    /// Get Refund History, every page in order.
    public func refundHistory(transactionID: String) async throws(AppStoreServerAPIError) -> [SignedJWS<JWSTransaction>] {
        var transactions: [SignedJWS<JWSTransaction>] = []
        var revision: String?
        var pages = 0
        let budget = PagingBudget(configuration)
        while true {
            pages += 1
            let page = try await refundHistoryPage(transactionID: transactionID, revision: revision, pageNumber: pages, budget: budget)
            transactions += page.transactions
            guard page.hasMore else { return transactions }
            try checkPaging(.refundHistory, next: page.revision, budget: budget, pages: pages, name: "revision")
            revision = page.revision
        }
    }

    /// Get Notification History, one page: `paginationToken` nil for the first page.
    public func notificationHistoryPage(
        _ request: NotificationHistoryRequest, paginationToken: String? = nil
    ) async throws(AppStoreServerAPIError) -> NotificationHistoryPage {
        try await notificationHistoryPage(request, paginationToken: paginationToken, pageNumber: 1, budget: nil)
    }

    func notificationHistoryPage(
        _ request: NotificationHistoryRequest, paginationToken: String?, pageNumber: Int, budget: PagingBudget?
    ) async throws(AppStoreServerAPIError) -> NotificationHistoryPage {
        let query = paginationToken.map { [("paginationToken", $0)] } ?? []
        var call = try Call(self, .notificationHistory, arguments: [], query: query, body: request.jsonBody)
        call.page = pageNumber
        call.budget = budget
        let response = try call.object(try await call.send())
        var items: [NotificationHistoryItem] = []
        for (index, item) in try response.objects("notificationHistory").enumerated() {
            let path = "notificationHistory[\(index)]"
            let token = try item.string("signedPayload", required: true, at: path) ?? ""
            let attempts = try Self.sendAttempts(item, at: path)
            let notification = try verifier.verify(token, as: NotificationPayload.self, at: path + ".signedPayload", call)
            try AnswerMatching.historyNotification(notification.value, request: request, at: path + ".signedPayload", call)
            items.append(NotificationHistoryItem(notification: notification, sendAttempts: attempts))
        }
        return NotificationHistoryPage(
            paginationToken: try response.string("paginationToken"), hasMore: try response.bool("hasMore", required: true) ?? false,
            items: items)
    }

    /// Get Notification History, every page in order.
    public func notificationHistory(_ request: NotificationHistoryRequest) async throws(AppStoreServerAPIError) -> [NotificationHistoryItem]
    {
        var items: [NotificationHistoryItem] = []
        var token: String?
        var pages = 0
        let budget = PagingBudget(configuration)
        while true {
            pages += 1
            let page = try await notificationHistoryPage(request, paginationToken: token, pageNumber: pages, budget: budget)
            items += page.items
            guard page.hasMore else { return items }
            guard let next = page.paginationToken else {
                throw AppStoreServerAPIError(
                    code: .invalidResponse, endpoint: .notificationHistory, location: "page \(pages)",
                    reason: "hasMore is true but the page has no paginationToken")
            }
            try checkPaging(.notificationHistory, next: next, budget: budget, pages: pages, name: "paginationToken")
            token = next
        }
    }

    /// Request a Test Notification: the token to pass to ``testNotificationStatus(token:)``.
    public func requestTestNotification() async throws(AppStoreServerAPIError) -> String {
        let call = try Call(self, .requestTestNotification, arguments: [])
        let response = try call.object(try await call.send())
        return try response.string("testNotificationToken", required: true) ?? ""
    }

    /// Get Test Notification Status: the TEST notification, verified, and the attempts to send it.
    public func testNotificationStatus(token: String) async throws(AppStoreServerAPIError) -> TestNotificationStatus {
        let call = try Call(self, .testNotificationStatus, arguments: [token])
        let response = try call.object(try await call.send())
        let payload = try response.string("signedPayload", required: true) ?? ""
        let attempts = try Self.sendAttempts(response, at: nil)
        let notification = try verifier.verify(payload, as: NotificationPayload.self, at: "signedPayload", call)
        try AnswerMatching.testNotification(notification.value, at: "signedPayload", call)
        return TestNotificationStatus(notification: notification, sendAttempts: attempts)
    }

    /// Send Consumption Information (Apple answers 202 Accepted).
    public func sendConsumptionInformation(transactionID: String, _ request: ConsumptionRequest) async throws(AppStoreServerAPIError) {
        let call = try Call(self, .sendConsumptionInformation, arguments: [transactionID], body: request.jsonBody)
        _ = try await call.send()
    }

    /// Extend a Subscription Renewal Date.
    public func extendSubscriptionRenewalDate(
        originalTransactionID: String, _ request: ExtendRenewalDateRequest
    ) async throws(AppStoreServerAPIError) -> ExtendRenewalDateResponse {
        let call = try Call(self, .extendSubscriptionRenewalDate, arguments: [originalTransactionID], body: request.jsonBody)
        let response = try call.object(try await call.send())
        let effective = try response.int64("effectiveDate").map { JWSDate(milliseconds: $0) }
        return ExtendRenewalDateResponse(
            originalTransactionId: try response.string("originalTransactionId"),
            webOrderLineItemId: try response.string("webOrderLineItemId"),
            success: try response.bool("success", required: true) ?? false, effectiveDate: effective)
    }

    // MARK: - Helpers

    static func sendAttempts(_ object: ResponseObject, at path: String?) throws(AppStoreServerAPIError) -> [SendAttempt] {
        var attempts: [SendAttempt] = []
        let base = path.map { $0 + "." } ?? ""
        for (index, attempt) in try object.objects("sendAttempts", at: path).enumerated() {
            let here = "\(base)sendAttempts[\(index)]"
            let date = try attempt.int64("attemptDate", required: true, at: here) ?? 0
            let result = try attempt.string("sendAttemptResult", required: true, at: here) ?? ""
            attempts.append(SendAttempt(attemptDate: JWSDate(milliseconds: date), result: SendAttemptResult(rawValue: result)))
        }
        return attempts
    }

    /// A paging loop may go on only with a token no earlier page of the call named, and within
    /// the page limit.
    func checkPaging(
        _ endpoint: AppStoreServerEndpoint, next: String, budget: PagingBudget, pages: Int, name: String
    ) throws(AppStoreServerAPIError) {
        if !budget.recordToken(next) {
            throw AppStoreServerAPIError(
                code: .invalidResponse, endpoint: endpoint, location: "page \(pages)",
                reason: "hasMore is true but the \(name) repeats one an earlier page gave")
        }
        if pages >= configuration.maximumPages {
            throw AppStoreServerAPIError(
                code: .invalidResponse, endpoint: endpoint, location: "page \(pages)",
                reason: "more than \(configuration.maximumPages) pages (the configured limit)")
        }
    }
}
