import JWS
import ReceiptVerification

/// The expectation options of `verify` given on the command line, and which kinds of input each
/// applies to. An option that does not apply to an input's kind is refused: the input fails the
/// check `notApplicable`, whose reason names the option (never a silent VALID).
struct ExpectationOptions: Sendable {
    /// A kind of input, as far as expectations go.
    enum InputKind: Sendable {
        /// An App Store receipt.
        case appReceipt
        /// A legacy iOS 6 transaction receipt.
        case transactionReceipt
        /// StoreKit 2 signed data of the payload type named, carrying these claims.
        case signedData(name: String, carries: Set<AppStoreClaims.Kind>)

        /// `an app receipt`, `a transaction receipt`, `a JWS renewal info`.
        var described: String {
            switch self {
            case .appReceipt: "an app receipt"
            case .transactionReceipt: "a transaction receipt"
            case .signedData(let name, _): "a JWS \(name)"
            }
        }
    }

    /// An expectation option and where it applies.
    struct Option: Sendable {
        let name: String
        let appReceipt: Bool
        let transactionReceipt: Bool
        /// The claim a JWS must carry for it to apply; nil when it never applies to a JWS (and
        /// `anyJWS` false), or when it applies to every JWS (`anyJWS` true).
        let claim: AppStoreClaims.Kind?
        let anyJWS: Bool
        /// Where it applies, for the reason.
        let appliesTo: String

        func applies(to kind: InputKind) -> Bool {
            switch kind {
            case .appReceipt: appReceipt
            case .transactionReceipt: transactionReceipt
            case .signedData(_, let carried): anyJWS || claim.map { carried.contains($0) } ?? false
            }
        }
    }

    /// Every expectation option of `verify`.
    static let all: [Option] = [
        Option(
            name: "--bundle-id", appReceipt: true, transactionReceipt: true, claim: .bundleIdentifier, anyJWS: false,
            appliesTo: "receipts and signed data that carry a bundleId"),
        Option(
            name: "--app-version", appReceipt: true, transactionReceipt: true, claim: nil, anyJWS: false,
            appliesTo: "app receipts and transaction receipts"),
        Option(name: "--device-id", appReceipt: true, transactionReceipt: false, claim: nil, anyJWS: false, appliesTo: "app receipts"),
        Option(
            name: "--environment", appReceipt: true, transactionReceipt: true, claim: .environment, anyJWS: false,
            appliesTo: "every input that names its environment"),
        Option(
            name: "--product-id", appReceipt: false, transactionReceipt: true, claim: nil, anyJWS: false, appliesTo: "transaction receipts"),
        Option(
            name: "--app-apple-id", appReceipt: false, transactionReceipt: false, claim: .appAppleId, anyJWS: false,
            appliesTo: "app transactions and notifications"),
        Option(name: "--max-age", appReceipt: false, transactionReceipt: false, claim: nil, anyJWS: true, appliesTo: "signed data"),
        Option(
            name: "--device-verification-id", appReceipt: false, transactionReceipt: false, claim: .deviceVerification, anyJWS: false,
            appliesTo: "JWS transactions, renewal info and app transactions"),
        Option(
            name: "--app-account-token", appReceipt: false, transactionReceipt: false, claim: .appAccountToken, anyJWS: false,
            appliesTo: "JWS transactions and renewal info"),
    ]

    /// The options given, in the order of ``all``.
    let given: [Option]

    init(_ args: Arguments) {
        given = Self.all.filter { !args.values($0.name).isEmpty }
    }

    /// One failed `notApplicable` check per option given that does not apply to `kind`.
    func refusals(for kind: InputKind) -> [VerificationCheck] {
        given.filter { !$0.applies(to: kind) }.map { option in
            VerificationCheck(
                name: .notApplicable, passed: false,
                reason: "\(option.name) does not apply to \(kind.described) (it checks \(option.appliesTo))")
        }
    }

    /// `verdict` with the refusals for `kind` appended, when its payload was read (an input that
    /// is not of the kind fails its parse check instead).
    func refusing<Payload>(_ verdict: Verdict<Payload>, as kind: InputKind) -> Verdict<Payload> {
        guard verdict.payload != nil else { return verdict }
        let refused = refusals(for: kind)
        return refused.isEmpty ? verdict : verdict.appending(refused)
    }
}
