import Internals
import ReceiptCrypto
import TestSupport
import Testing

@Suite("Keys, signing and verification")
struct KeyTests {
    static let message = Array("The receipt payload, or any other bytes.".utf8)

    @Test(
        "RSA PKCS#1 v1.5 round trips with SHA-1 and SHA-256; flipped bits fail",
        arguments: [DigestAlgorithm.sha1, .sha256, .sha384, .sha512])
    func rsaRoundTrip(digest: DigestAlgorithm) throws {
        let key = try FixedTestPKI.shared().leafKey
        let publicKey = try key.publicKey
        let signature = try key.sign(Self.message, digest: digest)
        #expect(signature.count == 256)
        #expect(publicKey.verify(signature: signature, over: Self.message, digest: digest))
        // Wrong digest, flipped signature bit, flipped message bit, truncated signature: all false.
        #expect(!publicKey.verify(signature: signature, over: Self.message, digest: digest == .sha1 ? .sha256 : .sha1))
        for bit in [0, 7, 1000, signature.count * 8 - 1] {
            var flipped = signature
            flipped[bit / 8] ^= UInt8(1 << (bit % 8))
            #expect(!publicKey.verify(signature: flipped, over: Self.message, digest: digest))
        }
        var tampered = Self.message
        tampered[0] ^= 0x01
        #expect(!publicKey.verify(signature: signature, over: tampered, digest: digest))
        #expect(!publicKey.verify(signature: Array(signature.dropLast()), over: Self.message, digest: digest))
        #expect(!publicKey.verify(signature: [], over: Self.message, digest: digest))
        // PKCS#1 v1.5 is deterministic.
        #expect(try key.sign(Self.message, digest: digest) == signature)
    }

    @Test("ECDSA P-256 round trip with DER signatures")
    func p256RoundTrip() throws {
        let key = try PrivateKey.generateP256()
        let publicKey = try key.publicKey
        #expect(publicKey.kind == .ec(curve: "prime256v1"))
        #expect(publicKey.bits == 256)
        let signature = try key.sign(Self.message, digest: .sha256)
        #expect(signature.first == 0x30)  // Ecdsa-Sig-Value SEQUENCE
        #expect(publicKey.verify(signature: signature, over: Self.message, digest: .sha256))
        var flipped = signature
        flipped[flipped.count - 1] ^= 0x01
        #expect(!publicKey.verify(signature: flipped, over: Self.message, digest: .sha256))
        // An RSA key does not verify an ECDSA signature and vice versa.
        let rsa = try FixedTestPKI.shared().leafKey
        #expect(!(try rsa.publicKey).verify(signature: signature, over: Self.message, digest: .sha256))
        let rsaSignature = try rsa.sign(Self.message, digest: .sha256)
        #expect(!publicKey.verify(signature: rsaSignature, over: Self.message, digest: .sha256))
    }

    @Test("Slices and raw buffers verify exactly the viewed bytes")
    func sliceOverloads() throws {
        let key = try FixedTestPKI.shared().leafKey
        let publicKey = try key.publicKey
        let signature = try key.sign(Self.message, digest: .sha256)
        let padded = [0xAA, 0xBB] + Self.message + [0xCC]
        let slice = padded[2..<(2 + Self.message.count)]
        #expect(publicKey.verify(signature: signature, over: slice, digest: .sha256))
        #expect(!publicKey.verify(signature: signature, over: padded[1..<(1 + Self.message.count)], digest: .sha256))
        let framedSignature = [0x00] + signature + [0x00]
        #expect(publicKey.verify(signature: framedSignature[1..<(1 + signature.count)], over: slice, digest: .sha256))
        let raw = signature.withUnsafeBytes { sig in
            Self.message.withUnsafeBytes { publicKey.verify(signature: sig, over: $0, digest: .sha256) }
        }
        #expect(raw)
    }

    @Test("MD5 is refused for signing and verification")
    func md5Refused() throws {
        let key = try FixedTestPKI.shared().leafKey
        let error = #expect(throws: CryptoError.self) { try key.sign(Self.message, digest: .md5) }
        #expect(error?.code == .unsupportedAlgorithm)
        // The API cannot produce an MD5 signature, so this only shows that asking for MD5 answers
        // false; the refusal happens before OpenSSL is called.
        let signature = try key.sign(Self.message, digest: .sha256)
        #expect(!(try key.publicKey).verify(signature: signature, over: Self.message, digest: .md5))
    }

    @Test("PEM and DER round trips of private and public keys")
    func keyEncodings() throws {
        for key in [try FixedTestPKI.shared().rootKey, try PrivateKey.generateP256()] {
            let pem = try key.pemEncoded
            #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            let fromPEM = try PrivateKey(pemEncoded: pem)
            #expect(try fromPEM.publicKey == key.publicKey)
            let der = try key.derEncoded
            let fromDER = try PrivateKey(derEncoded: der)
            #expect(try fromDER.publicKey == key.publicKey)
            let spki = try key.publicKey.derEncoded
            let publicKey = try PublicKey(subjectPublicKeyInfoDER: spki)
            #expect(publicKey.derEncoded == spki)
            // A signature made by the re-loaded key verifies with the original public key.
            let signature = try fromPEM.sign(Self.message, digest: .sha256)
            #expect(try key.publicKey.verify(signature: signature, over: Self.message, digest: .sha256))
            let trailing = #expect(throws: CryptoError.self) { try PrivateKey(derEncoded: der + [0]) }
            #expect(trailing?.code == .trailingBytes)
            let spkiTrailing = #expect(throws: CryptoError.self) { try PublicKey(subjectPublicKeyInfoDER: spki + [0]) }
            #expect(spkiTrailing?.code == .trailingBytes)
        }
    }

    @Test("Key parsers reject empty, random and truncated input")
    func hostileKeys() throws {
        #expect((#expect(throws: CryptoError.self) { try PrivateKey(derEncoded: []) })?.code == .emptyInput)
        #expect((#expect(throws: CryptoError.self) { try PrivateKey(pemEncoded: "") })?.code == .emptyInput)
        #expect((#expect(throws: CryptoError.self) { try PublicKey(subjectPublicKeyInfoDER: []) })?.code == .emptyInput)
        #expect((#expect(throws: CryptoError.self) { try PrivateKey(pemEncoded: "garbage") })?.code == .malformedInput)
        let encrypted = """
            -----BEGIN ENCRYPTED PRIVATE KEY-----
            MIIBvTBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQI
            -----END ENCRYPTED PRIVATE KEY-----
            """
        #expect(throws: CryptoError.self) { try PrivateKey(pemEncoded: encrypted) }
        let spki = try FixedTestPKI.shared().leafKey.publicKey.derEncoded
        for length in stride(from: 1, to: spki.count, by: 3) {
            #expect(throws: CryptoError.self) { try PublicKey(subjectPublicKeyInfoDER: Array(spki.prefix(length))) }
        }
        var random = SplitMix64(seed: 42)
        for _ in 0..<300 {
            let garbage = random.bytes(Int.random(in: 1...200, using: &random))
            #expect(throws: CryptoError.self) { try PrivateKey(derEncoded: garbage) }
            #expect(throws: CryptoError.self) { try PublicKey(subjectPublicKeyInfoDER: garbage) }
        }
        let badSize = #expect(throws: CryptoError.self) { try PrivateKey.generateRSA(bits: 100) }
        #expect(badSize?.code == .invalidArgument)
    }

    @Test("One public key verifies concurrently from many tasks")
    func concurrentVerification() async throws {
        let key = try FixedTestPKI.shared().leafKey
        let publicKey = try key.publicKey
        let signature = try key.sign(Self.message, digest: .sha256)
        var bad = signature
        bad[10] ^= 0x40
        let badSignature = bad
        let outcomes = await withTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var good = 0
                    var rejected = 0
                    for _ in 0..<100 {
                        if publicKey.verify(signature: signature, over: Self.message, digest: .sha256) { good += 1 }
                        if !publicKey.verify(signature: badSignature, over: Self.message, digest: .sha256) { rejected += 1 }
                    }
                    return (good, rejected)
                }
            }
            return await group.reduce(into: [(Int, Int)]()) { $0.append($1) }
        }
        #expect(outcomes.count == 8)
        #expect(outcomes.allSatisfy { $0 == (100, 100) })
    }
}
