/// A JSON document as an ordered tree: object members keep their order and numbers keep their
/// exact text, so receipts' 64-bit identifiers and Apple's key order survive a round trip.
///
/// Used for verifyReceipt request and response bodies and for `receipt-tool make` descriptions.
/// Parsing bounds nesting depth and rejects trailing garbage.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number, kept as written (for example `"1000000054042695"` or `"2.5e3"`).
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in document order (duplicate keys are kept; ``subscript(_:)`` returns the first).
    case object([(String, JSONValue)])

    /// Structural equality: the same kind, the same member order and the same number text.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// The first member named `key` of an object; `nil` otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// The string value, or `nil`.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The string of a string, or the text of a number; `nil` otherwise.
    public var scalarText: String? {
        switch self {
        case .string(let s): s
        case .number(let n): n
        case .bool(let b): b ? "true" : "false"
        default: nil
        }
    }

    /// The elements of an array, or `nil`.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The error for text that is not JSON.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Byte offset of the problem.
        public let offset: Int
        /// What was wrong.
        public let reason: String
        /// `invalid JSON at offset N: reason`.
        public var description: String { "invalid JSON at offset \(offset): \(reason)" }
    }

    /// Parses UTF-8 JSON text (RFC 8259) with nesting at most `maximumDepth`.
    public static func parse(_ bytes: [UInt8], maximumDepth: Int = 64) throws(ParseError) -> JSONValue {
        var parser = Parser(bytes: bytes, maximumDepth: maximumDepth)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.position == bytes.count else { throw parser.fail("trailing characters") }
        return value
    }

    /// Parses a JSON string.
    public static func parse(_ text: String, maximumDepth: Int = 64) throws(ParseError) -> JSONValue {
        try parse(Array(text.utf8), maximumDepth: maximumDepth)
    }

    struct Parser {
        let bytes: [UInt8]
        let maximumDepth: Int
        var position = 0

        func fail(_ reason: String) -> ParseError { ParseError(offset: position, reason: reason) }

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func expect(_ literal: String) throws(ParseError) {
            for byte in literal.utf8 {
                guard position < bytes.count, bytes[position] == byte else { throw fail("expected \(literal)") }
                position += 1
            }
        }

        mutating func value(depth: Int) throws(ParseError) -> JSONValue {
            guard depth <= maximumDepth else { throw fail("nesting deeper than \(maximumDepth)") }
            guard position < bytes.count else { throw fail("unexpected end") }
            switch bytes[position] {
            case UInt8(ascii: "{"):
                position += 1
                var members: [(String, JSONValue)] = []
                skipSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    return .object(members)
                }
                while true {
                    skipSpace()
                    let key = try string()
                    skipSpace()
                    try expect(":")
                    skipSpace()
                    members.append((key, try value(depth: depth + 1)))
                    skipSpace()
                    guard position < bytes.count else { throw fail("unterminated object") }
                    if bytes[position] == UInt8(ascii: ",") {
                        position += 1
                        continue
                    }
                    try expect("}")
                    return .object(members)
                }
            case UInt8(ascii: "["):
                position += 1
                var elements: [JSONValue] = []
                skipSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    return .array(elements)
                }
                while true {
                    skipSpace()
                    elements.append(try value(depth: depth + 1))
                    skipSpace()
                    guard position < bytes.count else { throw fail("unterminated array") }
                    if bytes[position] == UInt8(ascii: ",") {
                        position += 1
                        continue
                    }
                    try expect("]")
                    return .array(elements)
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"):
                try expect("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try expect("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try expect("null")
                return .null
            default:
                return .number(try number())
            }
        }

        mutating func number() throws(ParseError) -> String {
            let start = position
            func digits(_ p: inout Int, _ bytes: [UInt8]) -> Int {
                let s = p
                while p < bytes.count, bytes[p] >= 0x30 && bytes[p] <= 0x39 { p += 1 }
                return p - s
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
            let intDigits = digits(&position, bytes)
            guard intDigits > 0 else { throw fail("invalid value") }
            if intDigits > 1, bytes[position - intDigits] == UInt8(ascii: "0") { throw fail("leading zero in number") }
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard digits(&position, bytes) > 0 else { throw fail("digits expected after '.'") }
            }
            if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                    position += 1
                }
                guard digits(&position, bytes) > 0 else { throw fail("digits expected in exponent") }
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard bytes.count - position >= 4 else { throw fail("short \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[position]
                let digit: UInt32
                switch c {
                case 0x30...0x39: digit = UInt32(c - 0x30)
                case 0x41...0x46: digit = UInt32(c - 0x41 + 10)
                case 0x61...0x66: digit = UInt32(c - 0x61 + 10)
                default: throw fail("bad \\u escape")
                }
                value = value << 4 | digit
                position += 1
            }
            return value
        }

        mutating func string() throws(ParseError) -> String {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw fail("expected a string") }
            position += 1
            var output: [UInt8] = []
            while true {
                // A run of bytes that need no decoding is copied at once (base64 receipt data is
                // one such run of kilobytes).
                let run = position
                while position < bytes.count, bytes[position] >= 0x20, bytes[position] != 0x22, bytes[position] != 0x5C { position += 1 }
                if position > run { output.append(contentsOf: bytes[run..<position]) }
                guard position < bytes.count else { throw fail("unterminated string") }
                let c = bytes[position]
                position += 1
                if c == UInt8(ascii: "\"") { break }
                if c < 0x20 { throw fail("control character in string") }
                if c != UInt8(ascii: "\\") {
                    output.append(c)
                    continue
                }
                guard position < bytes.count else { throw fail("unterminated escape") }
                let e = bytes[position]
                position += 1
                switch e {
                case UInt8(ascii: "\""): output.append(0x22)
                case UInt8(ascii: "\\"): output.append(0x5C)
                case UInt8(ascii: "/"): output.append(0x2F)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        try expect("\\u")
                        let low = try hex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw fail("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw fail("unpaired surrogate")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid code point") }
                    output.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw fail("unknown escape")
                }
            }
            guard let text = String(validating: output, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
            return text
        }
    }
}

/// Writes JSON text with the key order the caller chooses, optionally indented.
public struct JSONWriter: Sendable {
    /// The text written so far.
    public internal(set) var output: [UInt8] = []
    /// Indentation width; 0 writes compact JSON on one line.
    public let indent: Int
    var level = 0
    var needsComma = false

    /// A writer; `indent` 0 means compact.
    public init(indent: Int = 2) {
        self.indent = indent
        output.reserveCapacity(4096)
    }

    /// The text as a String.
    public var text: String { String(decoding: output, as: UTF8.self) }

    mutating func newline() {
        guard indent > 0 else { return }
        output.append(0x0A)
        output.append(contentsOf: repeatElement(0x20, count: level * indent))
    }

    mutating func beforeValue() {
        if needsComma { output.append(UInt8(ascii: ",")) }
        if level > 0 { newline() }
    }

    /// Starts an object (as an array element or at top level).
    public mutating func beginObject() {
        beforeValue()
        output.append(UInt8(ascii: "{"))
        level += 1
        needsComma = false
    }

    /// Starts an object as the value of `key`.
    public mutating func beginObject(_ key: String) {
        writeKey(key)
        output.append(UInt8(ascii: "{"))
        level += 1
        needsComma = false
    }

    /// Ends the current object.
    public mutating func endObject() {
        level -= 1
        if needsComma { newline() }
        output.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Starts an array as the value of `key`.
    public mutating func beginArray(_ key: String) {
        writeKey(key)
        output.append(UInt8(ascii: "["))
        level += 1
        needsComma = false
    }

    /// Ends the current array.
    public mutating func endArray() { endObject(closing: "]") }

    mutating func endObject(closing: Character) {
        level -= 1
        if needsComma { newline() }
        output.append(contentsOf: Array(String(closing).utf8))
        needsComma = true
    }

    mutating func writeKey(_ key: String) {
        beforeValue()
        writeString(key)
        output.append(UInt8(ascii: ":"))
        if indent > 0 { output.append(0x20) }
        needsComma = true
    }

    /// Writes `"key": "value"`.
    public mutating func string(_ key: String, _ value: String) {
        writeKey(key)
        writeString(value)
    }

    /// Writes a string as an array element.
    public mutating func string(_ value: String) {
        beforeValue()
        writeString(value)
        needsComma = true
    }

    /// Writes `"key": <number>` with the number's text as given.
    public mutating func number(_ key: String, _ text: String) {
        writeKey(key)
        output.append(contentsOf: Array(text.utf8))
    }

    /// Writes `"key": true|false`.
    public mutating func bool(_ key: String, _ value: Bool) {
        writeKey(key)
        output.append(contentsOf: Array((value ? "true" : "false").utf8))
    }

    /// Writes `"key": null`.
    public mutating func null(_ key: String) {
        writeKey(key)
        output.append(contentsOf: Array("null".utf8))
    }

    /// Writes any ``JSONValue`` under `key` (or as an element when `key` is nil).
    public mutating func value(_ key: String?, _ value: JSONValue) {
        switch value {
        case .null: if let key { null(key) } else { raw(Array("null".utf8)) }
        case .bool(let b): if let key { bool(key, b) } else { raw(Array((b ? "true" : "false").utf8)) }
        case .number(let n): if let key { number(key, n) } else { raw(Array(n.utf8)) }
        case .string(let s): if let key { string(key, s) } else { string(s) }
        case .array(let elements):
            if let key {
                beginArray(key)
            } else {
                beforeValue()
                output.append(UInt8(ascii: "["))
                level += 1
                needsComma = false
            }
            for element in elements { self.value(nil, element) }
            endArray()
        case .object(let members):
            if let key { beginObject(key) } else { beginObject() }
            for (k, v) in members { self.value(k, v) }
            endObject()
        }
    }

    mutating func raw(_ bytes: [UInt8]) {
        beforeValue()
        output.append(contentsOf: bytes)
        needsComma = true
    }

    mutating func writeString(_ value: String) {
        output.append(UInt8(ascii: "\""))
        // Runs of bytes that need no escape are appended at once (a `latest_receipt` is one run of
        // kilobytes); only the rare escapes go byte by byte.
        let written: Void? = value.utf8.withContiguousStorageIfAvailable { text in
            var run = 0
            for index in 0..<text.count where text[index] < 0x20 || text[index] == 0x22 || text[index] == 0x5C {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: text[run..<index]))
                escape(text[index])
                run = index + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: text[run...]))
        }
        if written == nil {
            for byte in value.utf8 { escape(byte) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends one byte of a string value, escaped when JSON requires it.
    mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
        case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        case 0..<0x20:
            let hexDigits = Array("0123456789abcdef".utf8)
            output.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 15)]])
        default: output.append(byte)
        }
    }
}
