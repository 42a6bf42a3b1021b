/// A JSON document as an ordered tree: object members keep their order and numbers keep their
/// exact text, so 64-bit identifiers, fractional milliseconds and Apple's key order survive a
/// round trip.
///
/// Used for verifyReceipt request and response bodies, `receipt-tool make` descriptions, JWS
/// headers and App Store payloads. `parse(_:options:)` is strict (see ``JSONParseOptions``):
/// duplicate keys, invalid UTF-8, trailing data and oversized input are errors with byte offsets.
/// Typed accessors (``int64()``, ``double()``, ...) convert a number only when it fits exactly.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number, kept as written (for example `"1000000054042695"` or `"1697679936049.7297"`).
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in document order. A parsed object never repeats a key unless
    /// ``JSONParseOptions/rejectsDuplicateKeys`` was off; ``subscript(_:)`` returns the first.
    case object([(String, JSONValue)])

    /// Exact equality: same types, same number text, object members in the same order.
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

    /// Whether two values are equal when the member order of objects is ignored (arrays keep
    /// their order). Objects with a repeated key are compared member by member in order.
    public func isEqualIgnoringMemberOrder(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEqualIgnoringMemberOrder(to: $1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            let unique = Set(a.map(\.0)).count == a.count && Set(b.map(\.0)).count == b.count
            guard unique else {
                return zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1.isEqualIgnoringMemberOrder(to: $1.1) }
            }
            let other = Dictionary(uniqueKeysWithValues: b.map { ($0.0, $0.1) })
            for (key, value) in a {
                guard let match = other[key], value.isEqualIgnoringMemberOrder(to: match) else { return false }
            }
            return true
        default:
            return self == other
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

    /// The members of an object, or `nil`.
    public var objectValue: [(String, JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The Boolean value, or `nil`.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The value of a number written as an integer that fits in `Int64`; `nil` otherwise
    /// (see ``int64()`` for the reason).
    public var int64Value: Int64? { try? int64() }

    /// The value of a number written as an integer (`-?[0-9]+`, not `-0`) that fits in `Int64`.
    /// - Throws: ``JSONError/Code/typeMismatch`` for another type; ``JSONError/Code/numberDoesNotFit``
    ///   for a fraction or exponent (`1.0`, `1e3`, `1e400`) or a value beyond `Int64`
    ///   (`9223372036854775808`). The error has no offset (the tree does not keep positions).
    public func int64() throws(JSONError) -> Int64 {
        guard case .number(let text) = self else { throw typeMismatch("an integer") }
        switch JSONNumber.int64(text) {
        case .value(let v): return v
        case .notInteger: throw .make(.numberDoesNotFit, nil, "\(text) is not written as an integer")
        case .overflow: throw .make(.numberDoesNotFit, nil, "\(text) does not fit in 64 bits")
        }
    }

    /// The nearest `Double` of a number.
    /// - Throws: ``JSONError/Code/typeMismatch`` for another type; ``JSONError/Code/numberDoesNotFit``
    ///   when the value is beyond `Double`'s range (`1e400`).
    public func double() throws(JSONError) -> Double {
        guard case .number(let text) = self else { throw typeMismatch("a number") }
        guard let value = JSONNumber.double(text) else { throw .make(.numberDoesNotFit, nil, "\(text) is beyond Double's range") }
        return value
    }

    /// The string of a string value.
    /// - Throws: ``JSONError/Code/typeMismatch`` for another type.
    public func string() throws(JSONError) -> String {
        guard case .string(let s) = self else { throw typeMismatch("a string") }
        return s
    }

    /// The value of `true` or `false`.
    /// - Throws: ``JSONError/Code/typeMismatch`` for another type.
    public func bool() throws(JSONError) -> Bool {
        guard case .bool(let b) = self else { throw typeMismatch("a boolean") }
        return b
    }

    func typeMismatch(_ expected: String) -> JSONError {
        .make(.typeMismatch, nil, "\(kindName) where \(expected) was expected")
    }

    /// `null`, `boolean`, `number`, `string`, `array` or `object`.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Parses UTF-8 JSON text (RFC 8259) under `options` (strict by default).
    /// - Throws: ``JSONError`` with the byte offset of the problem.
    public static func parse(_ bytes: [UInt8], options: JSONParseOptions = .strict) throws(JSONError) -> JSONValue {
        try bytes.span.withUnsafeBufferPointer { (buffer) throws(JSONError) -> JSONValue in
            var reader = try JSONReader(buffer, options: options)
            let value = try reader.readValue()
            try reader.finish()
            return value
        }
    }

    /// Parses UTF-8 JSON text held in a slice; offsets count from the slice's start.
    public static func parse(_ bytes: ArraySlice<UInt8>, options: JSONParseOptions = .strict) throws(JSONError) -> JSONValue {
        try bytes.span.withUnsafeBufferPointer { (buffer) throws(JSONError) -> JSONValue in
            var reader = try JSONReader(buffer, options: options)
            let value = try reader.readValue()
            try reader.finish()
            return value
        }
    }

    /// Parses UTF-8 JSON text with the strict options, nesting at most `maximumDepth`.
    public static func parse(_ bytes: [UInt8], maximumDepth: Int) throws(JSONError) -> JSONValue {
        try parse(bytes, options: JSONParseOptions(maximumDepth: maximumDepth))
    }

    /// Parses a JSON string.
    public static func parse(_ text: String, options: JSONParseOptions = .strict) throws(JSONError) -> JSONValue {
        try parse(Array(text.utf8), options: options)
    }

    /// The value as JSON text: compact when `indent` is 0, otherwise indented by `indent` spaces.
    public func jsonText(indent: Int = 2) -> String {
        String(decoding: jsonBytes(indent: indent), as: UTF8.self)
    }

    /// ``jsonText(indent:)`` as UTF-8 bytes.
    public func jsonBytes(indent: Int = 0) -> [UInt8] {
        var writer = JSONWriter(indent: indent)
        writer.value(nil, self)
        return writer.output
    }
}
