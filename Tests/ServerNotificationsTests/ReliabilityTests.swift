import Foundation
import Internals
import ServerNotifications
import TestSupport
import Testing

/// Issue 21 in the stores themselves: state from what payloads mean, one tie rule and one answer
/// to U+0000 in both stores, the SQLite store's file checks, and closing.
@Suite(.serialized) struct ReliabilityTests {
    static let day: Int64 = 86_400_000
    static let original = "3000000000000001"

    /// SUBSCRIBED tx1 (expires day 30), DID_RENEW tx2 (expires day 60), then `type` for tx1,
    /// re-signed by Apple on day 35.
    static func scenario(_ type: String) -> [StoredNotification] {
        [
            StoredNotification(
                notificationUUID: "n1", notificationType: "SUBSCRIBED", subtype: "INITIAL_BUY", signedDate: 0, receivedDate: 1,
                transactionId: "3000000000000001", originalTransactionId: original, productId: "p", purchaseDate: 0, expiresDate: 30 * day,
                transactionSignedDate: 0, autoRenewStatus: 1, renewalSignedDate: 0, signedPayload: "x1"),
            StoredNotification(
                notificationUUID: "n2", notificationType: "DID_RENEW", signedDate: 30 * day, receivedDate: 2,
                transactionId: "3000000000000002", originalTransactionId: original, productId: "p", purchaseDate: 30 * day,
                expiresDate: 60 * day, transactionSignedDate: 30 * day, autoRenewStatus: 1, renewalSignedDate: 30 * day, signedPayload: "x2"
            ),
            StoredNotification(
                notificationUUID: "n3", notificationType: type, signedDate: 35 * day, receivedDate: 3,
                transactionId: "3000000000000001", originalTransactionId: original, productId: "p", purchaseDate: 0, expiresDate: 30 * day,
                transactionSignedDate: 35 * day, signedPayload: "x3"),
        ]
    }

    /// An old transaction re-signed (REFUND_DECLINED, CONSUMPTION_REQUEST) does not replace the
    /// current one: active, expires day 60, whatever the arrival order.
    @Test func reSignedOldTransactionsDoNotWinAndArrivalDoesNotMatter() throws {
        for type in ["REFUND_DECLINED", "CONSUMPTION_REQUEST"] {
            let rows = Self.scenario(type)
            for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
                let store = try SQLiteNotificationStore(path: temporaryDatabase("\(type)-\(order)"))
                for index in order { _ = try store.store(rows[index]) }
                let state = try #require(
                    try store.subscriptionState(originalTransactionId: Self.original, at: Date(timeIntervalSince1970: 40 * 86_400)))
                #expect(state.isActive, "\(type) \(order)")
                #expect(state.expiresDate == 60 * Self.day, "\(type) \(order)")
                #expect(state.latestTransactionId == "3000000000000002")
            }
        }
        // A refund of the current transaction still revokes it.
        var rows = Self.scenario("REFUND")
        rows[2].transactionId = "3000000000000002"
        rows[2].purchaseDate = 30 * Self.day
        rows[2].expiresDate = 60 * Self.day
        rows[2].revocationDate = 35 * Self.day
        let refunded = try #require(
            SubscriptionState(originalTransactionId: Self.original, notifications: rows, atMilliseconds: 40 * Self.day))
        #expect(!refunded.isActive && refunded.isRevoked)
    }

    /// A renewal and its refund signed at the same instant (the refund follows at once): revoked,
    /// whatever the arrival order and whichever `notificationUUID` is larger.
    @Test func refundSignedWithItsRenewalRevokesIt() throws {
        for (renewalUUID, refundUUID) in [("a-renewal", "b-refund"), ("b-renewal", "a-refund")] {
            let renewal = StoredNotification(
                notificationUUID: renewalUUID, notificationType: "DID_RENEW", signedDate: 30 * Self.day, receivedDate: 1,
                transactionId: "3000000000000002", originalTransactionId: Self.original, purchaseDate: 30 * Self.day,
                expiresDate: 60 * Self.day, transactionSignedDate: 30 * Self.day, autoRenewStatus: 1, renewalSignedDate: 30 * Self.day,
                signedPayload: "renewal")
            var refund = renewal
            refund.notificationUUID = refundUUID
            refund.notificationType = "REFUND"
            refund.revocationDate = 30 * Self.day
            refund.autoRenewStatus = 0
            refund.signedPayload = "refund"
            for rows in [[renewal, refund], [refund, renewal]] {
                let state = try #require(
                    SubscriptionState(originalTransactionId: Self.original, notifications: rows, atMilliseconds: 40 * Self.day))
                #expect(state.isRevoked && !state.isActive, "\(renewalUUID) \(rows.map(\.notificationType))")
                #expect(state.autoRenewStatus == 0)
            }
        }
    }

    /// Two notifications with equal signed dates that disagree: the same state and the same
    /// list order in both stores, whatever the arrival order.
    static func ties() -> [StoredNotification] {
        [
            StoredNotification(
                notificationUUID: "b-later-uuid", notificationType: "DID_CHANGE_RENEWAL_STATUS", signedDate: 5000, receivedDate: 1,
                originalTransactionId: "7", autoRenewStatus: 0, renewalSignedDate: 5000, signedPayload: "b"),
            StoredNotification(
                notificationUUID: "a-earlier-uuid", notificationType: "DID_CHANGE_RENEWAL_STATUS", signedDate: 5000, receivedDate: 2,
                originalTransactionId: "7", autoRenewStatus: 1, renewalSignedDate: 5000, signedPayload: "a"),
        ]
    }

    /// What a store says about the ties, filled in `order`.
    static func tieAnswer(_ store: any NotificationStore, order: [Int]) throws -> [String] {
        let rows = ties()
        for index in order { _ = try store.store(rows[index]) }
        let state = try store.subscriptionState(originalTransactionId: "7", at: Date(timeIntervalSince1970: 10))
        return try store.notifications(.all).map(\.notificationUUID) + ["\(state?.autoRenewStatus ?? -1)"]
    }

    @Test func equalSignedDatesGiveOneAnswerInSQLite() throws {
        let first = try Self.tieAnswer(try SQLiteNotificationStore(path: temporaryDatabase("ties-1")), order: [0, 1])
        let second = try Self.tieAnswer(try SQLiteNotificationStore(path: temporaryDatabase("ties-2")), order: [1, 0])
        #expect(first == second)
        #expect(first == ["a-earlier-uuid", "b-later-uuid", "0"])
    }

    /// U+0000 in any text value: refused (the same code in both stores), nothing stored.
    static func expectRefusesNUL(_ store: any NotificationStore) throws {
        let first = StoredNotification(notificationUUID: "nul-\u{0}-1", receivedDate: 1, signedPayload: "p")
        let second = StoredNotification(notificationUUID: "nul-\u{0}-2", receivedDate: 1, signedPayload: "p")
        let product = StoredNotification(notificationUUID: "nul-product", receivedDate: 1, productId: "a\u{0}b", signedPayload: "p")
        for row in [first, second, product] {
            #expect {
                _ = try store.store(row)
            } throws: { error in
                (error as? NotificationStoreError)?.code == .unsupportedValue
            }
        }
        #expect(try store.notifications(.all).filter { $0.notificationUUID.hasPrefix("nul") }.isEmpty)
        // Everything else goes through exactly, multi-byte text included.
        let text = StoredNotification(notificationUUID: "ü€😀", receivedDate: 1, productId: "ü€😀\u{1}", signedPayload: "p")
        #expect(try store.store(text) == .stored)
        #expect(try store.notifications(NotificationQuery(notificationUUID: "ü€😀")) == [text])
    }

    @Test func sqliteRefusesNUL() throws {
        try Self.expectRefusesNUL(try SQLiteNotificationStore(path: temporaryDatabase()))
    }

    /// The same two checks against PostgreSQL: one order and one state, one answer to U+0000.
    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(2)))
    func postgresAgreesWithSQLite() throws {
        let cluster = try PostgresCluster.start(label: "agree")
        defer { cluster.stop() }
        let first = try Self.tieAnswer(try PostgresNotificationStore(url: try cluster.createDatabase("a")), order: [0, 1])
        let second = try Self.tieAnswer(try PostgresNotificationStore(url: try cluster.createDatabase("b")), order: [1, 0])
        let sqlite = try Self.tieAnswer(try SQLiteNotificationStore(path: temporaryDatabase("ties-pg")), order: [1, 0])
        #expect(first == second && first == sqlite, "\(first) \(second) \(sqlite)")
        try Self.expectRefusesNUL(try PostgresNotificationStore(url: try cluster.createDatabase("c")))
        for type in ["REFUND_DECLINED", "CONSUMPTION_REQUEST"] {
            let store = try PostgresNotificationStore(url: try cluster.createDatabase("s\(type.lowercased())"))
            for row in Self.scenario(type).reversed() { _ = try store.store(row) }
            let state = try store.subscriptionState(originalTransactionId: Self.original, at: Date(timeIntervalSince1970: 40 * 86_400))
            #expect(state?.isActive == true && state?.expiresDate == 60 * Self.day, "\(type)")
        }
    }

    /// Deleting, replacing or truncating the file, or deleting its -wal, under an open store: the
    /// next commit fails (nothing acknowledged that the file at the path would not hold), health
    /// says so, and the store reopens the path by itself afterwards.
    @Test func theStoreKnowsItsFile() throws {
        for fault in ["delete", "replace", "truncate", "delete-wal"] {
            let path = temporaryDatabase(fault)
            let store = try SQLiteNotificationStore(path: path)
            for index in 0..<3 { #expect(try store.store(row("\(fault)-before-\(index)")) == .stored) }
            switch fault {
            case "delete": try FileManager.default.removeItem(atPath: path)
            case "replace":
                try FileManager.default.copyItem(atPath: path, toPath: path + ".copy")
                _ = rename(path + ".copy", path)
            case "truncate": _ = truncate(path, 0)
            default: try FileManager.default.removeItem(atPath: path + "-wal")
            }
            #expect(!store.health().isAvailable, "\(fault): health after the fault")
            var acknowledged: [String] = []
            for index in 0..<4 {
                let uuid = "\(fault)-after-\(index)"
                if (try? store.store(row(uuid))) != nil { acknowledged.append(uuid) }
            }
            store.close()
            let found = (try? SQLiteNotificationStore(path: path, options: .reading).notifications(.all).map(\.notificationUUID)) ?? []
            #expect(Set(acknowledged).isSubset(of: Set(found)), "\(fault): acknowledged \(acknowledged), found \(found)")
            if fault != "truncate" { #expect(!acknowledged.isEmpty, "\(fault): the store did not reopen its path") }
        }
    }

    /// After close(), the database file alone (copied without its -wal) holds every row.
    @Test func closeLeavesEverythingInTheFile() throws {
        let path = temporaryDatabase()
        let store = try SQLiteNotificationStore(path: path)
        for index in 0..<40 { _ = try store.store(row("c\(index)")) }
        store.close()
        #expect(throws: NotificationStoreError.self) { try store.store(row("late")) }
        let copy = temporaryDatabase("copy")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(try SQLiteNotificationStore(path: copy, options: .reading).notifications(.all).count == 40)
    }
}
