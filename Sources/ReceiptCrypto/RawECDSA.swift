internal import COpenSSL

// ECDSA signatures in the fixed-width `r ‖ s` form JWS uses (RFC 7518 §3.4: ES256 is 64 bytes,
// ES384 96), converted to and from the DER `Ecdsa-Sig-Value` OpenSSL works with by OpenSSL's own
// ECDSA_SIG functions.

extension PublicKey {
    /// The byte width of one coordinate of this EC key's curve (32 for P-256, 48 for P-384), or nil
    /// for a key that is not EC.
    public var ecCoordinateByteCount: Int? {
        guard EVP_PKEY_get_base_id(handle.pointer) == EVP_PKEY_EC else { return nil }
        return (bits + 7) / 8
    }

    /// Verifies a raw `r ‖ s` ECDSA signature over `data`, as JWS writes ES256 (P-256, SHA-256)
    /// and ES384 (P-384, SHA-384) signatures.
    ///
    /// The signature must be exactly twice the curve's coordinate width (64 bytes for P-256): a
    /// DER-encoded signature, a 65-byte one or any other length is refused. Returns false, never
    /// throws, for every failure, including a key that is not EC.
    public func verify(rawECDSASignature signature: ArraySlice<UInt8>, over data: ArraySlice<UInt8>, digest: DigestAlgorithm) -> Bool {
        guard let width = ecCoordinateByteCount, signature.count == 2 * width else { return false }
        guard let der = signature.withUnsafeBytes({ Self.derSignature(raw: $0, width: width) }) else { return false }
        return der.withUnsafeBytes { sig in data.withUnsafeBytes { verify(signature: sig, over: $0, digest: digest) } }
    }

    /// ``verify(rawECDSASignature:over:digest:)`` for whole arrays.
    public func verify(rawECDSASignature signature: [UInt8], over data: [UInt8], digest: DigestAlgorithm) -> Bool {
        verify(rawECDSASignature: signature[...], over: data[...], digest: digest)
    }

    /// DER `Ecdsa-Sig-Value` of `r ‖ s`, or nil when OpenSSL cannot build it.
    static func derSignature(raw: UnsafeRawBufferPointer, width: Int) -> [UInt8]? {
        guard raw.count == 2 * width, let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let r = BN_bin2bn(base, Int32(width), nil) else { return nil }
        guard let s = BN_bin2bn(base + width, Int32(width), nil) else {
            BN_free(r)
            return nil
        }
        // ECDSA_SIG_set0 takes ownership of both numbers on success.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        var output = [UInt8](repeating: 0, count: Int(length))
        let written = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        guard written == length else { return nil }
        return output
    }
}

extension PrivateKey {
    /// Signs `data` with this EC key and returns the raw `r ‖ s` form JWS uses (64 bytes for P-256
    /// with SHA-256, the ES256 algorithm).
    /// - Throws: ``CryptoError/Code/unsupportedAlgorithm`` for a key that is not EC,
    ///   ``CryptoError/Code/operationFailed`` if OpenSSL fails.
    public func signRawECDSA(_ data: [UInt8], digest: DigestAlgorithm) throws(CryptoError) -> [UInt8] {
        let ecPublicKey = try publicKey
        guard let width = ecPublicKey.ecCoordinateByteCount else {
            throw .plain(.unsupportedAlgorithm, "raw ECDSA signatures need an EC key, not \(kind)")
        }
        let der = try sign(data, digest: digest)
        guard let raw = der.withUnsafeBufferPointer({ Self.rawSignature(der: $0, width: width) }) else {
            throw .openSSL(.operationFailed, "OpenSSL's ECDSA signature could not be converted to r ‖ s")
        }
        return raw
    }

    /// `r ‖ s`, each left-padded to `width` bytes, of a DER `Ecdsa-Sig-Value`.
    static func rawSignature(der: UnsafeBufferPointer<UInt8>, width: Int) -> [UInt8]? {
        guard let base = der.baseAddress else { return nil }
        var cursor: UnsafePointer<UInt8>? = base
        guard let signature = d2i_ECDSA_SIG(nil, &cursor, der.count) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        guard let r, let s else { return nil }
        var output = [UInt8](repeating: 0, count: 2 * width)
        let ok = output.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return BN_bn2binpad(r, base, Int32(width)) == Int32(width) && BN_bn2binpad(s, base + width, Int32(width)) == Int32(width)
        }
        return ok ? output : nil
    }
}
