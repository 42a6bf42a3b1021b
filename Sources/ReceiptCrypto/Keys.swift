internal import COpenSSL

/// Owns one OpenSSL `EVP_PKEY`.
///
/// `@unchecked Sendable`: immutable after `init`. Signing and verification create a fresh
/// `EVP_MD_CTX` per call and only read the key, which OpenSSL 3 supports from many threads.
final class EVPKeyHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of one reference to `pointer`.
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    var kind: PublicKey.Kind {
        let bits = Int(EVP_PKEY_get_bits(pointer))
        switch EVP_PKEY_get_base_id(pointer) {
        case EVP_PKEY_RSA:
            return .rsa(bits: bits)
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1 else {
                OpenSSLErrorQueue.clear()
                return .ec(curve: "unknown")
            }
            return .ec(curve: String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        default:
            let name = EVP_PKEY_get0_type_name(pointer).map { String(cString: $0) } ?? "unknown"
            return .other(name)
        }
    }

    /// The DER SubjectPublicKeyInfo of the key (public part only).
    func subjectPublicKeyInfo() throws(CryptoError) -> [UInt8] {
        OpenSSLErrorQueue.clear()
        guard let der = encodeDER({ i2d_PUBKEY(pointer, $0) }) else {
            throw .openSSL(.operationFailed, "i2d_PUBKEY failed")
        }
        return der
    }
}

/// A public key (RSA or elliptic curve) that verifies signatures.
///
/// Values are immutable and `Sendable`; ``verify(signature:over:digest:)-([UInt8],[UInt8],_)`` may be
/// called concurrently from many threads on the same key (every call uses its own digest context).
/// Equality and hashing use the DER SubjectPublicKeyInfo.
public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The algorithm family of a key and its size.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        /// RSA with a modulus of `bits` bits.
        case rsa(bits: Int)
        /// Elliptic curve key on the named curve (OpenSSL's group name, for example `"prime256v1"`).
        case ec(curve: String)
        /// Any other key type, with OpenSSL's name for it. Such keys never verify.
        case other(String)

        /// A one-line rendering for logs.
        public var description: String {
            switch self {
            case .rsa(let bits): "RSA-\(bits)"
            case .ec(let curve): "EC \(curve)"
            case .other(let name): name
            }
        }
    }

    let handle: EVPKeyHandle

    /// The DER-encoded SubjectPublicKeyInfo.
    public let derEncoded: [UInt8]

    /// The OpenSSL `EVP_PKEY` behind this value, for CryptoBaselines' comparisons with OpenSSL. It
    /// stays valid while this value (or a copy) is alive; callers must not free or modify it.
    package var evpKey: OpaquePointer { handle.pointer }

    /// Parses a DER SubjectPublicKeyInfo.
    /// - Throws: ``CryptoError/Code/emptyInput``, ``CryptoError/Code/malformedInput`` or
    ///   ``CryptoError/Code/trailingBytes``.
    public init(subjectPublicKeyInfoDER der: [UInt8]) throws(CryptoError) {
        guard !der.isEmpty else { throw .plain(.emptyInput, "no public key bytes") }
        OpenSSLErrorQueue.clear()
        let parsed: (OpaquePointer?, Int) = withNonNullBytes(der) { base, count in
            var cursor: UnsafePointer<UInt8>? = base
            let key = d2i_PUBKEY(nil, &cursor, count)
            return (key, cursor.map { $0 - base } ?? 0)
        }
        guard let key = parsed.0 else {
            throw .openSSL(.malformedInput, "the bytes are not a DER SubjectPublicKeyInfo")
        }
        guard parsed.1 == der.count else {
            EVP_PKEY_free(key)
            throw .plain(.trailingBytes, "\(der.count - parsed.1) bytes follow the SubjectPublicKeyInfo")
        }
        handle = EVPKeyHandle(owning: key)
        derEncoded = der
    }

    /// Wraps a key of which the caller hands over one reference, with the SubjectPublicKeyInfo
    /// it was decoded from (a certificate's, so no encoder runs).
    init(owning key: OpaquePointer, subjectPublicKeyInfo: [UInt8]) {
        handle = EVPKeyHandle(owning: key)
        derEncoded = subjectPublicKeyInfo
    }

    /// The key type and size.
    public var kind: Kind { handle.kind }

    /// The key size in bits (the RSA modulus length, or the curve's order length).
    public var bits: Int { Int(EVP_PKEY_get_bits(handle.pointer)) }

    /// Verifies an RSA PKCS#1 v1.5 signature or a DER-encoded ECDSA signature over `data`.
    ///
    /// Returns false, never throws, for every failure: a wrong signature, a malformed signature, a
    /// key of another type, or a refused digest (MD5).
    public func verify(signature: [UInt8], over data: [UInt8], digest: DigestAlgorithm) -> Bool {
        signature.withUnsafeBytes { sig in data.withUnsafeBytes { verify(signature: sig, over: $0, digest: digest) } }
    }

    /// Verifies a signature over a slice of a larger buffer (no copy is made).
    public func verify(signature: [UInt8], over data: ArraySlice<UInt8>, digest: DigestAlgorithm) -> Bool {
        signature.withUnsafeBytes { sig in data.withUnsafeBytes { verify(signature: sig, over: $0, digest: digest) } }
    }

    /// Verifies a signature held in a slice over data held in a slice (no copies are made).
    public func verify(signature: ArraySlice<UInt8>, over data: ArraySlice<UInt8>, digest: DigestAlgorithm) -> Bool {
        signature.withUnsafeBytes { sig in data.withUnsafeBytes { verify(signature: sig, over: $0, digest: digest) } }
    }

    /// Verifies a signature over raw memory. The memory is only read during the call.
    public func verify(signature: UnsafeRawBufferPointer, over data: UnsafeRawBufferPointer, digest: DigestAlgorithm) -> Bool {
        guard !digest.isRefusedForSignatures, !signature.isEmpty else { return false }
        // Only RSA (PKCS#1 v1.5 is OpenSSL's default padding for it) and EC keys; RSA-PSS keys,
        // Ed25519 and others would change what "verify" means.
        let baseID = EVP_PKEY_get_base_id(handle.pointer)
        guard baseID == EVP_PKEY_RSA || baseID == EVP_PKEY_EC else { return false }
        let md: OpaquePointer
        do {
            md = try digest.evpMD()
        } catch {
            return false
        }
        OpenSSLErrorQueue.clear()
        guard let context = EVP_MD_CTX_new() else {
            OpenSSLErrorQueue.clear()
            return false
        }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, md, nil, handle.pointer) == 1 else {
            OpenSSLErrorQueue.clear()
            return false
        }
        let result = withNonNullBytes(signature) { sig, sigCount in
            withNonNullBytes(data) { tbs, tbsCount in
                EVP_DigestVerify(context, sig, sigCount, tbs, tbsCount)
            }
        }
        OpenSSLErrorQueue.clear()
        return result == 1
    }

    /// Keys are equal when their SubjectPublicKeyInfo encodings are equal.
    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
        lhs.derEncoded == rhs.derEncoded
    }

    /// Hashes the DER encoding.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derEncoded)
    }

    /// A one-line rendering for logs.
    public var description: String { "PublicKey(\(kind))" }
}

/// A private key (RSA or P-256) that signs, for test PKIs, fixtures and the simulated store.
///
/// Values are immutable and `Sendable`; ``sign(_:digest:)`` may be called concurrently.
public struct PrivateKey: Sendable, CustomStringConvertible {
    let handle: EVPKeyHandle

    /// The OpenSSL `EVP_PKEY` behind this value, for CryptoBaselines' comparisons with OpenSSL. It
    /// stays valid while this value (or a copy) is alive; callers must not free or modify it.
    package var evpKey: OpaquePointer { handle.pointer }

    init(owning key: OpaquePointer) {
        handle = EVPKeyHandle(owning: key)
    }

    /// Generates a fresh RSA key with public exponent 65537.
    /// - Parameter bits: modulus size, 1024 through 16384.
    /// - Throws: ``CryptoError/Code/invalidArgument`` for a size out of range,
    ///   ``CryptoError/Code/operationFailed`` if OpenSSL fails.
    public static func generateRSA(bits: Int) throws(CryptoError) -> PrivateKey {
        guard (1024...16384).contains(bits) else {
            throw .plain(.invalidArgument, "RSA key size \(bits) is outside 1024...16384")
        }
        return try generate(algorithm: "RSA") { context in
            EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) > 0
        }
    }

    /// Generates a fresh ECDSA key on NIST P-256 (prime256v1).
    public static func generateP256() throws(CryptoError) -> PrivateKey {
        try generate(algorithm: "EC") { context in
            EVP_PKEY_CTX_set_group_name(context, "P-256") > 0
        }
    }

    /// Generates a fresh ECDSA key on NIST P-384 (secp384r1), the curve of Apple Root CA - G3 and
    /// the WWDR G6 intermediate.
    public static func generateP384() throws(CryptoError) -> PrivateKey {
        try generate(algorithm: "EC") { context in
            EVP_PKEY_CTX_set_group_name(context, "P-384") > 0
        }
    }

    private static func generate(
        algorithm: String,
        configure: (OpaquePointer) -> Bool
    ) throws(CryptoError) -> PrivateKey {
        OpenSSLErrorQueue.clear()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else {
            throw .openSSL(.unsupportedAlgorithm, "OpenSSL has no \(algorithm) key generator")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) > 0, configure(context) else {
            throw .openSSL(.operationFailed, "could not configure \(algorithm) key generation")
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) > 0, let key else {
            throw .openSSL(.operationFailed, "\(algorithm) key generation failed")
        }
        return PrivateKey(owning: key)
    }

    /// Reads the first private key in PEM text: `PRIVATE KEY` (PKCS#8), `RSA PRIVATE KEY` or
    /// `EC PRIVATE KEY`. Encrypted keys are refused (no passphrase prompt is ever shown).
    public init(pemEncoded: String) throws(CryptoError) {
        let bytes = Array(pemEncoded.utf8)
        guard !bytes.isEmpty else { throw .plain(.emptyInput, "no PEM text") }
        let key: OpaquePointer = try withReadOnlyBIO(bytes) { bio throws(CryptoError) in
            OpenSSLErrorQueue.clear()
            guard let key = PEM_read_bio_PrivateKey(bio, nil, refusePassphrase, nil) else {
                throw .openSSL(.malformedInput, "no readable unencrypted PEM private key")
            }
            return key
        }
        self.init(owning: key)
    }

    /// Reads a DER private key: PKCS#8 `PrivateKeyInfo` (unencrypted) or a traditional RSA or EC key.
    public init(derEncoded der: [UInt8]) throws(CryptoError) {
        guard !der.isEmpty else { throw .plain(.emptyInput, "no private key bytes") }
        OpenSSLErrorQueue.clear()
        let parsed: (OpaquePointer?, Int) = withNonNullBytes(der) { base, count in
            var cursor: UnsafePointer<UInt8>? = base
            let key = d2i_AutoPrivateKey(nil, &cursor, count)
            return (key, cursor.map { $0 - base } ?? 0)
        }
        guard let key = parsed.0 else {
            throw .openSSL(.malformedInput, "the bytes are not a DER private key")
        }
        guard parsed.1 == der.count else {
            EVP_PKEY_free(key)
            throw .plain(.trailingBytes, "\(der.count - parsed.1) bytes follow the private key")
        }
        self.init(owning: key)
    }

    /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    public var pemEncoded: String {
        get throws(CryptoError) {
            let bio = try MemoryBIO()
            OpenSSLErrorQueue.clear()
            guard PEM_write_bio_PKCS8PrivateKey(bio.pointer, handle.pointer, nil, nil, 0, nil, nil) == 1 else {
                throw .openSSL(.operationFailed, "PEM_write_bio_PKCS8PrivateKey failed")
            }
            return String(decoding: bio.contents(), as: UTF8.self)
        }
    }

    /// The key as unencrypted DER PKCS#8 `PrivateKeyInfo`.
    public var derEncoded: [UInt8] {
        get throws(CryptoError) {
            let bio = try MemoryBIO()
            OpenSSLErrorQueue.clear()
            guard i2d_PKCS8PrivateKey_bio(bio.pointer, handle.pointer, nil, nil, 0, nil, nil) == 1 else {
                throw .openSSL(.operationFailed, "i2d_PKCS8PrivateKey_bio failed")
            }
            return bio.contents()
        }
    }

    /// The matching public key.
    public var publicKey: PublicKey {
        get throws(CryptoError) {
            try PublicKey(subjectPublicKeyInfoDER: handle.subjectPublicKeyInfo())
        }
    }

    /// The key type and size.
    public var kind: PublicKey.Kind { handle.kind }

    /// Signs `data`: RSASSA-PKCS1-v1_5 for RSA keys, DER `Ecdsa-Sig-Value` for EC keys.
    /// - Throws: ``CryptoError/Code/unsupportedAlgorithm`` for MD5 or an unsupported key type,
    ///   ``CryptoError/Code/operationFailed`` if OpenSSL fails.
    public func sign(_ data: [UInt8], digest: DigestAlgorithm) throws(CryptoError) -> [UInt8] {
        guard !digest.isRefusedForSignatures else {
            throw .plain(.unsupportedAlgorithm, "refusing to sign with \(digest)")
        }
        switch kind {
        case .rsa, .ec: break
        case .other(let name): throw .plain(.unsupportedAlgorithm, "cannot sign with a \(name) key")
        }
        let md = try digest.evpMD()
        OpenSSLErrorQueue.clear()
        guard let context = EVP_MD_CTX_new() else { throw .allocation("a digest context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, md, nil, handle.pointer) == 1 else {
            throw .openSSL(.operationFailed, "EVP_DigestSignInit failed")
        }
        let signature: [UInt8]? = withNonNullBytes(data) { tbs, tbsCount in
            var length = 0
            guard EVP_DigestSign(context, nil, &length, tbs, tbsCount) == 1, length > 0 else { return nil }
            var output = [UInt8](repeating: 0, count: length)
            let ok = output.withUnsafeMutableBufferPointer { buffer in
                EVP_DigestSign(context, buffer.baseAddress, &length, tbs, tbsCount)
            }
            guard ok == 1, length <= output.count else { return nil }
            output.removeSubrange(length...)
            return output
        }
        guard let signature else { throw .openSSL(.operationFailed, "EVP_DigestSign failed") }
        return signature
    }

    /// A one-line rendering for logs.
    public var description: String { "PrivateKey(\(kind))" }
}
