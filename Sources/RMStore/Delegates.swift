// The three delegates of the pipeline: receipt verifier, content downloader, transaction persistor.
//
// Ownership: the store holds STRONG references to its delegates. RMStore's weak delegates were a
// frequent user trap: a persistor created inline was deallocated at once and nothing was ever
// persisted (Docs/StoreBehaviour.md §8.12, issues #50 and #85). A delegate that itself needs the store must
// hold it weakly (or unowned) to avoid a reference cycle.

/// The verdict of a receipt verifier.
public enum VerificationResult: Sendable {
    /// The transaction is genuine: go on to downloads and finish.
    case verified
    /// The transaction is not genuine (or not for this app): fail and finish it.
    case failed(any Error)
    /// No verdict could be reached (network down, refresh failed). The transaction is failed for
    /// this delivery but **left unfinished**, so that the queue delivers it again and it is
    /// verified again later. The store reports it with code 200
    /// (`StoreError.Code.unableToCompleteVerification`).
    case unableToComplete(any Error)
}

/// Verifies a purchased or restored transaction before it is delivered (RMStore's
/// `RMStoreReceiptVerifier`). Called on the main actor; `completion` must be called exactly once,
/// on the main actor (later calls are ignored).
@MainActor
public protocol ReceiptVerifier: AnyObject {
    /// Verifies `transaction` and reports the verdict.
    func verify(_ transaction: PaymentTransaction, completion: @escaping @MainActor @Sendable (VerificationResult) -> Void)
}

/// Downloads content the app hosts itself (RMStore's `RMStoreContentDownloader`). Runs after
/// verification and before store-hosted downloads. Called on the main actor; `progress` may be
/// called any number of times (values from 0 to 1), then `completion` exactly once.
@MainActor
public protocol ContentDownloader: AnyObject {
    /// Downloads the content of `transaction`.
    func downloadContent(
        for transaction: PaymentTransaction,
        progress: @escaping @MainActor @Sendable (Double) -> Void,
        completion: @escaping @MainActor @Sendable (Result<Void, any Error>) -> Void
    )
}

/// Records successfully delivered transactions (RMStore's `RMStoreTransactionPersistor`).
///
/// Called by the store on the main actor, once per transaction that went through the whole
/// pipeline (purchased and restored). Implementations must be thread-safe (`Sendable`) because
/// the app reads them from anywhere. Persisting the same purchase twice (a restore, a redelivery)
/// must not count it twice.
public protocol TransactionPersistor: AnyObject, Sendable {
    /// Records `transaction`. Throws when it could not be recorded; the store then reports the
    /// transaction as failed with `StoreError.Code.persistenceFailed`.
    func persist(_ transaction: PaymentTransaction) throws
}
