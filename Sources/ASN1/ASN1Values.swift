import Internals

// Typed decoding of primitive contents: shared by ASN1Reader, ASN1Element and the receipt hot path.

/// An ASN.1 OBJECT IDENTIFIER, kept as its validated content octets.
///
/// Comparison and hashing use the encoded octets, so comparing against a constant costs a
/// byte comparison; ``components`` and ``description`` decode on demand.
public struct ASN1ObjectIdentifier: Hashable, Sendable, CustomStringConvertible {
    /// The content octets (without identifier and length).
    public let encodedContent: ArraySlice<UInt8>

    /// Wraps content octets that were already validated.
    @inlinable
    init(validated content: ArraySlice<UInt8>) { self.encodedContent = content }

    /// Creates an identifier from its arcs, for example `ASN1ObjectIdentifier(1, 2, 840, 113549)`.
    ///
    /// The first arc should be 0, 1 or 2 and, when it is 0 or 1, the second below 40; other values
    /// are encoded as given (the caller writes constants, not input).
    public init(_ components: UInt64...) {
        self.init(components: components)
    }

    /// Creates an identifier from its arcs.
    public init(components: [UInt64]) {
        var bytes: [UInt8] = []
        var arcs = components[...]
        if let first = arcs.popFirst() {
            let second = arcs.popFirst() ?? 0
            ASN1ObjectIdentifier.appendBase128(first &* 40 &+ second, to: &bytes)
        }
        for arc in arcs { ASN1ObjectIdentifier.appendBase128(arc, to: &bytes) }
        self.encodedContent = bytes[...]
    }

    /// Parses a dotted string such as `"1.2.840.113549.1.7.2"`; `nil` if it is not one. The one
    /// validator of dotted OIDs in the package: at least two arcs of decimal digits without leading
    /// zeros, each fitting 64 bits; the first arc 0, 1 or 2; the second below 40 unless the first
    /// is 2, and small enough that `first × 40 + second` fits 64 bits (the first subidentifier).
    /// So the result's ``description`` gives back exactly `dotted`.
    public init?(dotted: String) {
        var arcs: [UInt64] = []
        for part in dotted.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard let first = part.first, first != UInt8(ascii: "0") || part.count == 1 else { return nil }
            var value: UInt64 = 0
            for digit in part {
                guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
                let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
                guard !overflow, !carry else { return nil }
                value = sum
            }
            arcs.append(value)
        }
        guard arcs.count >= 2, arcs[0] <= 2, arcs[0] == 2 || arcs[1] < 40, arcs[1] <= UInt64.max - 80 else { return nil }
        self.init(components: arcs)
    }

    /// Validates content octets of an OBJECT IDENTIFIER; `offset` is used in errors.
    public init(validatingContent content: ArraySlice<UInt8>, offset: Int = 0) throws(ASN1Error) {
        try ASN1ObjectIdentifier.validate(content, offset: offset)
        self.encodedContent = content
    }

    static func appendBase128(_ value: UInt64, to bytes: inout [UInt8]) {
        var groups = 1
        while groups < 10 && value >> (7 * UInt64(groups)) != 0 { groups += 1 }
        for i in stride(from: groups - 1, through: 0, by: -1) {
            let group = UInt8(truncatingIfNeeded: value >> (7 * UInt64(i))) & 0x7F
            bytes.append(i == 0 ? group : group | 0x80)
        }
    }

    @usableFromInline
    static func validate(_ content: ArraySlice<UInt8>, offset: Int) throws(ASN1Error) {
        guard let last = content.last, last & 0x80 == 0 else {
            throw ASN1Error.make(.invalidObjectIdentifier, offset, "OBJECT IDENTIFIER is empty or truncated")
        }
        // Over the raw octets (no bounds check per octet: every verification validates a few
        // identifiers); 0 valid, 1 a superfluous leading octet, 2 an arc beyond 64 bits.
        let problem = content.withUnsafeBytes { octets -> UInt8 in
            var startOfArc = true
            var value: UInt64 = 0
            for byte in octets {
                if startOfArc && byte == 0x80 { return 1 }
                guard value <= UInt64.max >> 7 else { return 2 }
                value = value << 7 | UInt64(byte & 0x7F)
                startOfArc = byte & 0x80 == 0
                if startOfArc { value = 0 }
            }
            return 0
        }
        switch problem {
        case 0: return
        case 1: throw ASN1Error.make(.invalidObjectIdentifier, offset, "OBJECT IDENTIFIER arc has a superfluous leading octet")
        default: throw ASN1Error.make(.invalidObjectIdentifier, offset, "OBJECT IDENTIFIER arc exceeds 64 bits")
        }
    }

    /// The arcs, for example `[1, 2, 840, 113549, 1, 7, 2]`.
    public var components: [UInt64] {
        var result: [UInt64] = []
        var value: UInt64 = 0
        for byte in encodedContent {
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 {
                if result.isEmpty {
                    let first: UInt64 = value < 40 ? 0 : (value < 80 ? 1 : 2)
                    result.append(first)
                    result.append(value - first * 40)
                } else {
                    result.append(value)
                }
                value = 0
            }
        }
        return result
    }

    /// The dotted form, for example `1.2.840.113549.1.7.2`.
    public var description: String {
        components.map(String.init).joined(separator: ".")
    }

    /// Identifiers are equal when their content octets are (compared with `memcmp`:
    /// verification compares a receipt's identifiers with known ones several times per input).
    public static func == (lhs: ASN1ObjectIdentifier, rhs: ASN1ObjectIdentifier) -> Bool {
        bytesEqual(lhs.encodedContent, rhs.encodedContent)
    }

    /// Hashes the content octets, all at once.
    public func hash(into hasher: inout Hasher) {
        encodedContent.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// A decoded BIT STRING.
public struct ASN1BitString: Hashable, Sendable {
    /// The octets holding the bits (the leading unused-bits octet removed).
    public let bytes: ArraySlice<UInt8>
    /// How many low-order bits of the last octet are padding (0...7).
    public let unusedBits: UInt8
}

/// A decoded UTCTime or GeneralizedTime.
public struct ASN1Time: Hashable, Sendable, CustomStringConvertible {
    /// The year as written (UTCTime's two digits mapped to 1950...2049).
    public let year: Int
    /// The month, 1...12.
    public let month: Int
    /// The day of the month, 1...31.
    public let day: Int
    /// The hour, 0...23.
    public let hour: Int
    /// The minute, 0...59.
    public let minute: Int
    /// The second, 0...60 (60 for a leap second).
    public let second: Int
    /// Fractional seconds in nanoseconds (GeneralizedTime only).
    public let nanosecond: Int
    /// Offset of the written local time from UTC, in seconds (0 for `Z`).
    public let utcOffsetSeconds: Int

    /// The instant as whole seconds since 1970-01-01T00:00:00Z (fraction in ``nanosecond``).
    public var secondsSince1970: Int64 {
        let days = CivilCalendar.daysSince1970(year: year, month: month, day: day)
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second - utcOffsetSeconds)
    }

    /// ISO 8601 in UTC, e.g. `2035-02-09T21:40:36Z`.
    public var description: String {
        CivilCalendar.iso8601(secondsSince1970: secondsSince1970)
    }
}

/// Which byte values a character string type admits.
@_spi(RawParsing) public enum ASN1StringKind: Sendable {
    case utf8
    case ia5
    case printable
    case visible
}

extension ASN1RawReader {
    /// Decodes a BOOLEAN's content.
    @inlinable
    public static func decodeBoolean(
        _ buffer: UnsafeRawBufferPointer, _ range: Range<Int>, rules: ASN1EncodingRules, at offset: Int
    ) throws(ASN1Error) -> Bool {
        guard range.count == 1 else {
            throw ASN1Error.make(.invalidBoolean, offset, "BOOLEAN must have exactly one content octet")
        }
        let byte = buffer[range.lowerBound]
        if rules == .distinguished && byte != 0 && byte != 0xFF {
            throw ASN1Error.make(.invalidBoolean, offset, "DER BOOLEAN must be 00 or FF")
        }
        return byte != 0
    }

    /// Validates a BIT STRING's content and returns the range of its data octets and padding.
    @inlinable
    public static func decodeBitString(
        _ buffer: UnsafeRawBufferPointer, _ range: Range<Int>, rules: ASN1EncodingRules, at offset: Int
    ) throws(ASN1Error) -> (data: Range<Int>, unusedBits: UInt8) {
        guard let first = range.first else {
            throw ASN1Error.make(.invalidBitString, offset, "BIT STRING has no content octets")
        }
        let unused = buffer[first]
        guard unused <= 7, !(range.count == 1 && unused != 0) else {
            throw ASN1Error.make(.invalidBitString, offset, "BIT STRING has an invalid unused-bits count \(unused)")
        }
        if rules == .distinguished && unused != 0 {
            let last = buffer[range.upperBound - 1]
            guard last & ~(0xFF << unused) == 0 else {
                throw ASN1Error.make(.invalidBitString, offset, "DER BIT STRING padding bits must be zero")
            }
        }
        return (range.lowerBound + 1..<range.upperBound, unused)
    }

    /// Checks that `range` holds only bytes the string `kind` admits.
    @inlinable
    public static func validateString(
        _ buffer: UnsafeRawBufferPointer, _ range: Range<Int>, kind: ASN1StringKind, at offset: Int
    ) throws(ASN1Error) {
        switch kind {
        case .utf8:
            var i = range.lowerBound
            while i < range.upperBound && buffer[i] < 0x80 { i &+= 1 }
            if i < range.upperBound {
                let rest = UnsafeRawBufferPointer(rebasing: buffer[i..<range.upperBound])
                guard validUTF8(rest) else {
                    throw ASN1Error.make(.invalidString, offset, "UTF8String holds invalid UTF-8")
                }
            }
        case .ia5:
            for i in range where buffer[i] >= 0x80 {
                throw ASN1Error.make(.invalidString, offset, "IA5String holds a non-ASCII byte at \(i - range.lowerBound)")
            }
        case .visible:
            for i in range where buffer[i] < 0x20 || buffer[i] > 0x7E {
                throw ASN1Error.make(.invalidString, offset, "VisibleString holds a non-printable byte")
            }
        case .printable:
            for i in range where !isPrintableStringByte(buffer[i]) {
                throw ASN1Error.make(.invalidString, offset, "PrintableString holds a byte outside its set")
            }
        }
    }

    @inlinable
    static func isPrintableStringByte(_ b: UInt8) -> Bool {
        switch b {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39: true
        case 0x20, 0x27, 0x28, 0x29, 0x2B, 0x2C, 0x2D, 0x2E, 0x2F, 0x3A, 0x3D, 0x3F: true
        default: false
        }
    }

    /// Strict UTF-8 validation (no overlongs, no surrogates, nothing above U+10FFFF).
    @usableFromInline
    static func validUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        UTF8Sequence.isValid(bytes)
    }

    /// Decodes UTCTime or GeneralizedTime content.
    public static func decodeTime(
        _ buffer: UnsafeRawBufferPointer, _ range: Range<Int>, generalized: Bool, rules: ASN1EncodingRules,
        at offset: Int
    ) throws(ASN1Error) -> ASN1Time {
        var p = range.lowerBound
        let e = range.upperBound
        func fail(_ why: String) -> ASN1Error { ASN1Error.make(.invalidTime, offset, why) }
        func digits(_ count: Int) throws(ASN1Error) -> Int {
            guard e - p >= count else { throw fail("time is too short") }
            var v = 0
            for _ in 0..<count {
                let c = buffer[p]
                guard c >= 0x30 && c <= 0x39 else { throw fail("time has a non-digit where a digit belongs") }
                v = v * 10 + Int(c - 0x30)
                p += 1
            }
            return v
        }
        var year: Int
        if generalized {
            year = try digits(4)
        } else {
            let yy = try digits(2)
            year = yy < 50 ? 2000 + yy : 1900 + yy
        }
        let month = try digits(2)
        let day = try digits(2)
        let hour = try digits(2)
        let minute = try digits(2)
        var second = 0
        var nanosecond = 0
        let der = rules == .distinguished
        if p < e, buffer[p] >= 0x30 && buffer[p] <= 0x39 {
            second = try digits(2)
        } else if der {
            throw fail("DER time must include seconds")
        }
        if generalized, p < e, buffer[p] == 0x2E || buffer[p] == 0x2C {
            if der && buffer[p] == 0x2C { throw fail("DER time uses '.' for fractions") }
            p += 1
            var scale = 100_000_000
            var count = 0
            var lastDigit = 0
            while p < e, buffer[p] >= 0x30 && buffer[p] <= 0x39 {
                lastDigit = Int(buffer[p] - 0x30)
                nanosecond += lastDigit * scale
                scale /= 10
                count += 1
                p += 1
            }
            guard count > 0, count <= 9 || !der else { throw fail("time has an empty or over-long fraction") }
            if der && lastDigit == 0 { throw fail("DER time fraction has trailing zeros") }
        }
        var utcOffset = 0
        guard p < e else { throw fail("time has no time zone designator") }
        let zone = buffer[p]
        p += 1
        if zone == 0x5A {
            // 'Z'
        } else if !der && (zone == 0x2B || zone == 0x2D) {
            let oh = try digits(2)
            let om = try digits(2)
            guard oh <= 23, om <= 59 else { throw fail("time zone offset out of range") }
            utcOffset = (oh * 3600 + om * 60) * (zone == 0x2D ? -1 : 1)
        } else {
            throw fail(der ? "DER time must end in Z" : "time zone designator must be Z or ±hhmm")
        }
        guard p == e else { throw fail("time has trailing characters") }
        guard month >= 1 && month <= 12, day >= 1 && day <= CivilCalendar.daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 60
        else { throw fail("time has a field out of range") }
        return ASN1Time(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second,
            nanosecond: nanosecond, utcOffsetSeconds: utcOffset)
    }

    /// Collects the content of a string element into `output`, concatenating the segments of a
    /// BER constructed encoding (each segment an OCTET STRING or the same string type).
    /// - Returns: `false` if the element is primitive (nothing appended; use its content directly).
    public static func appendSegments(
        _ buffer: UnsafeRawBufferPointer, of element: ASN1RawElement, base: Int, rules: ASN1EncodingRules,
        depth: Int, maximumDepth: Int, into output: inout [UInt8]
    ) throws(ASN1Error) -> Bool {
        guard element.identifier.isConstructed else { return false }
        guard rules == .basic else {
            throw ASN1Error.make(
                .invalidConstruction, base + element.start, "constructed \(element.identifier) is not allowed in DER")
        }
        let outer = ASN1RawReader(
            buffer: buffer, base: base, position: element.start, end: element.end, rules: rules, depth: depth,
            maximumDepth: maximumDepth)
        var children = try outer.children(of: element)
        let segmentTag = element.identifier.tagNumber
        while !children.isAtEnd {
            let segment = try children.readElement()
            guard segment.identifier.tagClass == .universal,
                segment.identifier.tagNumber == 4 || segment.identifier.tagNumber == segmentTag
            else {
                throw ASN1Error.make(
                    .unexpectedTag, base + segment.start, "segment of a constructed string is \(segment.identifier)")
            }
            if segment.identifier.isConstructed {
                _ = try appendSegments(
                    buffer, of: segment, base: base, rules: rules, depth: children.depth, maximumDepth: maximumDepth,
                    into: &output)
            } else {
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[segment.contentStart..<segment.contentEnd]))
            }
        }
        return true
    }
}
