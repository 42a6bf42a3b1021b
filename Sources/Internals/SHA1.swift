/// SHA-1 (FIPS 180-4), written here so the device-hash check works without OpenSSL (the store
/// layer and apps that only parse receipts do not link it). Used only for the receipt's own
/// SHA-1 binding (attribute 5), never for signatures.
package struct SHA1: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    package init() { buffer.reserveCapacity(64) }

    /// SHA-1 of the concatenation of `parts`.
    package static func hash(_ parts: [UInt8]...) -> [UInt8] {
        var sha = SHA1()
        for part in parts { sha.update(part) }
        return sha.finalize()
    }

    package mutating func update(_ bytes: some Collection<UInt8>) {
        for byte in bytes {
            buffer.append(byte)
            if buffer.count == 64 {
                compress(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        length &+= UInt64(bytes.count)
    }

    package mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var tail = buffer
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        var offset = 0
        while offset < tail.count {
            compress(tail[offset..<offset + 64])
            offset += 64
        }
        var digest: [UInt8] = []
        for word in [state.0, state.1, state.2, state.3, state.4] {
            for shift in stride(from: 24, through: 0, by: -8) { digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return digest
    }

    private mutating func compress(_ block: some Collection<UInt8>) {
        var w = [UInt32](repeating: 0, count: 80)
        var i = 0
        var iterator = block.makeIterator()
        while i < 16 {
            var word: UInt32 = 0
            for _ in 0..<4 { word = word << 8 | UInt32(iterator.next() ?? 0) }
            w[i] = word
            i += 1
        }
        while i < 80 {
            let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
            w[i] = x << 1 | x >> 31
            i += 1
        }
        var (a, b, c, d, e) = state
        for t in 0..<80 {
            let f: UInt32
            let k: UInt32
            switch t {
            case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
            case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
            case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
            default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
            }
            let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[t]
            e = d
            d = c
            c = b << 30 | b >> 2
            b = a
            a = temp
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
    }
}
