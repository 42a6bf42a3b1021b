// The store facade: RMStore's API over the PaymentQueue seams.
//
// Isolation: `Store` is `@MainActor`, which is RMStore's main-thread contract made checkable. The
// queue, the requesters and the delegates are main-actor protocols too, so every piece of mutable
// state below is touched from the main actor only. The async API hops onto the main actor.

public import Foundation

/// An in-app purchase store: buys, restores, refreshes the receipt, verifies, downloads, persists
/// and reports everything through callbacks, async functions, `NotificationCenter` and
/// `StoreObserver`s.
///
/// ## Pipeline
/// Every purchased or restored transaction goes through, in this order (Docs/StoreBehaviour.md §4.2):
/// 1. **verify** with `receiptVerifier` (if set);
/// 2. **self-hosted download** with `contentDownloader` (if set);
/// 3. **store-hosted downloads** (if the transaction has any): the transaction settles when none
///    is pending any more. If **any** download failed or was cancelled the transaction fails
///    (RMStore let the last download to settle decide, so an early failure followed by a late
///    success counted as a success; this port chooses the safer rule);
/// 4. **finish** on the queue, 5. **persist** with `transactionPersistor`, 6. the payment's
///    **success callback**, 7. the `rmPaymentTransactionFinished` **notification**, then restore
///    bookkeeping.
///
/// With `FinishMode.afterDelivery` step 4 moves to the end and is the app's job: the store
/// persists, calls back and notifies, and the app calls `finishTransaction(_:)` once it has
/// delivered (Docs/StoreBehaviour.md §8.1). Until then the queue delivers the transaction again at the next
/// launch.
///
/// Failures (verification, downloads, persistence, queue) finish the transaction, call the
/// payment's failure callback and post `rmPaymentTransactionFailed`, except
/// `VerificationResult.unableToComplete`, which leaves the transaction **unfinished** so that the
/// queue delivers it again. Deferred transactions (Ask to Buy) only post
/// `rmPaymentTransactionDeferred`; the payment's callbacks wait for the final outcome.
///
/// Callbacks are kept **per payment** (`Payment.id`), so two purchases of one product both get
/// called back (RMStore kept one pair per product id).
///
/// ## Ownership
/// The store holds its queue, requesters and delegates **strongly** (RMStore's weak delegates
/// were a frequent trap, Docs/StoreBehaviour.md §8.12). The queue holds the store's observer weakly, so a
/// store that is no longer referenced stops receiving updates.
@MainActor
public final class Store {
    /// When a successful transaction is finished on the queue.
    public enum FinishMode: Sendable, Hashable {
        /// Finished by the store before persisting and calling back (RMStore's behaviour).
        case automatic
        /// Left open; the app calls `Store.finishTransaction(_:)` after it delivered the content.
        case afterDelivery
    }

    /// Options of a store.
    public struct Configuration: Sendable {
        /// When successful transactions are finished. Default `.automatic`.
        public var finishMode: FinishMode
        /// Whether `addPayment` may buy a product that no products request returned (RMStore
        /// PR #213). Default `false`: such a payment fails at once with code 100.
        public var allowsPaymentsForUnrequestedProducts: Bool
        /// Where the app receipt lives (the analogue of `appStoreReceiptURL`). The file may not exist.
        public var receiptURL: URL?

        /// Creates a configuration.
        public init(
            finishMode: FinishMode = .automatic,
            allowsPaymentsForUnrequestedProducts: Bool = false,
            receiptURL: URL? = nil
        ) {
            self.finishMode = finishMode
            self.allowsPaymentsForUnrequestedProducts = allowsPaymentsForUnrequestedProducts
            self.receiptURL = receiptURL
        }
    }

    /// The payment queue.
    public let queue: any PaymentQueue
    /// Looks products up.
    public let productsRequester: any ProductsRequesting
    /// Refreshes the receipt (`nil`: refreshing fails with `receiptRefreshFailed`).
    public let receiptRefresher: (any ReceiptRefreshing)?
    /// Verifies transactions (held strongly; `nil`: no verification).
    public var receiptVerifier: (any ReceiptVerifier)?
    /// Downloads self-hosted content (held strongly; `nil`: none).
    public var contentDownloader: (any ContentDownloader)?
    /// Records delivered transactions (held strongly; `nil`: nothing is recorded).
    public var transactionPersistor: (any TransactionPersistor)?
    /// Options; may be changed at any time and apply to transactions that settle afterwards.
    public var configuration: Configuration
    /// Where notifications are posted.
    public let notificationCenter: NotificationCenter

    private var products: [String: Product] = [:]
    private var paymentCallbacks: [PaymentID: PaymentCallbacks] = [:]
    private var productRequests: [Int: ProductsCallbacks] = [:]
    private var nextToken = 0
    private var inFlight: [String: InFlight] = [:]
    private var finishedIdentifiers: Set<String> = []
    private var awaitingDelivery: [String: PaymentTransaction] = [:]
    private var restore: RestoreSession?
    private var refreshWaiters: [RefreshCallbacks] = []
    private var refreshGeneration = 0
    private var observers: [WeakStoreObserver] = []
    private let queueObserver = QueueObserver()

    /// Creates a store and registers it with the queue at once, so that transactions left
    /// unfinished by an earlier run are delivered to it. Create it early (at launch).
    public init(
        queue: any PaymentQueue,
        productsRequester: any ProductsRequesting,
        receiptRefresher: (any ReceiptRefreshing)? = nil,
        receiptVerifier: (any ReceiptVerifier)? = nil,
        contentDownloader: (any ContentDownloader)? = nil,
        transactionPersistor: (any TransactionPersistor)? = nil,
        configuration: Configuration = Configuration(),
        notificationCenter: NotificationCenter = .default
    ) {
        self.queue = queue
        self.productsRequester = productsRequester
        self.receiptRefresher = receiptRefresher
        self.receiptVerifier = receiptVerifier
        self.contentDownloader = contentDownloader
        self.transactionPersistor = transactionPersistor
        self.configuration = configuration
        self.notificationCenter = notificationCenter
        queueObserver.store = self
        queue.addObserver(queueObserver)
    }

    /// Creates a store over one object that is queue, products requester and receipt refresher
    /// at once (such as StoreTesting's simulated App Store).
    public convenience init(
        appStore: some PaymentQueue & ProductsRequesting & ReceiptRefreshing,
        receiptVerifier: (any ReceiptVerifier)? = nil,
        contentDownloader: (any ContentDownloader)? = nil,
        transactionPersistor: (any TransactionPersistor)? = nil,
        configuration: Configuration = Configuration(),
        notificationCenter: NotificationCenter = .default
    ) {
        self.init(
            queue: appStore,
            productsRequester: appStore,
            receiptRefresher: appStore,
            receiptVerifier: receiptVerifier,
            contentDownloader: contentDownloader,
            transactionPersistor: transactionPersistor,
            configuration: configuration,
            notificationCenter: notificationCenter
        )
    }

    // MARK: - Queue facts

    /// Whether the user may make payments.
    public var canMakePayments: Bool { queue.canMakePayments }

    /// Where the app receipt lives, from the configuration.
    public var receiptURL: URL? { configuration.receiptURL }

    // MARK: - Products

    /// The product with this identifier, if a products request returned it.
    public func product(forIdentifier identifier: String) -> Product? {
        products[identifier]
    }

    /// The product's price formatted as currency in its own locale (for example "$0.99",
    /// "0,99 €").
    public nonisolated static func localizedPrice(of product: Product) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .currency
        formatter.locale = Locale(identifier: product.priceLocaleIdentifier)
        return formatter.string(from: NSDecimalNumber(decimal: product.price)) ?? "\(product.price)"
    }

    /// Requests products. Returned products are cached (see `product(forIdentifier:)`). `success`
    /// receives the products and the unknown identifiers; then `rmProductsRequestFinished` is
    /// posted. On error `failure` is called, then `rmProductsRequestFailed` is posted.
    public func requestProducts(
        _ identifiers: Set<String>,
        success: (@MainActor ([Product], [String]) -> Void)? = nil,
        failure: (@MainActor (any Error) -> Void)? = nil
    ) {
        nextToken += 1
        let token = nextToken
        productRequests[token] = ProductsCallbacks(success: success, failure: failure)
        productsRequester.requestProducts(identifiers: identifiers) { [weak self] result in
            self?.productsAnswered(token: token, result: result)
        }
    }

    /// Requests products (async). Cancelling the task throws `CancellationError` at once; the
    /// request itself still completes and still posts its notification.
    public func requestProducts(_ identifiers: Set<String>) async throws -> ProductsResponse {
        try await bridge(abandonOnCancel: true) { slot in
            self.requestProducts(identifiers) { products, invalid in
                slot.resume(.success(ProductsResponse(products: products, invalidProductIdentifiers: invalid)))
            } failure: { error in
                slot.resume(.failure(error))
            }
        }
    }

    private func productsAnswered(token: Int, result: Result<ProductsResponse, any Error>) {
        guard let callbacks = productRequests.removeValue(forKey: token) else { return }
        switch result {
        case .success(let response):
            for product in response.products {
                products[product.identifier] = product
            }
            callbacks.success?(response.products, response.invalidProductIdentifiers)
            post(
                .rmProductsRequestFinished,
                [
                    StoreNotificationKey.products: response.products,
                    StoreNotificationKey.invalidProductIdentifiers: response.invalidProductIdentifiers,
                ])
        case .failure(let error):
            callbacks.failure?(error)
            post(.rmProductsRequestFailed, [StoreNotificationKey.storeError: error])
        }
    }

    // MARK: - Payments

    /// Buys a product.
    ///
    /// The product must have been returned by a products request, unless
    /// `Configuration.allowsPaymentsForUnrequestedProducts` is set. Otherwise `failure` is called
    /// **synchronously** with a nil transaction and code 100, nothing is queued and nothing is
    /// posted. A quantity below 1 fails the same way with `paymentInvalid`.
    ///
    /// The callbacks belong to this payment only, and run after the whole pipeline (see the type's
    /// documentation). A transaction delivered again later (next launch) has no callbacks: observe
    /// the notifications for those.
    ///
    /// - Returns: the queued payment, or `nil` when it was refused.
    @discardableResult
    public func addPayment(
        _ productIdentifier: String,
        quantity: Int = 1,
        applicationUsername: String? = nil,
        success: (@MainActor (PaymentTransaction) -> Void)? = nil,
        failure: (@MainActor (PaymentTransaction?, any Error) -> Void)? = nil
    ) -> Payment? {
        guard products[productIdentifier] != nil || configuration.allowsPaymentsForUnrequestedProducts else {
            failure?(nil, StoreError(.unknownProductIdentifier))
            return nil
        }
        guard quantity >= 1 else {
            failure?(nil, StoreError(.paymentInvalid, "The quantity must be at least 1"))
            return nil
        }
        let payment = Payment(productIdentifier: productIdentifier, quantity: quantity, applicationUsername: applicationUsername)
        if success != nil || failure != nil {
            paymentCallbacks[payment.id] = PaymentCallbacks(success: success, failure: failure)
        }
        queue.add(payment)
        return payment
    }

    /// Buys a product (async) and returns the transaction once it went through the pipeline.
    ///
    /// Throws `PurchaseError`. Cancellation: a task cancelled before the call throws
    /// `PurchaseError(transaction: nil, error: CancellationError())` and queues nothing. Once the
    /// payment is queued it cannot be withdrawn (the user may be charged), so the call then waits
    /// for the real outcome rather than losing it.
    public func purchase(
        _ productIdentifier: String,
        quantity: Int = 1,
        applicationUsername: String? = nil
    ) async throws -> PaymentTransaction {
        if Task.isCancelled {
            throw PurchaseError(transaction: nil, error: CancellationError())
        }
        return try await bridge(abandonOnCancel: false) { slot in
            self.addPayment(productIdentifier, quantity: quantity, applicationUsername: applicationUsername) { transaction in
                slot.resume(.success(transaction))
            } failure: { transaction, error in
                slot.resume(.failure(PurchaseError(transaction: transaction, error: error)))
            }
        }
    }

    /// Finishes a transaction on the queue. With `FinishMode.afterDelivery`, call it once the
    /// content of a successful transaction has been delivered; until then the queue keeps the
    /// transaction and delivers it again at the next launch.
    public func finishTransaction(_ transaction: PaymentTransaction) {
        awaitingDelivery.removeValue(forKey: transaction.identifier)
        finishedIdentifiers.insert(transaction.identifier)
        queue.finishTransaction(transaction)
    }

    /// Successful transactions that wait for `finishTransaction(_:)` (`FinishMode.afterDelivery`),
    /// oldest first.
    public var transactionsAwaitingDelivery: [PaymentTransaction] {
        awaitingDelivery.values.sorted { ($0.date ?? .distantPast, $0.identifier) < ($1.date ?? .distantPast, $1.identifier) }
    }

    // MARK: - Restore

    /// Restores completed transactions, optionally only those of one application username.
    ///
    /// Every call starts a fresh aggregate (RMStore's of-user variant kept the previous one). A
    /// call while a restore for the same username runs joins it (both callers are called back);
    /// a call for another username fails at once with `restoreInProgress`.
    ///
    /// `success` runs once the queue said the restore finished **and** every restored transaction
    /// settled (verified, downloaded, persisted, or failed); failed ones are listed apart in
    /// `RestoreResult.failedTransactions`. Then `rmRestoreTransactionsFinished` is posted.
    /// A transaction the queue delivers twice is counted once. On a queue error `failure` runs,
    /// then `rmRestoreTransactionsFailed` is posted.
    public func restoreTransactions(
        applicationUsername: String? = nil,
        success: (@MainActor (RestoreResult) -> Void)? = nil,
        failure: (@MainActor (any Error) -> Void)? = nil
    ) {
        let callbacks = RestoreCallbacks(success: success, failure: failure)
        if var session = restore, session.requested {
            guard session.applicationUsername == applicationUsername else {
                failure?(StoreError(.restoreInProgress))
                return
            }
            session.callbacks.append(callbacks)
            restore = session
            return
        }
        restore = RestoreSession(applicationUsername: applicationUsername, requested: true, callbacks: [callbacks])
        queue.restoreCompletedTransactions(applicationUsername: applicationUsername)
    }

    /// Restores completed transactions (async). Once the queue was asked it cannot be called off,
    /// so cancellation only has an effect before that (throws `CancellationError`).
    public func restoreTransactions(applicationUsername: String? = nil) async throws -> RestoreResult {
        try Task.checkCancellation()
        return try await bridge(abandonOnCancel: false) { slot in
            self.restoreTransactions(applicationUsername: applicationUsername) { result in
                slot.resume(.success(result))
            } failure: { error in
                slot.resume(.failure(error))
            }
        }
    }

    // MARK: - Receipt refresh

    /// Refreshes the app receipt. Calls made while a refresh runs join it: one request, and
    /// **every** caller is called back (RMStore had one slot and dropped earlier callers). Then
    /// `rmRefreshReceiptFinished` or `rmRefreshReceiptFailed` is posted once.
    public func refreshReceipt(
        success: (@MainActor () -> Void)? = nil,
        failure: (@MainActor (any Error) -> Void)? = nil
    ) {
        guard let refresher = receiptRefresher else {
            failure?(StoreError(.receiptRefreshFailed, "This store has no receipt refresher"))
            return
        }
        refreshWaiters.append(RefreshCallbacks(success: success, failure: failure))
        guard refreshWaiters.count == 1 else { return }
        refreshGeneration += 1
        let generation = refreshGeneration
        refresher.refreshReceipt { [weak self] result in
            self?.refreshCompleted(generation: generation, result: result)
        }
    }

    /// Refreshes the app receipt (async). Cancelling the task throws `CancellationError` at once;
    /// the shared refresh goes on for the other callers.
    public func refreshReceipt() async throws {
        try await bridge(abandonOnCancel: true) { slot in
            self.refreshReceipt {
                slot.resume(.success(()))
            } failure: { error in
                slot.resume(.failure(error))
            }
        }
    }

    private func refreshCompleted(generation: Int, result: Result<Void, any Error>) {
        guard generation == refreshGeneration, !refreshWaiters.isEmpty else { return }
        let waiters = refreshWaiters
        refreshWaiters = []
        refreshGeneration += 1
        switch result {
        case .success:
            for waiter in waiters { waiter.success?() }
            post(.rmRefreshReceiptFinished, nil)
        case .failure(let error):
            for waiter in waiters { waiter.failure?(error) }
            post(.rmRefreshReceiptFailed, [StoreNotificationKey.storeError: error])
        }
    }

    // MARK: - Observers

    /// Adds an observer of this store's notifications (held weakly). Adding twice has no effect.
    public func addObserver(_ observer: any StoreObserver) {
        observers.removeAll { $0.value == nil }
        guard !observers.contains(where: { $0.value === observer }) else { return }
        observers.append(WeakStoreObserver(observer))
    }

    /// Removes an observer.
    public func removeObserver(_ observer: any StoreObserver) {
        observers.removeAll { $0.value == nil || $0.value === observer }
    }

    private func post(_ name: Notification.Name, _ userInfo: [String: Any]?) {
        let notification = Notification(name: name, object: self, userInfo: userInfo)
        notificationCenter.post(notification)
        for observer in observers.compactMap(\.value) {
            observer.receive(notification)
        }
    }

    private func transactionInfo(_ transaction: PaymentTransaction) -> [String: Any] {
        [
            StoreNotificationKey.transaction: transaction,
            StoreNotificationKey.productIdentifier: transaction.payment.productIdentifier,
        ]
    }

    // MARK: - Queue updates

    fileprivate func queueUpdated(transactions: [PaymentTransaction]) {
        for transaction in transactions {
            switch transaction.state {
            case .purchased, .restored:
                begin(transaction)
            case .failed:
                // A failure this store already finished (delivered twice) is reported once.
                guard !finishedIdentifiers.contains(transaction.identifier) else { continue }
                fail(transaction, error: transaction.error ?? StoreError(.paymentFailed), finish: true)
            case .deferred:
                post(.rmPaymentTransactionDeferred, transactionInfo(transaction))
            case .purchasing:
                break
            }
        }
    }

    /// Starts the pipeline, unless this transaction is already in it, was finished by this store,
    /// or waits for delivery (duplicate deliveries are ignored, Docs/StoreBehaviour.md §8.3).
    private func begin(_ transaction: PaymentTransaction) {
        let id = transaction.identifier
        guard inFlight[id] == nil, !finishedIdentifiers.contains(id), awaitingDelivery[id] == nil else { return }
        if transaction.state == .restored {
            restoreArrived(transaction)
        }
        nextToken += 1
        inFlight[id] = InFlight(transaction: transaction, attempt: nextToken, stage: .verifying)
        verify(id)
    }

    private func verify(_ id: String) {
        guard let context = inFlight[id] else { return }
        guard let verifier = receiptVerifier else {
            downloadSelfHostedContent(id)
            return
        }
        let attempt = context.attempt
        verifier.verify(context.transaction) { [weak self] result in
            self?.verified(id, attempt: attempt, result: result)
        }
    }

    private func verified(_ id: String, attempt: Int, result: VerificationResult) {
        guard let context = inFlight[id], context.attempt == attempt, context.stage == .verifying else { return }
        switch result {
        case .verified:
            downloadSelfHostedContent(id)
        case .failed(let error):
            fail(context.transaction, error: error, finish: true)
        case .unableToComplete(let error):
            let reported: any Error =
                StoreError.code(of: error) == .unableToCompleteVerification
                ? error
                : StoreError(.unableToCompleteVerification, underlying: error)
            fail(context.transaction, error: reported, finish: false)
        }
    }

    private func downloadSelfHostedContent(_ id: String) {
        guard var context = inFlight[id] else { return }
        context.stage = .selfHostedDownload
        inFlight[id] = context
        guard let downloader = contentDownloader else {
            startHostedDownloads(id)
            return
        }
        let attempt = context.attempt
        downloader.downloadContent(for: context.transaction) { [weak self] progress in
            self?.selfHostedProgress(id, attempt: attempt, progress: progress)
        } completion: { [weak self] result in
            self?.selfHostedCompleted(id, attempt: attempt, result: result)
        }
    }

    private func selfHostedProgress(_ id: String, attempt: Int, progress: Double) {
        guard let context = inFlight[id], context.attempt == attempt, context.stage == .selfHostedDownload else { return }
        var info = transactionInfo(context.transaction)
        info[StoreNotificationKey.downloadProgress] = progress
        post(.rmDownloadUpdated, info)
    }

    private func selfHostedCompleted(_ id: String, attempt: Int, result: Result<Void, any Error>) {
        guard let context = inFlight[id], context.attempt == attempt, context.stage == .selfHostedDownload else { return }
        switch result {
        case .success:
            // Move on before posting, so that a second completion call is ignored.
            var next = context
            next.stage = .hostedDownloads
            inFlight[id] = next
            post(.rmDownloadFinished, transactionInfo(context.transaction))
            startHostedDownloads(id)
        case .failure(let error):
            inFlight.removeValue(forKey: id)
            var info = transactionInfo(context.transaction)
            info[StoreNotificationKey.storeError] = error
            post(.rmDownloadFailed, info)
            fail(context.transaction, error: error, finish: true)
        }
    }

    private func startHostedDownloads(_ id: String) {
        guard var context = inFlight[id] else { return }
        context.stage = .hostedDownloads
        // Downloads that already settled (a transaction delivered again) count as they are.
        for download in context.transaction.downloads where context.downloadFailure == nil {
            context.downloadFailure = Self.failure(of: download)
        }
        inFlight[id] = context
        let pending = context.transaction.downloads.filter { $0.state.isPending }
        if pending.isEmpty {
            settleHostedDownloadsIfDone(id)
        } else {
            queue.startDownloads(pending)
        }
    }

    private static func failure(of download: Download) -> (any Error)? {
        switch download.state {
        case .failed: return download.error ?? StoreError(.downloadFailed)
        case .cancelled: return StoreError(.downloadCanceled)
        case .waiting, .active, .paused, .finished: return nil
        }
    }

    fileprivate func queueUpdated(downloads: [Download]) {
        for download in downloads {
            let id = download.transactionIdentifier
            // Updates for transactions this store is not processing cannot be attributed; ignore.
            guard var context = inFlight[id] else { continue }
            if let index = context.transaction.downloads.firstIndex(where: { $0.id == download.id }) {
                context.transaction.downloads[index] = download
            } else {
                context.transaction.downloads.append(download)
            }
            if context.downloadFailure == nil {
                context.downloadFailure = Self.failure(of: download)
            }
            inFlight[id] = context

            var info = transactionInfo(context.transaction)
            info[StoreNotificationKey.storeDownload] = download
            switch download.state {
            case .active:
                info[StoreNotificationKey.downloadProgress] = download.progress
                post(.rmDownloadUpdated, info)
            case .paused:
                post(.rmDownloadPaused, info)
            case .waiting:
                break
            case .finished:
                post(.rmDownloadFinished, info)
            case .failed:
                info[StoreNotificationKey.storeError] = download.error ?? StoreError(.downloadFailed)
                post(.rmDownloadFailed, info)
            case .cancelled:
                post(.rmDownloadCanceled, info)
            }
            if !download.state.isPending {
                settleHostedDownloadsIfDone(id)
            }
        }
    }

    private func settleHostedDownloadsIfDone(_ id: String) {
        guard let context = inFlight[id], context.stage == .hostedDownloads else { return }
        guard !context.transaction.downloads.contains(where: { $0.state.isPending }) else { return }
        if let failure = context.downloadFailure {
            fail(context.transaction, error: failure, finish: true)
        } else {
            succeed(id)
        }
    }

    private func succeed(_ id: String) {
        guard let context = inFlight.removeValue(forKey: id) else { return }
        let transaction = context.transaction
        let mode = configuration.finishMode
        if mode == .automatic {
            finishedIdentifiers.insert(id)
            queue.finishTransaction(transaction)
        }
        if let persistor = transactionPersistor {
            do {
                try persistor.persist(transaction)
            } catch {
                // Automatic mode: already finished, so the app must learn that the record is
                // missing. After-delivery mode: not finished, so the queue delivers it again.
                report(transaction, error: StoreError(.persistenceFailed, underlying: error))
                return
            }
        }
        if mode == .afterDelivery {
            awaitingDelivery[id] = transaction
        }
        paymentCallbacks.removeValue(forKey: transaction.payment.id)?.success?(transaction)
        post(.rmPaymentTransactionFinished, transactionInfo(transaction))
        restoreSettled(transaction, failure: nil)
    }

    private func fail(_ transaction: PaymentTransaction, error: any Error, finish: Bool) {
        inFlight.removeValue(forKey: transaction.identifier)
        if finish {
            finishedIdentifiers.insert(transaction.identifier)
            queue.finishTransaction(transaction)
        }
        report(transaction, error: error)
    }

    private func report(_ transaction: PaymentTransaction, error: any Error) {
        paymentCallbacks.removeValue(forKey: transaction.payment.id)?.failure?(transaction, error)
        var info = transactionInfo(transaction)
        info[StoreNotificationKey.storeError] = error
        post(.rmPaymentTransactionFailed, info)
        restoreSettled(transaction, failure: error)
    }

    // MARK: - Restore bookkeeping

    private func restoreArrived(_ transaction: PaymentTransaction) {
        // A restored transaction without a restore call (another store started it) gets a
        // session of its own, so that it is still aggregated when the queue says "finished".
        var session = restore ?? .unrequested
        if session.seen.insert(transaction.identifier).inserted {
            session.pending.insert(transaction.identifier)
        }
        restore = session
    }

    private func restoreSettled(_ transaction: PaymentTransaction, failure: (any Error)?) {
        guard var session = restore, session.pending.remove(transaction.identifier) != nil else { return }
        if let failure {
            session.failed.append(FailedTransaction(transaction: transaction, error: failure))
        } else {
            session.restored.append(transaction)
        }
        restore = session
        completeRestoreIfDone()
    }

    fileprivate func queueRestoreFinished() {
        var session = restore ?? .unrequested
        session.queueFinished = true
        restore = session
        completeRestoreIfDone()
    }

    private func completeRestoreIfDone() {
        guard let session = restore, session.queueFinished, session.pending.isEmpty else { return }
        restore = nil
        let result = RestoreResult(restoredTransactions: session.restored, failedTransactions: session.failed)
        for callbacks in session.callbacks {
            callbacks.success?(result)
        }
        post(
            .rmRestoreTransactionsFinished,
            [
                StoreNotificationKey.transactions: result.restoredTransactions,
                StoreNotificationKey.failedTransactions: result.failedTransactions,
            ])
    }

    fileprivate func queueRestoreFailed(_ error: any Error) {
        let session = restore
        restore = nil
        for callbacks in session?.callbacks ?? [] {
            callbacks.failure?(error)
        }
        post(.rmRestoreTransactionsFailed, [StoreNotificationKey.storeError: error])
    }
}

// MARK: - Private types

private struct PaymentCallbacks {
    var success: (@MainActor (PaymentTransaction) -> Void)?
    var failure: (@MainActor (PaymentTransaction?, any Error) -> Void)?
}

private struct ProductsCallbacks {
    var success: (@MainActor ([Product], [String]) -> Void)?
    var failure: (@MainActor (any Error) -> Void)?
}

private struct RefreshCallbacks {
    var success: (@MainActor () -> Void)?
    var failure: (@MainActor (any Error) -> Void)?
}

private struct RestoreCallbacks {
    var success: (@MainActor (RestoreResult) -> Void)?
    var failure: (@MainActor (any Error) -> Void)?
}

/// One restore, from the call (or the first unrequested restored transaction) to completion.
private struct RestoreSession {
    let applicationUsername: String?
    /// Started by `restoreTransactions` on this store.
    let requested: Bool
    var callbacks: [RestoreCallbacks]
    var queueFinished = false
    /// Restored transactions that arrived and have not settled.
    var pending: Set<String> = []
    /// Every restored transaction id that arrived (duplicates are counted once).
    var seen: Set<String> = []
    var restored: [PaymentTransaction] = []
    var failed: [FailedTransaction] = []

    /// A session for restored transactions that arrive without a restore call on this store.
    static var unrequested: RestoreSession {
        RestoreSession(applicationUsername: nil, requested: false, callbacks: [])
    }
}

/// A transaction in the pipeline.
private struct InFlight {
    enum Stage: Equatable {
        case verifying, selfHostedDownload, hostedDownloads
    }

    var transaction: PaymentTransaction
    /// Distinguishes this pass from an earlier one of the same transaction, so that late or
    /// repeated delegate callbacks are ignored.
    let attempt: Int
    var stage: Stage
    /// The first failed or cancelled store-hosted download.
    var downloadFailure: (any Error)?
}

private struct WeakStoreObserver {
    weak var value: (any StoreObserver)?
    init(_ value: any StoreObserver) { self.value = value }
}

/// Receives the queue's callbacks for the store. A separate object keeps the queue protocol out of
/// `Store`'s public API; it holds the store weakly (the store holds it strongly).
@MainActor
private final class QueueObserver: PaymentQueueObserver {
    weak var store: Store?

    func paymentQueue(_ queue: any PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) {
        store?.queueUpdated(transactions: transactions)
    }

    func paymentQueue(_ queue: any PaymentQueue, updatedDownloads downloads: [Download]) {
        store?.queueUpdated(downloads: downloads)
    }

    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: any PaymentQueue) {
        store?.queueRestoreFinished()
    }

    func paymentQueue(_ queue: any PaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) {
        store?.queueRestoreFailed(error)
    }
}

// MARK: - Async bridging

/// Holds a continuation until its first result; later results are dropped. Main-actor isolated,
/// so a callback and a cancellation cannot race.
@MainActor
final class ContinuationSlot<Value: Sendable> {
    private var continuation: CheckedContinuation<Value, any Error>?

    func install(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation = continuation
    }

    func resume(_ result: Result<Value, any Error>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result)
    }
}

extension Store {
    /// Runs a callback-based operation as an async one. With `abandonOnCancel`, task cancellation
    /// resumes the caller with `CancellationError` at once (the operation goes on; its later
    /// result is dropped for this caller). Without it, the caller waits for the real result.
    func bridge<Value: Sendable>(
        abandonOnCancel: Bool,
        _ start: (ContinuationSlot<Value>) -> Void
    ) async throws -> Value {
        let slot = ContinuationSlot<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                slot.install(continuation)
                if abandonOnCancel && Task.isCancelled {
                    slot.resume(.failure(CancellationError()))
                    return
                }
                start(slot)
            }
        } onCancel: {
            guard abandonOnCancel else { return }
            Task { @MainActor in
                slot.resume(.failure(CancellationError()))
            }
        }
    }
}
