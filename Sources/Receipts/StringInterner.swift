#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small cache of recently created Strings keyed by their UTF-8 bytes (compared exactly), so a
/// receipt's repeated product identifiers share one String instead of allocating one per record.
///
/// The first identifier is kept on its own; a direct-mapped table of 64 Strings is made when a
/// second one appears (so a receipt of one product allocates no table), indexed by a cheap hash of the length and the first and last eight bytes; a slot hit
/// is confirmed with `memcmp` against the String's own bytes, a miss replaces the slot.
struct StringInterner {
    private var slots: [String] = []

    @inline(__always)
    private static func slot(for bytes: UnsafeRawBufferPointer) -> Int {
        let count = bytes.count
        var h = UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
        if count >= 8 {
            h ^= bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
            h = (h ^ (h >> 29)) &* 0xBF58_476D_1CE4_E5B9
            h ^= bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else {
            for byte in bytes { h = (h ^ UInt64(byte)) &* 0x100_0000_01B3 }
        }
        h = (h ^ (h >> 32)) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: h >> 58)
    }

    /// The first identifier seen: most small receipts hold one product, and then no table is made.
    private var first: String?

    mutating func string(for bytes: UnsafeRawBufferPointer) -> String {
        if slots.isEmpty {
            guard let first else {
                let string = String(decoding: bytes, as: UTF8.self)
                self.first = string
                return string
            }
            if StringInterner.equal(first, bytes) { return first }
            slots = Array(repeating: "", count: 64)
            var text = first
            slots[text.withUTF8 { StringInterner.slot(for: UnsafeRawBufferPointer($0)) }] = first
        }
        let index = StringInterner.slot(for: bytes)
        let equal = slots.withUnsafeBufferPointer { StringInterner.equal($0[index], bytes) }
        if equal { return slots[index] }
        let string = String(decoding: bytes, as: UTF8.self)
        slots[index] = string
        return string
    }

    /// Whether `string`'s UTF-8 is exactly `bytes` (false for the empty string, so an empty slot
    /// never matches).
    @inline(__always)
    private static func equal(_ string: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        string.utf8.withContiguousStorageIfAvailable { stored in
            guard stored.count == bytes.count, let a = stored.baseAddress, let b = bytes.baseAddress else { return false }
            return memcmp(a, b, bytes.count) == 0
        } ?? false
    }
}
