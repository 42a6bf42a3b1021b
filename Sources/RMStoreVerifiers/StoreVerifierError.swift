// The detailed reason a store verifier gives, carried inside the store's own error.

import RMStore
public import ReceiptVerification

/// Why a store verifier (``AppReceiptStoreVerifier``, ``TransactionReceiptStoreVerifier``,
/// ``JWSTransactionStoreVerifier``, ``CombinedStoreVerifier``) rejected a transaction or could not
/// reach a verdict.
///
/// The verifiers report to the store as `StoreError` values, so that apps keep comparing
/// `StoreError.code`: a definitive rejection is `.verificationFailed` (400, the transaction is
/// finished), no verdict is `.unableToCompleteVerification` (200, the transaction stays in the
/// queue and is verified again when it is delivered again). This type is the
/// `StoreError.underlying` of both, with the details: which checks failed, which verifyReceipt
/// status came back. ``from(_:)`` digs it out of any error.
public struct StoreVerifierError: Error, Sendable, CustomStringConvertible {
    /// What went wrong. A struct rather than an enum so that codes can be added without breaking
    /// `switch` statements in apps.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The stable name, for example `receiptInvalid`.
        public let rawValue: String
        /// Wraps a name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The trust anchors could not be loaded (missing, unreadable or malformed file, empty
        /// set). A configuration error: reported as a failure at once, without reading the receipt
        /// and without refreshing it, so that it is visible and cannot loop.
        public static let anchorsUnavailable = Code(rawValue: "anchorsUnavailable")
        /// There is no app receipt file, even after a refresh (or no refresher was configured).
        public static let receiptMissing = Code(rawValue: "receiptMissing")
        /// The receipt file exists but could not be read (an I/O error, not a verdict on it).
        public static let receiptUnreadable = Code(rawValue: "receiptUnreadable")
        /// The receipt failed verification: see ``failedChecks``.
        public static let receiptInvalid = Code(rawValue: "receiptInvalid")
        /// The verified receipt does not hold this transaction.
        public static let transactionNotInReceipt = Code(rawValue: "transactionNotInReceipt")
        /// The receipt holds this transaction id for another product than the transaction's.
        public static let productMismatch = Code(rawValue: "productMismatch")
        /// The receipt lists this transaction as cancelled, or its signed transaction carries a
        /// `revocationDate` (refunded or revoked by Apple).
        public static let transactionCancelled = Code(rawValue: "transactionCancelled")
        /// The receipt refresh failed (network, user cancelled the sign-in, no store).
        public static let refreshFailed = Code(rawValue: "refreshFailed")
        /// The transaction carries no legacy transaction receipt.
        public static let transactionReceiptMissing = Code(rawValue: "transactionReceiptMissing")
        /// The verifyReceipt endpoint could not be reached or answered garbage (see ``underlying``).
        public static let transport = Code(rawValue: "transport")
        /// The verifyReceipt endpoint answered a status other than 0 (see ``status``).
        public static let status = Code(rawValue: "status")
        /// The verified receipt describes another purchase than this transaction (product,
        /// transaction or bundle identifier differ).
        public static let responseMismatch = Code(rawValue: "responseMismatch")
        /// The transaction carries no signed transaction (`PaymentTransaction.jwsRepresentation`
        /// is `nil` or empty): nothing to verify, so nothing is trusted.
        public static let signedTransactionMissing = Code(rawValue: "signedTransactionMissing")
        /// The signed transaction failed verification (format, signature, chain, policy, bundle
        /// id, environment, app account token): see ``failedChecks``.
        public static let signedTransactionInvalid = Code(rawValue: "signedTransactionInvalid")
        /// The signed transaction verifies but is for another purchase than this transaction
        /// (transaction, original transaction or product identifier, or quantity differ): see
        /// ``failedChecks``.
        public static let signedTransactionMismatch = Code(rawValue: "signedTransactionMismatch")
        /// A ``CombinedStoreVerifier`` was given no verifier, so it cannot vouch for anything.
        public static let noVerifier = Code(rawValue: "noVerifier")

        /// The name.
        public var description: String { rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// An English sentence for people (logs, support); not meant to be parsed.
    public let message: String
    /// For ``Code/receiptInvalid``, ``Code/signedTransactionInvalid``,
    /// ``Code/signedTransactionMismatch`` and a revoked signed transaction's
    /// ``Code/transactionCancelled``: the checks that failed, in the order they ran.
    public let failedChecks: [VerificationCheck]
    /// For ``Code/status``: the verifyReceipt status (21000–21199 and so on).
    public let status: Int?
    /// The error that caused this one (a file error, a refresh error, a transport error).
    public let underlying: (any Error)?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, failedChecks: [VerificationCheck] = [], status: Int? = nil,
        underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.failedChecks = failedChecks
        self.status = status
        self.underlying = underlying
    }

    /// A rejection naming the checks that failed: `"<subject>: name (reason); name (reason)"`, or
    /// `"<subject>: a required check did not run"` when none failed (a verdict is invalid too when
    /// a check it requires is absent). The checks become ``failedChecks``.
    package init(_ code: Code, _ subject: String, naming failures: [VerificationCheck]) {
        let named =
            failures.isEmpty
            ? "a required check did not run"
            : failures.map { "\($0.name) (\($0.reason))" }.joined(separator: "; ")
        self.init(code, "\(subject): \(named)", failedChecks: failures)
    }

    /// The names of ``failedChecks``.
    public var failedCheckNames: [VerificationCheck.Name] { failedChecks.map(\.name) }

    /// `"code: message"`, then the underlying error if any.
    public var description: String {
        var text = "\(code): \(message)"
        if let underlying { text += " (underlying: \(underlying))" }
        return text
    }

    /// The verifier error inside `error`: the error itself, or the `underlying` of a
    /// `StoreError` (one level deep, as the verifiers report it). `nil` otherwise.
    public static func from(_ error: any Error) -> StoreVerifierError? {
        if let direct = error as? StoreVerifierError { return direct }
        if let store = error as? StoreError, let inner = store.underlying as? StoreVerifierError { return inner }
        return nil
    }

    /// The store's view: `.failed` wraps this in `StoreError(.verificationFailed)`.
    var asFailure: VerificationResult {
        .failed(StoreError(.verificationFailed, message, underlying: self))
    }

    /// The store's view: `.unableToComplete` wraps this in
    /// `StoreError(.unableToCompleteVerification)`.
    var asUnableToComplete: VerificationResult {
        .unableToComplete(StoreError(.unableToCompleteVerification, message, underlying: self))
    }
}
