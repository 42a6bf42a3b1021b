import ASN1
import ReceiptCrypto
import TestSupport
import Testing

@Suite("Digests")
struct DigestTests {
    /// FIPS 180-2 / RFC 1321 known answers for "abc", "" and the 448-bit two-block message.
    static let vectors: [(DigestAlgorithm, String, String, String)] = [
        (
            .sha1, "a9993e364706816aba3e25717850c26c9cd0d89d", "da39a3ee5e6b4b0d3255bfef95601890afd80709",
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        ),
        (
            .sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            .sha384, "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
            "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b",
            "3391fdddfc8dc7393707a65b1b4709397cf8b1d162af05abfe8f450de5f36bc6b0455a8520bc4e6f5fe95b1fe3c8452b"
        ),
        (
            .sha512,
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
            "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c33596fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445"
        ),
        (
            .md5, "900150983cd24fb0d6963f7d28e17f72", "d41d8cd98f00b204e9800998ecf8427e",
            "8215ef0796a20bcaaae116d3876c664a"
        ),
    ]

    @Test("Known answers for abc, the empty message and the 448-bit message", arguments: vectors.indices)
    func knownAnswers(index: Int) throws {
        let (algorithm, abc, empty, twoBlock) = Self.vectors[index]
        let message = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(hex(try Digest.hash(algorithm, Array("abc".utf8))) == abc)
        #expect(hex(try Digest.hash(algorithm, [UInt8]())) == empty)
        #expect(hex(try Digest.hash(algorithm, message)) == twoBlock)
        #expect(try Digest.hash(algorithm, message).count == algorithm.outputByteCount)
    }

    @Test("SHA-1 of one million 'a' (FIPS 180 long message)")
    func millionA() throws {
        let message = [UInt8](repeating: 0x61, count: 1_000_000)
        #expect(hex(try Digest.hash(.sha1, message)) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test("Slice and raw-buffer overloads hash exactly the viewed bytes")
    func overloads() throws {
        let buffer = Array("xxabcyy".utf8)
        let slice = buffer[2..<5]
        let expected = try Digest.hash(.sha256, Array("abc".utf8))
        #expect(try Digest.hash(.sha256, slice) == expected)
        let raw = try buffer.withUnsafeBytes { try Digest.hash(.sha256, UnsafeRawBufferPointer(rebasing: $0[2..<5])) }
        #expect(raw == expected)
        #expect(try Digest.hash(.sha256, buffer[0..<0]) == Digest.hash(.sha256, [UInt8]()))
    }

    @Test("Digest OIDs and signature-algorithm OIDs map to digests")
    func oidLookup() {
        for algorithm in DigestAlgorithm.allCases {
            #expect(DigestAlgorithm(oid: algorithm.oid) == algorithm)
        }
        #expect(DigestAlgorithm.sha1.oid == oid("1.3.14.3.2.26"))
        #expect(DigestAlgorithm.sha256.oid == oid("2.16.840.1.101.3.4.2.1"))
        #expect(DigestAlgorithm.md5.oid == oid("1.2.840.113549.2.5"))
        #expect(DigestAlgorithm(oid: oid("1.2.840.113549.1.1.5")) == .sha1)
        #expect(DigestAlgorithm(oid: oid("1.2.840.113549.1.1.11")) == .sha256)
        #expect(DigestAlgorithm(oid: oid("1.2.840.113549.1.1.12")) == .sha384)
        #expect(DigestAlgorithm(oid: oid("1.2.840.113549.1.1.13")) == .sha512)
        #expect(DigestAlgorithm(oid: oid("1.2.840.113549.1.1.4")) == .md5)
        #expect(DigestAlgorithm(oid: oid("1.2.840.10045.4.3.2")) == .sha256)
        #expect(DigestAlgorithm(oid: oid("1.2.840.10045.4.1")) == .sha1)
        // rsaEncryption names no digest; unknown and malformed OIDs are nil.
        #expect(DigestAlgorithm(oid: oid("1.2.840.113549.1.1.1")) == nil)
        #expect(DigestAlgorithm(oid: oid("1.2.3")) == nil)
        #expect(DigestAlgorithm(oid: oid("2.16.840.1.101.3.4.2.99")) == nil)
        #expect(SignatureAlgorithm(oid: oid("1.2.840.113549.1.1.1")) == .rsaPKCS1v15(nil))
        #expect(SignatureAlgorithm(oid: oid("1.2.840.10045.4.3.3")) == .ecdsa(.sha384))
        #expect(SignatureAlgorithm.rsaPKCS1v15(.sha256).oid == oid("1.2.840.113549.1.1.11"))
        #expect(SignatureAlgorithm.ecdsa(.md5).oid == nil)
        #expect(DigestAlgorithm.md5.isRefusedForSignatures)
        #expect(!DigestAlgorithm.sha1.isRefusedForSignatures)
    }

    @Test("Concurrent hashing from many tasks gives the same answer")
    func concurrentHashing() async throws {
        let expected = try Digest.hash(.sha256, Array("abc".utf8))
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    (0..<200).allSatisfy { _ in (try? Digest.hash(.sha256, Array("abc".utf8))) == expected }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 16)
        #expect(results.allSatisfy { $0 })
    }
}
