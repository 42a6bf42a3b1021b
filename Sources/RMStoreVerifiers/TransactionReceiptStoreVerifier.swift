// The store's verifier for legacy iOS 6 transaction receipts: RMStore's
// RMStoreTransactionReceiptVerifier (Docs/StoreBehaviour.md §5), offline or through verifyReceipt, with the
// answer checked against the transaction.

import Foundation
public import RMStore
public import ReceiptVerification
public import Receipts
public import VerifyReceipt

/// Verifies purchased and restored transactions by their legacy per-transaction receipt
/// (`PaymentTransaction.transactionReceipt`, iOS 6 and earlier), for the store's
/// `receiptVerifier` (RMStore's `RMStoreTransactionReceiptVerifier`, Docs/StoreBehaviour.md §5).
///
/// ## Two methods
/// - ``Method/offline(_:validationTime:)``: `ReceiptVerification.TransactionReceiptVerifier` checks
///   the signature blob, the leaf → pinned intermediate → anchor chain and Apple's marker, with
///   no network.
/// - ``Method/online(_:)``: `VerifyReceipt.VerifyReceiptClient` posts the receipt to Apple's
///   verifyReceipt (or a stand-in such as `receipt-tool serve`): production first, the sandbox on
///   21007, each endpoint at most once.
///
/// ## What must hold
/// The receipt (offline) or the endpoint's `receipt` (online) must describe **this** transaction,
/// which RMStore never checked (Docs/StoreBehaviour.md §5 step 7):
/// - `bid` equals ``Configuration/bundleIdentifier``, and `bvrs` equals
///   ``Configuration/bundleVersion`` when one is set;
/// - `product-id` equals the transaction's product;
/// - `transaction-id` equals the transaction's identifier; for a restored transaction its
///   original transaction's identifier is accepted too, as `transaction-id` or
///   `original-transaction-id`.
///
/// ## Outcomes
/// | what happened | result |
/// |---|---|
/// | the transaction has no transaction receipt | `.failed` (`transactionReceiptMissing`), no request |
/// | offline: a check failed | `.failed` (`receiptInvalid`, the checks named) |
/// | online: transport error, timeout, HTTP error, a body that is not a verifyReceipt answer | `.unableToComplete` (`transport`) |
/// | online: status 21005, 21009, 21100–21199 or `is-retryable` true (Apple's server could not answer) | `.unableToComplete` (`status`) |
/// | online: any other status ≠ 0 | `.failed` (`status`, with ``StoreVerifierError/status``) |
/// | status 0 or a valid offline verdict, but another purchase | `.failed` (`responseMismatch`) |
/// | status 0 or a valid offline verdict for this purchase | `.verified` |
///
/// RMStore finished the transaction on every status other than 0 and 21007, even 21005 "server
/// unavailable"; here a server that could not answer leaves the transaction unfinished, like a
/// network failure. A body that is not JSON gives one result (RMStore called both blocks).
///
/// ## Isolation
/// Main-actor isolated like the store; the offline check and the network call run off the main
/// actor, the completion runs on the main actor, never synchronously.
@MainActor
public final class TransactionReceiptStoreVerifier: AsyncReceiptVerifier {
    /// How the receipt is verified.
    public enum Method: Sendable {
        /// With no network: the signature and certificate chain, checked at `validationTime`
        /// (default: the receipt's purchase date, as Apple's endpoint did).
        case offline(TransactionReceiptVerifier, validationTime: ValidationTime = .signedDate)
        /// By Apple's verifyReceipt endpoints (or a stand-in) through this client.
        case online(VerifyReceiptClient)
    }

    /// What the receipt must say and how it is verified.
    public struct Configuration: Sendable {
        /// How the receipt is verified.
        public var method: Method
        /// The app's bundle identifier (`bid`), compared exactly.
        public var bundleIdentifier: String
        /// The app's bundle version at purchase time (`bvrs`), compared exactly when set. Leave it
        /// `nil` when transactions bought with an earlier version may be delivered again.
        public var bundleVersion: String?
        /// Offline only: the environments the receipt's `environment` may name (that value is not
        /// signed, so this guards against mistakes, not forgery). `nil`: not checked.
        public var allowedEnvironments: Set<ReceiptEnvironment>?

        /// Creates a configuration.
        public init(
            method: Method, bundleIdentifier: String, bundleVersion: String? = nil,
            allowedEnvironments: Set<ReceiptEnvironment>? = nil
        ) {
            self.method = method
            self.bundleIdentifier = bundleIdentifier
            self.bundleVersion = bundleVersion
            self.allowedEnvironments = allowedEnvironments
        }
    }

    /// The configuration.
    public let configuration: Configuration

    /// Creates a verifier.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Verifies `transaction` by its transaction receipt (see the type's documentation).
    public func verify(_ transaction: PaymentTransaction) async -> VerificationResult {
        guard let data = transaction.transactionReceipt, !data.isEmpty else {
            return StoreVerifierError(
                .transactionReceiptMissing, "Transaction \(transaction.identifier) has no transaction receipt to verify"
            ).asFailure
        }
        let receipt = [UInt8](data)
        switch configuration.method {
        case .offline(let verifier, let time):
            return await Self.verifyOffline(
                receipt, transaction: transaction, verifier: verifier, time: time, configuration: configuration)
        case .online(let client):
            return await Self.verifyOnline(receipt, transaction: transaction, client: client, configuration: configuration)
        }
    }

    // MARK: - Offline

    @concurrent
    nonisolated static func verifyOffline(
        _ receipt: [UInt8], transaction: PaymentTransaction, verifier: TransactionReceiptVerifier, time: ValidationTime,
        configuration: Configuration
    ) async -> VerificationResult {
        let expectations = TransactionReceiptExpectations(
            bundleIdentifier: configuration.bundleIdentifier, bundleVersion: configuration.bundleVersion,
            productIdentifiers: [transaction.productIdentifier], allowedEnvironments: configuration.allowedEnvironments)
        let verdict = verifier.verify(receipt, expecting: expectations, at: time)
        guard verdict.isValid, let parsed = verdict.receipt else {
            return StoreVerifierError(.receiptInvalid, "The transaction receipt failed verification", naming: verdict.failures).asFailure
        }
        return match(parsed.purchaseInfo, transaction: transaction, configuration: configuration, source: "The transaction receipt")
    }

    // MARK: - Online

    nonisolated static func verifyOnline(
        _ receipt: [UInt8], transaction: PaymentTransaction, client: VerifyReceiptClient, configuration: Configuration
    ) async -> VerificationResult {
        let result: VerifyReceiptClient.Result
        do throws(VerifyReceiptClientError) {
            result = try await client.verify(receipt: receipt)
        } catch {
            return StoreVerifierError(
                .transport, "verifyReceipt could not be reached (\(error.code)), so the transaction stays unfinished",
                underlying: error
            ).asUnableToComplete
        }
        let response = result.response
        let status = response.status.rawValue
        guard status == 0 else {
            let error = StoreVerifierError(
                .status, "verifyReceipt (\(result.environment)) answered status \(status) (\(response.status))", status: status)
            return isTemporary(response) ? error.asUnableToComplete : error.asFailure
        }
        let info: PurchaseInfo?
        do throws(ReceiptError) {
            info = try response.purchaseInfo()
        } catch {
            return StoreVerifierError(
                .responseMismatch, "verifyReceipt answered status 0 with a receipt that does not type-check: \(error)",
                underlying: error
            ).asFailure
        }
        guard let info else {
            return StoreVerifierError(
                .responseMismatch, "verifyReceipt answered status 0 without a transaction receipt's purchase (`receipt`)"
            ).asFailure
        }
        return match(info, transaction: transaction, configuration: configuration, source: "verifyReceipt's receipt")
    }

    /// Statuses that mean Apple's server could not answer (not a verdict on the receipt).
    nonisolated static func isTemporary(_ response: VerifyReceiptResponse) -> Bool {
        if response.isRetryable == true { return true }
        let status = response.status.rawValue
        return status == 21005 || status == 21009 || (21100...21199).contains(status)
    }

    // MARK: - The purchase must be this transaction

    nonisolated static func match(
        _ info: PurchaseInfo, transaction: PaymentTransaction, configuration: Configuration, source: String
    ) -> VerificationResult {
        var mismatches: [String] = []
        if info.bundleIdentifier != configuration.bundleIdentifier {
            mismatches.append("bid \(quoted(info.bundleIdentifier)), expected \(quoted(configuration.bundleIdentifier))")
        }
        if let version = configuration.bundleVersion, info.bundleVersion != version {
            mismatches.append("bvrs \(quoted(info.bundleVersion)), expected \(quoted(version))")
        }
        if info.productIdentifier != transaction.productIdentifier {
            mismatches.append("product-id \(quoted(info.productIdentifier)), expected \(quoted(transaction.productIdentifier))")
        }
        let accepted = transaction.acceptedIdentifiers
        let named = [info.transactionIdentifier] + (transaction.state == .restored ? [info.originalTransactionIdentifier] : [])
        if !named.contains(where: { $0.map(accepted.contains) ?? false }) {
            mismatches.append(
                "transaction-id \(quoted(info.transactionIdentifier)), expected \(accepted.sorted().map { quoted($0) }.joined(separator: " or "))"
            )
        }
        guard mismatches.isEmpty else {
            return StoreVerifierError(
                .responseMismatch, "\(source) is for another purchase: \(mismatches.joined(separator: "; "))"
            ).asFailure
        }
        return .verified
    }
}
