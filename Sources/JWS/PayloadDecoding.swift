public import JSON

/// An App Store payload type: JSON that Apple signs as the payload of a JWS.
///
/// Decoding reads JSON and checks types; it verifies nothing. A decoded payload is trustworthy
/// only when it comes out of a verifier's valid verdict (which checked the signature over the
/// exact bytes the payload was decoded from).
public protocol JWSPayload: Sendable {
    /// Decodes `jsonPayload` (UTF-8 JSON text) under the strict JSON rules and `limits`.
    /// - Throws: ``JWSError`` with offsets in `jsonPayload`: ``JWSError/Code/invalidJSON`` for
    ///   text that is not strict JSON, ``JWSError/Code/invalidField`` for a field of the wrong
    ///   type or range.
    init(jsonPayload: [UInt8], limits: JWSLimits) throws(JWSError)
    /// The JSON text the value was decoded from, exactly.
    var jsonPayload: [UInt8] { get }
    /// The value as JSON: the typed fields under Apple's names and with their JSON types (dates
    /// as their exact number text), then the conforming type's `unknownFields` in document order.
    func jsonValue() -> JSONValue
}

extension JWSPayload {
    /// Decodes `jsonPayload` with the default limits.
    public init(jsonPayload: [UInt8]) throws(JWSError) {
        try self.init(jsonPayload: jsonPayload, limits: .default)
    }

    /// Decodes JSON text given as a String.
    public init(jsonText: String, limits: JWSLimits = .default) throws(JWSError) {
        try self.init(jsonPayload: Array(jsonText.utf8), limits: limits)
    }
}

/// A time Apple writes as milliseconds since 1970-01-01T00:00:00Z, kept as the exact number text.
///
/// App Store servers write integers; Xcode writes fractions (`1697679936049.7297`) and year-1
/// dates (`-62135769600000`). ``text`` round-trips byte for byte; ``milliseconds`` is the exact
/// integer when there is one; ``date`` is the nearest `Date`.
public struct JWSDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The number as written in the JSON.
    public let text: String
    /// The value as a `Double` of milliseconds (exact for integers up to 2^53).
    public let millisecondsSince1970: Double

    /// The largest magnitude accepted, in milliseconds: 8.64 × 10^15, ±100,000,000 days around
    /// 1970 (ECMAScript's time range).
    public static let maximumMagnitude: Double = 8.64e15

    /// A date from JSON number text.
    /// - Returns: `nil` when `text` is not a JSON number within ±``maximumMagnitude``.
    public init?(text: String) {
        guard JSONNumber.isValid(text), let value = JSONNumber.double(text), abs(value) <= Self.maximumMagnitude else { return nil }
        self.text = text
        self.millisecondsSince1970 = value
    }

    /// A date from whole milliseconds.
    public init(milliseconds: Int64) {
        self.text = String(milliseconds)
        self.millisecondsSince1970 = Double(milliseconds)
    }

    init(validatedText text: String, value: Double) {
        self.text = text
        self.millisecondsSince1970 = value
    }

    /// The exact number of milliseconds when the text is an integer (`nil` for a fraction).
    public var milliseconds: Int64? {
        if case .value(let v) = JSONNumber.int64(text) { return v }
        return nil
    }

    /// Seconds since 1970 (a `Double`, as `Date` keeps time).
    public var secondsSince1970: Double { millisecondsSince1970 / 1000 }

    /// The text.
    public var description: String { text }

    /// Orders by value (texts of equal value, such as `1` and `1.0`, are not equal but neither
    /// is less than the other).
    public static func < (lhs: JWSDate, rhs: JWSDate) -> Bool { lhs.millisecondsSince1970 < rhs.millisecondsSince1970 }

    /// Equal when the texts are (so `1` and `1.0` differ).
    public static func == (lhs: JWSDate, rhs: JWSDate) -> Bool { lhs.text == rhs.text }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }
}

/// A JWS carried inside another payload (a notification's `signedTransactionInfo`,
/// `signedRenewalInfo`, `signedAppTransactionInfo`), kept as the token text it arrived as.
///
/// The outer payload's decoder does not parse it: a verifier verifies it (signature, chain, kind,
/// agreement with the outer payload) like any other token, and the verdict hands out the verified
/// value (ReceiptVerification's `Verdict.nested`).
public struct NestedJWS<Payload: JWSPayload>: Sendable, Hashable {
    /// The token text, exactly as in the outer payload.
    public let token: String

    /// A nested token from its text.
    public init(token: String) { self.token = token }

    /// Splits and decodes the token's structure; verifies nothing.
    public func parse(limits: JWSLimits = .default) throws(JWSError) -> CompactJWS {
        try CompactJWS(token, limits: limits)
    }
}

// MARK: - Decoding machinery shared by the payload models

/// A model's typed fields, declared once as the cases of a `String` enumeration, in Apple's
/// documentation order (also the order ``JWSPayload/jsonValue()`` writes them): the raw value is
/// the JSON member name, the position (``PayloadFieldTable/slot(of:)``) the field's slot and its
/// bit in ``ObjectState/seen``.
protocol PayloadField: RawRepresentable<String>, CaseIterable, Equatable, Sendable {
    /// The fields by name and position, made once (`static let table = PayloadFieldTable<Field>()`).
    static var table: PayloadFieldTable<Self> { get }
}

extension PayloadField {
    /// The JSON member name.
    var name: String { rawValue }
}

/// The state of one object being decoded: which fields were seen (duplicates are errors) and the
/// members kept untyped.
struct ObjectState<Field: PayloadField> {
    var container: JSONReader.ContainerState
    var seen: UInt64 = 0
    var unknown: [(String, JSONValue)] = []
    /// The unknown names, once there are enough of them for a set to beat a scan.
    var unknownNames: Set<String> = []
}

/// The JSON reader of the payload models, throwing ``JWSError`` that name the field.
struct PayloadReader {
    var json: JSONReader

    init(_ buffer: UnsafeBufferPointer<UInt8>, limits: JWSLimits) throws(JWSError) {
        do {
            json = try JSONReader(buffer, options: limits.jsonOptions)
        } catch {
            throw .json(error, context: "payload")
        }
    }

    /// Decodes a whole payload: `body` reads the top-level object, then only whitespace may remain.
    static func decode<T>(_ bytes: [UInt8], limits: JWSLimits, _ body: (inout PayloadReader) throws(JWSError) -> T) throws(JWSError) -> T {
        try bytes.span.withUnsafeBufferPointer { (buffer) throws(JWSError) -> T in
            var reader = try PayloadReader(buffer, limits: limits)
            let value = try body(&reader)
            do throws(JSONError) {
                try reader.json.finish()
            } catch {
                throw .json(error, context: "payload")
            }
            return value
        }
    }

    @inline(never)
    func fail(_ error: JSONError, _ field: String) -> JWSError {
        .json(error, context: field)
    }

    /// Starts reading an object (the payload itself, or a field's value).
    mutating func beginObject<Field: PayloadField>(_ context: String, _: Field.Type) throws(JWSError) -> ObjectState<Field> {
        do {
            try json.expectType(UInt8(ascii: "{"), "an object")
            return ObjectState(container: try json.beginObject())
        } catch {
            throw fail(error, context)
        }
    }

    /// The next typed field with a non-null value, or `nil` at the end of the object. Unknown
    /// members and known names with a `null` value go to `state.unknown`; a repeated key throws.
    mutating func nextField<Field: PayloadField>(_ state: inout ObjectState<Field>, nullIsError: Bool = false) throws(JWSError) -> Field? {
        let table = Field.table
        guard let slot = try nextSlot(&state, table, nullIsError: nullIsError) else { return nil }
        return table.fields[slot]
    }

    /// ``nextField(_:nullIsError:)`` answering the field's slot in `table` (`Field.table`).
    mutating func nextSlot<Field: PayloadField>(
        _ state: inout ObjectState<Field>, _ table: PayloadFieldTable<Field>, nullIsError: Bool = false
    ) throws(JWSError) -> Int? {
        do throws(JSONError) {
            while let key = try json.nextKey(&state.container) {
                if let slot = table.slot(for: key) {
                    let bit: UInt64 = 1 << UInt64(slot)
                    guard state.seen & bit == 0 else { throw JSONReader.duplicate(key.string, at: key.offset) }
                    state.seen |= bit
                    if json.nextIsNull() {
                        if nullIsError {
                            throw JSONReader.error(.typeMismatch, at: json.position, "\"\(key.string)\" is null")
                        }
                        try json.readNull()
                        state.unknown.append((key.string, .null))
                        continue
                    }
                    return slot
                }
                let name = key.string
                if state.unknown.count < 16 {
                    if state.unknown.contains(where: { $0.0 == name }) { throw JSONReader.duplicate(name, at: key.offset) }
                } else {
                    if state.unknownNames.isEmpty { state.unknownNames = Set(state.unknown.map(\.0)) }
                    guard state.unknownNames.insert(name).inserted else { throw JSONReader.duplicate(name, at: key.offset) }
                }
                state.unknown.append((name, try json.readValue()))
            }
            return nil
        } catch {
            throw fail(error, "payload")
        }
    }

    mutating func string(_ field: some PayloadField) throws(JWSError) -> String {
        do {
            return try json.readString()
        } catch {
            throw fail(error, field.name)
        }
    }

    mutating func int64(_ field: some PayloadField) throws(JWSError) -> Int64 {
        do {
            return try json.readInt64()
        } catch {
            throw fail(error, field.name)
        }
    }

    mutating func int(_ field: some PayloadField) throws(JWSError) -> Int {
        let value = try int64(field)
        guard let int = Int(exactly: value) else {
            throw fail(JSONReader.error(.numberDoesNotFit, at: json.position, "does not fit in Int"), field.name)
        }
        return int
    }

    mutating func bool(_ field: some PayloadField) throws(JWSError) -> Bool {
        do {
            return try json.readBool()
        } catch {
            throw fail(error, field.name)
        }
    }

    mutating func date(_ field: some PayloadField) throws(JWSError) -> JWSDate {
        do throws(JSONError) {
            let range = try json.readNumberRange()
            let digits = UnsafeBufferPointer(rebasing: json.buffer[range])
            let text = String(decoding: digits, as: UTF8.self)
            // Integer milliseconds (every App Store date) convert exactly without strtod.
            if case .value(let ms) = JSONNumber.int64(digits), ms.magnitude <= 8_640_000_000_000_000 {
                return JWSDate(validatedText: text, value: Double(ms))
            }
            guard let value = JSONNumber.double(text), abs(value) <= JWSDate.maximumMagnitude else {
                throw JSONReader.error(.numberDoesNotFit, at: range.lowerBound, "\(text) is not a date in milliseconds since 1970")
            }
            return JWSDate(validatedText: text, value: value)
        } catch {
            throw fail(error, field.name)
        }
    }

    mutating func strings(_ field: some PayloadField) throws(JWSError) -> [String] {
        do {
            try json.expectType(UInt8(ascii: "["), "an array of strings")
            var state = try json.beginArray()
            var result: [String] = []
            while try json.nextElement(&state) { result.append(try json.readString()) }
            return result
        } catch {
            throw fail(error, field.name)
        }
    }

    mutating func array<T>(_ field: some PayloadField, _ element: (inout PayloadReader) throws(JWSError) -> T) throws(JWSError) -> [T] {
        var state: JSONReader.ContainerState
        do {
            try json.expectType(UInt8(ascii: "["), "an array")
            state = try json.beginArray()
        } catch {
            throw fail(error, field.name)
        }
        var result: [T] = []
        while true {
            let more: Bool
            do {
                more = try json.nextElement(&state)
            } catch {
                throw fail(error, field.name)
            }
            guard more else { return result }
            result.append(try element(&self))
        }
    }
}
