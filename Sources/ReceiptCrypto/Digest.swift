public import ASN1
internal import COpenSSL

/// A message digest algorithm that can appear in receipts and certificates.
///
/// ``md5`` exists only so that callers can recognise it and refuse it: ``PublicKey`` never verifies
/// and ``PrivateKey`` never produces an MD5-based signature (see ``isRefusedForSignatures``).
public enum DigestAlgorithm: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// SHA-1 (FIPS 180-4). Used by older App Store receipts and certificates.
    case sha1
    /// SHA-256 (FIPS 180-4).
    case sha256
    /// SHA-384 (FIPS 180-4).
    case sha384
    /// SHA-512 (FIPS 180-4).
    case sha512
    /// MD5 (RFC 1321). Broken; recognised only so that it can be refused.
    case md5

    /// The object identifier of the digest itself (as in a PKCS#7 `digestAlgorithm`).
    public var oid: ASN1ObjectIdentifier {
        switch self {
        case .sha1: AlgorithmOID.sha1
        case .sha256: AlgorithmOID.sha256
        case .sha384: AlgorithmOID.sha384
        case .sha512: AlgorithmOID.sha512
        case .md5: AlgorithmOID.md5
        }
    }

    /// The digest length in bytes.
    public var outputByteCount: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        case .md5: 16
        }
    }

    /// True for algorithms that this module refuses to sign or verify with (MD5).
    public var isRefusedForSignatures: Bool { self == .md5 }

    /// Looks up a digest from an OID: either a digest OID (`2.16.840.1.101.3.4.2.1`) or a
    /// signature-algorithm OID that names its digest (`1.2.840.113549.1.1.11` sha256WithRSAEncryption,
    /// `1.2.840.10045.4.3.2` ecdsa-with-SHA256, ...). Returns nil for unknown OIDs and for
    /// `rsaEncryption` (`1.2.840.113549.1.1.1`), which names no digest; see ``SignatureAlgorithm``.
    public init?(oid: ASN1ObjectIdentifier) {
        if let digest = DigestAlgorithm.allCases.first(where: { $0.oid == oid }) {
            self = digest
        } else if let digest = SignatureAlgorithm(oid: oid)?.digest {
            self = digest
        } else {
            return nil
        }
    }

    /// A one-line rendering for logs.
    public var description: String { rawValue }

    /// OpenSSL's fetch name.
    var openSSLName: String {
        switch self {
        case .sha1: "SHA1"
        case .sha256: "SHA256"
        case .sha384: "SHA384"
        case .sha512: "SHA512"
        case .md5: "MD5"
        }
    }

    /// The process-wide fetched `EVP_MD`, or an `unsupportedAlgorithm` error if the default
    /// provider does not offer it (for example MD5 under a FIPS-only configuration).
    package func evpMD() throws(CryptoError) -> OpaquePointer {
        let fetched: FetchedDigest
        switch self {
        case .sha1: fetched = FetchedDigest.sha1
        case .sha256: fetched = FetchedDigest.sha256
        case .sha384: fetched = FetchedDigest.sha384
        case .sha512: fetched = FetchedDigest.sha512
        case .md5: fetched = FetchedDigest.md5
        }
        guard let md = fetched.md else {
            throw .plain(.unsupportedAlgorithm, "OpenSSL provides no \(openSSLName) implementation")
        }
        return md
    }
}

/// A fetched `EVP_MD`, fetched once per process and algorithm and never freed.
///
/// `@unchecked Sendable`: the pointer is written once in `init`; OpenSSL 3 documents fetched
/// algorithm objects as safe to share between threads.
final class FetchedDigest: @unchecked Sendable {
    let md: OpaquePointer?

    private init(_ name: String) {
        md = EVP_MD_fetch(nil, name, nil)
        if md == nil { OpenSSLErrorQueue.clear() }
    }

    deinit { if let md { EVP_MD_free(md) } }

    static let sha1 = FetchedDigest("SHA1")
    static let sha256 = FetchedDigest("SHA256")
    static let sha384 = FetchedDigest("SHA384")
    static let sha512 = FetchedDigest("SHA512")
    static let md5 = FetchedDigest("MD5")
}

/// A signature algorithm identified by an X.509 / PKCS#7 algorithm OID.
public enum SignatureAlgorithm: Sendable, Hashable, CustomStringConvertible {
    /// RSASSA-PKCS1-v1_5. The digest is nil for bare `rsaEncryption` (`1.2.840.113549.1.1.1`), which
    /// PKCS#7 SignerInfos use while naming the digest in a separate field.
    case rsaPKCS1v15(DigestAlgorithm?)
    /// ECDSA with a DER-encoded `Ecdsa-Sig-Value`.
    case ecdsa(DigestAlgorithm)

    /// Recognises `rsaEncryption`, `md5/sha1/sha256/sha384/sha512WithRSAEncryption` and
    /// `ecdsa-with-SHA1/SHA256/SHA384/SHA512`. Returns nil for any other OID.
    public init?(oid: ASN1ObjectIdentifier) {
        switch oid {
        case AlgorithmOID.rsaEncryption: self = .rsaPKCS1v15(nil)
        case AlgorithmOID.md5WithRSA: self = .rsaPKCS1v15(.md5)
        case AlgorithmOID.sha1WithRSA: self = .rsaPKCS1v15(.sha1)
        case AlgorithmOID.sha256WithRSA: self = .rsaPKCS1v15(.sha256)
        case AlgorithmOID.sha384WithRSA: self = .rsaPKCS1v15(.sha384)
        case AlgorithmOID.sha512WithRSA: self = .rsaPKCS1v15(.sha512)
        case AlgorithmOID.ecdsaWithSHA1: self = .ecdsa(.sha1)
        case AlgorithmOID.ecdsaWithSHA256: self = .ecdsa(.sha256)
        case AlgorithmOID.ecdsaWithSHA384: self = .ecdsa(.sha384)
        case AlgorithmOID.ecdsaWithSHA512: self = .ecdsa(.sha512)
        default: return nil
        }
    }

    /// The digest the algorithm names, or nil for bare `rsaEncryption`.
    public var digest: DigestAlgorithm? {
        switch self {
        case .rsaPKCS1v15(let digest): digest
        case .ecdsa(let digest): digest
        }
    }

    /// The OID of this algorithm, or nil for a combination that has no OID (ECDSA with MD5).
    public var oid: ASN1ObjectIdentifier? {
        switch self {
        case .rsaPKCS1v15(nil): AlgorithmOID.rsaEncryption
        case .rsaPKCS1v15(.md5): AlgorithmOID.md5WithRSA
        case .rsaPKCS1v15(.sha1): AlgorithmOID.sha1WithRSA
        case .rsaPKCS1v15(.sha256): AlgorithmOID.sha256WithRSA
        case .rsaPKCS1v15(.sha384): AlgorithmOID.sha384WithRSA
        case .rsaPKCS1v15(.sha512): AlgorithmOID.sha512WithRSA
        case .ecdsa(.sha1): AlgorithmOID.ecdsaWithSHA1
        case .ecdsa(.sha256): AlgorithmOID.ecdsaWithSHA256
        case .ecdsa(.sha384): AlgorithmOID.ecdsaWithSHA384
        case .ecdsa(.sha512): AlgorithmOID.ecdsaWithSHA512
        case .ecdsa(.md5): nil
        }
    }

    /// A one-line rendering for logs.
    public var description: String {
        switch self {
        case .rsaPKCS1v15(nil): "rsaEncryption"
        case .rsaPKCS1v15(let digest?): "\(digest)WithRSAEncryption"
        case .ecdsa(let digest): "ecdsa-with-\(digest.openSSLName)"
        }
    }
}

/// The algorithm identifiers ``DigestAlgorithm`` and ``SignatureAlgorithm`` map to, built once.
enum AlgorithmOID {
    static let sha1 = ASN1ObjectIdentifier(1, 3, 14, 3, 2, 26)
    static let sha256 = ASN1ObjectIdentifier(2, 16, 840, 1, 101, 3, 4, 2, 1)
    static let sha384 = ASN1ObjectIdentifier(2, 16, 840, 1, 101, 3, 4, 2, 2)
    static let sha512 = ASN1ObjectIdentifier(2, 16, 840, 1, 101, 3, 4, 2, 3)
    static let md5 = ASN1ObjectIdentifier(1, 2, 840, 113_549, 2, 5)
    static let rsaEncryption = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 1, 1)
    static let md5WithRSA = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 1, 4)
    static let sha1WithRSA = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 1, 5)
    static let sha256WithRSA = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 1, 11)
    static let sha384WithRSA = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 1, 12)
    static let sha512WithRSA = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 1, 13)
    static let ecdsaWithSHA1 = ASN1ObjectIdentifier(1, 2, 840, 10045, 4, 1)
    static let ecdsaWithSHA256 = ASN1ObjectIdentifier(1, 2, 840, 10045, 4, 3, 2)
    static let ecdsaWithSHA384 = ASN1ObjectIdentifier(1, 2, 840, 10045, 4, 3, 3)
    static let ecdsaWithSHA512 = ASN1ObjectIdentifier(1, 2, 840, 10045, 4, 3, 4)
}

/// One-shot message digests computed by OpenSSL.
///
/// Each call uses its own digest context, so the functions are safe to call from any thread.
public enum Digest {
    /// The digest of `bytes` under `algorithm`.
    /// - Throws: ``CryptoError/Code/unsupportedAlgorithm`` if OpenSSL offers no implementation,
    ///   ``CryptoError/Code/operationFailed`` if the computation fails.
    public static func hash(_ algorithm: DigestAlgorithm, _ bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
        try withRawBytes(bytes) { raw throws(CryptoError) in try hash(algorithm, raw) }
    }

    /// The digest of a slice of bytes under `algorithm` (no copy is made).
    public static func hash(_ algorithm: DigestAlgorithm, _ bytes: ArraySlice<UInt8>) throws(CryptoError) -> [UInt8] {
        try withRawBytes(bytes) { raw throws(CryptoError) in try hash(algorithm, raw) }
    }

    /// The digest of raw memory under `algorithm`.
    public static func hash(_ algorithm: DigestAlgorithm, _ bytes: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        let md = try algorithm.evpMD()
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = withNonNullBytes(bytes) { base, count in
            output.withUnsafeMutableBufferPointer { out in
                EVP_Digest(base, count, out.baseAddress, &length, md, nil)
            }
        }
        guard ok == 1, Int(length) == algorithm.outputByteCount else {
            throw .openSSL(.operationFailed, "EVP_Digest(\(algorithm.openSSLName)) failed")
        }
        output.removeSubrange(Int(length)...)
        return output
    }
}
