import Foundation
import Glibc
import JSON
import JWS
import StoreTesting
import TestSupport
import Testing

/// `serve` keeps what it refuses, `notifications dead-letters` lists, retries and purges it, and
/// `GET /metrics` counts it: real processes on 127.0.0.1, SQLite and PostgreSQL.
@Suite struct DeadLettersServeTests {
    typealias F = NotificationFixtures
    static let newApp = "com.example.new"

    @Test(.timeLimit(.minutes(3))) func sqlite() throws {
        try Self.story(database: temporaryDirectory().appendingPathComponent("letters.db").path)
    }

    @Test(
        .enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(3)))
    func postgres() throws {
        let cluster = try PostgresCluster.start(label: "deadletters-cli")
        defer { cluster.stop() }
        try Self.story(database: try cluster.createDatabase("letters"))
    }

    /// `GET path` on `port`.
    static func get(port: UInt16, _ path: String) throws -> RawHTTPResponse {
        let connection = try RawHTTPConnection(port: port, timeout: 10)
        connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return try connection.readResponse()
    }

    /// The JSON lines `receipt-tool` printed.
    static func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    static func story(database: String) throws {
        let anchor = try F.anchorFile()
        let server = try ServeProcess(try F.serveArguments(database: database) + ["--log-format", "json"])
        try #require(server.port != 0, "\(server.firstLine)")
        let clock = SimulatedClock()
        let none = URL(fileURLWithPath: "/")
        let uuid = "de4d1e77-0000-4000-8000-000000000001"
        let unconfigured = try F.sender(url: none, clock: clock, bundle: newApp)
            .signedBody(for: ServerNotificationEvent(type: .test), notificationUUID: uuid, signedDate: clock.now)
        let genuine = try F.bodies(2)
        let token = try #require(try JSONValue.parse(genuine[0].body)["signedPayload"]?.stringValue)
        let forged = Array(#"{"signedPayload":"\#(token.dropLast(4))\#(token.hasSuffix("AAAA") ? "BBBB" : "AAAA")"}"#.utf8)

        // Accepted twice, a duplicate, an unconfigured app (500, kept), a forgery (400, kept).
        #expect(F.post(port: server.port, genuine[0].body)?.status == 200)
        #expect(F.post(port: server.port, genuine[1].body)?.status == 200)
        #expect(F.post(port: server.port, genuine[0].body)?.status == 200)
        let refused = try #require(F.post(port: server.port, unconfigured))
        #expect(refused.status == 500, "\(refused.bodyText)")
        let answer = try JSONValue.parse(refused.body)
        #expect(answer["check"]?.stringValue == "bundleIdentifier" && answer["retry"]?.boolValue == true)
        #expect(answer["deadLetter"]?.int64Value != nil)
        let forgery = try #require(F.post(port: server.port, forged))
        let forgeryCheck = try JSONValue.parse(forgery.body)["check"]?.stringValue
        #expect(forgery.status == 400 && forgeryCheck == "signature", "\(forgery.bodyText)")
        // Hostile bundle ids (quotes, a line feed, many of them) cannot grow the metrics unboundedly.
        for index in 0..<20 {
            let hostile = try F.sender(url: none, clock: clock, bundle: "evil\"\\\n\(index)")
                .signedBody(for: ServerNotificationEvent(type: .test), notificationUUID: UUID().uuidString, signedDate: clock.now)
            #expect(F.post(port: server.port, hostile)?.status == 500)
        }

        let response = try get(port: server.port, "/metrics")
        #expect(response.status == 200 && response.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let metrics = try PrometheusText(response.bodyText)
        let notifications = "rmstore_notifications_total"
        #expect(metrics.value(notifications, ["bundle_id": F.bundle, "type": "DID_RENEW", "outcome": "accepted"]) == 2)
        #expect(metrics.value(notifications, ["bundle_id": F.bundle, "type": "DID_RENEW", "outcome": "duplicate"]) == 1)
        #expect(metrics.value(notifications, ["bundle_id": F.bundle, "type": "DID_RENEW", "outcome": "rejected"]) == 1)
        #expect(metrics.value(notifications, ["bundle_id": newApp, "type": "TEST", "outcome": "dead_lettered"]) == 1)
        #expect(metrics.sum(notifications, ["outcome": "dead_lettered"]) == 21)
        // 16 other bundle ids get labels of their own (the new app and 15 hostile ones, escaped), then `other`.
        let bundleLabels = Set(metrics.samples.filter { $0.name == notifications }.compactMap { $0.labels["bundle_id"] })
        #expect(bundleLabels.count == 1 + 16 + 1 && bundleLabels.contains("other") && bundleLabels.contains("evil\"\\\n0"))
        #expect(metrics.value(notifications, ["bundle_id": "other", "type": "TEST", "outcome": "dead_lettered"]) == 5)
        #expect(metrics.value("rmstore_verification_failures_total", ["check": "bundleIdentifier"]) == 21)
        #expect(metrics.value("rmstore_verification_failures_total", ["check": "signature"]) == 1)
        #expect(metrics.value("rmstore_http_requests_total", ["route": "/notifications", "status": "200"]) == 3)
        #expect(metrics.value("rmstore_http_requests_total", ["route": "/notifications", "status": "500"]) == 21)
        #expect(metrics.value("rmstore_http_requests_total", ["route": "/notifications", "status": "400"]) == 1)
        #expect(metrics.value("rmstore_notification_lag_seconds_count") == 3)
        #expect(metrics.value("rmstore_store_commit_seconds_count", ["operation": "notification"]) == 3)
        #expect(metrics.value("rmstore_store_commit_seconds_count", ["operation": "dead_letter"]) == 22)
        #expect(metrics.value("rmstore_store_up") == 1)
        // An unknown path is one `other` route, whatever it is.
        _ = try get(port: server.port, "/nowhere")
        _ = try get(port: server.port, "/else%22where")
        let again = try PrometheusText(try get(port: server.port, "/metrics").bodyText)
        #expect(again.value("rmstore_http_requests_total", ["route": "/metrics", "status": "200"]) == 1)
        #expect(again.sum("rmstore_http_requests_total", ["route": "other"]) == 2)

        let stopped = server.stop()
        #expect(stopped.status == 0)
        // --log-format json: every line one JSON object, the hostile bundle id escaped in it.
        let logLines = stopped.stderr.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(logLines.count >= 26)
        for line in logLines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "\(line)")
        }
        #expect(logLines.contains { $0.contains(#""status":500"#) && $0.contains(#""remoteAddress":"127.0.0.1""#) })

        // list --json: one object per line, the app read (unverified) from the body.
        let listed = try ReceiptTool.run(["notifications", "dead-letters", "list", "--db", database, "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let letters = try jsonLines(listed.stdout)
        #expect(letters.count == 22)
        let first = try #require(letters.first)
        for key in ["id", "receivedDate", "reason", "check", "bundleId", "notificationUUID", "sourceAddress", "bodyLength", "retried"] {
            #expect(first.keys.contains(key), "\(key) missing in \(first)")
        }
        #expect(first["check"] as? String == "bundleIdentifier" && first["bundleId"] as? String == newApp)
        #expect(first["notificationUUID"] as? String == uuid && first["sourceAddress"] as? String == "127.0.0.1")
        #expect(letters[1]["check"] as? String == "signature" && letters[1]["bundleId"] as? String == F.bundle)
        #expect(letters.last?["bundleId"] as? String == "evil\"\\\n19")
        // The text form escapes what the body says.
        let text = try ReceiptTool.run(["notifications", "dead-letters", "list", "--db", database])
        #expect(
            text.status == 0 && !text.stdout.contains("evil\"\\\n") && text.stdout.contains(#"bundleId="evil\"\\\n19""#), "\(text.stdout)")

        // serve restarted with the new app configured: Apple's own retry is stored...
        let retryArguments = [
            "--db", database, "--anchor", anchor, "--bundle-id", newApp, "--app-apple-id", String(F.appAppleId), "--environment",
            "production",
        ]
        // ...and `dead-letters retry` under the new configuration stores the letter once.
        let retried = try ReceiptTool.run(["notifications", "dead-letters", "retry"] + retryArguments)
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.stdout.split(separator: "\n").filter { $0.contains(" stored ") }.count == 1, "\(retried.stdout)")
        #expect(retried.stderr.contains("22 pending dead letters: 1 stored, 0 duplicate, 21 rejected"), "\(retried.stderr)")
        #expect(try F.list(database).filter { $0["notificationUUID"] as? String == uuid }.count == 1)
        let second = try ReceiptTool.run(["notifications", "dead-letters", "retry"] + retryArguments)
        #expect(second.status == 0 && !second.stdout.contains(" stored "), "\(second.stdout)")
        #expect(second.stderr.contains("21 pending dead letters: 0 stored"), "\(second.stderr)")
        #expect(try F.list(database).count == 3)
        let marked = try jsonLines(try ReceiptTool.run(["notifications", "dead-letters", "list", "--db", database, "--json"]).stdout)
        #expect(marked.first?["retried"] as? Bool == true && marked.first?["retriedNotificationUUID"] as? String == uuid)
        #expect(marked.dropFirst().allSatisfy { $0["retried"] as? Bool == false })

        // serve restarted for the new app: Apple's retry of the same notification is a duplicate.
        let restarted = try ServeProcess([
            "--notifications-db", database, "--anchor", anchor, "--bundle-id", newApp, "--app-apple-id", String(F.appAppleId),
            "--environment", "production", "--quiet",
        ])
        try #require(restarted.port != 0, "\(restarted.firstLine)")
        let duplicate = try #require(F.post(port: restarted.port, unconfigured))
        #expect(duplicate.status == 200 && duplicate.bodyText.contains("duplicate"), "\(duplicate.bodyText)")
        #expect(restarted.stop().status == 0)

        // purge.
        let purged = try ReceiptTool.run(["notifications", "dead-letters", "purge", "--db", database, "--before", "2000-01-01"])
        #expect(purged.status == 0 && purged.stdout.contains("purged 0 dead letters"))
        let all = try ReceiptTool.run(["notifications", "dead-letters", "purge", "--db", database])
        #expect(all.status == 0 && all.stdout.contains("purged 22 dead letters"), "\(all.stdout)")
        let bad = try ReceiptTool.run(["notifications", "dead-letters", "list", "--db", database, "--bundle-id", "x"])
        #expect(bad.status == 64)
    }
}
