import JSON
import Testing

/// The strict parser: every rule has a negative with its code and offset, and the positives keep
/// order, exact number text and Unicode.
@Suite struct JSONParserTests {
    func failure(_ text: String, options: JSONParseOptions = .strict) -> JSONError? {
        failure(Array(text.utf8), options: options)
    }

    func failure(_ bytes: [UInt8], options: JSONParseOptions = .strict) -> JSONError? {
        do {
            _ = try JSONValue.parse(bytes, options: options)
            return nil
        } catch {
            return error
        }
    }

    @Test func parsesOrderedMembersAndExactNumbers() throws {
        let value = try JSONValue.parse(#"{"b": 1697679936049.7297, "a": [true, false, null], "c": -62135769600000, "d": "x"}"#)
        guard case .object(let members) = value else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.0) == ["b", "a", "c", "d"])
        #expect(value["b"] == .number("1697679936049.7297"))
        #expect(value["c"] == .number("-62135769600000"))
        #expect(value["a"] == .array([.bool(true), .bool(false), .null]))
        #expect(value["d"]?.stringValue == "x")
    }

    @Test(
        arguments: [
            ("", JSONError.Code.unexpectedEnd, 0),
            ("   ", .unexpectedEnd, 3),
            ("{", .unexpectedEnd, 1),
            (#"{"a":1,}"#, .unexpectedCharacter, 7),
            ("[1,]", .unexpectedCharacter, 3),
            ("[1 2]", .unexpectedCharacter, 3),
            (#"{"a" 1}"#, .unexpectedCharacter, 5),
            ("{a:1}", .unexpectedCharacter, 1),
            ("tru", .unexpectedEnd, 3),
            ("trUe", .unexpectedCharacter, 2),
            ("nul", .unexpectedEnd, 3),
            ("'a'", .unexpectedCharacter, 0),
            ("// c\n1", .unexpectedCharacter, 0),
            ("01", .invalidNumber, 0),
            ("-", .unexpectedEnd, 1),
            ("-a", .invalidNumber, 1),
            ("+1", .unexpectedCharacter, 0),
            (".5", .unexpectedCharacter, 0),
            ("1.", .invalidNumber, 2),
            ("1e", .invalidNumber, 2),
            ("1e+", .invalidNumber, 3),
            (#""\x""#, .invalidString, 1),
            (#""\u12""#, .invalidString, 1),
            (#""\u12G4""#, .invalidString, 1),
            ("\"a\tb\"", .invalidString, 2),
            ("\"abc", .unexpectedEnd, 4),
            (#""\ud800""#, .invalidUTF8, 1),
            (#""\ud800\u0041""#, .invalidUTF8, 1),
            (#""x\udc00""#, .invalidUTF8, 2),
            ("1 2", .trailingData, 2),
            ("{} x", .trailingData, 3),
            (#"{"a":1}{}"#, .trailingData, 7),
            (#"{"a":1,"a":2}"#, .duplicateKey, 7),
            (#"{"a":{"b":1,"c":2,"b":3}}"#, .duplicateKey, 18),
        ] as [(String, JSONError.Code, Int)])
    func rejects(_ text: String, _ code: JSONError.Code, _ offset: Int) {
        let error = failure(text)
        #expect(error?.code == code, "\(text): \(String(describing: error))")
        #expect(error?.offset == offset, "\(text): \(String(describing: error))")
    }

    @Test func rejectsInvalidUTF8InStringsWithItsOffset() {
        // Overlong, surrogate encoded directly, beyond U+10FFFF, stray continuation, truncated.
        let cases: [[UInt8]] = [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xE2, 0x82], [0xFF]]
        for bad in cases {
            let text = Array(#"{"k":"ab"#.utf8) + bad + Array(#""}"#.utf8)
            let error = failure(text)
            #expect(error?.code == .invalidUTF8, "\(bad)")
            #expect(error?.offset == 8, "\(bad)")
        }
        // Outside strings any non-ASCII byte is a syntax error; a byte order mark is not skipped.
        #expect(failure([0xEF, 0xBB, 0xBF] + Array("{}".utf8))?.code == .unexpectedCharacter)
        #expect(failure([0xEF, 0xBB, 0xBF] + Array("{}".utf8))?.offset == 0)
    }

    @Test func decodesEscapesAndValidUnicode() throws {
        let value = try JSONValue.parse(#"["\u00e9\ud83d\ude00\n\/\"\\", "é😀"]"#)
        #expect(value == .array([.string("é😀\n/\"\\"), .string("é😀")]))
        #expect(try JSONValue.parse(#""\u0000""#) == .string("\u{0}"))
    }

    @Test func duplicateKeysAreAllowedOnlyWhenAsked() throws {
        let text = #"{"a":1,"a":2}"#
        #expect(failure(text)?.code == .duplicateKey)
        let lenient = try JSONValue.parse(text, options: JSONParseOptions(rejectsDuplicateKeys: false))
        #expect(lenient["a"] == .number("1"))
        #expect(lenient.objectValue?.count == 2)
    }

    @Test func duplicateKeysInLargeObjectsAreFoundByHashing() {
        var text = "{"
        for i in 0..<100 { text += "\"k\(i)\":\(i)," }
        text += "\"k57\":0}"
        let error = failure(text)
        #expect(error?.code == .duplicateKey)
        #expect(error?.offset == text.utf8.count - 8)
    }

    @Test func limitsAreEnforcedWhileReading() {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(failure(deep)?.code == .depthLimitExceeded)
        #expect(failure(deep)?.offset == 64)
        #expect(failure(String(repeating: "[", count: 64) + String(repeating: "]", count: 64)) == nil)
        // The depth ceiling protects the stack whatever the caller asks for.
        let veryDeep = String(repeating: "[", count: 100_000)
        #expect(failure(veryDeep, options: JSONParseOptions(maximumDepth: .max))?.code == .depthLimitExceeded)
        #expect(failure(veryDeep, options: JSONParseOptions(maximumDepth: .max))?.offset == JSONParseOptions.depthCeiling)

        let members = JSONParseOptions(maximumMembers: 3)
        #expect(failure("[1,2,3]", options: members) == nil)
        #expect(failure("[1,2,3,4]", options: members)?.code == .memberLimitExceeded)
        #expect(failure("[1,2,3,4]", options: members)?.offset == 7)
        #expect(failure(#"{"a":[1],"b":2}"#, options: JSONParseOptions(maximumMembers: 2))?.offset == 9)

        let size = JSONParseOptions(maximumInputSize: 4)
        #expect(failure("1234", options: size) == nil)
        #expect(failure("12345", options: size)?.code == .inputTooLarge)
        #expect(failure("12345", options: size)?.offset == 4)
    }

    @Test func maximumDepthKeepsItsMeaning() throws {
        #expect(try JSONValue.parse(Array("[[1]]".utf8), maximumDepth: 2) == .array([.array([.number("1")])]))
        #expect(failure("[[1]]", options: JSONParseOptions(maximumDepth: 1))?.code == .depthLimitExceeded)
    }
}

/// Typed accessors convert only what fits exactly.
@Suite struct JSONAccessorTests {
    @Test(arguments: [
        ("0", Int64(0)), ("-1", -1), ("9223372036854775807", .max), ("-9223372036854775808", .min),
        ("1000000054042695", 1_000_000_054_042_695),
    ])
    func int64Fits(_ text: String, _ expected: Int64) throws {
        #expect(try JSONValue.number(text).int64() == expected)
        #expect(try JSONValue.parse(text).int64() == expected)
    }

    @Test(arguments: ["9223372036854775808", "-9223372036854775809", "1e400", "1e3", "1.0", "1.5", "-0", "99999999999999999999999"])
    func int64DoesNotFit(_ text: String) throws {
        let value = try JSONValue.parse(text)
        #expect(throws: JSONError(code: .numberDoesNotFit, offset: nil, reason: "")) { try value.int64() }
        #expect(value.int64Value == nil)
    }

    @Test func doubleAndTypeMismatches() throws {
        #expect(try JSONValue.parse("1697679936049.7297").double() == 1_697_679_936_049.7297)
        #expect(throws: JSONError(code: .numberDoesNotFit, offset: nil, reason: "")) { try JSONValue.parse("1e400").double() }
        #expect(throws: JSONError(code: .typeMismatch, offset: nil, reason: "")) { try JSONValue.string("1").int64() }
        #expect(throws: JSONError(code: .typeMismatch, offset: nil, reason: "")) { try JSONValue.number("1").string() }
        #expect(throws: JSONError(code: .typeMismatch, offset: nil, reason: "")) { try JSONValue.null.bool() }
        #expect(try JSONValue.bool(true).bool())
    }
}

/// Writing: parse → write → parse is the identity on values, compact and indented.
@Suite struct JSONWriterTests {
    static let samples = [
        #"{"a":[1,2.50,-3e+2,{"b":null}],"c":"line\nbreak \"quoted\" \\ tab\t \u0001 é😀","d":true,"e":{},"f":[]}"#,
        "[]", "{}", "0", #""""#, "[[[[]]]]", #"{"x":{"y":{"z":[false]}}}"#,
    ]

    @Test(arguments: samples)
    func roundTrips(_ text: String) throws {
        let value = try JSONValue.parse(text)
        for indent in [0, 2, 4] {
            #expect(try JSONValue.parse(value.jsonBytes(indent: indent)) == value)
        }
    }

    @Test func compactOutputIsCanonical() throws {
        let value = try JSONValue.parse(#" { "a" : [ 1 , "\u0041" ] , "b" : { } } "#)
        #expect(value.jsonText(indent: 0) == #"{"a":[1,"A"],"b":{}}"#)
    }

    @Test func memberOrderInsensitiveEquality() throws {
        let a = try JSONValue.parse(#"{"a":1,"b":{"c":[1,2],"d":2}}"#)
        let b = try JSONValue.parse(#"{"b":{"d":2,"c":[1,2]},"a":1}"#)
        let c = try JSONValue.parse(#"{"b":{"d":2,"c":[2,1]},"a":1}"#)
        #expect(a != b)
        #expect(a.isEqualIgnoringMemberOrder(to: b))
        #expect(!a.isEqualIgnoringMemberOrder(to: c))
        #expect(!a.isEqualIgnoringMemberOrder(to: .object([("a", .number("1"))])))
    }
}

/// A reason that quotes input holds none of its control characters raw.
@Suite struct JSONReasonEscapingTests {
    @Test func theDuplicateKeyReason_escapesTheKey() {
        #expect {
            try JSONValue.parse(#"{"\nforged\u001b[2K":1,"\nforged\u001b[2K":2}"#)
        } throws: { error in
            guard let error = error as? JSONError else { return false }
            return error.code == .duplicateKey && error.reason.contains(#"\nforged\u{1B}[2K"#) && !error.reason.contains("\n")
                && !error.reason.unicodeScalars.contains("\u{1B}")
        }
    }
}
