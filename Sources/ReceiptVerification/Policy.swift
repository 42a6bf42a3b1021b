public import ASN1
public import ReceiptCrypto
public import Receipts

/// The outcome of one ``ChainPolicy``.
public enum PolicyResult: Sendable, Hashable {
    /// The chain meets the policy.
    case meets
    /// The chain does not meet the policy, for this reason.
    case fails(String)

    /// Whether the result is ``meets``.
    public var isMet: Bool { self == .meets }
}

/// A rule about a validated chain (and, if it needs to, the receipt it signed).
///
/// Policies run only after OpenSSL has validated the chain to a pinned anchor, on the chain it
/// returned (leaf first, anchor last). They are small values, AND-composed in order: the verifier
/// evaluates ``ReceiptPolicy/chainPolicies`` one after another, records each as a check named
/// ``name``, and stops at the first failure. Implementations must be pure functions of their
/// arguments: no clock, no I/O.
public protocol ChainPolicy: Sendable {
    /// The stable check name this policy reports under (for example `chainLength`).
    var name: ReceiptCheck.Name { get }
    /// Evaluates the policy.
    func evaluate(chain: [Certificate], receipt: AppReceipt) -> PolicyResult
}

/// The chain has exactly ``length`` certificates (leaf and anchor included).
public struct ChainLengthPolicy: ChainPolicy {
    /// The required number of certificates.
    public let length: Int

    /// Requires exactly `length` certificates.
    public init(exactly length: Int) { self.length = length }

    /// ``ReceiptCheck/Name/chainLength``.
    public var name: ReceiptCheck.Name { .chainLength }

    /// Compares the chain's length.
    public func evaluate(chain: [Certificate], receipt: AppReceipt) -> PolicyResult {
        chain.count == length
            ? .meets : .fails("the chain has \(chain.count) certificate\(chain.count == 1 ? "" : "s"), the policy requires \(length)")
    }
}

/// A position in a validated chain.
public enum ChainPosition: Sendable, Hashable, CustomStringConvertible {
    /// The signer certificate (index 0).
    case leaf
    /// The certificate directly above the leaf (index 1), for Apple the WWDR intermediate.
    case intermediate
    /// The last certificate (the anchor).
    case anchor
    /// Any index, counted from the leaf (0).
    case index(Int)

    func index(in chain: [Certificate]) -> Int? {
        let index: Int
        switch self {
        case .leaf: index = 0
        case .intermediate: index = 1
        case .anchor: index = chain.count - 1
        case .index(let value): index = value
        }
        return chain.indices.contains(index) ? index : nil
    }

    /// `leaf`, `intermediate`, `anchor` or `certificate #n`.
    public var description: String {
        switch self {
        case .leaf: "leaf"
        case .intermediate: "intermediate"
        case .anchor: "anchor"
        case .index(let value): "certificate #\(value)"
        }
    }
}

/// The certificate at ``position`` carries an extension with the OID ``oid`` (Apple marks its
/// receipt-signing leaves and WWDR intermediates with such extensions).
public struct CertificateExtensionPolicy: ChainPolicy {
    /// The check name.
    public let name: ReceiptCheck.Name
    /// Which certificate must carry the extension.
    public let position: ChainPosition
    /// The OID of the extension.
    public let oid: ASN1ObjectIdentifier

    /// Requires the extension `oid` on the certificate at `position`, reported as `name`.
    public init(name: ReceiptCheck.Name, position: ChainPosition, oid: ASN1ObjectIdentifier) {
        self.name = name
        self.position = position
        self.oid = oid
    }

    /// Apple's receipt-signing leaf marker, 1.2.840.113635.100.6.11.1, on the leaf.
    public static let appleReceiptSigningLeaf = CertificateExtensionPolicy(
        name: .leafMarker, position: .leaf, oid: ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 11, 1))
    /// Apple's WWDR intermediate marker, 1.2.840.113635.100.6.2.1, on the intermediate.
    public static let appleWWDRIntermediate = CertificateExtensionPolicy(
        name: .intermediateMarker, position: .intermediate, oid: ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 2, 1))

    /// Looks the extension up.
    public func evaluate(chain: [Certificate], receipt: AppReceipt) -> PolicyResult {
        guard let index = position.index(in: chain) else {
            return .fails("the chain of \(chain.count) has no \(position)")
        }
        let certificate = chain[index]
        return certificate.hasExtension(oid: oid)
            ? .meets : .fails("the \(position) (\(certificate.subject)) lacks the extension \(oid)")
    }
}

/// Several policies as one: AND in order, stopping at the first failure, reported under one name.
public struct AllOfPolicies: ChainPolicy {
    /// The check name.
    public let name: ReceiptCheck.Name
    /// The policies, evaluated in order.
    public let policies: [any ChainPolicy]

    /// Combines `policies` under `name`.
    public init(name: ReceiptCheck.Name, _ policies: [any ChainPolicy]) {
        self.name = name
        self.policies = policies
    }

    /// The first failure (prefixed with the failing policy's name), or ``PolicyResult/meets``.
    public func evaluate(chain: [Certificate], receipt: AppReceipt) -> PolicyResult {
        for policy in policies {
            if case .fails(let reason) = policy.evaluate(chain: chain, receipt: receipt) {
                return .fails("\(policy.name): \(reason)")
            }
        }
        return .meets
    }
}

/// Everything a verifier enforces besides its anchors: the chain policies and the minimum
/// strength of the signature.
///
/// Fixed rules every profile keeps: exactly one SignerInfo, content type id-data, the signer
/// certificate found in the receipt by issuer and serial number (or key identifier), the chain's
/// last certificate byte-identical to a configured anchor, and MD5 refused.
public struct ReceiptPolicy: Sendable {
    /// A name for messages (`appStore`, `xcode`, `custom`).
    public var name: String
    /// Chain policies, evaluated in order on the validated chain; the first failure stops them.
    public var chainPolicies: [any ChainPolicy]
    /// The smallest RSA modulus accepted for the signer key. Values below 2048 are raised to 2048.
    public var minimumRSAKeyBits: Int {
        get { storedMinimumRSAKeyBits }
        set { storedMinimumRSAKeyBits = max(ReceiptPolicy.rsaFloor, newValue) }
    }
    private var storedMinimumRSAKeyBits: Int

    /// The digests accepted in the SignerInfo. MD5 is refused even when listed.
    public var allowedDigests: Set<DigestAlgorithm>

    static let rsaFloor = 2048
    static let ecFloor = 256

    /// Creates a policy.
    public init(
        name: String, chainPolicies: [any ChainPolicy], minimumRSAKeyBits: Int = 2048,
        allowedDigests: Set<DigestAlgorithm> = [.sha1, .sha256, .sha384, .sha512]
    ) {
        self.name = name
        self.chainPolicies = chainPolicies
        self.storedMinimumRSAKeyBits = max(ReceiptPolicy.rsaFloor, minimumRSAKeyBits)
        self.allowedDigests = allowedDigests.subtracting([.md5])
    }

    /// App Store receipts: a chain of exactly 3 (receipt-signing leaf, WWDR intermediate, Apple
    /// root), the leaf marked 1.2.840.113635.100.6.11.1 and the intermediate 1.2.840.113635.100.6.2.1.
    /// SHA-1 stays allowed because real receipts until 2023 use it.
    public static let appStore = ReceiptPolicy(
        name: "appStore",
        chainPolicies: [
            ChainLengthPolicy(exactly: 3), CertificateExtensionPolicy.appleReceiptSigningLeaf,
            CertificateExtensionPolicy.appleWWDRIntermediate,
        ])

    /// Xcode StoreKit testing receipts: the signer certificate is itself the anchor (a chain of 1),
    /// as with Xcode's StoreKit test certificate.
    public static let xcode = ReceiptPolicy(name: "xcode", chainPolicies: [ChainLengthPolicy(exactly: 1)])

    /// Your own chain policies, AND-composed in order.
    public static func custom(_ chainPolicies: [any ChainPolicy]) -> ReceiptPolicy {
        ReceiptPolicy(name: "custom", chainPolicies: chainPolicies)
    }
}
