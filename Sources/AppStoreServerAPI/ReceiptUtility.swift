public import ReceiptVerification
import Receipts

/// Why no transaction id could be taken from a receipt.
public struct ReceiptUtilityError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        /// The bytes are not a receipt of the kind asked for.
        case unreadable
        /// The receipt did not verify (see ``ReceiptUtilityError/failedCheck``).
        case notVerified
    }

    /// What went wrong.
    public let code: Code
    /// For ``Code/notVerified``: the first check that failed.
    public let failedCheck: VerificationCheck?
    /// A sentence for people.
    public let reason: String

    /// `"<code>: <reason>"`.
    public var description: String { "\(code.rawValue): \(reason)" }
}

/// Takes a transaction id from a receipt, so that a backend that still receives receipts can call
/// the App Store Server API (Get Transaction History takes any of the customer's transaction ids).
/// What Apple's `ReceiptUtility` does, with verification first: the plain functions verify the
/// receipt with the verifier given and refuse one that fails; only the functions named
/// `unverified…` read a receipt without checking its signature.
public enum ReceiptUtility {
    /// The transaction id of the first in-app purchase of an app receipt that verifies (nil when
    /// it lists none).
    /// - Throws: ``ReceiptUtilityError/Code/notVerified`` when the verdict is not valid (an
    ///   unreadable receipt fails the verifier's `parse` check).
    public static func transactionID(
        fromAppReceipt bytes: [UInt8], verifier: AppReceiptVerifier, expecting expectations: ReceiptExpectations = .none,
        at time: ValidationTime = .signedDate
    ) throws(ReceiptUtilityError) -> String? {
        let verdict = verifier.verify(bytes, expecting: expectations, at: time)
        guard verdict.isValid, let receipt = verdict.receipt else { throw notVerified(verdict) }
        return firstTransactionID(receipt)
    }

    /// The transaction id of the first in-app purchase of an app receipt, **without verifying
    /// anything**: the receipt may be forged. Use it only for receipts verified elsewhere.
    /// - Throws: ``ReceiptUtilityError/Code/unreadable`` when the bytes are not an app receipt.
    public static func unverifiedTransactionID(fromAppReceipt bytes: [UInt8]) throws(ReceiptUtilityError) -> String? {
        do throws(ReceiptError) {
            return firstTransactionID(try AppReceipt(bytes))
        } catch {
            throw ReceiptUtilityError(code: .unreadable, failedCheck: nil, reason: "not an app receipt: \(error)")
        }
    }

    /// The `transaction-id` of an iOS 6 transaction receipt that verifies.
    /// - Throws: ``ReceiptUtilityError/Code/notVerified`` when the verdict is not valid.
    public static func transactionID(
        fromTransactionReceipt bytes: [UInt8], verifier: TransactionReceiptVerifier,
        expecting expectations: TransactionReceiptExpectations = .none, at time: ValidationTime = .signedDate
    ) throws(ReceiptUtilityError) -> String? {
        let verdict = verifier.verify(bytes, expecting: expectations, at: time)
        guard verdict.isValid, let receipt = verdict.payload else { throw notVerified(verdict) }
        return receipt.purchaseInfo.transactionIdentifier
    }

    /// The `transaction-id` of an iOS 6 transaction receipt, **without verifying anything**.
    /// - Throws: ``ReceiptUtilityError/Code/unreadable`` when the bytes are not a transaction receipt.
    public static func unverifiedTransactionID(fromTransactionReceipt bytes: [UInt8]) throws(ReceiptUtilityError) -> String? {
        do throws(ReceiptError) {
            return try TransactionReceipt(bytes).purchaseInfo.transactionIdentifier
        } catch {
            throw ReceiptUtilityError(code: .unreadable, failedCheck: nil, reason: "not a transaction receipt: \(error)")
        }
    }

    static func firstTransactionID(_ receipt: AppReceipt) -> String? {
        receipt.inAppPurchases.lazy.compactMap(\.transactionIdentifier).first
    }

    static func notVerified<Payload>(_ verdict: Verdict<Payload>) -> ReceiptUtilityError {
        let failed = verdict.firstFailure
        return ReceiptUtilityError(
            code: .notVerified, failedCheck: failed,
            reason: failed.map { "the receipt failed \($0.name): \($0.reason)" } ?? "the receipt did not verify")
    }
}
