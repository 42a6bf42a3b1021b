public import ASN1
public import Foundation
public import ReceiptCrypto

/// A three-level test PKI shaped like Apple's receipt PKI: a root, a WWDR-like intermediate with
/// the marker extension 1.2.840.113635.100.6.2.1, and a receipt-signing leaf with
/// 1.2.840.113635.100.6.11.1. Or, for the Xcode layout, one self-signed StoreKit-like certificate.
///
/// Fresh keys every time; only tests, fixtures and the simulated store use it. Nothing about it is
/// trusted unless a verifier is given ``root`` as an anchor.
public struct TestPKI: Sendable {
    /// Apple's marker on receipt-signing leaves.
    public static let leafMarkerOID = ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 11, 1)
    /// Apple's marker on WWDR intermediates.
    public static let intermediateMarkerOID = ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 2, 1)

    /// The root's private key.
    public var rootKey: PrivateKey
    /// The self-signed root: the anchor a verifier must be given to trust this PKI.
    public var root: Certificate
    /// The intermediate's private key.
    public var intermediateKey: PrivateKey
    /// The WWDR-like intermediate, issued by the root.
    public var intermediate: Certificate
    /// The receipt-signing leaf's private key.
    public var leafKey: PrivateKey
    /// The receipt-signing leaf, issued by the intermediate.
    public var leaf: Certificate

    /// The key types of a PKI.
    public enum KeyShape: Sendable, Hashable {
        /// RSA keys of ``Options/keyBits`` everywhere, as Apple's receipt PKI.
        case rsa
        /// As Apple's JWS PKI (Apple Root CA - G3 → WWDR G6 → the ECC signing leaf): P-384 root and
        /// intermediate, P-256 leaf (ES256), certificates signed with ECDSA and ``Options/digest``
        /// (use SHA-384, as Apple does).
        case appleJWS
    }

    /// What to vary when generating a PKI (the defaults give a valid Apple-like PKI).
    public struct Options: Sendable {
        /// The key types.
        public var keys: KeyShape = .rsa
        /// Certificate signature digest (Apple used SHA-1, then SHA-256).
        public var digest: DigestAlgorithm = .sha256
        /// RSA key size.
        public var keyBits: Int = 2048
        /// Validity of every certificate.
        public var notBefore: Date = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01
        /// End of every certificate's validity.
        public var notAfter: Date = Date(timeIntervalSince1970: 2_524_608_000)  // 2050-01-01
        /// Start of the leaf's validity, if different.
        public var leafNotBefore: Date?
        /// End of the leaf's validity, if different.
        public var leafNotAfter: Date?
        /// Subject of the root, e.g. a copy of Apple's to test that names are not trusted.
        public var rootSubject: [(String, String)] = [
            ("C", "US"), ("O", "RMStore Test"), ("OU", "Test Certification Authority"), ("CN", "RMStore Test Root CA"),
        ]
        /// Subject of the intermediate.
        public var intermediateSubject: [(String, String)] = [
            ("C", "US"), ("O", "RMStore Test"), ("OU", "G1"), ("CN", "RMStore Test WWDR Intermediate"),
        ]
        /// Subject of the leaf.
        public var leafSubject: [(String, String)] = [
            ("C", "US"), ("O", "RMStore Test"), ("OU", "RMStore Test Receipts"), ("CN", "RMStore Test Receipt Signing"),
        ]
        /// Whether the intermediate carries Apple's WWDR marker extension.
        public var intermediateMarker = true
        /// Whether the leaf carries Apple's receipt-signing marker extension.
        public var leafMarker = true
        /// The OCSP responder URL put into the leaf's Authority Information Access extension (the
        /// responder for the intermediate's certificates), or nil for none.
        public var leafOCSPURL: String?
        /// The OCSP responder URL put into the intermediate's Authority Information Access
        /// extension (the responder for the root's certificates), or nil for none.
        public var intermediateOCSPURL: String?

        /// The defaults: a valid Apple-like PKI.
        public init() {}
    }

    /// A random positive 63-bit serial number, so that certificates of different generated PKIs
    /// never share an issuer-and-serial identifier.
    static func randomSerial() -> UInt64 { UInt64.random(in: 1...UInt64(Int64.max)) }

    /// Generates a fresh PKI.
    public static func generate(_ options: Options = Options()) throws(CryptoError) -> TestPKI {
        func caKey() throws(CryptoError) -> PrivateKey {
            options.keys == .rsa ? try PrivateKey.generateRSA(bits: options.keyBits) : try PrivateKey.generateP384()
        }
        let rootKey = try caKey()
        var rootBuilder = CertificateBuilder(
            subject: options.rootSubject, serialNumber: TestPKI.randomSerial(), notBefore: options.notBefore, notAfter: options.notAfter,
            publicKey: try rootKey.publicKey)
        rootBuilder.digest = options.digest
        rootBuilder.basicConstraints = .ca()
        rootBuilder.keyUsage = [.keyCertSign, .cRLSign]
        let root = try rootBuilder.selfSigned(with: rootKey)

        let intermediateKey = try caKey()
        var intermediateBuilder = CertificateBuilder(
            subject: options.intermediateSubject, serialNumber: TestPKI.randomSerial(), notBefore: options.notBefore,
            notAfter: options.notAfter,
            publicKey: try intermediateKey.publicKey)
        intermediateBuilder.digest = options.digest
        intermediateBuilder.basicConstraints = .ca(pathLength: 0)
        intermediateBuilder.keyUsage = [.keyCertSign, .cRLSign]
        if options.intermediateMarker { intermediateBuilder.customExtensions = [.marker(oid: intermediateMarkerOID)] }
        if let url = options.intermediateOCSPURL { intermediateBuilder.customExtensions.append(.authorityInformationAccess(ocspURL: url)) }
        let intermediate = try intermediateBuilder.issued(by: root, signingKey: rootKey)

        let leafKey = options.keys == .rsa ? try PrivateKey.generateRSA(bits: options.keyBits) : try PrivateKey.generateP256()
        var leafBuilder = CertificateBuilder(
            subject: options.leafSubject, serialNumber: TestPKI.randomSerial(), notBefore: options.leafNotBefore ?? options.notBefore,
            notAfter: options.leafNotAfter ?? options.notAfter, publicKey: try leafKey.publicKey)
        leafBuilder.digest = options.digest
        leafBuilder.basicConstraints = .endEntity
        leafBuilder.keyUsage = [.digitalSignature]
        if options.leafMarker { leafBuilder.customExtensions = [.marker(oid: leafMarkerOID)] }
        if let url = options.leafOCSPURL { leafBuilder.customExtensions.append(.authorityInformationAccess(ocspURL: url)) }
        let leaf = try leafBuilder.issued(by: intermediate, signingKey: intermediateKey)
        return TestPKI(
            rootKey: rootKey, root: root, intermediateKey: intermediateKey, intermediate: intermediate, leafKey: leafKey,
            leaf: leaf)
    }

    /// A PKI shaped like Apple's JWS PKI (``KeyShape/appleJWS``, certificates signed with ECDSA
    /// SHA-384) with the names of `options` (JWS-flavoured defaults).
    public static func jws(_ configure: (inout Options) -> Void = { _ in }) throws(CryptoError) -> TestPKI {
        var options = Options()
        options.keys = .appleJWS
        options.digest = .sha384
        options.rootSubject = [
            ("C", "US"), ("O", "RMStore Test"), ("OU", "Test Certification Authority"), ("CN", "RMStore Test Root CA - G3"),
        ]
        options.intermediateSubject = [("C", "US"), ("O", "RMStore Test"), ("OU", "G6"), ("CN", "RMStore Test WWDR CA G6")]
        options.leafSubject = [
            ("C", "US"), ("O", "RMStore Test"), ("OU", "RMStore Test Receipts"),
            ("CN", "RMStore Test ECC Mac App Store and iTunes Store Receipt Signing"),
        ]
        configure(&options)
        return try generate(options)
    }

    /// A signer that embeds leaf, intermediate and root in Apple's order.
    public func signer(digest: DigestAlgorithm = .sha256) -> ReceiptSigner {
        ReceiptSigner(key: leafKey, certificate: leaf, chain: [intermediate, root], digest: digest)
    }

    /// A single self-signed certificate like Xcode's StoreKit test certificate, and its key.
    public static func storeKitTestCertificate(
        notBefore: Date = Date(timeIntervalSince1970: 1_577_836_800), notAfter: Date = Date(timeIntervalSince1970: 2_524_608_000)
    ) throws(CryptoError) -> (key: PrivateKey, certificate: Certificate) {
        let key = try PrivateKey.generateRSA(bits: 2048)
        var builder = CertificateBuilder(
            subject: [("CN", "StoreKit"), ("O", "StoreKit"), ("OU", "StoreKit"), ("C", "US")], serialNumber: TestPKI.randomSerial(),
            notBefore: notBefore, notAfter: notAfter, publicKey: try key.publicKey)
        builder.basicConstraints = .ca()
        builder.keyUsage = [.digitalSignature, .keyCertSign]
        return (key, try builder.selfSigned(with: key))
    }

    /// Writes the PKI as PEM files (`root.pem`, `root-key.pem`, `intermediate.pem`, …) into `directory`.
    public func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let files: [(String, String)] = [
            ("root.pem", root.pemEncoded), ("root-key.pem", try rootKey.pemEncoded),
            ("intermediate.pem", intermediate.pemEncoded), ("intermediate-key.pem", try intermediateKey.pemEncoded),
            ("leaf.pem", leaf.pemEncoded), ("leaf-key.pem", try leafKey.pemEncoded),
        ]
        for (name, text) in files {
            try Data(text.utf8).write(to: directory.appendingPathComponent(name), options: .atomic)
        }
    }

    /// Reads a PKI written by ``write(to:)``.
    public static func read(from directory: URL) throws -> TestPKI {
        func text(_ name: String) throws -> String {
            String(decoding: try Data(contentsOf: directory.appendingPathComponent(name)), as: UTF8.self)
        }
        return TestPKI(
            rootKey: try PrivateKey(pemEncoded: text("root-key.pem")), root: try Certificate(pemEncoded: text("root.pem")),
            intermediateKey: try PrivateKey(pemEncoded: text("intermediate-key.pem")),
            intermediate: try Certificate(pemEncoded: text("intermediate.pem")),
            leafKey: try PrivateKey(pemEncoded: text("leaf-key.pem")), leaf: try Certificate(pemEncoded: text("leaf.pem")))
    }
}
