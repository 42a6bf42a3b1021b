// The store's verifier for StoreKit 2 signed transactions: the transaction's jwsRepresentation
// verified offline on ReceiptVerification's JWS machinery, then matched to the transaction.

import Foundation
public import JWS
public import RMStore
public import ReceiptVerification

/// Verifies purchased and restored transactions by the App Store's signed transaction that comes
/// with them (`PaymentTransaction.jwsRepresentation`, StoreKit 2's `jwsRepresentation`), offline,
/// for the store's `receiptVerifier`.
///
/// ## What is checked
/// 1. The transaction carries a signed transaction; without one it fails
///    (``StoreVerifierError/Code/signedTransactionMissing``), never a silent pass.
/// 2. `ReceiptVerification.JWSTransactionVerifier` checks the compact JWS: `alg` ES256, the `x5c`
///    chain (the root it carries is never trusted: the chain must end at one of the configured
///    anchors, byte for byte, at the validation time), the chain policy (``Configuration/trust``, ``StoreVerifierTrust/policy``:
///    Apple's marker OIDs), the ES256 signature over exactly the signed bytes, then the payload's
///    `bundleId` (``Configuration/bundleIdentifier``), `environment`
///    (``Configuration/allowedEnvironments``, compared without regard to case) and, when the
///    payment carries one (`Payment.appAccountToken`), `appAccountToken`. Any failure
///    is ``StoreVerifierError/Code/signedTransactionInvalid`` with the failed checks named.
/// 3. The verified payload must be **this** transaction
///    (``StoreVerifierError/Code/signedTransactionMismatch`` otherwise, the check named):
///    - `transactionId` is the transaction's identifier; for a restored transaction its own or
///      its original's identifier, as `transactionId` or `originalTransactionId` (the App Store
///      signs the purchase a restore delivers again);
///    - for a purchased transaction with an original (a renewal) `originalTransactionId` is the
///      original's identifier;
///    - `productId` is the transaction's product, and `quantity` (when present) the payment's.
/// 4. A signed transaction with a `revocationDate` (refunded or revoked) fails with
///    ``StoreVerifierError/Code/transactionCancelled``.
///
/// ## Validation time
/// By default the chain is checked at the JWS's own `signedDate`, as Apple's offline verifier
/// does (`ValidationTime.signedDate`): whoever signed chooses that date, so pass
/// `ValidationTime.clock` with a clock you trust when that matters. The verifier never reads
/// the system clock by itself.
///
/// ## Outcomes
/// Everything is decided offline from bytes the transaction carries: every outcome is a verdict,
/// `.verified` or `.failed`; there is nothing to refresh or retry, so this verifier never reports
/// `.unableToComplete`. Anchors that could not be loaded (``configurationError``) fail every
/// transaction at once with ``StoreVerifierError/Code/anchorsUnavailable``, like the receipt
/// verifiers: a visible failure rather than a silent pass or an endless redelivery loop.
///
/// Rejections are `StoreError(.verificationFailed)` with a ``StoreVerifierError`` as `underlying`
/// (use ``StoreVerifierError/from(_:)``).
///
/// ## Isolation
/// Main-actor isolated like the store. Verification runs off the main actor; the completion and
/// all state changes happen on the main actor, never synchronously.
@MainActor
public final class JWSTransactionStoreVerifier: AsyncReceiptVerifier {
    /// What the signed transactions must say and how they are checked. Nothing is read from the
    /// process (no main bundle, no system clock): everything is here.
    public struct Configuration: Sendable {
        /// The app's bundle identifier, compared exactly with `bundleId`. Hard-code it rather
        /// than reading it from a file the user can edit.
        public var bundleIdentifier: String
        /// The environments `environment` may name. Default production and sandbox (App Review
        /// and TestFlight run production builds in the sandbox). Xcode's StoreKit testing proves
        /// nothing about a real purchase and is not allowed by default.
        public var allowedEnvironments: Set<Environment>
        /// Whom the `x5c` chain must lead to, under which policy, at what time. Default: Apple's
        /// (the bundled roots, `.appStore`, the JWS's `signedDate`, the shared chain cache).
        public var trust: StoreVerifierTrust
        /// Bounds applied while reading the untrusted token.
        public var limits: JWSLimits

        /// Creates a configuration.
        public init(
            bundleIdentifier: String,
            allowedEnvironments: Set<Environment> = [.production, .sandbox],
            trust: StoreVerifierTrust = StoreVerifierTrust(),
            limits: JWSLimits = .default
        ) {
            self.bundleIdentifier = bundleIdentifier
            self.allowedEnvironments = allowedEnvironments
            self.trust = trust
            self.limits = limits
        }
    }

    /// The configuration (fixed at creation; the anchors were loaded then).
    public let configuration: Configuration
    /// Why the verifier cannot verify anything (the anchors could not be loaded), or `nil`. Check
    /// it at launch: while it is set, every transaction fails with
    /// ``StoreVerifierError/Code/anchorsUnavailable``.
    public var configurationError: StoreVerifierError? {
        if case .failure(let error) = checker.verifier { return error }
        return nil
    }
    /// The payload of the last signed transaction that verified and matched its transaction.
    public private(set) var lastVerifiedTransaction: JWSTransaction?
    /// The verdict of the last signed transaction verified (valid or not; `nil` until a
    /// transaction carrying a JWS was verified with the anchors loaded): every check, the chain,
    /// the validation time.
    public private(set) var lastVerdict: Verdict<SignedJWS<JWSTransaction>>?
    /// Called on the main actor for every transaction whose signed transaction verified and
    /// matched, with the verified payload, before the verdict is handed back (for example to
    /// record a subscription's verified `expiresDate`). Several verifications may run at once:
    /// this sees each of them, where ``lastVerifiedTransaction`` keeps only the last.
    public var onVerified: (@MainActor (PaymentTransaction, JWSTransaction) -> Void)?

    private let checker: JWSTransactionChecker

    /// Creates a verifier. The anchors are loaded now; see ``configurationError``.
    public init(configuration: Configuration) {
        self.configuration = configuration
        checker = JWSTransactionChecker(configuration: configuration)
    }

    // MARK: - AsyncReceiptVerifier

    /// Verifies `transaction` by its signed transaction (see the type's documentation).
    public func verify(_ transaction: PaymentTransaction) async -> VerificationResult {
        do throws(StoreVerifierError) {
            _ = try await verifiedTransaction(for: transaction)
            return .verified
        } catch {
            return error.asFailure
        }
    }

    /// Verifies `transaction`'s signed transaction and returns its payload, for apps that want
    /// the verified fields (expiry, price, storefront, offer).
    /// - Throws: ``StoreVerifierError`` (`anchorsUnavailable`, `signedTransactionMissing`,
    ///   `signedTransactionInvalid`, `signedTransactionMismatch`, `transactionCancelled`).
    public func verifiedTransaction(for transaction: PaymentTransaction) async throws(StoreVerifierError) -> JWSTransaction {
        let outcome = await checker.check(transaction)
        if let verdict = outcome.verdict { lastVerdict = verdict }
        let verified = try outcome.result.get()
        lastVerifiedTransaction = verified
        onVerified?(transaction, verified)
        return verified
    }
}

/// The part of the verifier that does the work: immutable and `Sendable`, so it runs off the main
/// actor.
struct JWSTransactionChecker: Sendable {
    struct Outcome: Sendable {
        var verdict: Verdict<SignedJWS<JWSTransaction>>?
        var result: Result<JWSTransaction, StoreVerifierError>
    }

    let configuration: JWSTransactionStoreVerifier.Configuration
    let verifier: Result<JWSTransactionVerifier, StoreVerifierError>

    init(configuration: JWSTransactionStoreVerifier.Configuration) {
        self.configuration = configuration
        let trust = configuration.trust
        verifier = trust.loadAnchors(consequence: "no signed transaction can be verified")
            .map { JWSTransactionVerifier(anchors: $0, policy: trust.policy, cache: trust.cache, limits: configuration.limits) }
    }

    @concurrent
    func check(_ transaction: PaymentTransaction) async -> Outcome {
        let verifier: JWSTransactionVerifier
        switch self.verifier {
        case .success(let value): verifier = value
        case .failure(let error): return Outcome(result: .failure(error))
        }
        guard let token = transaction.jwsRepresentation, !token.isEmpty else {
            return Outcome(
                result: .failure(
                    StoreVerifierError(
                        .signedTransactionMissing,
                        "Transaction \(transaction.identifier) carries no signed transaction (jwsRepresentation) to verify")))
        }
        let expectations = JWSExpectations(
            bundleIdentifier: configuration.bundleIdentifier, environments: configuration.allowedEnvironments,
            appAccountToken: transaction.payment.appAccountToken?.uuidString)
        let verdict = verifier.verify(token: token, expecting: expectations, at: configuration.trust.validationTime)
        guard verdict.isValid, let payload = verdict.value() as JWSTransaction? else {
            return Outcome(
                verdict: verdict,
                result: .failure(
                    StoreVerifierError(.signedTransactionInvalid, "The signed transaction failed verification", naming: verdict.failures)))
        }
        return Outcome(verdict: verdict, result: Self.match(payload, to: transaction).map { payload })
    }

    /// The payload must be `transaction`'s (see `JWSTransactionStoreVerifier`), and not revoked.
    static func match(_ payload: JWSTransaction, to transaction: PaymentTransaction) -> Result<Void, StoreVerifierError> {
        var failures: [VerificationCheck] = []
        let restored = transaction.state == .restored
        let accepted = transaction.acceptedIdentifiers
        let named = [payload.transactionId] + (restored ? [payload.originalTransactionId] : [])
        if !named.contains(where: { $0.map(accepted.contains) ?? false }) {
            let expected = accepted.map { quoted($0) }.joined(separator: " or ")
            let found =
                restored
                ? "transactionId \(quoted(payload.transactionId)) and originalTransactionId \(quoted(payload.originalTransactionId))"
                : "transactionId \(quoted(payload.transactionId))"
            failures.append(
                VerificationCheck(name: .transactionId, passed: false, reason: "the signed transaction has \(found), expected \(expected)"))
        }
        if !restored, transaction.state == .purchased, let original = transaction.original?.identifier,
            payload.originalTransactionId != original
        {
            failures.append(
                VerificationCheck(
                    name: .originalTransactionId, passed: false,
                    reason:
                        "the signed transaction has originalTransactionId \(quoted(payload.originalTransactionId)), expected \(quoted(original))"
                ))
        }
        if payload.productId != transaction.productIdentifier {
            failures.append(
                VerificationCheck(
                    name: .productId, passed: false,
                    reason:
                        "the signed transaction is for product \(quoted(payload.productId)), expected \(quoted(transaction.productIdentifier))"
                ))
        }
        if let quantity = payload.quantity, quantity != transaction.payment.quantity {
            failures.append(
                VerificationCheck(
                    name: .quantity, passed: false,
                    reason: "the signed transaction is for \(quantity) item(s), the payment for \(transaction.payment.quantity)"))
        }
        guard failures.isEmpty else {
            return .failure(
                StoreVerifierError(.signedTransactionMismatch, "The signed transaction is for another purchase", naming: failures))
        }
        if let revoked = payload.revocationDate {
            let reason = payload.revocationReason.map { " (reason \($0.rawValue))" } ?? ""
            let check = VerificationCheck(name: .revocation, passed: false, reason: "revoked at \(revoked.text) ms\(reason)")
            return .failure(
                StoreVerifierError(
                    .transactionCancelled,
                    "The signed transaction of \(transaction.identifier) was refunded or revoked: \(check.reason)", failedChecks: [check]))
        }
        return .success(())
    }
}
