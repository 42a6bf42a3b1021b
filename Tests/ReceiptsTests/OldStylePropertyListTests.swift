import ASN1
import Foundation
import Internals
import Receipts
import TestSupport
import Testing

extension SplitMix64 {
    /// A value in `0..<bound` (0 when `bound` is not positive).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
}

@Suite struct OldStylePropertyListTests {
    typealias Plist = OldStylePropertyList

    func parse(_ text: String, limits: ReceiptLimits = .default) throws -> Plist.Value {
        try Plist.parse(Array(text.utf8), limits: limits)
    }

    func failure(_ text: String, limits: ReceiptLimits = .default) -> ReceiptError? {
        do {
            _ = try Plist.parse(Array(text.utf8), limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func syntaxVariants() throws {
        let value = try parse(
            """
            // a comment
            { /* block */ unquoted = bare.value-1:2/3_$+;
              'single' = 'it\\'s';
              "escapes" = "a\\"b\\\\c\\n\\t\\101\\U00e9\\U20AC\\q";
              "array" = ( "x", y, ( ), );
              "data" = < 0fbd 771C >;
              "nested" = { "k" = "v"; };
              "empty" = "";
            }
            """)
        guard case .dictionary(let entries) = value else {
            Issue.record("not a dictionary")
            return
        }
        #expect(entries.map(\.key) == ["unquoted", "single", "escapes", "array", "data", "nested", "empty"])
        #expect(value["unquoted"] == .string("bare.value-1:2/3_$+"))
        #expect(value["single"] == .string("it's"))
        #expect(value["escapes"] == .string("a\"b\\c\n\tAé€q"))
        #expect(value["array"] == .array([.string("x"), .string("y"), .array([])]))
        #expect(value["data"] == .data([0x0F, 0xBD, 0x77, 0x1C]))
        #expect(value["nested"] == .dictionary([Plist.Entry(key: "k", value: .string("v"))]))
        #expect(value["empty"] == .string(""))
    }

    @Test func whitespaceIsOptional() throws {
        let spaced = try parse(" {\n\t\"a\" = \"1\" ;\r\n \"b\"\t=\t\"2\";\n}\n ")
        let tight = try parse("{\"a\"=\"1\";\"b\"=\"2\";}")
        #expect(spaced == tight)
        #expect(tight == .dictionary([Plist.Entry(key: "a", value: .string("1")), Plist.Entry(key: "b", value: .string("2"))]))
        #expect(try parse("{}") == .dictionary([]))
    }

    @Test func errorsCarryCodesAndOffsets() {
        let cases: [(String, ReceiptError.Code, Int?)] = [
            ("", .malformedTransactionReceipt, 0),
            ("{\"a\" = \"1\"}", .malformedTransactionReceipt, 10),  // missing ';'
            ("{\"a\" \"1\";}", .malformedTransactionReceipt, 5),  // missing '='
            ("{\"a\" = \"1;}", .malformedTransactionReceipt, 7),  // unterminated string: offset of its quote
            ("{\"a\" = \"1\"; \"a\" = \"2\";}", .malformedTransactionReceipt, 12),  // duplicate key
            ("{\"a\" = \"1\";} x", .malformedTransactionReceipt, 13),  // trailing characters
            ("{\"a\" = ;}", .malformedTransactionReceipt, 7),
            ("{\"a\" = \"\\777\";}", .malformedTransactionReceipt, 8),  // octal beyond ASCII
            ("{\"a\" = \"\\UD800\";}", .malformedTransactionReceipt, 8),  // surrogate
            ("{\"a\" = \"\\U\";}", .malformedTransactionReceipt, 8),
            ("{\"a\" = <abc>;}", .malformedTransactionReceipt, 11),  // odd number of hex digits
            ("{\"a\" = <zz>;}", .malformedTransactionReceipt, 8),
            ("{\"a\" = <00", .malformedTransactionReceipt, 7),
            ("{\"a\" = (\"x\" \"y\");}", .malformedTransactionReceipt, 12),
            ("{\"a\" = (\"x\",", .malformedTransactionReceipt, 12),
            ("/* never closed", .malformedTransactionReceipt, 0),
            ("{= \"1\";}", .malformedTransactionReceipt, 1),
            ("{\"a\" = \"1\";", .malformedTransactionReceipt, 11),
        ]
        for (text, code, offset) in cases {
            let error = failure(text)
            #expect(error?.code == code, "\(text)")
            #expect(error?.offset == offset, "\(text): \(String(describing: error))")
        }
    }

    @Test func invalidUTF8IsRejectedNotReplaced() {
        let bytes: [UInt8] = Array("{\"a\" = \"".utf8) + [0x63, 0xC3, 0x28] + Array("\";}".utf8)
        #expect(receiptErrorCode { _ = try Plist.parse(bytes) } == .malformedTransactionReceipt)
        let escaped: [UInt8] = Array("{\"a\" = \"\\n".utf8) + [0xFF] + Array("\";}".utf8)
        #expect(receiptErrorCode { _ = try Plist.parse(escaped) } == .malformedTransactionReceipt)
        // Valid multi-byte UTF-8 is fine.
        #expect((try? parse("{\"a\" = \"€😀\";}")) == .dictionary([Plist.Entry(key: "a", value: .string("€😀"))]))
    }

    @Test func limitsAreEnforced() {
        let deep = String(repeating: "(", count: 60) + String(repeating: ")", count: 60)
        #expect(failure(deep)?.code == .limitExceeded)
        let shallow = String(repeating: "(", count: 50) + String(repeating: ")", count: 50)
        #expect(failure(shallow) == nil)
        let deepDictionaries = String(repeating: "{a=", count: 51) + "b" + String(repeating: ";}", count: 51)
        #expect(failure(deepDictionaries)?.code == .limitExceeded)
        #expect(failure("{\"a\" = \"12345\";}", limits: ReceiptLimits(maximumStringLength: 4))?.code == .limitExceeded)
        #expect(failure("{\"a\" = \"1\\n345\";}", limits: ReceiptLimits(maximumStringLength: 4))?.code == .limitExceeded)
        #expect(failure("{\"a\" = <0102030405>;}", limits: ReceiptLimits(maximumStringLength: 4))?.code == .limitExceeded)
        #expect(failure("(a, b, c, d)", limits: ReceiptLimits(maximumAttributes: 3))?.code == .limitExceeded)
        #expect(failure("{\"a\" = \"1\";}", limits: ReceiptLimits(maximumInputSize: 5))?.code == .inputTooLarge)
    }

    @Test func writerEscapesAndRoundTrips() throws {
        let entries = [
            Plist.Entry(key: "quote\"back\\slash", value: .string("line\nbreak\ttab\r\u{01}\u{7F}é")),
            Plist.Entry(key: "list", value: .array([.string("a"), .data([1, 2, 255]), .dictionary([])])),
        ]
        for compact in [false, true] {
            let text = Plist.encode(entries, compact: compact)
            #expect(try Plist.parse(text) == .dictionary(entries))
        }
    }

    /// Random values written by the encoder parse back to themselves.
    @Test func randomValuesRoundTrip() throws {
        var rng = SplitMix64(seed: 0x5EED_0001)
        func string() -> String {
            let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "\n", "é", "€", "😀", ";", "=", "{", "}", "/", "*", "\u{0}"]
            return String((0..<rng.below(12)).map { _ in alphabet[rng.below(alphabet.count)] })
        }
        func value(_ depth: Int) -> Plist.Value {
            switch rng.below(depth > 0 ? 4 : 2) {
            case 0: return .string(string())
            case 1: return .data((0..<rng.below(8)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            case 2: return .array((0..<rng.below(4)).map { _ in value(depth - 1) })
            default:
                var keys = Set<String>()
                var entries: [Plist.Entry] = []
                for _ in 0..<rng.below(5) {
                    let key = string()
                    if keys.insert(key).inserted { entries.append(Plist.Entry(key: key, value: value(depth - 1))) }
                }
                return .dictionary(entries)
            }
        }
        for _ in 0..<500 {
            let entries: [Plist.Entry] = (0..<rng.below(6)).map { index in Plist.Entry(key: "k\(index)", value: value(3)) }
            let compact = rng.below(2) == 0
            #expect(try Plist.parse(Plist.encode(entries, compact: compact)) == .dictionary(entries))
        }
    }

    /// Fuzz-style: thousands of random byte strings and mutations of a real receipt never crash or
    /// hang; every failure is a ReceiptError whose offset lies inside the input.
    @Test func randomAndMutatedInputsNeverCrash() throws {
        var rng = SplitMix64(seed: 0xF022_2026)
        let real = try TransactionReceipt(Fixtures.bytes("legacy/base64encoded_unsupportedReceipt1.b64"))
        let seeds: [[UInt8]] = [real.text, real.purchaseInfoData, Array("{\"a\" = (\"b\", <00ff>, {c = d;});}".utf8)]
        let interesting = Array("{}();=,<>\"'\\/*U0123456789abcdef \n\t".utf8)
        var parsed = 0
        var failed = 0
        func check(_ input: [UInt8]) {
            do {
                _ = try OldStylePropertyList.parse(input)
                _ = try? TransactionReceipt(text: input)
                parsed += 1
            } catch {
                failed += 1
                if let offset = error.offset {
                    #expect(offset >= 0 && offset <= input.count, "offset \(offset) outside \(input.count) bytes")
                }
            }
        }
        for _ in 0..<3000 {
            // Pure random bytes, biased towards the syntax characters half of the time.
            let length = rng.below(160)
            let biased = rng.below(2) == 0
            let input = (0..<length).map { _ in
                biased ? interesting[rng.below(interesting.count)] : UInt8(truncatingIfNeeded: rng.next())
            }
            check(input)
        }
        for _ in 0..<3000 {
            var input = seeds[rng.below(seeds.count)]
            for _ in 0..<(1 + rng.below(4)) {
                guard !input.isEmpty else { break }
                let position = rng.below(input.count)
                switch rng.below(4) {
                case 0: input[position] = interesting[rng.below(interesting.count)]
                case 1: input[position] = UInt8(truncatingIfNeeded: rng.next())
                case 2: input.remove(at: position)
                default: input.removeSubrange(position...)
                }
            }
            check(input)
        }
        // Both outcomes occurred, so the mutations exercised accepting and rejecting paths.
        #expect(parsed > 100)
        #expect(failed > 1000)
    }
}
