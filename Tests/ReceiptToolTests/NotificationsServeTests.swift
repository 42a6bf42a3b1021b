import Foundation
import Glibc
import Internals
import JWS
import RMStore
import ReceiptSigning
import StoreTesting
import TestSupport
import Testing

/// `receipt-tool serve --notifications-db` as Apple meets it: real processes on 127.0.0.1, real
/// signatures, real SQLite files and PostgreSQL clusters of their own.
@Suite struct NotificationsServeTests {
    typealias F = NotificationFixtures

    /// The simulated App Store posts its notifications to `serve` (SQLite); `notifications list`
    /// shows each once with Apple's ids, `status` gives the simulation's state; forgeries,
    /// malformed, oversized and slow bodies are refused without storing and the server keeps
    /// serving; `/health` reports the store; SIGTERM stops it.
    @MainActor
    @Test(.timeLimit(.minutes(3))) func sqliteEndToEnd() async throws {
        let database = temporaryDirectory().appendingPathComponent("n.db").path
        let server = try ServeProcess(try F.serveArguments(database: database) + ["--request-timeout", "1"])
        try #require(server.port != 0, "\(server.firstLine)")
        #expect(server.firstLine.contains("notifications → sqlite \(database)"))

        let clock = SimulatedClock()
        let pki = try PKIs.jws.get()
        let store = SimulatedAppStore(
            catalog: F.catalog(), bundleIdentifier: F.bundle, jwsIssuer: JWSIssuer(pki: pki, environment: .production), clock: clock,
            deliversAutomatically: false)
        let sender = try F.sender(url: try #require(URL(string: server.baseURL + "/notifications")), clock: clock)
        store.notificationSender = sender
        for (product, user) in [(F.monthly, "a"), (F.yearly, "b"), (F.monthly, "c"), (F.level, "d")] {
            store.add(Payment(productIdentifier: product, applicationUsername: user))
            store.processAllEvents()
        }
        store.advanceClock(by: 31 * 86_400)
        store.setAutoRenew(false, productIdentifier: F.yearly)
        store.advanceClock(by: 31 * 86_400)
        // A refund of the current period of the third subscription.
        let third = store.purchaseHistory[2].originalTransactionIdentifier
        store.refund(
            transactionIdentifier: try #require(store.purchaseHistory.last { $0.originalTransactionIdentifier == third })
                .transactionIdentifier)
        try sender.sendTestNotification()
        store.processAllEvents()
        try await onThread { sender.waitUntilIdle() }
        let deliveries = sender.deliveries
        #expect(deliveries.count == 11, "\(deliveries.map(\.event.type))")
        #expect(deliveries.allSatisfy { $0.attempts.map(\.result) == [.status(200)] })

        let rows = try F.list(database)
        #expect(rows.count == deliveries.count)
        #expect(Set(rows.compactMap { $0["notificationUUID"] as? String }) == Set(deliveries.map(\.notificationUUID)))
        for row in rows {
            for key in [
                "notificationUUID", "notificationType", "subtype", "signedDate", "receivedDate", "bundleId", "environment", "transactionId",
                "originalTransactionId",
            ] {
                #expect(row.keys.contains(key), "\(key) missing in \(row)")
            }
            #expect(row["bundleId"] as? String == F.bundle && row["environment"] as? String == "Production")
        }
        let test = try #require(rows.first { $0["notificationType"] as? String == "TEST" })
        #expect(test["transactionId"] is NSNull && test["subtype"] is NSNull && test["originalTransactionId"] is NSNull)
        // Ids are the JWS's strings.
        let firstPurchase = store.purchaseHistory[0]
        #expect(
            rows.contains {
                $0["transactionId"] as? String == firstPurchase.transactionIdentifier && $0["notificationType"] as? String == "SUBSCRIBED"
            })
        #expect(try F.list(database, ["--type", "DID_RENEW"]).count == 4)
        #expect(try F.list(database, ["--original-transaction-id", firstPurchase.transactionIdentifier]).count == 3)

        try expectStatusesMatch(store: store, database: database)

        // Hints: a renewal's transaction id names its original transaction id; a --type Apple does
        // not document exits 64 naming the valid ones, a documented one without rows lists nothing.
        let renewal = try #require(store.purchaseHistory.first { $0.transactionIdentifier != $0.originalTransactionIdentifier })
        let byTransaction = try ReceiptTool.run(["notifications", "status", "--db", database, renewal.transactionIdentifier])
        #expect(byTransaction.status == 1)
        #expect(
            byTransaction.stderr.contains(
                "is a transaction of original transaction \"\(renewal.originalTransactionIdentifier)\": ask 'notifications status"),
            "\(byTransaction.stderr)")
        #expect(try ReceiptTool.run(["notifications", "status", "--db", database, "1234"]).stderr.contains("is a transaction") == false)
        let unknownType = try ReceiptTool.run(["notifications", "list", "--db", database, "--type", "DID_RENEWED"])
        #expect(unknownType.status == 64 && unknownType.stdout.isEmpty)
        #expect(unknownType.stderr.contains("\"DID_RENEWED\" is not a notification type: SUBSCRIBED, "), "\(unknownType.stderr)")
        #expect(unknownType.stderr.contains(" DID_RENEW, ") && unknownType.stderr.contains("ONE_TIME_CHARGE"))
        #expect(try F.list(database, ["--type", "PRICE_INCREASE"]).isEmpty)

        // Refused without storing, each with the failed check named.
        let other = try PKIs.otherJWS.get()
        func forged(_ sender: AppStoreNotificationSender) throws -> [UInt8] {
            try sender.signedBody(for: ServerNotificationEvent(type: .test), notificationUUID: UUID().uuidString, signedDate: clock.now)
        }
        let none = URL(fileURLWithPath: "/")
        // A chain to no anchor, another app or environment may be our configuration: 500.
        let refusals: [(String, [UInt8], String, Int)] = [
            ("forged", try forged(try F.sender(url: none, clock: clock, signer: other.jwsSigner())), "chain", 500),
            ("another app", try forged(try F.sender(url: none, clock: clock, bundle: "com.other.app")), "bundleIdentifier", 500),
            ("sandbox", try forged(try F.sender(url: none, clock: clock, environment: .sandbox)), "environment", 500),
            ("not JSON", Array("hello".utf8), "body", 400),
            ("no signedPayload", Array("{}".utf8), "body", 400),
        ]
        for (name, body, check, status) in refusals {
            let response = try #require(F.post(port: server.port, body), "\(name)")
            #expect(response.status == status, "\(name)")
            let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            #expect(json?["status"] as? String == "rejected" && json?["check"] as? String == check, "\(name): \(response.bodyText)")
        }
        // Oversized: 413 from the HTTP layer.
        let oversized = try RawHTTPConnection(port: server.port)
        oversized.send("POST /notifications HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(5 << 20)\r\n\r\n{\"signedPayload\":\"")
        #expect(try oversized.readResponse().status == 413)
        // Slow: a body that never completes gets 408 after the request timeout (1 s here).
        let slow = try RawHTTPConnection(port: server.port, timeout: 5)
        slow.send("POST /notifications HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"signed")
        #expect(try slow.readResponse().status == 408)
        // Still serving: a genuine notification is accepted, the same again is a duplicate.
        let (uuid, body) = try #require(try F.bodies(1).first)
        let accepted = try #require(F.post(port: server.port, body))
        #expect(accepted.status == 200 && accepted.bodyText == #"{"status":"accepted","notificationUUID":"\#(uuid)"}"#)
        let duplicate = try #require(F.post(port: server.port, body))
        #expect(duplicate.status == 200 && duplicate.bodyText.contains(#""status":"duplicate""#))
        #expect(try F.list(database).count == deliveries.count + 1)
        // A type Apple adds later is listed once a verified notification has it.
        let future = try F.sender(url: none, clock: clock).signedBody(
            for: ServerNotificationEvent(type: NotificationType(rawValue: "FUTURE_TYPE")), notificationUUID: UUID().uuidString,
            signedDate: clock.now)
        #expect(try #require(F.post(port: server.port, future)).status == 200)
        #expect(try F.list(database, ["--type", "FUTURE_TYPE"]).count == 1)

        // Health reports the store.
        let health = try RawHTTPConnection(port: server.port).sendAndRead("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(health.status == 200)
        #expect(
            health.bodyText.contains(#""notifications":{"path":"/notifications","store":"sqlite","location":"\#(database)","status":"ok""#))
        let stopped = server.stop(signal: SIGTERM)
        #expect(stopped.status == 0)
    }

    /// `notifications status` for every original transaction the simulation knows equals the
    /// simulation's own state at its current time.
    @MainActor
    func expectStatusesMatch(store: SimulatedAppStore, database: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let originals = Set(store.purchaseHistory.map(\.originalTransactionIdentifier))
        for original in originals.sorted() {
            let json = try F.status(database, original, at: store.clock.now)
            let latest = store.purchaseHistory.last { $0.originalTransactionIdentifier == original }
            #expect(json["expiresDate"] as? Int64 == F.milliseconds(latest?.expirationDate), "\(original)", sourceLocation: sourceLocation)
            #expect(json["latestTransactionId"] as? String == latest?.transactionIdentifier, sourceLocation: sourceLocation)
            if let status = store.subscriptionStatus(originalTransactionIdentifier: original) {
                let renewal = store.renewalInfoContents(originalTransactionIdentifier: original)
                #expect(
                    json["active"] as? Bool == (status == .active || status == .billingGracePeriod), "\(original) \(status)",
                    sourceLocation: sourceLocation)
                #expect(json["revoked"] as? Bool == (status == .revoked), "\(original)", sourceLocation: sourceLocation)
                #expect(
                    json["autoRenewStatus"] as? Int64 == renewal?.autoRenewStatus.rawValue, "\(original)", sourceLocation: sourceLocation)
            } else {
                // A one-time purchase: active unless revoked, no renewal.
                #expect(json["active"] as? Bool == (latest?.cancellationDate == nil), "\(original)", sourceLocation: sourceLocation)
                #expect(json["revoked"] as? Bool == (latest?.cancellationDate != nil), sourceLocation: sourceLocation)
                #expect(json["autoRenewStatus"] is NSNull, sourceLocation: sourceLocation)
            }
        }
    }

    // MARK: Nothing lost

    /// Senders on several threads post notifications while the server is killed with SIGKILL at
    /// random moments (and, once, stopped with SIGTERM) and restarted on the same store, resending
    /// what was not acknowledged and some of what was: afterwards every acknowledged notification
    /// is stored exactly once.
    func nothingLost(database: String) throws {
        let count = 240
        let bodies = try F.bodies(count)
        let port = freePort()
        let arguments = try F.serveArguments(database: database) + ["--port", String(port), "--quiet"]
        let server = Locked(try ServeProcess(arguments))
        try #require(server.withLock { $0.port } == port)
        let next = Locked(0)
        let acknowledged = Locked([String: Int]())
        let done = Locked(0)
        let senders = 4
        for _ in 0..<senders {
            Thread {
                while let index = next.withLock({ value -> Int? in
                    guard value < count else { return nil }
                    value += 1
                    return value - 1
                }) {
                    let (uuid, body) = bodies[index]
                    var answered = false
                    while !answered {
                        if let response = F.post(port: port, body, timeout: 5), response.status == 200 {
                            answered = true
                        } else {
                            usleep(10_000)
                        }
                    }
                    acknowledged.withLock { $0[uuid, default: 0] += 1 }
                    // Now and then, Apple's retry of something already acknowledged.
                    if index.isMultiple(of: 7) {
                        let again = F.post(port: port, body, timeout: 5)
                        if again?.status == 200 { acknowledged.withLock { $0[uuid, default: 0] += 1 } }
                    }
                }
                done.withLock { $0 += 1 }
            }.start()
        }
        // Stop the server after a random number (10 to 40) of further acknowledgements each time.
        var kills = 0
        var terms = 0
        var stopAt = Int.random(in: 10...40)
        while done.withLock({ $0 }) < senders {
            usleep(2_000)
            let progress = acknowledged.withLock { $0.count }
            guard kills + terms < 7, progress >= stopAt, next.withLock({ $0 }) < count else { continue }
            usleep(UInt32.random(in: 0...5_000))
            stopAt = progress + Int.random(in: 10...40)
            let graceful = kills == 3 && terms == 0
            let stopped = server.withLock { $0.stop(signal: graceful ? SIGTERM : SIGKILL) }
            if graceful {
                #expect(stopped.status == 0, "SIGTERM: \(stopped.stderr)")
                terms += 1
            } else {
                kills += 1
            }
            let restarted = try ServeProcess(arguments)
            try #require(restarted.port == port, "restart: \(restarted.firstLine)")
            server.withLock { $0 = restarted }
        }
        #expect(kills >= 3, "the senders finished before the server was killed three times")
        _ = server.withLock { $0.stop() }

        let rows = try F.list(database)
        let stored = rows.compactMap { $0["notificationUUID"] as? String }
        let acknowledgedUUIDs = acknowledged.withLock { Set($0.keys) }
        #expect(acknowledgedUUIDs.count == count)
        #expect(stored.count == count, "rows: \(stored.count), acknowledged: \(acknowledgedUUIDs.count)")
        #expect(Set(stored) == acknowledgedUUIDs)
        #expect(Set(stored).count == stored.count, "a notification stored twice")
    }

    @Test(.timeLimit(.minutes(3))) func nothingLostWithSQLite() throws {
        try nothingLost(database: temporaryDirectory().appendingPathComponent("n.db").path)
    }

    @Test(
        .enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"),
        .timeLimit(.minutes(3))) func nothingLostWithPostgreSQL() throws
    {
        let cluster = try PostgresCluster.start(label: "killed")
        defer { cluster.stop() }
        try nothingLost(database: try cluster.createDatabase("notifications"))
    }

    // MARK: Apple's retries at two instances

    /// Two instances started at the same moment on one (empty) store; each notification is posted to
    /// both at once, as Apple's retry can reach another instance while the first attempt is still
    /// in flight: both answer 200, one of them `accepted`, and it is stored once.
    func retriesStoreOnce(database: String) throws {
        let arguments = try F.serveArguments(database: database) + ["--quiet"]
        let started = Locked([Result<ServeProcess, any Error>]())
        concurrentlyRun(2) { _ in
            let result = Result { try ServeProcess(arguments) }
            started.withLock { $0.append(result) }
        }
        let instances = try started.withLock { $0 }.map { try $0.get() }
        try #require(instances.allSatisfy { $0.port != 0 }, "\(instances.map(\.firstLine))")
        let bodies = try F.bodies(60)
        let answers = Locked([String: [String]]())
        for (uuid, body) in bodies {
            concurrentlyRun(2) { which in
                let response = F.post(port: instances[which].port, body)
                let status = response.map {
                    $0.status == 200 ? ($0.bodyText.contains("accepted") ? "accepted" : "duplicate") : "\($0.status)"
                }
                answers.withLock { $0[uuid, default: []].append(status ?? "no answer") }
            }
        }
        for (uuid, outcome) in answers.withLock({ $0 }) {
            #expect(outcome.sorted() == ["accepted", "duplicate"], "\(uuid): \(outcome)")
        }
        for instance in instances { #expect(instance.stop().status == 0) }
        let stored = try F.list(database).compactMap { $0["notificationUUID"] as? String }
        #expect(stored.count == 60 && Set(stored) == Set(bodies.map(\.uuid)))
    }

    @Test(.timeLimit(.minutes(2))) func retriesToTwoInstancesStoreOnceWithSQLite() throws {
        try retriesStoreOnce(database: temporaryDirectory().appendingPathComponent("n.db").path)
    }

    @Test(
        .enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"),
        .timeLimit(.minutes(2))) func retriesToTwoInstancesStoreOnceWithPostgreSQL() throws
    {
        let cluster = try PostgresCluster.start(label: "retries")
        defer { cluster.stop() }
        try retriesStoreOnce(database: try cluster.createDatabase("notifications"))
    }
}

/// Runs `body` on `count` threads released at the same moment, and waits for all of them.
func concurrentlyRun(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    let gate = DispatchSemaphore(value: 0)
    for index in 0..<count {
        group.enter()
        Thread {
            gate.wait()
            body(index)
            group.leave()
        }.start()
    }
    for _ in 0..<count { gate.signal() }
    group.wait()
}

extension RawHTTPConnection {
    /// Sends a request and reads its response.
    func sendAndRead(_ request: String) throws -> RawHTTPResponse {
        send(request)
        return try readResponse()
    }
}
