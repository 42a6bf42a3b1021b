// The store's private bookkeeping: callbacks per payment and request, the restore in progress,
// transactions in flight, weak observers, and the queue observer that forwards to the store.

import Foundation

struct PaymentCallbacks {
    var success: (@MainActor (PaymentTransaction) -> Void)?
    var failure: (@MainActor (PaymentTransaction?, any Error) -> Void)?
}

struct ProductsCallbacks {
    var success: (@MainActor ([Product], [String]) -> Void)?
    var failure: (@MainActor (any Error) -> Void)?
}

struct RefreshCallbacks {
    var success: (@MainActor () -> Void)?
    var failure: (@MainActor (any Error) -> Void)?
}

struct RestoreCallbacks {
    var success: (@MainActor (RestoreResult) -> Void)?
    var failure: (@MainActor (any Error) -> Void)?
}

/// One restore, from the call (or the first unrequested restored transaction) to completion.
struct RestoreSession {
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
struct InFlight {
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

struct WeakStoreObserver {
    weak var value: (any StoreObserver)?
    init(_ value: any StoreObserver) { self.value = value }
}

/// Receives the queue's callbacks for the store. A separate object keeps the queue protocol out of
/// `Store`'s public API; it holds the store weakly (the store holds it strongly).
@MainActor
final class QueueObserver: PaymentQueueObserver {
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
