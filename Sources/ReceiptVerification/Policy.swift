public import ASN1
public import ReceiptCrypto

/// The outcome of one ``ChainPolicy``.
public enum PolicyResult: Sendable, Hashable {
    /// The chain meets the policy.
    case meets
    /// The chain does not meet the policy, for this reason.
    case fails(String)

    /// Whether the result is ``meets``.
    public var isMet: Bool { self == .meets }
}

/// A rule about a validated chain, whatever format it signed.
///
/// Policies run only after OpenSSL has validated the chain to a pinned anchor, on the chain it
/// returned (leaf first, anchor last). They are small values, AND-composed in order: the verifier
/// evaluates ``VerificationPolicy/chainPolicies`` one after another, records each as a check named
/// ``name``, and stops at the first failure. Implementations must be pure functions of the chain:
/// no clock, no I/O.
public protocol ChainPolicy: Sendable {
    /// The stable check name this policy reports under (for example `chainLength`).
    var name: VerificationCheck.Name { get }
    /// Evaluates the policy.
    func evaluate(chain: [Certificate]) -> PolicyResult
}

/// The chain has exactly ``length`` certificates (leaf and anchor included).
public struct ChainLengthPolicy: ChainPolicy {
    /// The required number of certificates.
    public let length: Int

    /// Requires exactly `length` certificates.
    public init(exactly length: Int) { self.length = length }

    /// ``VerificationCheck/Name/chainLength``.
    public var name: VerificationCheck.Name { .chainLength }

    /// Compares the chain's length.
    public func evaluate(chain: [Certificate]) -> PolicyResult {
        chain.count == length
            ? .meets : .fails("the chain has \(chain.count) certificate\(chain.count == 1 ? "" : "s"), the policy requires \(length)")
    }
}

/// A position in a validated chain.
public enum ChainPosition: Sendable, Hashable, CustomStringConvertible {
    /// The signer certificate (index 0).
    case leaf
    /// The certificate directly above the leaf (index 1), for Apple a WWDR or iTunes Store CA.
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
/// signing leaves and WWDR intermediates with such extensions).
public struct CertificateExtensionPolicy: ChainPolicy {
    /// The check name.
    public let name: VerificationCheck.Name
    /// Which certificate must carry the extension.
    public let position: ChainPosition
    /// The OID of the extension.
    public let oid: ASN1ObjectIdentifier

    /// Requires the extension `oid` on the certificate at `position`, reported as `name`.
    public init(name: VerificationCheck.Name, position: ChainPosition, oid: ASN1ObjectIdentifier) {
        self.name = name
        self.position = position
        self.oid = oid
    }

    /// Apple's receipt-signing leaf marker, 1.2.840.113635.100.6.11.1, on the leaf: App Store
    /// receipts, version-3 transaction receipts and every JWS.
    public static let appleReceiptSigningLeaf = CertificateExtensionPolicy(
        name: .leafMarker, position: .leaf, oid: ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 11, 1))
    /// Apple's purchase-receipt leaf marker, 1.2.840.113635.100.6.5.1, on the leaf: version-2 iOS 6
    /// transaction receipts.
    public static let applePurchaseReceiptLeaf = CertificateExtensionPolicy(
        name: .leafMarker, position: .leaf, oid: ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 5, 1))
    /// Apple's WWDR intermediate marker, 1.2.840.113635.100.6.2.1, on the intermediate.
    public static let appleWWDRIntermediate = CertificateExtensionPolicy(
        name: .intermediateMarker, position: .intermediate, oid: ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 2, 1))

    /// Looks the extension up.
    public func evaluate(chain: [Certificate]) -> PolicyResult {
        guard let index = position.index(in: chain) else {
            return .fails("the chain of \(chain.count) has no \(position)")
        }
        // In place: no copy of the certificate (and of the references it holds) on every verification.
        return chain[index].hasExtension(oid: oid)
            ? .meets : .fails("the \(position) (\(chain[index].subject)) lacks the extension \(oid)")
    }
}

/// The certificate at ``position`` is, byte for byte, ``certificate``: for formats whose
/// intermediate is not in the input and is pinned instead (iOS 6 transaction receipts).
public struct PinnedCertificatePolicy: ChainPolicy {
    /// The check name.
    public let name: VerificationCheck.Name
    /// Which certificate must be the pinned one.
    public let position: ChainPosition
    /// The pinned certificate.
    public let certificate: Certificate

    /// Requires `certificate` at `position`, reported as `name`
    /// (``VerificationCheck/Name/pinnedIntermediate`` by default).
    public init(name: VerificationCheck.Name = .pinnedIntermediate, position: ChainPosition = .intermediate, certificate: Certificate) {
        self.name = name
        self.position = position
        self.certificate = certificate
    }

    /// Compares the encodings.
    public func evaluate(chain: [Certificate]) -> PolicyResult {
        guard let index = position.index(in: chain) else {
            return .fails("the chain of \(chain.count) has no \(position)")
        }
        return chain[index] == certificate
            ? .meets
            : .fails("the \(position) (\(chain[index].subject)) is not the pinned \(certificate.subject.commonName ?? "certificate")")
    }
}

/// Several policies as one: AND in order, stopping at the first failure, reported under one name.
public struct AllOfPolicies: ChainPolicy {
    /// The check name.
    public let name: VerificationCheck.Name
    /// The policies, evaluated in order.
    public let policies: [any ChainPolicy]

    /// Combines `policies` under `name`.
    public init(name: VerificationCheck.Name, _ policies: [any ChainPolicy]) {
        self.name = name
        self.policies = policies
    }

    /// The first failure (prefixed with the failing policy's name), or ``PolicyResult/meets``.
    public func evaluate(chain: [Certificate]) -> PolicyResult {
        for policy in policies {
            if case .fails(let reason) = policy.evaluate(chain: chain) {
                return .fails("\(policy.name): \(reason)")
            }
        }
        return .meets
    }
}

/// What a validated chain must look like, as a named list of ``ChainPolicy`` values evaluated in
/// order after OpenSSL has validated the chain to a pinned anchor. One type for every format: an
/// App Store receipt and a JWS share ``appStore``; Xcode's test signatures ``xcode``; iOS 6
/// transaction receipts one per signature layout (``transactionReceiptVersion2(intermediate:)``,
/// ``transactionReceiptVersion3(intermediate:)``).
///
/// Rules every format keeps whatever the policy: the chain's last certificate byte-identical to a
/// configured anchor, validity of every certificate at the validation time, and the format's own
/// signature rules.
public struct VerificationPolicy: Sendable {
    /// A name for messages (`appStore`, `xcode`, `custom`, …).
    public var name: String
    /// Chain policies, evaluated in order on the validated chain; the first failure stops them.
    /// Their names (``ChainPolicy/name``) are read when the list is set.
    public var chainPolicies: [any ChainPolicy] {
        didSet { requiredNames = chainPolicies.map(\.name) + (revocation.isOn ? [.revocation] : []) }
    }
    /// Whether the validated chain's certificates are checked for revocation, after the chain
    /// policies passed: ``RevocationPolicy/off`` (the default: offline, no socket is opened) or
    /// ``RevocationPolicy/ocsp(_:checker:)``, reported as ``VerificationCheck/Name/revocation``.
    public var revocation: RevocationPolicy = .off {
        didSet { requiredNames = chainPolicies.map(\.name) + (revocation.isOn ? [.revocation] : []) }
    }
    /// The names of ``chainPolicies``, in order: the checks a verdict under this policy requires,
    /// listed once instead of read from each policy on every verification.
    private(set) var requiredNames: [VerificationCheck.Name]
    /// Whether signatures under this policy are StoreKit testing signatures, which prove nothing
    /// about a real purchase (``VerificationAssurance/storeKitTesting``).
    public var isStoreKitTesting: Bool

    /// Creates a policy.
    public init(name: String, chainPolicies: [any ChainPolicy], isStoreKitTesting: Bool = false) {
        self.name = name
        self.chainPolicies = chainPolicies
        requiredNames = chainPolicies.map(\.name)
        self.isStoreKitTesting = isStoreKitTesting
    }

    /// Apple's App Store signatures (app receipts and JWS): a chain of exactly 3 (signing leaf,
    /// WWDR intermediate, Apple root), the leaf marked 1.2.840.113635.100.6.11.1 and the
    /// intermediate 1.2.840.113635.100.6.2.1, and Apple's certificate profile
    /// (``KeyUsagePolicy``, ``BasicConstraintsPolicy``).
    public static let appStore = VerificationPolicy(
        name: "appStore",
        chainPolicies: [
            ChainLengthPolicy(exactly: 3), CertificateExtensionPolicy.appleReceiptSigningLeaf,
            CertificateExtensionPolicy.appleWWDRIntermediate, KeyUsagePolicy(), BasicConstraintsPolicy(),
        ])

    /// Xcode's StoreKit testing signatures: the signer certificate is itself the anchor (a chain
    /// of 1), as with Xcode's StoreKit test certificate, and its keyUsage includes
    /// digitalSignature (``KeyUsagePolicy``; it is a self-signed CA, so ``BasicConstraintsPolicy``
    /// does not apply).
    public static let xcode = VerificationPolicy(
        name: "xcode", chainPolicies: [ChainLengthPolicy(exactly: 1), KeyUsagePolicy()], isStoreKitTesting: true)

    /// iOS 6 transaction receipts with a version-2 signature blob: leaf → the pinned
    /// `intermediate` (Apple iTunes Store Certification Authority) → anchor, the leaf marked
    /// 1.2.840.113635.100.6.5.1, and Apple's certificate profile.
    public static func transactionReceiptVersion2(intermediate: Certificate) -> VerificationPolicy {
        VerificationPolicy(
            name: "transactionReceiptV2",
            chainPolicies: [
                ChainLengthPolicy(exactly: 3), PinnedCertificatePolicy(certificate: intermediate),
                CertificateExtensionPolicy.applePurchaseReceiptLeaf, KeyUsagePolicy(), BasicConstraintsPolicy(),
            ])
    }

    /// iOS 6 transaction receipts with a version-3 signature blob: leaf → the pinned
    /// `intermediate` (Apple Worldwide Developer Relations CA, 2013) → anchor, the leaf marked
    /// 1.2.840.113635.100.6.11.1, and Apple's certificate profile.
    public static func transactionReceiptVersion3(intermediate: Certificate) -> VerificationPolicy {
        VerificationPolicy(
            name: "transactionReceiptV3",
            chainPolicies: [
                ChainLengthPolicy(exactly: 3), PinnedCertificatePolicy(certificate: intermediate),
                CertificateExtensionPolicy.appleReceiptSigningLeaf, KeyUsagePolicy(), BasicConstraintsPolicy(),
            ])
    }

    /// Your own chain policies, AND-composed in order.
    public static func custom(_ chainPolicies: [any ChainPolicy]) -> VerificationPolicy {
        VerificationPolicy(name: "custom", chainPolicies: chainPolicies)
    }
}
