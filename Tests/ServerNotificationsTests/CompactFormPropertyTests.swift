import Foundation
import Internals
import Testing

@testable import ServerNotifications

/// The compact form's reader on hostile bytes (the inner stream, before zlib, which a damaged row
/// could reach only through a checksum collision): every mutation gives the original token or a
/// ``NotificationStoreError/Code/corrupt`` error, and no body grows beyond its limit.
@Suite struct CompactFormPropertyTests {
    static func realNotification() throws -> String {
        try #require(try CompactionTests.realTokens().first { $0.name == "gopay/sandbox-notification-DID_RENEW.jws" }?.token)
    }

    @Test func theRealNotificationTakenApartComesBackAndReferencesThreeCertificates() throws {
        let token = Array(try Self.realNotification().utf8)
        var writer = TokenDecomposition.Writer()
        #expect(TokenDecomposition.write(token: token[...], depth: 0, into: &writer))
        #expect(writer.certificates.count == 3)
        var reader = TokenReassembly(writer.bytes, from: 0, certificates: writer.certificates, limit: CompactPayload.maximumBytes)
        #expect(try reader.token(depth: 0) == token)
        #expect(reader.isAtEnd)
        let compact = try #require(CompactPayload(signedPayload: try Self.realNotification()))
        #expect(compact.certificates.map(\.der) == writer.certificates)
        #expect(compact.body.count < writer.bytes.count)
    }

    @Test func everyMutationOfTheInnerFormGivesTheTokenOrACorruptionError() throws {
        let token = Array(try Self.realNotification().utf8)
        var writer = TokenDecomposition.Writer()
        #expect(TokenDecomposition.write(token: token[...], depth: 0, into: &writer))
        var random = SplitMix64(seed: 246)
        var corrupt = 0
        for round in 0..<400 {
            var bytes = writer.bytes
            if round % 4 == 3 {
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
            } else {
                for _ in 0...(round % 3) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            var reader = TokenReassembly(bytes, from: 0, certificates: writer.certificates, limit: CompactPayload.maximumBytes)
            do {
                let rebuilt = try reader.token(depth: 0)
                #expect(rebuilt.count <= CompactPayload.maximumBytes)
            } catch {
                #expect(error.code == .corrupt)
                corrupt += 1
            }
        }
        #expect(corrupt > 100)
    }

    @Test func referencesRepeatedBeyondTheLimitAreRefusedNotExpanded() throws {
        // 2,000 references to a 1,000-byte certificate: 2.7 MB of base64 from 4 KB of form.
        var writer = TokenDecomposition.Writer()
        let certificate = [UInt8](repeating: 0x30, count: 1_000)
        for _ in 0..<2_000 { writer.certificate(certificate) }
        writer.bytes.append(TokenDecomposition.endTag)
        var reader = TokenReassembly(writer.bytes, from: 0, certificates: writer.certificates, limit: CompactPayload.maximumBytes)
        #expect {
            try reader.token(depth: 0)
        } throws: { error in
            (error as? NotificationStoreError)?.reason.contains("grows beyond") == true
        }
    }

    @Test func nestingBeyondTheLimitIsRefused() throws {
        // A token whose payload holds a token, and so on, one level deeper than allowed.
        var bytes: [UInt8] = []
        for _ in 0...(TokenDecomposition.maximumDepth + 1) { bytes += [TokenDecomposition.endTag, TokenDecomposition.tokenTag] }
        var reader = TokenReassembly(bytes, from: 0, certificates: [], limit: CompactPayload.maximumBytes)
        #expect {
            try reader.token(depth: 0)
        } throws: { error in
            (error as? NotificationStoreError)?.reason.contains("nest too deeply") == true
        }
    }
}
