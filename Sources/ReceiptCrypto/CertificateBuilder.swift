public import ASN1
internal import COpenSSL
public import Foundation

/// One X.509 v3 extension given by OID, criticality and the DER encoding of its value.
public struct CertificateExtension: Sendable, Hashable {
    /// The extension's OID.
    public var oid: ASN1ObjectIdentifier
    /// Whether the extension is marked critical.
    public var critical: Bool
    /// The DER encoding of the value (the contents of `extnValue`).
    public var value: [UInt8]

    /// Creates an extension.
    public init(oid: ASN1ObjectIdentifier, critical: Bool, value: [UInt8]) {
        self.oid = oid
        self.critical = critical
        self.value = value
    }

    /// A non-critical extension whose value is DER NULL (`05 00`), the form of Apple's marker
    /// extensions (`1.2.840.113635.100.6.11.1` on receipt-signing leaves,
    /// `1.2.840.113635.100.6.2.1` on WWDR intermediates).
    public static func marker(oid: ASN1ObjectIdentifier) -> CertificateExtension {
        CertificateExtension(oid: oid, critical: false, value: [0x05, 0x00])
    }
}

/// The basicConstraints extension (RFC 5280 section 4.2.1.9).
public struct BasicConstraints: Sendable, Hashable {
    /// `cA`.
    public var isCA: Bool
    /// `pathLenConstraint`, meaningful only for CAs.
    public var pathLength: Int?
    /// Whether the extension is marked critical.
    public var critical: Bool

    /// Creates the extension.
    public init(isCA: Bool, pathLength: Int? = nil, critical: Bool = true) {
        self.isCA = isCA
        self.pathLength = pathLength
        self.critical = critical
    }

    /// A CA certificate, optionally limited to `pathLength` intermediates below it.
    public static func ca(pathLength: Int? = nil, critical: Bool = true) -> BasicConstraints {
        BasicConstraints(isCA: true, pathLength: pathLength, critical: critical)
    }

    /// An end-entity certificate (`cA: FALSE`, critical).
    public static let endEntity = BasicConstraints(isCA: false)
}

/// Builds and signs X.509 v3 certificates, for test PKIs and the simulated App Store.
///
/// Set the properties, then call ``selfSigned(with:)`` for a root or
/// ``issued(by:signingKey:)`` for a certificate under an issuer. The result is re-parsed from its
/// DER encoding, so it is exactly what a verifier will see.
public struct CertificateBuilder: Sendable {
    /// Subject name components in encoding order as (short name or dotted OID, value), for example
    /// `[("C", "US"), ("O", "Test"), ("CN", "Test Root")]`. Values are encoded as UTF8String except
    /// where X.520 requires PrintableString (`C`).
    public var subject: [(String, String)]
    /// The serial number as unsigned big-endian bytes (at most 20 significant bytes, not zero).
    public var serialNumber: [UInt8]
    /// Start of validity.
    public var notBefore: Date
    /// End of validity.
    public var notAfter: Date
    /// The certified public key.
    public var publicKey: PublicKey
    /// The digest of the certificate signature (SHA-1 and SHA-256 are what Apple used).
    public var digest: DigestAlgorithm = .sha256
    /// basicConstraints, or nil to omit the extension.
    public var basicConstraints: BasicConstraints?
    /// keyUsage bits, or nil to omit the extension.
    public var keyUsage: KeyUsage?
    /// Whether keyUsage is marked critical.
    public var keyUsageCritical: Bool = true
    /// extendedKeyUsage purpose OIDs (non-critical); empty to omit the extension.
    public var extendedKeyUsageOIDs: [ASN1ObjectIdentifier] = []
    /// Whether to add subjectKeyIdentifier (SHA-1 of the public key bits) and
    /// authorityKeyIdentifier (the issuer's key identifier).
    public var includeKeyIdentifiers: Bool = true
    /// Further extensions, added after the standard ones in this order.
    public var customExtensions: [CertificateExtension] = []

    /// Creates a builder with the required fields; optional extensions start empty.
    public init(
        subject: [(String, String)],
        serialNumber: [UInt8],
        notBefore: Date,
        notAfter: Date,
        publicKey: PublicKey
    ) {
        self.subject = subject
        self.serialNumber = serialNumber
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.publicKey = publicKey
    }

    /// Creates a builder with a non-negative integer serial number.
    public init(
        subject: [(String, String)],
        serialNumber: UInt64,
        notBefore: Date,
        notAfter: Date,
        publicKey: PublicKey
    ) {
        var bytes: [UInt8] = []
        var value = serialNumber
        repeat {
            bytes.insert(UInt8(truncatingIfNeeded: value), at: 0)
            value >>= 8
        } while value > 0
        self.init(subject: subject, serialNumber: bytes, notBefore: notBefore, notAfter: notAfter, publicKey: publicKey)
    }

    /// Signs the certificate with its own key: issuer = subject. `key` must match ``publicKey``.
    /// - Throws: ``CryptoError/Code/keyMismatch`` if `key` is not the private half of
    ///   ``publicKey``, ``CryptoError/Code/invalidArgument`` for an invalid field.
    public func selfSigned(with key: PrivateKey) throws(CryptoError) -> Certificate {
        guard try key.publicKey == publicKey else {
            throw .plain(.keyMismatch, "the signing key does not match the certificate's public key")
        }
        return try build(issuer: nil, signingKey: key)
    }

    /// Signs the certificate as `issuer`, whose private key is `signingKey`.
    /// - Throws: ``CryptoError/Code/keyMismatch`` if `signingKey` does not belong to `issuer`.
    public func issued(by issuer: Certificate, signingKey: PrivateKey) throws(CryptoError) -> Certificate {
        OpenSSLErrorQueue.clear()
        guard X509_check_private_key(issuer.handle.pointer, signingKey.handle.pointer) == 1 else {
            throw .openSSL(.keyMismatch, "the signing key does not belong to the issuer certificate")
        }
        return try build(issuer: issuer, signingKey: signingKey)
    }

    private func build(issuer: Certificate?, signingKey: PrivateKey) throws(CryptoError) -> Certificate {
        guard !digest.isRefusedForSignatures else {
            throw .plain(.unsupportedAlgorithm, "refusing to sign a certificate with \(digest)")
        }
        guard notBefore <= notAfter else {
            throw .plain(.invalidArgument, "notBefore is later than notAfter")
        }
        let md = try digest.evpMD()
        OpenSSLErrorQueue.clear()
        guard let x509 = X509_new() else { throw .allocation("a certificate") }
        defer { X509_free(x509) }

        guard X509_set_version(x509, 2) == 1 else { throw .openSSL(.operationFailed, "X509_set_version failed") }
        try setSerial(x509)

        let name = try makeName()
        defer { X509_NAME_free(name) }
        guard X509_set_subject_name(x509, name) == 1 else {
            throw .openSSL(.operationFailed, "X509_set_subject_name failed")
        }
        let issuerName = issuer.map { X509_get_subject_name($0.handle.pointer) } ?? name
        guard X509_set_issuer_name(x509, issuerName) == 1 else {
            throw .openSSL(.operationFailed, "X509_set_issuer_name failed")
        }

        let start = try TimeConversion.asn1Time(notBefore)
        defer { ASN1_TIME_free(start) }
        let end = try TimeConversion.asn1Time(notAfter)
        defer { ASN1_TIME_free(end) }
        guard X509_set1_notBefore(x509, start) == 1, X509_set1_notAfter(x509, end) == 1 else {
            throw .openSSL(.operationFailed, "could not set the validity period")
        }
        guard X509_set_pubkey(x509, publicKey.handle.pointer) == 1 else {
            throw .openSSL(.operationFailed, "X509_set_pubkey failed")
        }

        for ext in try extensions(for: x509, issuer: issuer) {
            try add(ext, to: x509)
        }

        guard X509_sign(x509, signingKey.handle.pointer, md) > 0 else {
            throw .openSSL(.operationFailed, "X509_sign failed")
        }
        guard let der = encodeDER({ i2d_X509(x509, $0) }) else {
            throw .openSSL(.operationFailed, "i2d_X509 failed")
        }
        return try Certificate(derEncoded: der)
    }

    private func setSerial(_ x509: OpaquePointer) throws(CryptoError) {
        let significant = Array(serialNumber.drop { $0 == 0 })
        guard !significant.isEmpty, significant.count <= 20 else {
            throw .plain(.invalidArgument, "the serial number must be 1 to 20 significant bytes and not zero")
        }
        guard let number = BN_bin2bn(significant, Int32(significant.count), nil) else {
            throw .allocation("a big number")
        }
        defer { BN_free(number) }
        guard let integer = BN_to_ASN1_INTEGER(number, nil) else { throw .allocation("an ASN1_INTEGER") }
        defer { ASN1_INTEGER_free(integer) }
        guard X509_set_serialNumber(x509, integer) == 1 else {
            throw .openSSL(.operationFailed, "X509_set_serialNumber failed")
        }
    }

    private func makeName() throws(CryptoError) -> OpaquePointer {
        guard !subject.isEmpty else { throw .plain(.invalidArgument, "the subject name is empty") }
        guard let name = X509_NAME_new() else { throw .allocation("a name") }
        for (field, value) in subject {
            let bytes = Array(value.utf8)
            guard !bytes.isEmpty, bytes.count < Int(Int32.max) else {
                X509_NAME_free(name)
                throw .plain(.invalidArgument, "empty value for name attribute \(field)")
            }
            let added = X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0)
            guard added == 1 else {
                X509_NAME_free(name)
                throw .openSSL(.invalidArgument, "OpenSSL rejected name attribute \(field)=\(value)")
            }
        }
        return name
    }

    private func extensions(for x509: OpaquePointer, issuer: Certificate?) throws(CryptoError) -> [CertificateExtension] {
        var result: [CertificateExtension] = []
        if let basicConstraints {
            guard (basicConstraints.pathLength ?? 0) >= 0 else { throw .plain(.invalidArgument, "negative path length") }
            var value = DERWriter()
            value.appendSequence { fields in
                if basicConstraints.isCA { fields.appendBoolean(true) }
                if let pathLength = basicConstraints.pathLength { fields.appendInteger(pathLength) }
            }
            result.append(CertificateExtension(oid: ExtensionOID.basicConstraints, critical: basicConstraints.critical, value: value.bytes))
        }
        if let keyUsage {
            result.append(CertificateExtension(oid: ExtensionOID.keyUsage, critical: keyUsageCritical, value: keyUsage.namedBitString))
        }
        if !extendedKeyUsageOIDs.isEmpty {
            var value = DERWriter()
            value.appendSequence { purposes in
                for oid in extendedKeyUsageOIDs { purposes.appendObjectIdentifier(oid) }
            }
            result.append(CertificateExtension(oid: ExtensionOID.extendedKeyUsage, critical: false, value: value.bytes))
        }
        if includeKeyIdentifiers {
            let subjectKeyID = try keyIdentifier(of: x509)
            var subjectValue = DERWriter()
            subjectValue.appendOctetString(subjectKeyID)
            result.append(CertificateExtension(oid: ExtensionOID.subjectKeyIdentifier, critical: false, value: subjectValue.bytes))
            let authorityKeyID: [UInt8]
            if let issuer {
                if let existing = X509_get0_subject_key_id(issuer.handle.pointer) {
                    authorityKeyID = asn1StringBytes(existing)
                } else {
                    authorityKeyID = try keyIdentifier(of: issuer.handle.pointer)
                }
            } else {
                authorityKeyID = subjectKeyID
            }
            // AuthorityKeyIdentifier ::= SEQUENCE { keyIdentifier [0] IMPLICIT OCTET STRING }
            var authorityValue = DERWriter()
            authorityValue.appendSequence { $0.append(.contextSpecific(0, constructed: false), content: authorityKeyID) }
            result.append(CertificateExtension(oid: ExtensionOID.authorityKeyIdentifier, critical: false, value: authorityValue.bytes))
        }
        result.append(contentsOf: customExtensions)
        var seen = Set<ASN1ObjectIdentifier>()
        for ext in result where !seen.insert(ext.oid).inserted {
            throw .plain(.invalidArgument, "extension \(ext.oid) appears twice")
        }
        return result
    }

    /// RFC 5280 method 1: SHA-1 of the subjectPublicKey BIT STRING contents.
    private func keyIdentifier(of x509: OpaquePointer) throws(CryptoError) -> [UInt8] {
        let md = try DigestAlgorithm.sha1.evpMD()
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_pubkey_digest(x509, md, &output, &length) == 1, length == 20 else {
            throw .openSSL(.operationFailed, "X509_pubkey_digest failed")
        }
        return Array(output.prefix(Int(length)))
    }

    private func add(_ ext: CertificateExtension, to x509: OpaquePointer) throws(CryptoError) {
        let object = try OwnedASN1Object(ext.oid)
        guard ext.value.count < Int(Int32.max) else { throw .plain(.invalidArgument, "extension value too large") }
        guard let octets = ASN1_OCTET_STRING_new() else { throw .allocation("an OCTET STRING") }
        defer { ASN1_OCTET_STRING_free(octets) }
        let set = withNonNullBytes(ext.value) { base, count in ASN1_OCTET_STRING_set(octets, base, Int32(count)) }
        guard set == 1 else { throw .openSSL(.operationFailed, "ASN1_OCTET_STRING_set failed") }
        guard let created = X509_EXTENSION_create_by_OBJ(nil, object.pointer, ext.critical ? 1 : 0, octets) else {
            throw .openSSL(.operationFailed, "X509_EXTENSION_create_by_OBJ failed for \(ext.oid)")
        }
        defer { X509_EXTENSION_free(created) }
        guard X509_add_ext(x509, created, -1) == 1 else {
            throw .openSSL(.operationFailed, "X509_add_ext failed for \(ext.oid)")
        }
    }
}

/// The standard extensions the builder writes (RFC 5280 section 4.2.1).
enum ExtensionOID {
    static let subjectKeyIdentifier = ASN1ObjectIdentifier(2, 5, 29, 14)
    static let keyUsage = ASN1ObjectIdentifier(2, 5, 29, 15)
    static let basicConstraints = ASN1ObjectIdentifier(2, 5, 29, 19)
    static let authorityKeyIdentifier = ASN1ObjectIdentifier(2, 5, 29, 35)
    static let extendedKeyUsage = ASN1ObjectIdentifier(2, 5, 29, 37)
}

extension KeyUsage {
    /// The keyUsage extension's value: a BIT STRING for a NamedBitList, trailing zero bits removed
    /// as DER requires.
    var namedBitString: [UInt8] {
        var writer = DERWriter()
        guard let highest = bitNumbers.max() else {
            writer.appendBitString([])
            return writer.bytes
        }
        var octets = [UInt8](repeating: 0, count: highest / 8 + 1)
        for bit in bitNumbers {
            octets[bit / 8] |= 0x80 >> UInt8(bit % 8)
        }
        writer.appendBitString(octets, unusedBits: UInt8(7 - highest % 8))
        return writer.bytes
    }
}
