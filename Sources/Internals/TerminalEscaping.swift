/// The one rule that keeps text from input from acting on a log or a terminal: every string that
/// may hold bytes someone else chose (a JSON key, a request path, a server's `errorMessage`, a
/// file name) passes through ``escaped(_:)`` before it is written to a log line or a terminal.
///
/// What it escapes, as Swift string escapes:
/// - the C0 controls U+0000–U+001F and DEL: `\n`, `\r`, `\t`, `\0`, else `\u{1B}`; so a newline
///   from input can never start a forged log line, and an ESC never starts a terminal sequence;
/// - the C1 controls U+0080–U+009F (U+009B is an 8-bit CSI, U+0085 a next line): `\u{9B}`;
/// - the line and paragraph separators U+2028 and U+2029, and the bidirectional formatting
///   characters U+200E, U+200F, U+202A–U+202E and U+2066–U+2069 (which reorder what a reader sees):
///   `\u{202E}`.
///
/// Everything else (printable ASCII, the backslash, letters of every script) is kept, so a
/// message stays readable. The escaped text holds no character the rule escapes: escaping it
/// again changes nothing.
package enum TerminalEscaping {
    /// Whether the rule escapes `scalar`.
    package static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `text` with every character the rule names replaced by its escape.
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscaping) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscaping(scalar) else {
                result.append(scalar)
                continue
            }
            result.append(contentsOf: escape(scalar).unicodeScalars)
        }
        return String(result)
    }

    /// `text` escaped line by line: the line breaks `\n` of the text itself are kept, every other
    /// character the rule names is escaped. For multi-line output the program lays out itself
    /// (a list with one value a line), never for a message that quotes input whole.
    package static func escapedKeepingLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { escaped(String($0)) }.joined(separator: "\n")
    }

    /// `text` in double quotes for a message: `"` and `\` escaped with a backslash, everything the
    /// rule names escaped as by ``escaped(_:)``.
    package static func quoted(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        result.append("\"")
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" {
                result.append("\\")
                result.append(scalar)
            } else if needsEscaping(scalar) {
                result.append(contentsOf: escape(scalar).unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        result.append("\"")
        return String(result)
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        case "\0": return "\\0"
        default: return "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }
}
