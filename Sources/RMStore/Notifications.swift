// The 14 notifications of RMStore (Docs/StoreBehaviour.md §3.1), their userInfo keys, typed accessors, and the
// Swift observer protocol.
//
// Unlike RMStore, the names are public. Every notification's `object` is the posting `Store`.

public import Foundation

extension Notification.Name {
    /// A products request answered. userInfo: `products`, `invalidProductIdentifiers`.
    public static let rmProductsRequestFinished = Notification.Name("RMSKProductsRequestFinished")
    /// A products request failed. userInfo: `storeError`.
    public static let rmProductsRequestFailed = Notification.Name("RMSKProductsRequestFailed")
    /// A purchased or restored transaction went through the pipeline. userInfo: `transaction`,
    /// `productIdentifier`. With `Store.FinishMode.afterDelivery` the queue transaction stays open
    /// until the app calls `Store.finishTransaction(_:)`.
    public static let rmPaymentTransactionFinished = Notification.Name("RMSKPaymentTransactionFinished")
    /// A transaction failed (queue, verification, download or persistence). userInfo:
    /// `transaction`, `productIdentifier`, `storeError`.
    public static let rmPaymentTransactionFailed = Notification.Name("RMSKPaymentTransactionFailed")
    /// A transaction is waiting for approval (Ask to Buy). userInfo: `transaction`,
    /// `productIdentifier`.
    public static let rmPaymentTransactionDeferred = Notification.Name("RMSKPaymentTransactionDeferred")
    /// A restore completed and every restored transaction settled. userInfo: `transactions`,
    /// `failedTransactions`.
    public static let rmRestoreTransactionsFinished = Notification.Name("RMSKRestoreTransactionsFinished")
    /// A restore failed. userInfo: `storeError`.
    public static let rmRestoreTransactionsFailed = Notification.Name("RMSKRestoreTransactionsFailed")
    /// A receipt refresh succeeded (posted once per refresh, however many callers waited on it).
    public static let rmRefreshReceiptFinished = Notification.Name("RMSKRefreshReceiptFinished")
    /// A receipt refresh failed. userInfo: `storeError`.
    public static let rmRefreshReceiptFailed = Notification.Name("RMSKRefreshReceiptFailed")
    /// A download progressed. userInfo: `transaction`, `productIdentifier`, `downloadProgress`, and
    /// `storeDownload` for store-hosted content.
    public static let rmDownloadUpdated = Notification.Name("RMSKDownloadUpdated")
    /// A download finished. userInfo: `transaction`, `productIdentifier`, and `storeDownload` for
    /// store-hosted content.
    public static let rmDownloadFinished = Notification.Name("RMSKDownloadFinished")
    /// A download failed. userInfo: `transaction`, `productIdentifier`, `storeError`, and
    /// `storeDownload` for store-hosted content.
    public static let rmDownloadFailed = Notification.Name("RMSKDownloadFailed")
    /// A store-hosted download was cancelled. userInfo: `transaction`, `productIdentifier`,
    /// `storeDownload`.
    public static let rmDownloadCanceled = Notification.Name("RMSKDownloadCanceled")
    /// A store-hosted download was paused. userInfo: `transaction`, `productIdentifier`,
    /// `storeDownload`.
    public static let rmDownloadPaused = Notification.Name("RMSKDownloadPaused")

    /// All 14 names, in the order of Docs/StoreBehaviour.md §3.1.
    public static let rmAllStoreNotifications: [Notification.Name] = [
        .rmProductsRequestFinished, .rmProductsRequestFailed,
        .rmPaymentTransactionFinished, .rmPaymentTransactionFailed, .rmPaymentTransactionDeferred,
        .rmRestoreTransactionsFinished, .rmRestoreTransactionsFailed,
        .rmRefreshReceiptFinished, .rmRefreshReceiptFailed,
        .rmDownloadUpdated, .rmDownloadFinished, .rmDownloadFailed, .rmDownloadCanceled, .rmDownloadPaused,
    ]
}

/// The userInfo keys of the store's notifications (Docs/StoreBehaviour.md §3.2). Prefer the typed accessors of
/// `Notification.rm`.
public enum StoreNotificationKey {
    /// `[String]`
    public static let invalidProductIdentifiers = "invalidProductIdentifiers"
    /// `Double`, from 0 to 1
    public static let downloadProgress = "downloadProgress"
    /// `String`
    public static let productIdentifier = "productIdentifier"
    /// `[Product]`
    public static let products = "products"
    /// `Download` (store-hosted content only)
    public static let storeDownload = "storeDownload"
    /// `any Error`
    public static let storeError = "storeError"
    /// `PaymentTransaction`
    public static let transaction = "transaction"
    /// `[PaymentTransaction]`
    public static let transactions = "transactions"
    /// `[FailedTransaction]` (restore only; new in this port)
    public static let failedTransactions = "failedTransactions"
}

/// Typed read access to a store notification's userInfo (RMStore's `rm_` accessors). Every
/// accessor returns `nil` when the key is missing or holds a value of another type.
public struct StoreNotificationInfo {
    private let userInfo: [AnyHashable: Any]

    init(_ userInfo: [AnyHashable: Any]?) {
        self.userInfo = userInfo ?? [:]
    }

    private func value<T>(_ key: String, as type: T.Type) -> T? {
        userInfo[key] as? T
    }

    /// The transaction concerned (transaction and download notifications).
    public var transaction: PaymentTransaction? { value(StoreNotificationKey.transaction, as: PaymentTransaction.self) }
    /// The product identifier of the transaction's payment.
    public var productIdentifier: String? { value(StoreNotificationKey.productIdentifier, as: String.self) }
    /// The products returned (products request finished).
    public var products: [Product]? { value(StoreNotificationKey.products, as: [Product].self) }
    /// The identifiers the store did not know (products request finished).
    public var invalidProductIdentifiers: [String]? {
        value(StoreNotificationKey.invalidProductIdentifiers, as: [String].self)
    }
    /// The error (every `...Failed` notification).
    public var storeError: (any Error)? { value(StoreNotificationKey.storeError, as: (any Error).self) }
    /// The download progress, from 0 to 1 (download updated).
    public var downloadProgress: Double? { value(StoreNotificationKey.downloadProgress, as: Double.self) }
    /// The store-hosted download (nil for self-hosted content).
    public var download: Download? { value(StoreNotificationKey.storeDownload, as: Download.self) }
    /// The restored transactions (restore finished).
    public var transactions: [PaymentTransaction]? {
        value(StoreNotificationKey.transactions, as: [PaymentTransaction].self)
    }
    /// The restored transactions that failed (restore finished).
    public var failedTransactions: [FailedTransaction]? {
        value(StoreNotificationKey.failedTransactions, as: [FailedTransaction].self)
    }
}

extension Notification {
    /// Typed accessors for the store's userInfo keys: `notification.rm.transaction`,
    /// `notification.rm.storeError`, …
    public var rm: StoreNotificationInfo { StoreNotificationInfo(userInfo) }
}

/// Receives one store's notifications (RMStore's `RMStoreObserver`). Every method has a default
/// that does nothing, so implement only those you need.
///
/// Register with `Store.addObserver(_:)`. The store holds observers weakly and calls them on the
/// main actor, right after posting the same notification to its `NotificationCenter`. An observer
/// receives only the notifications of the stores it was added to.
@MainActor
public protocol StoreObserver: AnyObject {
    /// A products request answered: the store posted `.rmProductsRequestFinished`.
    func storeProductsRequestFinished(_ notification: Notification)
    /// A products request failed: the store posted `.rmProductsRequestFailed`.
    func storeProductsRequestFailed(_ notification: Notification)
    /// A purchased or restored transaction went through the pipeline: the store posted `.rmPaymentTransactionFinished`.
    func storePaymentTransactionFinished(_ notification: Notification)
    /// A transaction failed: the store posted `.rmPaymentTransactionFailed`.
    func storePaymentTransactionFailed(_ notification: Notification)
    /// A transaction waits for approval (Ask to Buy): the store posted `.rmPaymentTransactionDeferred`.
    func storePaymentTransactionDeferred(_ notification: Notification)
    /// A restore completed and every restored transaction settled: the store posted `.rmRestoreTransactionsFinished`.
    func storeRestoreTransactionsFinished(_ notification: Notification)
    /// A restore failed: the store posted `.rmRestoreTransactionsFailed`.
    func storeRestoreTransactionsFailed(_ notification: Notification)
    /// A receipt refresh succeeded: the store posted `.rmRefreshReceiptFinished`.
    func storeRefreshReceiptFinished(_ notification: Notification)
    /// A receipt refresh failed: the store posted `.rmRefreshReceiptFailed`.
    func storeRefreshReceiptFailed(_ notification: Notification)
    /// A download progressed: the store posted `.rmDownloadUpdated`.
    func storeDownloadUpdated(_ notification: Notification)
    /// A download finished: the store posted `.rmDownloadFinished`.
    func storeDownloadFinished(_ notification: Notification)
    /// A download failed: the store posted `.rmDownloadFailed`.
    func storeDownloadFailed(_ notification: Notification)
    /// A store-hosted download was cancelled: the store posted `.rmDownloadCanceled`.
    func storeDownloadCanceled(_ notification: Notification)
    /// A store-hosted download was paused: the store posted `.rmDownloadPaused`.
    func storeDownloadPaused(_ notification: Notification)
}

extension StoreObserver {
    /// Does nothing; implement it to receive `.rmProductsRequestFinished`.
    public func storeProductsRequestFinished(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmProductsRequestFailed`.
    public func storeProductsRequestFailed(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmPaymentTransactionFinished`.
    public func storePaymentTransactionFinished(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmPaymentTransactionFailed`.
    public func storePaymentTransactionFailed(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmPaymentTransactionDeferred`.
    public func storePaymentTransactionDeferred(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmRestoreTransactionsFinished`.
    public func storeRestoreTransactionsFinished(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmRestoreTransactionsFailed`.
    public func storeRestoreTransactionsFailed(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmRefreshReceiptFinished`.
    public func storeRefreshReceiptFinished(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmRefreshReceiptFailed`.
    public func storeRefreshReceiptFailed(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmDownloadUpdated`.
    public func storeDownloadUpdated(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmDownloadFinished`.
    public func storeDownloadFinished(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmDownloadFailed`.
    public func storeDownloadFailed(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmDownloadCanceled`.
    public func storeDownloadCanceled(_ notification: Notification) {}
    /// Does nothing; implement it to receive `.rmDownloadPaused`.
    public func storeDownloadPaused(_ notification: Notification) {}
}

extension StoreObserver {
    /// Calls the method that matches the notification's name; other names are ignored.
    func receive(_ notification: Notification) {
        switch notification.name {
        case .rmProductsRequestFinished: storeProductsRequestFinished(notification)
        case .rmProductsRequestFailed: storeProductsRequestFailed(notification)
        case .rmPaymentTransactionFinished: storePaymentTransactionFinished(notification)
        case .rmPaymentTransactionFailed: storePaymentTransactionFailed(notification)
        case .rmPaymentTransactionDeferred: storePaymentTransactionDeferred(notification)
        case .rmRestoreTransactionsFinished: storeRestoreTransactionsFinished(notification)
        case .rmRestoreTransactionsFailed: storeRestoreTransactionsFailed(notification)
        case .rmRefreshReceiptFinished: storeRefreshReceiptFinished(notification)
        case .rmRefreshReceiptFailed: storeRefreshReceiptFailed(notification)
        case .rmDownloadUpdated: storeDownloadUpdated(notification)
        case .rmDownloadFinished: storeDownloadFinished(notification)
        case .rmDownloadFailed: storeDownloadFailed(notification)
        case .rmDownloadCanceled: storeDownloadCanceled(notification)
        case .rmDownloadPaused: storeDownloadPaused(notification)
        default: break
        }
    }
}
