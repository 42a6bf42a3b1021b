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

    public static func == (lhs: ReceiptAttribute, rhs: ReceiptAttribute) -> Bool {
        lhs.type == rhs.type && lhs.version == rhs.version && lhs.value.elementsEqual(rhs.value)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(version)
        for byte in value { hasher.combine(byte) }
    }
}

/// Storage shared by the records of one parsed receipt: the payload bytes and the raw
/// attributes nobody has asked for yet. Immutable once built.
final class ReceiptStorage: Sendable {
    struct RawAttribute: Sendable {
        let type: Int
        let version: Int
        /// Positions relative to the start of `payload` (not slice indices).
        let value: Range<Int>
    }

    let payload: ArraySlice<UInt8>
    let unknown: [RawAttribute]

    init(payload: ArraySlice<UInt8>, unknown: [RawAttribute]) {
        self.payload = payload
        self.unknown = unknown
    }

    func attributes(_ range: Range<Int>) -> [ReceiptAttribute] {
        let base = payload.startIndex
        return unknown[range].map {
            ReceiptAttribute(type: $0.type, version: $0.version, value: payload[(base + $0.value.lowerBound)..<(base + $0.value.upperBound)])
        }
    }
}

/// Unknown attributes of a record: either a range into the parsed receipt's storage (no copy) or
/// an explicit list set by the caller.
enum UnknownAttributes: Sendable {
    case none
    case pending(Range<Int>)
    case stored(ReceiptStorage, Range<Int>)
    case explicit([ReceiptAttribute])

    var list: [ReceiptAttribute] {
        switch self {
        case .none, .pending: []
        case .stored(let storage, let range): storage.attributes(range)
        case .explicit(let list): list
        }
    }

    var isEmpty: Bool {
        switch self {
        case .none: true
        case .pending(let range), .stored(_, let range): range.isEmpty
        case .explicit(let list): list.isEmpty
        }
    }
}
