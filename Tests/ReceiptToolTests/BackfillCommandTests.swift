// `receipt-tool notifications backfill` as a process against the simulated App Store Server's Get
// Notification History on 127.0.0.1, the notifications delivered to a `serve` process and the
// rest withheld.

import AppStoreServerAPI
import Foundation
import Glibc
import JSON
import JWS
import StoreTesting
import TestSupport
import Testing

/// A simulated App Store Server whose Notification History holds `count` genuine notifications
/// (sandbox, signed a second apart), a `serve` that received some of them, and the options of the
/// tool.
@MainActor
final class BackfillWorld {
    typealias F = NotificationFixtures

    let api: APIToolWorld
    let database: String
    let anchor: String
    /// The notifications in the history, in signed order.
    var notifications: [(uuid: String, payload: String, signedDate: Date)] = []
    let base = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3_600).rounded())

    /// `database`: a PostgreSQL URL, or nil for a SQLite file of the world's own.
    init(pageSize: Int, count: Int, database: String? = nil, label: String = #function) throws {
        api = try APIToolWorld(pageSize: pageSize, label: label)
        self.database = database ?? api.directory.appendingPathComponent("n.db").path
        anchor = api.anchorFile.path
        for index in 0..<count {
            notifications.append(try Self.notification(index: index, signedDate: base.addingTimeInterval(Double(index))))
        }
        for notification in notifications {
            api.server.recordNotification(signedPayload: notification.payload, sendAttempts: [(notification.signedDate, "SUCCESS")])
        }
    }

    /// A DID_RENEW notification of the sandbox app (or of `bundle`), signed at `signedDate`.
    static func notification(
        index: Int, signedDate: Date, bundle: String = APIToolWorld.bundleID
    ) throws -> (uuid: String, payload: String, signedDate: Date) {
        let uuid = String(format: "7c1d0b2e-0000-4000-8000-%012d", index)
        let clock = SimulatedClock()
        let sender = try F.sender(url: URL(fileURLWithPath: "/"), clock: clock, bundle: bundle, environment: .sandbox)
        let event = ServerNotificationEvent(type: .didRenew, signedTransactionInfo: nil, signedRenewalInfo: nil, status: .active)
        let body = try sender.signedBody(for: event, notificationUUID: uuid, signedDate: signedDate)
        let payload = try #require(try JSONValue.parse(body)["signedPayload"]?.stringValue)
        return (uuid, payload, signedDate)
    }

    /// Delivers the notifications at `indices` to a `serve` of the store, as Apple would have.
    func deliver(_ indices: [Int]) throws {
        let server = try ServeProcess([
            "--notifications-db", database, "--anchor", anchor, "--bundle-id", APIToolWorld.bundleID, "--environment", "sandbox",
        ])
        try #require(server.port != 0, "\(server.firstLine)")
        for index in indices {
            let body = JSONValue.object([("signedPayload", .string(notifications[index].payload))]).jsonBytes()
            let response = F.post(port: server.port, body)
            #expect(response?.status == 200, "notification \(index)")
        }
        _ = server.stop()
    }

    /// The backfill options: the store, the API and the receiver's verification.
    func arguments(since: Date? = nil, until: Date? = nil) -> [String] {
        var arguments = ["notifications", "backfill", "--db", database, "--json"] + api.common
        arguments += ["--since", Self.text(since ?? base.addingTimeInterval(-60))]
        if let until { arguments += ["--until", Self.text(until)] }
        return arguments
    }

    static func text(_ date: Date) -> String {
        var format = Date.ISO8601FormatStyle()
        format.timeZone = .gmt
        return date.formatted(format)
    }

    /// The notificationUUIDs in the store (each once: `list` shows rows).
    func storedUUIDs() throws -> [String] {
        try F.list(database).compactMap { $0["notificationUUID"] as? String }
    }

    /// The `event` objects of a `--json` run.
    static func events(_ output: String, _ kind: String) throws -> [JSONValue] {
        try APIToolWorld.lines(output).filter { $0["event"]?.stringValue == kind }
    }
}

@Suite("receipt-tool notifications backfill")
@MainActor
struct BackfillCommandTests {
    /// Five of nine notifications reached the receiver: backfill restores exactly the four others,
    /// printing each once; a notification of another app in the history is kept as a dead letter
    /// with its reason; a second run restores nothing.
    @Test(.timeLimit(.minutes(3))) func restoresExactlyTheMissing_thenNothing() async throws {
        let world = try BackfillWorld(pageSize: 2, count: 9)
        let foreign = try BackfillWorld.notification(index: 99, signedDate: world.base.addingTimeInterval(20), bundle: "com.other.app")
        world.api.server.recordNotification(signedPayload: foreign.payload, sendAttempts: [])
        try world.deliver([0, 2, 4, 6, 8])
        #expect(Set(try world.storedUUIDs()) == Set([0, 2, 4, 6, 8].map { world.notifications[$0].uuid }))

        let first = try await tool(world.arguments())
        #expect(first.status == 0, "\(first.stderr)")
        let restored = try BackfillWorld.events(first.stdout, "restored")
        let missing = [1, 3, 5, 7].map { world.notifications[$0] }
        #expect(restored.compactMap { $0["notificationUUID"]?.stringValue } == missing.map(\.uuid))
        #expect(restored.allSatisfy { $0["notificationType"]?.stringValue == "DID_RENEW" })
        #expect(restored.compactMap { $0["signedDate"]?.int64Value } == missing.map { Int64($0.signedDate.timeIntervalSince1970 * 1000) })
        let dead = try BackfillWorld.events(first.stdout, "deadLettered")
        #expect(dead.count == 1)
        #expect(dead.first?["check"]?.stringValue == "bundleIdentifier")
        #expect(dead.first?["notificationUUID"]?.stringValue == foreign.uuid)
        let summary = try #require(try BackfillWorld.events(first.stdout, "summary").first)
        #expect(summary["restored"]?.int64Value == 4 && summary["alreadyPresent"]?.int64Value == 5)
        #expect(summary["pages"]?.int64Value == 5 && summary["complete"]?.boolValue == true)
        let stored = try world.storedUUIDs()
        #expect(stored.count == 9 && Set(stored) == Set(world.notifications.map(\.uuid)))
        let letters = try ReceiptTool.run(["notifications", "dead-letters", "list", "--db", world.database, "--json"])
        let letterLines = try APIToolWorld.lines(letters.stdout)
        #expect(letterLines.count == 1)
        #expect(letterLines.first?["sourceAddress"]?.stringValue == "notification-history")
        #expect(letterLines.first?["check"]?.stringValue == "bundleIdentifier")

        // The same range again: every entry is already there (the foreign one is dead-lettered again).
        let second = try await tool(world.arguments())
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try BackfillWorld.events(second.stdout, "restored").isEmpty)
        let again = try #require(try BackfillWorld.events(second.stdout, "summary").first)
        #expect(again["restored"]?.int64Value == 0 && again["alreadyPresent"]?.int64Value == 9)
        #expect(try world.storedUUIDs().count == 9)
        // Text output: one line per restored notification (none now) and the summary on stderr.
        let text = try await tool(world.arguments().filter { $0 != "--json" })
        #expect(text.status == 0 && !text.stdout.contains("restored"))
        #expect(text.stderr.contains("0 restored, 9 already stored"), "\(text.stderr)")
        // --config names the store, the app's bundle id and anchors instead of --db, --bundle-id, --anchor.
        let config = world.api.directory.appendingPathComponent("backend.json")
        func configure(_ environments: [String]) throws {
            let app = JSONValue.object([
                ("bundleId", .string(APIToolWorld.bundleID)), ("environments", .array(environments.map { .string($0) })),
                ("anchors", .array([.string(world.anchor)])),
            ])
            try Data(JSONValue.object([("store", .string(world.database)), ("apps", .array([app]))]).jsonBytes()).write(to: config)
        }
        try configure(["Sandbox"])
        let api = world.api
        let configured = [
            "notifications", "backfill", "--config", config.path, "--json", "--since",
            BackfillWorld.text(world.base.addingTimeInterval(-60)),
            "--issuer-id", APIToolWorld.issuerID, "--key-id", APIToolWorld.keyID, "--private-key", api.keyFile.path, "--environment",
            "sandbox", "--base-url", api.server.baseURL.absoluteString,
        ]
        let viaConfig = try await tool(configured)
        #expect(viaConfig.status == 0, "\(viaConfig.stderr)")
        #expect(try BackfillWorld.events(viaConfig.stdout, "summary").first?["alreadyPresent"]?.int64Value == 9)
        try configure(["Production"])
        let wrongEnvironment = try await tool(configured)
        #expect(
            wrongEnvironment.status == 64 && wrongEnvironment.stderr.contains("not configured for Sandbox"), "\(wrongEnvironment.stderr)")
        await world.api.finish()
    }

    /// A backfill killed with SIGKILL while it waits for its fourth page (one notification a
    /// page) resumes from the saved token: the next run asks for the fourth page first, and the
    /// store ends with exactly every notification once.
    @Test(.timeLimit(.minutes(3))) func killedHalfway_resumesFromTheSavedToken() async throws {
        try await Self.killAndResume(database: nil)
    }

    /// The same with PostgreSQL: the progress row and the notifications in one database.
    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(3)))
    func postgres_killedHalfway_resumesFromTheSavedToken() async throws {
        let cluster = try PostgresCluster.start(label: "backfill-cli")
        defer { cluster.stop() }
        try await Self.killAndResume(database: try cluster.createDatabase("backfill"))
        let progress = try cluster.sql(
            "SELECT pages, completed, pagination_token IS NULL FROM notification_backfills", database: "backfill")
        #expect(progress == "7|t|t", "\(progress)")
    }

    /// When the server no longer takes the saved token (Apple's expire: errorCode 4000017), the
    /// resumed run reads the range again from its first page and still ends with every
    /// notification once.
    @Test(.timeLimit(.minutes(3))) func killedHalfway_expiredToken_readsTheRangeAgain() async throws {
        try await Self.killAndResume(database: nil, tokenExpired: true)
    }

    static func killAndResume(database: String?, tokenExpired: Bool = false) async throws {
        let world = try BackfillWorld(pageSize: 1, count: 7, database: database)
        try world.deliver([0, 5])
        let gate = SimulatedAppStoreServer.Gate()
        world.api.server.script([.none, .none, .none, .hold(gate)], for: .notificationHistory)
        let until = world.base.addingTimeInterval(3_000)
        let executable = try #require(ReceiptTool.executable)
        let process = Process()
        process.executableURL = executable
        // A long per-attempt timeout: under load the held page must still be held when the kill comes.
        process.arguments = world.arguments(until: until) + ["--timeout", "600"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.runRetryingBadDescriptor()
        // Watched and killed from a thread of its own, so that a busy test pool cannot delay it.
        let reached = try await onThread { () -> Bool in
            let deadline = Date().addingTimeInterval(120)
            while gate.waiting == 0, process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            guard gate.waiting == 1 else { return false }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return true
        }
        try #require(reached, "the fourth page was never asked for")
        #expect(process.terminationReason == .uncaughtSignal)
        gate.open()
        world.api.server.clearScript()
        // Pages 1-3 (notifications 0, 1, 2) are stored; 3, 4 and 6 are not.
        let afterKill = Set(try world.storedUUIDs())
        #expect(afterKill == Set([0, 1, 2, 5].map { world.notifications[$0].uuid }))
        let requestsBefore = world.api.server.requests.count
        if tokenExpired {
            world.api.server.script(
                [.error(status: 400, errorCode: 4_000_017, errorMessage: "Pagination token expired.")], for: .notificationHistory)
        }

        // No --until: the interrupted range (same --since) is resumed.
        let resumed = try await tool(world.arguments())
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let summary = try #require(try BackfillWorld.events(resumed.stdout, "summary").first)
        #expect(summary["resumed"]?.boolValue == !tokenExpired)
        #expect(summary["until"]?.int64Value == Int64(until.timeIntervalSince1970 * 1000))
        #expect(summary["pages"]?.int64Value == (tokenExpired ? 7 : 4))  // pages 4 to 7, or all again
        let restored = try BackfillWorld.events(resumed.stdout, "restored").compactMap { $0["notificationUUID"]?.stringValue }
        #expect(restored == [3, 4, 6].map { world.notifications[$0].uuid })
        let firstResumed = try #require(world.api.server.requests.dropFirst(requestsBefore).first { $0.endpoint == .notificationHistory })
        #expect(firstResumed.query?.contains("paginationToken=") == true)
        let stored = try world.storedUUIDs()
        #expect(stored.count == 7 && Set(stored) == Set(world.notifications.map(\.uuid)))
        // The range is complete: the next run reads it from the first page and restores nothing.
        let again = try await tool(world.arguments(until: until))
        let summaryAgain = try #require(try BackfillWorld.events(again.stdout, "summary").first)
        #expect(summaryAgain["resumed"]?.boolValue == false && summaryAgain["restored"]?.int64Value == 0)
        #expect(summaryAgain["alreadyPresent"]?.int64Value == 7)
        await world.api.finish()
    }

    /// Hostile histories end the run with a clear error and store nothing wrong: endless pages
    /// (the page limit), a token that repeats, hasMore without a token, and a genuine notification
    /// signed outside the requested range (the page is refused before anything of it is stored).
    @Test(.timeLimit(.minutes(3))) func hostileHistories_endWithAnError_storingNothing() async throws {
        let world = try BackfillWorld(pageSize: 2, count: 2)
        func page(_ token: String?, hasMore: Bool, _ payloads: [String] = []) -> SimulatedAppStoreServer.Fault {
            var members: [(String, JSONValue)] = []
            if let token { members.append(("paginationToken", .string(token))) }
            members.append(("hasMore", .bool(hasMore)))
            members.append(
                ("notificationHistory", .array(payloads.map { .object([("sendAttempts", .array([])), ("signedPayload", .string($0))]) })))
            return .body(status: 200, JSONValue.object(members).jsonBytes())
        }
        let inRange = world.notifications[0].payload
        let outside = try BackfillWorld.notification(index: 50, signedDate: world.base.addingTimeInterval(-7_200)).payload
        let cases: [(name: String, faults: [SimulatedAppStoreServer.Fault], message: String)] = [
            ("endless", (0..<20).map { page("token-\($0)", hasMore: true) }, "more than 5 pages"),
            ("repeated", [page("same", hasMore: true), page("same", hasMore: true)], "repeats an earlier page"),
            ("no token", [page(nil, hasMore: true)], "no paginationToken"),
            ("long token", [page(String(repeating: "t", count: 5_000), hasMore: true)], "longer than 4096 bytes"),
            ("out of range", [page("next", hasMore: true, [inRange, outside])], "outside the requested range"),
        ]
        for hostile in cases {
            world.api.server.clearScript()
            world.api.server.script(hostile.faults, for: .notificationHistory)
            let result = try await tool(world.arguments() + ["--max-pages", "5"])
            #expect(result.status == 1, "\(hostile.name): \(result.stdout)")
            #expect(result.stderr.contains(hostile.message), "\(hostile.name): \(result.stderr)")
            let summary = try #require(try BackfillWorld.events(result.stdout, "summary").first)
            #expect(summary["complete"]?.boolValue == false && summary["restored"]?.int64Value == 0, "\(hostile.name)")
            #expect(try world.storedUUIDs().isEmpty, "\(hostile.name)")
        }
        let letters = try ReceiptTool.run(["notifications", "dead-letters", "list", "--db", world.database, "--json"])
        #expect(letters.stdout.isEmpty, "\(letters.stdout)")
        await world.api.finish()
    }

    /// `backfill --original-transaction-id` keeps the customer's verified transactions and
    /// renewal info; `entitlements` answers from them with no notification stored; a second
    /// rebuild adds nothing.
    @Test(.timeLimit(.minutes(3))) func rebuildsOneCustomer_forTheEntitlementQuery() async throws {
        let world = try APIToolWorld(pageSize: 2)
        world.buy("com.example.monthly")
        world.buy("com.example.level")
        let database = world.directory.appendingPathComponent("c.db").path
        let subscription = world.ids[0]
        let rebuild = ["notifications", "backfill", "--original-transaction-id", subscription, "--db", database, "--json"] + world.common
        let first = try await tool(rebuild)
        #expect(first.status == 0, "\(first.stderr)")
        let stored = try BackfillWorld.events(first.stdout, "stored")
        #expect(Set(stored.compactMap { $0["transactionId"]?.stringValue }) == Set(world.ids))
        #expect(stored.contains { $0["kind"]?.stringValue == "renewalInfo" && $0["originalTransactionId"]?.stringValue == subscription })
        #expect(stored.allSatisfy { $0["new"]?.boolValue == true })
        let answer = try ReceiptTool.run([
            "entitlements", "--db", database, "--original-transaction-id", subscription, "--entitlement", "pro=com.example.monthly",
            "--at", BackfillWorld.text(world.store.clock.now), "--json",
        ])
        #expect(answer.status == 0, "\(answer.stderr)")
        let entitlement = try #require(try JSONValue.parse(answer.stdout)["entitlements"]?.arrayValue?.first)
        #expect(entitlement["active"]?.boolValue == true && entitlement["reason"]?.stringValue == "subscribed", "\(answer.stdout)")
        let second = try await tool(rebuild)
        #expect(second.status == 0)
        #expect(try BackfillWorld.events(second.stdout, "summary").first?["new"]?.int64Value == 0)
        await world.finish()
    }
}
