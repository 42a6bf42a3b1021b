import Foundation
import JSON
import JWS
import ServerNotifications
import StoreTesting
import TestSupport
import Testing

/// Compact storage (schema version 3): every real token and every test-PKI notification comes
/// back from both stores byte for byte, stored compact; a damaged row or a missing certificate is
/// a typed error; tokens the compact form cannot reproduce are stored raw and come back exactly.
@Suite struct CompactionTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("TestReceipts/jws")

    /// Every token of TestReceipts/jws (copied from the shared vectors): each `.jws` and `.txt`
    /// file, and every string shaped like a compact JWS in each JSON file (`signedPayload`,
    /// `signedTransactionInfo`, `signedRenewalInfo`, `signedTransactions`, …), by a name saying
    /// where it is.
    static func realTokens() throws -> [(name: String, token: String)] {
        var tokens: [(String, String)] = []
        let files = FileManager.default.enumerator(atPath: vectors.path)?.compactMap { $0 as? String }.sorted() ?? []
        for file in files {
            guard let data = FileManager.default.contents(atPath: vectors.appendingPathComponent(file).path) else { continue }
            if file.hasSuffix(".jws") || file.hasSuffix(".txt") {
                tokens.append((file, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
            } else if file.hasSuffix(".json") {
                var found: [String] = []
                collect(try JSONValue.parse([UInt8](data)), into: &found)
                for (index, token) in found.enumerated() { tokens.append(("\(file)#\(index)", token)) }
            }
        }
        return tokens
    }

    static func collect(_ value: JSONValue, into tokens: inout [String]) {
        if let text = value.stringValue, text.hasPrefix("eyJ"), text.split(separator: ".", omittingEmptySubsequences: false).count == 3 {
            tokens.append(text)
        }
        for element in value.arrayValue ?? [] { collect(element, into: &tokens) }
        for (_, member) in value.objectValue ?? [] { collect(member, into: &tokens) }
    }

    /// Every `x5c` certificate of `token` and of the tokens nested in its payload, written in
    /// the header as plain base64 (no escaped `/`).
    static func certificates(of token: String, into distinct: inout Set<[UInt8]>, occurrences: inout Int) {
        guard let jws = try? CompactJWS(token) else { return }
        var header = String(token.prefix { $0 != "." }).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        header += String(repeating: "=", count: (4 - header.count % 4) % 4)
        let json = Data(base64Encoded: header).map { String(decoding: $0, as: UTF8.self) } ?? ""
        for der in jws.header.certificateChain ?? [] where json.contains("\"" + Data(der).base64EncodedString() + "\"") {
            distinct.insert(Array(der))
            occurrences += 1
        }
        guard let payload = try? JSONValue.parse(jws.unverifiedPayload) else { return }
        var nested: [String] = []
        collect(payload, into: &nested)
        for inner in nested { certificates(of: inner, into: &distinct, occurrences: &occurrences) }
    }

    static func notification(_ uuid: String, _ token: String) -> StoredNotification {
        StoredNotification(notificationUUID: uuid, notificationType: "TEST", receivedDate: 1_700_000_000_000, signedPayload: token)
    }

    static func sqlite3(_ path: String, _ sql: String) throws -> String { try SchemaMigrationTests.sqlite3(path, sql) }

    static let hasSQLite3 = FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")

    /// Stores every real token in `store` and reads each back.
    static func roundTrip(_ tokens: [(name: String, token: String)], through store: any NotificationStore) throws {
        for (name, token) in tokens { #expect(try store.store(notification(name, token)) == .stored, "\(name)") }
        let rows = try store.notifications(.all)
        #expect(rows.count == tokens.count)
        let byUUID = Dictionary(uniqueKeysWithValues: rows.map { ($0.notificationUUID, $0.signedPayload) })
        for (name, token) in tokens {
            #expect(Array(byUUID[name]?.utf8 ?? "".utf8) == Array(token.utf8), "\(name) does not come back byte for byte")
        }
        // Without payloads (what entitlements and subscription state ask): the same rows and
        // columns, every signedPayload empty.
        var columnsOnly = NotificationQuery.all
        columnsOnly.includesSignedPayload = false
        let bare = try store.notifications(columnsOnly)
        #expect(bare.map(\.notificationUUID) == rows.map(\.notificationUUID))
        #expect(bare.allSatisfy { $0.signedPayload.isEmpty })
        func withoutPayload(_ row: StoredNotification) -> StoredNotification {
            var copy = row
            copy.signedPayload = ""
            return copy
        }
        #expect(bare == rows.map(withoutPayload))
    }

    @Test(.enabled(if: hasSQLite3)) func everyRealTokenComesBackFromSQLiteByteForByteAndIsStoredCompact() throws {
        let tokens = try Self.realTokens()
        // 28 token files and the JSON files' tokens (at least the 12 of the omnimind responses).
        #expect(tokens.count >= 40, "\(tokens.count)")
        let path = temporaryDatabase()
        let store = try SQLiteNotificationStore(path: path)
        try Self.roundTrip(tokens, through: store)
        store.close()
        // Every well-formed token is compact; only the one missing a segment is raw.
        let raw = try Self.sqlite3(path, "SELECT notification_uuid FROM notifications WHERE payload_format IS NULL")
        #expect(raw == "mimo/upstream/InputFor_VerifyAndDecode_JWSIsMissingAPart_Fails.txt")
        // Each distinct `x5c` certificate of the tokens and their nested tokens once (Apple's chain
        // with its leaves over the years, the test CA's, the synthetic ones); Xcode's escapes the
        // slashes of its certificate (`\/`), so its header stays as it is, deflated.
        var distinct: Set<[UInt8]> = []
        var occurrences = 0
        for (_, token) in tokens { Self.certificates(of: token, into: &distinct, occurrences: &occurrences) }
        #expect(occurrences > 3 * distinct.count, "\(occurrences) occurrences of \(distinct.count) certificates")
        let stored = try Self.sqlite3(path, "SELECT count(*) FROM notification_certificates")
        #expect(stored == String(distinct.count), "\(stored) stored, \(distinct.count) distinct")
        let again = try SQLiteNotificationStore(path: path, options: .reading)
        #expect(try again.notifications(.all).map(\.signedPayload) == store.notificationsPayloads(tokens))
        again.close()
    }

    @Test(.enabled(if: hasSQLite3)) func theRealDidRenewNotificationTakesUnderThreeKilobytes() throws {
        let token = try #require(try Self.realTokens().first { $0.name == "gopay/sandbox-notification-DID_RENEW.jws" }?.token)
        #expect(token.utf8.count == 18_042)
        let path = temporaryDatabase()
        let store = try SQLiteNotificationStore(path: path)
        #expect(try store.store(Self.notification("renew", token)) == .stored)
        store.close()
        let body = Int(try Self.sqlite3(path, "SELECT length(payload_body) + length(payload_sha256) FROM notifications")) ?? 0
        #expect(body > 0 && body < 3_000, "\(body)")
        #expect(try Self.sqlite3(path, "SELECT length(signed_payload) FROM notifications") == "0")
        #expect(try Self.sqlite3(path, "SELECT count(*) FROM notification_certificates") == "3")
    }

    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(3)))
    func everyRealTokenComesBackFromPostgresByteForByteAndADamagedRowIsAnError() throws {
        let cluster = try PostgresCluster.start(label: "compaction")
        defer { cluster.stop() }
        let url = try cluster.createDatabase("notifications")
        let tokens = try Self.realTokens()
        let store = try PostgresNotificationStore(url: url)
        try Self.roundTrip(tokens, through: store)
        store.close()
        let raw = try cluster.sql("SELECT count(*) FROM notifications WHERE payload_format IS NULL", database: "notifications")
        #expect(raw == "1")
        #expect(try cluster.sql("SELECT version FROM notification_store_schema", database: "notifications") == "3")
        // What PostgreSQL keeps of the real DID_RENEW notification (18,042 bytes raw), and of all
        // the certificate rows.
        let rowBytes = try cluster.sql(
            "SELECT pg_column_size(payload_body) + pg_column_size(payload_sha256) + pg_column_size(signed_payload)"
                + " FROM notifications WHERE notification_uuid = 'gopay/sandbox-notification-DID_RENEW.jws'",
            database: "notifications")
        #expect((Int(rowBytes) ?? .max) < 3_000, "\(rowBytes)")
        let certificateBytes = try cluster.sql(
            "SELECT sum(pg_column_size(digest) + pg_column_size(der)) FROM notification_certificates", database: "notifications")
        print("PostgreSQL: DID_RENEW row payload columns \(rowBytes) bytes; certificate rows \(certificateBytes) bytes in all")

        // A row updated behind the store's back: its digest no longer matches.
        try cluster.sql(
            "UPDATE notifications SET payload_sha256 = decode(repeat('00', 32), 'hex') WHERE notification_uuid = 'gopay/sandbox-notification-DID_RENEW.jws'",
            database: "notifications")
        let reader = try PostgresNotificationStore(url: url, options: .reading)
        defer { reader.close() }
        #expect(throws: NotificationStoreError.self) { try reader.notifications(.all) }
        Self.expectCorrupt("does not match its stored SHA-256") {
            try reader.notifications(NotificationQuery(notificationUUID: "gopay/sandbox-notification-DID_RENEW.jws"))
        }
        // The other rows still read.
        #expect(try reader.notifications(NotificationQuery(notificationUUID: "gopay/sandbox-renewal-2000000000842607.jws")).count == 1)

        // A certificate row missing (a store that has not cached it yet).
        try cluster.sql("DELETE FROM notification_certificates", database: "notifications")
        let fresh = try PostgresNotificationStore(url: url, options: .reading)
        defer { fresh.close() }
        Self.expectCorrupt("is missing from the store") {
            try fresh.notifications(NotificationQuery(notificationUUID: "gopay/sandbox-renewal-2000000000842607.jws"))
        }
    }

    /// Every notification the simulated App Store signs with the test PKI (purchase, renewals,
    /// a non-consumable, auto-renew off, expiry) through a receiver storing into `store`: each
    /// stored payload is, byte for byte, the `signedPayload` the sender posted, and is compact.
    @MainActor static func testPKINotificationsComeBack(through store: any NotificationStore) throws -> Int {
        let app = try SimulatedApp(transport: ReceiverTransport(receiver: try receiver(store: store)))
        app.buy(IDs.monthly)
        app.advance(days: 31)
        app.advance(days: 31)
        app.buy(IDs.level)
        app.advance(days: 100)
        app.flush()
        var sent: [String: String] = [:]
        for delivery in app.sender.deliveries {
            let body = try JSONValue.parse(delivery.body)
            sent[delivery.notificationUUID] = try #require(body["signedPayload"]?.stringValue)
        }
        let stored = try store.notifications(.all)
        #expect(stored.count == sent.count && sent.count >= 4, "\(stored.count) of \(sent.count)")
        for row in stored {
            #expect(Array(row.signedPayload.utf8) == Array((sent[row.notificationUUID] ?? "").utf8), "\(row.notificationUUID)")
        }
        return sent.count
    }

    @MainActor @Test(.enabled(if: hasSQLite3)) func everyTestPKINotificationComesBackFromSQLiteByteForByte() throws {
        let path = temporaryDatabase()
        let store = try SQLiteNotificationStore(path: path)
        let count = try Self.testPKINotificationsComeBack(through: store)
        store.close()
        #expect(try Self.sqlite3(path, "SELECT count(*) FROM notifications WHERE payload_format = 1") == String(count))
        // The test PKI's leaf, intermediate and root, once.
        #expect(try Self.sqlite3(path, "SELECT count(*) FROM notification_certificates") == "3")
    }

    @MainActor @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(3)))
    func everyTestPKINotificationComesBackFromPostgresByteForByte() throws {
        let cluster = try PostgresCluster.start(label: "compaction-pki")
        defer { cluster.stop() }
        let url = try cluster.createDatabase("notifications")
        let store = try PostgresNotificationStore(url: url)
        defer { store.close() }
        let count = try Self.testPKINotificationsComeBack(through: store)
        #expect(try cluster.sql("SELECT count(*) FROM notifications WHERE payload_format = 1", database: "notifications") == String(count))
        #expect(try cluster.sql("SELECT count(*) FROM notification_certificates", database: "notifications") == "3")
    }

    static func expectCorrupt(_ words: String, _ body: () throws -> [StoredNotification], sourceLocation: SourceLocation = #_sourceLocation)
    {
        #expect(sourceLocation: sourceLocation) {
            try body()
        } throws: { error in
            let error = error as? NotificationStoreError
            return error?.code == .corrupt && error?.reason.contains(words) == true
        }
    }
}

extension SQLiteNotificationStore {
    /// The payloads of `tokens` in the order the store returns them (signed date, then uuid: here
    /// by name, no row having a signed date).
    fileprivate func notificationsPayloads(_ tokens: [(name: String, token: String)]) -> [String] {
        tokens.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }.map(\.token)
    }
}
