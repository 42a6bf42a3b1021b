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

    var products: [String: Product] = [:]
    var paymentCallbacks: [PaymentID: PaymentCallbacks] = [:]
    var productRequests: [Int: ProductsCallbacks] = [:]
    var nextToken = 0
    var inFlight: [String: InFlight] = [:]
    var finishedIdentifiers: Set<String> = []
    var awaitingDelivery: [String: PaymentTransaction] = [:]
    var restore: RestoreSession?
    var refreshWaiters: [RefreshCallbacks] = []
    var refreshGeneration = 0
    var observers: [WeakStoreObserver] = []
    let queueObserver = QueueObserver()

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

    func productsAnswered(token: Int, result: Result<ProductsResponse, any Error>) {
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

    func refreshCompleted(generation: Int, result: Result<Void, any Error>) {
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

    func post(_ name: Notification.Name, _ userInfo: [String: Any]?) {
        let notification = Notification(name: name, object: self, userInfo: userInfo)
        notificationCenter.post(notification)
        for observer in observers.compactMap(\.value) {
            observer.receive(notification)
        }
    }

    func transactionInfo(_ transaction: PaymentTransaction) -> [String: Any] {
        [
            StoreNotificationKey.transaction: transaction,
            StoreNotificationKey.productIdentifier: transaction.payment.productIdentifier,
        ]
    }
}
