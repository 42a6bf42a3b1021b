public import Foundation
public import ReceiptCrypto

/// The instant at which every certificate of a signed input's chain must be valid.
///
/// Always an explicit input of a verifier; no verifier reads the clock unless asked to with
/// ``now`` or ``clock(_:)``.
public enum ValidationTime: Sendable, CustomStringConvertible {
    /// The date the input says it was signed, as Apple's own offline verifiers do:
    ///
    /// - an app receipt: its creation date (field 12);
    /// - an iOS 6 transaction receipt: its purchase date (`purchase-date-ms`);
    /// - a JWS: its `signedDate` (an app transaction: its `receiptCreationDate`).
    ///
    /// Apple's signing certificates expire long before what they signed stops mattering, so old
    /// inputs verify only at the date they were made. The risk: the date is read from the payload
    /// before the signature is checked, and whoever signed chooses it, so verifying at it accepts
    /// certificates that have expired (or been retired) since. Use ``now``, ``fixed(_:)`` or
    /// ``clock(_:)`` when that is not acceptable. An input without such a date fails the check
    /// ``VerificationCheck/Name/validationTime``.
    case signedDate
    /// The system clock, read when verification runs (not when the verifier was created).
    case now
    /// A fixed instant, for example a trusted server's clock or a test's date.
    case fixed(Date)
    /// The time `clock` returns when verification runs (for example a server-synchronised clock).
    case clock(@Sendable () -> Date)

    /// `signed date`, `now`, `fixed <date>` or `clock`.
    public var description: String {
        switch self {
        case .signedDate: "signed date"
        case .now: "now"
        case .fixed(let date): "fixed \(date.timeIntervalSince1970)"
        case .clock: "clock"
        }
    }
}

/// One check a verifier performed, and its outcome.
///
/// Every signed format reports under the names of ``Name``: one namespace, so a check means the
/// same thing whatever was verified. The reason is written only when it is read.
public struct VerificationCheck: Sendable, CustomStringConvertible {
    /// The stable name of a check. The names every format shares are declared here; each format
    /// declares its own beside it (`PKCS7/`, `AppReceipt/`, `TransactionReceipt/`, `JWS/`,
    /// `Revocation/`, each in a `CheckNames+….swift`), client modules theirs (RMStoreVerifiers,
    /// ServerNotifications), and chain policies may add their own (``ChainPolicy/name``).
    public struct Name: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The name as text, for example `signature`.
        public let rawValue: String
        /// A number for each built-in name (0 for names made from text), so that comparing two
        /// built-in names compares two bytes, not two strings: a verdict compares its checks with
        /// its required names on every verification.
        let id: UInt8

        /// Wraps a name.
        public init(rawValue: String) {
            self.rawValue = rawValue
            id = 0
        }

        /// A built-in name. Numbers in use: 1–10, 14, 16, 21 and 26 (here), 11–13, 15 and 17
        /// (PKCS#7), 18–20, 23 and 24 (transaction receipts), 22, 25, 27 and 28 (app receipts),
        /// 29–38, 53 and 56 and 59 (JWS), 43 (revocation), 52 (``notApplicable``), 57 and 58
        /// (certificate profile); names declared outside this module have none.
        init(rawValue: String, id: UInt8) {
            self.rawValue = rawValue
            self.id = id
        }

        /// Names are equal when their text is.
        public static func == (lhs: Name, rhs: Name) -> Bool {
            if lhs.id != 0 && rhs.id != 0 { return lhs.id == rhs.id }
            return lhs.rawValue == rhs.rawValue
        }

        /// Hashes the text, consistently with `==`.
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

        /// The name as text.
        public var description: String { rawValue }

        // MARK: Every format

        /// The input parses as the format the verifier reads.
        public static let parse = Name(rawValue: "parse", id: 1)
        /// The verifier has at least one trust anchor.
        public static let trustAnchors = Name(rawValue: "trustAnchors", id: 2)
        /// The signature verifies with the signer's key over exactly the bytes that were parsed.
        public static let signature = Name(rawValue: "signature", id: 3)
        /// The validation time could be determined (the input has the signed date asked for).
        public static let validationTime = Name(rawValue: "validationTime", id: 4)
        /// The signer certificate chains to a trust anchor at the validation time (OpenSSL).
        public static let chain = Name(rawValue: "chain", id: 5)
        /// The chain's last certificate is, byte for byte, one of the verifier's anchors.
        public static let pinnedAnchor = Name(rawValue: "pinnedAnchor", id: 6)

        // MARK: Chain policies

        /// The chain has the length the policy requires.
        public static let chainLength = Name(rawValue: "chainLength", id: 7)
        /// The leaf carries the marker extension the policy requires (App Store receipts, version-3
        /// transaction receipts and JWS: 1.2.840.113635.100.6.11.1; version-2 transaction
        /// receipts: 1.2.840.113635.100.6.5.1).
        public static let leafMarker = Name(rawValue: "leafMarker", id: 8)
        /// The intermediate carries Apple's WWDR marker 1.2.840.113635.100.6.2.1.
        public static let intermediateMarker = Name(rawValue: "intermediateMarker", id: 9)
        /// The chain's intermediate is, byte for byte, the certificate the policy pins.
        public static let pinnedIntermediate = Name(rawValue: "pinnedIntermediate", id: 10)

        // MARK: Signers and expectations shared by several formats

        /// Exactly one embedded certificate matches the signer identifier and parses.
        public static let signerCertificate = Name(rawValue: "signerCertificate", id: 14)
        /// The signer's key is strong enough (RSA at least 2048 bits, EC at least 256).
        public static let signerKey = Name(rawValue: "signerKey", id: 16)
        /// The bundle identifier equals the expected one (app receipt field 2, `bid`).
        public static let bundleIdentifier = Name(rawValue: "bundleIdentifier", id: 21)
        /// The environment is allowed.
        public static let environment = Name(rawValue: "environment", id: 26)
    }

    /// Which check this is.
    public let name: Name
    /// Whether it passed.
    public let passed: Bool
    private let explanation: Explanation

    /// A reason already written (kept as it is: no closure to allocate), one of the machinery's
    /// common reasons with its values (written when read, nothing allocated now) or one to write
    /// when read.
    private enum Explanation: Sendable {
        case written(String)
        case template(CheckReason)
        case deferred(@Sendable () -> String)
        case revocation(RevocationReport)
    }

    /// What a ``Name/revocation`` check asked and found (per certificate: status, responder,
    /// retryable), when it checked certificates by OCSP.
    public var revocationReport: RevocationReport? {
        if case .revocation(let report) = explanation { return report }
        return nil
    }

    /// A ``Name/revocation`` check with its report.
    init(revocation report: RevocationReport) {
        name = .revocation
        passed = report.passed
        explanation = .revocation(report)
    }

    /// Why it passed or failed, for people (written when read).
    public var reason: String {
        switch explanation {
        case .written(let text): text
        case .template(let reason): reason.text
        case .deferred(let write): write()
        case .revocation(let report): report.description
        }
    }

    /// Creates a check outcome whose reason is written only when read.
    public init(name: Name, passed: Bool, reason: @escaping @Sendable () -> String) {
        self.name = name
        self.passed = passed
        explanation = .deferred(reason)
    }

    /// Creates a check outcome with a reason already written.
    public init(name: Name, passed: Bool, reason: String) {
        self.name = name
        self.passed = passed
        explanation = .written(reason)
    }

    /// Creates a check outcome whose reason is one of the machinery's common reasons, written when
    /// read.
    init(name: Name, passed: Bool, template: CheckReason) {
        self.name = name
        self.passed = passed
        explanation = .template(template)
    }

    /// `"✓ name: reason"` or `"✗ name: reason"`.
    public var description: String { "\(passed ? "✓" : "✗") \(name): \(reason)" }
}

/// The reasons the machinery writes on every verification, kept as their values until read: a
/// reason made from a closure that captures values allocates the closure's context, this does not.
enum CheckReason: Sendable {
    /// `"<prefix> <RFC 3339 date>"`, for example `the receipt creation date 2013-08-01T07:00:00Z`.
    case dated(String, Date)
    /// `"met (<policy> policy)"`.
    case policyMet(String)
    /// `"embedded certificate #<index>: <label>"`.
    case embeddedCertificate(Int, SignerCertificate)
    /// The chain's summary (`"valid: <common names>"`), with ` (cached)` when served from the cache.
    case chain(RenderedOnce<String>, cached: Bool)
    /// `"ends at the configured anchor <subject>"`, the anchor given by its index.
    case pinnedAnchor(RenderedOnce<[String]>, Int)
    /// The algorithm's name.
    case algorithm(SignatureAlgorithm)
    /// `"RSA <bits> bits"`.
    case rsaKey(Int)
    /// The outcome of a signature check over the payload of the given size (nil: over the signed
    /// attributes).
    case signature(DigestAlgorithm, verified: Bool, payloadSize: Int?)

    /// The reason as text.
    var text: String {
        switch self {
        case .dated(let prefix, let date): "\(prefix) \(VerificationText.rfc3339(date))"
        case .policyMet(let policy): "met (\(policy) policy)"
        case .embeddedCertificate(let index, let signer): "embedded certificate #\(index): \(signer.label)"
        case .chain(let summary, let cached): summary.value + (cached ? " (cached)" : "")
        case .pinnedAnchor(let subjects, let index):
            "ends at the configured anchor \(subjects.value.indices.contains(index) ? subjects.value[index] : "#\(index)")"
        case .algorithm(let algorithm): "\(algorithm)"
        case .rsaKey(let bits): "RSA \(bits) bits"
        case .signature(let digest, let verified, let payloadSize):
            {
                let over = payloadSize.map { "the \($0)-byte payload" } ?? "the signed attributes"
                return verified
                    ? "\(digest) signature over \(over) verified with the signer's key"
                    : "the signature over \(over) does not verify with the signer's key (\(digest))"
            }()
        }
    }
}

/// How a verified signature was made: its algorithm and, for formats that version their signature
/// layout (iOS 6 transaction receipts), the version.
public struct SignatureSummary: Sendable, Hashable, CustomStringConvertible {
    /// The algorithm the signature verified under.
    public let algorithm: SignatureAlgorithm
    /// The layout version of the signature blob, for formats that have one.
    public let layoutVersion: Int?

    /// Creates a summary.
    public init(algorithm: SignatureAlgorithm, layoutVersion: Int? = nil) {
        self.algorithm = algorithm
        self.layoutVersion = layoutVersion
    }

    /// For example `sha256WithRSAEncryption` or `ecdsa-with-SHA256 (version 3)`.
    public var description: String { "\(algorithm)" + (layoutVersion.map { " (version \($0))" } ?? "") }
}

/// What a valid verdict can be trusted to mean, from the anchor the chain ended at and the policy
/// it met.
public enum VerificationAssurance: String, Sendable, Hashable, CustomStringConvertible {
    /// Signed by Apple: the chain ends at one of Apple's public roots (Apple Inc. Root, G2, G3,
    /// recognised by their pinned SHA-256) under a policy that is not a testing one.
    case apple
    /// Signed for StoreKit testing (the ``VerificationPolicy/xcode`` policy): proves nothing about
    /// a real purchase.
    case storeKitTesting
    /// Signed under an anchor the caller configured that is not one of Apple's roots (for example
    /// a test PKI).
    case configuredAnchor

    /// `apple`, `storeKitTesting` or `configuredAnchor`.
    public var description: String { rawValue }
}

/// The outcome of verifying one signed input of any format: every check that ran, with its
/// reason, the parsed payload, the validated chain and the time it was validated at. Never a bare
/// Bool, never a throw.
///
/// One shape for every format: app receipts give `Verdict<AppReceipt>`, iOS 6 transaction
/// receipts `Verdict<TransactionReceipt>`.
public struct Verdict<Payload: Sendable>: Sendable, CustomStringConvertible {
    /// True only when every check passed and every check the configuration requires ran.
    public let isValid: Bool
    /// The checks in the order they ran. A check that could not run because an earlier one failed
    /// (for example the signature when no signer certificate was found) is absent; the verdict is
    /// then invalid anyway.
    public let checks: [VerificationCheck]
    /// Expectations that were not requested (for example ``VerificationCheck/Name/bundleIdentifier``
    /// when no bundle identifier was given), so callers can see what a valid verdict did not cover.
    public let unchecked: [VerificationCheck.Name]
    /// The payload parsed from exactly the signed bytes, when parsing succeeded. Its fields are
    /// trustworthy only when ``isValid`` is true.
    public let payload: Payload?
    /// The validated chain, leaf first and anchor last, when the chain check passed.
    public let chain: [Certificate]?
    /// The instant the chain was validated at, when it could be determined.
    public let validationTime: Date?
    /// The validation time that was asked for (``ValidationTime/signedDate`` names the format's
    /// own date, which ``validationTime`` then holds).
    public let requestedTime: ValidationTime
    /// The signature's algorithm, when the signature verified.
    public let signature: SignatureSummary?
    /// What the verdict means when it is valid; nil when it is not.
    public let assurance: VerificationAssurance?
    /// The tokens nested in the payload (a notification's signed transaction, renewal info, app
    /// transaction), verified with it and typed; empty unless the verdict is valid.
    public let nested: VerifiedNestedTokens

    /// Assembles a verdict; `isValid` is derived here and nowhere else.
    ///
    /// The required names are `required` and `requiredPolicies` (a policy's names, passed apart
    /// so that no list is built per verification).
    init(
        checks: [VerificationCheck], required: [VerificationCheck.Name], requiredPolicies: [VerificationCheck.Name] = [],
        unchecked: [VerificationCheck.Name], payload: Payload?, chain: [Certificate]?, validationTime: Date?,
        requestedTime: ValidationTime, signature: SignatureSummary?, assurance: VerificationAssurance?,
        nested: VerifiedNestedTokens = .none
    ) {
        self.checks = checks
        self.unchecked = unchecked
        self.payload = payload
        self.validationTime = validationTime
        self.requestedTime = requestedTime
        // One pass over the checks: whether all passed, and a bit per built-in name that ran (and
        // one per built-in name that passed). A name made from text (number 0) equals a built-in
        // name with the same text, so a required name whose bit is not set is looked for by `==`
        // among the checks (only when some check has such a name).
        var allPassed = !checks.isEmpty
        var ran: UInt64 = 0
        var passed: UInt64 = 0
        var textNames = false
        for check in checks {
            let id = check.name.id
            if !check.passed { allPassed = false }
            if id == 0 || id >= 64 {
                textNames = true
            } else {
                ran |= 1 << UInt64(id)
                if check.passed { passed |= 1 << UInt64(id) }
            }
        }
        func didRun(_ name: VerificationCheck.Name) -> Bool {
            let id = name.id
            if id != 0, id < 64, ran & (1 << UInt64(id)) != 0 { return true }
            return (textNames || id == 0 || id >= 64) && checks.contains { $0.name == name }
        }
        func didPass(_ name: VerificationCheck.Name) -> Bool {
            let id = name.id
            if id != 0, id < 64, passed & (1 << UInt64(id)) != 0 { return true }
            return (textNames || id == 0 || id >= 64) && checks.contains { $0.name == name && $0.passed }
        }
        // Every check passed, and every required check is among them.
        let valid =
            allPassed && required.allSatisfy(didRun)
            && requiredPolicies.allSatisfy(didRun)
        isValid = valid
        self.chain = didPass(.chain) ? chain : nil
        self.signature = didPass(.signature) ? signature : nil
        self.assurance = valid ? assurance : nil
        self.nested = valid ? nested : .none
    }

    /// The checks that failed, in order.
    public var failures: [VerificationCheck] { checks.filter { !$0.passed } }

    /// The first check that failed, if any.
    public var firstFailure: VerificationCheck? { checks.first { !$0.passed } }

    /// The outcome of the check named `name`, if it ran.
    public func check(_ name: VerificationCheck.Name) -> VerificationCheck? { checks.first { $0.name == name } }

    /// `valid` or `invalid`, then one line per check.
    public var description: String {
        ([isValid ? "valid" : "invalid"] + checks.map { "  \($0)" }).joined(separator: "\n")
    }
}
