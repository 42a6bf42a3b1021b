@_spi(RawParsing) import ASN1
import Internals

/// The fields of one X.509 v3 certificate, read with the package's own DER reader, as positions
/// in its bytes and the few decoded values chain validation needs.
///
/// OpenSSL 3.0's `d2i_X509` decodes every certificate's public key through a freshly set-up
/// `OSSL_DECODER_CTX`, about 1.15 M instructions per certificate, more than the rest of a cold
/// verification's bookkeeping; this reader and ``PublicKeyImport`` (keys built with
/// `EVP_PKEY_fromdata`) let the first verification skip it (``ChainFastPath``). OpenSSL still
/// performs every signature verification.
///
/// The reader is strict: DER lengths, X.509 version 3, no unique identifiers, a non-negative
/// serial, names made of the string types OpenSSL reads, validity times in the one form RFC 5280
/// and OpenSSL's `X509_cmp_time` accept (`YYMMDDHHMMSSZ` / `YYYYMMDDHHMMSSZ`), no duplicated
/// extension, and well-formed basicConstraints, keyUsage, subject and authority key identifiers
/// and extended key usage. Anything else is refused (``parse(_:)`` returns nil) and the caller
/// keeps OpenSSL's parser.
struct CertificateFields: Sendable {
    /// One extension, as positions in the certificate's bytes.
    struct Extension: Sendable {
        /// The content of the extnID OBJECT IDENTIFIER.
        var oid: Range<Int>
        var critical: Bool
        /// The content of the extnValue OCTET STRING.
        var value: Range<Int>
    }

    /// The whole TBSCertificate element (the bytes the issuer signed).
    var tbs: Range<Int>
    /// The TBSCertificate's `signature` AlgorithmIdentifier element.
    var innerAlgorithm: Range<Int>
    /// The outer `signatureAlgorithm` AlgorithmIdentifier element.
    var outerAlgorithm: Range<Int>
    /// The content of the outer algorithm's OID.
    var algorithmOID: Range<Int>
    /// The algorithm's parameters element, if any.
    var algorithmParameters: Range<Int>?
    /// The signature BIT STRING's bits (after the unused-bits octet, which must be 0).
    var signature: Range<Int>
    /// The serial INTEGER's content.
    var serial: Range<Int>
    /// The issuer and subject Name elements.
    var issuer: Range<Int>
    var subject: Range<Int>
    /// notBefore and notAfter in POSIX seconds.
    var notBefore: Int64
    var notAfter: Int64
    /// The SubjectPublicKeyInfo element.
    var subjectPublicKeyInfo: Range<Int>
    var extensions: [Extension]
    /// basicConstraints: present, cA, pathLenConstraint.
    var hasBasicConstraints = false
    var isCA = false
    var pathLength: Int?
    /// keyUsage, when present.
    var keyUsage: KeyUsage?
    /// subjectKeyIdentifier's and authorityKeyIdentifier's keyIdentifier contents.
    var subjectKeyID: Range<Int>?
    var authorityKeyID: Range<Int>?
    /// Whether authorityKeyIdentifier names an issuer or serial (not read here).
    var authorityKeyIDHasIssuer = false

    /// Reads `der`, or nil when it is not a certificate this reader accepts.
    static func parse(_ der: [UInt8]) -> CertificateFields? {
        der.withUnsafeBytes { buffer in try? read(buffer) }
    }

    private static func read(_ buffer: UnsafeRawBufferPointer) throws(ASN1Error) -> CertificateFields? {
        var top = ASN1RawReader(buffer: buffer, rules: .der, maximumDepth: 16)
        let certificateElement = try top.readElement(.sequence)
        try top.finish()
        var certificate = try top.children(of: certificateElement)
        let tbsElement = try certificate.readElement(.sequence)
        let outer = try certificate.readElement(.sequence)
        let signatureBits = try certificate.readContent(tag: 0x03)
        try certificate.finish()
        guard signatureBits.count >= 2, buffer[signatureBits.lowerBound] == 0 else { return nil }

        var tbs = try certificate.children(of: tbsElement)
        // version [0] EXPLICIT INTEGER: v3 (2) only.
        guard let versionElement = try tbs.readOptionalElement(.contextSpecific(0, constructed: true)) else { return nil }
        var version = try tbs.children(of: versionElement)
        guard try version.readInt64() == 2 else { return nil }
        try version.finish()
        let serial = try tbs.readContent(tag: 0x02)
        guard let firstSerial = serial.first.map({ buffer[$0] }), firstSerial & 0x80 == 0 else { return nil }
        let inner = try tbs.readElement(.sequence)
        let issuer = try tbs.readElement(.sequence)
        guard try validName(tbs.children(of: issuer), buffer) else { return nil }
        var validity = try tbs.readConstructed(.sequence)
        guard let notBefore = try time(&validity, buffer), let notAfter = try time(&validity, buffer) else { return nil }
        try validity.finish()
        let subject = try tbs.readElement(.sequence)
        guard try validName(tbs.children(of: subject), buffer) else { return nil }
        let spki = try tbs.readElement(.sequence)
        guard let extensionsElement = try tbs.readOptionalElement(.contextSpecific(3, constructed: true)) else { return nil }
        try tbs.finish()

        var outerReader = try certificate.children(of: outer)
        let algorithmOID = try outerReader.readContent(tag: 0x06)
        let parameters = outerReader.isAtEnd ? nil : try outerReader.readElement()
        try outerReader.finish()

        var fields = CertificateFields(
            tbs: tbsElement.start..<tbsElement.end, innerAlgorithm: inner.start..<inner.end, outerAlgorithm: outer.start..<outer.end,
            algorithmOID: algorithmOID, algorithmParameters: parameters.map { $0.start..<$0.end },
            signature: (signatureBits.lowerBound + 1)..<signatureBits.upperBound, serial: serial, issuer: issuer.start..<issuer.end,
            subject: subject.start..<subject.end, notBefore: notBefore, notAfter: notAfter, subjectPublicKeyInfo: spki.start..<spki.end,
            extensions: [])
        var wrapper = try tbs.children(of: extensionsElement)
        var list = try wrapper.readConstructed(.sequence)
        try wrapper.finish()
        while !list.isAtEnd {
            var item = try list.readConstructed(.sequence)
            let oid = try item.readContent(tag: 0x06)
            var critical = false
            if let flag = try item.readOptionalElement(.boolean) {
                // DER: DEFAULT FALSE is never written, TRUE is 0xFF.
                guard flag.contentLength == 1, buffer[flag.contentStart] == 0xFF else { return nil }
                critical = true
            }
            let value = try item.readContent(tag: 0x04)
            try item.finish()
            for earlier in fields.extensions where bytesEqual(buffer, earlier.oid, oid) { return nil }
            fields.extensions.append(Extension(oid: oid, critical: critical, value: value))
            guard try fields.decodeKnown(oid: oid, value: value, list.descending(into: value, at: value.lowerBound), buffer) else {
                return nil
            }
        }
        guard !fields.extensions.isEmpty else { return nil }
        return fields
    }

    /// The content of 2.5.29.x OIDs (`55 1D x`).
    private static func isX509Extension(_ buffer: UnsafeRawBufferPointer, _ oid: Range<Int>, _ last: UInt8) -> Bool {
        oid.count == 3 && buffer[oid.lowerBound] == 0x55 && buffer[oid.lowerBound + 1] == 0x1D && buffer[oid.lowerBound + 2] == last
    }

    /// Decodes basicConstraints (19), keyUsage (15), subjectKeyIdentifier (14),
    /// authorityKeyIdentifier (35) and extKeyUsage (37); false when one is malformed.
    private mutating func decodeKnown(
        oid: Range<Int>, value: Range<Int>, _ reader: ASN1RawReader, _ buffer: UnsafeRawBufferPointer
    ) throws(ASN1Error) -> Bool {
        var reader = reader
        if Self.isX509Extension(buffer, oid, 19) {
            var constraints = try reader.readConstructed(.sequence)
            try reader.finish()
            hasBasicConstraints = true
            if let flag = try constraints.readOptionalElement(.boolean) {
                guard flag.contentLength == 1, buffer[flag.contentStart] == 0xFF else { return false }
                isCA = true
            }
            if !constraints.isAtEnd {
                let length = try constraints.readInt64()
                guard length >= 0, length <= 255, isCA else { return false }
                pathLength = Int(length)
            }
            try constraints.finish()
        } else if Self.isX509Extension(buffer, oid, 15) {
            let bits = try reader.readContent(tag: 0x03)
            try reader.finish()
            guard let unused = bits.first.map({ buffer[$0] }), unused <= 7, bits.count > 1 || unused == 0, bits.count <= 3 else {
                return false
            }
            var usage: UInt16 = 0
            for bit in 0..<9 {
                let index = bits.lowerBound + 1 + bit / 8
                if index < bits.upperBound, buffer[index] & (0x80 >> UInt8(bit % 8)) != 0 { usage |= 1 << UInt16(bit) }
            }
            keyUsage = KeyUsage(rawValue: usage)
        } else if Self.isX509Extension(buffer, oid, 14) {
            subjectKeyID = try reader.readContent(tag: 0x04)
            try reader.finish()
        } else if Self.isX509Extension(buffer, oid, 35) {
            var identifier = try reader.readConstructed(.sequence)
            try reader.finish()
            if let keyID = try identifier.readOptionalElement(.contextSpecific(0, constructed: false)) {
                authorityKeyID = keyID.contentStart..<keyID.contentEnd
            }
            while !identifier.isAtEnd {
                let element = try identifier.readElement()
                guard element.identifier.tagClass == .contextSpecific, [1, 2].contains(element.identifier.tagNumber) else { return false }
                authorityKeyIDHasIssuer = true
            }
        } else if Self.isX509Extension(buffer, oid, 37) {
            var purposes = try reader.readConstructed(.sequence)
            try reader.finish()
            guard !purposes.isAtEnd else { return false }
            while !purposes.isAtEnd { _ = try purposes.readContent(tag: 0x06) }
        }
        return true
    }

    /// A Name: a SEQUENCE of non-empty SETs of `SEQUENCE { OID, string }` whose strings are of the
    /// types OpenSSL reads and can convert to UTF-8.
    private static func validName(_ name: ASN1RawReader, _ buffer: UnsafeRawBufferPointer) throws(ASN1Error) -> Bool {
        var name = name
        while !name.isAtEnd {
            var set = try name.readConstructed(.set)
            guard !set.isAtEnd else { return false }
            while !set.isAtEnd {
                var attribute = try set.readConstructed(.sequence)
                _ = try attribute.readContent(tag: 0x06)
                let value = try attribute.readElement()
                try attribute.finish()
                guard let tag = value.identifier.shortFormByte else { return false }
                let length = value.contentLength
                switch tag {
                case 0x13, 0x14, 0x16, 0x1A, 0x12: break  // Printable, T61, IA5, Visible, Numeric
                case 0x0C:  // UTF8String
                    let bytes = UnsafeRawBufferPointer(rebasing: buffer[value.contentStart..<value.contentEnd])
                    guard String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) != nil else { return false }
                case 0x1E: guard length % 2 == 0 else { return false }  // BMPString
                case 0x1C: guard length % 4 == 0 else { return false }  // UniversalString
                default: return false
                }
            }
        }
        return true
    }

    /// A UTCTime `YYMMDDHHMMSSZ` or GeneralizedTime `YYYYMMDDHHMMSSZ`, as POSIX seconds.
    private static func time(_ reader: inout ASN1RawReader, _ buffer: UnsafeRawBufferPointer) throws(ASN1Error) -> Int64? {
        let element = try reader.readElement()
        let range = element.contentStart..<element.contentEnd
        let yearDigits: Int
        switch element.identifier {
        case .utcTime where range.count == 13: yearDigits = 2
        case .generalizedTime where range.count == 15: yearDigits = 4
        default: return nil
        }
        guard buffer[range.upperBound - 1] == UInt8(ascii: "Z") else { return nil }
        var digits: [Int] = []
        digits.reserveCapacity(14)
        for index in range.dropLast() {
            let byte = buffer[index]
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            digits.append(Int(byte - 0x30))
        }
        func number(_ at: Int, _ count: Int) -> Int { digits[at..<(at + count)].reduce(0) { $0 * 10 + $1 } }
        var year = number(0, yearDigits)
        if yearDigits == 2 { year += year < 50 ? 2000 : 1900 }
        let month = number(yearDigits, 2)
        let day = number(yearDigits + 2, 2)
        let hour = number(yearDigits + 4, 2)
        let minute = number(yearDigits + 6, 2)
        let second = number(yearDigits + 8, 2)
        guard (1...12).contains(month), day >= 1, day <= CivilCalendar.daysInMonth(year: year, month: month), hour < 24, minute < 60,
            second < 60
        else { return nil }
        let days = CivilCalendar.daysSince1970(year: year, month: month, day: day)
        return days * 86_400 + Int64(hour * 3_600 + minute * 60 + second)
    }

    private static func bytesEqual(_ buffer: UnsafeRawBufferPointer, _ lhs: Range<Int>, _ rhs: Range<Int>) -> Bool {
        lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { buffer[$0] == buffer[$1] }
    }
}
