internal import COpenSSL

// ECDSA signatures in the fixed-width `r ‖ s` form JWS uses (RFC 7518 §3.4: ES256 is 64 bytes,
// ES384 96), converted to the DER `Ecdsa-Sig-Value` OpenSSL verifies by a direct encoder (checked
// against OpenSSL's own i2d_ECDSA_SIG in the tests), and from the DER OpenSSL signs with by
// OpenSSL's ECDSA_SIG functions.

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

    /// DER `Ecdsa-Sig-Value` of `r ‖ s` (`SEQUENCE { INTEGER r, INTEGER s }`, each INTEGER
    /// minimal and non-negative), written directly: this runs once per verification, and OpenSSL's
    /// `ECDSA_SIG` round trip through two `BIGNUM`s cost more than the rest of a warm JWS
    /// verification's bookkeeping. Nil when `raw` is not `2 × width` bytes or `width` is not that
    /// of a curve this package verifies (at most 66 bytes, P-521).
    static func derSignature(raw: UnsafeRawBufferPointer, width: Int) -> [UInt8]? {
        guard width > 0, width <= 66, raw.count == 2 * width else { return nil }
        let bytes = raw.bindMemory(to: UInt8.self)
        /// The content of the minimal INTEGER for the unsigned big-endian `half`: leading zero
        /// bytes dropped (one zero kept for zero), and a zero put back when the high bit is set.
        func integerContent(_ half: Slice<UnsafeBufferPointer<UInt8>>) -> (start: Int, padded: Bool) {
            var start = half.startIndex
            while start < half.endIndex - 1, half[start] == 0 { start += 1 }
            return (start, half[start] & 0x80 != 0)
        }
        let r = bytes[0..<width]
        let s = bytes[width..<(2 * width)]
        let (rStart, rPadded) = integerContent(r)
        let (sStart, sPadded) = integerContent(s)
        let rLength = r.endIndex - rStart + (rPadded ? 1 : 0)
        let sLength = s.endIndex - sStart + (sPadded ? 1 : 0)
        // Each INTEGER is at most 67 bytes, so its length fits one byte; the SEQUENCE's content
        // (at most 138 bytes) needs the long form from 128 on.
        let contentLength = 2 + rLength + 2 + sLength
        var output: [UInt8] = []
        output.reserveCapacity(contentLength + 3)
        output.append(0x30)
        if contentLength >= 0x80 { output.append(0x81) }
        output.append(UInt8(truncatingIfNeeded: contentLength))
        output.append(0x02)
        output.append(UInt8(truncatingIfNeeded: rLength))
        if rPadded { output.append(0) }
        output.append(contentsOf: r[rStart...])
        output.append(0x02)
        output.append(UInt8(truncatingIfNeeded: sLength))
        if sPadded { output.append(0) }
        output.append(contentsOf: s[sStart...])
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
