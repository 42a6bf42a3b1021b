#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small cache of recently created Strings keyed by their UTF-8 bytes (compared exactly), so a
/// receipt's repeated product identifiers share one String instead of allocating one per record.
///
/// A direct-mapped table of 64 Strings (made on first use, so a receipt without records pays
/// nothing) indexed by a cheap hash of the length and the first and last eight bytes; a slot hit
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

    mutating func string(for bytes: UnsafeRawBufferPointer) -> String {
        if slots.isEmpty { slots = Array(repeating: "", count: 64) }
        let index = StringInterner.slot(for: bytes)
        let equal = slots.withUnsafeBufferPointer { table in
            table[index].utf8.withContiguousStorageIfAvailable { stored in
                guard stored.count == bytes.count else { return false }
                guard let a = stored.baseAddress, let b = bytes.baseAddress else { return true }
                return memcmp(a, b, bytes.count) == 0
            }
        }
        if equal == true, !bytes.isEmpty { return slots[index] }
        let string = String(decoding: bytes, as: UTF8.self)
        slots[index] = string
        return string
    }
}
