@_spi(RawParsing) import ASN1
import Internals
import Receipts

/// The parts of an X.509 certificate a SignerInfo can name it by, read in Swift from the DER
/// bytes (no OpenSSL call): the encoded issuer Name, the serial number's content octets and, if
/// present, the subject key identifier.
struct CertificateIdentity: Sendable, Hashable {
    /// The issuer Name as encoded (the whole SEQUENCE).
    let issuer: [UInt8]
    /// The serial number INTEGER's content octets, exactly as encoded.
    let serialNumber: [UInt8]
    /// The keyIdentifier of the subjectKeyIdentifier extension (2.5.29.14), if present.
    let subjectKeyIdentifier: [UInt8]?

    static let subjectKeyIdentifierOID = ASN1ObjectIdentifier(2, 5, 29, 14)

    /// Reads the identity from a DER certificate.
    init(certificate der: ArraySlice<UInt8>) throws(ASN1Error) {
        var top = try ASN1Reader(der, rules: .der)
        var certificate = try top.readSequence()
        try top.finish()
        var tbs = try certificate.readSequence()
        _ = try tbs.readOptionalElement(.contextSpecific(0, constructed: true))  // version
        serialNumber = Array(try tbs.readElement(.integer).integerBytes())
        try tbs.skipElement()  // signature algorithm
        issuer = Array(try tbs.readElement(.sequence).encodedBytes)
        try tbs.skipElement()  // validity
        try tbs.skipElement()  // subject
        try tbs.skipElement()  // subjectPublicKeyInfo
        _ = try tbs.readOptionalElement(.contextSpecific(1, constructed: false))  // issuerUniqueID
        _ = try tbs.readOptionalElement(.contextSpecific(2, constructed: false))  // subjectUniqueID
        var keyIdentifier: [UInt8]?
        if var explicit = try tbs.readOptionalElement(.contextSpecific(3, constructed: true))?.children() {
            var extensions = try explicit.readSequence()
            try explicit.finish()
            while !extensions.isAtEnd {
                var ext = try extensions.readSequence()
                let oid = try ext.readObjectIdentifier()
                _ = try ext.readOptionalElement(.boolean)
                let value = try ext.readOctetString()
                try ext.finish()
                if oid == CertificateIdentity.subjectKeyIdentifierOID {
                    var inner = try ASN1Reader(value, rules: .der)
                    keyIdentifier = Array(try inner.readOctetString())
                    try inner.finish()
                }
            }
        }
        try tbs.finish()
        subjectKeyIdentifier = keyIdentifier
    }

    /// Whether `identifier` names the DER certificate `der`, reading no more of it than needed:
    /// for issuer and serial number the TBS up to the issuer (serial first, so other certificates
    /// are rejected after a few bytes), for a key identifier the whole TBS.
    static func certificate(_ der: ArraySlice<UInt8>, matches identifier: SignerInfo.Identifier) throws(ASN1Error) -> Bool {
        guard case .issuerAndSerialNumber(let issuer, let serialNumber) = identifier else {
            return try CertificateIdentity(certificate: der).matches(identifier)
        }
        return try certificate(der, issuer: issuer, serialNumber: serialNumber)
    }

    /// Whether the certificate `der` has this issuer (encoded Name) and serial number (INTEGER
    /// content octets): read in place when it can be, else by the general reader.
    static func certificate(_ der: ArraySlice<UInt8>, issuer: ArraySlice<UInt8>, serialNumber: ArraySlice<UInt8>) throws(ASN1Error) -> Bool
    {
        if let answer = quickMatch(der, issuer: issuer, serialNumber: serialNumber) { return answer }
        return try generalMatch(der, issuer: issuer, serialNumber: serialNumber)
    }

    /// ``certificate(_:matches:)`` for issuer and serial number with the general reader.
    static func generalMatch(_ der: ArraySlice<UInt8>, issuer: ArraySlice<UInt8>, serialNumber: ArraySlice<UInt8>) throws(ASN1Error)
        -> Bool
    {
        var top = try ASN1Reader(der, rules: .der)
        var certificate = try top.readSequence()
        try top.finish()
        var tbs = try certificate.readSequence()
        _ = try tbs.readOptionalElement(.contextSpecific(0, constructed: true))  // version
        guard bytesEqual(try tbs.readElement(.integer).integerBytes(), serialNumber) else { return false }
        try tbs.skipElement()  // signature algorithm
        return bytesEqual(try tbs.readElement(.sequence).encodedBytes, issuer)
    }

    /// ``certificate(_:matches:)`` for issuer and serial number when every element it reads is in
    /// the short DER forms `DERFraming` reads (one-octet tags, lengths of at most two octets, a
    /// minimal serial): the same reads in the same order, on the raw bytes; nil for anything else,
    /// which the general reader then decides (and reports).
    static func quickMatch(_ der: ArraySlice<UInt8>, issuer: ArraySlice<UInt8>, serialNumber: ArraySlice<UInt8>) -> Bool? {
        der.withUnsafeBytes { b -> Bool? in
            let end = b.count
            guard let certificate = DERFraming.content(b, tag: 0x30, at: 0, end: end), certificate.upperBound == end,
                let tbs = DERFraming.content(b, tag: 0x30, at: certificate.lowerBound, end: certificate.upperBound)
            else { return nil }
            var p = tbs.lowerBound
            if p < tbs.upperBound && b[p] == 0xA0 {  // version
                guard let version = DERFraming.content(b, tag: 0xA0, at: p, end: tbs.upperBound) else { return nil }
                p = version.upperBound
            }
            guard let serial = DERFraming.content(b, tag: 0x02, at: p, end: tbs.upperBound), !serial.isEmpty,
                serial.count < 2 || !DERFraming.isRedundantLeadingOctet(b[serial.lowerBound], before: b[serial.lowerBound &+ 1])
            else { return nil }
            guard bytesEqual(der[(der.startIndex + serial.lowerBound)..<(der.startIndex + serial.upperBound)], serialNumber) else {
                return false
            }
            guard let algorithm = DERFraming.content(b, tag: 0x30, at: serial.upperBound, end: tbs.upperBound),
                let name = DERFraming.content(b, tag: 0x30, at: algorithm.upperBound, end: tbs.upperBound)
            else { return nil }
            let nameStart = algorithm.upperBound
            return bytesEqual(der[(der.startIndex + nameStart)..<(der.startIndex + name.upperBound)], issuer)
        }
    }

    /// Whether `identifier` names this certificate. Issuer and serial are compared byte for byte
    /// as encoded (DER is canonical, so a legitimate signer matches exactly).
    func matches(_ identifier: SignerInfo.Identifier) -> Bool {
        switch identifier {
        case .issuerAndSerialNumber(let issuer, let serialNumber):
            return self.issuer.elementsEqual(issuer) && self.serialNumber.elementsEqual(serialNumber)
        case .subjectKeyIdentifier(let keyIdentifier):
            guard let subjectKeyIdentifier else { return false }
            return subjectKeyIdentifier.elementsEqual(keyIdentifier)
        }
    }
}
