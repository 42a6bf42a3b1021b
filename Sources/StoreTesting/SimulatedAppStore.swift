// A simulated App Store: the Linux analogue of Xcode's StoreKit testing. It implements the store's
// PaymentQueue, ProductsRequesting and ReceiptRefreshing protocols over a catalog, with scripted
// outcomes, hosted downloads, restores, subscription renewals on a simulated clock, redelivery of
// unfinished transactions, the receipt seam and the StoreKit 2 (JWS) seam.

public import Foundation
import Internals
public import JWS
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
    public private(set) var addedPayments: [Payment] = []
    /// Transaction identifiers finished, in order (each once).
    public private(set) var finishedTransactionIdentifiers: [String] = []
    /// Transactions delivered and not finished yet, in delivery order. They are delivered again
    /// to every observer added later.
    public private(set) var unfinishedTransactions: [PaymentTransaction] = []
    /// Every purchase of the app (including renewals), in order, as a receipt lists them.
    public var purchaseHistory: [ReceiptInAppPurchase] { purchases.map(\.receiptEntry) }
    /// How many products requests were made.
    public private(set) var productsRequestCount = 0
    /// How many receipt refreshes were requested.
    public private(set) var refreshRequestCount = 0
    /// How many restores were requested, and with which application usernames.
    public private(set) var restoreRequests: [String?] = []
    /// Download ids passed to `startDownloads`, in order.
    public private(set) var startedDownloadIdentifiers: [String] = []
    /// How many receipts were written.
    public private(set) var receiptIssueCount = 0
    /// The error of the last failed receipt issue after a purchase, if any.
    public private(set) var lastReceiptError: (any Error)?
    /// The error of the last failed JWS issue for a reported transaction, if any (that transaction
    /// was reported without a `jwsRepresentation`).
    public private(set) var lastJWSError: (any Error)?
    /// The error of the last notification that could not be signed, if any (it was not sent).
    public private(set) var lastNotificationError: (any Error)?

    private var observers: [WeakQueueObserver] = []
    private var events: [@MainActor () -> Void] = []
    private var drainScheduled = false
    private var productOutcomes: [String: PurchaseOutcome] = [:]
    private var queuedOutcomes: [String: [PurchaseOutcome]] = [:]
    private var paymentOutcomes: [PaymentID: PurchaseOutcome] = [:]
    private var askToBuy: [PaymentID: PendingPayment] = [:]
    private var interrupted: [PaymentID: Payment] = [:]
    private var purchases: [PurchaseRecord] = []
    private var subscriptions: [String: SubscriptionState] = [:]
    private var downloads: [String: DownloadRecord] = [:]
    private var billingFailures: [String: TimeInterval] = [:]
    private var random: SplitMix64
    private var lastTransactionNumber: UInt64
    private var lastWebOrderLineItemID: Int64

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

    private func schedule(_ event: @escaping @MainActor () -> Void) {
        events.append(event)
        guard deliversAutomatically, !drainScheduled else { return }
        drainScheduled = true
        Task { @MainActor [weak self] in
            guard let self else { return }
            self.drainScheduled = false
            self.processAllEvents()
        }
    }

    private func deliver(_ body: (any PaymentQueueObserver) -> Void) {
        observers.removeAll { $0.value == nil }
        for observer in observers.compactMap(\.value) {
            body(observer)
        }
    }

    private func deliver(transactions: [PaymentTransaction]) {
        let batch = deliversTransactionUpdatesTwice ? transactions + transactions : transactions
        deliver { $0.paymentQueue(self, updatedTransactions: batch) }
    }

    private func deliver(downloads: [Download]) {
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

    private func takeOutcome(for payment: Payment) -> PurchaseOutcome {
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

    // MARK: - PaymentQueue

    /// Records the payment in ``addedPayments`` and schedules it: a `purchasing` transaction, then
    /// the outcome scripted for this payment or its product (a purchase by default). It fails with
    /// `paymentNotAllowed` when ``canMakePayments`` is false, and with `paymentInvalid` for a
    /// product that is not in the catalog.
    public func add(_ payment: Payment) {
        addedPayments.append(payment)
        schedule { [weak self] in self?.beginPayment(payment) }
    }

    private func beginPayment(_ payment: Payment) {
        let identifier = nextTransactionIdentifier()
        guard canMakePayments else {
            failPurchase(payment, identifier: identifier, error: StoreError(.paymentNotAllowed))
            return
        }
        guard catalog.product(payment.productIdentifier) != nil else {
            failPurchase(
                payment, identifier: identifier,
                error: StoreError(.paymentInvalid, "No product \(payment.productIdentifier) in the catalog"))
            return
        }
        deliver(transactions: [PaymentTransaction(identifier: identifier, state: .purchasing, payment: payment)])
        schedule { [weak self] in self?.resolve(payment, identifier: identifier) }
    }

    private func resolve(_ payment: Payment, identifier: String) {
        switch takeOutcome(for: payment) {
        case .purchased:
            completePurchase(payment, identifier: identifier)
        case .failed(let error):
            failPurchase(payment, identifier: identifier, error: error)
        case .cancelled:
            failPurchase(payment, identifier: identifier, error: StoreError(.paymentCancelled))
        case .deferred(let resolution):
            askToBuy[payment.id] = PendingPayment(payment: payment, identifier: identifier)
            deliver(transactions: [PaymentTransaction(identifier: identifier, state: .deferred, payment: payment, date: clock.now)])
            switch resolution {
            case .approved: approveAskToBuy(payment.id)
            case .declined: declineAskToBuy(payment.id)
            case .pending: break
            }
        case .interrupted(let resolution):
            interrupted[payment.id] = payment
            failPurchase(payment, identifier: identifier, error: StoreError(.paymentInterrupted))
            if case .resolved = resolution {
                resolveInterruptedPurchase(payment.id)
            }
        }
    }

    private func failPurchase(_ payment: Payment, identifier: String, error: any Error) {
        let transaction = PaymentTransaction(identifier: identifier, state: .failed, payment: payment, date: clock.now, error: error)
        unfinishedTransactions.append(transaction)
        deliver(transactions: [transaction])
    }

    private func completePurchase(_ payment: Payment, identifier: String) {
        guard let simulated = catalog.product(payment.productIdentifier) else {
            failPurchase(payment, identifier: identifier, error: StoreError(.paymentInvalid))
            return
        }
        let product = simulated.product
        let now = clock.now
        var transaction = PaymentTransaction(identifier: identifier, state: .purchased, payment: payment, date: now)
        var entry = ReceiptInAppPurchase(
            productIdentifier: product.identifier,
            transactionIdentifier: identifier,
            originalTransactionIdentifier: identifier,
            purchaseDate: now,
            originalPurchaseDate: now,
            quantity: payment.quantity,
            productType: product.kind
        )
        if product.kind == .autoRenewableSubscription, let period = product.subscriptionPeriod, let expiry = period.advance(now) {
            let webOrder = nextWebOrderLineItemID()
            transaction.expirationDate = expiry
            transaction.webOrderLineItemID = webOrder
            entry.expirationDate = expiry
            entry.webOrderLineItemID = webOrder
            subscriptions[identifier] = SubscriptionState(
                productIdentifier: product.identifier,
                originalTransactionIdentifier: identifier,
                originalPurchaseDate: now,
                expirationDate: expiry,
                period: period,
                autoRenews: true,
                applicationUsername: payment.applicationUsername
            )
        }
        transaction.downloads = makeDownloads(for: simulated, transactionIdentifier: identifier)
        let record = makeRecord(entry, applicationUsername: payment.applicationUsername, reason: .purchase)
        transaction.jwsRepresentation = signedTransaction(for: record)
        purchases.append(record)
        unfinishedTransactions.append(transaction)
        issueReceiptAfterPurchase()
        deliver(transactions: [transaction])
        if product.kind == .autoRenewableSubscription {
            notify(.subscribed, .initialBuy, original: identifier, transaction: identifier)
        } else {
            notify(.oneTimeCharge, nil, original: nil, transaction: identifier)
        }
    }

    /// Removes the transaction from ``unfinishedTransactions`` and records its identifier in
    /// ``finishedTransactionIdentifiers``; finishing an unknown or already finished transaction
    /// does nothing.
    public func finishTransaction(_ transaction: PaymentTransaction) {
        guard let index = unfinishedTransactions.firstIndex(where: { $0.identifier == transaction.identifier }) else { return }
        unfinishedTransactions.remove(at: index)
        finishedTransactionIdentifiers.append(transaction.identifier)
        if let record = purchases.firstIndex(where: { $0.receiptEntry.transactionIdentifier == transaction.identifier }) {
            purchases[record].finished = true
        }
    }

    /// Schedules a restore: a new `restored` transaction for every non-consumable and
    /// auto-renewable purchase made so far (of this user, when one is given), each pointing at its
    /// original purchase, then the "restore finished" callback. Fails with ``restoreError`` when
    /// it is set.
    public func restoreCompletedTransactions(applicationUsername: String?) {
        restoreRequests.append(applicationUsername)
        schedule { [weak self] in self?.performRestore(applicationUsername: applicationUsername) }
    }

    private func performRestore(applicationUsername: String?) {
        if let restoreError {
            deliver { $0.paymentQueue(self, restoreCompletedTransactionsFailedWithError: restoreError) }
            return
        }
        let now = clock.now
        var restored: [PaymentTransaction] = []
        for record in purchases {
            let entry = record.receiptEntry
            guard entry.productType == .nonConsumable || entry.productType == .autoRenewableSubscription,
                applicationUsername == nil || record.applicationUsername == applicationUsername,
                let simulated = catalog.product(entry.productIdentifier)
            else { continue }
            let identifier = nextTransactionIdentifier()
            var transaction = PaymentTransaction(
                identifier: identifier,
                state: .restored,
                payment: Payment(
                    productIdentifier: entry.productIdentifier, quantity: entry.quantity, applicationUsername: record.applicationUsername),
                date: now,
                original: OriginalTransaction(identifier: entry.transactionIdentifier, date: entry.purchaseDate),
                expirationDate: entry.expirationDate,
                webOrderLineItemID: entry.webOrderLineItemID
            )
            transaction.downloads = makeDownloads(for: simulated, transactionIdentifier: identifier)
            transaction.jwsRepresentation = signedTransaction(for: record)
            restored.append(transaction)
            unfinishedTransactions.append(transaction)
        }
        if !restored.isEmpty {
            deliver(transactions: restored)
        }
        schedule { [weak self] in
            guard let self else { return }
            self.deliver { $0.paymentQueueRestoreCompletedTransactionsFinished(self) }
        }
    }

    /// Adds the observer (held weakly, added once) and, like StoreKit at launch, schedules the
    /// delivery of every unfinished transaction that is neither deferred nor still purchasing.
    public func addObserver(_ observer: any PaymentQueueObserver) {
        observers.removeAll { $0.value == nil }
        guard !observers.contains(where: { $0.value === observer }) else { return }
        observers.append(WeakQueueObserver(value: observer))
        // Like StoreKit at launch: what was not finished is delivered again to the new observer.
        guard unfinishedTransactions.contains(where: { $0.state != .deferred && $0.state != .purchasing }) else { return }
        schedule { [weak self, weak observer] in
            guard let self, let observer else { return }
            let pending = self.unfinishedTransactions.filter { $0.state != .deferred && $0.state != .purchasing }
            guard !pending.isEmpty else { return }
            observer.paymentQueue(self, updatedTransactions: pending)
        }
    }

    /// Removes the observer; it receives nothing scheduled afterwards.
    public func removeObserver(_ observer: any PaymentQueueObserver) {
        observers.removeAll { $0.value == nil || $0.value === observer }
    }

    // MARK: - Downloads

    private func makeDownloads(for product: SimulatedProduct, transactionIdentifier: String) -> [Download] {
        product.hostedContents.map { content in
            let download = Download(
                id: "\(transactionIdentifier).\(content.contentIdentifier)",
                contentIdentifier: content.contentIdentifier,
                transactionIdentifier: transactionIdentifier,
                state: .waiting,
                contentLength: Int64(content.payload.count),
                contentVersion: content.contentVersion
            )
            downloads[download.id] = DownloadRecord(download: download, content: content)
            return download
        }
    }

    /// The current state of a download, by id.
    public func download(withIdentifier identifier: String) -> Download? {
        downloads[identifier]?.download
    }

    /// Starts the waiting downloads among `downloads` (others are ignored): a `waiting` update,
    /// then the content's progress steps, then its scripted outcome (`finished` writes the content
    /// under ``downloadsDirectory``).
    public func startDownloads(_ downloads: [Download]) {
        for download in downloads {
            guard var record = self.downloads[download.id], record.download.state == .waiting, !record.started else { continue }
            record.started = true
            self.downloads[download.id] = record
            startedDownloadIdentifiers.append(download.id)
            // Like StoreKit: first a waiting update, then progress.
            let snapshot = record.download
            schedule { [weak self] in self?.deliver(downloads: [snapshot]) }
            scheduleStep(download.id, generation: record.generation)
        }
    }

    /// Pauses the waiting or active downloads among `downloads` and reports them `paused`.
    public func pauseDownloads(_ downloads: [Download]) {
        changeDownloads(downloads, from: [.waiting, .active], to: .paused)
    }

    /// Resumes the paused downloads among `downloads`; they report progress again.
    public func resumeDownloads(_ downloads: [Download]) {
        changeDownloads(downloads, from: [.paused], to: .active)
    }

    /// Cancels the downloads among `downloads` that have not settled and reports them `cancelled`.
    public func cancelDownloads(_ downloads: [Download]) {
        changeDownloads(downloads, from: [.waiting, .active, .paused], to: .cancelled)
    }

    private func changeDownloads(_ downloads: [Download], from allowed: Set<DownloadState>, to state: DownloadState) {
        for download in downloads {
            guard var record = self.downloads[download.id], allowed.contains(record.download.state) else { continue }
            record.download.state = state
            record.generation += 1
            self.downloads[download.id] = record
            let snapshot = record.download
            schedule { [weak self] in self?.deliver(downloads: [snapshot]) }
            if state == .active {
                scheduleStep(download.id, generation: record.generation)
            }
        }
    }

    private func scheduleStep(_ identifier: String, generation: Int) {
        schedule { [weak self] in self?.stepDownload(identifier, generation: generation) }
    }

    private func stepDownload(_ identifier: String, generation: Int) {
        guard var record = downloads[identifier], record.generation == generation,
            record.download.state == .waiting || record.download.state == .active
        else { return }
        let steps = record.content.progressSteps
        if record.nextStep < steps.count {
            record.download.state = .active
            record.download.progress = min(max(steps[record.nextStep], 0), 1)
            record.download.timeRemaining = Double(steps.count - record.nextStep)
            record.nextStep += 1
            downloads[identifier] = record
            deliver(downloads: [record.download])
            scheduleStep(identifier, generation: generation)
            return
        }
        switch record.content.outcome {
        case .finished:
            do {
                record.download.contentURL = try writeContent(of: record)
                record.download.state = .finished
                record.download.progress = 1
                record.download.timeRemaining = 0
            } catch {
                record.download.state = .failed
                record.download.error = error
            }
        case .failed(let error):
            record.download.state = .failed
            record.download.error = error
        case .cancelled:
            record.download.state = .cancelled
        }
        downloads[identifier] = record
        deliver(downloads: [record.download])
    }

    private func writeContent(of record: DownloadRecord) throws -> URL {
        let directory =
            downloadsDirectory
            .appendingPathComponent(record.download.transactionIdentifier)
            .appendingPathComponent(record.content.contentIdentifier)
        let contents = directory.appendingPathComponent("Contents")
        try FileManager.default.createDirectory(at: contents, withIntermediateDirectories: true)
        try record.content.payload.write(to: contents.appendingPathComponent(record.content.fileName), options: .atomic)
        return directory
    }

    // MARK: - Subscriptions

    /// Moves the simulated clock forward and delivers every renewal due by the new time (one
    /// purchased transaction per period, with the chain's original transaction id and a new web
    /// order line item id), then issues a new receipt.
    public func advanceClock(by interval: TimeInterval) {
        clock.advance(by: interval)
        renewDueSubscriptions()
        notificationSender?.deliverDueRetries()
    }

    /// Turns auto-renewal of a subscription chain (by any of its product's chains) off or on.
    public func setAutoRenew(_ autoRenews: Bool, productIdentifier: String) {
        var changed: [String] = []
        for (key, var state) in subscriptions where state.productIdentifier == productIdentifier {
            if state.autoRenews != autoRenews, state.expiryNotified == false { changed.append(key) }
            state.autoRenews = autoRenews
            subscriptions[key] = state
        }
        for key in changed.sorted() {
            notify(.didChangeRenewalStatus, autoRenews ? .autoRenewEnabled : .autoRenewDisabled, original: key, transaction: nil)
        }
    }

    /// Makes renewals of a product fail (a card that no longer pays) or succeed again. At its
    /// renewal date a failing subscription enters billing retry (`DID_FAIL_TO_RENEW`, subtype
    /// `GRACE_PERIOD` when `gracePeriod` is positive) and, with a grace period, stays entitled
    /// until it ends (`GRACE_PERIOD_EXPIRED` then); when renewals succeed again during billing
    /// retry it renews at once (`DID_RENEW`, `BILLING_RECOVERY`); after 60 days of billing retry it
    /// expires (`EXPIRED`, `BILLING_RETRY`).
    public func setBillingFailure(_ fails: Bool, productIdentifier: String, gracePeriod: TimeInterval = 0) {
        billingFailures[productIdentifier] = fails ? max(0, gracePeriod) : nil
        renewDueSubscriptions()
    }

    /// Raises the price of a subscription product for its current subscribers: each auto-renewing
    /// subscription's renewal info carries the new `renewalPrice` and `priceIncreaseStatus`, and
    /// `PRICE_INCREASE` is sent — subtype `PENDING` (status 0) when the customer must consent,
    /// `ACCEPTED` (status 1) when the increase needs no consent. Renewals after consent are billed
    /// at `price`.
    public func increasePrice(productIdentifier: String, to price: Decimal, consentRequired: Bool = true) {
        var changed: [String] = []
        for (key, var state) in subscriptions where state.productIdentifier == productIdentifier && state.autoRenews {
            state.increasedPrice = price
            state.priceIncreaseStatus = consentRequired ? .notResponded : .consentedOrNotified
            subscriptions[key] = state
            changed.append(key)
        }
        for key in changed.sorted() {
            notify(.priceIncrease, consentRequired ? .pending : .accepted, original: key, transaction: nil)
        }
    }

    /// The customer answers a pending price increase: consent gives `PRICE_INCREASE` (`ACCEPTED`);
    /// a refusal turns auto-renew off (`DID_CHANGE_RENEWAL_STATUS`, `AUTO_RENEW_DISABLED`), so the
    /// subscription ends with its period, at the old price.
    public func respondToPriceIncrease(originalTransactionIdentifier original: String, consents: Bool) {
        guard var state = subscriptions[original], state.priceIncreaseStatus == .notResponded else { return }
        if consents {
            state.priceIncreaseStatus = .consentedOrNotified
            subscriptions[original] = state
            notify(.priceIncrease, .accepted, original: original, transaction: nil)
        } else {
            state.increasedPrice = nil
            state.priceIncreaseStatus = nil
            state.autoRenews = false
            subscriptions[original] = state
            notify(.didChangeRenewalStatus, .autoRenewDisabled, original: original, transaction: nil)
        }
    }

    /// The customer asks Apple for a refund of a purchase: `CONSUMPTION_REQUEST` carries the
    /// transaction (re-signed now), so the app can send consumption information; Apple then
    /// refunds (``refund(transactionIdentifier:reason:)``, `REFUND`) or declines
    /// (``declineRefund(transactionIdentifier:)``, `REFUND_DECLINED`). Nothing changes meanwhile.
    public func requestRefund(transactionIdentifier: String) {
        guard let record = purchases.last(where: { $0.receiptEntry.transactionIdentifier == transactionIdentifier }) else { return }
        let original = record.receiptEntry.originalTransactionIdentifier
        notify(.consumptionRequest, nil, original: subscriptions[original] != nil ? original : nil, transaction: transactionIdentifier)
    }

    /// Apple declines a refund request: `REFUND_DECLINED` re-signs the (old) transaction now;
    /// the purchase stays as it was.
    public func declineRefund(transactionIdentifier: String) {
        guard let record = purchases.last(where: { $0.receiptEntry.transactionIdentifier == transactionIdentifier }) else { return }
        let original = record.receiptEntry.originalTransactionIdentifier
        notify(.refundDeclined, nil, original: subscriptions[original] != nil ? original : nil, transaction: transactionIdentifier)
    }

    /// How long the App Store retries billing before the subscription expires: 60 days.
    public static let billingRetryPeriod: TimeInterval = 60 * 86_400

    /// Refunds a purchase: its receipt entry gets a cancellation date (now), its signed
    /// transaction from then on `revocationDate` (the same date) and `revocationReason`, and a
    /// refunded subscription stops renewing. A new receipt is issued.
    public func refund(transactionIdentifier: String, reason: RevocationReason = .other) {
        revoke(transactionIdentifier: transactionIdentifier, reason: reason, notification: .refund)
    }

    /// Revokes a purchase shared through Family Sharing (the purchaser stopped sharing it): the same
    /// revocation fields as ``refund(transactionIdentifier:reason:)``, told as `REVOKE`.
    public func revokeFamilySharing(transactionIdentifier: String) {
        revoke(transactionIdentifier: transactionIdentifier, reason: .other, notification: .revoke)
    }

    private func revoke(transactionIdentifier: String, reason: RevocationReason, notification: NotificationType) {
        guard let index = purchases.firstIndex(where: { $0.receiptEntry.transactionIdentifier == transactionIdentifier }) else { return }
        purchases[index].receiptEntry.cancellationDate = clock.now
        purchases[index].revocationReason = reason
        let original = purchases[index].receiptEntry.originalTransactionIdentifier
        if var state = subscriptions[original] {
            state.autoRenews = false
            subscriptions[original] = state
        }
        issueReceiptAfterPurchase()
        notify(notification, nil, original: subscriptions[original] != nil ? original : nil, transaction: transactionIdentifier)
    }

    private func renewDueSubscriptions() {
        let now = clock.now
        var renewals: [PaymentTransaction] = []
        var events: [(NotificationType, NotificationSubtype?, String, String?)] = []
        for key in subscriptions.keys.sorted() {
            guard var state = subscriptions[key] else { continue }
            while state.autoRenews, !state.inBillingRetry, state.expirationDate <= now,
                let next = state.period.advance(state.expirationDate)
            {
                if let grace = billingFailures[state.productIdentifier] {
                    state.inBillingRetry = true
                    state.gracePeriodExpires = grace > 0 ? state.expirationDate.addingTimeInterval(grace) : nil
                    events.append((.didFailToRenew, grace > 0 ? .gracePeriod : nil, key, nil))
                    break
                }
                let transaction = renew(&state, purchaseDate: state.expirationDate, expirationDate: next)
                renewals.append(transaction)
                events.append((.didRenew, nil, key, transaction.identifier))
            }
            if state.inBillingRetry {
                if billingFailures[state.productIdentifier] == nil, state.autoRenews, let next = state.period.advance(now) {
                    state.inBillingRetry = false
                    state.gracePeriodExpires = nil
                    let transaction = renew(&state, purchaseDate: now, expirationDate: next)
                    renewals.append(transaction)
                    events.append((.didRenew, .billingRecovery, key, transaction.identifier))
                } else if state.expirationDate.addingTimeInterval(Self.billingRetryPeriod) <= now || !state.autoRenews {
                    state.inBillingRetry = false
                    state.gracePeriodExpires = nil
                    state.autoRenews = false
                    state.expiredByBilling = true
                    state.expiryNotified = true
                    events.append((.expired, .billingRetry, key, nil))
                } else if let grace = state.gracePeriodExpires, grace <= now, !state.gracePeriodNotified {
                    state.gracePeriodNotified = true
                    events.append((.gracePeriodExpired, nil, key, nil))
                }
            }
            if !state.autoRenews, !state.expiryNotified, state.expirationDate <= now {
                state.expiryNotified = true
                let revoked = purchases.contains {
                    $0.receiptEntry.originalTransactionIdentifier == key && $0.receiptEntry.cancellationDate != nil
                }
                if !revoked { events.append((.expired, .voluntary, key, nil)) }
            }
            subscriptions[key] = state
        }
        if !renewals.isEmpty {
            issueReceiptAfterPurchase()
            schedule { [weak self] in self?.deliver(transactions: renewals) }
        }
        for (type, subtype, original, transaction) in events {
            notify(type, subtype, original: original, transaction: transaction)
        }
    }

    /// Appends a renewal of `state`'s subscription (a purchased transaction with the chain's
    /// original id and a new web order line item id) and moves its expiration date.
    private func renew(_ state: inout SubscriptionState, purchaseDate: Date, expirationDate next: Date) -> PaymentTransaction {
        let identifier = nextTransactionIdentifier()
        let webOrder = nextWebOrderLineItemID()
        let payment = Payment(productIdentifier: state.productIdentifier, applicationUsername: state.applicationUsername)
        var transaction = PaymentTransaction(
            identifier: identifier,
            state: .purchased,
            payment: payment,
            date: purchaseDate,
            original: OriginalTransaction(identifier: state.originalTransactionIdentifier, date: state.originalPurchaseDate),
            expirationDate: next,
            webOrderLineItemID: webOrder
        )
        let entry = ReceiptInAppPurchase(
            productIdentifier: state.productIdentifier,
            transactionIdentifier: identifier,
            originalTransactionIdentifier: state.originalTransactionIdentifier,
            purchaseDate: purchaseDate,
            originalPurchaseDate: state.originalPurchaseDate,
            expirationDate: next,
            webOrderLineItemID: webOrder,
            productType: .autoRenewableSubscription
        )
        var record = makeRecord(entry, applicationUsername: state.applicationUsername, reason: .renewal)
        if let price = state.increasedPrice { record.price = price }
        transaction.jwsRepresentation = signedTransaction(for: record)
        purchases.append(record)
        unfinishedTransactions.append(transaction)
        state.expirationDate = next
        return transaction
    }

    // MARK: - Server notifications

    /// Signs the transaction (`transaction`, else the latest of `original`) and the renewal info
    /// of `original` now, and hands the notification to ``notificationSender``.
    private func notify(_ type: NotificationType, _ subtype: NotificationSubtype?, original: String?, transaction: String?) {
        guard let notificationSender, let jwsIssuer else { return }
        let record =
            transaction.flatMap { id in purchases.last { $0.receiptEntry.transactionIdentifier == id } }
            ?? original.flatMap { id in purchases.last { $0.receiptEntry.originalTransactionIdentifier == id } }
        do {
            let signedTransaction = try record.map { try jwsIssuer.issueTransaction(transactionContents(for: $0)) }
            let renewal = original.flatMap { renewalInfoContents(originalTransactionIdentifier: $0) }
            let signedRenewal = try renewal.map { try jwsIssuer.issueRenewalInfo($0) }
            try notificationSender.send(
                ServerNotificationEvent(
                    type: type, subtype: subtype, signedTransactionInfo: signedTransaction, signedRenewalInfo: signedRenewal,
                    status: original.flatMap { subscriptionStatus(originalTransactionIdentifier: $0) },
                    originalTransactionIdentifier: original ?? record?.receiptEntry.originalTransactionIdentifier))
            lastNotificationError = nil
        } catch {
            lastNotificationError = error
        }
    }

    /// The status of the subscription that started with `originalTransactionIdentifier` now:
    /// revoked, in its billing grace period, in billing retry, active or expired.
    public func subscriptionStatus(originalTransactionIdentifier original: String) -> SubscriptionStatus? {
        guard let state = subscriptions[original] else { return nil }
        let now = clock.now
        let revoked = purchases.contains {
            $0.receiptEntry.originalTransactionIdentifier == original && $0.receiptEntry.cancellationDate != nil
        }
        if revoked { return .revoked }
        if state.inBillingRetry { return state.gracePeriodExpires.map { $0 > now } == true ? .billingGracePeriod : .billingRetry }
        return state.expirationDate > now ? .active : .expired
    }

    // MARK: - Signed data (StoreKit 2)

    /// A purchase record with what its signed transaction says besides the receipt entry: the
    /// product's price, currency and subscription group at purchase time.
    private func makeRecord(_ entry: ReceiptInAppPurchase, applicationUsername: String?, reason: TransactionReason) -> PurchaseRecord {
        var record = PurchaseRecord(receiptEntry: entry, applicationUsername: applicationUsername)
        record.transactionReason = reason
        if let simulated = catalog.product(entry.productIdentifier) {
            record.price = simulated.product.price
            record.currency = JWSIssuer.currency(ofLocale: simulated.product.priceLocaleIdentifier)
            record.subscriptionGroupIdentifier = simulated.effectiveSubscriptionGroupIdentifier
        }
        return record
    }

    private func transactionContents(for record: PurchaseRecord) -> TransactionContents {
        TransactionContents(
            bundleIdentifier: bundleIdentifier, purchase: record.receiptEntry,
            subscriptionGroupIdentifier: record.subscriptionGroupIdentifier,
            appAccountToken: record.applicationUsername.flatMap { UUID(uuidString: $0) }, transactionReason: record.transactionReason,
            price: record.price, currency: record.currency, revocationReason: record.revocationReason, signedDate: clock.now)
    }

    /// The signed transaction of a record for a reported transaction; a failure is kept in
    /// `lastJWSError` and gives no JWS.
    private func signedTransaction(for record: PurchaseRecord) -> String? {
        guard let jwsIssuer else { return nil }
        do {
            let token = try jwsIssuer.issueTransaction(transactionContents(for: record))
            lastJWSError = nil
            return token
        } catch {
            lastJWSError = error
            return nil
        }
    }

    private func requireJWSIssuer() throws -> any JWSIssuing {
        guard let jwsIssuer else { throw JWSIssuingError("the simulated App Store has no JWS issuer") }
        return jwsIssuer
    }

    /// The signed transaction of a purchase (renewals included), signed now, with its current
    /// state (revocation fields after a refund): what the App Store Server API's Get Transaction
    /// Info would return. `nil` when the store has no such purchase.
    /// - Throws: ``JWSIssuingError`` without a ``jwsIssuer``; the issuer's errors.
    public func signedTransaction(transactionIdentifier: String) throws -> String? {
        let issuer = try requireJWSIssuer()
        guard let record = purchases.last(where: { $0.receiptEntry.transactionIdentifier == transactionIdentifier }) else { return nil }
        return try issuer.issueTransaction(transactionContents(for: record))
    }

    /// The renewal state of the subscription that started with `originalTransactionIdentifier`,
    /// now: the product, whether it renews, when, at what price, and why it expired.
    /// `nil` when no subscription started with that transaction.
    public func renewalInfoContents(originalTransactionIdentifier: String) -> RenewalInfoContents? {
        guard let state = subscriptions[originalTransactionIdentifier] else { return nil }
        let now = clock.now
        let product = catalog.product(state.productIdentifier)?.product
        let expired = state.expirationDate <= now && !state.inBillingRetry
        let intent: ExpirationIntent? = expired && !state.autoRenews ? (state.expiredByBilling ? .billingError : .customerCancelled) : nil
        return RenewalInfoContents(
            originalTransactionIdentifier: originalTransactionIdentifier, productIdentifier: state.productIdentifier,
            autoRenewStatus: state.autoRenews ? .on : .off, expirationIntent: intent,
            isInBillingRetryPeriod: state.inBillingRetry, recentSubscriptionStartDate: state.originalPurchaseDate,
            renewalDate: state.expirationDate, renewalPrice: state.increasedPrice ?? product?.price,
            currency: product.flatMap { JWSIssuer.currency(ofLocale: $0.priceLocaleIdentifier) },
            appAccountToken: state.applicationUsername.flatMap { UUID(uuidString: $0) }, gracePeriodExpiresDate: state.gracePeriodExpires,
            signedDate: now, priceIncreaseStatus: state.priceIncreaseStatus)
    }

    /// The signed renewal info of the subscription that started with
    /// `originalTransactionIdentifier` (see ``renewalInfoContents(originalTransactionIdentifier:)``),
    /// signed now. `nil` when no subscription started with that transaction.
    /// - Throws: ``JWSIssuingError`` without a ``jwsIssuer``; the issuer's errors.
    public func signedRenewalInfo(originalTransactionIdentifier: String) throws -> String? {
        let issuer = try requireJWSIssuer()
        guard let contents = renewalInfoContents(originalTransactionIdentifier: originalTransactionIdentifier) else { return nil }
        return try issuer.issueRenewalInfo(contents)
    }

    /// Every auto-renewable subscription of the app, by subscription group (in order of first
    /// purchase), each with its status now and its latest transaction and renewal info signed
    /// now: the shape of the App Store Server API's Get All Subscription Statuses.
    /// - Throws: ``JWSIssuingError`` without a ``jwsIssuer``; the issuer's errors.
    public func subscriptionGroupStatuses() throws -> [SimulatedSubscriptionGroupStatus] {
        let issuer = try requireJWSIssuer()
        return try subscriptionStatusContents().map { group in
            SimulatedSubscriptionGroupStatus(
                subscriptionGroupIdentifier: group.subscriptionGroupIdentifier,
                lastTransactions: try group.lastTransactions.map { item in
                    SimulatedSubscriptionStatus(
                        status: item.status, originalTransactionIdentifier: item.originalTransactionIdentifier,
                        signedTransactionInfo: try issuer.issueTransaction(item.transaction),
                        signedRenewalInfo: try issuer.issueRenewalInfo(item.renewalInfo))
                })
        }
    }

    // MARK: - Products and receipt

    /// Answers from the catalog, in identifier order: known identifiers as products, the rest as
    /// invalid identifiers. Fails with ``productsRequestError`` when it is set. Each call counts in
    /// ``productsRequestCount``.
    public func requestProducts(
        identifiers: Set<String>,
        completion: @escaping @MainActor @Sendable (Result<ProductsResponse, any Error>) -> Void
    ) {
        productsRequestCount += 1
        schedule { [weak self] in
            guard let self else { return }
            if let error = self.productsRequestError {
                completion(.failure(error))
                return
            }
            let sorted = identifiers.sorted()
            completion(
                .success(
                    ProductsResponse(
                        products: sorted.compactMap { self.catalog.product($0)?.product },
                        invalidProductIdentifiers: sorted.filter { self.catalog.product($0) == nil }
                    )))
        }
    }

    /// Issues a new receipt for everything bought so far and writes it to ``receiptURL``. Fails
    /// with ``refreshError`` when it is set, or with the issuer's error. Each call counts in
    /// ``refreshRequestCount``.
    public func refreshReceipt(completion: @escaping @MainActor @Sendable (Result<Void, any Error>) -> Void) {
        refreshRequestCount += 1
        schedule { [weak self] in
            guard let self else { return }
            if let error = self.refreshError {
                completion(.failure(error))
                return
            }
            completion(self.issueReceipt())
        }
    }

    /// The receipt contents as they are now.
    public func currentReceiptContents() -> ReceiptContents? {
        guard let receiptURL else { return nil }
        return ReceiptContents(
            bundleIdentifier: bundleIdentifier,
            appVersion: appVersion,
            originalApplicationVersion: originalApplicationVersion,
            creationDate: clock.now,
            receiptURL: receiptURL,
            inAppPurchases:
                purchases
                .filter { !($0.receiptEntry.productType == .consumable && $0.finished) }
                .map(\.receiptEntry)
        )
    }

    private func issueReceiptAfterPurchase() {
        if case .failure(let error) = issueReceipt() {
            lastReceiptError = error
        } else {
            lastReceiptError = nil
        }
    }

    private func issueReceipt() -> Result<Void, any Error> {
        guard let receiptIssuer, let contents = currentReceiptContents() else { return .success(()) }
        do {
            let bytes = try receiptIssuer.issueReceipt(for: contents)
            try FileManager.default.createDirectory(
                at: contents.receiptURL.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try AtomicFile.write(bytes, to: contents.receiptURL, permissions: 0o644)
            receiptIssueCount += 1
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    // MARK: - Identifiers

    private func nextTransactionIdentifier() -> String {
        lastTransactionNumber += 1 + random.next() % 89
        return String(lastTransactionNumber)
    }

    private func nextWebOrderLineItemID() -> Int64 {
        lastWebOrderLineItemID += 1 + Int64(random.next() % 89)
        return lastWebOrderLineItemID
    }
}

// MARK: - Subscription statuses

/// One subscription group's subscriptions (the App Store Server API's
/// `SubscriptionGroupIdentifierItem`).
public struct SimulatedSubscriptionGroupStatus: Sendable {
    /// `subscriptionGroupIdentifier`.
    public var subscriptionGroupIdentifier: String
    /// `lastTransactions`: one entry per subscription (original transaction) in the group.
    public var lastTransactions: [SimulatedSubscriptionStatus]

    /// Creates a value.
    public init(subscriptionGroupIdentifier: String, lastTransactions: [SimulatedSubscriptionStatus]) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}

/// One subscription's status and latest signed data (the App Store Server API's
/// `LastTransactionsItem`).
public struct SimulatedSubscriptionStatus: Sendable {
    /// `status`: active, expired, in billing retry, in the billing grace period, or revoked.
    public var status: SubscriptionStatus
    /// `originalTransactionId`.
    public var originalTransactionIdentifier: String
    /// `signedTransactionInfo`: the latest transaction of the subscription, signed.
    public var signedTransactionInfo: String
    /// `signedRenewalInfo`: its renewal info, signed.
    public var signedRenewalInfo: String

    /// Creates a value.
    public init(status: SubscriptionStatus, originalTransactionIdentifier: String, signedTransactionInfo: String, signedRenewalInfo: String)
    {
        self.status = status
        self.originalTransactionIdentifier = originalTransactionIdentifier
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}

// MARK: - Private types

private struct WeakQueueObserver {
    weak var value: (any PaymentQueueObserver)?
}

private struct PendingPayment {
    let payment: Payment
    let identifier: String
}

private struct PurchaseRecord {
    var receiptEntry: ReceiptInAppPurchase
    let applicationUsername: String?
    var finished = false
    /// What the signed transaction says besides the receipt entry (fixed at purchase time).
    var transactionReason: TransactionReason = .purchase
    var price: Decimal?
    var currency: String?
    var subscriptionGroupIdentifier: String?
    var revocationReason: RevocationReason?

    init(receiptEntry: ReceiptInAppPurchase, applicationUsername: String?) {
        self.receiptEntry = receiptEntry
        self.applicationUsername = applicationUsername
    }
}

private struct SubscriptionState {
    let productIdentifier: String
    let originalTransactionIdentifier: String
    let originalPurchaseDate: Date
    var expirationDate: Date
    let period: SubscriptionPeriod
    var autoRenews: Bool
    let applicationUsername: String?
    /// Renewal failed and the App Store is retrying to bill.
    var inBillingRetry = false
    /// The end of the billing grace period, while in one.
    var gracePeriodExpires: Date?
    /// `GRACE_PERIOD_EXPIRED` was told.
    var gracePeriodNotified = false
    /// `EXPIRED` was told.
    var expiryNotified = false
    /// It expired because billing never recovered.
    var expiredByBilling = false
    /// The price of the next renewals after a price increase.
    var increasedPrice: Decimal?
    /// Whether the customer has consented to (or was notified of) that increase.
    var priceIncreaseStatus: PriceIncreaseStatus?
}

private struct DownloadRecord {
    var download: Download
    let content: SimulatedDownloadContent
    var nextStep = 0
    var started = false
    /// Bumped by pause, resume and cancel, so that steps scheduled before are dropped.
    var generation = 0
}

// MARK: - App Store Server API state

extension SimulatedAppStore {
    /// Every purchase of the app (renewals included), in order, with its current state (revocation
    /// fields after a refund) and `signedDate` now: what the App Store Server API's Get Transaction
    /// History signs.
    public func transactionHistoryContents() -> [TransactionContents] {
        purchases.map { transactionContents(for: $0) }
    }

    /// Every auto-renewable subscription of the app, by subscription group (in order of first
    /// purchase), each with its status now and the contents of its latest transaction and renewal
    /// info: what Get All Subscription Statuses signs (``subscriptionGroupStatuses()`` signs it).
    public func subscriptionStatusContents() -> [SimulatedSubscriptionGroupContents] {
        let now = clock.now
        var groups: [SimulatedSubscriptionGroupContents] = []
        var started: [String] = []
        for record in purchases where record.receiptEntry.productType == .autoRenewableSubscription {
            let original = record.receiptEntry.originalTransactionIdentifier
            if !started.contains(original) { started.append(original) }
        }
        for original in started {
            guard let state = subscriptions[original],
                let latest = purchases.last(where: { $0.receiptEntry.originalTransactionIdentifier == original }),
                let renewal = renewalInfoContents(originalTransactionIdentifier: original)
            else { continue }
            let status = subscriptionStatus(originalTransactionIdentifier: original) ?? (state.expirationDate > now ? .active : .expired)
            let item = SimulatedSubscriptionContents(
                status: status, originalTransactionIdentifier: original, transaction: transactionContents(for: latest), renewalInfo: renewal
            )
            let group = latest.subscriptionGroupIdentifier ?? ""
            if let index = groups.firstIndex(where: { $0.subscriptionGroupIdentifier == group }) {
                groups[index].lastTransactions.append(item)
            } else {
                groups.append(SimulatedSubscriptionGroupContents(subscriptionGroupIdentifier: group, lastTransactions: [item]))
            }
        }
        return groups
    }

    /// Extends an active subscription's renewal date by `days` (the App Store Server API's Extend
    /// a Subscription Renewal Date): the current period, its record in the receipt and the signed
    /// transaction end later, the subscription renews then, and a new receipt is issued. Returns
    /// the new renewal date, or nil when no subscription started with that transaction or it is
    /// not active.
    @discardableResult
    public func extendRenewalDate(originalTransactionIdentifier: String, byDays days: Int) -> Date? {
        guard days > 0, days <= 90, var state = subscriptions[originalTransactionIdentifier], state.expirationDate > clock.now,
            let index = purchases.lastIndex(where: { $0.receiptEntry.originalTransactionIdentifier == originalTransactionIdentifier })
        else { return nil }
        state.expirationDate = state.expirationDate.addingTimeInterval(TimeInterval(days) * 86_400)
        subscriptions[originalTransactionIdentifier] = state
        purchases[index].receiptEntry.expirationDate = state.expirationDate
        issueReceiptAfterPurchase()
        return state.expirationDate
    }
}

/// One subscription group's subscriptions, unsigned (see
/// ``SimulatedAppStore/subscriptionStatusContents()``).
public struct SimulatedSubscriptionGroupContents: Sendable {
    /// `subscriptionGroupIdentifier`.
    public var subscriptionGroupIdentifier: String
    /// One entry per subscription (original transaction) in the group.
    public var lastTransactions: [SimulatedSubscriptionContents]

    /// Creates a value.
    public init(subscriptionGroupIdentifier: String, lastTransactions: [SimulatedSubscriptionContents]) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}

/// One subscription's status and what its latest signed data says, unsigned.
public struct SimulatedSubscriptionContents: Sendable {
    /// Active, expired or revoked.
    public var status: SubscriptionStatus
    /// The subscription's original transaction id.
    public var originalTransactionIdentifier: String
    /// Its latest transaction.
    public var transaction: TransactionContents
    /// Its renewal info.
    public var renewalInfo: RenewalInfoContents

    /// Creates a value.
    public init(
        status: SubscriptionStatus, originalTransactionIdentifier: String, transaction: TransactionContents,
        renewalInfo: RenewalInfoContents
    ) {
        self.status = status
        self.originalTransactionIdentifier = originalTransactionIdentifier
        self.transaction = transaction
        self.renewalInfo = renewalInfo
    }
}
