import Foundation
import JSON
import ReceiptCrypto
import ReceiptVerification
import Receipts

extension VerifyCommand {
    /// How `verify` checks legacy iOS 6 transaction receipts: the pinned iTunes Store CA (bundled
    /// unless --itunes-ca), the same anchors as app receipts, and the expectations mapped onto
    /// `bid` (--bundle-id), `bvrs` (--app-version), `product-id` (--product-id) and the environment.
    struct LegacyVerification: Sendable {
        let verifier: TransactionReceiptVerifier
        let expectations: TransactionReceiptExpectations
        /// The expectation options given, to refuse those that do not apply to transaction receipts.
        let options: ExpectationOptions

        init(settings: VerificationSettings, arguments: Arguments) throws(ToolFailure) {
            verifier = try settings.transactionReceiptVerifier()
            expectations = settings.transactionReceiptExpectations
            options = ExpectationOptions(arguments)
        }

        func verify(_ label: String, _ bytes: [UInt8], time: ValidationTime, json: Bool) -> Outcome {
            let verdict = options.refusing(verifier.verify(bytes, expecting: expectations, at: time), as: .transactionReceipt)
            let status: Status = verdict.isValid ? .valid : (verdict.receipt == nil ? .unreadable : .invalid)
            return Outcome(status: status, output: json ? jsonLine(label, status, verdict) : text(label, status, verdict))
        }

        func text(_ label: String, _ status: Status, _ verdict: Verdict<TransactionReceipt>) -> String {
            var detail = "transaction receipt"
            if let version = verdict.receipt.flatMap({ try? $0.signature().version }) { detail += ", signature version \(version)" }
            return VerdictReport.text(label, status, verdict, detail: detail)
        }

        func jsonLine(_ label: String, _ status: Status, _ verdict: Verdict<TransactionReceipt>) -> String {
            VerdictReport.json(label, status, verdict, kind: "transaction_receipt") { writer in
                if let info = verdict.receipt?.purchaseInfo {
                    if let id = info.transactionIdentifier { writer.string("transaction_id", id) }
                    if let product = info.productIdentifier { writer.string("product_id", product) }
                    if let bid = info.bundleIdentifier { writer.string("bid", bid) }
                    if let bvrs = info.bundleVersion { writer.string("bvrs", bvrs) }
                    if let date = info.purchaseDate { writer.string("purchase_date", ReceiptDate.rfc3339(date)) }
                }
            }
        }
    }
}
