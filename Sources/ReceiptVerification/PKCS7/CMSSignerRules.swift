@_spi(RawParsing) import ASN1
import Foundation
import Internals
import ReceiptCrypto
import Receipts

/// The rules for the one signer of a PKCS#7 (CMS, RFC 5652) SignedData, as Apple signs app
/// receipts: every check a format signed this way records, in this order (cheapest and most
/// structural first): content type id-data → exactly one SignerInfo → digest (known, not MD5,
/// allowed, listed in SignedData) → the signer certificate among the embedded certificates by
/// issuer and serial number (or subject key identifier) → signature algorithm consistent with key
/// and digest, key size → signed attributes (content type, messageDigest = H(payload)) → the
/// signature over exactly the payload the parser read.
struct CMSSignerRules: Sendable {
    /// The digests accepted in the SignerInfo. MD5 is refused even when listed.
    var allowedDigests: Set<DigestAlgorithm> {
        get { storedDigests }
        set {
            storedDigests = newValue.subtracting([.md5])
            allowedDigestBits = Self.bits(of: storedDigests)
        }
    }
    /// The smallest RSA modulus accepted for the signer key. Values below 2048 are raised to 2048.
    var minimumRSAKeyBits: Int {
        get { storedMinimumRSAKeyBits }
        set { storedMinimumRSAKeyBits = max(Self.rsaFloor, newValue) }
    }
    private var storedDigests: Set<DigestAlgorithm>
    /// ``allowedDigests`` as one bit per digest, so each verification tests a bit instead of
    /// hashing the digest's name for the set.
    private var allowedDigestBits: UInt8
    private var storedMinimumRSAKeyBits: Int

    static let rsaFloor = 2048
    static let ecFloor = 256

    /// The rules with the digests and the RSA key size allowed.
    init(allowedDigests: Set<DigestAlgorithm>, minimumRSAKeyBits: Int) {
        storedDigests = allowedDigests.subtracting([.md5])
        allowedDigestBits = Self.bits(of: storedDigests)
        storedMinimumRSAKeyBits = max(Self.rsaFloor, minimumRSAKeyBits)
    }

    /// Every check ``checkSignature(of:policy:in:)`` records when the signature verifies.
    static let requiredChecks: [VerificationCheck.Name] = [
        .contentType, .signerCount, .digestAlgorithm, .signerCertificate, .signatureAlgorithm, .signerKey, .signedAttributes, .signature,
    ]

    /// The checks of `envelope`'s one signer, recorded in `run`: what signed it, for the chain
    /// (the other embedded certificates are the chain's untrusted candidates), when the signer
    /// was found.
    func checkSignature(of envelope: ReceiptEnvelope, policy: VerificationPolicy, in run: inout VerificationRun) -> SignedBy? {
        let contentType = envelope.contentType
        if contentType == ReceiptOID.data {
            run.record(.contentType, true, "id-data")  // a constant reason: no closure to allocate
        } else {
            run.record(.contentType, false, "the signed content type is \(contentType), not id-data (1.2.840.113549.1.7.1)")
        }

        // Exactly one SignerInfo.
        let signerCount = envelope.signers.count
        guard signerCount == 1, let signer = envelope.signers.first else {
            run.record(.signerCount, false, "the SignedData has \(signerCount) SignerInfos; exactly one is required")
            return nil
        }
        run.record(.signerCount, true, "one SignerInfo")

        // The digest algorithm.
        let (digest, digestReason) = checkDigest(signer, envelope)
        run.record(.digestAlgorithm, digest != nil, written: digestReason)

        // The signer certificate: found by the identifier in Swift, parsed by OpenSSL (or cached).
        let located = locateSigner(signer, in: envelope.certificates)
        guard let signerIndex = located.index, envelope.certificates.indices.contains(signerIndex) else {
            run.record(.signerCertificate, false, written: located.reason)
            return nil
        }
        let parsed: SignerCertificate
        switch run.signerCertificate(envelope.certificates[signerIndex]) {
        case .failure(let error):
            run.record(.signerCertificate, false, "embedded certificate #\(signerIndex), the signer's, cannot be parsed: \(error.reason)")
            return nil
        case .success(let certificate):
            parsed = certificate
        }
        run.record(.signerCertificate, true, template: .embeddedCertificate(signerIndex, parsed))
        let algorithm = checkKeyAndSignature(
            signer, key: parsed, digest: digest, payload: envelope.payload, contentType: contentType, in: &run)
        return SignedBy(
            signer: parsed, certificates: envelope.certificates, signerIndex: signerIndex, policy: policy,
            signature: SignatureSummary(algorithm: algorithm ?? .rsaPKCS1v15(digest)))
    }

    /// The SignerInfo's digest: a known digest OID (not a signature OID), not MD5, allowed,
    /// with absent or NULL parameters, listed in SignedData.digestAlgorithms.
    private func checkDigest(_ signer: SignerInfo, _ envelope: ReceiptEnvelope) -> (digest: DigestAlgorithm?, reason: String) {
        let algorithm = signer.digestAlgorithm
        guard let digest = Self.digest(oid: algorithm.oid) else {
            return (nil, "the digest algorithm \(algorithm.oid) is not a known digest")
        }
        guard !digest.isRefusedForSignatures else {
            return (nil, "the digest algorithm is MD5, which is refused")
        }
        guard allowedDigestBits & Self.bit(of: digest) != 0 else {
            return (nil, "the digest algorithm \(digest) is not allowed by this verifier")
        }
        if let parameters = algorithm.parameters, !parameters.elementsEqual([0x05, 0x00]) {
            return (nil, "the digest algorithm \(digest) has parameters other than NULL")
        }
        let listed = envelope.digestAlgorithms
        guard listed.indices.contains(where: { listed[$0].oid == algorithm.oid }) else {
            return (nil, "the digest algorithm \(digest) is not listed in SignedData.digestAlgorithms")
        }
        return (digest, digest.description)
    }

    /// One bit per digest algorithm.
    private static func bit(of digest: DigestAlgorithm) -> UInt8 {
        switch digest {
        case .sha1: 1
        case .sha256: 2
        case .sha384: 4
        case .sha512: 8
        case .md5: 16
        }
    }

    /// The bits of a set of digests.
    private static func bits(of digests: Set<DigestAlgorithm>) -> UInt8 {
        digests.reduce(0) { $0 | bit(of: $1) }
    }

    /// Digest OIDs (not signature OIDs), built once: a handful, so a scan comparing bytes is
    /// cheaper than hashing the OID for a dictionary.
    static let digestsByOID: [KnownOID<DigestAlgorithm>] = DigestAlgorithm.allCases.map { KnownOID(oid: $0.oid, value: $0) }

    /// Signature algorithm OIDs, built once (scanned like ``digestsByOID``).
    static let signatureAlgorithmsByOID: [KnownOID<SignatureAlgorithm>] = {
        var table: [KnownOID<SignatureAlgorithm>] = []
        let digests: [DigestAlgorithm?] = [nil] + DigestAlgorithm.allCases.map { $0 }
        for digest in digests {
            for algorithm in [SignatureAlgorithm.rsaPKCS1v15(digest)] + (digest.map { [SignatureAlgorithm.ecdsa($0)] } ?? []) {
                if let oid = algorithm.oid { table.append(KnownOID(oid: oid, value: algorithm)) }
            }
        }
        return table
    }()

    /// The digest whose OID is `oid`, if known.
    static func digest(oid: ASN1ObjectIdentifier) -> DigestAlgorithm? { KnownOID.find(oid, in: digestsByOID) }

    /// The signature algorithm whose OID is `oid`, if known.
    static func signatureAlgorithm(oid: ASN1ObjectIdentifier) -> SignatureAlgorithm? { KnownOID.find(oid, in: signatureAlgorithmsByOID) }

    /// The index of the one embedded certificate the SignerInfo names, found by reading each
    /// certificate's issuer, serial number and key identifier in Swift.
    private func locateSigner(_ signer: SignerInfo, in certificates: [ArraySlice<UInt8>]) -> (index: Int?, reason: String) {
        guard !certificates.isEmpty else { return (nil, "the receipt embeds no certificates") }
        // The first match, and the first later match that differs from it byte for byte
        // (byte-identical duplicates are harmless; two different certificates with one name are
        // not). Every certificate is read: one that is not a certificate fails first.
        var first: Int?
        var conflict: Int?
        let identifier = signer.signerIdentifier
        // Taken apart once, not once per certificate.
        var byIssuer = false
        var issuer: ArraySlice<UInt8> = []
        var serialNumber: ArraySlice<UInt8> = []
        if case .issuerAndSerialNumber(let named, let serial) = identifier {
            byIssuer = true
            issuer = named
            serialNumber = serial
        }
        for index in certificates.indices {
            do throws(ASN1Error) {
                let matched =
                    if byIssuer {
                        try CertificateIdentity.certificate(certificates[index], issuer: issuer, serialNumber: serialNumber)
                    } else {
                        try CertificateIdentity.certificate(certificates[index], matches: identifier)
                    }
                if matched {
                    if let first {
                        if conflict == nil, !bytesEqual(certificates[index], certificates[first]) { conflict = index }
                    } else {
                        first = index
                    }
                }
            } catch {
                return (nil, "embedded certificate #\(index - certificates.startIndex) is not a DER X.509 certificate: \(error.reason)")
            }
        }
        guard let first else {
            let named: String
            switch signer.signerIdentifier {
            case .issuerAndSerialNumber(_, let serial): named = "issuer and serial number \(Hex.encode(serial))"
            case .subjectKeyIdentifier(let identifier): named = "subject key identifier \(Hex.encode(identifier))"
            }
            return (nil, "no embedded certificate matches the signer's \(named)")
        }
        if let other = conflict {
            return (nil, "embedded certificates #\(first) and #\(other) differ but both match the signer identifier")
        }
        return (first, "")
    }

    /// Signature algorithm, key strength, signed attributes and the signature itself. Returns the
    /// algorithm when the signature verified.
    private func checkKeyAndSignature(
        _ signer: SignerInfo, key: SignerCertificate, digest: DigestAlgorithm?, payload: ArraySlice<UInt8>,
        contentType: ASN1ObjectIdentifier, in run: inout VerificationRun
    ) -> SignatureAlgorithm? {
        guard let publicKey = key.publicKey, let kind = key.keyKind else {
            run.record(.signerKey, false, "OpenSSL cannot decode the signer certificate's public key")
            return nil
        }
        // Signature algorithm: known, same key family, same digest when it names one.
        let algorithmOID = signer.signatureAlgorithm.oid
        var algorithm: SignatureAlgorithm?
        if let named = Self.signatureAlgorithm(oid: algorithmOID) {
            let consistent: Bool
            switch (named, kind) {
            case (.rsaPKCS1v15(let namedDigest), .rsa): consistent = namedDigest == nil || namedDigest == digest
            case (.ecdsa(let namedDigest), .ec): consistent = namedDigest == digest
            default: consistent = false
            }
            let keyFamilyFits: Bool
            switch (named, kind) {
            case (.rsaPKCS1v15, .rsa), (.ecdsa, .ec): keyFamilyFits = true
            default: keyFamilyFits = false
            }
            if consistent {
                run.record(.signatureAlgorithm, true, template: .algorithm(named))
                algorithm = named
            } else {
                run.record(
                    .signatureAlgorithm, false,
                    keyFamilyFits
                        ? "\(named) names a different digest than the SignerInfo (\(digest.map { "\($0)" } ?? "none"))"
                        : "\(named) does not fit the signer's \(kind) key")
            }
        } else {
            run.record(.signatureAlgorithm, false, "the signature algorithm \(algorithmOID) is not supported")
        }
        // Key strength.
        switch kind {
        case .rsa(let bits):
            let minimum = minimumRSAKeyBits
            if bits >= minimum {
                run.record(.signerKey, true, template: .rsaKey(bits))
            } else {
                run.record(.signerKey, false, "the signer's RSA key has \(bits) bits; at least \(minimum) are required")
            }
        case .ec(let curve):
            let bits = key.keyBits
            let strong = bits >= Self.ecFloor
            run.record(
                .signerKey, strong,
                strong ? "EC \(curve)" : "the signer's EC key on \(curve) has \(bits) bits; at least \(Self.ecFloor) are required")
        case .other(let name):
            run.record(.signerKey, false, "the signer's \(name) key is not supported")
        }
        guard let digest else { return nil }

        // Signed attributes, if present: content type id-data and messageDigest = H(payload).
        var signedBytes: [UInt8]?
        if let attributes = signer.signedAttributesEncoded {
            let result = checkSignedAttributes(signer, digest: digest, payload: payload, contentType: contentType)
            run.record(.signedAttributes, result.passed, written: result.reason)
            guard result.passed, let first = attributes.first, first == 0xA0 else { return nil }
            var retagged = Array(attributes)
            retagged[0] = 0x31  // [0] IMPLICIT → SET OF, as RFC 5652 §5.4 specifies for the signature input
            signedBytes = retagged
        } else {
            run.record(.signedAttributes, true, "none; the signature covers the payload directly")
        }

        let verified: Bool
        if let signedBytes {
            verified = publicKey.verify(signature: signer.signature, over: signedBytes[...], digest: digest)
        } else {
            verified = publicKey.verify(signature: signer.signature, over: payload, digest: digest)
        }
        // Written when read: the payload's size, not a String made now.
        let payloadSize = signedBytes == nil ? payload.count : nil
        run.record(.signature, verified, template: .signature(digest, verified: verified, payloadSize: payloadSize))
        return verified ? algorithm : nil
    }

    private func checkSignedAttributes(
        _ signer: SignerInfo, digest: DigestAlgorithm, payload: ArraySlice<UInt8>, contentType: ASN1ObjectIdentifier
    ) -> (passed: Bool, reason: String) {
        // One pass over the attributes (no filtered copies): the contentType and messageDigest
        // attributes, counted.
        var contentTypes = 0
        var digests = 0
        var typeValues: [ArraySlice<UInt8>] = []
        var digestValues: [ArraySlice<UInt8>] = []
        for attribute in signer.signedAttributes {
            if attribute.type == ReceiptOID.contentTypeAttribute {
                contentTypes += 1
                typeValues = attribute.values
            } else if attribute.type == ReceiptOID.messageDigestAttribute {
                digests += 1
                digestValues = attribute.values
            }
        }
        guard contentTypes == 1, typeValues.count == 1, let typeValue = typeValues.first else {
            return (false, "the signed attributes must hold exactly one contentType attribute with one value")
        }
        do throws(ASN1Error) {
            let oid = try Self.objectIdentifier(typeValue)
            guard oid == contentType else {
                return (false, "the contentType attribute says \(oid), the content is \(contentType)")
            }
        } catch {
            return (false, "the contentType attribute is malformed: \(error.reason)")
        }
        guard digests == 1, digestValues.count == 1, let messageDigest = digestValues.first.flatMap(Self.octets) else {
            return (false, "the signed attributes must hold exactly one well-formed messageDigest attribute")
        }
        let computed: [UInt8]
        do throws(CryptoError) {
            computed = try Digest.hash(digest, payload)
        } catch {
            return (false, "cannot compute the \(digest) of the payload: \(error.reason)")
        }
        guard bytesEqual(messageDigest, computed[...]) else {
            return (false, "messageDigest \(Hex.encode(messageDigest)) differs from the payload's \(digest) \(Hex.encode(computed))")
        }
        return (true, "contentType id-data and messageDigest = \(digest)(payload)")
    }

    /// The OBJECT IDENTIFIER a signed attribute value holds (the whole DER element, nothing after
    /// it): a short-form element read in place, anything else by the general reader (which
    /// reports what is wrong).
    static func objectIdentifier(_ element: ArraySlice<UInt8>) throws(ASN1Error) -> ASN1ObjectIdentifier {
        let short = element.withUnsafeBytes { raw -> Range<Int>? in
            guard let content = DERFraming.content(raw, tag: 0x06, at: 0, end: raw.count), content.upperBound == raw.count else {
                return nil
            }
            return content
        }
        if let content = short {
            return try ASN1ObjectIdentifier(
                validatingContent: element[(element.startIndex + content.lowerBound)..<(element.startIndex + content.upperBound)])
        }
        var reader = try ASN1Reader(element, rules: .der)
        let oid = try reader.readObjectIdentifier()
        try reader.finish()
        return oid
    }

    /// The octets of a messageDigest value: a DER OCTET STRING and nothing after it (as
    /// `SignerInfo.messageDigest` reads it), or nil.
    static func octets(_ element: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let short = element.withUnsafeBytes { raw -> Range<Int>? in
            guard let content = DERFraming.content(raw, tag: 0x04, at: 0, end: raw.count), content.upperBound == raw.count else {
                return nil
            }
            return content
        }
        if let content = short { return element[(element.startIndex + content.lowerBound)..<(element.startIndex + content.upperBound)] }
        guard var reader = try? ASN1Reader(element, rules: .der), let digest = try? reader.readOctetString(), reader.isAtEnd else {
            return nil
        }
        return digest
    }
}

/// An object identifier the verifier knows, with what it stands for.
struct KnownOID<Value: Sendable>: Sendable {
    let oid: ASN1ObjectIdentifier
    let value: Value

    /// The value of `oid` in `table`: compared in place, byte for byte, without copying the
    /// entries.
    static func find(_ oid: ASN1ObjectIdentifier, in table: [KnownOID]) -> Value? {
        table.withUnsafeBufferPointer { entries in
            for index in entries.indices where entries[index].oid == oid { return entries[index].value }
            return nil
        }
    }
}
