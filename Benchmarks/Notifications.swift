import Foundation
import JWS
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import ServerNotifications
import TestSupport

/// `Benchmarks --notifications sqlite|postgres SENDERS COUNT [--db LOCATION]`: acknowledged
/// notifications per second through the real receiver (verification of the outer and two nested
/// JWS, then a durable commit), with SENDERS threads sending COUNT distinct notifications between
/// them, and what the commits cost.
///
/// - SQLite: a new database file in `--db` (a directory; default `.build/notifications-bench`, on
///   the disk the package is on, not a RAM-backed /tmp). Reports commits per notification; the
///   fsync count comes from `strace -f -c -e trace=fsync,fdatasync` around the process
///   (scripts/notifications-bench.sh).
/// - PostgreSQL: a cluster of its own (TestSupport's PostgresCluster; `--db URL` uses an existing
///   database instead). Reports the server's WAL syncs per notification from `pg_stat_wal`
///   (`wal_sync`, read before and after).
enum NotificationsBenchmark {
    static func run(store kind: String, senders: Int, count: Int, location: String?) throws {
        let pki = try PKIs.jws.get()
        let signer = pki.jwsSigner()
        let now: Int64 = 1_700_000_000_000
        let transaction = try signer.sign(
            payload: Array(
                #"{"transactionId":"2000000000000002","originalTransactionId":"2000000000000001","bundleId":"com.example.app","productId":"com.example.monthly","purchaseDate":\#(now),"originalPurchaseDate":\#(now - 2_592_000_000),"expiresDate":\#(now + 2_592_000_000),"quantity":1,"type":"Auto-Renewable Subscription","inAppOwnershipType":"PURCHASED","signedDate":\#(now),"environment":"Production","transactionReason":"RENEWAL"}"#
                    .utf8))
        let renewal = try signer.sign(
            payload: Array(
                #"{"originalTransactionId":"2000000000000001","autoRenewProductId":"com.example.monthly","productId":"com.example.monthly","autoRenewStatus":1,"isInBillingRetryPeriod":false,"signedDate":\#(now),"environment":"Production"}"#
                    .utf8))
        let bodies: [[UInt8]] = try (0..<count).map { index in
            let uuid = String(format: "b0000000-0000-4000-8000-%012d", index)
            let token = try signer.sign(
                payload: Array(
                    #"{"notificationType":"DID_RENEW","notificationUUID":"\#(uuid)","data":{"appAppleId":531412,"bundleId":"com.example.app","environment":"Production","signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(renewal)","status":1},"version":"2.0","signedDate":\#(now)}"#
                        .utf8))
            return Array(#"{"signedPayload":"\#(token)"}"#.utf8)
        }

        var cluster: PostgresCluster?
        defer { cluster?.stop() }
        var postgresURL: String?
        let makeStore: () throws -> any NotificationStore
        switch kind {
        case "sqlite":
            let directory = URL(fileURLWithPath: location ?? ".build/notifications-bench")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("bench-\(senders)-\(UUID().uuidString.prefix(8)).db").path
            makeStore = { try SQLiteNotificationStore(path: path) }
        case "postgres":
            if let location {
                postgresURL = location
            } else {
                let started = try PostgresCluster.start(label: "bench")
                cluster = started
                postgresURL = try started.createDatabase("bench")
            }
            let url = postgresURL ?? ""
            makeStore = { try PostgresNotificationStore(url: url, maximumConnections: max(senders, 1)) }
        default:
            throw BenchmarkError(description: "--notifications needs sqlite or postgres, found \(kind)")
        }
        // Each PostgreSQL backend reports its WAL statistics when it exits or at most once a
        // second: read them with a connection of its own, after the senders' connections closed.
        func walSyncs() -> Int64? {
            guard let url = postgresURL else { return nil }
            return try? PostgresNotificationStore(url: url, maximumConnections: 1).walSyncCount()
        }

        let syncsBefore = walSyncs()
        let (seconds, commits, failures) = try measure(makeStore(), bodies: bodies, senders: senders, anchor: pki.root, warmUp: transaction)
        if postgresURL != nil { Thread.sleep(forTimeInterval: 1.5) }
        var line =
            "notifications store=\(kind) senders=\(senders) count=\(count) seconds=\(String(format: "%.3f", seconds)) "
            + "acknowledged_per_s=\(String(format: "%.0f", Double(count - failures) / seconds)) failures=\(failures) "
            + "commits=\(commits) commits_per_notification=\(String(format: "%.3f", Double(commits) / Double(count)))"
        if let before = syncsBefore, let after = walSyncs() {
            line +=
                " pg_wal_syncs=\(after - before) wal_syncs_per_notification=\(String(format: "%.3f", Double(after - before) / Double(count)))"
        }
        print(line)
    }

    /// Sends every body from `senders` threads through a receiver over `store`; returns the time,
    /// the commits and the bodies not acknowledged. The store is released on return.
    static func measure(_ store: any NotificationStore, bodies: [[UInt8]], senders: Int, anchor: Certificate, warmUp: String) -> (
        Double, Int, Int
    ) {
        let receiver = NotificationReceiver(
            verifier: NotificationVerifier(anchors: [anchor]),
            expectations: JWSExpectations(bundleIdentifier: "com.example.app", appAppleId: 531_412, environments: [.production]),
            store: store)
        // Warm the chain cache outside the measured window.
        _ = receiver.verifier.verify(Array(warmUp.utf8), expecting: .none, at: .signedDate)
        let commitsBefore = store.health().commits
        let next = SharedCounter()
        let failures = SharedCounter()
        let group = DispatchGroup()
        let start = Date()
        for _ in 0..<senders {
            group.enter()
            Thread {
                while let index = next.take(below: bodies.count) {
                    if !receiver.receive(body: bodies[index]).isAcknowledged { failures.add() }
                }
                group.leave()
            }.start()
        }
        group.wait()
        let seconds = Date().timeIntervalSince(start)
        return (seconds, store.health().commits - commitsBefore, failures.value)
    }
}

/// A counter shared by the sender threads.
final class SharedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0

    /// The next index below `limit`, or nil when all are taken.
    func take(below limit: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard current < limit else { return nil }
        current += 1
        return current - 1
    }

    func add() {
        lock.lock()
        current += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return current
    }
}
