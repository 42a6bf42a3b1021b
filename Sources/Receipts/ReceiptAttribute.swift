/// A receipt attribute kept as it was encoded: `SEQUENCE { type INTEGER, version INTEGER, value
/// OCTET STRING }`. Attributes whose type this library does not model are kept this way, never
/// dropped.
public struct ReceiptAttribute: Sendable, Hashable {
    /// The attribute type number (for example 6, 1710).
    public var type: Int
    /// The attribute version number.
    public var version: Int
    /// The content of the value OCTET STRING (usually a DER-encoded INTEGER or string).
    public var value: ArraySlice<UInt8>

    /// Creates an attribute.
    public init(type: Int, version: Int, value: ArraySlice<UInt8>) {
        self.type = type
        self.version = version
        self.value = value
    }

    /// Attributes are equal when type, version and value bytes are equal (wherever the value
    /// slices sit in their buffers).
    public static func == (lhs: ReceiptAttribute, rhs: ReceiptAttribute) -> Bool {
        lhs.type == rhs.type && lhs.version == rhs.version && lhs.value.elementsEqual(rhs.value)
    }

    /// Hashes type, version and every value byte, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(version)
        for byte in value { hasher.combine(byte) }
    }
}

/// Storage shared by the records of one parsed receipt: the payload bytes and the raw
/// attributes nobody has asked for yet.
///
/// `@unchecked Sendable` because of one write: the parser that creates the storage hands it the
/// list of raw attributes (``adopt(_:)``) when it finishes, before any receipt holding the storage
/// is returned; after that nothing changes, so every thread reads the same immutable value.
final class ReceiptStorage: @unchecked Sendable {
    /// One kept attribute, 16 bytes: its type, version and value position in `payload` (relative to
    /// the payload's first byte, not slice indices).
    struct RawAttribute: Sendable {
        let type: Int32
        let version: Int32
        let start: UInt32
        let end: UInt32
    }

    let payload: ArraySlice<UInt8>
    private(set) var unknown: [RawAttribute]

    init(payload: ArraySlice<UInt8>, unknown: [RawAttribute]) {
        self.payload = payload
        self.unknown = unknown
    }

    /// The parser's list of raw attributes, set once before the storage is shared.
    func adopt(_ list: [RawAttribute]) { unknown = list }

    /// Storage for attributes given in code (their values concatenated into a fresh payload).
    convenience init(attributes: [ReceiptAttribute]) {
        var bytes: [UInt8] = []
        var raw: [RawAttribute] = []
        for attribute in attributes {
            let start = UInt32(truncatingIfNeeded: bytes.count)
            bytes.append(contentsOf: attribute.value)
            raw.append(
                RawAttribute(
                    type: Int32(truncatingIfNeeded: attribute.type), version: Int32(truncatingIfNeeded: attribute.version),
                    start: start, end: UInt32(truncatingIfNeeded: bytes.count)))
        }
        self.init(payload: bytes[...], unknown: raw)
    }

    func attributes(_ range: Range<Int>) -> [ReceiptAttribute] {
        let base = payload.startIndex
        return unknown[range].map {
            ReceiptAttribute(
                type: Int($0.type), version: Int($0.version), value: payload[(base + Int($0.start))..<(base + Int($0.end))])
        }
    }

    /// Calls `body` with the type, version and value range (relative to the payload's first byte)
    /// of each unknown attribute of the in-app record whose SET content is `record` (relative
    /// too). The record decoder keeps a record this way only when every attribute in it is in the
    /// canonical shape `AppReceiptParser.fastAttribute` reads; it found at least one unknown
    /// attribute.
    func forEachUnknown(inRecord record: Range<Int>, _ body: (Int, Int, Range<Int>) -> Void) {
        payload.withUnsafeBytes { raw in
            var p = record.lowerBound
            while p < record.upperBound, let a = AppReceiptParser.fastAttribute(raw, at: p, end: record.upperBound) {
                p = a.value.upperBound
                if !AppReceiptParser.isModelledPurchaseAttribute(a.type) { body(a.type, a.version, a.value) }
            }
        }
    }

    /// The unknown attributes of a record kept as its byte range, as ``ReceiptAttribute`` values.
    func attributes(inRecord record: Range<Int>) -> [ReceiptAttribute] {
        var list: [ReceiptAttribute] = []
        let base = payload.startIndex
        forEachUnknown(inRecord: record) { type, version, value in
            list.append(
                ReceiptAttribute(type: type, version: version, value: payload[(base + value.lowerBound)..<(base + value.upperBound)]))
        }
        return list
    }
}

/// The unknown attributes of a record, 16 bytes, no copy: either a range of the raw attributes a
/// shared ``ReceiptStorage`` lists, or (for in-app records whose attributes all have the canonical
/// framing) the byte range of the record in the storage's payload, walked again when asked for.
struct UnknownAttributes: Sendable {
    var storage: ReceiptStorage?
    /// A list: the first raw attribute. A record: the offset of its SET content in the payload.
    var start: UInt32 = 0
    /// A list: how many raw attributes. A record: `recordFlag` and the end of its SET content.
    var count: UInt32 = 0

    static let none = UnknownAttributes()
    static let recordFlag: UInt32 = 1 << 31

    /// A range of the raw attributes `storage` lists (or will list once its parser finishes).
    static func list(_ storage: ReceiptStorage?, _ range: Range<Int>) -> UnknownAttributes {
        UnknownAttributes(
            storage: storage, start: UInt32(truncatingIfNeeded: range.lowerBound), count: UInt32(truncatingIfNeeded: range.count))
    }

    static func explicit(_ attributes: [ReceiptAttribute]) -> UnknownAttributes {
        UnknownAttributes(storage: ReceiptStorage(attributes: attributes), start: 0, count: UInt32(truncatingIfNeeded: attributes.count))
    }

    /// The unknown attributes of the canonically framed record whose SET content is `record` in the payload
    /// of `storage` (which must end below 2 GiB).
    @inline(__always)
    static func record(_ storage: ReceiptStorage, _ record: Range<Int>) -> UnknownAttributes {
        UnknownAttributes(
            storage: storage, start: UInt32(truncatingIfNeeded: record.lowerBound),
            count: recordFlag | UInt32(truncatingIfNeeded: record.upperBound))
    }

    var isEmpty: Bool { count == 0 }
    var isRecord: Bool { count & UnknownAttributes.recordFlag != 0 }
    var recordRange: Range<Int> { Int(start)..<Int(count & ~UnknownAttributes.recordFlag) }

    var list: [ReceiptAttribute] {
        guard let storage, count > 0 else { return [] }
        if isRecord { return storage.attributes(inRecord: recordRange) }
        return storage.attributes(Int(start)..<Int(start + count))
    }

    /// How many attributes there are and how many value bytes they hold together.
    var sizes: (count: Int, valueBytes: Int) {
        guard let storage, count > 0 else { return (0, 0) }
        if isRecord {
            let record = recordRange
            return storage.payload.withUnsafeBytes { raw in
                var attributes = 0
                var bytes = 0
                var p = record.lowerBound
                while p < record.upperBound, let a = AppReceiptParser.fastAttribute(raw, at: p, end: record.upperBound) {
                    p = a.value.upperBound
                    if !AppReceiptParser.isModelledPurchaseAttribute(a.type) {
                        attributes &+= 1
                        bytes &+= a.value.count
                    }
                }
                return (attributes, bytes)
            }
        }
        var bytes = 0
        for raw in storage.unknown[Int(start)..<Int(start + count)] { bytes &+= Int(raw.end) &- Int(raw.start) }
        return (Int(count), bytes)
    }

    /// Calls `body` with each attribute's type, version and value bytes, in order, without
    /// building ``ReceiptAttribute`` values.
    func visit(_ body: (Int, Int, ArraySlice<UInt8>) -> Void) {
        guard let storage, count > 0 else { return }
        let payload = storage.payload
        let base = payload.startIndex
        if isRecord {
            storage.forEachUnknown(inRecord: recordRange) { type, version, value in
                body(type, version, payload[(base + value.lowerBound)..<(base + value.upperBound)])
            }
        } else {
            for raw in storage.unknown[Int(start)..<Int(start + count)] {
                body(Int(raw.type), Int(raw.version), payload[(base + Int(raw.start))..<(base + Int(raw.end))])
            }
        }
    }
}
