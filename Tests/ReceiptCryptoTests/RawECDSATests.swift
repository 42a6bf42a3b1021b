import Foundation
import TestSupport
import Testing

@testable import ReceiptCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// Raw `r ‖ s` ECDSA signatures, as JWS (ES256) carries them.
@Suite("Raw ECDSA signatures")
struct RawECDSATests {
    static let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9".utf8)

    @Test func signAndVerify_fixedWidth_andEveryFlippedBitFails() throws {
        let key = try PrivateKey.generateP256()
        let publicKey = try key.publicKey
        #expect(publicKey.ecCoordinateByteCount == 32)
        for _ in 0..<8 {
            let signature = try key.signRawECDSA(Self.message, digest: .sha256)
            #expect(signature.count == 64)
            #expect(publicKey.verify(rawECDSASignature: signature, over: Self.message, digest: .sha256))
            for bit in stride(from: 0, to: 512, by: 37) {
                var flipped = signature
                flipped[bit / 8] ^= UInt8(1 << (bit % 8))
                #expect(!publicKey.verify(rawECDSASignature: flipped, over: Self.message, digest: .sha256))
            }
        }
    }

    @Test func otherLengths_DER_andOtherKeysAreRefused() throws {
        let key = try PrivateKey.generateP256()
        let publicKey = try key.publicKey
        let raw = try key.signRawECDSA(Self.message, digest: .sha256)
        let der = try key.sign(Self.message, digest: .sha256)
        #expect(publicKey.verify(signature: der, over: Self.message, digest: .sha256), "the DER form verifies as DER")
        #expect(!publicKey.verify(rawECDSASignature: der, over: Self.message, digest: .sha256), "but not as a raw signature")
        #expect(!publicKey.verify(rawECDSASignature: raw + [0], over: Self.message, digest: .sha256))
        #expect(!publicKey.verify(rawECDSASignature: [0] + raw, over: Self.message, digest: .sha256))
        #expect(!publicKey.verify(rawECDSASignature: Array(raw.dropLast()), over: Self.message, digest: .sha256))
        #expect(!publicKey.verify(rawECDSASignature: [UInt8](repeating: 0, count: 64), over: Self.message, digest: .sha256))
        #expect(!publicKey.verify(rawECDSASignature: raw, over: Self.message, digest: .sha384))
        let rsa = try PrivateKey.generateRSA(bits: 2048)
        #expect(try rsa.publicKey.ecCoordinateByteCount == nil)
        #expect(!(try rsa.publicKey.verify(rawECDSASignature: raw, over: Self.message, digest: .sha256)))
        #expect(throws: CryptoError.self) { try rsa.signRawECDSA(Self.message, digest: .sha256) }
    }

    /// The raw form converts to exactly what OpenSSL's own tool verifies.
    @Test func openSSLCommandLineVerifiesTheConvertedSignature() throws {
        let key = try PrivateKey.generateP256()
        let raw = try key.signRawECDSA(Self.message, digest: .sha256)
        // Raw → DER by hand: two positive INTEGERs in a SEQUENCE.
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var trimmed = Array(bytes.drop { $0 == 0 })
            if trimmed.first.map({ $0 & 0x80 != 0 }) ?? true { trimmed.insert(0, at: 0) }
            return [0x02, UInt8(trimmed.count)] + trimmed
        }
        let body = integer(raw[..<32]) + integer(raw[32...])
        let der = [0x30, UInt8(body.count)] + body
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("raw-ecdsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let publicPEM =
            "-----BEGIN PUBLIC KEY-----\n"
            + Data(try key.publicKey.derEncoded).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END PUBLIC KEY-----\n"
        try Data(publicPEM.utf8).write(to: directory.appendingPathComponent("key.pem"))
        try Data(der).write(to: directory.appendingPathComponent("sig.der"))
        try Data(Self.message).write(to: directory.appendingPathComponent("message"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["dgst", "-sha256", "-verify", "key.pem", "-signature", "sig.der", "message"]
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.runRetryingBadDescriptor()
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("Verified OK"))
    }

    /// The direct raw → DER encoder agrees with a reference encoder and with OpenSSL's parser on
    /// the edge cases: zero, leading zero bytes, the high bit set, and every curve width (P-521's
    /// needs the long length form).
    @Test func directDEREncoderAgreesWithOpenSSL() throws {
        func reference(_ raw: [UInt8], width: Int) -> [UInt8] {
            func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
                var trimmed = Array(bytes.drop { $0 == 0 })
                if trimmed.first.map({ $0 & 0x80 != 0 }) ?? true { trimmed.insert(0, at: 0) }
                return [0x02, UInt8(trimmed.count)] + trimmed
            }
            let body = integer(raw[..<width]) + integer(raw[width...])
            return [0x30] + (body.count >= 0x80 ? [0x81] : []) + [UInt8(body.count)] + body
        }
        var generator = SystemRandomNumberGenerator()
        for width in [32, 48, 66] {
            var halves: [[UInt8]] = [
                [UInt8](repeating: 0, count: width), [UInt8](repeating: 0xFF, count: width),
                [UInt8](repeating: 0, count: width - 1) + [1], [0, 0, 0x80] + [UInt8](repeating: 7, count: width - 3),
                [0x7F] + [UInt8](repeating: 0xFF, count: width - 1), [0x80] + [UInt8](repeating: 0, count: width - 1),
            ]
            for _ in 0..<32 {
                var half = (0..<width).map { _ in UInt8.random(in: 0...255, using: &generator) }
                half[0] = [0, 0x01, 0x7F, 0x80, 0xFF][Int.random(in: 0..<5, using: &generator)]
                halves.append(half)
            }
            for r in halves {
                for s in halves.shuffled(using: &generator).prefix(6) {
                    let raw = r + s
                    let der = try #require(raw.withUnsafeBytes { PublicKey.derSignature(raw: $0, width: width) })
                    #expect(der == reference(raw, width: width), "width \(width)")
                    // OpenSSL reads it back to the same r and s.
                    let back = der.withUnsafeBufferPointer { PrivateKey.rawSignature(der: $0, width: width) }
                    #expect(back == raw, "width \(width)")
                }
            }
            let short = [UInt8](repeating: 1, count: 2 * width - 1)
            #expect(short.withUnsafeBytes { PublicKey.derSignature(raw: $0, width: width) } == nil)
        }
        #expect([UInt8](repeating: 1, count: 134).withUnsafeBytes { PublicKey.derSignature(raw: $0, width: 67) } == nil)
    }
}
