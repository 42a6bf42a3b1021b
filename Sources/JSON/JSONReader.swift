// The package's one JSON parser. ``JSONValue/parse(_:options:)`` builds a tree with it; the App
// Store payload models in `JWS` read their fields straight from it, without building the tree.
// It works on an `UnsafeBufferPointer` with explicit positions so that reading a member costs no
// allocation beyond the values kept. Safety rests on one rule, checked everywhere below: a byte is
// read only after its position was compared with `end` (the buffer's count).
import Internals

/// A pull parser over UTF-8 JSON text: the caller asks for the value it expects next, member by
/// member, and gets typed errors with byte offsets. Limits (size, depth, member count) and the
/// duplicate-key rule of ``JSONParseOptions`` are enforced while reading.
///
/// The buffer must stay valid for the reader's whole life; use it only inside a
/// `withUnsafeBufferPointer` scope. Objects are read with ``beginObject()`` and
/// ``nextKey(_:)``, arrays with ``beginArray()`` and ``nextElement(_:)``; the caller must read or
/// skip exactly one value after each key or element.
package struct JSONReader {
    /// The whole text.
    package let buffer: UnsafeBufferPointer<UInt8>
    /// Position of the next byte to read.
    package var position: Int
    /// Objects and arrays the reader is inside.
    package var depth = 0
    /// Members and elements read so far in the whole document.
    package var members = 0
    /// The options the reader enforces.
    package let options: JSONParseOptions
    let maximumDepth: Int
    let end: Int

    /// The state of an object or array being read: whether the next member is the first.
    package struct ContainerState {
        var first = true
        /// Offset of the opening brace or bracket.
        package let offset: Int
    }

    /// A reader at the start of `buffer`.
    /// - Throws: ``JSONError/Code/inputTooLarge`` when the text is longer than the options allow.
    package init(_ buffer: UnsafeBufferPointer<UInt8>, options: JSONParseOptions) throws(JSONError) {
        guard buffer.count <= options.maximumInputSize else {
            throw .make(
                .inputTooLarge, max(options.maximumInputSize, 0),
                "\(buffer.count) bytes of JSON exceed the limit of \(options.maximumInputSize)")
        }
        self.buffer = buffer
        self.position = 0
        self.end = buffer.count
        self.options = options
        self.maximumDepth = min(options.maximumDepth, JSONParseOptions.depthCeiling)
    }

    // MARK: Structure

    @inline(__always)
    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }

    /// Skips JSON whitespace (space, tab, line feed, carriage return).
    @inline(__always)
    package mutating func skipSpace() {
        while position < end, Self.isSpace(buffer[position]) { position += 1 }
    }

    /// The next byte after whitespace, without consuming it; `nil` at the end.
    package mutating func peek() -> UInt8? {
        skipSpace()
        return position < end ? buffer[position] : nil
    }

    /// Whether the next value is `null` (whitespace skipped, nothing consumed).
    package mutating func nextIsNull() -> Bool { peek() == UInt8(ascii: "n") }

    /// After the top-level value: only whitespace may remain.
    /// - Throws: ``JSONError/Code/trailingData`` at the first other byte.
    package mutating func finish() throws(JSONError) {
        skipSpace()
        guard position == end else { throw .make(.trailingData, position, "data after the JSON value") }
    }

    @inline(never)
    func unexpected(_ expected: String) -> JSONError {
        guard position < end else { return .make(.unexpectedEnd, position, "the text ends where \(expected) was expected") }
        let byte = buffer[position]
        let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
        return .make(.unexpectedCharacter, position, "\(shown) where \(expected) was expected")
    }

    mutating func enter(_ opening: UInt8, _ what: String) throws(JSONError) -> ContainerState {
        skipSpace()
        guard position < end, buffer[position] == opening else { throw unexpected(what) }
        guard depth < maximumDepth else {
            throw .make(.depthLimitExceeded, position, "objects and arrays nested deeper than \(maximumDepth)")
        }
        depth += 1
        let state = ContainerState(offset: position)
        position += 1
        return state
    }

    mutating func countMember(at offset: Int) throws(JSONError) {
        members += 1
        guard members <= options.maximumMembers else {
            throw .make(.memberLimitExceeded, offset, "more than \(options.maximumMembers) members and elements")
        }
    }

    /// Consumes `{`.
    package mutating func beginObject() throws(JSONError) -> ContainerState {
        try enter(UInt8(ascii: "{"), "an object")
    }

    /// Reads the separator and the next key with its colon, or the closing brace (then `nil`).
    package mutating func nextKey(_ state: inout ContainerState) throws(JSONError) -> JSONKey? {
        skipSpace()
        guard position < end else { throw unexpected(state.first ? "a key or '}'" : "',' or '}'") }
        if buffer[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return nil
        }
        if state.first {
            state.first = false
        } else {
            guard buffer[position] == UInt8(ascii: ",") else { throw unexpected("',' or '}'") }
            position += 1
            skipSpace()
        }
        guard position < end, buffer[position] == UInt8(ascii: "\"") else { throw unexpected("a string key") }
        let offset = position
        try countMember(at: offset)
        let key: JSONKey
        switch try scanString() {
        case .plain(let range): key = JSONKey(offset: offset, raw: UnsafeBufferPointer(rebasing: buffer[range]), owned: [])
        case .escaped(let bytes): key = JSONKey(offset: offset, raw: nil, owned: bytes)
        }
        skipSpace()
        guard position < end, buffer[position] == UInt8(ascii: ":") else { throw unexpected("':'") }
        position += 1
        return key
    }

    /// Consumes `[`.
    package mutating func beginArray() throws(JSONError) -> ContainerState {
        try enter(UInt8(ascii: "["), "an array")
    }

    /// Reads the separator before the next element (then `true`), or the closing bracket (`false`).
    package mutating func nextElement(_ state: inout ContainerState) throws(JSONError) -> Bool {
        skipSpace()
        guard position < end else { throw unexpected(state.first ? "a value or ']'" : "',' or ']'") }
        if buffer[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return false
        }
        if state.first {
            state.first = false
        } else {
            guard buffer[position] == UInt8(ascii: ",") else { throw unexpected("',' or ']'") }
            position += 1
            skipSpace()
        }
        try countMember(at: position)
        return true
    }

    // MARK: Scalars

    /// What a string scan found: a range of the buffer without escapes, or unescaped bytes.
    package enum StringToken {
        case plain(Range<Int>)
        case escaped([UInt8])
    }

    /// Reads a string token (after whitespace): validates UTF-8 and escapes, returns its content.
    package mutating func scanString() throws(JSONError) -> StringToken {
        skipSpace()
        guard position < end, buffer[position] == UInt8(ascii: "\"") else { throw unexpected("a string") }
        let start = position + 1
        var i = start
        // Eight bytes at a time while none is a quote, a backslash, a control character or
        // non-ASCII (SWAR: a byte is flagged when its top bit survives these subtractions).
        if let base = buffer.baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while end - i >= 8 {
                let x = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let quote = x ^ (ones &* 0x22)
                let backslash = x ^ (ones &* 0x5C)
                let flagged = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((x &- ones &* 0x20) & ~x) | x
                if flagged & highs != 0 { break }
                i += 8
            }
        }
        while true {
            guard i < end else { throw .make(.unexpectedEnd, i, "unterminated string") }
            let b = buffer[i]
            if b >= 0x20 && b < 0x80 && b != 0x22 && b != 0x5C {
                i += 1
                continue
            }
            if b == 0x22 {
                position = i + 1
                return .plain(start..<i)
            }
            if b == 0x5C { return try scanEscaped(start: start, at: i) }
            if b < 0x20 { throw .make(.invalidString, i, "control character 0x\(String(b, radix: 16)) in a string") }
            i = try utf8Sequence(at: i)
        }
    }

    /// Validates one multi-byte UTF-8 sequence starting at `i` (whose first byte is ≥ 0x80) and
    /// returns the position after it. Rejects overlong forms, surrogates and values past U+10FFFF.
    @inline(__always)
    func utf8Sequence(at i: Int) throws(JSONError) -> Int {
        switch UTF8Sequence.length(UnsafeRawBufferPointer(buffer), at: i) {
        case .success(let length): return i + length
        case .failure(.invalidLead): throw .make(.invalidUTF8, i, "byte 0x\(String(buffer[i], radix: 16)) cannot start a UTF-8 sequence")
        case .failure(.truncated): throw .make(.invalidUTF8, i, "truncated UTF-8 sequence")
        case .failure(.invalidContinuation): throw .make(.invalidUTF8, i, "invalid UTF-8 sequence")
        }
    }

    @inline(never)
    mutating func scanEscaped(start: Int, at first: Int) throws(JSONError) -> StringToken {
        var output = [UInt8](UnsafeBufferPointer(rebasing: buffer[start..<first]))
        var i = first
        while true {
            guard i < end else { throw .make(.unexpectedEnd, i, "unterminated string") }
            let b = buffer[i]
            if b == 0x22 {
                position = i + 1
                return .escaped(output)
            }
            if b < 0x20 { throw .make(.invalidString, i, "control character 0x\(String(b, radix: 16)) in a string") }
            if b >= 0x80 {
                let next = try utf8Sequence(at: i)
                output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[i..<next]))
                i = next
                continue
            }
            if b != 0x5C {
                output.append(b)
                i += 1
                continue
            }
            let escape = i
            guard i + 1 < end else { throw .make(.unexpectedEnd, i + 1, "unterminated escape") }
            i += 2
            switch buffer[escape + 1] {
            case UInt8(ascii: "\""): output.append(0x22)
            case UInt8(ascii: "\\"): output.append(0x5C)
            case UInt8(ascii: "/"): output.append(0x2F)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4(at: i, escape: escape)
                i += 4
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    guard end - i >= 6, buffer[i] == 0x5C, buffer[i + 1] == UInt8(ascii: "u") else {
                        throw .make(.invalidUTF8, escape, "high surrogate \\u\(String(scalar, radix: 16)) without a low surrogate")
                    }
                    let lowSurrogate = try hex4(at: i + 2, escape: i)
                    guard lowSurrogate >= 0xDC00 && lowSurrogate < 0xE000 else {
                        throw .make(.invalidUTF8, escape, "high surrogate \\u\(String(scalar, radix: 16)) without a low surrogate")
                    }
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (lowSurrogate - 0xDC00)
                } else if scalar >= 0xDC00 && scalar < 0xE000 {
                    throw .make(.invalidUTF8, escape, "lone low surrogate \\u\(String(scalar, radix: 16))")
                }
                Self.appendUTF8(scalar, to: &output)
            default:
                throw .make(.invalidString, escape, "unknown escape")
            }
        }
    }

    func hex4(at i: Int, escape: Int) throws(JSONError) -> UInt32 {
        guard end - i >= 4 else { throw .make(.invalidString, escape, "short \\u escape") }
        var value: UInt32 = 0
        for k in 0..<4 {
            let c = buffer[i + k]
            let digit: UInt32
            switch c {
            case 0x30...0x39: digit = UInt32(c - 0x30)
            case 0x41...0x46: digit = UInt32(c - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(c - 0x61 + 10)
            default: throw .make(.invalidString, escape, "bad \\u escape")
            }
            value = value << 4 | digit
        }
        return value
    }

    static func appendUTF8(_ scalar: UInt32, to output: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            output.append(UInt8(truncatingIfNeeded: scalar))
        case 0x80..<0x800:
            output.append(0xC0 | UInt8(truncatingIfNeeded: scalar >> 6))
            output.append(0x80 | UInt8(truncatingIfNeeded: scalar & 0x3F))
        case 0x800..<0x10000:
            output.append(0xE0 | UInt8(truncatingIfNeeded: scalar >> 12))
            output.append(0x80 | UInt8(truncatingIfNeeded: (scalar >> 6) & 0x3F))
            output.append(0x80 | UInt8(truncatingIfNeeded: scalar & 0x3F))
        default:
            output.append(0xF0 | UInt8(truncatingIfNeeded: scalar >> 18))
            output.append(0x80 | UInt8(truncatingIfNeeded: (scalar >> 12) & 0x3F))
            output.append(0x80 | UInt8(truncatingIfNeeded: (scalar >> 6) & 0x3F))
            output.append(0x80 | UInt8(truncatingIfNeeded: scalar & 0x3F))
        }
    }

    /// Reads a string value.
    /// - Throws: ``JSONError/Code/typeMismatch`` when the next value is not a string, or the
    ///   errors of an invalid string.
    package mutating func readString() throws(JSONError) -> String {
        try expectType(UInt8(ascii: "\""), "a string")
        switch try scanString() {
        case .plain(let range): return String(decoding: UnsafeBufferPointer(rebasing: buffer[range]), as: UTF8.self)
        case .escaped(let bytes): return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Reads a string value as its token (for callers that decode the bytes themselves).
    package mutating func readStringToken() throws(JSONError) -> StringToken {
        try expectType(UInt8(ascii: "\""), "a string")
        return try scanString()
    }

    /// Reads a number and returns the range of its text.
    package mutating func readNumberRange() throws(JSONError) -> Range<Int> {
        try expectType(UInt8(ascii: "0"), "a number")
        return try scanNumber()
    }

    /// Reads a number and returns its exact text.
    package mutating func readNumberText() throws(JSONError) -> String {
        let range = try readNumberRange()
        return String(decoding: UnsafeBufferPointer(rebasing: buffer[range]), as: UTF8.self)
    }

    /// Reads an integer written as one (`-?[0-9]+`, not `-0`) that fits in `Int64`.
    /// - Throws: ``JSONError/Code/typeMismatch`` for another type, ``JSONError/Code/numberDoesNotFit``
    ///   for a fraction, an exponent or a value beyond `Int64`.
    package mutating func readInt64() throws(JSONError) -> Int64 {
        let range = try readNumberRange()
        switch JSONNumber.int64(UnsafeBufferPointer(rebasing: buffer[range])) {
        case .value(let v): return v
        case .notInteger: throw .make(.numberDoesNotFit, range.lowerBound, "not written as an integer")
        case .overflow: throw .make(.numberDoesNotFit, range.lowerBound, "integer does not fit in 64 bits")
        }
    }

    /// Reads `true` or `false`.
    package mutating func readBool() throws(JSONError) -> Bool {
        try expectType(UInt8(ascii: "t"), "a boolean")
        if buffer[position] == UInt8(ascii: "t") {
            try literal("true")
            return true
        }
        try literal("false")
        return false
    }

    /// Reads `null`.
    package mutating func readNull() throws(JSONError) {
        try expectType(UInt8(ascii: "n"), "null")
        try literal("null")
    }

    /// Checks that the next value starts like `kind` (a representative first byte: `"`, `0`, `t`,
    /// `n`, `{`, `[`); otherwise throws ``JSONError/Code/typeMismatch`` naming `what`, or a syntax
    /// error if no value starts here.
    package mutating func expectType(_ kind: UInt8, _ what: String) throws(JSONError) {
        skipSpace()
        guard position < end else { throw unexpected(what) }
        let found = Self.kind(of: buffer[position])
        guard found == kind else {
            guard let found else { throw unexpected("a value") }
            throw .make(.typeMismatch, position, "\(Self.name(of: found)) where \(what) was expected")
        }
    }

    static func kind(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "n"): byte
        case UInt8(ascii: "t"), UInt8(ascii: "f"): UInt8(ascii: "t")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(ascii: "0")
        default: nil
        }
    }

    static func name(of kind: UInt8) -> String {
        switch kind {
        case UInt8(ascii: "\""): "a string"
        case UInt8(ascii: "{"): "an object"
        case UInt8(ascii: "["): "an array"
        case UInt8(ascii: "n"): "null"
        case UInt8(ascii: "t"): "a boolean"
        default: "a number"
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONError) {
        let start = position
        let count = word.utf8CodeUnitCount
        guard end - position >= count else { throw .make(.unexpectedEnd, end, "the text ends inside '\(word)'") }
        let base = word.utf8Start
        for k in 0..<count where buffer[position + k] != base[k] {
            throw .make(.unexpectedCharacter, start + k, "expected '\(word)'")
        }
        position += count
    }

    mutating func scanNumber() throws(JSONError) -> Range<Int> {
        let start = position
        @inline(__always) func isDigit(_ p: Int) -> Bool { p < end && buffer[p] >= 0x30 && buffer[p] <= 0x39 }
        if position < end, buffer[position] == UInt8(ascii: "-") { position += 1 }
        guard isDigit(position) else {
            throw position < end
                ? .make(.invalidNumber, position, "a digit must follow '-'") : .make(.unexpectedEnd, position, "number ends early")
        }
        if buffer[position] == UInt8(ascii: "0") {
            position += 1
            if isDigit(position) { throw .make(.invalidNumber, start, "leading zero in a number") }
        } else {
            while isDigit(position) { position += 1 }
        }
        if position < end, buffer[position] == UInt8(ascii: ".") {
            position += 1
            guard isDigit(position) else { throw .make(.invalidNumber, position, "digits expected after '.'") }
            while isDigit(position) { position += 1 }
        }
        if position < end, buffer[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < end, buffer[position] == UInt8(ascii: "+") || buffer[position] == UInt8(ascii: "-") { position += 1 }
            guard isDigit(position) else { throw .make(.invalidNumber, position, "digits expected in the exponent") }
            while isDigit(position) { position += 1 }
        }
        return start..<position
    }

    // MARK: Whole values

    /// Reads any value as a ``JSONValue`` tree.
    package mutating func readValue() throws(JSONError) -> JSONValue {
        skipSpace()
        guard position < end else { throw unexpected("a value") }
        switch buffer[position] {
        case UInt8(ascii: "{"):
            var state = try beginObject()
            var result: [(String, JSONValue)] = []
            var seen: Set<String> = []
            while let key = try nextKey(&state) {
                let name = key.string
                if options.rejectsDuplicateKeys {
                    if result.count < 16 {
                        if result.contains(where: { $0.0 == name }) { throw Self.duplicate(name, at: key.offset) }
                    } else {
                        if seen.isEmpty { seen = Set(result.map(\.0)) }
                        guard seen.insert(name).inserted else { throw Self.duplicate(name, at: key.offset) }
                    }
                }
                result.append((name, try readValue()))
            }
            return .object(result)
        case UInt8(ascii: "["):
            var state = try beginArray()
            var elements: [JSONValue] = []
            while try nextElement(&state) { elements.append(try readValue()) }
            return .array(elements)
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return .bool(try readBool())
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let range = try scanNumber()
            return .number(String(decoding: UnsafeBufferPointer(rebasing: buffer[range]), as: UTF8.self))
        default:
            throw unexpected("a value")
        }
    }

    /// Skips one value of any type, with the same checks as reading it (and without building it).
    package mutating func skipValue() throws(JSONError) {
        skipSpace()
        guard position < end else { throw unexpected("a value") }
        switch buffer[position] {
        case UInt8(ascii: "{"):
            var state = try beginObject()
            var keys: Set<[UInt8]> = []
            while let key = try nextKey(&state) {
                if options.rejectsDuplicateKeys {
                    guard keys.insert(key.bytes).inserted else { throw Self.duplicate(key.string, at: key.offset) }
                }
                try skipValue()
            }
        case UInt8(ascii: "["):
            var state = try beginArray()
            while try nextElement(&state) { try skipValue() }
        case UInt8(ascii: "\""):
            _ = try scanString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            _ = try readBool()
        case UInt8(ascii: "n"):
            try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try scanNumber()
        default:
            throw unexpected("a value")
        }
    }

    /// The duplicate-key error for `name` at `offset`.
    @inline(never)
    package static func duplicate(_ name: String, at offset: Int) -> JSONError {
        .make(.duplicateKey, offset, "the key \"\(TerminalEscaping.escaped(name))\" appears twice in one object")
    }

    /// A typed-value error at `offset` for callers that check values themselves.
    @inline(never)
    package static func error(_ code: JSONError.Code, at offset: Int?, _ reason: String) -> JSONError {
        .make(code, offset, reason)
    }
}

/// An object key as read: bytes in the reader's buffer, or unescaped bytes when the key used
/// escapes. Valid as long as the reader's buffer.
package struct JSONKey {
    /// Offset of the key's opening quote.
    package let offset: Int
    let raw: UnsafeBufferPointer<UInt8>?
    let owned: [UInt8]

    /// Number of UTF-8 bytes of the key.
    package var count: Int { raw?.count ?? owned.count }

    /// Whether the key is exactly `name`.
    @inline(__always)
    package func equals(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        if let raw {
            guard raw.count == name.count else { return false }
            guard let a = raw.baseAddress, let b = name.baseAddress else { return raw.count == 0 }
            return memoryEquals(a, b, raw.count)
        }
        return owned.elementsEqual(name)
    }

    /// Whether the key is exactly `name`.
    @inline(__always)
    package func equals(_ name: StaticString) -> Bool {
        equals(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    /// The key's bytes in the document, when it has no escapes (`nil` for a key that had to be
    /// unescaped: ``withBytes(_:)`` reads every key).
    package var bytesInDocument: UnsafeBufferPointer<UInt8>? { raw }

    /// Calls `body` with the key's bytes.
    package func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let raw { return body(raw) }
        return owned.withUnsafeBufferPointer(body)
    }

    /// The key's bytes, copied.
    package var bytes: [UInt8] { raw.map { Array($0) } ?? owned }

    /// The key as a String.
    package var string: String {
        if let raw { return String(decoding: raw, as: UTF8.self) }
        return String(decoding: owned, as: UTF8.self)
    }
}

@inline(__always)
func memoryEquals(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    var i = 0
    while count - i >= 8 {
        let x = UnsafeRawPointer(a + i).loadUnaligned(as: UInt64.self)
        let y = UnsafeRawPointer(b + i).loadUnaligned(as: UInt64.self)
        if x != y { return false }
        i += 8
    }
    while i < count {
        if a[i] != b[i] { return false }
        i += 1
    }
    return true
}
