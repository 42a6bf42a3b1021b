// The StoreKit-shaped seams the store talks to. There is no StoreKit on Linux: an app, or the
// simulated App Store of the StoreTesting module, implements these protocols.
//
// Isolation: every protocol here is `@MainActor`. The store is main-actor isolated (like RMStore's
// main-thread contract), so a queue is called on the main actor and must call its observers and
// completion handlers on the main actor too. The compiler checks both directions.

/// A payment queue (the analogue of `SKPaymentQueue`).
///
/// Contract:
/// - Observers are held **weakly**; an observer that goes away is dropped silently.
/// - Observer callbacks and all completions run on the main actor. They may come later (like
///   StoreKit) or synchronously from inside a call; the store copes with both.
/// - A transaction keeps its `payment.id` for its whole life, so that the store can match it to
///   the payment that was added.
/// - Transactions that are not finished are delivered again when an observer is added (like
///   StoreKit at the next launch).
@MainActor
public protocol PaymentQueue: AnyObject {
    /// Whether the user may make payments (parental controls may forbid it).
    var canMakePayments: Bool { get }
    /// Queues a payment. Transactions for it are reported to the observers.
    func add(_ payment: Payment)
    /// Removes a transaction from the queue for good. Until then the queue delivers it again.
    func finishTransaction(_ transaction: PaymentTransaction)
    /// Asks for every completed, restorable transaction of this user (or of all users when nil).
    func restoreCompletedTransactions(applicationUsername: String?)
    /// Starts store-hosted downloads.
    func startDownloads(_ downloads: [Download])
    /// Pauses downloads.
    func pauseDownloads(_ downloads: [Download])
    /// Resumes paused downloads.
    func resumeDownloads(_ downloads: [Download])
    /// Cancels downloads.
    func cancelDownloads(_ downloads: [Download])
    /// Registers an observer (held weakly). Unfinished transactions are delivered to it.
    func addObserver(_ observer: any PaymentQueueObserver)
    /// Unregisters an observer.
    func removeObserver(_ observer: any PaymentQueueObserver)
}

/// Receives the updates of a payment queue (the analogue of `SKPaymentTransactionObserver`).
/// Called on the main actor.
@MainActor
public protocol PaymentQueueObserver: AnyObject {
    /// Transactions changed state.
    func paymentQueue(_ queue: any PaymentQueue, updatedTransactions transactions: [PaymentTransaction])
    /// Downloads changed state or progressed.
    func paymentQueue(_ queue: any PaymentQueue, updatedDownloads downloads: [Download])
    /// Every restorable transaction has been delivered.
    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: any PaymentQueue)
    /// The restore failed.
    func paymentQueue(_ queue: any PaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error)
}

/// Looks up products (the analogue of `SKProductsRequest`).
@MainActor
public protocol ProductsRequesting: AnyObject {
    /// Requests the products with these identifiers. `completion` is called once, on the main actor.
    func requestProducts(
        identifiers: Set<String>,
        completion: @escaping @MainActor @Sendable (Result<ProductsResponse, any Error>) -> Void
    )
}

/// Refreshes the app receipt (the analogue of `SKReceiptRefreshRequest`).
@MainActor
public protocol ReceiptRefreshing: AnyObject {
    /// Fetches a new receipt and writes it where the app's receipt lives. `completion` is called
    /// once, on the main actor.
    func refreshReceipt(completion: @escaping @MainActor @Sendable (Result<Void, any Error>) -> Void)
}
