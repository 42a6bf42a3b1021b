public import ASN1

/// Object identifiers the receipt envelope uses.
public enum ReceiptOID {
    /// `1.2.840.113549.1.7.1` id-data.
    public static let data = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 7, 1)
    /// `1.2.840.113549.1.7.2` id-signedData.
    public static let signedData = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 7, 2)
    /// `1.2.840.113549.1.9.3` contentType signed attribute.
    public static let contentTypeAttribute = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 9, 3)
    /// `1.2.840.113549.1.9.4` messageDigest signed attribute.
    public static let messageDigestAttribute = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 9, 4)
}

/// An AlgorithmIdentifier: an OID and its optional parameters (kept encoded).
public struct AlgorithmIdentifier: Sendable, Hashable {
    /// The algorithm.
    public let oid: ASN1ObjectIdentifier
    /// The encoded parameters element, if present (often NULL).
    public let parameters: ArraySlice<UInt8>?

    init(reading reader: inout ASN1Reader) throws(ASN1Error) {
        var sequence = try reader.readSequence()
        oid = try sequence.readObjectIdentifier()
        parameters = sequence.isAtEnd ? nil : try sequence.readElement().encodedBytes
        try sequence.finish()
    }
}

/// One signed attribute: its type and the encoded elements of its value set.
public struct SignedAttribute: Sendable {
    /// The attribute type.
    public let type: ASN1ObjectIdentifier
    /// Each value, as its complete encoded element.
    public let values: [ArraySlice<UInt8>]
}

/// A SignerInfo of a PKCS#7 SignedData, with every byte needed to check its signature.
public struct SignerInfo: Sendable {
    /// How the signer certificate is named.
    public enum Identifier: Sendable, Hashable {
        /// The certificate's issuer (encoded Name) and serial number (INTEGER content octets).
        case issuerAndSerialNumber(issuer: ArraySlice<UInt8>, serialNumber: ArraySlice<UInt8>)
        /// The certificate's subject key identifier.
        case subjectKeyIdentifier(ArraySlice<UInt8>)
    }

    /// The SignerInfo version (1 for issuer-and-serial, 3 for key identifier).
    public let version: Int
    /// Which certificate signed.
    public let signerIdentifier: Identifier
    /// The digest algorithm applied to the content.
    public let digestAlgorithm: AlgorithmIdentifier
    /// The `[0] IMPLICIT` signed attributes element exactly as encoded, if present. The signature is
    /// computed over the same bytes with the first octet changed to the SET tag (`0x31`).
    public let signedAttributesEncoded: ArraySlice<UInt8>?
    /// The signed attributes, decoded (empty when absent).
    public let signedAttributes: [SignedAttribute]
    /// The signature algorithm.
    public let signatureAlgorithm: AlgorithmIdentifier
    /// The signature octets.
    public let signature: ArraySlice<UInt8>
    /// The whole SignerInfo as encoded.
    public let encodedBytes: ArraySlice<UInt8>

    /// The messageDigest signed attribute's octets, if present.
    public var messageDigest: ArraySlice<UInt8>? {
        guard let attribute = signedAttributes.first(where: { $0.type == ReceiptOID.messageDigestAttribute }),
            attribute.values.count == 1, var reader = try? ASN1Reader(attribute.values[0], rules: .der),
            let digest = try? reader.readOctetString(), reader.isAtEnd
        else { return nil }
        return digest
    }

    init(_ element: ASN1Element) throws {
        encodedBytes = element.encodedBytes
        var reader = try element.children()
        version = try reader.readInteger(Int.self)
        let sid = try reader.readElement()
        switch (sid.identifier.tagClass, sid.identifier.tagNumber, sid.identifier.isConstructed) {
        case (.universal, 16, true):
            var issuerAndSerial = try sid.children()
            let issuer = try issuerAndSerial.readElement(.sequence).encodedBytes
            let serial = try issuerAndSerial.readElement(.integer).integerBytes()
            try issuerAndSerial.finish()
            signerIdentifier = .issuerAndSerialNumber(issuer: issuer, serialNumber: serial)
        case (.contextSpecific, 0, false):
            signerIdentifier = .subjectKeyIdentifier(sid.content)
        default:
            throw ASN1Error(code: .unexpectedTag, offset: sid.offset, reason: "SignerIdentifier is \(sid.identifier)")
        }
        digestAlgorithm = try AlgorithmIdentifier(reading: &reader)
        if let attributes = try reader.readOptionalElement(.contextSpecific(0, constructed: true)) {
            signedAttributesEncoded = attributes.encodedBytes
            var list: [SignedAttribute] = []
            var set = try attributes.children()
            while !set.isAtEnd {
                guard list.count < SignerInfo.maximumSignedAttributes else {
                    throw ReceiptError.make(
                        .limitExceeded, set.position, "more than \(SignerInfo.maximumSignedAttributes) signed attributes")
                }
                var attribute = try set.readSequence()
                let type = try attribute.readObjectIdentifier()
                var valueSet = try attribute.readSet()
                var values: [ArraySlice<UInt8>] = []
                while !valueSet.isAtEnd { values.append(try valueSet.readElement().encodedBytes) }
                try attribute.finish()
                list.append(SignedAttribute(type: type, values: values))
            }
            signedAttributes = list
        } else {
            signedAttributesEncoded = nil
            signedAttributes = []
        }
        signatureAlgorithm = try AlgorithmIdentifier(reading: &reader)
        signature = try reader.readOctetString()
        _ = try reader.readOptionalElement(.contextSpecific(1, constructed: true))
        try reader.finish()
    }

    static let maximumSignedAttributes = 64
}

/// The PKCS#7 (CMS) SignedData around an app receipt, read in pure Swift.
///
/// BER is accepted for the envelope (Xcode receipts use indefinite lengths and a segmented
/// eContent); everything is kept as slices of the input except a segmented payload, which is
/// concatenated. Nothing here is trusted: `ReceiptVerification` checks the signature over exactly
/// ``payload`` and the chain of ``certificates`` against pinned anchors.
public struct ReceiptEnvelope: Sendable {
    /// The decoded input (DER/BER bytes of the ContentInfo).
    public let encodedBytes: [UInt8]
    /// Whether any part used BER-only forms (indefinite lengths, segmented strings).
    public let usesBERForms: Bool
    /// SignedData version.
    public let version: Int
    /// The digest algorithms the SignedData lists.
    public let digestAlgorithms: [AlgorithmIdentifier]
    /// The encapsulated content type (id-data for receipts).
    public let contentType: ASN1ObjectIdentifier
    /// The exact payload octets: the eContent OCTET STRING's content, concatenated when segmented.
    /// This is what the signature covers and what the receipt parser reads.
    public let payload: ArraySlice<UInt8>
    /// Absolute offset of ``payload`` in ``encodedBytes`` when it is contiguous; `nil` when segmented.
    public let payloadOffset: Int?
    /// The embedded certificates, each its DER encoding as a slice of the input. Untrusted.
    public let certificates: [ArraySlice<UInt8>]
    /// The SignerInfos.
    public let signers: [SignerInfo]

    /// Most certificates accepted in one envelope; more is ``ReceiptError/Code/limitExceeded``.
    public static let maximumCertificates = 32
    /// Most SignerInfos accepted in one envelope; more is ``ReceiptError/Code/limitExceeded``.
    public static let maximumSigners = 8

    /// Reads a ContentInfo holding a SignedData from DER or BER bytes.
    public init(_ bytes: [UInt8], limits: ReceiptLimits = .default) throws(ReceiptError) {
        guard bytes.count <= limits.maximumInputSize else {
            throw ReceiptError.make(.inputTooLarge, nil, "input of \(bytes.count) bytes exceeds \(limits.maximumInputSize)")
        }
        encodedBytes = bytes
        do {
            var top = try ASN1Reader(bytes, rules: .ber, limits: limits.asn1)
            let root = try top.readElement(.sequence)
            try top.finish()
            var contentInfo = try root.children()
            let outerType = try contentInfo.readObjectIdentifier()
            guard outerType == ReceiptOID.signedData else {
                throw ReceiptError.make(
                    .unsupportedEnvelope, root.offset, "ContentInfo type is \(outerType), not signedData")
            }
            var explicit = try contentInfo.readConstructed(.contextSpecific(0, constructed: true))
            let signedDataElement = try explicit.readElement(.sequence)
            try explicit.finish()
            try contentInfo.finish()
            var signedData = try signedDataElement.children()
            var berForms = root.isIndefiniteLength || signedDataElement.isIndefiniteLength

            version = try signedData.readInteger(Int.self)
            var algorithms = try signedData.readSet()
            var digestAlgorithms: [AlgorithmIdentifier] = []
            while !algorithms.isAtEnd {
                guard digestAlgorithms.count < 16 else {
                    throw ReceiptError.make(.limitExceeded, algorithms.position, "more than 16 digest algorithms")
                }
                digestAlgorithms.append(try AlgorithmIdentifier(reading: &algorithms))
            }
            self.digestAlgorithms = digestAlgorithms

            let encapsulated = try signedData.readElement(.sequence)
            berForms = berForms || encapsulated.isIndefiniteLength
            var encapsulatedReader = try encapsulated.children()
            contentType = try encapsulatedReader.readObjectIdentifier()
            guard let eContent = try encapsulatedReader.readOptionalElement(.contextSpecific(0, constructed: true)) else {
                throw ReceiptError.make(.missingPayload, encapsulated.offset, "SignedData has no encapsulated content")
            }
            try encapsulatedReader.finish()
            var eContentReader = try eContent.children()
            let octets = try eContentReader.readElement()
            try eContentReader.finish()
            guard octets.identifier.tagClass == .universal, octets.identifier.tagNumber == 4 else {
                throw ReceiptError.make(.unsupportedEnvelope, octets.offset, "eContent is \(octets.identifier), not OCTET STRING")
            }
            payload = try octets.octets()
            payloadOffset = octets.identifier.isConstructed ? nil : octets.offset + octets.headerLength
            berForms = berForms || eContent.isIndefiniteLength || octets.identifier.isConstructed

            var certificates: [ArraySlice<UInt8>] = []
            if let certificateSet = try signedData.readOptionalElement(.contextSpecific(0, constructed: true)) {
                var reader = try certificateSet.children()
                while !reader.isAtEnd {
                    guard certificates.count < ReceiptEnvelope.maximumCertificates else {
                        throw ReceiptError.make(
                            .limitExceeded, reader.position, "more than \(ReceiptEnvelope.maximumCertificates) certificates")
                    }
                    certificates.append(try reader.readElement().encodedBytes)
                }
            }
            self.certificates = certificates
            _ = try signedData.readOptionalElement(.contextSpecific(1, constructed: true))  // CRLs: not used

            var signerSet = try signedData.readSet()
            var signers: [SignerInfo] = []
            while !signerSet.isAtEnd {
                guard signers.count < ReceiptEnvelope.maximumSigners else {
                    throw ReceiptError.make(.limitExceeded, signerSet.position, "more than \(ReceiptEnvelope.maximumSigners) signers")
                }
                signers.append(try SignerInfo(signerSet.readElement(.sequence)))
            }
            self.signers = signers
            try signedData.finish()
            usesBERForms = berForms
        } catch let error as ASN1Error {
            throw ReceiptError.wrap(error, as: .malformedEnvelope, context: "PKCS#7 envelope")
        } catch let error as ReceiptError {
            throw error
        } catch {
            throw ReceiptError.make(.malformedEnvelope, nil, "\(error)")
        }
    }
}
