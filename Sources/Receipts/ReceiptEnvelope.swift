@_spi(RawParsing) public import ASN1

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

}

/// One signed attribute: its type and the encoded elements of its value set.
public struct SignedAttribute: Sendable {
    /// The attribute type.
    public let type: ASN1ObjectIdentifier
    /// Each value, as its complete encoded element.
    public let values: [ArraySlice<UInt8>]
}

/// A SignerInfo of a PKCS#7 SignedData, with every byte needed to check its signature.
///
/// Its fields are kept in one reference-counted box, so a copy costs one retain.
public struct SignerInfo: Sendable {
    /// How the signer certificate is named.
    public enum Identifier: Sendable, Hashable {
        /// The certificate's issuer (encoded Name) and serial number (INTEGER content octets).
        case issuerAndSerialNumber(issuer: ArraySlice<UInt8>, serialNumber: ArraySlice<UInt8>)
        /// The certificate's subject key identifier.
        case subjectKeyIdentifier(ArraySlice<UInt8>)
    }

    final class Storage: Sendable {
        let version: Int
        let signerIdentifier: Identifier
        let digestAlgorithm: AlgorithmIdentifier
        let signedAttributesEncoded: ArraySlice<UInt8>?
        let signedAttributes: [SignedAttribute]
        let signatureAlgorithm: AlgorithmIdentifier
        let signature: ArraySlice<UInt8>
        let encodedBytes: ArraySlice<UInt8>

        init(
            version: Int, signerIdentifier: Identifier, digestAlgorithm: AlgorithmIdentifier, signedAttributesEncoded: ArraySlice<UInt8>?,
            signedAttributes: [SignedAttribute], signatureAlgorithm: AlgorithmIdentifier, signature: ArraySlice<UInt8>,
            encodedBytes: ArraySlice<UInt8>
        ) {
            self.version = version
            self.signerIdentifier = signerIdentifier
            self.digestAlgorithm = digestAlgorithm
            self.signedAttributesEncoded = signedAttributesEncoded
            self.signedAttributes = signedAttributes
            self.signatureAlgorithm = signatureAlgorithm
            self.signature = signature
            self.encodedBytes = encodedBytes
        }
    }

    let storage: Storage

    /// The SignerInfo version (1 for issuer-and-serial, 3 for key identifier).
    public var version: Int { storage.version }
    /// Which certificate signed.
    public var signerIdentifier: Identifier { storage.signerIdentifier }
    /// The digest algorithm applied to the content.
    public var digestAlgorithm: AlgorithmIdentifier { storage.digestAlgorithm }
    /// The `[0] IMPLICIT` signed attributes element exactly as encoded, if present. The signature is
    /// computed over the same bytes with the first octet changed to the SET tag (`0x31`).
    public var signedAttributesEncoded: ArraySlice<UInt8>? { storage.signedAttributesEncoded }
    /// The signed attributes, decoded (empty when absent).
    public var signedAttributes: [SignedAttribute] { storage.signedAttributes }
    /// The signature algorithm.
    public var signatureAlgorithm: AlgorithmIdentifier { storage.signatureAlgorithm }
    /// The signature octets.
    public var signature: ArraySlice<UInt8> { storage.signature }
    /// The whole SignerInfo as encoded.
    public var encodedBytes: ArraySlice<UInt8> { storage.encodedBytes }

    /// The messageDigest signed attribute's octets, if present.
    public var messageDigest: ArraySlice<UInt8>? {
        guard let attribute = signedAttributes.first(where: { $0.type == ReceiptOID.messageDigestAttribute }),
            attribute.values.count == 1, var reader = try? ASN1Reader(attribute.values[0], rules: .der),
            let digest = try? reader.readOctetString(), reader.isAtEnd
        else { return nil }
        return digest
    }

    init(storage: Storage) { self.storage = storage }

    static let maximumSignedAttributes = 64
}

/// The PKCS#7 (CMS) SignedData around an app receipt, read in pure Swift.
///
/// BER is accepted for the envelope (Xcode receipts use indefinite lengths and a segmented
/// eContent); everything is kept as slices of the input except a segmented payload, which is
/// concatenated. Nothing here is trusted: `ReceiptVerification` checks the signature over exactly
/// ``payload`` and the chain of ``certificates`` against pinned anchors.
public struct ReceiptEnvelope: Sendable {
    final class Storage: Sendable {
        let encodedBytes: [UInt8]
        let usesBERForms: Bool
        let version: Int
        let digestAlgorithms: [AlgorithmIdentifier]
        let contentType: ASN1ObjectIdentifier
        let payload: ArraySlice<UInt8>
        let payloadOffset: Int?
        let certificates: [ArraySlice<UInt8>]
        let signers: [SignerInfo]

        init(
            encodedBytes: [UInt8], usesBERForms: Bool, version: Int, digestAlgorithms: [AlgorithmIdentifier],
            contentType: ASN1ObjectIdentifier, payload: ArraySlice<UInt8>, payloadOffset: Int?, certificates: [ArraySlice<UInt8>],
            signers: [SignerInfo]
        ) {
            self.encodedBytes = encodedBytes
            self.usesBERForms = usesBERForms
            self.version = version
            self.digestAlgorithms = digestAlgorithms
            self.contentType = contentType
            self.payload = payload
            self.payloadOffset = payloadOffset
            self.certificates = certificates
            self.signers = signers
        }
    }

    /// Every field, in one reference-counted box: copying an envelope (out of a receipt, into a
    /// check) costs one retain.
    let storage: Storage

    /// The decoded input (DER/BER bytes of the ContentInfo).
    public var encodedBytes: [UInt8] { storage.encodedBytes }
    /// Whether any part used BER-only forms (indefinite lengths, segmented strings).
    public var usesBERForms: Bool { storage.usesBERForms }
    /// SignedData version.
    public var version: Int { storage.version }
    /// The digest algorithms the SignedData lists.
    public var digestAlgorithms: [AlgorithmIdentifier] { storage.digestAlgorithms }
    /// The encapsulated content type (id-data for receipts).
    public var contentType: ASN1ObjectIdentifier { storage.contentType }
    /// The exact payload octets: the eContent OCTET STRING's content, concatenated when segmented.
    /// This is what the signature covers and what the receipt parser reads.
    public var payload: ArraySlice<UInt8> { storage.payload }
    /// Absolute offset of ``payload`` in ``encodedBytes`` when it is contiguous; `nil` when segmented.
    public var payloadOffset: Int? { storage.payloadOffset }
    /// The embedded certificates, each its DER encoding as a slice of the input. Untrusted.
    public var certificates: [ArraySlice<UInt8>] { storage.certificates }
    /// The SignerInfos.
    public var signers: [SignerInfo] { storage.signers }

    /// Most certificates accepted in one envelope; more is ``ReceiptError/Code/limitExceeded``.
    public static let maximumCertificates = 32
    /// Most SignerInfos accepted in one envelope; more is ``ReceiptError/Code/limitExceeded``.
    public static let maximumSigners = 8

    /// Reads a ContentInfo holding a SignedData from DER or BER bytes.
    public init(_ bytes: [UInt8], limits: ReceiptLimits = .default) throws(ReceiptError) {
        guard bytes.count <= limits.maximumInputSize else {
            throw ReceiptError.make(.inputTooLarge, nil, "input of \(bytes.count) bytes exceeds \(limits.maximumInputSize)")
        }
        // DER first (every App Store receipt); what DER refuses is read again under BER, whose
        // answer decides (Xcode receipts use indefinite lengths and a segmented eContent).
        do throws(ReceiptError) {
            storage = try ReceiptEnvelope.read(bytes, rules: .der, limits: limits)
        } catch {
            storage = try ReceiptEnvelope.read(bytes, rules: .ber, limits: limits)
        }
    }

    init(storage: Storage) { self.storage = storage }
}

extension ReceiptEnvelope {
    /// The envelope read with the raw reader under `rules`: DER (strict: one encoding per value)
    /// or BER (indefinite lengths and a segmented eContent, as Xcode writes them). Every rule is
    /// applied and every error reported, as a ``ReceiptError``.
    static func read(_ bytes: [UInt8], rules: ASN1EncodingRules, limits: ReceiptLimits) throws(ReceiptError) -> Storage {
        do {
            return try bytes.withUnsafeBytes { raw in try read(raw, bytes, rules: rules, limits: limits) }
        } catch let error as ReceiptError {
            throw error
        } catch let error as ASN1Error {
            throw ReceiptError.wrap(error, as: .malformedEnvelope, context: "PKCS#7 envelope")
        } catch {
            throw ReceiptError.make(.malformedEnvelope, nil, "\(error)")
        }
    }

    private static func read(
        _ raw: UnsafeRawBufferPointer, _ bytes: [UInt8], rules: ASN1EncodingRules, limits: ReceiptLimits
    ) throws -> Storage {
        @inline(__always) func slice(_ range: Range<Int>) -> ArraySlice<UInt8> { bytes[range] }
        @inline(__always) func whole(_ element: ASN1RawElement) -> ArraySlice<UInt8> { bytes[element.start..<element.end] }
        @inline(__always) func oid(_ reader: inout ASN1RawReader) throws(ASN1Error) -> ASN1ObjectIdentifier {
            let element = try reader.readElement(.objectIdentifier)
            return try ASN1ObjectIdentifier(validatingContent: bytes[element.contentStart..<element.contentEnd], offset: element.start)
        }
        @inline(__always) func integer(_ reader: inout ASN1RawReader) throws(ASN1Error) -> Int {
            let element = try reader.readElement(.integer)
            return try ASN1RawReader.decodeInteger(raw, element.contentStart..<element.contentEnd, rules: rules, at: element.start)
        }
        @inline(__always) func algorithm(_ reader: inout ASN1RawReader) throws(ASN1Error) -> AlgorithmIdentifier {
            var sequence = try reader.readConstructed(.sequence)
            let identifier = try oid(&sequence)
            let parameters = sequence.isAtEnd ? nil : whole(try sequence.readElement())
            try sequence.finish()
            return AlgorithmIdentifier(oid: identifier, parameters: parameters)
        }
        var top = ASN1RawReader(buffer: raw, rules: rules, maximumDepth: limits.maximumDepth)
        let root = try top.readElement(.sequence)
        try top.finish()
        var contentInfo = try top.children(of: root)
        let outerType = try oid(&contentInfo)
        guard outerType == ReceiptOID.signedData else {
            throw ReceiptError.make(.unsupportedEnvelope, root.start, "ContentInfo type is \(outerType), not signedData")
        }
        var explicit = try contentInfo.readConstructed(.contextSpecific(0, constructed: true))
        let signedDataElement = try explicit.readElement(.sequence)
        try explicit.finish()
        try contentInfo.finish()
        var signedData = try explicit.children(of: signedDataElement)
        var berForms = root.isIndefiniteLength || signedDataElement.isIndefiniteLength

        let version = try integer(&signedData)
        var algorithms = try signedData.readConstructed(.set)
        var digestAlgorithms: [AlgorithmIdentifier] = []
        digestAlgorithms.reserveCapacity(2)
        while !algorithms.isAtEnd {
            guard digestAlgorithms.count < 16 else {
                throw ReceiptError.make(.limitExceeded, algorithms.offset, "more than 16 digest algorithms")
            }
            digestAlgorithms.append(try algorithm(&algorithms))
        }

        let encapsulated = try signedData.readElement(.sequence)
        berForms = berForms || encapsulated.isIndefiniteLength
        var encapsulatedReader = try signedData.children(of: encapsulated)
        let contentType = try oid(&encapsulatedReader)
        guard let eContent = try encapsulatedReader.readOptionalElement(.contextSpecific(0, constructed: true)) else {
            throw ReceiptError.make(.missingPayload, encapsulated.start, "SignedData has no encapsulated content")
        }
        try encapsulatedReader.finish()
        var eContentReader = try encapsulatedReader.children(of: eContent)
        let octets = try eContentReader.readElement()
        try eContentReader.finish()
        guard octets.identifier.tagClass == .universal, octets.identifier.tagNumber == 4 else {
            throw ReceiptError.make(.unsupportedEnvelope, octets.start, "eContent is \(octets.identifier), not OCTET STRING")
        }
        let payload: ArraySlice<UInt8>
        let payloadOffset: Int?
        if octets.identifier.isConstructed {
            // Segmented (BER only; under DER this throws): the segments concatenated.
            var joined: [UInt8] = []
            _ = try ASN1RawReader.appendSegments(
                raw, of: octets, base: 0, rules: rules, depth: eContentReader.depth, maximumDepth: limits.maximumDepth, into: &joined)
            payload = joined[...]
            payloadOffset = nil
            berForms = true
        } else {
            payload = slice(octets.contentStart..<octets.contentEnd)
            payloadOffset = octets.contentStart
        }
        berForms = berForms || eContent.isIndefiniteLength

        var certificates: [ArraySlice<UInt8>] = []
        if let set = try signedData.readOptionalElement(.contextSpecific(0, constructed: true)) {
            certificates.reserveCapacity(4)
            var reader = try signedData.children(of: set)
            while !reader.isAtEnd {
                guard certificates.count < ReceiptEnvelope.maximumCertificates else {
                    throw ReceiptError.make(.limitExceeded, reader.offset, "more than \(ReceiptEnvelope.maximumCertificates) certificates")
                }
                certificates.append(whole(try reader.readElement()))
            }
        }
        _ = try signedData.readOptionalElement(.contextSpecific(1, constructed: true))  // CRLs: not used

        var signerSet = try signedData.readConstructed(.set)
        var signers: [SignerInfo] = []
        signers.reserveCapacity(1)
        while !signerSet.isAtEnd {
            guard signers.count < ReceiptEnvelope.maximumSigners else {
                throw ReceiptError.make(.limitExceeded, signerSet.offset, "more than \(ReceiptEnvelope.maximumSigners) signers")
            }
            let element = try signerSet.readElement(.sequence)
            var reader = try signerSet.children(of: element)
            let signerVersion = try integer(&reader)
            let sid = try reader.readElement()
            let identifier: SignerInfo.Identifier
            if sid.identifier == .sequence {
                var issuerAndSerial = try reader.children(of: sid)
                let issuer = try issuerAndSerial.readElement(.sequence)
                let serial = try issuerAndSerial.readElement(.integer)
                try issuerAndSerial.finish()
                guard serial.contentLength >= 1 else {
                    throw ASN1Error(code: .invalidInteger, offset: serial.start, reason: "INTEGER has no content octets")
                }
                if rules == .distinguished, serial.contentLength >= 2,
                    DERFraming.isRedundantLeadingOctet(raw[serial.contentStart], before: raw[serial.contentStart &+ 1])
                {
                    throw ASN1Error(code: .invalidInteger, offset: serial.start, reason: "INTEGER is not minimally encoded (DER)")
                }
                identifier = .issuerAndSerialNumber(issuer: whole(issuer), serialNumber: slice(serial.contentStart..<serial.contentEnd))
            } else if sid.identifier == .contextSpecific(0, constructed: false) {
                identifier = .subjectKeyIdentifier(slice(sid.contentStart..<sid.contentEnd))
            } else {
                throw ASN1Error(code: .unexpectedTag, offset: sid.start, reason: "SignerIdentifier is \(sid.identifier)")
            }
            let digestAlgorithm = try algorithm(&reader)
            var signedAttributesEncoded: ArraySlice<UInt8>?
            var signedAttributes: [SignedAttribute] = []
            if let attributes = try reader.readOptionalElement(.contextSpecific(0, constructed: true)) {
                signedAttributesEncoded = whole(attributes)
                signedAttributes.reserveCapacity(4)
                var set = try reader.children(of: attributes)
                while !set.isAtEnd {
                    guard signedAttributes.count < SignerInfo.maximumSignedAttributes else {
                        throw ReceiptError.make(
                            .limitExceeded, set.offset, "more than \(SignerInfo.maximumSignedAttributes) signed attributes")
                    }
                    var attribute = try set.readConstructed(.sequence)
                    let type = try oid(&attribute)
                    var valueSet = try attribute.readConstructed(.set)
                    var values: [ArraySlice<UInt8>] = []
                    values.reserveCapacity(1)
                    while !valueSet.isAtEnd { values.append(whole(try valueSet.readElement())) }
                    try attribute.finish()
                    signedAttributes.append(SignedAttribute(type: type, values: values))
                }
            }
            let signatureAlgorithm = try algorithm(&reader)
            let signature = try reader.readElement()
            guard signature.identifier.tagClass == .universal, signature.identifier.tagNumber == 4 else {
                throw ASN1Error(
                    code: .unexpectedTag, offset: signature.start, reason: "signature is \(signature.identifier), not OCTET STRING")
            }
            var signatureOctets: [UInt8] = []
            let signatureBytes =
                try ASN1RawReader.appendSegments(
                    raw, of: signature, base: 0, rules: rules, depth: reader.depth, maximumDepth: limits.maximumDepth,
                    into: &signatureOctets)
                ? signatureOctets[...] : slice(signature.contentStart..<signature.contentEnd)
            _ = try reader.readOptionalElement(.contextSpecific(1, constructed: true))
            try reader.finish()
            signers.append(
                SignerInfo(
                    storage: SignerInfo.Storage(
                        version: signerVersion, signerIdentifier: identifier, digestAlgorithm: digestAlgorithm,
                        signedAttributesEncoded: signedAttributesEncoded, signedAttributes: signedAttributes,
                        signatureAlgorithm: signatureAlgorithm, signature: signatureBytes, encodedBytes: whole(element))))
        }
        try signedData.finish()
        return Storage(
            encodedBytes: bytes, usesBERForms: berForms, version: version, digestAlgorithms: digestAlgorithms, contentType: contentType,
            payload: payload, payloadOffset: payloadOffset, certificates: certificates, signers: signers)
    }
}
