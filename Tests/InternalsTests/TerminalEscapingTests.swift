import Internals
import Testing

/// The one escaping rule for text from input on a log line or a terminal.
@Suite struct TerminalEscapingTests {
    @Test func escapesControlsSeparatorsAndBidiFormatting_keepsTheRest() {
        let cases: [(String, String)] = [
            ("plain text, café, 日本, \\ and \"quotes\"", "plain text, café, 日本, \\ and \"quotes\""),
            ("a\nserve: POST / → 200 accepted", "a\\nserve: POST / → 200 accepted"),
            ("\r\t\0", "\\r\\t\\0"),
            ("\u{1B}[31mred\u{1B}[0m", "\\u{1B}[31mred\\u{1B}[0m"),
            ("\u{7F}\u{85}\u{9B}2J", "\\u{7F}\\u{85}\\u{9B}2J"),
            ("\u{2028}\u{2029}", "\\u{2028}\\u{2029}"),
            ("abc\u{202E}fed\u{2066}x\u{2069}\u{200F}", "abc\\u{202E}fed\\u{2066}x\\u{2069}\\u{200F}"),
            ("\u{A0}\u{2027}\u{2030}\u{206A}", "\u{A0}\u{2027}\u{2030}\u{206A}"),
        ]
        for (input, expected) in cases {
            #expect(TerminalEscaping.escaped(input) == expected, "\(input.debugDescription)")
            // Escaping twice changes nothing: the escaped text holds nothing the rule escapes.
            #expect(TerminalEscaping.escaped(expected) == expected)
        }
    }

    @Test func quoted_escapesQuotesBackslashesAndTheRule() {
        #expect(TerminalEscaping.quoted("caf\u{E9}") == "\"caf\u{E9}\"")
        #expect(TerminalEscaping.quoted("a\"b\\c") == #""a\"b\\c""#)
        #expect(TerminalEscaping.quoted("x\u{1B}[2J\ny\u{202E}") == #""x\u{1B}[2J\ny\u{202E}""#)
    }

    @Test func escapedKeepingLines_keepsOnlyTheLineBreaks() {
        #expect(TerminalEscaping.escapedKeepingLines("one\ntwo\u{1B}[K\n\nthree\r") == "one\ntwo\\u{1B}[K\n\nthree\\r")
    }

    @Test func everyScalarTheRuleNames_isEscaped() {
        let escaped: [UInt32] =
            Array(0x00...0x1F) + Array(0x7F...0x9F) + [0x200E, 0x200F, 0x2028, 0x2029] + Array(0x202A...0x202E)
            + Array(0x2066...0x2069)
        for value in escaped {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let output = TerminalEscaping.escaped("x" + String(scalar) + "y")
            #expect(!output.unicodeScalars.contains(scalar), "U+\(String(value, radix: 16))")
            #expect(output.unicodeScalars.allSatisfy { !TerminalEscaping.needsEscaping($0) })
        }
    }
}
