// Several store verifiers as one: for example the app receipt and the StoreKit 2 signed
// transaction, each required to vouch for the transaction.

public import RMStore

/// Runs several verifiers on each transaction, in order; the transaction is verified only when
/// every one of them verifies it. For example ``AppReceiptStoreVerifier`` and
/// ``JWSTransactionStoreVerifier``: the receipt and the signed transaction must both hold the
/// purchase.
///
/// ## Outcomes
/// - a verifier reports `.failed`: that failure, at once (the others after it do not run): a
///   rejection is final;
/// - a verifier reports `.unableToComplete`: the others still run, since one of them may reject
///   the transaction for good; if none does, the first `.unableToComplete` is reported and the
///   transaction stays unfinished;
/// - every verifier reports `.verified`: `.verified`.
///
/// With no verifier at all the combination vouches for nothing and fails every transaction
/// (``StoreVerifierError/Code/noVerifier``). A verifier that calls its completion more than once
/// is heard once.
///
/// The verifiers are held strongly, as the store holds its verifier.
@MainActor
public final class CombinedStoreVerifier: AsyncReceiptVerifier {
    /// The verifiers, in the order they run.
    public let verifiers: [any ReceiptVerifier]

    /// Combines `verifiers` (run in this order).
    public init(_ verifiers: [any ReceiptVerifier]) {
        self.verifiers = verifiers
    }

    /// Runs the verifiers (see the type's documentation).
    public func verify(_ transaction: PaymentTransaction) async -> VerificationResult {
        guard !verifiers.isEmpty else {
            return StoreVerifierError(.noVerifier, "No verifier was combined, so transaction \(transaction.identifier) cannot be verified")
                .asFailure
        }
        var undecided: VerificationResult?
        for verifier in verifiers {
            switch await Self.run(verifier, transaction) {
            case .verified: continue
            case .failed(let error): return .failed(error)
            case .unableToComplete(let error): undecided = undecided ?? .unableToComplete(error)
            }
        }
        return undecided ?? .verified
    }

    /// One verifier's verdict; later calls of its completion are ignored.
    private static func run(_ verifier: any ReceiptVerifier, _ transaction: PaymentTransaction) async -> VerificationResult {
        await withCheckedContinuation { (continuation: CheckedContinuation<VerificationResult, Never>) in
            let once = Once()
            verifier.verify(transaction) { result in
                guard once.claim() else { return }
                continuation.resume(returning: result)
            }
        }
    }
}

/// A flag that can be claimed once, on the main actor.
@MainActor
private final class Once {
    private var claimed = false

    func claim() -> Bool {
        guard !claimed else { return false }
        claimed = true
        return true
    }
}
