import Foundation
import ServerNotifications
import TestSupport
import Testing

/// What a compact SQLite row does when its bytes are damaged on disk, a certificate it references
/// is gone or altered, or its payload is one the compact form cannot reproduce.
@Suite(.enabled(if: CompactionTests.hasSQLite3)) struct CompactionCorruptionTests {
    static let uuid = "gopay/sandbox-notification-DID_RENEW.jws"

    /// A closed SQLite store holding the real DID_RENEW notification, compact.
    static func storeWithRealNotification(_ label: String = #function) throws -> (path: String, token: String) {
        let token = try #require(try CompactionTests.realTokens().first { $0.name == uuid }?.token)
        let path = temporaryDatabase(label)
        let store = try SQLiteNotificationStore(path: path)
        #expect(try store.store(CompactionTests.notification(uuid, token)) == .stored)
        store.close()
        #expect(try CompactionTests.sqlite3(path, "SELECT payload_format FROM notifications") == "1")
        return (path, token)
    }

    static func readAll(_ path: String) throws -> [StoredNotification] {
        let store = try SQLiteNotificationStore(path: path, options: .reading)
        defer { store.close() }
        return try store.notifications(.all)
    }

    @Test func aByteOfTheCompactBodyFlippedInTheDatabaseFileIsACorruptionError() throws {
        let (path, token) = try Self.storeWithRealNotification()
        #expect(try Self.readAll(path).first?.signedPayload == token)
        // Find the body's bytes in the file itself and flip one in their middle.
        let hex = try CompactionTests.sqlite3(path, "SELECT hex(payload_body) FROM notifications")
        let body = try #require(Self.bytes(hex: hex))
        var file = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        let start = try #require(Self.firstIndex(of: body, in: file))
        file[start + body.count / 2] ^= 0x55
        try Data(file).write(to: URL(fileURLWithPath: path))
        #expect {
            try Self.readAll(path)
        } throws: { error in
            // The inflated bytes come out wrong or not at all; either way a typed corruption error.
            (error as? NotificationStoreError)?.code == .corrupt
        }
    }

    @Test func aStoredDigestThatDoesNotMatchIsACorruptionError() throws {
        let (path, _) = try Self.storeWithRealNotification()
        _ = try CompactionTests.sqlite3(path, "UPDATE notifications SET payload_sha256 = zeroblob(32)")
        CompactionTests.expectCorrupt("does not match its stored SHA-256") { try Self.readAll(path) }
    }

    @Test func aMissingCertificateRowIsACorruptionError() throws {
        let (path, _) = try Self.storeWithRealNotification()
        _ = try CompactionTests.sqlite3(
            path, "DELETE FROM notification_certificates WHERE digest = (SELECT min(digest) FROM notification_certificates)")
        CompactionTests.expectCorrupt("is missing from the store") { try Self.readAll(path) }
    }

    @Test func anAlteredCertificateRowIsACorruptionError() throws {
        let (path, _) = try Self.storeWithRealNotification()
        _ = try CompactionTests.sqlite3(path, "UPDATE notification_certificates SET der = der || X'00'")
        CompactionTests.expectCorrupt("does not match its digest") { try Self.readAll(path) }
    }

    @Test(arguments: [
        ("X'02'", "unknown version"),
        // Declares 2^28 − 1 bytes: more than a body may inflate to, refused before allocating.
        ("X'01FFFFFF7F789C'", "declares a bad size"),
        // Declares 10 bytes but holds a zlib stream of 1,000 zero bytes: inflating stops at 10.
        ("X'010A' || zlib", "does not inflate to its declared size"),
        ("X''", "ends early"),
    ])
    func aDamagedBodyIsACorruptionErrorNeverACrash(body: String, words: String) throws {
        let (path, _) = try Self.storeWithRealNotification()
        // A zlib stream of 1,000 zero bytes (Python's zlib.compress(bytes(1000), 9)).
        let zlib = "X'78DA63601805A360140C77000003E80001'"
        let value = body.replacingOccurrences(of: "zlib", with: zlib)
        _ = try CompactionTests.sqlite3(path, "UPDATE notifications SET payload_body = \(value)")
        CompactionTests.expectCorrupt(words) { try Self.readAll(path) }
    }

    @Test func anUnknownPayloadFormatIsACorruptionError() throws {
        let (path, _) = try Self.storeWithRealNotification()
        _ = try CompactionTests.sqlite3(path, "UPDATE notifications SET payload_format = 7")
        CompactionTests.expectCorrupt("no format this version reads") { try Self.readAll(path) }
    }

    /// Tokens the compact form would not reproduce: each is stored raw and comes back exactly;
    /// tokens with odd but reproducible JSON come back exactly too.
    @Test func tokensTheCompactFormCannotReproduceAreStoredRawAndComeBackExactly() throws {
        let real = try #require(try CompactionTests.realTokens().first { $0.name == Self.uuid }?.token)
        let segments = real.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        // The signature's last character swapped within its group of four: the same bytes to a
        // lenient decoder, another spelling here.
        var signature = segments[2]
        let last = signature.removeLast()
        #expect(last != "B")
        signature.append("B")
        let nonCanonical = [segments[0], segments[1], signature].joined(separator: ".")
        func segment(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let certificate = "MIIBszCCAVmgAwIBAgIUQ\\/xP"
        let cases: [(String, String, Bool)] = [
            ("non-canonical signature", nonCanonical, false),
            ("padded segment", segments[0] + "=." + segments[1] + "." + segments[2], false),
            ("line break", real + "\n", false),
            ("not a token", "payload-without-dots", false),
            ("four segments", real + ".extra", false),
            ("escaped slash in x5c", segment("{\"alg\":\"ES256\",\"x5c\":[\"\(certificate)\"]}") + ".e30.AAAA", true),
            ("spaced x5c", segment("{ \"x5c\" : [ \"AAAA\" , \"AQID\" ] , \"alg\":\"ES256\"}") + ".e30.AAAA", true),
            ("escaped nested token", segments[0] + "." + segment("{\"signedTransactionInfo\":\"eyJh\\u0062.e30.AAAA\"}") + ".AAAA", true),
        ]
        let path = temporaryDatabase()
        let store = try SQLiteNotificationStore(path: path)
        for (name, token, _) in cases { #expect(try store.store(CompactionTests.notification(name, token)) == .stored) }
        for (name, token, compact) in cases {
            let rows = try store.notifications(NotificationQuery(notificationUUID: name))
            #expect(rows.first.map { Array($0.signedPayload.utf8) } == Array(token.utf8), "\(name)")
            let format = try CompactionTests.sqlite3(
                path, "SELECT coalesce(payload_format, 'raw') FROM notifications WHERE notification_uuid = '\(name)'")
            #expect(format == (compact ? "1" : "raw"), "\(name): \(format)")
        }
        store.close()
    }

    static func bytes(hex: String) -> [UInt8]? {
        var result: [UInt8] = []
        var characters = Array(hex)
        guard characters.count % 2 == 0 else { return nil }
        while !characters.isEmpty {
            guard let byte = UInt8(String(characters.prefix(2)), radix: 16) else { return nil }
            result.append(byte)
            characters.removeFirst(2)
        }
        return result
    }

    static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
