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

    init(oid: ASN1ObjectIdentifier, parameters: ArraySlice<UInt8>?) {
        self.oid = oid
        self.parameters = parameters
    }

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

    init(_ element: ASN1Element) throws {
        let encodedBytes = element.encodedBytes
        var reader = try element.children()
        let version = try reader.readInteger(Int.self)
        let signerIdentifier: Identifier
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
        let digestAlgorithm = try AlgorithmIdentifier(reading: &reader)
        let signedAttributesEncoded: ArraySlice<UInt8>?
        let signedAttributes: [SignedAttribute]
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
        let signatureAlgorithm = try AlgorithmIdentifier(reading: &reader)
        let signature = try reader.readOctetString()
        _ = try reader.readOptionalElement(.contextSpecific(1, constructed: true))
        try reader.finish()
        storage = Storage(
            version: version, signerIdentifier: signerIdentifier, digestAlgorithm: digestAlgorithm,
            signedAttributesEncoded: signedAttributesEncoded, signedAttributes: signedAttributes, signatureAlgorithm: signatureAlgorithm,
            signature: signature, encodedBytes: encodedBytes)
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
        if let storage = ReceiptEnvelope.readDER(bytes, limits: limits) {
            self.storage = storage
            return
        }
        storage = try ReceiptEnvelope.readGeneral(bytes, limits: limits)
    }

    init(storage: Storage) { self.storage = storage }

    /// The envelope read with the general (BER) reader, which applies every rule and reports
    /// every error.
    static func readGeneral(_ bytes: [UInt8], limits: ReceiptLimits) throws(ReceiptError) -> Storage {
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

            let version = try signedData.readInteger(Int.self)
            var algorithms = try signedData.readSet()
            var digestAlgorithms: [AlgorithmIdentifier] = []
            while !algorithms.isAtEnd {
                guard digestAlgorithms.count < 16 else {
                    throw ReceiptError.make(.limitExceeded, algorithms.position, "more than 16 digest algorithms")
                }
                digestAlgorithms.append(try AlgorithmIdentifier(reading: &algorithms))
            }
            let encapsulated = try signedData.readElement(.sequence)
            berForms = berForms || encapsulated.isIndefiniteLength
            var encapsulatedReader = try encapsulated.children()
            let contentType = try encapsulatedReader.readObjectIdentifier()
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
            let payload = try octets.octets()
            let payloadOffset = octets.identifier.isConstructed ? nil : octets.offset + octets.headerLength
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
            _ = try signedData.readOptionalElement(.contextSpecific(1, constructed: true))  // CRLs: not used

            var signerSet = try signedData.readSet()
            var signers: [SignerInfo] = []
            while !signerSet.isAtEnd {
                guard signers.count < ReceiptEnvelope.maximumSigners else {
                    throw ReceiptError.make(.limitExceeded, signerSet.position, "more than \(ReceiptEnvelope.maximumSigners) signers")
                }
                signers.append(try SignerInfo(signerSet.readElement(.sequence)))
            }
            try signedData.finish()
            return Storage(
                encodedBytes: bytes, usesBERForms: berForms, version: version, digestAlgorithms: digestAlgorithms,
                contentType: contentType, payload: payload, payloadOffset: payloadOffset, certificates: certificates, signers: signers)
        } catch let error as ASN1Error {
            throw ReceiptError.wrap(error, as: .malformedEnvelope, context: "PKCS#7 envelope")
        } catch let error as ReceiptError {
            throw error
        } catch {
            throw ReceiptError.make(.malformedEnvelope, nil, "\(error)")
        }
    }
}

extension ReceiptEnvelope {
    /// The envelope of a DER input, read with the raw reader under DER rules: the same reads as
    /// ``readGeneral(_:limits:)`` in the same order, without an `ASN1Element` (and its slice) per
    /// element. Nil for anything the raw reader refuses under DER, or that the general reader
    /// would refuse or read differently (a limit reached, a constructed or BER form, an unexpected
    /// type); the general reader then decides. DER is BER with one encoding per value, so where
    /// this path answers, the general one gives the same envelope (tests compare the two).
    static func readDER(_ bytes: [UInt8], limits: ReceiptLimits) -> Storage? {
        bytes.withUnsafeBytes { raw -> Storage? in
            do throws(ASN1Error) {
                return try readDER(raw, bytes, limits: limits)
            } catch {
                return nil
            }
        }
    }

    private static func readDER(_ raw: UnsafeRawBufferPointer, _ bytes: [UInt8], limits: ReceiptLimits) throws(ASN1Error) -> Storage? {
        @inline(__always) func slice(_ range: Range<Int>) -> ArraySlice<UInt8> { bytes[range] }
        @inline(__always) func whole(_ element: ASN1RawElement) -> ArraySlice<UInt8> { bytes[element.start..<element.end] }
        @inline(__always) func oid(_ element: ASN1RawElement) throws(ASN1Error) -> ASN1ObjectIdentifier? {
            guard element.identifier == .objectIdentifier else { return nil }
            return try ASN1ObjectIdentifier(validatingContent: bytes[element.contentStart..<element.contentEnd], offset: element.start)
        }
        @inline(__always) func algorithm(_ reader: inout ASN1RawReader) throws(ASN1Error) -> AlgorithmIdentifier? {
            var sequence = try reader.readConstructed(.sequence)
            guard let identifier = try oid(sequence.readElement()) else { return nil }
            let parameters = sequence.isAtEnd ? nil : whole(try sequence.readElement())
            try sequence.finish()
            return AlgorithmIdentifier(oid: identifier, parameters: parameters)
        }
        var top = ASN1RawReader(buffer: raw, rules: .der, maximumDepth: limits.maximumDepth)
        let root = try top.readElement(.sequence)
        try top.finish()
        var contentInfo = try top.children(of: root)
        guard try oid(contentInfo.readElement()) == ReceiptOID.signedData else { return nil }
        var explicit = try contentInfo.readConstructed(.contextSpecific(0, constructed: true))
        let signedDataElement = try explicit.readElement(.sequence)
        try explicit.finish()
        try contentInfo.finish()
        var signedData = try explicit.children(of: signedDataElement)

        let versionElement = try signedData.readElement(.integer)
        let version: Int = try ASN1RawReader.decodeInteger(
            raw, versionElement.contentStart..<versionElement.contentEnd, rules: .der, at: versionElement.start)
        var algorithms = try signedData.readConstructed(.set)
        var digestAlgorithms: [AlgorithmIdentifier] = []
        digestAlgorithms.reserveCapacity(2)
        while !algorithms.isAtEnd {
            guard digestAlgorithms.count < 16, let algorithm = try algorithm(&algorithms) else { return nil }
            digestAlgorithms.append(algorithm)
        }

        var encapsulated = try signedData.readConstructed(.sequence)
        guard let contentType = try oid(encapsulated.readElement()),
            let eContent = try encapsulated.readOptionalElement(.contextSpecific(0, constructed: true))
        else { return nil }
        try encapsulated.finish()
        var eContentReader = try encapsulated.children(of: eContent)
        let octets = try eContentReader.readElement()
        try eContentReader.finish()
        guard octets.identifier == .octetString else { return nil }  // primitive, definite (DER)

        var certificates: [ArraySlice<UInt8>] = []
        if let set = try signedData.readOptionalElement(.contextSpecific(0, constructed: true)) {
            certificates.reserveCapacity(4)
            var reader = try signedData.children(of: set)
            while !reader.isAtEnd {
                guard certificates.count < ReceiptEnvelope.maximumCertificates else { return nil }
                certificates.append(whole(try reader.readElement()))
            }
        }
        _ = try signedData.readOptionalElement(.contextSpecific(1, constructed: true))  // CRLs: not used

        var signerSet = try signedData.readConstructed(.set)
        var signers: [SignerInfo] = []
        signers.reserveCapacity(1)
        while !signerSet.isAtEnd {
            guard signers.count < ReceiptEnvelope.maximumSigners else { return nil }
            let element = try signerSet.readElement(.sequence)
            var reader = try signerSet.children(of: element)
            let versionElement = try reader.readElement(.integer)
            let signerVersion: Int = try ASN1RawReader.decodeInteger(
                raw, versionElement.contentStart..<versionElement.contentEnd, rules: .der, at: versionElement.start)
            let sid = try reader.readElement()
            let identifier: SignerInfo.Identifier
            if sid.identifier == .sequence {
                var issuerAndSerial = try reader.children(of: sid)
                let issuer = try issuerAndSerial.readElement(.sequence)
                let serial = try issuerAndSerial.readElement(.integer)
                try issuerAndSerial.finish()
                guard serial.contentLength >= 1 else { return nil }
                if serial.contentLength >= 2,
                    DERFraming.isRedundantLeadingOctet(raw[serial.contentStart], before: raw[serial.contentStart &+ 1])
                {
                    return nil
                }
                identifier = .issuerAndSerialNumber(issuer: whole(issuer), serialNumber: slice(serial.contentStart..<serial.contentEnd))
            } else if sid.identifier == .contextSpecific(0, constructed: false) {
                identifier = .subjectKeyIdentifier(slice(sid.contentStart..<sid.contentEnd))
            } else {
                return nil
            }
            guard let digestAlgorithm = try algorithm(&reader) else { return nil }
            var signedAttributesEncoded: ArraySlice<UInt8>?
            var signedAttributes: [SignedAttribute] = []
            if let attributes = try reader.readOptionalElement(.contextSpecific(0, constructed: true)) {
                signedAttributesEncoded = whole(attributes)
                signedAttributes.reserveCapacity(4)
                var set = try reader.children(of: attributes)
                while !set.isAtEnd {
                    guard signedAttributes.count < SignerInfo.maximumSignedAttributes else { return nil }
                    var attribute = try set.readConstructed(.sequence)
                    guard let type = try oid(attribute.readElement()) else { return nil }
                    var valueSet = try attribute.readConstructed(.set)
                    var values: [ArraySlice<UInt8>] = []
                    values.reserveCapacity(1)
                    while !valueSet.isAtEnd { values.append(whole(try valueSet.readElement())) }
                    try attribute.finish()
                    signedAttributes.append(SignedAttribute(type: type, values: values))
                }
            }
            guard let signatureAlgorithm = try algorithm(&reader) else { return nil }
            let signature = try reader.readElement()
            guard signature.identifier == .octetString else { return nil }
            _ = try reader.readOptionalElement(.contextSpecific(1, constructed: true))
            try reader.finish()
            signers.append(
                SignerInfo(
                    storage: SignerInfo.Storage(
                        version: signerVersion, signerIdentifier: identifier, digestAlgorithm: digestAlgorithm,
                        signedAttributesEncoded: signedAttributesEncoded, signedAttributes: signedAttributes,
                        signatureAlgorithm: signatureAlgorithm, signature: slice(signature.contentStart..<signature.contentEnd),
                        encodedBytes: whole(element))))
        }
        try signedData.finish()
        return Storage(
            encodedBytes: bytes, usesBERForms: false, version: version, digestAlgorithms: digestAlgorithms, contentType: contentType,
            payload: slice(octets.contentStart..<octets.contentEnd), payloadOffset: octets.contentStart, certificates: certificates,
            signers: signers)
    }
}
