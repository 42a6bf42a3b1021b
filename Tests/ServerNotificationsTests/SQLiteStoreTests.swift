import Foundation
import Internals
import ServerNotifications
import TestSupport
import Testing

@Suite struct SQLiteStoreTests {
    /// Stored once, read back with every filter, still there after reopening.
    @Test func storesOnceAndReadsBack() throws {
        let path = temporaryDatabase()
        do {
            let store = try SQLiteNotificationStore(path: path)
            #expect(try store.store(row("a", type: "SUBSCRIBED", original: "1", signed: 3000)) == .stored)
            #expect(try store.store(row("b", type: "DID_RENEW", original: "1", signed: 2000)) == .stored)
            #expect(try store.store(row("c", type: "DID_RENEW", original: "2", signed: 1000)) == .stored)
            #expect(try store.store(row("d", type: "TEST")) == .stored)
            // The same UUID again, even with other contents: nothing written.
            #expect(try store.store(row("a", type: "EXPIRED", original: "9", signed: 1)) == .duplicate)

            let all = try store.notifications(.all)
            // Ordered by signed date (d has none: its received date, the latest).
            #expect(all.map(\.notificationUUID) == ["c", "b", "a", "d"])
            #expect(all.first { $0.notificationUUID == "a" }?.notificationType == "SUBSCRIBED")
            #expect(try store.notifications(NotificationQuery(notificationType: "DID_RENEW")).map(\.notificationUUID) == ["c", "b"])
            #expect(try store.notifications(NotificationQuery(originalTransactionId: "1")).map(\.notificationUUID) == ["b", "a"])
            #expect(try store.notifications(NotificationQuery(signedSince: 2000)).map(\.notificationUUID) == ["b", "a", "d"])
            #expect(try store.notifications(NotificationQuery(notificationUUID: "c")).count == 1)
            #expect(try store.notifications(NotificationQuery(limit: 2)).map(\.notificationUUID) == ["c", "b"])
            let health = store.health()
            #expect(health.isAvailable && health.kind == "sqlite" && health.location == path)
            #expect(health.storedNotifications == 4 && health.commits == 5)
        }
        // Reopened (without creating): every row is there, exactly as written.
        let reopened = try SQLiteNotificationStore(path: path, create: false)
        let rows = try reopened.notifications(.all)
        #expect(rows.count == 4)
        #expect(rows.first { $0.notificationUUID == "a" } == row("a", type: "SUBSCRIBED", original: "1", signed: 3000))
    }

    /// Every column survives the round trip, NULLs included.
    @Test func everyColumnRoundTrips() throws {
        let store = try SQLiteNotificationStore(path: temporaryDatabase())
        let full = StoredNotification(
            notificationUUID: "u", notificationType: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signedDate: 1, receivedDate: 2,
            bundleId: "com.example.app", environment: "Production", appAppleId: 531_412, transactionId: "20000001",
            originalTransactionId: "20000000", productId: "p", purchaseDate: 3, expiresDate: 4, revocationDate: 5, transactionSignedDate: 6,
            autoRenewStatus: 1, isInBillingRetryPeriod: true, gracePeriodExpiresDate: 7, renewalSignedDate: 8, signedPayload: "eyJ.x.y")
        _ = try store.store(full)
        _ = try store.store(StoredNotification(notificationUUID: "v", receivedDate: 9, isInBillingRetryPeriod: false, signedPayload: "p"))
        #expect(try store.notifications(NotificationQuery(notificationUUID: "u")) == [full])
        #expect(try store.notifications(NotificationQuery(transactionId: "20000001")) == [full])
        #expect(try store.notifications(NotificationQuery(transactionId: "20000000")).isEmpty, "an original id is not a transaction id")
        #expect(
            try store.notifications(NotificationQuery(notificationUUID: "v"))
                == [StoredNotification(notificationUUID: "v", receivedDate: 9, isInBillingRetryPeriod: false, signedPayload: "p")])
    }

    /// A missing file, or a file that is not a notification store, is refused when not creating.
    @Test func refusesWhatIsNotAStore() throws {
        let missing = temporaryDatabase()
        #expect(throws: NotificationStoreError.self) { try SQLiteNotificationStore(path: missing, create: false) }
        #expect(!FileManager.default.fileExists(atPath: missing))
        let other = temporaryDatabase("other")
        try Data("not a database, just text that is long enough to be read as a header".utf8).write(to: URL(fileURLWithPath: other))
        do {
            _ = try SQLiteNotificationStore(path: other)
            Issue.record("a text file opened as a store")
        } catch {
            #expect(error.code == .unavailable || error.code == .failed, "\(error)")
        }
        // A directory is no database file.
        #expect(throws: NotificationStoreError.self) { try SQLiteNotificationStore(path: temporaryDirectory("dir").path, create: true) }
        #expect(throws: NotificationStoreError.self) { try NotificationStores.open("") }
    }

    /// One sender commits once per notification; sixteen concurrent senders share commits (group
    /// commit), and every row is stored exactly once.
    @Test func groupCommitSharesCommits() throws {
        let single = try SQLiteNotificationStore(path: temporaryDatabase("single"))
        for index in 0..<40 { _ = try single.store(row("s\(index)")) }
        #expect(single.health().commits == 40)

        let store = try SQLiteNotificationStore(path: temporaryDatabase("group"))
        let outcomes = Locked([NotificationStoreOutcome]())
        concurrently(16) { thread in
            for index in 0..<40 {
                // Each thread also repeats another thread's UUIDs: duplicates across threads.
                let uuid = "n\((thread * 40 + index) % 320)"
                let outcome = try? store.store(row(uuid))
                outcomes.withLock { $0.append(outcome ?? .duplicate) }
            }
        }
        let stored = outcomes.withLock { $0.count { $0 == .stored } }
        #expect(stored == 320)
        #expect(try store.notifications(.all).count == 320)
        let health = store.health()
        #expect(health.storedNotifications == 320)
        #expect(health.commits < 640, "16 senders: \(health.commits) commits for 640 notifications")
    }

    /// Two stores (two processes' worth of connections) on one file: concurrent deliveries of the
    /// same notifications keep one row each.
    @Test func twoStoresOnOneFileStoreOnce() throws {
        let path = temporaryDatabase()
        let first = try SQLiteNotificationStore(path: path)
        let second = try SQLiteNotificationStore(path: path)
        let stored = Locked(0)
        concurrently(8) { thread in
            let store = thread.isMultiple(of: 2) ? first : second
            for index in 0..<50 where (try? store.store(row("x\(index)"))) == .stored {
                stored.withLock { $0 += 1 }
            }
        }
        #expect(stored.withLock { $0 } == 50)
        #expect(try first.notifications(.all).count == 50)
        #expect(try second.notifications(.all).map(\.notificationUUID).sorted() == (0..<50).map { "x\($0)" }.sorted())
    }
}
