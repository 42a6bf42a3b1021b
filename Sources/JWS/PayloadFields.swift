import JSON

/// How ``PayloadReader/fields(_:_:custom:)`` reads a typed field's value.
enum PayloadFieldKind {
    /// A JSON string (also raw-value enumerations and nested tokens).
    case string
    /// A JSON integer that fits in `Int64` (also integer-coded enumerations).
    case int64
    /// A JSON integer that fits in `Int`.
    case int
    /// `true` or `false`.
    case bool
    /// Milliseconds since 1970, kept as their number text (``JWSDate``).
    case date
    /// An array of strings.
    case strings
    /// Anything else (an object, an array of objects): the model reads it itself.
    case custom
}

/// A payload model's field that says how its value is read, so that one loop reads every model.
protocol TypedPayloadField: PayloadField {
    /// How the value is read.
    var kind: PayloadFieldKind { get }
}

/// One typed value read by ``PayloadReader/fields(_:_:custom:)``.
enum PayloadFieldValue: Sendable {
    case absent
    case string(String)
    case int64(Int64)
    case int(Int)
    case bool(Bool)
    case date(JWSDate)
    case strings([String])
}

/// The typed fields of one JSON object, read by ``PayloadReader/fields(_:_:custom:)``: typed
/// accessors (`nil` when the member is absent or `null`), and the members kept untyped.
struct PayloadFields<Field: TypedPayloadField>: Sendable {
    /// The values by field raw value; shorter than the field list when the last fields are absent.
    private var values: [PayloadFieldValue] = []
    /// Unknown members and known ones whose value is `null`, in document order.
    var unknown: [(String, JSONValue)] = []

    mutating func set(_ field: Field, _ value: PayloadFieldValue) {
        let index = field.rawValue
        if values.isEmpty { values.reserveCapacity(16) }
        while values.count <= index { values.append(.absent) }
        values[index] = value
    }

    private func value(_ field: Field) -> PayloadFieldValue {
        let index = field.rawValue
        return values.indices.contains(index) ? values[index] : .absent
    }

    func string(_ field: Field) -> String? {
        if case .string(let value) = value(field) { return value }
        return nil
    }

    /// A string-valued App Store enumeration.
    func raw<R: RawRepresentable<String>>(_ field: Field) -> R? {
        string(field).flatMap(R.init(rawValue:))
    }

    func int64(_ field: Field) -> Int64? {
        if case .int64(let value) = value(field) { return value }
        return nil
    }

    /// An integer-coded App Store enumeration.
    func code<R: RawRepresentable<Int64>>(_ field: Field) -> R? {
        int64(field).flatMap(R.init(rawValue:))
    }

    func int(_ field: Field) -> Int? {
        if case .int(let value) = value(field) { return value }
        return nil
    }

    func bool(_ field: Field) -> Bool? {
        if case .bool(let value) = value(field) { return value }
        return nil
    }

    func date(_ field: Field) -> JWSDate? {
        if case .date(let value) = value(field) { return value }
        return nil
    }

    func strings(_ field: Field) -> [String]? {
        if case .strings(let value) = value(field) { return value }
        return nil
    }

    /// A JWS nested as a string, kept as its token text.
    func nested<T: JWSPayload>(_ field: Field) -> NestedJWS<T>? {
        string(field).map(NestedJWS.init(token:))
    }

    /// The object as JSON: the fields present, in field order under Apple's names and with their
    /// JSON types (dates as their exact number text), `custom` giving each `.custom` field's value
    /// (`nil`: absent), then ``unknown``.
    func jsonValue(custom: (Field) -> JSONValue? = { _ in nil }) -> JSONValue {
        var members: [(String, JSONValue)] = []
        var rawValue = 0
        while let field = Field(rawValue: rawValue) {
            rawValue += 1
            let json: JSONValue?
            switch value(field) {
            case .absent: json = field.kind == .custom ? custom(field) : nil
            case .string(let value): json = .string(value)
            case .int64(let value): json = .number(String(value))
            case .int(let value): json = .number(String(value))
            case .bool(let value): json = .bool(value)
            case .date(let value): json = .number(value.text)
            case .strings(let value): json = .array(value.map { .string($0) })
            }
            if let json { members.append((field.name, json)) }
        }
        return .object(members + unknown)
    }
}

extension PayloadReader {
    /// Reads an object whose typed fields are read by their ``TypedPayloadField/kind``, in
    /// document order, with the errors of the single-value readers (``string(_:)`` and so on)
    /// naming the field; `custom` reads the value of each field of kind `.custom`. Unknown
    /// members, `null` values and repeated keys are handled as ``nextField(_:nullIsError:)`` does.
    mutating func fields<Field: TypedPayloadField>(
        _ context: String,
        _: Field.Type,
        custom: (Field, inout PayloadReader) throws(JWSError) -> Void = { _, _ in }
    ) throws(JWSError) -> PayloadFields<Field> {
        var state = try beginObject(context, Field.self)
        var fields = PayloadFields<Field>()
        while let field = try nextField(&state) {
            switch field.kind {
            case .string: fields.set(field, .string(try string(field)))
            case .int64: fields.set(field, .int64(try int64(field)))
            case .int: fields.set(field, .int(try int(field)))
            case .bool: fields.set(field, .bool(try bool(field)))
            case .date: fields.set(field, .date(try date(field)))
            case .strings: fields.set(field, .strings(try strings(field)))
            case .custom: try custom(field, &self)
            }
        }
        fields.unknown = state.unknown
        return fields
    }
}
