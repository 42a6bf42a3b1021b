import ASN1

@testable import Receipts

// The PKCS#7 envelope read the plain way, with the element reader (`ASN1Reader`) under BER, one
// field at a time: the oracle `ReceiptEnvelope(_:limits:)` (one reader, the raw cursor, with DER
// or BER rules) is compared with in EnvelopeOracleTests. It was the library's general path; it
// lives here now that the library has one envelope reader.

extension AlgorithmIdentifier {
    init(reference reader: inout ASN1Reader) throws(ASN1Error) {
        var sequence = try reader.readSequence()
        let oid = try sequence.readObjectIdentifier()
        let parameters = sequence.isAtEnd ? nil : try sequence.readElement().encodedBytes
        try sequence.finish()
        self.init(oid: oid, parameters: parameters)
    }
}

extension SignerInfo {
    init(reference element: ASN1Element) throws {
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
        let digestAlgorithm = try AlgorithmIdentifier(reference: &reader)
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
        let signatureAlgorithm = try AlgorithmIdentifier(reference: &reader)
        let signature = try reader.readOctetString()
        _ = try reader.readOptionalElement(.contextSpecific(1, constructed: true))
        try reader.finish()
        self.init(
            storage: Storage(
                version: version, signerIdentifier: signerIdentifier, digestAlgorithm: digestAlgorithm,
                signedAttributesEncoded: signedAttributesEncoded, signedAttributes: signedAttributes,
                signatureAlgorithm: signatureAlgorithm,
                signature: signature, encodedBytes: encodedBytes))
    }
}

extension ReceiptEnvelope {
    /// The envelope read with the general (BER) reader, which applies every rule and reports
    /// every error.
    static func readReference(_ bytes: [UInt8], limits: ReceiptLimits) throws(ReceiptError) -> Storage {
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
                digestAlgorithms.append(try AlgorithmIdentifier(reference: &algorithms))
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
                signers.append(try SignerInfo(reference: signerSet.readElement(.sequence)))
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
