// A simulated App Store Server API: a real HTTP/1.1 server on 127.0.0.1 that answers Apple's
// endpoints from a simulated App Store's state, signs every JWS with a JWS test PKI shaped like
// Apple's, and checks each request's bearer token as Apple does. Rate limits, errors, delays and
// forged signatures can be scripted per endpoint.

public import AppStoreServerAPI
public import Foundation
public import HTTPServer
import Internals
public import JSON
import JWS
public import ReceiptCrypto
public import ReceiptSigning

/// A simulated App Store Server API for one app, served over HTTP on 127.0.0.1.
///
/// ## State
/// The server answers from a snapshot of a ``SimulatedAppStore`` taken by
/// `synchronize(with:)` (on the main actor, where the store lives); HTTP requests are answered on
/// the server's own threads and never touch the store. Every JWS is signed when it is served, with
/// `signedDate` read from the simulated ``clock``. Extend a Subscription Renewal Date changes the
/// snapshot at once and the store at the next `synchronize(with:)`.
///
/// ## Authentication
/// Each request must carry `Authorization: Bearer <JWT>`: header `alg` ES256, `typ` JWT, `kid` the
/// registered key id; an ES256 signature that verifies with the registered public key; claims `aud`
/// `appstoreconnect-v1`, `iss` the issuer id, `bid` the bundle id, integer `iat` and `exp` with
/// `iat` not in the future (beyond ``Configuration/clockSkew``), `exp` not passed, and `exp - iat`
/// at most an hour. Anything else gets HTTP 401 with an empty body, and the reason is kept in the
/// request's ``RecordedRequest/rejection``.
///
/// ## Scripting
/// ``script(_:for:)`` queues ``Fault``s; each request takes the first queued fault for its endpoint
/// (or for every endpoint), after authentication.
public final class SimulatedAppStoreServer: Sendable {
    /// The endpoints served: the client's wire table (`AppStoreServerEndpoint`), so the
    /// simulator routes exactly the paths the client sends.
    public typealias Endpoint = AppStoreServerEndpoint

    /// The app, its API key, page sizes and the token rules.
    public struct Configuration: Sendable {
        /// The app's bundle id (`bid` of every token; `bundleId` of every payload).
        public var bundleIdentifier: String
        /// The app's Apple id, written in responses and notifications when set.
        public var appAppleId: Int64?
        /// The registered API key's issuer id (`iss`).
        public var issuerID: String
        /// The registered API key's id (`kid`).
        public var keyID: String
        /// The registered API key's public key: every token must verify with it.
        public var publicKey: PublicKey
        /// Transactions per page of Get Transaction History (Apple: 20).
        public var historyPageSize: Int
        /// Transactions per page of Get Refund History (Apple: 20).
        public var refundPageSize: Int
        /// Notifications per page of Get Notification History (Apple: 20).
        public var notificationPageSize: Int
        /// The most seconds from `iat` to `exp` (Apple: 60 minutes).
        public var maximumTokenLifetime: TimeInterval
        /// How far in the future `iat` may be, in seconds.
        public var clockSkew: TimeInterval
        /// The clock tokens are checked against (the real clock by default: clients sign tokens
        /// with it).
        public var now: @Sendable () -> Date
        /// The app's App Store Server Notifications URL (nil: Request a Test Notification answers
        /// Apple's `serverNotificationUrlNotFound`).
        public var notificationURL: URL?
        /// The HTTP server's settings (address 127.0.0.1 and a free port by default).
        public var http: HTTPServerConfiguration
        /// The request rates enforced per endpoint (none by default; `APIRateLimits.sandbox`
        /// for Apple's sandbox limits). Each endpoint allows a burst of one second's requests and
        /// refills at its rate; a request beyond that gets HTTP 429 with Apple's
        /// `rateLimitExceeded` body and `Retry-After`, the UNIX time in milliseconds when the next
        /// request will be accepted.
        public var rateLimits: APIRateLimits

        /// Creates a configuration.
        public init(
            bundleIdentifier: String, appAppleId: Int64? = nil, issuerID: String, keyID: String, publicKey: PublicKey,
            historyPageSize: Int = 20, refundPageSize: Int = 20, notificationPageSize: Int = 20, maximumTokenLifetime: TimeInterval = 3600,
            clockSkew: TimeInterval = 60, now: @escaping @Sendable () -> Date = { Date() }, notificationURL: URL? = nil,
            http: HTTPServerConfiguration = HTTPServerConfiguration(host: "127.0.0.1", port: 0), rateLimits: APIRateLimits = .unlimited
        ) {
            self.bundleIdentifier = bundleIdentifier
            self.appAppleId = appAppleId
            self.issuerID = issuerID
            self.keyID = keyID
            self.publicKey = publicKey
            self.historyPageSize = historyPageSize
            self.refundPageSize = refundPageSize
            self.notificationPageSize = notificationPageSize
            self.maximumTokenLifetime = maximumTokenLifetime
            self.clockSkew = clockSkew
            self.now = now
            self.notificationURL = notificationURL
            self.http = http
            self.rateLimits = rateLimits
        }
    }

    /// A scripted departure from the normal answer.
    public enum Fault: Sendable {
        /// Answer normally (a placeholder that lets a script target a later request).
        case none
        /// HTTP 429 with Apple's `rateLimitExceeded` body and, when given, `Retry-After`.
        case rateLimited(retryAfter: String?)
        /// HTTP 429 with Apple's `rateLimitExceeded` body and `Retry-After` in Apple's form: the
        /// UNIX time in milliseconds (rounded up) this many seconds after the answer.
        case rateLimitedFor(TimeInterval)
        /// Any status, with Apple's error body when `errorCode` is given.
        case error(status: Int, errorCode: Int64?, errorMessage: String?)
        /// Wait this many seconds (at most 60), then answer normally.
        case delay(TimeInterval)
        /// Hold the request until the gate opens (or 60 seconds pass), then answer normally.
        case hold(Gate)
        /// Sign the JWS at `index` (0-based, in the order the response carries them) with this
        /// signer instead of the App Store's.
        case forgedSignature(JWSSigner, index: Int)
        /// Answer exactly this status and body.
        case body(status: Int, [UInt8])
    }

    /// Holds requests (``Fault/hold(_:)``) until a test opens it: a way to keep the server from
    /// answering for exactly as long as the test needs, whatever the machine's speed.
    public final class Gate: Sendable {
        let state = Locked((open: false, waiting: 0))
        let condition = NSCondition()

        /// A closed gate.
        public init() {}

        /// How many requests wait at the gate now.
        public var waiting: Int { state.withLock { $0.waiting } }

        /// Lets every held request go on, and every later one pass at once.
        public func open() {
            condition.lock()
            state.withLock { $0.open = true }
            condition.broadcast()
            condition.unlock()
        }

        /// Waits until the gate opens or `timeout` passes.
        func pass(timeout: TimeInterval) {
            let deadline = Date().addingTimeInterval(timeout)
            condition.lock()
            state.withLock { $0.waiting += 1 }
            while !state.withLock({ $0.open }), condition.wait(until: deadline) {}
            state.withLock { $0.waiting -= 1 }
            condition.unlock()
        }
    }

    /// One request as the server saw it.
    public struct RecordedRequest: Sendable {
        /// The method.
        public let method: String
        /// The path.
        public let path: String
        /// The query, if any.
        public let query: String?
        /// The endpoint, when the path names one.
        public let endpoint: Endpoint?
        /// The bearer token sent, if any.
        public let bearerToken: String?
        /// Why the token was refused (nil when it was accepted).
        public let rejection: String?
        /// The status answered.
        public let status: Int
        /// The request body as received (empty when there was none).
        public let body: [UInt8]
        /// The request's `Content-Type`, if any.
        public let contentType: String?
    }

    /// The configuration.
    public let configuration: Configuration
    /// Signs transactions, renewal info and notifications (its `environment` is the API's).
    public let issuer: JWSIssuer
    /// The simulated time: `signedDate` of everything served, and test notifications' dates.
    public let clock: SimulatedClock
    let handler: SimulatedServerHandler
    let server: HTTPServer

    /// Creates a server; call `synchronize(with:)` and ``start()`` before sending requests.
    /// - Parameters:
    ///   - configuration: the app, the API key it accepts, page sizes, rate limits and address.
    ///   - issuer: signs every JWS served.
    ///   - clock: the simulated time.
    ///   - notificationTransport: delivers test notifications to
    ///     ``Configuration/notificationURL`` (default: an HTTP POST with a 5-second limit), the same
    ///     transport ``AppStoreNotificationSender`` uses.
    public init(
        configuration: Configuration, issuer: JWSIssuer, clock: SimulatedClock,
        notificationTransport: any NotificationTransport = URLSessionNotificationTransport(timeout: 5)
    ) {
        self.configuration = configuration
        self.issuer = issuer
        self.clock = clock
        handler = SimulatedServerHandler(configuration: configuration, issuer: issuer, clock: clock, transport: notificationTransport)
        var http = configuration.http
        if http.host.isEmpty { http.host = "127.0.0.1" }
        server = HTTPServer(configuration: http, handler: handler)
    }

    /// Binds and starts serving.
    /// - Throws: `HTTPServerError` when the address cannot be bound.
    public func start() throws(HTTPServerError) {
        try server.start()
    }

    /// `http://<host>:<port>`, once started.
    public var baseURL: URL {
        URL(string: "http://\(server.configuration.host):\(server.port)") ?? URL(fileURLWithPath: "/")
    }

    /// Stops serving and waits until every connection is closed. Blocks: call it off Swift's
    /// cooperative pool (a thread of its own) from async code.
    public func shutdown() {
        server.shutdown()
    }

    /// Takes the store's state as the history of one customer: first applies the renewal-date
    /// extensions granted since the last call to the store, then copies every transaction and
    /// subscription status. Several stores synchronized under different `customer` names are
    /// several customers: a transaction id answers only with its own customer's history.
    @MainActor
    public func synchronize(with store: SimulatedAppStore, customer: String = "") {
        let pending = handler.state.withLock { state in
            guard let index = state.customers.firstIndex(where: { $0.name == customer }) else { return [(String, Int)]() }
            defer { state.customers[index].pendingExtensions = [] }
            return state.customers[index].pendingExtensions
        }
        for (original, days) in pending {
            store.extendRenewalDate(originalTransactionIdentifier: original, byDays: days)
        }
        let transactions = store.transactionHistoryContents()
        let statuses = store.subscriptionStatusContents()
        handler.state.withLock { state in
            if let index = state.customers.firstIndex(where: { $0.name == customer }) {
                state.customers[index].transactions = transactions
                state.customers[index].statuses = statuses
            } else {
                state.customers.append(CustomerState(name: customer, transactions: transactions, statuses: statuses))
            }
        }
    }

    /// Queues faults: each later request to `endpoint` (any endpoint when nil) takes the next one.
    public func script(_ faults: [Fault], for endpoint: Endpoint? = nil) {
        handler.state.withLock { state in state.faults += faults.map { (endpoint, $0) } }
    }

    /// Drops every queued fault.
    public func clearScript() {
        handler.state.withLock { $0.faults = [] }
    }

    /// Every request so far, in order.
    public var requests: [RecordedRequest] { handler.state.withLock { $0.requests } }

    /// The Send Consumption Information bodies accepted so far: transaction id and body.
    public var consumptionRequests: [(transactionIdentifier: String, body: JSONValue)] { handler.state.withLock { $0.consumption } }

    /// The Send Consumption Information (v2) bodies accepted so far: transaction id and body.
    public var consumptionRequestsV2: [(transactionIdentifier: String, body: ConsumptionRequestV2)] {
        handler.state.withLock { $0.consumptionV2 }
    }

    /// The transaction ids Finish Transaction was called for, in order.
    public var finishedTransactionIdentifiers: [String] { handler.state.withLock { $0.finished } }

    /// The app account token Set App Account Token last set for an original transaction id.
    public func appAccountToken(forOriginalTransactionIdentifier identifier: String) -> UUID? {
        handler.state.withLock { $0.appAccountTokens[identifier] }
    }

    /// The order id of the purchase with this transaction id, as Look Up Order ID knows it (ten
    /// characters, letters and digits, derived from the transaction id).
    public func orderIdentifier(forTransactionIdentifier identifier: String) -> String {
        SimulatedServerHandler.orderIdentifier(identifier)
    }

    /// Adds a notification to Get Notification History: its signed payload and the attempts to
    /// send it (date and Apple's `sendAttemptResult`), for notifications sent by something else
    /// than this server.
    public func recordNotification(signedPayload: String, sendAttempts: [(date: Date, result: String)]) {
        let record = NotificationRecord(signedPayload: signedPayload, attempts: sendAttempts.map { ($0.date, $0.result) })
        handler.state.withLock { $0.notifications.append(record) }
    }
}

// MARK: - State

/// A notification the server knows: for Get Notification History and Get Test Notification Status.
struct NotificationRecord: Sendable {
    let signedPayload: String
    var attempts: [(Date, String)]
    let notificationType: String?
    let subtype: String?
    let signedDate: Int64?
    let concernsTransaction: Bool

    init(signedPayload: String, attempts: [(Date, String)]) {
        self.signedPayload = signedPayload
        self.attempts = attempts
        let payload = (try? CompactJWS(signedPayload)).flatMap { try? JSONValue.parse($0.unverifiedPayload) }
        notificationType = payload?["notificationType"]?.stringValue
        subtype = payload?["subtype"]?.stringValue
        signedDate = payload?["signedDate"]?.int64Value
        concernsTransaction = payload?["data"]?["signedTransactionInfo"] != nil
    }
}

/// One customer's history, as the last ``SimulatedAppStoreServer/synchronize(with:customer:)`` took it.
struct CustomerState: Sendable {
    let name: String
    var transactions: [TransactionContents]
    var statuses: [SimulatedSubscriptionGroupContents]
    var pendingExtensions: [(String, Int)] = []
}

/// The answer to one Extend Subscription Renewal Dates for All Active Subscribers request.
struct MassExtension: Sendable {
    let productId: String
    let completeDate: Date
    let succeeded: Int
    let failed: Int
}

struct ServerState: Sendable {
    var customers: [CustomerState] = []
    var consumptionV2: [(transactionIdentifier: String, body: ConsumptionRequestV2)] = []
    var finished: [String] = []
    var appAccountTokens: [String: UUID] = [:]
    var massExtensions: [String: MassExtension] = [:]
    var buckets: [SimulatedAppStoreServer.Endpoint: (tokens: Double, updated: ContinuousClock.Instant)] = [:]
    var faults: [(SimulatedAppStoreServer.Endpoint?, SimulatedAppStoreServer.Fault)] = []
    var requests: [SimulatedAppStoreServer.RecordedRequest] = []
    var notifications: [NotificationRecord] = []
    var testNotifications: [String: Int] = [:]
    var consumption: [(transactionIdentifier: String, body: JSONValue)] = []
    var extensionAnswers: [String: [UInt8]] = [:]
    var extensionCounts: [String: Int] = [:]
    var retention = RetentionState()
    var advancedCommerce: [(operation: SimulatedAppStoreServer.Endpoint, transactionIdentifier: String, body: AdvancedCommerceRequest)] = []

    /// Moves the expiration (and renewal) date of customer `c`'s subscription `i` in group `g` to
    /// `expiry` plus `days`, in its status and in the customer's transactions, counts the
    /// extension, and queues its notification. Returns the new expiration date.
    @discardableResult
    mutating func extendSubscription(customer c: Int, group g: Int, item i: Int, from expiry: Date, byDays days: Int) -> Date {
        var item = customers[c].statuses[g].lastTransactions[i]
        let original = item.originalTransactionIdentifier
        let extended = expiry.addingTimeInterval(TimeInterval(days) * 86_400)
        item.transaction.purchase.expirationDate = extended
        item.renewalInfo.renewalDate = extended
        customers[c].statuses[g].lastTransactions[i] = item
        let latest = item.transaction.purchase.transactionIdentifier
        if let t = customers[c].transactions.lastIndex(where: { $0.purchase.transactionIdentifier == latest }) {
            customers[c].transactions[t].purchase.expirationDate = extended
        }
        extensionCounts[original, default: 0] += 1
        customers[c].pendingExtensions.append((original, days))
        return extended
    }
}

/// An answer the routes build before it is written.
struct RouteError: Error {
    let status: Int
    let errorCode: Int64
    let message: String

    static func badRequest(_ code: Int64, _ message: String) -> RouteError { RouteError(status: 400, errorCode: code, message: message) }
    static func notFound(_ code: Int64, _ message: String) -> RouteError { RouteError(status: 404, errorCode: code, message: message) }
    static let transactionNotFound = RouteError.notFound(4_040_010, "Transaction id not found.")
    static let invalidTransactionID = RouteError.badRequest(4_000_006, "Invalid transaction id.")
    static let invalidRevision = RouteError.badRequest(4_000_005, "Invalid request revision.")
    static let internalError = RouteError(status: 500, errorCode: 5_000_000, message: "An unknown error occurred.")

    var response: HTTPResponse {
        .json(
            JSONValue.object([("errorCode", .number(String(errorCode))), ("errorMessage", .string(message))]).jsonBytes(), status: status)
    }
}
