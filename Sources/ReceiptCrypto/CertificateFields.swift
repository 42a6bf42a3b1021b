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
/// and OpenSSL's `X509_cmp_time` accept (`YYMMDDHHMMSSZ` / `YYYYMMDDHHMMSSZ`), every OBJECT
/// IDENTIFIER encoded as OpenSSL accepts it, both signature AlgorithmIdentifiers with parameters
/// absent or NULL, a SubjectPublicKeyInfo of the shape OpenSSL reads, no duplicated extension,
/// and well-formed basicConstraints, keyUsage (unused bits zero), subject and authority key
/// identifiers (a key identifier only) and extended key usage. Anything else is refused (``parse(_:)`` returns nil) and
/// the caller keeps OpenSSL's parser. The `certificate` fuzz target checks that whatever this
/// reader accepts, `d2i_X509` accepts and reads the same way (CryptoBaselines'
/// `OwnReaderDifferential`).
package struct CertificateFields: Sendable {
    /// One extension, as positions in the certificate's bytes.
    package struct Extension: Sendable {
        /// The content of the extnID OBJECT IDENTIFIER.
        package var oid: Range<Int>
        package var critical: Bool
        /// The content of the extnValue OCTET STRING.
        package var value: Range<Int>
    }

    /// The whole TBSCertificate element (the bytes the issuer signed).
    package var tbs: Range<Int>
    /// The TBSCertificate's `signature` AlgorithmIdentifier element.
    package var innerAlgorithm: Range<Int>
    /// The outer `signatureAlgorithm` AlgorithmIdentifier element.
    package var outerAlgorithm: Range<Int>
    /// The content of the outer algorithm's OID.
    package var algorithmOID: Range<Int>
    /// The algorithm's parameters element, if any.
    package var algorithmParameters: Range<Int>?
    /// The signature BIT STRING's bits (after the unused-bits octet, which must be 0).
    package var signature: Range<Int>
    /// The serial INTEGER's content.
    package var serial: Range<Int>
    /// The issuer and subject Name elements.
    package var issuer: Range<Int>
    package var subject: Range<Int>
    /// notBefore and notAfter in POSIX seconds.
    package var notBefore: Int64
    package var notAfter: Int64
    /// The SubjectPublicKeyInfo element.
    package var subjectPublicKeyInfo: Range<Int>
    package var extensions: [Extension]
    /// basicConstraints: present, cA, pathLenConstraint.
    package var hasBasicConstraints = false
    package var isCA = false
    package var pathLength: Int?
    /// keyUsage, when present.
    package var keyUsage: KeyUsage?
    /// subjectKeyIdentifier's and authorityKeyIdentifier's keyIdentifier contents.
    package var subjectKeyID: Range<Int>?
    package var authorityKeyID: Range<Int>?

    /// Reads `der`, or nil when it is not a certificate this reader accepts.
    package static func parse(_ der: [UInt8]) -> CertificateFields? {
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
        // A leading zero octet is allowed only before an octet with its high bit set (DER's
        // minimal INTEGER; d2i_X509 refuses the padded form).
        if firstSerial == 0, serial.count > 1, buffer[serial.lowerBound + 1] & 0x80 == 0 { return nil }
        let inner = try tbs.readElement(.sequence)
        guard try algorithm(tbs.children(of: inner), buffer) != nil else { return nil }
        let issuer = try tbs.readElement(.sequence)
        guard try validName(tbs.children(of: issuer), buffer) else { return nil }
        var validity = try tbs.readConstructed(.sequence)
        guard let notBefore = try time(&validity, buffer), let notAfter = try time(&validity, buffer) else { return nil }
        try validity.finish()
        let subject = try tbs.readElement(.sequence)
        guard try validName(tbs.children(of: subject), buffer) else { return nil }
        let spki = try tbs.readElement(.sequence)
        guard try validSubjectPublicKeyInfo(tbs.children(of: spki), buffer) else { return nil }
        guard let extensionsElement = try tbs.readOptionalElement(.contextSpecific(3, constructed: true)) else { return nil }
        try tbs.finish()

        guard let (algorithmOID, parameters) = try algorithm(certificate.children(of: outer), buffer) else { return nil }

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
            guard validOID(buffer, oid) else { return nil }
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
            // Unused bits set would be usages only this reader saw (keyCertSign, say).
            guard Self.validBitString(buffer, bits), bits.count <= 3 else { return false }
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
            // An authorityCertIssuer or authorityCertSerialNumber is left to OpenSSL, which decodes
            // (and matches) them; this reader does not.
            guard identifier.isAtEnd else { return false }
        } else if Self.isX509Extension(buffer, oid, 37) {
            var purposes = try reader.readConstructed(.sequence)
            try reader.finish()
            guard !purposes.isAtEnd else { return false }
            while !purposes.isAtEnd { guard try Self.validOID(buffer, purposes.readContent(tag: 0x06)) else { return false } }
        }
        return true
    }

    /// An AlgorithmIdentifier as OpenSSL reads one, with parameters absent or NULL (the only forms
    /// of the algorithms chain validation's fast path verifies): its OID's content and its
    /// parameters element, or nil.
    private static func algorithm(
        _ reader: ASN1RawReader, _ buffer: UnsafeRawBufferPointer
    ) throws(ASN1Error) -> (oid: Range<Int>, parameters: ASN1RawElement?)? {
        var reader = reader
        let oid = try reader.readContent(tag: 0x06)
        guard validOID(buffer, oid) else { return nil }
        let parameters = try reader.readOptionalElement(.null)
        try reader.finish()
        if let parameters, parameters.contentLength != 0 { return nil }
        return (oid, parameters)
    }

    /// `SubjectPublicKeyInfo ::= SEQUENCE { SEQUENCE { OID, parameters }, BIT STRING }` as OpenSSL
    /// reads it, with parameters absent, NULL or a named curve's OID (the key itself is decoded by
    /// ``PublicKeyImport`` or OpenSSL when needed).
    private static func validSubjectPublicKeyInfo(_ reader: ASN1RawReader, _ buffer: UnsafeRawBufferPointer) throws(ASN1Error) -> Bool {
        var info = reader
        var algorithm = try info.readConstructed(.sequence)
        let bits = try info.readContent(tag: 0x03)
        try info.finish()
        guard try validOID(buffer, algorithm.readContent(tag: 0x06)) else { return false }
        if let curve = try algorithm.readOptionalElement(.objectIdentifier) {
            guard validOID(buffer, curve.contentStart..<curve.contentEnd) else { return false }
        } else if let null = try algorithm.readOptionalElement(.null) {
            guard null.contentLength == 0 else { return false }
        }
        try algorithm.finish()
        return validBitString(buffer, bits)
    }

    /// A DER BIT STRING's content: the unused-bits octet at most 7, 0 when no bits follow, and the
    /// unused bits zero (OpenSSL masks them off, so bits set there would read differently).
    private static func validBitString(_ buffer: UnsafeRawBufferPointer, _ content: Range<Int>) -> Bool {
        guard let unused = content.first.map({ buffer[$0] }), unused <= 7, content.count > 1 || unused == 0 else { return false }
        return buffer[content.upperBound - 1] & UInt8((1 << UInt16(unused)) - 1) == 0
    }

    /// An OBJECT IDENTIFIER's content as OpenSSL accepts it (X.690 8.19.2): not empty, the last
    /// octet ends a subidentifier, and no subidentifier starts with 0x80.
    private static func validOID(_ buffer: UnsafeRawBufferPointer, _ content: Range<Int>) -> Bool {
        guard let last = content.last, buffer[last] & 0x80 == 0 else { return false }
        var startsSubidentifier = true
        for index in content {
            let byte = buffer[index]
            if startsSubidentifier && byte == 0x80 { return false }
            startsSubidentifier = byte & 0x80 == 0
        }
        return true
    }

    /// A Name: a SEQUENCE of non-empty SETs of `SEQUENCE { OID, string }` whose strings are of the
    /// types OpenSSL reads in names and can convert to UTF-8.
    private static func validName(_ name: ASN1RawReader, _ buffer: UnsafeRawBufferPointer) throws(ASN1Error) -> Bool {
        var name = name
        while !name.isAtEnd {
            var set = try name.readConstructed(.set)
            guard !set.isAtEnd else { return false }
            while !set.isAtEnd {
                var attribute = try set.readConstructed(.sequence)
                guard try validOID(buffer, attribute.readContent(tag: 0x06)) else { return false }
                let value = try attribute.readElement()
                try attribute.finish()
                guard let tag = value.identifier.shortFormByte,
                    validNameValue(tag, UnsafeRawBufferPointer(rebasing: buffer[value.contentStart..<value.contentEnd]))
                else { return false }
            }
        }
        return true
    }

    /// Whether `der` is a Name this reader accepts (``NameDifference`` decides only about those).
    static func validName(_ der: ArraySlice<UInt8>) -> Bool {
        der.withUnsafeBytes { buffer in
            var top = ASN1RawReader(buffer: buffer, rules: .der, maximumDepth: 8)
            guard let name = try? top.readElement(.sequence), (try? top.finish()) != nil, let children = try? top.children(of: name) else {
                return false
            }
            return (try? validName(children, buffer)) == true
        }
    }

    /// A name attribute's value of a string type OpenSSL's name reader takes (`ASN1_PRINTABLE`:
    /// not VisibleString) and can convert to UTF-8, as its canonical form needs.
    private static func validNameValue(_ tag: UInt8, _ bytes: UnsafeRawBufferPointer) -> Bool {
        func isScalar(_ value: UInt32) -> Bool { value <= 0x10_FFFF && !(0xD800...0xDFFF).contains(value) }
        switch tag {
        case 0x12, 0x13, 0x14, 0x16: return true  // Numeric, Printable, T61, IA5
        case 0x0C: return String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) != nil  // UTF8String
        case 0x1E:  // BMPString: UTF-16 code units, no surrogates
            guard bytes.count % 2 == 0 else { return false }
            return stride(from: 0, to: bytes.count, by: 2).allSatisfy { isScalar(UInt32(bytes[$0]) << 8 | UInt32(bytes[$0 + 1])) }
        case 0x1C:  // UniversalString: UCS-4 code points
            guard bytes.count % 4 == 0 else { return false }
            return stride(from: 0, to: bytes.count, by: 4).allSatisfy {
                isScalar(UInt32(bytes[$0]) << 24 | UInt32(bytes[$0 + 1]) << 16 | UInt32(bytes[$0 + 2]) << 8 | UInt32(bytes[$0 + 3]))
            }
        default: return false
        }
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
