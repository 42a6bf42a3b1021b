import Internals
import Testing

@_spi(RawParsing) @testable import ASN1

/// The shared DER primitives: each rule refused where it must be, and every shortcut agreeing with
/// the general decoder on what it accepts.
@Suite struct DERFramingTests {
    /// Runs `body` over the bytes of `hex` as a raw buffer.
    static func withRaw<R>(_ hexText: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try hex(hexText).withUnsafeBytes { try body($0) }
    }

    @Test func integerMinimality() {
        // The first nine bits all zero or all one: the first octet is redundant.
        #expect(DERFraming.isRedundantLeadingOctet(0x00, before: 0x7F))
        #expect(DERFraming.isRedundantLeadingOctet(0x00, before: 0x00))
        #expect(DERFraming.isRedundantLeadingOctet(0xFF, before: 0x80))
        #expect(DERFraming.isRedundantLeadingOctet(0xFF, before: 0xFF))
        #expect(!DERFraming.isRedundantLeadingOctet(0x00, before: 0x80))
        #expect(!DERFraming.isRedundantLeadingOctet(0xFF, before: 0x7F))
        #expect(!DERFraming.isRedundantLeadingOctet(0x01, before: 0x00))
        #expect(!DERFraming.isRedundantLeadingOctet(0xFE, before: 0xFF))
    }

    @Test func longFormLengthMinimality() {
        #expect(!DERFraming.isMinimalLongFormLength(0x7F, octets: 1))  // fits the short form
        #expect(DERFraming.isMinimalLongFormLength(0x80, octets: 1))
        #expect(DERFraming.isMinimalLongFormLength(0xFF, octets: 1))
        #expect(!DERFraming.isMinimalLongFormLength(0xFF, octets: 2))  // leading zero octet
        #expect(DERFraming.isMinimalLongFormLength(0x100, octets: 2))
        #expect(!DERFraming.isMinimalLongFormLength(0xFFFF, octets: 3))
        #expect(DERFraming.isMinimalLongFormLength(0x1_0000, octets: 3))
        #expect(DERFraming.isMinimalLongFormLength(UInt64(Int.max), octets: 8))
        #expect(!DERFraming.isMinimalLongFormLength(0x00FF_FFFF_FFFF_FFFF, octets: 8))
    }

    struct ContentCase: Sendable, CustomTestStringConvertible {
        let bytes: String
        let content: Range<Int>?
        var testDescription: String { bytes }
    }

    static let contentCases: [ContentCase] = [
        ContentCase(bytes: "04 00", content: 2..<2),
        ContentCase(bytes: "04 03 01 02 03", content: 2..<5),
        ContentCase(bytes: "04 81 80" + String(repeating: " 00", count: 0x80), content: 3..<0x83),
        ContentCase(bytes: "04 82 01 00" + String(repeating: " 00", count: 0x100), content: 4..<0x104),
        // Not taken: the general decoder decides (and, under DER, refuses the non-minimal ones).
        ContentCase(bytes: "04 81 7F" + String(repeating: " 00", count: 0x7F), content: nil),
        ContentCase(bytes: "04 82 00 FF" + String(repeating: " 00", count: 0xFF), content: nil),
        ContentCase(bytes: "04 83 00 01 00" + String(repeating: " 00", count: 0x100), content: nil),
        ContentCase(bytes: "04 80 00 00", content: nil),  // indefinite
        ContentCase(bytes: "05 00", content: nil),  // another tag
        ContentCase(bytes: "04 03 01 02", content: nil),  // truncated content
        ContentCase(bytes: "04 81", content: nil),  // truncated length
        ContentCase(bytes: "04", content: nil),
        ContentCase(bytes: "", content: nil),
    ]

    @Test(arguments: contentCases)
    func contentShortcut(_ c: ContentCase) throws {
        Self.withRaw(c.bytes) { raw in
            #expect(DERFraming.content(raw, tag: 0x04, at: 0, end: raw.count) == c.content)
            // What the shortcut takes, the general decoder takes identically under DER and BER.
            guard let content = c.content else { return }
            for rules in [ASN1EncodingRules.der, .ber] {
                let element = try? ASN1RawReader.decodeElement(
                    raw, at: 0, end: raw.count, base: 0, rules: rules, depth: 0, maximumDepth: 50)
                #expect(element.map { $0.contentStart..<$0.contentEnd } == content)
            }
        }
    }

    @Test func contentShortcutNeverReadsPastEnd() {
        // The same bytes with `end` cut short: every prefix is refused or fits.
        Self.withRaw("04 82 01 00" + String(repeating: " 00", count: 0x100)) { raw in
            for end in 0..<raw.count {
                #expect(DERFraming.content(raw, tag: 0x04, at: 0, end: end) == nil)
            }
        }
    }

    @Test func smallIntegerShortcut() {
        let taken: [(String, Int)] = [("02 01 00", 0), ("02 01 7F", 127), ("02 01 80", -128), ("02 02 00 80", 128), ("02 02 FF 7F", -129)]
        for (bytes, value) in taken {
            Self.withRaw(bytes) { raw in
                let small = DERFraming.smallInteger(raw, at: 0, end: raw.count)
                #expect(small?.value == value, "\(bytes)")
                #expect(small?.end == raw.count, "\(bytes)")
            }
        }
        // Non-minimal, longer, empty, another tag or truncated: not taken.
        for bytes in ["02 02 00 7F", "02 02 FF 80", "02 03 01 00 00", "02 00", "0A 01 01", "02 02 01", "02 01"] {
            Self.withRaw(bytes) { raw in #expect(DERFraming.smallInteger(raw, at: 0, end: raw.count) == nil, "\(bytes)") }
        }
    }

    /// Every INTEGER content of one and two octets and a sweep of longer ones: the shortcut
    /// returns a value exactly when DER accepts the encoding, and the same value.
    @Test func minimalInt64AgreesWithTheGeneralDecoder() throws {
        var contents: [[UInt8]] = (0...0xFF).map { [UInt8($0)] }
        for a in 0...0xFF { for b in 0...0xFF { contents.append([UInt8(a), UInt8(b)]) } }
        var rng = SplitMix64(seed: 10)
        for count in 3...10 {
            for _ in 0..<2000 {
                var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                // Make the sign-octet cases common.
                if rng.next() % 2 == 0 { bytes[0] = rng.next() % 2 == 0 ? 0x00 : 0xFF }
                contents.append(bytes)
            }
        }
        contents.append([])
        for content in contents {
            content.withUnsafeBytes { raw in
                let range = 0..<raw.count
                let shortcut = DERFraming.minimalInt64(raw, range)
                let der = Result { () throws(ASN1Error) -> Int64 in try ASN1RawReader.decodeInt64(raw, range, rules: .der, at: 0) }
                switch (shortcut, der) {
                case (let value?, .success(let decoded)):
                    #expect(value == decoded, "\(content)")
                case (_?, .failure):
                    Issue.record("\(content): the shortcut accepted what DER refuses")
                case (nil, .success):
                    Issue.record("\(content): DER accepts what the shortcut refused")
                case (nil, .failure(let error)):
                    // Empty or non-minimal; longer than eight octets may also just not fit.
                    let expected: Set<ASN1Error.Code> = content.count <= 8 ? [.invalidInteger] : [.invalidInteger, .integerOverflow]
                    #expect(expected.contains(error.code), "\(content)")
                }
            }
        }
    }

    /// What `body` returns or throws over the raw bytes of `hexText`.
    static func raw<T>(_ hexText: String, _ body: (UnsafeRawBufferPointer) throws(ASN1Error) -> T) -> Result<T, ASN1Error> {
        withRaw(hexText) { raw in Result { () throws(ASN1Error) -> T in try body(raw) } }
    }

    @Test func rawReaderAppliesTheRulesPerEncoding() {
        // A non-minimal INTEGER: DER refuses it on every path, BER reads it.
        let nonMinimal = "02 02 00 05"
        let derRead = Self.raw(nonMinimal) { raw throws(ASN1Error) in
            var der = ASN1RawReader(buffer: raw, rules: .der)
            return try der.readInt64()
        }
        #expect(derRead.errorCode == .invalidInteger)
        #expect(
            Self.raw(nonMinimal) { raw throws(ASN1Error) in try ASN1RawReader.decodeInt64(raw, 2..<4, rules: .der, at: 0) }.errorCode
                == .invalidInteger)
        let berRead = Self.raw(nonMinimal) { raw throws(ASN1Error) in
            var ber = ASN1RawReader(buffer: raw, rules: .ber)
            return (try ber.readInt64(), ber.isAtEnd)
        }
        #expect(berRead.value?.0 == 5 && berRead.value?.1 == true)
        #expect(Self.raw(nonMinimal) { raw throws(ASN1Error) in try ASN1RawReader.decodeInt64(raw, 2..<4, rules: .ber, at: 0) }.value == 5)
        // A long-form length that fits the short form, and a two-octet length with a leading zero.
        for (bytes, content) in [("04 81 02 AA BB", 3..<5), ("04 82 00 02 AA BB", 4..<6)] {
            for rules in [ASN1EncodingRules.der, .ber] {
                let read = Self.raw(bytes) { raw throws(ASN1Error) in
                    var reader = ASN1RawReader(buffer: raw, rules: rules)
                    return try reader.readContent(tag: 0x04)
                }
                if rules == .der {
                    #expect(read.errorCode == .invalidLength, "\(bytes)")
                } else {
                    #expect(read.value == content, "\(bytes)")
                }
            }
        }
        // Nine content octets overflow Int64; a BER value padded to nine octets still fits.
        func readInt64(_ bytes: String, _ rules: ASN1EncodingRules) -> Result<Int64, ASN1Error> {
            Self.raw(bytes) { raw throws(ASN1Error) in
                var reader = ASN1RawReader(buffer: raw, rules: rules)
                return try reader.readInt64()
            }
        }
        #expect(readInt64("02 09 01 00 00 00 00 00 00 00 00", .der).errorCode == .integerOverflow)
        #expect(readInt64("02 09 00 7F FF FF FF FF FF FF FF", .ber).value == Int64.max)
        #expect(readInt64("02 09 00 7F FF FF FF FF FF FF FF", .der).errorCode == .invalidInteger)
    }

    @Test func integerBytesRefusesRedundantOctetsInDER() throws {
        var der = try ASN1Reader(hex("02 03 00 00 80"))
        #expect(errorCode { _ = try der.readElement(.integer).integerBytes() } == .invalidInteger)
        var ber = try ASN1Reader(hex("02 03 00 00 80"), rules: .ber)
        #expect(try Array(ber.readElement(.integer).integerBytes()) == [0x00, 0x00, 0x80])
        var minimal = try ASN1Reader(hex("02 03 00 FF 80"))
        #expect(try Array(minimal.readElement(.integer).integerBytes()) == [0x00, 0xFF, 0x80])
    }
}

extension Result where Failure == ASN1Error {
    /// The value, or `nil` on failure.
    var value: Success? { try? get() }
    /// The error's code, or `nil` on success.
    var errorCode: ASN1Error.Code? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
