// A store verifier written as an async function: the store's completion form comes from it.

public import RMStore

/// A `ReceiptVerifier` written as an async function. The store's completion form,
/// `verify(_:completion:)`, comes from ``verify(_:)``: the verdict is computed in a new task on
/// the main actor and handed to `completion` once, on the main actor, never synchronously.
///
/// Every verifier of this module is one (``AppReceiptStoreVerifier``,
/// ``JWSTransactionStoreVerifier``, ``TransactionReceiptStoreVerifier``,
/// ``CombinedStoreVerifier``), so an app may also `await` a verdict itself.
@MainActor
public protocol AsyncReceiptVerifier: ReceiptVerifier {
    /// Verifies `transaction` and returns the verdict (the async form of the store's method).
    func verify(_ transaction: PaymentTransaction) async -> VerificationResult
}

extension AsyncReceiptVerifier {
    /// Verifies `transaction` with ``verify(_:)`` and calls `completion` once, on the main actor,
    /// never synchronously.
    public func verify(
        _ transaction: PaymentTransaction, completion: @escaping @MainActor @Sendable (VerificationResult) -> Void
    ) {
        Task { @MainActor in
            completion(await self.verify(transaction))
        }
    }
}
