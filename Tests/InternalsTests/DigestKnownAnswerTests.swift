// Known-answer tests for the hand-written SHA-1 and SHA-256 (FIPS 180-4 examples) and HMAC-SHA256
// (RFC 4231 test cases 1-7) in Internals.

import Internals
import Testing

func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

@Suite("SHA-256 and HMAC-SHA256 known answers")
struct CryptoKnownAnswerTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func sha256_fips180_4(message: String, digest: String) {
        #expect(hex(SHA256.hash(Array(message.utf8))) == digest)
    }

    @Test func sha256_oneMillionA_incrementally() {
        var hasher = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(chunk) }
        #expect(hex(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Any split of a message into parts (empty ones, parts shorter and longer than a block, slices,
    /// a sequence with no contiguous storage) gives the digest of the whole.
    @Test func sha256_anySplitGivesTheSameDigest() {
        var generator = SplitMix64(seed: 7)
        let message = (0..<1_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let whole = SHA256.hash(message)
        for _ in 0..<50 {
            var hasher = SHA256()
            var offset = 0
            while offset < message.count {
                let length = min(Int.random(in: 0...150, using: &generator), message.count - offset)
                switch length % 3 {
                case 0: hasher.update(message[offset..<offset + length])
                case 1: hasher.update(Array(message[offset..<offset + length]))
                default: hasher.update(message[offset..<offset + length].lazy.map { $0 })
                }
                offset += length
            }
            #expect(hasher.finalize() == whole)
        }
    }

    /// Messages whose padding crosses a block boundary (55, 56, 64 bytes).
    @Test func sha256_paddingBoundaries() {
        #expect(hex(SHA256.hash([UInt8](repeating: 0x61, count: 55))) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(hex(SHA256.hash([UInt8](repeating: 0x61, count: 56))) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(hex(SHA256.hash([UInt8](repeating: 0x61, count: 64))) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }

    static let rfc4231: [(key: [UInt8], data: [UInt8], mac: String)] = [
        (
            [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        (
            [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        (
            Array(1...25), [UInt8](repeating: 0xcd, count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        // Test case 5: only the first 128 bits are specified.
        (
            [UInt8](repeating: 0x0c, count: 20), Array("Test With Truncation".utf8),
            "a3b6167473100ee06e0c796c2955552b"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131),
            Array(
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                    .utf8),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        ),
    ]

    @Test(arguments: 0..<7)
    func hmacSHA256_rfc4231(testCase: Int) {
        let vector = Self.rfc4231[testCase]
        let mac = hex(HMACSHA256.authenticationCode(for: vector.data, key: vector.key))
        #expect(mac.hasPrefix(vector.mac))
        #expect(mac.count == 64)
    }

    @Test func constantTimeEqual_comparesContentAndLength() {
        #expect(HMACSHA256.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!HMACSHA256.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!HMACSHA256.constantTimeEqual([1, 2, 3], [1, 2]))
    }
}

@Suite("SHA-1 known answers")
struct SHA1KnownAnswerTests {
    @Test(arguments: [
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
    ])
    func fips180Examples(message: String, digest: String) {
        #expect(hex(SHA1.hash(Array(message.utf8))) == digest)
    }

    @Test func aMillionAs_inUnevenParts() {
        var sha = SHA1()
        var left = 1_000_000
        var part = 1
        while left > 0 {
            let n = min(part, left)
            sha.update([UInt8](repeating: UInt8(ascii: "a"), count: n))
            left -= n
            part = part * 3 + 1
        }
        #expect(hex(sha.finalize()) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }
}
