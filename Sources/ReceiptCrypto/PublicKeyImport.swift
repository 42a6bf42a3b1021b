@_spi(RawParsing) import ASN1
internal import COpenSSL

/// Builds a ``PublicKey`` from a SubjectPublicKeyInfo read with the package's DER reader and
/// handed to OpenSSL as parameters (`EVP_PKEY_fromdata`), for the key types chain validation's
/// fast path uses: EC keys on P-256, P-384 and P-521 (uncompressed points; OpenSSL checks that
/// the point lies on the curve) and RSA keys (`rsaEncryption` with NULL parameters).
///
/// OpenSSL 3.0's `d2i_PUBKEY` and `d2i_X509` set up an `OSSL_DECODER_CTX` per key, which costs
/// several times the import; this path costs what the C floor (`jws-chain-floor`) pays.
package enum PublicKeyImport {
    private static let ecPublicKey: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    private static let curves: [(oid: [UInt8], name: String, width: Int)] = [
        ([0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07], "P-256", 32),
        ([0x2B, 0x81, 0x04, 0x00, 0x22], "P-384", 48),
        ([0x2B, 0x81, 0x04, 0x00, 0x23], "P-521", 66),
    ]
    private static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]

    /// The key of `spki` (a DER SubjectPublicKeyInfo), or nil when it is not one of the forms
    /// above or OpenSSL refuses the parameters.
    package static func key(subjectPublicKeyInfo spki: ArraySlice<UInt8>) -> PublicKey? {
        let der = Array(spki)
        let key: OpaquePointer? = der.withUnsafeBytes { buffer in
            guard let parts = try? split(buffer) else { return nil }
            let algorithm = UnsafeRawBufferPointer(rebasing: buffer[parts.algorithm])
            let bits = UnsafeRawBufferPointer(rebasing: buffer[parts.key])
            if algorithm.elementsEqual(ecPublicKey) {
                guard let curveRange = parts.curve else { return nil }
                let curveOID = UnsafeRawBufferPointer(rebasing: buffer[curveRange])
                guard let curve = curves.first(where: { curveOID.elementsEqual($0.oid) }),
                    bits.count == 1 + 2 * curve.width, bits.first == 0x04
                else { return nil }
                return ecKey(group: curve.name, point: bits)
            }
            if algorithm.elementsEqual(rsaEncryption), parts.nullParameters {
                return try? rsaKey(bits)
            }
            return nil
        }
        guard let key else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return PublicKey(owning: key, subjectPublicKeyInfo: der)
    }

    private struct Parts {
        var algorithm: Range<Int>
        var curve: Range<Int>?
        var nullParameters: Bool
        var key: Range<Int>
    }

    private static func split(_ buffer: UnsafeRawBufferPointer) throws(ASN1Error) -> Parts? {
        var top = ASN1RawReader(buffer: buffer, rules: .der, maximumDepth: 8)
        var info = try top.readConstructed(.sequence)
        try top.finish()
        var algorithm = try info.readConstructed(.sequence)
        let bits = try info.readContent(tag: 0x03)
        try info.finish()
        let oid = try algorithm.readContent(tag: 0x06)
        var curve: Range<Int>?
        var null = false
        if let parameters = try algorithm.readOptionalElement(.objectIdentifier) {
            curve = parameters.contentStart..<parameters.contentEnd
        } else if let parameters = try algorithm.readOptionalElement(.null) {
            guard parameters.contentLength == 0 else { return nil }
            null = true
        }
        try algorithm.finish()
        guard bits.count >= 2, buffer[bits.lowerBound] == 0 else { return nil }
        return Parts(algorithm: oid, curve: curve, nullParameters: null, key: (bits.lowerBound + 1)..<bits.upperBound)
    }

    private static func ecKey(group: String, point: UnsafeRawBufferPointer) -> OpaquePointer? {
        guard let base = point.baseAddress else { return nil }
        return withKeys("group", "pub") { groupKey, pubKey in
            group.withCString { name in
                let parameters = [
                    OSSL_PARAM_construct_utf8_string(groupKey, UnsafeMutablePointer(mutating: name), 0),
                    OSSL_PARAM_construct_octet_string(pubKey, UnsafeMutableRawPointer(mutating: base), point.count),
                    OSSL_PARAM_construct_end(),
                ]
                return fromData("EC", parameters)
            }
        }
    }

    /// `RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }`, both positive.
    private static func rsaKey(_ bits: UnsafeRawBufferPointer) throws(ASN1Error) -> OpaquePointer? {
        var top = ASN1RawReader(buffer: bits, rules: .der, maximumDepth: 4)
        var key = try top.readConstructed(.sequence)
        try top.finish()
        let modulus = try key.readContent(tag: 0x02)
        let exponent = try key.readContent(tag: 0x02)
        try key.finish()
        // OSSL_PARAM integers are native-endian: the big-endian magnitudes, reversed. DER
        // integers only (no padding octet that is not needed), so that OpenSSL writes the key
        // back as exactly these bytes.
        func littleEndian(_ range: Range<Int>) -> [UInt8]? {
            guard let first = range.first, bits[first] & 0x80 == 0 else { return nil }
            var start = first
            if bits[first] == 0, range.count > 1 {
                guard bits[first + 1] & 0x80 != 0 else { return nil }
                start += 1
            }
            return Array(UnsafeRawBufferPointer(rebasing: bits[start..<range.upperBound]).reversed())
        }
        guard var n = littleEndian(modulus), var e = littleEndian(exponent), n.count >= 64 else { return nil }
        return withKeys("n", "e") { nKey, eKey in
            n.withUnsafeMutableBytes { nBytes in
                e.withUnsafeMutableBytes { eBytes in
                    guard let nBase = nBytes.baseAddress, let eBase = eBytes.baseAddress else { return nil }
                    let parameters = [
                        OSSL_PARAM_construct_BN(nKey, nBase.assumingMemoryBound(to: UInt8.self), nBytes.count),
                        OSSL_PARAM_construct_BN(eKey, eBase.assumingMemoryBound(to: UInt8.self), eBytes.count),
                        OSSL_PARAM_construct_end(),
                    ]
                    return fromData("RSA", parameters)
                }
            }
        }
    }

    /// Calls `body` with two parameter names as C strings valid for the whole call. An
    /// `OSSL_PARAM` keeps a pointer to its name: a Swift string passed straight to
    /// `OSSL_PARAM_construct_*` lives only for that one call, so the names would dangle by the
    /// time `EVP_PKEY_fromdata` reads them (debug builds then fail every import).
    private static func withKeys<Result>(
        _ first: String, _ second: String, _ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Result
    ) -> Result {
        first.withCString { firstKey in second.withCString { secondKey in body(firstKey, secondKey) } }
    }

    /// `EVP_PKEY_PUBLIC_KEY`, a macro Swift does not import.
    private static let publicKeySelection =
        Int32(OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS | OSSL_KEYMGMT_SELECT_PUBLIC_KEY)

    private static func fromData(_ type: String, _ parameters: [OSSL_PARAM]) -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var parameters = parameters
        var key: OpaquePointer?
        let built = parameters.withUnsafeMutableBufferPointer { list in
            EVP_PKEY_fromdata_init(context) == 1 && EVP_PKEY_fromdata(context, &key, publicKeySelection, list.baseAddress) == 1
        }
        guard built else {
            if let key { EVP_PKEY_free(key) }
            return nil
        }
        return key
    }
}
