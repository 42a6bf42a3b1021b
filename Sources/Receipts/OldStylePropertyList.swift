/// Old-style (NeXTSTEP/OpenStep) property lists: the text format of legacy iOS 6 transaction
/// receipts and of their `purchase-info`.
///
/// The reader is hand-written for untrusted input. It accepts:
/// - dictionaries `{ key = value; … }` (every entry ends with `;`), arrays `( a, b )` (a trailing
///   comma is allowed) and data `<0fbd 771c>`;
/// - strings quoted with `"` or `'`, with the escapes `\a \b \f \n \r \t \v \\ \" \'`, octal
///   `\ooo` (ASCII only) and `\Uxxxx`; unquoted strings of letters, digits and `_$+/:.-`;
/// - any amount of whitespace (or none) and `//` and `/* */` comments between tokens.
///
/// It rejects, with ``ReceiptError/Code/malformedTransactionReceipt`` and the byte offset:
/// duplicate keys in one dictionary (never "last one wins"), invalid UTF-8 in strings (never
/// replaced), anything after the top-level value, and input beyond ``ReceiptLimits`` (nesting
/// deeper than `maximumDepth`, more than `maximumAttributes` values in total, strings longer than
/// `maximumStringLength` bytes, input longer than `maximumInputSize`). Work is linear in the input.
public enum OldStylePropertyList {
    /// A property-list value.
    public enum Value: Sendable, Equatable {
        /// A string (quoted or not).
        case string(String)
        /// Bytes written as `<hex>`.
        case data([UInt8])
        /// An array, in order.
        case array([Value])
        /// A dictionary with its entries in document order.
        case dictionary([Entry])

        /// The string, or `nil` for another kind of value.
        public var stringValue: String? {
            if case .string(let text) = self { return text }
            return nil
        }

        /// The entries of a dictionary, or `nil`.
        public var entries: [Entry]? {
            if case .dictionary(let entries) = self { return entries }
            return nil
        }

        /// The value of the entry named `key` of a dictionary; `nil` otherwise.
        public subscript(key: String) -> Value? {
            entries?.first { $0.key == key }?.value
        }

        /// A short name of the kind of value, for messages.
        public var kindName: String {
            switch self {
            case .string: "string"
            case .data: "data"
            case .array: "array"
            case .dictionary: "dictionary"
            }
        }
    }

    /// One `key = value;` entry of a dictionary.
    public struct Entry: Sendable, Equatable {
        /// The key.
        public var key: String
        /// The value.
        public var value: Value
        /// Byte offset of the value's first character in the parsed text (`nil` for entries built
        /// in code). Not part of equality.
        public var valueOffset: Int?

        /// Creates an entry.
        public init(key: String, value: Value, valueOffset: Int? = nil) {
            self.key = key
            self.value = value
            self.valueOffset = valueOffset
        }

        /// Entries are equal when key and value are; offsets are ignored.
        public static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.key == rhs.key && lhs.value == rhs.value
        }
    }

    /// Parses one property-list value that spans the whole input (whitespace and comments around it
    /// are allowed).
    /// - Parameters:
    ///   - bytes: the property-list text (ASCII or UTF-8), untrusted.
    ///   - limits: the input size, nesting depth, value count and string length allowed.
    ///   - context: a prefix for error reasons, such as `"purchase-info: "`.
    /// - Throws: ``ReceiptError/Code/malformedTransactionReceipt`` with the offset of the problem,
    ///   ``ReceiptError/Code/inputTooLarge`` beyond `limits.maximumInputSize`.
    public static func parse(
        _ bytes: [UInt8], limits: ReceiptLimits = .default, context: String = ""
    ) throws(ReceiptError) -> Value {
        guard bytes.count <= limits.maximumInputSize else {
            throw ReceiptError.make(
                .inputTooLarge, nil, "\(context)property list of \(bytes.count) bytes exceeds \(limits.maximumInputSize)")
        }
        var parser = Parser(bytes: bytes, limits: limits, context: context)
        try parser.skipSpaceAndComments()
        let value = try parser.value(depth: 1)
        try parser.skipSpaceAndComments()
        guard parser.position == bytes.count else {
            throw parser.fail("unexpected \(parser.describeCurrent()) after the property list")
        }
        return value
    }

    // MARK: - Writing

    /// Writes `entries` as a dictionary in the layout Apple's receipts use: one `"key" = "value";`
    /// per line, indented with a tab, or all on one line when `compact` is set.
    public static func encode(_ entries: [Entry], compact: Bool = false) -> [UInt8] {
        var output: [UInt8] = []
        write(.dictionary(entries), into: &output, level: 0, compact: compact)
        return output
    }

    static func write(_ value: Value, into output: inout [UInt8], level: Int, compact: Bool) {
        switch value {
        case .string(let text):
            writeQuoted(text, into: &output)
        case .data(let bytes):
            output.append(UInt8(ascii: "<"))
            let digits = Array("0123456789abcdef".utf8)
            for byte in bytes {
                output.append(digits[Int(byte >> 4)])
                output.append(digits[Int(byte & 15)])
            }
            output.append(UInt8(ascii: ">"))
        case .array(let elements):
            output.append(UInt8(ascii: "("))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(contentsOf: compact ? [0x2C] : [0x2C, 0x20]) }
                write(element, into: &output, level: level + 1, compact: compact)
            }
            output.append(UInt8(ascii: ")"))
        case .dictionary(let entries):
            output.append(UInt8(ascii: "{"))
            for entry in entries {
                if !compact {
                    output.append(0x0A)
                    output.append(contentsOf: repeatElement(0x09, count: level + 1))
                }
                writeQuoted(entry.key, into: &output)
                output.append(contentsOf: Array(" = ".utf8))
                write(entry.value, into: &output, level: level + 1, compact: compact)
                output.append(UInt8(ascii: ";"))
            }
            if !compact {
                output.append(0x0A)
                output.append(contentsOf: repeatElement(0x09, count: level))
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    static func writeQuoted(_ text: String, into output: inout [UInt8]) {
        output.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: output.append(contentsOf: [0x5C, 0x22])
            case 0x5C: output.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0..<0x20, 0x7F:
                output.append(0x5C)
                output.append(0x30 + (byte >> 6))
                output.append(0x30 + ((byte >> 3) & 7))
                output.append(0x30 + (byte & 7))
            default: output.append(byte)
            }
        }
        output.append(0x22)
    }

    // MARK: - Reading

    struct Parser {
        let bytes: [UInt8]
        let limits: ReceiptLimits
        let context: String
        var position = 0
        var values = 0

        init(bytes: [UInt8], limits: ReceiptLimits, context: String) {
            self.bytes = bytes
            self.limits = limits
            self.context = context
        }

        func fail(_ reason: String, at offset: Int? = nil) -> ReceiptError {
            ReceiptError.make(.malformedTransactionReceipt, offset ?? position, "\(context)\(reason)")
        }

        func describeCurrent() -> String {
            guard position < bytes.count else { return "end of input" }
            let byte = bytes[position]
            if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
            return "byte 0x\(String(byte, radix: 16))"
        }

        static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

        static func isUnquotedCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            case UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: ":"),
                UInt8(ascii: "."), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }

        mutating func skipSpaceAndComments() throws(ReceiptError) {
            while position < bytes.count {
                let byte = bytes[position]
                if Parser.isSpace(byte) {
                    position += 1
                } else if byte == UInt8(ascii: "/"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "/") {
                    position += 2
                    while position < bytes.count, bytes[position] != 0x0A, bytes[position] != 0x0D { position += 1 }
                } else if byte == UInt8(ascii: "/"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "*") {
                    let start = position
                    position += 2
                    var closed = false
                    while position + 1 < bytes.count {
                        if bytes[position] == UInt8(ascii: "*"), bytes[position + 1] == UInt8(ascii: "/") {
                            position += 2
                            closed = true
                            break
                        }
                        position += 1
                    }
                    guard closed else { throw fail("unterminated /* comment", at: start) }
                } else {
                    return
                }
            }
        }

        mutating func countValue() throws(ReceiptError) {
            values += 1
            guard values <= limits.maximumAttributes else {
                throw ReceiptError.make(
                    .limitExceeded, position, "\(context)more than \(limits.maximumAttributes) property-list values")
            }
        }

        mutating func value(depth: Int) throws(ReceiptError) -> Value {
            guard position < bytes.count else { throw fail("unexpected end of input, expected a value") }
            try countValue()
            switch bytes[position] {
            case UInt8(ascii: "{"):
                return try dictionary(depth: depth)
            case UInt8(ascii: "("):
                return try array(depth: depth)
            case UInt8(ascii: "<"):
                return try data()
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                return .string(try quotedString())
            case let byte where Parser.isUnquotedCharacter(byte):
                return .string(unquotedString())
            default:
                throw fail("unexpected \(describeCurrent()), expected a value")
            }
        }

        mutating func checkDepth(_ depth: Int) throws(ReceiptError) {
            guard depth <= limits.maximumDepth else {
                throw ReceiptError.make(.limitExceeded, position, "\(context)nesting deeper than \(limits.maximumDepth)")
            }
        }

        mutating func dictionary(depth: Int) throws(ReceiptError) -> Value {
            try checkDepth(depth)
            position += 1  // {
            var entries: [Entry] = []
            var keys = Set<String>()
            while true {
                try skipSpaceAndComments()
                guard position < bytes.count else { throw fail("unterminated dictionary: expected '}'") }
                if bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    return .dictionary(entries)
                }
                let keyOffset = position
                let key: String
                switch bytes[position] {
                case UInt8(ascii: "\""), UInt8(ascii: "'"):
                    key = try quotedString()
                case let byte where Parser.isUnquotedCharacter(byte):
                    key = unquotedString()
                default:
                    throw fail("unexpected \(describeCurrent()), expected a key or '}'")
                }
                try countValue()
                guard keys.insert(key).inserted else { throw fail("duplicate key \"\(key)\"", at: keyOffset) }
                try skipSpaceAndComments()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else {
                    throw fail("unexpected \(describeCurrent()) after key \"\(key)\", expected '='")
                }
                position += 1
                try skipSpaceAndComments()
                let valueOffset = position
                let value = try value(depth: depth + 1)
                try skipSpaceAndComments()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ";") else {
                    throw fail("unexpected \(describeCurrent()) after the value of \"\(key)\", expected ';'")
                }
                position += 1
                entries.append(Entry(key: key, value: value, valueOffset: valueOffset))
            }
        }

        mutating func array(depth: Int) throws(ReceiptError) -> Value {
            try checkDepth(depth)
            position += 1  // (
            var elements: [Value] = []
            while true {
                try skipSpaceAndComments()
                guard position < bytes.count else { throw fail("unterminated array: expected ')'") }
                if bytes[position] == UInt8(ascii: ")") {
                    position += 1
                    return .array(elements)
                }
                elements.append(try value(depth: depth + 1))
                try skipSpaceAndComments()
                guard position < bytes.count else { throw fail("unterminated array: expected ')'") }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                } else if bytes[position] != UInt8(ascii: ")") {
                    throw fail("unexpected \(describeCurrent()) in an array, expected ',' or ')'")
                }
            }
        }

        static func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }

        mutating func data() throws(ReceiptError) -> Value {
            let start = position
            position += 1  // <
            var output: [UInt8] = []
            var high: UInt8?
            while true {
                guard position < bytes.count else { throw fail("unterminated data: expected '>'", at: start) }
                let byte = bytes[position]
                if byte == UInt8(ascii: ">") {
                    guard high == nil else { throw fail("data has an odd number of hex digits") }
                    position += 1
                    return .data(output)
                }
                if Parser.isSpace(byte) {
                    position += 1
                    continue
                }
                guard let nibble = Parser.hexValue(byte) else {
                    throw fail("unexpected \(describeCurrent()) in data, expected a hex digit")
                }
                if let first = high {
                    output.append(first << 4 | nibble)
                    high = nil
                    guard output.count <= limits.maximumStringLength else {
                        throw ReceiptError.make(
                            .limitExceeded, start, "\(context)data longer than \(limits.maximumStringLength) bytes")
                    }
                } else {
                    high = nibble
                }
                position += 1
            }
        }

        mutating func unquotedString() -> String {
            let start = position
            while position < bytes.count, Parser.isUnquotedCharacter(bytes[position]) { position += 1 }
            // Only ASCII characters were accepted, so the bytes are valid UTF-8.
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        mutating func quotedString() throws(ReceiptError) -> String {
            let start = position
            let quote = bytes[position]
            position += 1
            var output: [UInt8] = []
            // Fast path: no escapes. Find the closing quote and copy once.
            var scan = position
            while scan < bytes.count, bytes[scan] != quote, bytes[scan] != 0x5C { scan += 1 }
            if scan < bytes.count, bytes[scan] == quote {
                guard scan - position <= limits.maximumStringLength else {
                    throw ReceiptError.make(
                        .limitExceeded, start, "\(context)string longer than \(limits.maximumStringLength) bytes")
                }
                let slice = bytes[position..<scan]
                position = scan + 1
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw fail("string holds invalid UTF-8", at: start)
                }
                return text
            }
            while true {
                guard position < bytes.count else { throw fail("unterminated string", at: start) }
                let byte = bytes[position]
                position += 1
                if byte == quote { break }
                if byte != 0x5C {
                    output.append(byte)
                } else {
                    try escape(into: &output)
                }
                guard output.count <= limits.maximumStringLength else {
                    throw ReceiptError.make(
                        .limitExceeded, start, "\(context)string longer than \(limits.maximumStringLength) bytes")
                }
            }
            guard let text = String(validating: output, as: UTF8.self) else {
                throw fail("string holds invalid UTF-8", at: start)
            }
            return text
        }

        /// Decodes the escape after a backslash (already consumed).
        mutating func escape(into output: inout [UInt8]) throws(ReceiptError) {
            let escapeStart = position - 1
            guard position < bytes.count else { throw fail("unterminated escape", at: escapeStart) }
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "a"): output.append(0x07)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "v"): output.append(0x0B)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var value = Int(byte - UInt8(ascii: "0"))
                var digits = 1
                while digits < 3, position < bytes.count, bytes[position] >= UInt8(ascii: "0"),
                    bytes[position] <= UInt8(ascii: "7")
                {
                    value = value * 8 + Int(bytes[position] - UInt8(ascii: "0"))
                    position += 1
                    digits += 1
                }
                // Octal escapes are NeXTSTEP-encoded characters; only their ASCII half is unambiguous.
                guard value < 0x80 else {
                    throw fail("octal escape \\\(String(value, radix: 8)) is not ASCII", at: escapeStart)
                }
                output.append(UInt8(value))
            case UInt8(ascii: "U"):
                var scalar: UInt32 = 0
                var digits = 0
                while digits < 4, position < bytes.count, let nibble = Parser.hexValue(bytes[position]) {
                    scalar = scalar << 4 | UInt32(nibble)
                    position += 1
                    digits += 1
                }
                guard digits > 0 else { throw fail("\\U escape without hex digits", at: escapeStart) }
                guard let unicode = Unicode.Scalar(scalar) else {
                    throw fail("\\U escape names a surrogate code point", at: escapeStart)
                }
                output.append(contentsOf: Array(String(Character(unicode)).utf8))
            default:
                // \\, \", \' and any other character stand for themselves.
                output.append(byte)
            }
        }
    }
}
