// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), written here because the RMStore module must
// not link OpenSSL. Used for the integrity tag of SecureTransactionPersistor and for the digests a
// notification store checks on every compact row it reads, so whole blocks are compressed straight
// from the caller's bytes (no per-byte copying). Known-answer tests:
// Tests/RMStoreTests/CryptoKnownAnswerTests.swift and Tests/InternalsTests.

/// An incremental SHA-256 hash.
package struct SHA256: Sendable {
    /// Digest size in bytes.
    package static let digestCount = 32
    /// Block size in bytes.
    package static let blockCount = 64

    // FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the
    // first 64 primes.
    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    // FIPS 180-4 §5.3.3: the first 32 bits of the fractional parts of the square roots of the
    // first 8 primes.
    private var h: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    /// The bytes of an unfinished block (fewer than ``blockCount``).
    private var pending: [UInt8] = []
    private var messageLength: UInt64 = 0

    /// Starts a new hash.
    package init() {
        pending.reserveCapacity(Self.blockCount)
    }

    /// Adds bytes to the message (contiguous bytes are read where they lie, in whole blocks).
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in update(UnsafeRawBufferPointer(buffer)) }
        if done == nil { update(Array(bytes)) }
    }

    /// Adds bytes to the message: whole blocks are compressed where they lie.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        messageLength &+= UInt64(bytes.count)
        var offset = 0
        if !pending.isEmpty {
            let taken = min(Self.blockCount - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<taken])
            offset = taken
            guard pending.count == Self.blockCount else { return }
            pending.withUnsafeBytes { compress($0, at: 0) }
            pending.removeAll(keepingCapacity: true)
        }
        while bytes.count - offset >= Self.blockCount {
            compress(bytes, at: offset)
            offset += Self.blockCount
        }
        if offset < bytes.count { pending.append(contentsOf: bytes[offset...]) }
    }

    /// Pads the message and returns the 32-byte digest.
    package mutating func finalize() -> [UInt8] {
        let bitLength = messageLength &* 8
        // §5.1.1: a 1 bit, zeros up to 56 mod 64 bytes, then the length in bits, big-endian.
        var tail: [UInt8] = [0x80]
        while (pending.count + tail.count) % Self.blockCount != 56 {
            tail.append(0)
        }
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        let saved = messageLength
        update(tail)
        messageLength = saved
        var digest: [UInt8] = []
        digest.reserveCapacity(Self.digestCount)
        for word in h {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    /// The digest of `bytes`.
    package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Compresses the 64-byte block of `buffer` at `offset` (the caller checked that it is whole).
    private mutating func compress(_ buffer: UnsafeRawBufferPointer, at offset: Int) {
        // §6.2.2: message schedule, then 64 rounds.
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for t in 0..<16 {
                let i = offset + t * 4
                w[t] = UInt32(buffer[i]) << 24 | UInt32(buffer[i + 1]) << 16 | UInt32(buffer[i + 2]) << 8 | UInt32(buffer[i + 3])
            }
            for t in 16..<64 {
                let s0 = Self.rotateRight(w[t - 15], 7) ^ Self.rotateRight(w[t - 15], 18) ^ (w[t - 15] >> 3)
                let s1 = Self.rotateRight(w[t - 2], 17) ^ Self.rotateRight(w[t - 2], 19) ^ (w[t - 2] >> 10)
                w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
            }
            Self.k.withUnsafeBufferPointer { k in
                h.withUnsafeMutableBufferPointer { h in
                    var a = h[0]
                    var b = h[1]
                    var c = h[2]
                    var d = h[3]
                    var e = h[4]
                    var f = h[5]
                    var g = h[6]
                    var hh = h[7]
                    for t in 0..<64 {
                        let sigma1 = Self.rotateRight(e, 6) ^ Self.rotateRight(e, 11) ^ Self.rotateRight(e, 25)
                        let choose = (e & f) ^ (~e & g)
                        let t1 = hh &+ sigma1 &+ choose &+ k[t] &+ w[t]
                        let sigma0 = Self.rotateRight(a, 2) ^ Self.rotateRight(a, 13) ^ Self.rotateRight(a, 22)
                        let majority = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = sigma0 &+ majority
                        hh = g
                        g = f
                        f = e
                        e = d &+ t1
                        d = c
                        c = b
                        b = a
                        a = t1 &+ t2
                    }
                    h[0] = h[0] &+ a
                    h[1] = h[1] &+ b
                    h[2] = h[2] &+ c
                    h[3] = h[3] &+ d
                    h[4] = h[4] &+ e
                    h[5] = h[5] &+ f
                    h[6] = h[6] &+ g
                    h[7] = h[7] &+ hh
                }
            }
        }
    }

    @inline(__always)
    private static func rotateRight(_ x: UInt32, _ n: UInt32) -> UInt32 {
        (x >> n) | (x << (32 - n))
    }
}

/// HMAC-SHA256 (RFC 2104, test vectors in RFC 4231).
package enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    package static func authenticationCode(for message: some Sequence<UInt8>, key: some Sequence<UInt8>) -> [UInt8] {
        var keyBlock = Array(key)
        if keyBlock.count > SHA256.blockCount {
            keyBlock = SHA256.hash(keyBlock)
        }
        keyBlock += [UInt8](repeating: 0, count: SHA256.blockCount - keyBlock.count)
        var inner = SHA256()
        inner.update(keyBlock.map { $0 ^ 0x36 })
        inner.update(message)
        let innerDigest = inner.finalize()
        var outer = SHA256()
        outer.update(keyBlock.map { $0 ^ 0x5c })
        outer.update(innerDigest)
        return outer.finalize()
    }

    /// Compares two codes in time that depends only on their length.
    package static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices {
            difference |= lhs[index] ^ rhs[index]
        }
        return difference == 0
    }
}
