import Foundation
import Internals
import JWS
import ServerNotifications
import StoreTesting
import TestSupport
import Testing

/// The PostgreSQL store against a cluster of its own (initdb into a temporary directory, a free
/// port of 127.0.0.1, removed afterwards). Skipped, saying why, on a machine without Debian's
/// PostgreSQL server binaries; `.ci/run` makes sure they are there, so CI runs it.
@Suite(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .serialized)
struct PostgresStoreTests {
    /// Schema, uniqueness, order, group commit, several instances, and the receiver's 503 when the
    /// database is gone: one cluster for the whole story (starting one takes seconds).
    @MainActor
    @Test(.timeLimit(.minutes(3))) func theSharedStore() throws {
        let cluster = try PostgresCluster.start(label: "store")
        defer { cluster.stop() }

        // Eight instances start at once on an empty database: every one comes up.
        let url = try cluster.createDatabase("notifications")
        let opened = Locked([Result<PostgresNotificationStore, NotificationStoreError>]())
        concurrently(8) { _ in
            let result = Result { () throws(NotificationStoreError) in try PostgresNotificationStore(url: url) }
            opened.withLock { $0.append(result) }
        }
        let stores = try opened.withLock { $0 }.map { try $0.get() }
        #expect(stores.count == 8)
        let store = stores[0]
        #expect(store.location == "127.0.0.1:\(cluster.port)/notifications")

        // Stored once, every column back, the same order as SQLite's.
        #expect(try store.store(row("a", type: "SUBSCRIBED", original: "1", signed: 3000)) == .stored)
        #expect(try store.store(row("b", type: "DID_RENEW", original: "1", signed: 2000)) == .stored)
        #expect(try stores[1].store(row("a", type: "EXPIRED")) == .duplicate)
        let full = StoredNotification(
            notificationUUID: "u", notificationType: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signedDate: 1, receivedDate: 2,
            bundleId: "com.example.app", environment: "Production", appAppleId: 531_412, transactionId: "20000001",
            originalTransactionId: "20000000", productId: "p", purchaseDate: 3, expiresDate: 4, revocationDate: 5, transactionSignedDate: 6,
            autoRenewStatus: 1, isInBillingRetryPeriod: true, gracePeriodExpiresDate: 7, renewalSignedDate: 8, signedPayload: "eyJ.x.y")
        #expect(try store.store(full) == .stored)
        #expect(try stores[2].notifications(NotificationQuery(notificationUUID: "u")) == [full])
        #expect(try store.notifications(NotificationQuery(transactionId: "20000001")) == [full])
        #expect(try store.notifications(NotificationQuery(transactionId: "20000000")).isEmpty)
        #expect(try store.notifications(NotificationQuery(originalTransactionId: "1")).map(\.notificationUUID) == ["b", "a"])
        #expect(try store.notifications(NotificationQuery(notificationType: "SUBSCRIBED")).count == 1)
        #expect(try store.notifications(NotificationQuery(signedSince: 2000, limit: 1)).map(\.notificationUUID) == ["b"])

        // Sixteen threads over two instances deliver 200 notifications, each twice: one row each.
        let stored = Locked(0)
        let failures = Locked([String]())
        concurrently(16) { thread in
            let instance = stores[thread % 2]
            for index in 0..<25 {
                let uuid = "c\((thread / 2) * 25 + index)"
                do {
                    if try instance.store(row(uuid)) == .stored { stored.withLock { $0 += 1 } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(stored.withLock { $0 } == 200)
        #expect(try store.notifications(.all).count == 203)
        #expect(try store.walSyncCount() > 0)
        #expect(store.health().isAvailable)

        // The receiver over PostgreSQL: genuine notifications accepted; the database gone: 503.
        let receiving = try receiver(store: stores[3])
        let app = try SimulatedApp(transport: ReceiverTransport(receiver: receiving))
        let original = app.buy(IDs.monthly)
        app.advance(days: 31)
        app.flush()
        #expect(app.sender.deliveries.allSatisfy { $0.isDelivered })
        let state = try stores[4].subscriptionState(originalTransactionId: original, at: app.clock.now)
        #expect(state?.isActive == true && state?.notificationCount == 2)

        cluster.stop()
        let body = try app.sender.signedBody(
            for: ServerNotificationEvent(type: .test), notificationUUID: UUID().uuidString, signedDate: app.clock.now)
        guard case .unavailable(let error) = receiving.receive(body: body) else {
            Issue.record("a store without its database acknowledged a notification")
            return
        }
        #expect(error.code == .failed || error.code == .unavailable, "\(error)")
        #expect(!stores[5].health().isAvailable)
        #expect(throws: NotificationStoreError.self) { try PostgresNotificationStore(url: url, connectTimeout: 2) }
    }
}
