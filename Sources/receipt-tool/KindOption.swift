import JSON
import JWS
import ReceiptVerification

/// `--kind` of `verify` and `dump`: what the input must be, instead of what its shape and members
/// suggest. A JWS kind makes the input go to that kind's verifier (whose `kind` check fails a
/// token of another kind); `receipt` and `transaction-receipt` make the input go to that receipt
/// verifier. An input that is not of the family asked for (signed data where a receipt was asked
/// for, or the reverse) fails with the check `kind` without being verified.
enum ForcedKind: String, Sendable, CaseIterable {
    case receipt
    case transactionReceipt = "transaction-receipt"
    case transaction
    case renewal
    case appTransaction = "app-transaction"
    case notification

    /// The values, for messages: `receipt, transaction-receipt, …`.
    static let names = allCases.map(\.rawValue).joined(separator: ", ")

    /// `--kind`, or nil when it is not given.
    static func parse(_ args: Arguments) throws(UsageError) -> ForcedKind? {
        guard let text = args.value("--kind") else { return nil }
        guard let kind = ForcedKind(rawValue: text.lowercased()) else {
            throw UsageError("--kind '\(text)' is not one of \(names)")
        }
        return kind
    }

    /// The App Store payload kind of a JWS kind; nil for the receipt kinds.
    var payloadKind: AppStorePayloadKind? {
        switch self {
        case .transaction: .transaction
        case .renewal: .renewalInfo
        case .appTransaction: .appTransaction
        case .notification: .notification
        case .receipt, .transactionReceipt: nil
        }
    }

    /// `an app receipt`, `a transaction`, …
    var described: String {
        switch self {
        case .receipt: "an app receipt"
        case .transactionReceipt: "an iOS 6 transaction receipt"
        case .transaction, .renewal, .appTransaction, .notification: payloadKind?.withArticle ?? rawValue
        }
    }

    /// The family of a detected input: `receipt`, `transaction-receipt`, or for signed data the
    /// JWS kind its members name (nil when they name none `--kind` offers).
    static func family(of input: SignedInput) -> ForcedKind? {
        switch input {
        case .appReceipt: .receipt
        case .transactionReceipt: .transactionReceipt
        case .signedData(_, let kind): allCases.first { $0.payloadKind == kind }
        }
    }

    /// The outcome of an input of another family than the one asked for: invalid, with one failed
    /// check `kind` (text: the verdict layout; JSON: the verdict object's shape).
    func mismatch(_ label: String, found: String, json: Bool) -> VerifyCommand.Outcome {
        let reason = "the input is \(found), not \(described) (--kind \(rawValue))"
        if json {
            var writer = JSONWriter(indent: 0)
            writer.beginObject()
            writer.string("input", label)
            writer.string("kind", rawValue)
            writer.string("status", VerifyCommand.Status.invalid.rawValue)
            writer.bool("valid", false)
            writer.beginArray("checks")
            writer.beginObject()
            writer.string("name", "kind")
            writer.bool("passed", false)
            writer.string("reason", reason)
            writer.endObject()
            writer.endArray()
            writer.beginArray("unchecked")
            writer.endArray()
            writer.endObject()
            return VerifyCommand.Outcome(status: .invalid, output: writer.text, signedData: payloadKind != nil)
        }
        let name = "kind" + String(repeating: " ", count: 16)
        return VerifyCommand.Outcome(
            status: .invalid, output: "\(label): INVALID (\(rawValue))\n  ✗ \(name) \(reason)", signedData: payloadKind != nil)
    }
}
