@_spi(RawParsing) import ASN1

/// Whether two DER Names certainly differ as OpenSSL compares them (`X509_NAME_cmp` of their
/// canonical encodings), decided without OpenSSL: chain validation's fast path asks "is this
/// certificate self-issued?" of every leaf and intermediate, and `d2i_X509_NAME` of both names
/// costs more than the rest of the question.
///
/// OpenSSL's canonical encoding keeps each RDN as a SET (its size, the attribute types) and
/// rewrites each value of a text type (UTF8String, PrintableString, T61String, IA5String,
/// BMPString, UniversalString) as UTF-8 with ASCII upper case lowered, leading and
/// trailing white space dropped and inner runs of it collapsed to one space. So two names
/// certainly differ when their RDN counts differ, an RDN's size differs, or two single-valued RDNs
/// differ in attribute type or, for ASCII values of the one-byte text types, in their letters
/// once case and all white space are ignored. Anything else (multi-valued RDNs, BMP or Universal
/// strings, non-ASCII text, names ``CertificateFields`` does not accept) answers false: "not
/// certain", and the caller asks OpenSSL.
package enum NameDifference {
    /// True only when OpenSSL's `X509_NAME_cmp` certainly finds `lhs` and `rhs` different.
    package static func certain(_ lhs: ArraySlice<UInt8>, _ rhs: ArraySlice<UInt8>) -> Bool {
        // Only names OpenSSL reads (as the certificate reader checks them): OpenSSL's comparison
        // of a name it cannot read is not "different".
        guard CertificateFields.validName(lhs), CertificateFields.validName(rhs), let left = rdns(lhs), let right = rdns(rhs) else {
            return false
        }
        guard left.count == right.count else { return true }
        for (a, b) in zip(left, right) {
            guard a.count == b.count else { return true }
            guard a.count == 1, let x = a.first, let y = b.first else { continue }
            if x.type != y.type { return true }
            if let xText = x.foldedText, let yText = y.foldedText, xText != yText { return true }
        }
        return false
    }

    private struct Attribute {
        var type: ArraySlice<UInt8>
        /// The value's ASCII letters and symbols, upper case lowered, white space removed; nil
        /// when the value is not ASCII text of a one-byte text type.
        var foldedText: [UInt8]?
    }

    /// The Name's RDNs, or nil when it is not a SEQUENCE of non-empty SETs of
    /// `SEQUENCE { OID, value }`.
    private static func rdns(_ der: ArraySlice<UInt8>) -> [[Attribute]]? {
        der.withUnsafeBytes { buffer in try? read(buffer) }
    }

    private static func read(_ buffer: UnsafeRawBufferPointer) throws(ASN1Error) -> [[Attribute]]? {
        var top = ASN1RawReader(buffer: buffer, rules: .der, maximumDepth: 8)
        var name = try top.readConstructed(.sequence)
        try top.finish()
        var result: [[Attribute]] = []
        while !name.isAtEnd {
            var set = try name.readConstructed(.set)
            var rdn: [Attribute] = []
            while !set.isAtEnd {
                var attribute = try set.readConstructed(.sequence)
                let type = try attribute.readContent(tag: 0x06)
                let value = try attribute.readElement()
                try attribute.finish()
                rdn.append(
                    Attribute(
                        type: UnsafeRawBufferPointer(rebasing: buffer[type]).withMemoryRebound(to: UInt8.self) { ArraySlice($0) },
                        foldedText: folded(buffer, value)))
            }
            guard !rdn.isEmpty else { return nil }
            result.append(rdn)
        }
        return result
    }

    /// UTF8String, PrintableString, T61String and IA5String values whose bytes are all ASCII:
    /// OpenSSL's UTF-8 conversion leaves those bytes as they are.
    private static func folded(_ buffer: UnsafeRawBufferPointer, _ value: ASN1RawElement) -> [UInt8]? {
        guard let tag = value.identifier.shortFormByte, [0x0C, 0x13, 0x14, 0x16].contains(tag) else { return nil }
        var text: [UInt8] = []
        text.reserveCapacity(value.contentLength)
        for index in value.contentStart..<value.contentEnd {
            let byte = buffer[index]
            guard byte < 0x80 else { return nil }
            // OpenSSL's white space (space, \t, \n, \v, \f, \r) is dropped entirely.
            if byte == 0x20 || (0x09...0x0D).contains(byte) { continue }
            text.append((0x41...0x5A).contains(byte) ? byte + 0x20 : byte)
        }
        return text
    }
}
