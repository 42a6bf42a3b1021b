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
        let verifier: LegacyReceiptVerifier
        let expectations: TransactionReceiptExpectations

        init(arguments: Arguments, anchors: TrustAnchors, expectations app: ReceiptExpectations) throws(ToolFailure) {
            let intermediate = try iTunesStoreCA(arguments)
            verifier = LegacyReceiptVerifier(intermediate: intermediate, anchors: anchors)
            let products = arguments.values("--product-id")
            expectations = TransactionReceiptExpectations(
                bundleIdentifier: app.bundleIdentifier, bundleVersion: app.appVersion,
                productIdentifiers: products.isEmpty ? nil : Set(products), allowedEnvironments: app.allowedEnvironments)
        }

        func verify(_ label: String, _ bytes: [UInt8], time: ValidationTime, json: Bool) -> Outcome {
            let verdict = verifier.verify(bytes, expecting: expectations, at: time)
            let status: Status = verdict.isValid ? .valid : (verdict.receipt == nil ? .unreadable : .invalid)
            return Outcome(status: status, output: json ? jsonLine(label, status, verdict) : text(label, status, verdict))
        }

        func text(_ label: String, _ status: Status, _ verdict: TransactionReceiptVerdict) -> String {
            var heading = "\(label): \(status.rawValue.uppercased()) (transaction receipt"
            if let version = verdict.signatureVersion { heading += ", signature version \(version)" }
            if verdict.assurance == .unconfirmed { heading += ", unconfirmed layout" }
            heading += ")"
            if let time = verdict.validationTime { heading += " (validated at \(ReceiptDate.rfc3339(time)))" }
            var lines = [heading]
            for check in verdict.checks {
                lines.append(
                    "  \(check.passed ? "✓" : "✗") \(check.name.rawValue.padding(toLength: 22, withPad: " ", startingAt: 0)) \(check.reason)"
                )
            }
            if !verdict.unchecked.isEmpty, verdict.receipt != nil {
                lines.append("  · not checked: " + verdict.unchecked.map(\.rawValue).joined(separator: ", "))
            }
            return lines.joined(separator: "\n")
        }

        func jsonLine(_ label: String, _ status: Status, _ verdict: TransactionReceiptVerdict) -> String {
            var writer = JSONWriter(indent: 0)
            writer.beginObject()
            writer.string("input", label)
            writer.string("kind", "transaction_receipt")
            writer.string("status", status.rawValue)
            writer.bool("valid", verdict.isValid)
            writer.string("assurance", verdict.assurance.description)
            if let time = verdict.validationTime { writer.string("validation_time", ReceiptDate.rfc3339(time)) }
            if let info = verdict.receipt?.purchaseInfo {
                if let id = info.transactionIdentifier { writer.string("transaction_id", id) }
                if let product = info.productIdentifier { writer.string("product_id", product) }
                if let bid = info.bundleIdentifier { writer.string("bid", bid) }
                if let bvrs = info.bundleVersion { writer.string("bvrs", bvrs) }
                if let date = info.purchaseDate { writer.string("purchase_date", ReceiptDate.rfc3339(date)) }
            }
            VerifyCommand.writeChecks(verdict.checks, unchecked: verdict.unchecked, chain: verdict.chain, to: &writer)
            writer.endObject()
            return writer.text
        }
    }
}
