import CZlib
import Internals

/// A certificate a store keeps once, under the SHA-256 of its DER (the `notification_certificates`
/// table), for every compact row that references it.
struct StoredCertificate: Sendable, Hashable {
    /// SHA-256 of ``der``.
    let digest: [UInt8]
    /// The certificate's DER bytes.
    let der: [UInt8]

    init(der: [UInt8]) {
        self.der = der
        digest = SHA256.hash(der)
    }
}

/// A `signedPayload` as a store keeps it when it can do so in less room: its tokens taken apart
/// (``TokenDecomposition``), the certificates apart from the row, the rest deflated with zlib, and
/// the SHA-256 of the original bytes, checked whenever the row is read back.
///
/// The body: `0x01` (this form's version), the inflated size as a varint, then the zlib stream of
/// `varint count, count × 32-byte certificate digests, token`. Reading inflates at most
/// ``maximumBytes``, checks every length, and compares the rebuilt bytes with the stored digest,
/// so a damaged row is an error (``NotificationStoreError/Code/corrupt``), never other bytes.
struct CompactPayload: Sendable, Hashable {
    /// The value of the `payload_format` column for a compact row (raw rows hold 0 or NULL and
    /// their `signed_payload` text).
    static let format: Int64 = 1
    /// The body's version byte.
    static let version: UInt8 = 1
    /// The largest payload kept compact, and the most a body may inflate to or rebuild.
    static let maximumBytes = 1 << 20

    /// The stored body.
    let body: [UInt8]
    /// SHA-256 of the original `signedPayload`.
    let digest: [UInt8]
    /// The distinct certificates the body references.
    let certificates: [StoredCertificate]

    /// The compact form of `signedPayload`, or nil when it is too large, is not a compact JWS,
    /// or does not come back byte for byte (non-canonical base64url, odd JSON): such a payload is
    /// stored raw.
    init?(signedPayload: String) {
        let original = Array(signedPayload.utf8)
        guard original.count <= Self.maximumBytes else { return nil }
        var writer = TokenDecomposition.Writer()
        guard TokenDecomposition.write(token: original[...], depth: 0, into: &writer) else { return nil }
        let certificates = writer.certificates.map(StoredCertificate.init(der:))
        var inner = TokenDecomposition.Writer()
        inner.varint(certificates.count)
        for certificate in certificates { inner.bytes += certificate.digest }
        inner.bytes += writer.bytes
        guard let deflated = Self.deflate(inner.bytes) else { return nil }
        var envelope = TokenDecomposition.Writer()
        envelope.bytes = [Self.version]
        envelope.varint(inner.bytes.count)
        body = envelope.bytes + deflated
        digest = SHA256.hash(original)
        self.certificates = certificates
        let byDigest = Dictionary(certificates.map { ($0.digest, $0.der) }, uniquingKeysWith: { first, _ in first })
        guard let rebuilt = try? Self.rebuild(body: body, digest: digest, certificate: { byDigest[$0] }), rebuilt == original else {
            return nil
        }
    }

    /// A body inflated once: the certificate digests it references and where its token starts,
    /// so that a reader can learn the digests, fetch the certificates, then rebuild, without
    /// inflating twice.
    struct Inflated {
        /// The inflated body: the digest table, then the token's compact form.
        let inner: [UInt8]
        /// The digests of the certificates the token references, in table order.
        let digests: [[UInt8]]
        /// Where the token's compact form starts in ``inner``.
        let tokenStart: Int

        /// Inflates `body` and reads its digest table.
        /// - Throws: ``NotificationStoreError/Code/corrupt`` when the body is damaged.
        init(body: [UInt8]) throws(NotificationStoreError) {
            inner = try CompactPayload.inflate(body)
            var table = TokenReassembly(inner, from: 0, certificates: [], limit: CompactPayload.maximumBytes)
            digests = try CompactPayload.digests(&table)
            tokenStart = inner.count - table.remaining
        }
    }

    /// The original bytes of a compact row: `body` rebuilt with the certificates `certificate`
    /// finds by digest, checked against `digest` (see ``rebuild(_:digest:certificate:)``).
    static func rebuild(body: [UInt8], digest: [UInt8], certificate: ([UInt8]) throws(NotificationStoreError) -> [UInt8]?)
        throws(NotificationStoreError) -> [UInt8]
    {
        try rebuild(try Inflated(body: body), digest: digest, certificate: certificate)
    }

    /// The original bytes of an inflated compact row, rebuilt with the certificates `certificate`
    /// finds by digest (each already checked against its digest by the caller, once for all the
    /// rows that name it), checked against `digest`.
    /// - Throws: ``NotificationStoreError/Code/corrupt`` when the body is damaged, a certificate is
    ///   missing, or the bytes rebuilt are not those stored; what `certificate` throws.
    static func rebuild(_ inflated: Inflated, digest: [UInt8], certificate: ([UInt8]) throws(NotificationStoreError) -> [UInt8]?)
        throws(NotificationStoreError) -> [UInt8]
    {
        var certificates: [[UInt8]] = []
        for wanted in inflated.digests {
            guard let der = try certificate(wanted) else {
                throw NotificationStoreError(.corrupt, "certificate \(Hex.encode(wanted)) is missing from the store")
            }
            certificates.append(der)
        }
        var reader = TokenReassembly(inflated.inner, from: inflated.tokenStart, certificates: certificates, limit: maximumBytes)
        let token = try reader.token(depth: 0)
        guard reader.isAtEnd else { throw NotificationStoreError(.corrupt, "the compact form has bytes after its token") }
        guard SHA256.hash(token) == digest else {
            throw NotificationStoreError(.corrupt, "the rebuilt payload does not match its stored SHA-256")
        }
        return token
    }

    /// Reads the digest table at the start of an inflated body.
    fileprivate static func digests(_ reader: inout TokenReassembly) throws(NotificationStoreError) -> [[UInt8]] {
        let count = try reader.varint()
        guard count <= 64 else { throw NotificationStoreError(.corrupt, "the compact form names too many certificates") }
        var digests: [[UInt8]] = []
        for _ in 0..<count { digests.append(Array(try reader.take(SHA256.digestCount))) }
        return digests
    }

    /// zlib's deflate of `bytes` at the best compression; nil when zlib fails.
    private static func deflate(_ bytes: [UInt8]) -> [UInt8]? {
        var size = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(size))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                compress2(out.baseAddress, &size, input.baseAddress, uLong(input.count), Z_BEST_COMPRESSION)
            }
        }
        guard status == Z_OK, Int(size) <= output.count else { return nil }
        return Array(output.prefix(Int(size)))
    }

    /// The inflated inner bytes of `body`: exactly the size it declares, at most ``maximumBytes``.
    fileprivate static func inflate(_ body: [UInt8]) throws(NotificationStoreError) -> [UInt8] {
        var header = TokenReassembly(body, from: 0, certificates: [], limit: maximumBytes)
        guard try header.byte() == version else { throw NotificationStoreError(.corrupt, "the compact form has an unknown version") }
        let declared = try header.varint()
        guard declared > 0, declared <= maximumBytes else { throw NotificationStoreError(.corrupt, "the compact form declares a bad size") }
        let compressed = Array(try header.take(header.remaining))
        var size = uLongf(declared)
        var output = [UInt8](repeating: 0, count: declared)
        let status = output.withUnsafeMutableBufferPointer { out in
            compressed.withUnsafeBufferPointer { input in
                uncompress(out.baseAddress, &size, input.baseAddress, uLong(input.count))
            }
        }
        guard status == Z_OK, Int(size) == declared else {
            throw NotificationStoreError(.corrupt, "the compact form does not inflate to its declared size (zlib \(status))")
        }
        return output
    }
}
