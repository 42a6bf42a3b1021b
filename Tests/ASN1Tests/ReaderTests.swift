import Testing

@testable import ASN1

/// Decodes `bytes` as one root element (nothing after it) and walks the whole tree.
func parseAll(_ bytes: [UInt8], rules: ASN1EncodingRules = .der, limits: ASN1Limits = .default) throws(ASN1Error) -> [ASN1Node] {
    try ASN1Tree.depthFirstNodes(bytes[...], rules: rules, limits: limits)
}

/// The code of the error `body` throws, or `nil` if it succeeds.
func errorCode(_ body: () throws -> Void) -> ASN1Error.Code? {
    do {
        try body()
        return nil
    } catch let error as ASN1Error {
        return error.code
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}

func hex(_ s: String) -> [UInt8] {
    let digits = s.filter { !$0.isWhitespace }
    var out: [UInt8] = []
    var i = digits.startIndex
    while i < digits.endIndex {
        let j = digits.index(i, offsetBy: 2)
        out.append(UInt8(digits[i..<j], radix: 16) ?? 0)
        i = j
    }
    return out
}

@Suite struct HeaderTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: String
        let rules: ASN1EncodingRules
        let expected: ASN1Error.Code?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "short length 0", bytes: "04 00", rules: .der, expected: nil),
        Case(name: "short length 0x7F", bytes: "04 7F" + String(repeating: "00", count: 0x7F), rules: .der, expected: nil),
        Case(name: "long length 0x80", bytes: "04 81 80" + String(repeating: "00", count: 0x80), rules: .der, expected: nil),
        Case(name: "long length 0xFF", bytes: "04 81 FF" + String(repeating: "00", count: 0xFF), rules: .der, expected: nil),
        Case(name: "two-octet length 0x100", bytes: "04 82 01 00" + String(repeating: "00", count: 0x100), rules: .der, expected: nil),
        Case(
            name: "DER rejects long form for 0x7F", bytes: "04 81 7F" + String(repeating: "00", count: 0x7F), rules: .der,
            expected: .invalidLength),
        Case(name: "BER accepts long form for 0x7F", bytes: "04 81 7F" + String(repeating: "00", count: 0x7F), rules: .ber, expected: nil),
        Case(
            name: "DER rejects leading zero length octet", bytes: "04 82 00 80" + String(repeating: "00", count: 0x80), rules: .der,
            expected: .invalidLength),
        Case(name: "BER accepts leading zero length octet", bytes: "04 82 00 05 0102030405", rules: .ber, expected: nil),
        Case(name: "reserved length 0xFF", bytes: "04 FF", rules: .ber, expected: .invalidLength),
        Case(name: "nine length octets", bytes: "04 89 00 00 00 00 00 00 00 00 01", rules: .ber, expected: .invalidLength),
        Case(name: "64-bit length above Int.max", bytes: "04 88 80 00 00 00 00 00 00 00", rules: .der, expected: .invalidLength),
        Case(name: "64-bit length Int.max", bytes: "04 88 7F FF FF FF FF FF FF FF", rules: .der, expected: .truncated),
        Case(name: "length 2^31", bytes: "04 84 80 00 00 00", rules: .der, expected: .truncated),
        Case(name: "length 2^32-1", bytes: "04 84 FF FF FF FF", rules: .der, expected: .truncated),
        Case(name: "length 2^63-1 in BER", bytes: "30 88 7F FF FF FF FF FF FF FF 00", rules: .ber, expected: .truncated),
        Case(name: "length past the end", bytes: "04 05 01 02", rules: .der, expected: .truncated),
        Case(name: "length octets truncated", bytes: "04 82 01", rules: .der, expected: .truncated),
        Case(name: "zero length-of-length (indefinite) on primitive", bytes: "04 80 00 00", rules: .ber, expected: .indefiniteLength),
        Case(name: "indefinite length in DER", bytes: "30 80 00 00", rules: .der, expected: .indefiniteLength),
        Case(name: "indefinite length in BER", bytes: "30 80 00 00", rules: .ber, expected: nil),
        Case(name: "missing end-of-contents", bytes: "30 80 02 01 05", rules: .ber, expected: .missingEndOfContents),
        Case(name: "half an end-of-contents", bytes: "30 80 02 01 05 00", rules: .ber, expected: .missingEndOfContents),
        Case(name: "malformed end-of-contents", bytes: "30 80 02 01 05 00 01 00", rules: .ber, expected: .invalidTag),
        Case(name: "nested missing end-of-contents", bytes: "30 80 30 80 02 01 05 00 00", rules: .ber, expected: .missingEndOfContents),
        Case(name: "end-of-contents at top level", bytes: "00 00", rules: .ber, expected: .invalidTag),
        Case(name: "high tag number 31", bytes: "9F 1F 00", rules: .der, expected: nil),
        Case(name: "high tag number 200", bytes: "9F 81 48 00", rules: .der, expected: nil),
        Case(name: "long-form tag below 31", bytes: "9F 05 00", rules: .ber, expected: .invalidTag),
        Case(name: "tag with superfluous leading octet", bytes: "9F 80 20 00", rules: .ber, expected: .invalidTag),
        Case(name: "tag number too large", bytes: "9F 90 80 80 80 80 00 00", rules: .ber, expected: .invalidTag),
        Case(name: "truncated multi-byte tag", bytes: "9F 81", rules: .ber, expected: .truncated),
        Case(name: "empty input", bytes: "", rules: .der, expected: .truncated),
        Case(name: "identifier only", bytes: "30", rules: .der, expected: .truncated),
        Case(name: "trailing bytes", bytes: "05 00 00", rules: .der, expected: .trailingBytes),
        Case(name: "second root", bytes: "05 00 05 00", rules: .ber, expected: .trailingBytes),
        Case(name: "definite sequence with child past its end", bytes: "30 03 04 05 00", rules: .der, expected: .truncated),
    ]

    @Test(arguments: cases)
    func decodes(_ c: Case) {
        let code = errorCode { _ = try parseAll(hex(c.bytes), rules: c.rules) }
        #expect(code == c.expected)
    }

    @Test func errorCarriesAbsoluteOffset() throws {
        // SEQUENCE { INTEGER 1, OCTET STRING with a length past the end }
        let bytes = hex("30 06 02 01 01 04 05 00")
        do {
            _ = try parseAll(bytes)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .truncated)
            #expect(error.offset == 5)
        }
    }

    @Test func indefiniteLengthElementsExposeContentAndEncoding() throws {
        let bytes = hex("30 80 02 01 05 04 02 AA BB 00 00")
        let nodes = try parseAll(bytes, rules: .ber)
        #expect(nodes.count == 3)
        #expect(nodes[0].element.isIndefiniteLength)
        #expect(nodes[0].element.encodedBytes.count == bytes.count)
        #expect(nodes[0].element.content.count == 7)
        #expect(nodes[2].element.content.elementsEqual([0xAA, 0xBB]))
        #expect(nodes[2].offset == 5)
        #expect(nodes[2].depth == 1)
    }

    @Test func inputSizeLimit() {
        let bytes = hex("04 04 01 02 03 04")
        let code = errorCode { _ = try parseAll(bytes, limits: ASN1Limits(maximumInputSize: 5)) }
        #expect(code == .inputTooLarge)
        #expect(errorCode { _ = try parseAll(bytes, limits: ASN1Limits(maximumInputSize: 6)) } == nil)
    }
}

@Suite struct DepthTests {
    static func nested(_ levels: Int, indefinite: Bool) -> [UInt8] {
        var writer = BERWriter()
        func build(_ n: Int, _ w: inout BERWriter) {
            if n == 0 {
                w.appendNull()
                return
            }
            if indefinite {
                w.appendIndefinite(.sequence) { build(n - 1, &$0) }
            } else {
                w.appendSequence { build(n - 1, &$0) }
            }
        }
        build(levels, &writer)
        return writer.bytes
    }

    @Test(arguments: [false, true])
    func fiftyLevelsPassFiftyOneFail(indefinite: Bool) {
        let rules: ASN1EncodingRules = indefinite ? .ber : .der
        #expect(errorCode { _ = try parseAll(Self.nested(50, indefinite: indefinite), rules: rules) } == nil)
        #expect(errorCode { _ = try parseAll(Self.nested(51, indefinite: indefinite), rules: rules) } == .depthLimitExceeded)
    }

    @Test func depthLimitIsConfigurable() {
        let bytes = Self.nested(5, indefinite: false)
        #expect(errorCode { _ = try parseAll(bytes, limits: ASN1Limits(maximumDepth: 5)) } == nil)
        #expect(errorCode { _ = try parseAll(bytes, limits: ASN1Limits(maximumDepth: 4)) } == .depthLimitExceeded)
    }

    @Test func deepIndefiniteNestingIsRejectedWithoutRecursingForever() {
        // 100,000 nested indefinite SEQUENCE headers and nothing else.
        let bytes: [UInt8] = (0..<200_000).map { $0 % 2 == 0 ? 0x30 : 0x80 }
        #expect(errorCode { _ = try parseAll(bytes, rules: .ber) } == .depthLimitExceeded)
    }
}

@Suite struct IntegerTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let bytes: String
        let value: Int64?
        let code: ASN1Error.Code?
        var testDescription: String { bytes }
    }

    static let cases: [Case] = [
        Case(bytes: "02 01 00", value: 0, code: nil),
        Case(bytes: "02 01 7F", value: 127, code: nil),
        Case(bytes: "02 02 00 80", value: 128, code: nil),
        Case(bytes: "02 01 80", value: -128, code: nil),
        Case(bytes: "02 02 FF 7F", value: -129, code: nil),
        Case(bytes: "02 08 7F FF FF FF FF FF FF FF", value: Int64.max, code: nil),
        Case(bytes: "02 08 80 00 00 00 00 00 00 00", value: Int64.min, code: nil),
        Case(bytes: "02 07 03 8D 7E A4 C6 80 00", value: 1_000_000_000_000_000, code: nil),
        Case(bytes: "02 09 00 80 00 00 00 00 00 00 00", value: nil, code: .integerOverflow),
        Case(bytes: "02 00", value: nil, code: .invalidInteger),
        Case(bytes: "02 02 00 7F", value: nil, code: .invalidInteger),
        Case(bytes: "02 02 FF F0", value: nil, code: .invalidInteger),
        Case(bytes: "22 03 02 01 01", value: nil, code: .invalidConstruction),
    ]

    @Test(arguments: cases)
    func int64(_ c: Case) {
        var result: Int64?
        let code = errorCode {
            var reader = try ASN1Reader(hex(c.bytes))
            let element = try reader.readElement()
            result = try element.integer(Int64.self)
        }
        #expect(code == c.code)
        #expect(result == c.value)
    }

    @Test func unsignedAndNarrowTypes() throws {
        var reader = try ASN1Reader(hex("02 09 00 FF FF FF FF FF FF FF FF"))
        #expect(try reader.readInteger(UInt64.self) == UInt64.max)
        var negative = try ASN1Reader(hex("02 01 FF"))
        #expect(errorCode { _ = try negative.readInteger(UInt32.self) } == .integerOverflow)
        var wide = try ASN1Reader(hex("02 02 01 00"))
        #expect(errorCode { _ = try wide.readInteger(Int8.self) } == .integerOverflow)
        var ber = try ASN1Reader(hex("02 03 00 00 05"), rules: .ber)
        #expect(try ber.readInteger(Int.self) == 5)
    }

    @Test func integerBytesKeepsArbitraryLength() throws {
        let serial = hex("02 11 00 B4 5F 92 87 D7 C1 A9 B3 11 22 33 44 55 66 77 88")
        var reader = try ASN1Reader(serial)
        let element = try reader.readElement(.integer)
        #expect(try element.integerBytes().count == 17)
        #expect(errorCode { _ = try element.integer(Int64.self) } == .integerOverflow)
    }

    @Test func writerRoundTripsBoundaryValues() throws {
        let values: [Int64] = [0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, -32768, Int64(Int32.max), Int64.max, Int64.min]
        for value in values {
            var writer = DERWriter()
            writer.appendInteger(value)
            var reader = try ASN1Reader(writer.bytes)
            #expect(try reader.readInteger(Int64.self) == value)
            try reader.finish()
        }
    }
}

@Suite struct ValueTests {
    @Test func booleans() throws {
        var der = try ASN1Reader(hex("01 01 FF 01 01 00"))
        #expect(try der.readBoolean() == true)
        #expect(try der.readBoolean() == false)
        var bad = try ASN1Reader(hex("01 01 01"))
        #expect(errorCode { _ = try bad.readBoolean() } == .invalidBoolean)
        var ber = try ASN1Reader(hex("01 01 01"), rules: .ber)
        #expect(try ber.readBoolean() == true)
        var long = try ASN1Reader(hex("01 02 00 00"))
        #expect(errorCode { _ = try long.readBoolean() } == .invalidBoolean)
    }

    @Test func nulls() throws {
        var ok = try ASN1Reader(hex("05 00"))
        try ok.readNull()
        var bad = try ASN1Reader(hex("05 01 00"))
        #expect(errorCode { try bad.readNull() } == .invalidNull)
    }

    @Test func objectIdentifiers() throws {
        var reader = try ASN1Reader(hex("06 09 2A 86 48 86 F7 0D 01 07 02"))
        let oid = try reader.readObjectIdentifier()
        #expect(oid.description == "1.2.840.113549.1.7.2")
        #expect(oid == ASN1ObjectIdentifier(1, 2, 840, 113549, 1, 7, 2))
        #expect(ASN1ObjectIdentifier(dotted: "1.2.840.113635.100.6.11.1")?.description == "1.2.840.113635.100.6.11.1")
        #expect(ASN1ObjectIdentifier(dotted: "2.999.3")?.components == [2, 999, 3])
        #expect(ASN1ObjectIdentifier(dotted: "1.2.") == nil)
        #expect(ASN1ObjectIdentifier(dotted: "3.1") == nil)
        #expect(ASN1ObjectIdentifier(dotted: "1.40") == nil)
        #expect(ASN1ObjectIdentifier(dotted: "2.18446744073709551535")?.description == "2.18446744073709551535")
        // Not dotted OIDs: empty arcs, signs, spaces, leading zeros, arcs beyond 64 bits, one arc,
        // and a second arc that makes the first subidentifier overflow.
        for bad in [
            "", ".", "1", "1..2", ".1.2", "1.2.", "+1.2", "1.-2", "1. 2", "1.02", "01.2", "1.2.003",
            "1.2.18446744073709551616", "2.18446744073709551536", "1.2.x", "１.2",
        ] {
            #expect(ASN1ObjectIdentifier(dotted: bad) == nil, "\(bad)")
        }
        for good in ["0.0", "1.39", "2.5.29.19", "1.2.18446744073709551615", "1.2.840.113635.100.6.2.1"] {
            #expect(ASN1ObjectIdentifier(dotted: good)?.description == good, "\(good)")
        }
        for bad in ["06 00", "06 02 2A 86", "06 03 2A 80 01", "06 0C 2A 82 81 81 81 81 81 81 81 81 81 01"] {
            var r = try ASN1Reader(hex(bad))
            #expect(errorCode { _ = try r.readObjectIdentifier() } == .invalidObjectIdentifier, "\(bad)")
        }
    }

    @Test func bitStrings() throws {
        var reader = try ASN1Reader(hex("03 03 06 6E 40"))
        let bits = try reader.readBitString()
        #expect(bits.unusedBits == 6)
        #expect(bits.bytes.elementsEqual([0x6E, 0x40]))
        for bad in ["03 00", "03 01 01", "03 02 08 00", "03 02 01 01"] {
            var r = try ASN1Reader(hex(bad))
            #expect(errorCode { _ = try r.readBitString() } == .invalidBitString, "\(bad)")
        }
    }

    @Test func strings() throws {
        var reader = try ASN1Reader(hex("0C 05 68 C3 A9 6C 6C 16 03 61 62 63 13 02 41 3F"))
        #expect(try reader.readUTF8String() == "héll")
        #expect(try reader.readElement(.ia5String).ia5String() == "abc")
        #expect(try reader.readElement(.printableString).printableString() == "A?")
        for bad in ["0C 02 C3 28", "0C 01 80", "0C 03 ED A0 80", "0C 02 C0 AF", "0C 04 F4 90 80 80", "0C 02 E2 82"] {
            var r = try ASN1Reader(hex(bad))
            #expect(errorCode { _ = try r.readUTF8String() } == .invalidString, "\(bad)")
        }
        var ia5 = try ASN1Reader(hex("16 01 E9"))
        #expect(errorCode { _ = try ia5.readElement().ia5String() } == .invalidString)
        var printable = try ASN1Reader(hex("13 01 40"))
        #expect(errorCode { _ = try printable.readElement().printableString() } == .invalidString)
    }

    @Test func times() throws {
        var reader = try ASN1Reader(hex("17 0D 333530323039323134303336 5A"))
        let utc = try reader.readTime()
        #expect(utc.description == "2035-02-09T21:40:36Z")
        var generalized = try ASN1Reader(Array("\u{18}\u{13}20500101000000.125Z".utf8))
        let g = try generalized.readTime()
        #expect(g.year == 2050)
        #expect(g.nanosecond == 125_000_000)
        #expect(g.secondsSince1970 == 2_524_608_000)
        var old = try ASN1Reader(Array("\u{17}\u{0D}500101000000Z".utf8))
        #expect(try old.readTime().year == 1950)
        for bad in [
            "\u{17}\u{0B}3502092140Z", "\u{17}\u{0D}351302000000Z", "\u{17}\u{0D}350230000000Z", "\u{18}\u{10}20500101000000.0Z",
            "\u{17}\u{11}350209214036+0100",
        ] {
            var r = try ASN1Reader(Array(bad.utf8))
            #expect(errorCode { _ = try r.readTime() } == .invalidTime, "\(bad)")
        }
        var berOffset = try ASN1Reader(Array("\u{17}\u{11}350209214036+0100".utf8), rules: .ber)
        #expect(try berOffset.readTime().description == "2035-02-09T20:40:36Z")
    }

    @Test func constructedOctetStringIsConcatenatedInBERAndRejectedInDER() throws {
        let bytes = hex("24 80 04 02 01 02 24 80 04 01 03 00 00 04 00 00 00")
        var ber = try ASN1Reader(bytes, rules: .ber)
        #expect(Array(try ber.readOctetString()) == [1, 2, 3])
        try ber.finish()
        let definite = hex("24 07 04 02 01 02 04 01 03")
        var der = try ASN1Reader(definite, rules: .der)
        #expect(errorCode { _ = try der.readOctetString() } == .invalidConstruction)
        var wrongSegment = try ASN1Reader(hex("24 80 02 01 01 00 00"), rules: .ber)
        #expect(errorCode { _ = try wrongSegment.readOctetString() } == .unexpectedTag)
        let utf8 = hex("2C 80 04 02 68 C3 04 01 A9 00 00")
        var constructedString = try ASN1Reader(utf8, rules: .ber)
        #expect(try constructedString.readUTF8String() == "hé")
    }

    @Test func readerChecksTagsAndReportsOffsets() throws {
        var reader = try ASN1Reader(hex("30 03 02 01 05"))
        var sequence = try reader.readSequence()
        do {
            _ = try sequence.readElement(.set)
            Issue.record("expected unexpectedTag")
        } catch {
            #expect(error.code == .unexpectedTag)
            #expect(error.offset == 2)
        }
        #expect(try sequence.peekIdentifier() == .integer)
        #expect(try sequence.readOptionalElement(.boolean) == nil)
        #expect(try sequence.readInteger(Int.self) == 5)
        #expect(try sequence.peekIdentifier() == nil)
        try sequence.finish()
        var notSequence = try ASN1Reader(hex("31 00"))
        #expect(errorCode { _ = try notSequence.readSequence() } == .unexpectedTag)
        var primitive = try ASN1Reader(hex("02 01 00"))
        #expect(errorCode { _ = try primitive.readElement().children() } == .invalidConstruction)
    }
}
