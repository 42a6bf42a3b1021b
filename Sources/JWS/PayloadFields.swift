import JSON

/// How ``PayloadReader/fields(_:_:)`` reads a typed field's value.
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
    /// An object, read as `type` (errors name the field as the object's context).
    case object(any PayloadObject.Type)
    /// An array of objects, each read as `type`.
    case objects(any PayloadObject.Type)
}

/// A payload model's field that says how its value is read, so that one loop reads every model.
protocol TypedPayloadField: PayloadField {
    /// How the value is read.
    var kind: PayloadFieldKind { get }
}

/// One typed value read by ``PayloadReader/fields(_:_:)``.
enum PayloadFieldValue: Sendable {
    case absent
    case string(String)
    case int64(Int64)
    case int(Int)
    case bool(Bool)
    case date(JWSDate)
    case strings([String])
    /// An object or an array of objects, at this index of ``PayloadFields``' objects (kept apart
    /// so that the other values copy without existential containers).
    case objects(Int)
}

/// The values of one object's fields, one slot a field, allocated once per decoded object. A
/// class of its own (not an `Array`) so that allocating it needs no generic metadata at run time.
final class PayloadFieldStorage: ManagedBuffer<Int, PayloadFieldValue> {
    /// `count` absent values.
    static func make(count: Int) -> PayloadFieldStorage {
        let buffer = create(minimumCapacity: count) { _ in count }
        buffer.withUnsafeMutablePointerToElements { $0.initialize(repeating: .absent, count: count) }
        return unsafeDowncast(buffer, to: PayloadFieldStorage.self)
    }

    /// The value of slot `index`; absent for an index outside the slots.
    func value(_ index: Int) -> PayloadFieldValue {
        withUnsafeMutablePointers { count, values in index >= 0 && index < count.pointee ? values[index] : .absent }
    }

    /// Whether slot `index` holds a value (read in place, nothing copied).
    func isPresent(_ index: Int) -> Bool {
        withUnsafeMutablePointers { count, values in
            guard index >= 0 && index < count.pointee else { return false }
            if case .absent = values[index] { return false }
            return true
        }
    }

    /// Replaces slot `index` (an index outside the slots changes nothing).
    func set(_ index: Int, _ value: consuming PayloadFieldValue) {
        withUnsafeMutablePointers { count, values in
            if index >= 0 && index < count.pointee { values[index] = value }
        }
    }

    /// A storage holding the same values.
    func copy() -> PayloadFieldStorage {
        let count = header
        let copy = PayloadFieldStorage.make(count: count)
        for index in 0..<count { copy.set(index, value(index)) }
        return copy
    }

    deinit {
        _ = withUnsafeMutablePointers { count, values in values.deinitialize(count: count.pointee) }
    }
}

/// The typed fields of one JSON object, read by ``PayloadReader/fields(_:_:)``: typed
/// accessors (`nil` when the member is absent or `null`), and the members kept untyped.
struct PayloadFields<Field: TypedPayloadField>: @unchecked Sendable {
    // @unchecked: `values` (a class, not Sendable) changes only in `set`, and only when uniquely
    // referenced (copied first otherwise), so a value shared across threads is never written.

    /// The values by field slot (``PayloadFieldTable/slot(of:)``), one for each field.
    private var values: PayloadFieldStorage
    /// The values of object fields (one element) and array-of-objects fields.
    private var objectValues: [[any PayloadObject]] = []
    /// Unknown members and known ones whose value is `null`, in document order.
    var unknown: [(String, JSONValue)] = []
    /// A bit per slot whose member the JSON object has, `null` or not (the decoding's
    /// ``ObjectState/seen``; slots are below 64: ``PayloadFieldTable``).
    var memberBits: UInt64 = 0

    /// No field read yet.
    init(_ table: PayloadFieldTable<Field> = Field.table) {
        values = PayloadFieldStorage.make(count: table.fields.count)
    }

    /// Sets the field at `slot`.
    mutating func set(slot: Int, _ value: consuming PayloadFieldValue) {
        if !isKnownUniquelyReferenced(&values) { values = values.copy() }
        values.set(slot, value)
    }

    /// Sets the field at `slot` to objects.
    mutating func set(slot: Int, objects: [any PayloadObject]) {
        objectValues.append(objects)
        set(slot: slot, .objects(objectValues.count - 1))
    }

    private func objects(at field: Field) -> [any PayloadObject]? {
        objects(atSlot: Field.table.slot(of: field))
    }

    private func objects(atSlot slot: Int) -> [any PayloadObject]? {
        guard case .objects(let index) = values.value(slot), objectValues.indices.contains(index) else { return nil }
        return objectValues[index]
    }

    private func value(_ field: Field) -> PayloadFieldValue {
        values.value(Field.table.slot(of: field))
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

    /// An object field (`nil` also if it were read as another type, which ``TypedPayloadField/kind``
    /// rules out).
    func object<T: PayloadObject>(_ field: Field) -> T? {
        objects(at: field)?.first as? T
    }

    /// An array-of-objects field.
    func objects<T: PayloadObject>(_ field: Field) -> [T]? {
        objects(at: field)?.compactMap { $0 as? T }
    }

    /// A JWS nested as a string, kept as its token text.
    func nested<T: JWSPayload>(_ field: Field) -> NestedJWS<T>? {
        string(field).map(NestedJWS.init(token:))
    }

    /// Calls `body` with the name of each field present, in field order, then of each member in
    /// ``unknown``.
    func forEachMemberName(_ body: (String) -> Void) {
        for (slot, field) in Field.table.fields.enumerated() where values.isPresent(slot) { body(field.name) }
        for (name, _) in unknown { body(name) }
    }

    /// Whether the typed members (``memberBits``) and the members in ``unknown`` fit the kind at `index` of
    /// `AppStorePayloadKind.walkTables` (``DecodedMemberNames/fitsKind(at:)``): the typed fields by
    /// the table's masks, the others by name.
    func fitsKind(at index: Int) -> Bool {
        let masks = Field.table.kindMasks[index]
        let tables = AppStorePayloadKind.walkTables[index]
        var fits = memberBits & masks.foreign == 0
        var carriesRequired = tables.required.isEmpty || memberBits & masks.required != 0
        for (name, _) in unknown {
            if fits, tables.foreign.contains(name) { fits = false }
            if !carriesRequired, tables.required.contains(name) { carriesRequired = true }
        }
        return fits && carriesRequired
    }

    /// The object as JSON: the fields present, in field order under Apple's names and with their
    /// JSON types (dates as their exact number text), then ``unknown``.
    func jsonValue() -> JSONValue {
        var members: [(String, JSONValue)] = []
        for (slot, field) in Field.table.fields.enumerated() {
            let json: JSONValue
            switch values.value(slot) {
            case .absent: continue
            case .string(let value): json = .string(value)
            case .int64(let value): json = .number(String(value))
            case .int(let value): json = .number(String(value))
            case .bool(let value): json = .bool(value)
            case .date(let value): json = .number(value.text)
            case .strings(let value): json = .array(value.map { .string($0) })
            case .objects:
                let values = objects(atSlot: slot) ?? []
                if case .object = field.kind {
                    guard let value = values.first else { continue }
                    json = value.jsonValue()
                } else {
                    json = .array(values.map { $0.jsonValue() })
                }
            }
            members.append((field.name, json))
        }
        return .object(members + unknown)
    }
}

extension PayloadReader {
    /// Reads an object whose typed fields are read by their ``TypedPayloadField/kind``, in
    /// document order, with the errors of the single-value readers (``string(_:)`` and so on)
    /// naming the field. Unknown members, `null` values and repeated keys are handled as
    /// ``nextField(_:nullIsError:)`` does.
    mutating func fields<Field: TypedPayloadField>(_ context: String, _: Field.Type) throws(JWSError) -> PayloadFields<Field> {
        let table = Field.table
        var state = try beginObject(context, Field.self)
        var fields = PayloadFields<Field>(table)
        while let slot = try nextSlot(&state, table) {
            let field = table.fields[slot]
            switch field.kind {
            case .string: fields.set(slot: slot, .string(try string(field)))
            case .int64: fields.set(slot: slot, .int64(try int64(field)))
            case .int: fields.set(slot: slot, .int(try int(field)))
            case .bool: fields.set(slot: slot, .bool(try bool(field)))
            case .date: fields.set(slot: slot, .date(try date(field)))
            case .strings: fields.set(slot: slot, .strings(try strings(field)))
            case .object(let type): fields.set(slot: slot, objects: [try type.init(reading: &self, context: field.name)])
            case .objects(let type):
                let values = try array(field) { (element) throws(JWSError) in try type.init(reading: &element, context: field.name) }
                fields.set(slot: slot, objects: values)
            }
        }
        fields.unknown = state.unknown
        fields.memberBits = state.seen
        return fields
    }
}

/// A JSON object inside a payload that is a model of its own (``AdvancedCommerceInfo``,
/// ``NotificationData``, …).
protocol PayloadObject: Sendable {
    /// Reads the object at the reader's position; errors name `context`.
    init(reading reader: inout PayloadReader, context: String) throws(JWSError)
    /// The object as JSON.
    func jsonValue() -> JSONValue
}

/// A model whose typed fields are all kept in a ``PayloadFields``: equality,
/// ``JWSPayloadModel/unknownFields`` and ``JWSPayloadModel/jsonValue()`` are written once here.
protocol FieldsModel: JWSPayloadModel, Equatable {
    associatedtype Field: TypedPayloadField
    /// The typed fields as read; the model's typed properties read them.
    var fields: PayloadFields<Field> { get }
}

extension FieldsModel {
    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.fields.jsonValue() == rhs.fields.jsonValue() }

    /// The members kept untyped (``PayloadFields/unknown``).
    public var unknownFields: [(String, JSONValue)] { fields.unknown }

    /// The fields as JSON (``PayloadFields/jsonValue()``).
    public func jsonValue() -> JSONValue { fields.jsonValue() }
}

/// A signed payload model (``JWSTransaction``, ``NotificationPayload``, …) kept as its exact JSON
/// text and its fields (its stored properties, in that order); decoding is written once here.
protocol FieldsPayload: FieldsModel, JWSPayload, DecodedMemberNames {
    /// The memberwise initialiser.
    init(jsonPayload: [UInt8], fields: PayloadFields<Field>)
}

extension FieldsPayload {
    /// The members' names as the decoding read them (``PayloadFields/forEachMemberName(_:)``).
    package func forEachDecodedMemberName(_ body: (String) -> Void) { fields.forEachMemberName(body) }

    /// By the field table's masks (``PayloadFields/fitsKind(at:)``).
    package func fitsKind(at index: Int) -> Bool { fields.fitsKind(at: index) }

    /// Decodes the JSON payload; verifies nothing.
    public init(jsonPayload: [UInt8], limits: JWSLimits) throws(JWSError) {
        self = try PayloadReader.decode(jsonPayload, limits: limits) { (reader) throws(JWSError) in
            Self(jsonPayload: jsonPayload, fields: try reader.fields("payload", Field.self))
        }
    }
}

/// An object model inside a payload (``AdvancedCommerceInfo``, ``NotificationData``, …) kept as
/// its fields (its one stored property); reading it is written once here.
protocol FieldsObject: FieldsModel, PayloadObject, JWSPayloadObject {
    /// The memberwise initialiser.
    init(fields: PayloadFields<Field>)
}

extension FieldsObject {
    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        self.init(fields: try reader.fields(context, Field.self))
    }

    /// Decodes the object from JSON text on its own; errors name the type as their context.
    public init(json: [UInt8], limits: JWSLimits) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try Self(reading: &reader, context: String(describing: Self.self))
        }
    }
}
