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
/// attributes nobody has asked for yet. Immutable once built.
final class ReceiptStorage: Sendable {
    /// One kept attribute, 16 bytes: its type, version and value position in `payload` (relative to
    /// the payload's first byte, not slice indices).
    struct RawAttribute: Sendable {
        let type: Int32
        let version: Int32
        let start: UInt32
        let end: UInt32
    }

    let payload: ArraySlice<UInt8>
    let unknown: [RawAttribute]

    init(payload: ArraySlice<UInt8>, unknown: [RawAttribute]) {
        self.payload = payload
        self.unknown = unknown
    }

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
}

/// The unknown attributes of a record, as a range of a shared ``ReceiptStorage`` (16 bytes, no copy).
/// While a receipt is being parsed the storage is not built yet (`storage == nil`, `count > 0`).
struct UnknownAttributes: Sendable {
    var storage: ReceiptStorage?
    var start: UInt32 = 0
    var count: UInt32 = 0

    static let none = UnknownAttributes()

    static func pending(_ range: Range<Int>) -> UnknownAttributes {
        UnknownAttributes(storage: nil, start: UInt32(truncatingIfNeeded: range.lowerBound), count: UInt32(truncatingIfNeeded: range.count))
    }

    static func explicit(_ attributes: [ReceiptAttribute]) -> UnknownAttributes {
        UnknownAttributes(storage: ReceiptStorage(attributes: attributes), start: 0, count: UInt32(truncatingIfNeeded: attributes.count))
    }

    var isPending: Bool { storage == nil && count > 0 }

    var list: [ReceiptAttribute] {
        guard let storage, count > 0 else { return [] }
        return storage.attributes(Int(start)..<Int(start + count))
    }
}
