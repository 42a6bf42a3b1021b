internal import COpenSSL
import Foundation
import ReceiptCrypto

/// The package's own certificate reader (`CertificateFields`) and key import (`PublicKeyImport`,
/// keys built with `EVP_PKEY_fromdata`) against OpenSSL's parsers on the same bytes: the oracles
/// of the `certificate` and `public-key` fuzz targets.
///
/// Only one direction is checked: whatever the own code accepts, OpenSSL must accept and read the
/// same way. Bytes the own code refuses go to OpenSSL's parsers anyway, so refusing more is safe.
package enum OwnReaderDifferential {
    /// A disagreement between ``CertificateFields/parse(_:)`` and `d2i_X509` on `der`, or nil when
    /// the own reader refuses the bytes or both read them the same way: `d2i_X509` accepts the
    /// same bytes, all of them; subject, issuer, serial, validity, SubjectPublicKeyInfo, both
    /// signature algorithms, the signature, every extension (OID, criticality, value) and the
    /// TBSCertificate (re-encoded by OpenSSL from what it parsed) are the same; basicConstraints,
    /// keyUsage and the key identifiers decode to the same values, and OpenSSL can decode each
    /// of those the own reader decoded.
    package static func certificateDisagreement(_ der: [UInt8]) -> String? {
        guard let fields = CertificateFields.parse(der) else { return nil }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        var consumed = 0
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            let x509 = d2i_X509(nil, &cursor, buffer.count)
            consumed = cursor.map { $0 - base } ?? 0
            return x509
        }
        guard let x509 = parsed else { return "d2i_X509 rejects a certificate the own reader accepts" }
        defer { X509_free(x509) }
        guard consumed == der.count else { return "d2i_X509 reads \(consumed) of the \(der.count) bytes the own reader accepts" }
        if let disagreement = fieldDisagreement(x509, fields, der) { return disagreement }
        if let disagreement = extensionDisagreement(x509, fields, der) { return disagreement }
        if NameDifference.certain(der[fields.subject], der[fields.issuer]),
            X509_NAME_cmp(X509_get_subject_name(x509), X509_get_issuer_name(x509)) == 0
        {
            return "NameDifference finds subject and issuer different, X509_NAME_cmp equal"
        }
        // Last: re-encoding marks OpenSSL's TBSCertificate as modified.
        guard encodeDER({ i2d_re_X509_tbs(x509, $0) }) == Array(der[fields.tbs]) else {
            return "OpenSSL re-encodes the TBSCertificate differently"
        }
        return nil
    }

    private static func fieldDisagreement(_ x509: OpaquePointer, _ fields: CertificateFields, _ der: [UInt8]) -> String? {
        guard X509_get_version(x509) == 2 else { return "OpenSSL reads version \(X509_get_version(x509) + 1)" }
        guard encodeDER({ i2d_ASN1_INTEGER(X509_get0_serialNumber(x509), $0) }) == element(0x02, der[fields.serial]) else {
            return "the serial differs"
        }
        guard encodeDER({ i2d_X509_NAME(X509_get_subject_name(x509), $0) }) == Array(der[fields.subject]) else {
            return "the subject differs"
        }
        guard encodeDER({ i2d_X509_NAME(X509_get_issuer_name(x509), $0) }) == Array(der[fields.issuer]) else {
            return "the issuer differs"
        }
        guard let notBefore = seconds(X509_get0_notBefore(x509)), let notAfter = seconds(X509_get0_notAfter(x509)) else {
            return "OpenSSL cannot convert the validity times"
        }
        guard notBefore == fields.notBefore, notAfter == fields.notAfter else { return "the validity differs" }
        guard encodeDER({ i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x509), $0) }) == Array(der[fields.subjectPublicKeyInfo]) else {
            return "the SubjectPublicKeyInfo differs"
        }
        var signature: UnsafePointer<ASN1_BIT_STRING>?
        var algorithm: UnsafePointer<X509_ALGOR>?
        X509_get0_signature(&signature, &algorithm, x509)
        guard encodeDER({ i2d_X509_ALGOR(algorithm, $0) }) == Array(der[fields.outerAlgorithm]) else {
            return "the signatureAlgorithm differs"
        }
        guard encodeDER({ i2d_X509_ALGOR(X509_get0_tbs_sigalg(x509), $0) }) == Array(der[fields.innerAlgorithm]) else {
            return "the TBSCertificate's signature algorithm differs"
        }
        guard stringBytes(signature) == Array(der[fields.signature]) else { return "the signature differs" }
        return nil
    }

    private static func extensionDisagreement(_ x509: OpaquePointer, _ fields: CertificateFields, _ der: [UInt8]) -> String? {
        let count = Int(X509_get_ext_count(x509))
        guard count == fields.extensions.count else {
            return "OpenSSL reads \(count) extensions, the own reader \(fields.extensions.count)"
        }
        for (index, own) in fields.extensions.enumerated() {
            guard let ext = X509_get_ext(x509, Int32(index)), let object = X509_EXTENSION_get_object(ext) else {
                return "OpenSSL has no extension #\(index)"
            }
            let oid = OBJ_get0_data(object).map { Array(UnsafeBufferPointer(start: $0, count: OBJ_length(object))) } ?? []
            guard oid == Array(der[own.oid]) else { return "extension #\(index)'s OID differs" }
            guard (X509_EXTENSION_get_critical(ext) > 0) == own.critical else { return "extension #\(index)'s criticality differs" }
            guard stringBytes(X509_EXTENSION_get_data(ext)) == Array(der[own.value]) else { return "extension #\(index)'s value differs" }
        }
        // Each extension the own reader decoded must decode in OpenSSL too.
        let decoded: [(oid: UInt8, nid: Int32, free: (UnsafeMutableRawPointer) -> Void)] = [
            (19, NID_basic_constraints, { BASIC_CONSTRAINTS_free($0.assumingMemoryBound(to: BASIC_CONSTRAINTS.self)) }),
            (15, NID_key_usage, { ASN1_BIT_STRING_free($0.assumingMemoryBound(to: ASN1_BIT_STRING.self)) }),
            (14, NID_subject_key_identifier, { ASN1_OCTET_STRING_free($0.assumingMemoryBound(to: ASN1_OCTET_STRING.self)) }),
            (35, NID_authority_key_identifier, { AUTHORITY_KEYID_free($0.assumingMemoryBound(to: AUTHORITY_KEYID.self)) }),
            (37, NID_ext_key_usage, { EXTENDED_KEY_USAGE_free(OpaquePointer($0)) }),
        ]
        for known in decoded where fields.extensions.contains(where: { der[$0.oid].elementsEqual([0x55, 0x1D, known.oid]) }) {
            var critical: Int32 = 0
            guard let value = X509_get_ext_d2i(x509, known.nid, &critical, nil) else {
                return "OpenSSL cannot decode extension 2.5.29.\(known.oid), which the own reader decodes"
            }
            known.free(value)
        }
        OpenSSLErrorQueue.clear()
        // The values chain validation uses, as OpenSSL caches them.
        _ = X509_check_purpose(x509, -1, 0)
        let flags = X509_get_extension_flags(x509)
        if flags & UInt32(EXFLAG_INVALID) != 0 { return nil }  // Caused by an extension the own reader does not decode.
        guard (flags & UInt32(EXFLAG_BCONS) != 0) == fields.hasBasicConstraints, (flags & UInt32(EXFLAG_CA) != 0) == fields.isCA else {
            return "basicConstraints' cA differs"
        }
        let pathLength = X509_get_pathlen(x509)
        guard (pathLength >= 0 ? Int(pathLength) : nil) == fields.pathLength else { return "the pathLenConstraint differs" }
        let hasKeyUsage = flags & UInt32(EXFLAG_KUSAGE) != 0
        guard hasKeyUsage == (fields.keyUsage != nil) else { return "the presence of keyUsage differs" }
        if hasKeyUsage, keyUsage(openSSLBits: X509_get_key_usage(x509)) != fields.keyUsage?.rawValue {
            return "the keyUsage bits differ"
        }
        guard stringBytes(X509_get0_subject_key_id(x509)) == fields.subjectKeyID.map({ Array(der[$0]) }) else {
            return "the subjectKeyIdentifier differs"
        }
        guard stringBytes(X509_get0_authority_key_id(x509)) == fields.authorityKeyID.map({ Array(der[$0]) }) else {
            return "the authorityKeyIdentifier's keyIdentifier differs"
        }
        guard X509_get0_authority_issuer(x509) == nil, X509_get0_authority_serial(x509) == nil else {
            return "OpenSSL reads an authorityKeyIdentifier issuer or serial the own reader refuses"
        }
        return nil
    }

    /// A disagreement between ``NameDifference/certain(_:_:)`` and OpenSSL's `X509_NAME_cmp` on
    /// two DER Names, or nil: whenever the former finds them certainly different, OpenSSL reads
    /// both and finds them different.
    package static func nameDisagreement(_ lhs: [UInt8], _ rhs: [UInt8]) -> String? {
        guard NameDifference.certain(lhs[...], rhs[...]) else { return nil }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        func name(_ der: [UInt8]) -> OpaquePointer? {
            der.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return nil }
                var cursor: UnsafePointer<UInt8>? = base
                return d2i_X509_NAME(nil, &cursor, buffer.count)
            }
        }
        let left = name(lhs)
        let right = name(rhs)
        defer {
            if let left { X509_NAME_free(left) }
            if let right { X509_NAME_free(right) }
        }
        guard let left, let right else { return "d2i_X509_NAME rejects a name NameDifference reads" }
        return X509_NAME_cmp(left, right) == 0 ? "NameDifference finds the names different, X509_NAME_cmp equal" : nil
    }

    /// A disagreement between ``PublicKeyImport/key(subjectPublicKeyInfo:)`` and OpenSSL's
    /// SubjectPublicKeyInfo decoder (`d2i_PUBKEY`) on `spki`, or nil when the import refuses the
    /// bytes or both make the same key: `d2i_PUBKEY` accepts all the bytes, `EVP_PKEY_eq` says
    /// equal, kind and size agree, and `i2d_PUBKEY` writes both keys as exactly `spki` (the
    /// imported key keeps `spki` as its ``PublicKey/derEncoded``).
    package static func publicKeyDisagreement(_ spki: [UInt8]) -> String? {
        guard let imported = PublicKeyImport.key(subjectPublicKeyInfo: spki[...]) else { return nil }
        let decoded: PublicKey
        do throws(CryptoError) {
            decoded = try PublicKey(subjectPublicKeyInfoDER: spki)
        } catch {
            return "d2i_PUBKEY rejects a key EVP_PKEY_fromdata accepts: \(error.reason)"
        }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard EVP_PKEY_eq(imported.evpKey, decoded.evpKey) == 1 else { return "EVP_PKEY_eq: the keys differ" }
        guard imported.kind == decoded.kind, imported.bits == decoded.bits else { return "the key kind or size differs" }
        let importedEncoding = encodeDER({ i2d_PUBKEY(imported.evpKey, $0) })
        guard importedEncoding == encodeDER({ i2d_PUBKEY(decoded.evpKey, $0) }) else { return "i2d_PUBKEY writes the keys differently" }
        guard importedEncoding == spki else { return "i2d_PUBKEY writes the imported key other than the bytes it was built from" }
        return nil
    }

    /// POSIX seconds of an `ASN1_TIME`, as OpenSSL reads it (`ASN1_TIME_to_tm`).
    private static func seconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let time else { return nil }
        var broken = tm()
        guard ASN1_TIME_to_tm(time, &broken) == 1 else { return nil }
        return Int64(timegm(&broken))
    }

    /// The DER element with tag `tag` and content `content`.
    private static func element(_ tag: UInt8, _ content: ArraySlice<UInt8>) -> [UInt8] {
        var length: [UInt8] = []
        var count = content.count
        if count < 0x80 {
            length = [UInt8(count)]
        } else {
            while count > 0 {
                length.insert(UInt8(count & 0xFF), at: 0)
                count >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + content
    }

    private static func stringBytes(_ string: UnsafePointer<ASN1_STRING>?) -> [UInt8]? {
        guard let string else { return nil }
        let length = Int(ASN1_STRING_length(string))
        guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    private static func stringBytes(_ string: UnsafeMutablePointer<ASN1_STRING>?) -> [UInt8]? {
        stringBytes(string.map { UnsafePointer($0) })
    }

    /// OpenSSL's `KU_*` flags (first octet in the low byte, decipherOnly at 0x8000) as RFC 5280
    /// bit numbers (bit n set for keyUsage bit n).
    private static func keyUsage(openSSLBits bits: UInt32) -> UInt16 {
        var usage: UInt16 = 0
        for bit in 0..<8 where bits & (0x80 >> UInt32(bit)) != 0 { usage |= 1 << UInt16(bit) }
        if bits & 0x8000 != 0 { usage |= 1 << 8 }
        return usage
    }
}
