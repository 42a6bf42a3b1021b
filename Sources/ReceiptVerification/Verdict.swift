public import Foundation
public import ReceiptCrypto
public import Receipts

/// The instant at which every certificate of a receipt's chain must be valid.
///
/// Always an explicit input of ``AppReceiptVerifier/verify(_:expecting:at:)-([UInt8],_,_)``; the
/// verifier never reads the clock unless asked to with ``now``.
public enum ValidationTime: Sendable, Hashable {
    /// The receipt's creation date (field 12). This is the documented default, as in Apple's own
    /// receipt verifier: Apple's receipt-signing certificates expire long before the receipts they
    /// signed stop mattering, so old receipts verify only at the date they were made.
    ///
    /// The date is read from the payload before the signature is checked and is chosen by whoever
    /// signed the receipt: verifying at it accepts certificates that have expired since. Use
    /// ``now`` or ``fixed(_:)`` when that is not acceptable. A receipt without a creation date
    /// fails the check ``ReceiptCheck/Name/validationTime``.
    case creationDate
    /// The system clock, read when verification runs (not when the verifier was created).
    case now
    /// A fixed instant, for example a trusted server's clock or a test's date.
    case fixed(Date)
}

/// What the receipt must say, beyond being validly signed. Every property left `nil` is not
/// checked and is listed in ``ReceiptVerdict/unchecked``.
public struct ReceiptExpectations: Sendable, Hashable {
    /// The app's bundle identifier (field 2), compared exactly.
    public var bundleIdentifier: String?
    /// The app version (field 3), compared exactly.
    public var appVersion: String?
    /// The device the receipt must be bound to: SHA-1(identifier ‖ opaque value ‖ bundle id) must
    /// equal field 5. A 16-byte vendor UUID (iOS) or a 6-byte MAC address (macOS).
    public var deviceIdentifier: DeviceIdentifier?
    /// The environments the receipt type (field 0) may name.
    public var allowedEnvironments: Set<ReceiptEnvironment>?
    /// The exact receipt type strings (field 0) allowed, for example `["Production", "ProductionVPP"]`.
    public var allowedReceiptTypes: Set<String>?
    /// When true (the default), a receipt with an expiration date (field 21) must not have expired
    /// at the validation time: the same instant the certificate chain is checked at.
    public var requireNotExpired: Bool

    /// Creates expectations; every argument defaults to "not checked" except ``requireNotExpired``.
    public init(
        bundleIdentifier: String? = nil, appVersion: String? = nil, deviceIdentifier: DeviceIdentifier? = nil,
        allowedEnvironments: Set<ReceiptEnvironment>? = nil, allowedReceiptTypes: Set<String>? = nil,
        requireNotExpired: Bool = true
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.appVersion = appVersion
        self.deviceIdentifier = deviceIdentifier
        self.allowedEnvironments = allowedEnvironments
        self.allowedReceiptTypes = allowedReceiptTypes
        self.requireNotExpired = requireNotExpired
    }

    /// Checks nothing about the receipt's content (only its expiration date, if it has one).
    public static let none = ReceiptExpectations()
}

/// One check the verifier performed, and its outcome.
public struct ReceiptCheck: Sendable, Hashable, CustomStringConvertible {
    /// The stable name of a check. Built-in names are listed below; chain policies add their own
    /// (``ChainPolicy/name``).
    public struct Name: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The name as text, for example `signature`.
        public let rawValue: String

        /// Wraps a name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The name as text.
        public var description: String { rawValue }

        /// The input is a PKCS#7 app receipt whose envelope and payload parse.
        public static let parse = Name(rawValue: "parse")
        /// The verifier has at least one trust anchor.
        public static let trustAnchors = Name(rawValue: "trustAnchors")
        /// The encapsulated content type is id-data (1.2.840.113549.1.7.1).
        public static let contentType = Name(rawValue: "contentType")
        /// The SignedData has exactly one SignerInfo.
        public static let signerCount = Name(rawValue: "signerCount")
        /// The SignerInfo's digest is known, not refused (MD5) and listed in SignedData.digestAlgorithms.
        public static let digestAlgorithm = Name(rawValue: "digestAlgorithm")
        /// Exactly one embedded certificate matches the signer identifier and parses.
        public static let signerCertificate = Name(rawValue: "signerCertificate")
        /// The signature algorithm is known and agrees with the key type and the digest.
        public static let signatureAlgorithm = Name(rawValue: "signatureAlgorithm")
        /// The signer's key is strong enough (RSA at least 2048 bits, EC at least 256).
        public static let signerKey = Name(rawValue: "signerKey")
        /// Signed attributes, when present, carry content type id-data and messageDigest = H(payload).
        public static let signedAttributes = Name(rawValue: "signedAttributes")
        /// The signature verifies with the signer's key over the payload (or the signed attributes).
        public static let signature = Name(rawValue: "signature")
        /// The validation time could be determined (a receipt creation date exists when asked for).
        public static let validationTime = Name(rawValue: "validationTime")
        /// The signer certificate chains to a trust anchor at the validation time (OpenSSL).
        public static let chain = Name(rawValue: "chain")
        /// The chain's last certificate is, byte for byte, one of the verifier's anchors.
        public static let pinnedAnchor = Name(rawValue: "pinnedAnchor")
        /// The chain has the length the policy requires.
        public static let chainLength = Name(rawValue: "chainLength")
        /// The leaf carries Apple's receipt-signing marker 1.2.840.113635.100.6.11.1.
        public static let leafMarker = Name(rawValue: "leafMarker")
        /// The intermediate carries Apple's WWDR marker 1.2.840.113635.100.6.2.1.
        public static let intermediateMarker = Name(rawValue: "intermediateMarker")
        /// Field 2 equals the expected bundle identifier.
        public static let bundleIdentifier = Name(rawValue: "bundleIdentifier")
        /// Field 3 equals the expected app version.
        public static let appVersion = Name(rawValue: "appVersion")
        /// Field 5 equals SHA-1(device identifier ‖ opaque value ‖ bundle identifier data).
        public static let deviceHash = Name(rawValue: "deviceHash")
        /// The receipt type's environment is allowed.
        public static let environment = Name(rawValue: "environment")
        /// The receipt type string is allowed.
        public static let receiptType = Name(rawValue: "receiptType")
        /// The receipt has not expired (field 21) at the validation time.
        public static let expirationDate = Name(rawValue: "expirationDate")
    }

    /// Which check this is.
    public let name: Name
    /// Whether it passed.
    public let passed: Bool
    /// Why it passed or failed, for people.
    public let reason: String

    /// Creates a check outcome.
    public init(name: Name, passed: Bool, reason: String) {
        self.name = name
        self.passed = passed
        self.reason = reason
    }

    /// `"✓ name: reason"` or `"✗ name: reason"`.
    public var description: String { "\(passed ? "✓" : "✗") \(name): \(reason)" }
}

/// The outcome of verifying one receipt: every check that ran, with its reason, the parsed receipt
/// and the validated chain. Never a bare Bool, never a throw.
public struct ReceiptVerdict: Sendable, CustomStringConvertible {
    /// True only when every check passed and every check the configuration requires ran.
    public let isValid: Bool
    /// The checks in the order they ran. A check that could not run because an earlier one failed
    /// (for example the signature when no signer certificate was found) is absent; the verdict is
    /// then invalid anyway.
    public let checks: [ReceiptCheck]
    /// Expectations that were not requested (for example ``ReceiptCheck/Name/bundleIdentifier``
    /// when no bundle identifier was given), so callers can see what a valid verdict did not cover.
    public let unchecked: [ReceiptCheck.Name]
    /// The receipt parsed from the signed payload, when parsing succeeded. Its fields are
    /// trustworthy only when ``isValid`` is true.
    public let receipt: AppReceipt?
    /// The validated chain, leaf first and anchor last, when the chain check passed.
    public let chain: [Certificate]?
    /// The instant the chain was validated at, when it could be determined.
    public let validationTime: Date?

    init(
        checks: [ReceiptCheck], required: [ReceiptCheck.Name], unchecked: [ReceiptCheck.Name], receipt: AppReceipt?,
        chain: [Certificate]?, validationTime: Date?
    ) {
        self.checks = checks
        self.unchecked = unchecked
        self.receipt = receipt
        self.chain = chain
        self.validationTime = validationTime
        // Every check passed, and every required check is among them (a linear scan: both lists
        // hold about twenty names, and this runs for every receipt).
        isValid =
            !checks.isEmpty && checks.allSatisfy(\.passed)
            && required.allSatisfy { name in checks.contains { $0.name == name } }
    }

    /// The checks that failed, in order.
    public var failures: [ReceiptCheck] { checks.filter { !$0.passed } }

    /// The first check that failed, if any.
    public var firstFailure: ReceiptCheck? { checks.first { !$0.passed } }

    /// The outcome of the check named `name`, if it ran.
    public func check(_ name: ReceiptCheck.Name) -> ReceiptCheck? { checks.first { $0.name == name } }

    /// `valid` or `invalid`, then one line per check.
    public var description: String {
        ([isValid ? "valid" : "invalid"] + checks.map { "  \($0)" }).joined(separator: "\n")
    }
}
