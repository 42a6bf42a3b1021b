internal import COpenSSL
import Internals

/// Path validation without OpenSSL's certificate parser, for the chains it can fully judge; every
/// other chain, and every chain it cannot establish, goes to `X509_verify_cert` (``TrustStore``),
/// which then decides and explains. It only ever says "valid", so the verdict is never looser
/// than OpenSSL's as long as everything it accepts OpenSSL accepts too (a differential test
/// checks this on every test PKI and real chain).
///
/// A chain is established when, with the certificates read by ``CertificateFields``:
/// - the path is found the way OpenSSL's trusted-first search finds it: each certificate's issuer
///   is the first anchor, else the first candidate, whose subject equals its issuer name byte for
///   byte and whose subjectKeyIdentifier (when both are present) equals its
///   authorityKeyIdentifier; no self-issued leaf or intermediate, no certificate twice, at most
///   `maximumIntermediates` intermediates, and the path ends at an anchor (no partial chains);
/// - OpenSSL verifies every certificate's signature below the anchor with its issuer's key
///   (`EVP_DigestVerify` over the TBSCertificate bytes), the TBSCertificate's algorithm is the
///   outer one byte for byte, and it is ecdsa-with-SHA256/384 under an EC key or
///   sha256/384WithRSAEncryption under an RSA key;
/// - every certificate, the anchor included, is valid at the time (notBefore inclusive, notAfter
///   exclusive, as ``TrustStore`` documents);
/// - every issuer (the anchor included) has basicConstraints cA TRUE, keyUsage (when present)
///   with keyCertSign, and a pathLenConstraint (when present) not below the intermediates under
///   it; no keyUsage is empty;
/// - the anchor is self-issued, its key identifiers agree and its algorithm matches its key;
/// - every extension is one this path knows: basicConstraints, keyUsage, extKeyUsage and
///   certificatePolicies (which may be critical), key identifiers, CRL distribution points,
///   subjectAltName, authorityInfoAccess (read by OpenSSL's decoders and refused when they do
///   not decode) and Apple's private extensions (1.2.840.113635.100.6); nothing else.
enum ChainFastPath {
    /// The validated path leaf first and anchor last, or nil when this path does not establish it.
    static func validate(
        leaf: Certificate, intermediates: [Certificate], anchors: [Certificate], at seconds: Int, maximumIntermediates: Int
    )
        -> [Certificate]?
    {
        var anchorFields: [CertificateFields] = []
        for anchor in anchors {
            guard let fields = fields(of: anchor) else { return nil }
            anchorFields.append(fields)
        }
        guard let leafFields = fields(of: leaf), !anchors.contains(leaf), !selfIssued(leaf, leafFields) else { return nil }
        var chain: [Link] = [Link(certificate: leaf, fields: leafFields)]
        while true {
            guard let current = chain.last else { return nil }
            // Trusted first, as OpenSSL searches: exactly one anchor may stand as the issuer.
            let trusted = anchors.indices.filter { candidate(anchors[$0], anchorFields[$0], of: current) != .no }
            if let index = trusted.first {
                let anchor = Link(certificate: anchors[index], fields: anchorFields[index])
                guard trusted.count == 1, candidate(anchor.certificate, anchor.fields, of: current) == .exactly,
                    verifies(current, issuer: anchor), anchorIsSound(anchor)
                else { return nil }
                chain.append(anchor)
                break
            }
            // Then the first untrusted candidate, which must match byte for byte.
            var next: Link?
            for certificate in intermediates {
                // A candidate the own reader cannot read may still be the one OpenSSL picks first:
                // leave the whole chain to OpenSSL.
                guard let fields = fields(of: certificate) else { return nil }
                let match = candidate(certificate, fields, of: current)
                if match == .no { continue }
                guard match == .exactly else { return nil }
                next = Link(certificate: certificate, fields: fields)
                break
            }
            guard let next, chain.count - 1 < min(max(maximumIntermediates, 0), 32), !selfIssued(next.certificate, next.fields),
                !chain.contains(where: { $0.certificate == next.certificate }), verifies(current, issuer: next)
            else { return nil }
            chain.append(next)
        }
        for (index, link) in chain.enumerated() {
            let fields = link.fields
            guard Int64(seconds) >= fields.notBefore, Int64(seconds) < fields.notAfter, fields.keyUsage != [],
                extensionsKnown(link.certificate.derEncoded, fields)
            else { return nil }
            if index > 0 {
                guard fields.hasBasicConstraints, fields.isCA, fields.keyUsage?.contains(.keyCertSign) ?? true else { return nil }
                if let limit = fields.pathLength, index >= 2, index - 1 > limit { return nil }
            }
        }
        return chain.map(\.certificate)
    }

    private struct Link {
        var certificate: Certificate
        var fields: CertificateFields
    }

    private enum Match { case no, exactly, byOpenSSLOnly }

    /// Whether `issuer` is a candidate issuer of `link` as OpenSSL judges it: its subject equals
    /// `link`'s issuer name (``Match/exactly`` byte for byte; ``Match/byOpenSSLOnly`` when only
    /// OpenSSL's canonical comparison says so) and the key identifiers agree when both are present.
    private static func candidate(_ issuer: Certificate, _ issuerFields: CertificateFields, of link: Link) -> Match {
        let der = link.certificate.derEncoded
        if let authority = link.fields.authorityKeyID, let subject = issuerFields.subjectKeyID,
            !bytesEqual(der[authority], issuer.derEncoded[subject])
        {
            return .no
        }
        let issuerName = der[link.fields.issuer]
        let subjectName = issuer.derEncoded[issuerFields.subject]
        if bytesEqual(subjectName, issuerName) { return .exactly }
        return canonicallyEqual(subjectName, issuerName) ? .byOpenSSLOnly : .no
    }

    /// OpenSSL's comparison of two names (`X509_NAME_cmp` of their canonical encodings), asked
    /// only when ``NameDifference`` cannot already tell that they differ.
    private static func canonicallyEqual(_ lhs: ArraySlice<UInt8>, _ rhs: ArraySlice<UInt8>) -> Bool {
        if NameDifference.certain(lhs, rhs) { return false }
        func name(_ der: ArraySlice<UInt8>) -> OpaquePointer? {
            withNonNullBytes(der) { base, count in
                var cursor: UnsafePointer<UInt8>? = base
                return d2i_X509_NAME(nil, &cursor, count)
            }
        }
        let left = name(lhs)
        let right = name(rhs)
        defer {
            if let left { X509_NAME_free(left) }
            if let right { X509_NAME_free(right) }
            OpenSSLErrorQueue.clear()
        }
        // A name OpenSSL cannot read is treated as equal: the caller then leaves the chain to OpenSSL.
        guard let left, let right else { return true }
        return X509_NAME_cmp(left, right) == 0
    }

    private static func fields(of certificate: Certificate) -> CertificateFields? {
        certificate.fields ?? CertificateFields.parse(certificate.derEncoded)
    }

    /// Self-issued as OpenSSL judges it (canonical name comparison).
    private static func selfIssued(_ certificate: Certificate, _ fields: CertificateFields) -> Bool {
        let der = certificate.derEncoded
        return bytesEqual(der[fields.subject], der[fields.issuer]) || canonicallyEqual(der[fields.subject], der[fields.issuer])
    }

    private enum KeyType { case ec, rsa }

    /// The digest and key type of a certificate signature algorithm this path verifies.
    private static func verifiedAlgorithm(_ der: [UInt8], _ fields: CertificateFields) -> (DigestAlgorithm, KeyType)? {
        let oid = der[fields.algorithmOID]
        let ecdsa: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03]
        let rsa: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01]
        let parameters = fields.algorithmParameters.map { der[$0] }
        if oid.count == 8, oid.starts(with: ecdsa), parameters == nil {
            switch oid.last {
            case 0x02: return (.sha256, .ec)
            case 0x03: return (.sha384, .ec)
            default: return nil
            }
        }
        if oid.count == 9, oid.starts(with: rsa), parameters == nil || parameters.map({ $0.elementsEqual([0x05, 0x00]) }) == true {
            switch oid.last {
            case 0x0B: return (.sha256, .rsa)
            case 0x0C: return (.sha384, .rsa)
            default: return nil
            }
        }
        return nil
    }

    /// Whether OpenSSL verifies `link`'s signature with `issuer`'s key.
    private static func verifies(_ link: Link, issuer: Link) -> Bool {
        let der = link.certificate.derEncoded
        let fields = link.fields
        guard bytesEqual(der[fields.innerAlgorithm], der[fields.outerAlgorithm]),
            let (digest, type) = verifiedAlgorithm(der, fields), let key = try? issuer.certificate.publicKey,
            keyType(key) == type
        else { return false }
        return key.verify(signature: der[fields.signature], over: der[fields.tbs], digest: digest)
    }

    private static func keyType(_ key: PublicKey) -> KeyType? {
        switch key.kind {
        case .ec: .ec
        case .rsa: .rsa
        case .other: nil
        }
    }

    /// The anchor is what OpenSSL trusts without partial chains: self-issued with agreeing key
    /// identifiers (self-signed, in OpenSSL's words; its signature is not checked) and an
    /// algorithm that matches its key.
    private static func anchorIsSound(_ anchor: Link) -> Bool {
        let der = anchor.certificate.derEncoded
        let fields = anchor.fields
        guard bytesEqual(der[fields.subject], der[fields.issuer]),
            let key = try? anchor.certificate.publicKey
        else { return false }
        if let authority = fields.authorityKeyID, let subject = fields.subjectKeyID, !bytesEqual(der[authority], der[subject]) {
            return false
        }
        let oid = der[fields.algorithmOID]
        let ecdsa: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03]
        let rsa: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01]
        switch keyType(key) {
        case .ec: return oid.count == 8 && oid.starts(with: ecdsa) && (0x02...0x04).contains(oid.last ?? 0)
        case .rsa: return oid.count == 9 && oid.starts(with: rsa) && [0x05, 0x0B, 0x0C, 0x0D].contains(oid.last ?? 0)
        case nil: return false
        }
    }

    /// Whether every extension is one this path knows (see the type's documentation), with
    /// OpenSSL's decoders accepting those OpenSSL reads.
    private static func extensionsKnown(_ der: [UInt8], _ fields: CertificateFields) -> Bool {
        let apple: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x63, 0x64, 0x06]
        let authorityInfoAccess: [UInt8] = [0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x01, 0x01]
        for item in fields.extensions {
            let oid = der[item.oid]
            let value = der[item.value]
            if oid.count == 3, oid.starts(with: [0x55, 0x1D]), let last = oid.last {
                switch last {
                case 19, 15, 37: continue  // basicConstraints, keyUsage, extKeyUsage: read by CertificateFields
                case 14 where !item.critical, 35 where !item.critical: continue  // key identifiers: read by CertificateFields
                case 32: guard decodes(value, d2i_CERTIFICATEPOLICIES, CERTIFICATEPOLICIES_free) else { return false }
                case 31 where !item.critical: guard decodes(value, d2i_CRL_DIST_POINTS, CRL_DIST_POINTS_free) else { return false }
                case 17 where !item.critical: guard decodes(value, d2i_GENERAL_NAMES, GENERAL_NAMES_free) else { return false }
                default: return false
                }
            } else if !item.critical, oid.elementsEqual(authorityInfoAccess) {
                guard decodes(value, d2i_AUTHORITY_INFO_ACCESS, AUTHORITY_INFO_ACCESS_free) else { return false }
            } else if !item.critical, oid.count > apple.count, oid.starts(with: apple) {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Whether OpenSSL's decoder reads exactly `value`.
    private static func decodes(
        _ value: ArraySlice<UInt8>,
        _ decode: (UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, Int) -> OpaquePointer?,
        _ free: (OpaquePointer?) -> Void
    ) -> Bool {
        let consumedAll = withNonNullBytes(value) { base, count in
            var cursor: UnsafePointer<UInt8>? = base
            guard let decoded = decode(nil, &cursor, count) else { return false }
            free(decoded)
            return cursor.map { $0 - base } == count
        }
        OpenSSLErrorQueue.clear()
        return consumedAll
    }
}
