#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small cache of recently created Strings keyed by their UTF-8 bytes (compared exactly), so a
/// receipt's repeated identifiers (a product id in every record of a subscription, the original
/// transaction id of every renewal) share one String instead of allocating one per record.
///
/// A direct-mapped table of 64 slots indexed by a cheap hash of the length and the first and last
/// eight bytes; a slot hit is confirmed with `memcmp`, a miss replaces the slot.
struct StringInterner {
    private var slots: [Slot?] = Array(repeating: nil, count: 64)

    private struct Slot {
        let bytes: [UInt8]
        let string: String
    }

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
        let index = StringInterner.slot(for: bytes)
        if let slot = slots[index], slot.bytes.count == bytes.count {
            let equal = slot.bytes.withUnsafeBytes { stored in
                guard let a = stored.baseAddress, let b = bytes.baseAddress else { return bytes.isEmpty }
                return memcmp(a, b, bytes.count) == 0
            }
            if equal { return slot.string }
        }
        let string = String(decoding: bytes, as: UTF8.self)
        slots[index] = Slot(bytes: Array(bytes), string: string)
        return string
    }
}
