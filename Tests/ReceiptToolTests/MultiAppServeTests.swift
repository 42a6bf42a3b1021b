import Foundation
import JSON
import JWS
import ReceiptSigning
import StoreTesting
import TestSupport
import Testing

/// One `serve --config F` receives two apps × two environments into one store; a notification of
/// an app not configured is a dead letter until the app is added and `dead-letters retry --config F`
/// stores it, once. Real processes on 127.0.0.1, SQLite and PostgreSQL.
@Suite struct MultiAppServeTests {
    typealias F = NotificationFixtures
    static let first = "com.example.first"
    static let second = "com.example.second"
    static let added = "com.example.added"
    static let path = "/apple/notifications"

    @Test(.timeLimit(.minutes(3))) func sqlite() throws {
        try Self.story(store: temporaryDirectory().appendingPathComponent("apps.db").path, label: "multiapp-sqlite")
    }

    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(3)))
    func postgres() throws {
        let cluster = try PostgresCluster.start(label: "multiapp-cli")
        defer { cluster.stop() }
        try Self.story(store: try cluster.createDatabase("apps"), label: "multiapp-postgres")
    }

    /// serve refuses a file that would receive notifications it cannot check: an app without
    /// environments, a Production app without its app Apple id, no store.
    @Test func refusesIncompleteConfigurations() throws {
        let directory = temporaryDirectory("multiapp-refusals")
        let store = directory.appendingPathComponent("apps.db").path
        for (app, message) in [
            (#"{"bundleId": "a", "appAppleId": 1}"#, "names no environments"),
            (#"{"bundleId": "a", "environments": ["Production"]}"#, "give its appAppleId"),
            (#"{"bundleId": "a", "environments": ["Sandbox"], "anchors": ["/nonexistent/anchor.der"]}"#, "anchor.der"),
        ] {
            let file = directory.appendingPathComponent("service.json")
            try Data(#"{"store": "\#(store)", "apps": [\#(app)]}"#.utf8).write(to: file)
            let result = try ReceiptTool.run(["serve", "--config", file.path])
            #expect(result.status != 0 && result.stderr.contains(message), "\(app): \(result.stderr)")
        }
        let file = directory.appendingPathComponent("nostore.json")
        try Data(#"{"apps": [{"bundleId": "a", "environments": ["Sandbox"]}]}"#.utf8).write(to: file)
        let result = try ReceiptTool.run(["serve", "--config", file.path])
        #expect(result.status != 0 && result.stderr.contains("serve needs a \"store\""), "\(result.stderr)")
    }

    /// The configuration file of `apps` (bundle id, app Apple id), each in Production and Sandbox,
    /// trusting `anchor`.
    static func configuration(store: String, anchor: String, apps: [(String, Int64)]) -> String {
        let entries = apps.map { bundle, appleId in
            #"{"bundleId": "\#(bundle)", "appAppleId": \#(appleId), "environments": ["Production", "Sandbox"], "anchors": ["\#(anchor)"], "policy": "appstore"}"#
        }
        return #"{"store": "\#(store)", "notificationsPath": "\#(path)", "apps": [\#(entries.joined(separator: ", "))]}"#
    }

    /// Each app's Apple id.
    static func appAppleId(_ bundle: String) -> Int64 {
        switch bundle {
        case first: 1_001
        case second: 2_002
        default: 3_003
        }
    }

    /// A signed TEST notification of `bundle` in `environment`, numbered `index`.
    static func body(_ bundle: String, _ environment: Environment, _ index: Int) throws -> (uuid: String, body: [UInt8]) {
        let clock = SimulatedClock()
        let uuid = String(format: "a11a0000-0000-4000-8000-%012d", index)
        let sender = AppStoreNotificationSender(
            url: URL(fileURLWithPath: "/"), signer: try PKIs.jws.get().jwsSigner(), bundleIdentifier: bundle,
            appAppleId: appAppleId(bundle), bundleVersion: "1.0", environment: environment, clock: clock,
            transport: URLSessionNotificationTransport())
        return (uuid, try sender.signedBody(for: ServerNotificationEvent(type: .test), notificationUUID: uuid, signedDate: clock.now))
    }

    /// `notifications list --config F --app bundle --json`.
    static func listed(_ config: String, _ bundle: String) throws -> [[String: Any]] {
        let result = try ReceiptTool.run(["notifications", "list", "--config", config, "--app", bundle, "--json"])
        try #require(result.status == 0, "\(result.stderr)")
        return try DeadLettersServeTests.jsonLines(result.stdout)
    }

    static func story(store: String, label: String) throws {
        let anchor = try F.anchorFile()
        let config = temporaryDirectory(label).appendingPathComponent("service.json").path
        let two = [first, second].map { ($0, appAppleId($0)) }
        try Data(configuration(store: store, anchor: anchor, apps: two).utf8).write(to: URL(fileURLWithPath: config))

        // Mixing --config with one app's options is a one-line usage error.
        for option in [["--bundle-id", first], ["--anchor", anchor], ["--notifications-db", store], ["--policy", "xcode"]] {
            let mixed = try ReceiptTool.run(["serve", "--config", config] + option)
            let lines = mixed.stderr.split(separator: "\n")
            #expect(mixed.status == 64 && lines.first?.contains("--config and \(option[0]) cannot be mixed") == true, "\(mixed.stderr)")
            #expect(lines.count == 2 && lines.last?.contains("serve --help") == true, "\(mixed.stderr)")
        }

        let server = try ServeProcess(["--config", config, "--quiet"])
        try #require(server.port != 0, "\(server.firstLine)")
        var expected: [String: [(uuid: String, environment: String)]] = [:]
        var index = 0
        for bundle in [first, second] {
            for environment in [Environment.production, .sandbox] {
                index += 1
                let (uuid, body) = try Self.body(bundle, environment, index)
                let answer = try #require(F.post(port: server.port, path: path, body))
                #expect(
                    answer.status == 200 && answer.bodyText.contains(#""status":"accepted""#),
                    "\(bundle) \(environment): \(answer.bodyText)")
                expected[bundle, default: []].append((uuid, environment.rawValue))
            }
        }
        // An app the configuration does not have: 500 (Apple retries), kept as a dead letter.
        let (lateUUID, lateBody) = try Self.body(added, .production, 99)
        let refused = try #require(F.post(port: server.port, path: path, lateBody))
        #expect(refused.status == 500, "\(refused.bodyText)")
        let answer = try JSONValue.parse(refused.body)
        #expect(answer["check"]?.stringValue == "bundleIdentifier" && answer["retry"]?.boolValue == true)
        #expect(answer["reason"]?.stringValue?.contains("not a configured app") == true, "\(refused.bodyText)")
        #expect(answer["deadLetter"]?.int64Value != nil)

        let metrics = try PrometheusText(try DeadLettersServeTests.get(port: server.port, "/metrics").bodyText)
        let notifications = "rmstore_notifications_total"
        #expect(metrics.value(notifications, ["bundle_id": first, "type": "TEST", "outcome": "accepted"]) == 2)
        #expect(metrics.value(notifications, ["bundle_id": second, "type": "TEST", "outcome": "accepted"]) == 2)
        #expect(metrics.value(notifications, ["bundle_id": added, "type": "TEST", "outcome": "dead_lettered"]) == 1)
        #expect(metrics.value("rmstore_http_requests_total", ["route": path, "status": "200"]) == 4)
        #expect(server.stop().status == 0)

        // Each notification is under its app, with its environment.
        for bundle in [first, second] {
            let rows = try listed(config, bundle)
            let got = rows.map { "\($0["notificationUUID"] as? String ?? "?") \($0["environment"] as? String ?? "?")" }.sorted()
            let want = (expected[bundle] ?? []).map { "\($0.uuid) \($0.environment)" }.sorted()
            #expect(got == want, "\(bundle): \(got)")
            #expect(rows.allSatisfy { $0["bundleId"] as? String == bundle })
        }
        let letters = try ReceiptTool.run(["notifications", "dead-letters", "list", "--config", config, "--json"])
        #expect(letters.status == 0, "\(letters.stderr)")
        let kept = try DeadLettersServeTests.jsonLines(letters.stdout)
        #expect(kept.count == 1 && kept.first?["bundleId"] as? String == added && kept.first?["notificationUUID"] as? String == lateUUID)

        // Retried under the same configuration: still rejected.
        let unchanged = try ReceiptTool.run(["notifications", "dead-letters", "retry", "--config", config])
        #expect(
            unchanged.status == 0 && unchanged.stderr.contains("1 pending dead letter: 0 stored, 0 duplicate, 1 rejected"), "\(unchanged)")
        let mixedRetry = try ReceiptTool.run(["notifications", "dead-letters", "retry", "--config", config, "--bundle-id", added])
        #expect(mixedRetry.status == 64, "\(mixedRetry.stderr)")

        // The app added to the file: stored once; a second retry stores nothing.
        let three = two + [(added, appAppleId(added))]
        try Data(configuration(store: store, anchor: anchor, apps: three).utf8).write(to: URL(fileURLWithPath: config))
        let retried = try ReceiptTool.run(["notifications", "dead-letters", "retry", "--config", config])
        #expect(retried.status == 0 && retried.stderr.contains("1 pending dead letter: 1 stored"), "\(retried.stderr)")
        #expect(retried.stdout.contains(" stored \"\(lateUUID)\""), "\(retried.stdout)")
        let again = try ReceiptTool.run(["notifications", "dead-letters", "retry", "--config", config])
        #expect(again.status == 0 && again.stderr.contains("0 pending dead letters: 0 stored"), "\(again.stderr)")
        let late = try listed(config, added)
        #expect(
            late.count == 1 && late.first?["notificationUUID"] as? String == lateUUID
                && late.first?["environment"] as? String == "Production")
        #expect(try F.list(store).count == 5)

        // serve under the new file: Apple's retry of that notification is a duplicate.
        let restarted = try ServeProcess(["--config", config, "--quiet"])
        try #require(restarted.port != 0, "\(restarted.firstLine)")
        let duplicate = try #require(F.post(port: restarted.port, path: path, lateBody))
        #expect(duplicate.status == 200 && duplicate.bodyText.contains("duplicate"), "\(duplicate.bodyText)")
        #expect(restarted.stop().status == 0)
    }
}
