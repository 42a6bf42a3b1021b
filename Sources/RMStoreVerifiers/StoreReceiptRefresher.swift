// Refreshing the app receipt through a Store, so that a verifier's refreshes join the store's.

public import RMStore

/// A `ReceiptRefreshing` that asks a `Store` to refresh the receipt.
///
/// Going through the store rather than straight to the App Store means that a verifier's refresh
/// joins any refresh already in flight (the app's own, another verifier's): one request, every
/// caller called back, and the store's `rmRefreshReceiptFinished` / `rmRefreshReceiptFailed`
/// notifications are posted for it.
///
/// The store is held **weakly**: the store holds its verifier strongly and the verifier holds
/// this refresher, so a strong reference would be a cycle. When the store is gone the refresh
/// fails with `StoreError.Code.receiptRefreshFailed`.
@MainActor
public final class StoreReceiptRefresher: ReceiptRefreshing {
    /// The store that refreshes.
    public private(set) weak var store: Store?

    /// Refreshes through `store` (held weakly).
    public init(store: Store) {
        self.store = store
    }

    /// Asks the store to refresh; `completion` runs once, on the main actor.
    public func refreshReceipt(completion: @escaping @MainActor @Sendable (Result<Void, any Error>) -> Void) {
        guard let store else {
            completion(.failure(StoreError(.receiptRefreshFailed, "The store that refreshes the receipt no longer exists")))
            return
        }
        store.refreshReceipt {
            completion(.success(()))
        } failure: { error in
            completion(.failure(error))
        }
    }
}
