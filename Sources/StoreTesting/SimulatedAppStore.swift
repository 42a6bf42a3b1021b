// A simulated App Store: the Linux analogue of Xcode's StoreKit testing. It implements the store's
// PaymentQueue, ProductsRequesting and ReceiptRefreshing protocols over a catalog, with scripted
// outcomes, hosted downloads, restores, subscription renewals on a simulated clock, redelivery of
// unfinished transactions, the receipt seam and the StoreKit 2 (JWS) seam.

public import Foundation
import Internals
import JWS
public import RMStore

/// How a simulated payment ends.
public enum PurchaseOutcome: Sendable {
    /// How an Ask to Buy request is resolved.
    public enum AskToBuyResolution: Sendable {
        /// Approved right after the deferred update (a purchased update follows).
        case approved
        /// Declined right after the deferred update (a failed update, code `paymentDeclined`).
        case declined
        /// Left waiting until `approveAskToBuy(_:)` or `declineAskToBuy(_:)` is called.
        case pending
    }

    /// How an interrupted purchase is resolved.
    public enum InterruptionResolution: Sendable {
        /// The user completes the required action at once: a new purchased transaction follows.
        case resolved
        /// Left waiting until `resolveInterruptedPurchase(_:)` is called.
        case pending
    }

    /// The purchase succeeds.
    case purchased
    /// The purchase fails with this error.
    case failed(any Error)
    /// The user cancels (a failed update with code `paymentCancelled`).
    case cancelled
    /// Ask to Buy: a deferred update, then the resolution.
    case deferred(AskToBuyResolution)
    /// The purchase needs an action from the user (accept terms, update a card): a failed update
    /// with code `paymentInterrupted`, and, once resolved, a new purchased transaction for the
    /// same payment (as StoreKit 1 does).
    case interrupted(InterruptionResolution)
}

/// A simulated App Store for one app.
///
/// ## Delivery
/// Like StoreKit, nothing is reported synchronously: every update is an **event** in a FIFO.
/// With `deliversAutomatically` (the default) the events run in a main-actor task soon after they
/// are scheduled, which suits async code. With `deliversAutomatically: false` they run only when
/// a test calls `processNextEvent()` or `processAllEvents()`, which gives full control over
/// interleavings (pause a download between two progress steps, check state between updates).
///
/// ## Scripting
/// A payment's outcome is, in this order: the one set for its payment id
/// (`setOutcome(_:forPayment:)`), the next one queued for its product
/// (`enqueueOutcomes(_:forProduct:)`), the product's default (`setOutcome(_:forProduct:)`), or
/// `.purchased`.
///
/// ## Signed data (StoreKit 2)
/// With a ``jwsIssuer``, every transaction reported as purchased (subscription renewals
/// included) or restored carries the App Store's signed transaction in
/// `PaymentTransaction.jwsRepresentation`, signed when it is reported. Its identifiers, dates,
/// quantity and type are those of the purchase's record in the app receipt (for a restored
/// transaction: the purchase it restores, whose `transactionId` is the restored transaction's
/// `original.identifier`). The payment's `Payment.appAccountToken` becomes `appAccountToken`.
/// ``signedTransaction(transactionIdentifier:)``, ``signedRenewalInfo(originalTransactionIdentifier:)``
/// and ``subscriptionGroupStatuses()`` sign the current state on demand (revocation fields after
/// ``refund(transactionIdentifier:reason:)``), as the App Store Server API would serve it.
///
/// ## Server notifications
/// With a ``notificationSender``, what happens is also told to a server as App Store Server
/// Notifications V2, each carrying the transaction and renewal info signed at that moment:
/// `SUBSCRIBED` (`INITIAL_BUY`) and `ONE_TIME_CHARGE` for purchases, `DID_RENEW` for renewals
/// (`BILLING_RECOVERY` after a billing retry), `DID_CHANGE_RENEWAL_STATUS` from
/// ``setAutoRenew(_:productIdentifier:)``, `EXPIRED` (`VOLUNTARY`, or `BILLING_RETRY` when billing
/// never recovered), `DID_FAIL_TO_RENEW` (`GRACE_PERIOD` with a grace period) and
/// `GRACE_PERIOD_EXPIRED` from ``setBillingFailure(_:productIdentifier:gracePeriod:)``, `REFUND`
/// from ``refund(transactionIdentifier:reason:)`` and `REVOKE` from
/// ``revokeFamilySharing(transactionIdentifier:)``. Retries due on the simulated clock go out when
/// it advances.
///
/// ## Isolation
/// Main-actor isolated, like the protocols it implements; observers are called on the main actor.
@MainActor
public final class SimulatedAppStore: PaymentQueue, ProductsRequesting, ReceiptRefreshing {
    /// The products on sale.
    public var catalog: StoreCatalog
    /// The app's bundle identifier (for receipts).
    public let bundleIdentifier: String
    /// The app's version (for receipts).
    public let appVersion: String
    /// The version the user first installed (for receipts).
    public let originalApplicationVersion: String
    /// Where the app receipt is written (nil: no receipt is written).
    public let receiptURL: URL?
    /// Builds receipts (nil: no receipt is written).
    public var receiptIssuer: (any ReceiptIssuing)?
    /// Signs StoreKit 2 data (nil: transactions carry no `jwsRepresentation`). See the type's
    /// documentation.
    public var jwsIssuer: (any JWSIssuing)?
    /// Sends App Store Server Notifications V2 for what happens (nil: none). Needs ``jwsIssuer``
    /// for the signed transactions and renewal info the notifications carry.
    public var notificationSender: AppStoreNotificationSender?
    /// The simulated time: purchase dates, expiry dates and receipt dates come from it.
    public let clock: SimulatedClock
    /// Where finished store-hosted downloads are written.
    public let downloadsDirectory: URL
    /// Whether events run by themselves (see the type's documentation).
    public var deliversAutomatically: Bool

    /// Whether payments are allowed (false: every payment fails with `paymentNotAllowed`).
    public var canMakePayments = true
    /// When set, products requests fail with it.
    public var productsRequestError: (any Error)?
    /// When set, receipt refreshes fail with it.
    public var refreshError: (any Error)?
    /// When set, restores fail with it.
    public var restoreError: (any Error)?
    /// When set, every transaction update is delivered twice in the same call (a StoreKit glitch
    /// that, for restored transactions, stalled RMStore's restore counter, PR #150).
    public var deliversTransactionUpdatesTwice = false

    /// Payments added, in order.
    public internal(set) var addedPayments: [Payment] = []
    /// Transaction identifiers finished, in order (each once).
    public internal(set) var finishedTransactionIdentifiers: [String] = []
    /// Transactions delivered and not finished yet, in delivery order. They are delivered again
    /// to every observer added later.
    public internal(set) var unfinishedTransactions: [PaymentTransaction] = []
    /// Every purchase of the app (including renewals), in order, as a receipt lists them.
    public var purchaseHistory: [ReceiptInAppPurchase] { purchases.map(\.receiptEntry) }
    /// How many products requests were made.
    public internal(set) var productsRequestCount = 0
    /// How many receipt refreshes were requested.
    public internal(set) var refreshRequestCount = 0
    /// How many restores were requested, and with which application usernames.
    public internal(set) var restoreRequests: [String?] = []
    /// Download ids passed to `startDownloads`, in order.
    public internal(set) var startedDownloadIdentifiers: [String] = []
    /// How many receipts were written.
    public internal(set) var receiptIssueCount = 0
    /// The error of the last failed receipt issue after a purchase, if any.
    public internal(set) var lastReceiptError: (any Error)?
    /// The error of the last failed JWS issue for a reported transaction, if any (that transaction
    /// was reported without a `jwsRepresentation`).
    public internal(set) var lastJWSError: (any Error)?
    /// The error of the last notification that could not be signed, if any (it was not sent).
    public internal(set) var lastNotificationError: (any Error)?

    var observers: [WeakQueueObserver] = []
    var events: [@MainActor () -> Void] = []
    var drainScheduled = false
    var productOutcomes: [String: PurchaseOutcome] = [:]
    var queuedOutcomes: [String: [PurchaseOutcome]] = [:]
    var paymentOutcomes: [PaymentID: PurchaseOutcome] = [:]
    var askToBuy: [PaymentID: PendingPayment] = [:]
    var interrupted: [PaymentID: Payment] = [:]
    var purchases: [PurchaseRecord] = []
    var subscriptions: [String: SubscriptionState] = [:]
    var downloads: [String: DownloadRecord] = [:]
    var billingFailures: [String: TimeInterval] = [:]
    var random: SplitMix64
    var lastTransactionNumber: UInt64
    var lastWebOrderLineItemID: Int64

    /// Creates a simulated App Store.
    ///
    /// - Parameters:
    ///   - catalog: the products for sale.
    ///   - bundleIdentifier: the app's bundle id, written into receipts and signed transactions.
    ///   - appVersion: the app version written into receipts.
    ///   - originalApplicationVersion: the version of the first purchase of the app.
    ///   - receiptURL: where to write the receipt; needs `receiptIssuer` too.
    ///   - receiptIssuer: writes and signs the app receipt (nil: none).
    ///   - jwsIssuer: signs the transactions' `jwsRepresentation` (nil: none).
    ///   - downloadsDirectory: where hosted content goes (default: a fresh temporary directory).
    ///   - clock: the simulated time of every purchase, renewal and signature.
    ///   - deliversAutomatically: whether events are processed as they become due (false: only
    ///     when the caller asks, as tests that step through events do).
    ///   - seed: makes transaction ids reproducible.
    public init(
        catalog: StoreCatalog,
        bundleIdentifier: String = "com.example.app",
        appVersion: String = "1.0",
        originalApplicationVersion: String = "1.0",
        receiptURL: URL? = nil,
        receiptIssuer: (any ReceiptIssuing)? = nil,
        jwsIssuer: (any JWSIssuing)? = nil,
        clock: SimulatedClock = SimulatedClock(),
        downloadsDirectory: URL? = nil,
        deliversAutomatically: Bool = true,
        seed: UInt64 = 2013
    ) {
        self.catalog = catalog
        self.bundleIdentifier = bundleIdentifier
        self.appVersion = appVersion
        self.originalApplicationVersion = originalApplicationVersion
        self.receiptURL = receiptURL
        self.receiptIssuer = receiptIssuer
        self.jwsIssuer = jwsIssuer
        self.clock = clock
        self.downloadsDirectory =
            downloadsDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("SimulatedAppStore-\(UUID().uuidString)")
        self.deliversAutomatically = deliversAutomatically
        var random = SplitMix64(seed: seed)
        // Sandbox-style identifiers: 16 decimal digits starting with 2000000.
        lastTransactionNumber = 2_000_000_000_000_000 + random.next() % 900_000_000
        lastWebOrderLineItemID = 2_000_000_000_000_000 + Int64(random.next() % 900_000_000)
        self.random = random
    }

    // MARK: - Events

    /// How many events wait to run.
    public var pendingEventCount: Int { events.count }

    /// Runs the oldest event. Returns `false` when there was none.
    @discardableResult
    public func processNextEvent() -> Bool {
        guard !events.isEmpty else { return false }
        let event = events.removeFirst()
        event()
        return true
    }

    /// Runs events, including those they schedule, until none is left (at most `limit`).
    public func processAllEvents(limit: Int = 100_000) {
        var count = 0
        while count < limit, processNextEvent() {
            count += 1
        }
    }

    func schedule(_ event: @escaping @MainActor () -> Void) {
        events.append(event)
        guard deliversAutomatically, !drainScheduled else { return }
        drainScheduled = true
        Task { @MainActor [weak self] in
            guard let self else { return }
            self.drainScheduled = false
            self.processAllEvents()
        }
    }

    func deliver(_ body: (any PaymentQueueObserver) -> Void) {
        observers.removeAll { $0.value == nil }
        for observer in observers.compactMap(\.value) {
            body(observer)
        }
    }

    func deliver(transactions: [PaymentTransaction]) {
        let batch = deliversTransactionUpdatesTwice ? transactions + transactions : transactions
        deliver { $0.paymentQueue(self, updatedTransactions: batch) }
    }

    func deliver(downloads: [Download]) {
        deliver { $0.paymentQueue(self, updatedDownloads: downloads) }
    }

    // MARK: - Scripting

    /// Sets the outcome of every payment of a product (unless a more specific one applies).
    public func setOutcome(_ outcome: PurchaseOutcome, forProduct productIdentifier: String) {
        productOutcomes[productIdentifier] = outcome
    }

    /// Queues outcomes for the next payments of a product, one each.
    public func enqueueOutcomes(_ outcomes: [PurchaseOutcome], forProduct productIdentifier: String) {
        queuedOutcomes[productIdentifier, default: []].append(contentsOf: outcomes)
    }

    /// Sets the outcome of one payment (call it after `add` and before the payment is processed,
    /// or before adding a payment whose id you created).
    public func setOutcome(_ outcome: PurchaseOutcome, forPayment paymentID: PaymentID) {
        paymentOutcomes[paymentID] = outcome
    }

    func takeOutcome(for payment: Payment) -> PurchaseOutcome {
        if let outcome = paymentOutcomes.removeValue(forKey: payment.id) { return outcome }
        if var queue = queuedOutcomes[payment.productIdentifier], !queue.isEmpty {
            let outcome = queue.removeFirst()
            queuedOutcomes[payment.productIdentifier] = queue
            return outcome
        }
        return productOutcomes[payment.productIdentifier] ?? .purchased
    }

    /// Approves a pending Ask to Buy request: a purchased update follows. Returns `false` when no
    /// request of this payment is pending.
    @discardableResult
    public func approveAskToBuy(_ paymentID: PaymentID) -> Bool {
        guard let pending = askToBuy.removeValue(forKey: paymentID) else { return false }
        schedule { [weak self] in self?.completePurchase(pending.payment, identifier: pending.identifier) }
        return true
    }

    /// Declines a pending Ask to Buy request: a failed update (`paymentDeclined`) follows.
    @discardableResult
    public func declineAskToBuy(_ paymentID: PaymentID) -> Bool {
        guard let pending = askToBuy.removeValue(forKey: paymentID) else { return false }
        schedule { [weak self] in
            self?.failPurchase(pending.payment, identifier: pending.identifier, error: StoreError(.paymentDeclined))
        }
        return true
    }

    /// Completes an interrupted purchase: a new purchased transaction for the same payment follows.
    @discardableResult
    public func resolveInterruptedPurchase(_ paymentID: PaymentID) -> Bool {
        guard let payment = interrupted.removeValue(forKey: paymentID) else { return false }
        schedule { [weak self] in
            guard let self else { return }
            self.completePurchase(payment, identifier: self.nextTransactionIdentifier())
        }
        return true
    }
}
