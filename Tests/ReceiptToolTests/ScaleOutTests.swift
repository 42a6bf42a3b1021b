import Foundation
import Glibc
import JWS
import RMStore
import ReceiptSigning
import StoreTesting
import TestSupport
import Testing

/// Where nginx is (Debian's package installs /usr/sbin/nginx; `.ci/run` installs it when missing).
enum Nginx {
    static let executable: String? = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// deploy/cluster.sh with real parts: PostgreSQL, two `serve` instances, nginx terminating TLS.
/// Skipped, saying why, without nginx or the PostgreSQL server binaries (`.ci/run` installs both,
/// so CI runs it).
@Suite(
    .enabled(if: Nginx.executable != nil, "nginx is not installed (apt-get install nginx; .ci/run does)"),
    .enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"))
struct ScaleOutTests {
    typealias F = NotificationFixtures

    /// Simulated purchases, renewals, a renewal-status change, a billing failure in its grace
    /// period, a refund and a TEST notification go over HTTPS through nginx to two instances
    /// sharing PostgreSQL; one instance is killed half-way and nginx sends its share to the other.
    /// Every notification is delivered at the first attempt, stored once, and `notifications
    /// status` gives the simulation's state for every original transaction id.
    @MainActor
    @Test(.timeLimit(.minutes(3))) func simulatedAppStoreThroughNginxToPostgres() async throws {
        let state = temporaryDirectory().appendingPathComponent("cluster")
        let log = temporaryDirectory().appendingPathComponent("cluster.log")
        let tool = try #require(ReceiptTool.executable)
        let script = Fixtures.packageRoot.appendingPathComponent("deploy/cluster.sh").path
        let options = try F.serveArguments(database: "unused").dropFirst(2) + ["--quiet"]
        let started = try spawnAndWait(
            "/bin/bash", [script, "start", state.path, "--instances", "2", "--receipt-tool", tool.path, "--"] + options, output: log)
        runWhenThisProcessEnds("/bin/bash", [script, "stop", state.path])
        defer {
            _ = try? spawnAndWait("/bin/bash", [script, "stop", state.path], output: log)
            try? FileManager.default.removeItem(at: state)
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        try #require(started == 0, "\(text)")
        let environment = try parse(String(contentsOf: state.appendingPathComponent("cluster.env"), encoding: .utf8))
        let database = try #require(environment["DATABASE_URL"])
        let url = try #require(environment["NOTIFICATIONS_URL"].flatMap(URL.init(string:)))
        #expect(url.scheme == "https")
        let pids = (environment["SERVE_PIDS"] ?? "").split(separator: " ").compactMap { Int32($0) }
        try #require(pids.count == 2)

        let clock = SimulatedClock()
        let store = SimulatedAppStore(
            catalog: F.catalog(), bundleIdentifier: F.bundle, jwsIssuer: JWSIssuer(pki: try PKIs.jws.get(), environment: .production),
            clock: clock, deliversAutomatically: false)
        let transport = CurlNotificationTransport(certificateAuthority: URL(fileURLWithPath: try #require(environment["CA_CERT"])))
        let sender = try F.sender(url: url, clock: clock, transport: transport)
        store.notificationSender = sender
        for (index, product) in [F.monthly, F.monthly, F.yearly, F.monthly, F.level].enumerated() {
            store.add(Payment(productIdentifier: product, applicationUsername: "user\(index)"))
            store.processAllEvents()
        }
        store.advanceClock(by: 31 * 86_400)
        store.setAutoRenew(false, productIdentifier: F.yearly)
        try await onThread { sender.waitUntilIdle() }

        // One instance dies; nginx retries what it cannot reach on the other.
        kill(pids[0], SIGKILL)
        store.setBillingFailure(true, productIdentifier: F.monthly, gracePeriod: 16 * 86_400)
        store.advanceClock(by: 31 * 86_400)
        let second = store.purchaseHistory[1].originalTransactionIdentifier
        store.refund(
            transactionIdentifier: try #require(store.purchaseHistory.last { $0.originalTransactionIdentifier == second })
                .transactionIdentifier)
        try sender.sendTestNotification()
        store.processAllEvents()
        try await onThread { sender.waitUntilIdle() }

        let deliveries = sender.deliveries
        let types = Set(deliveries.map(\.event.type.rawValue))
        #expect(
            types.isSuperset(of: ["SUBSCRIBED", "DID_RENEW", "DID_CHANGE_RENEWAL_STATUS", "DID_FAIL_TO_RENEW", "REFUND", "TEST"]),
            "\(types)")
        for delivery in deliveries {
            #expect(delivery.attempts.map(\.result) == [.status(200)], "\(delivery.event.type): \(delivery.attempts.map(\.result))")
        }
        let rows = try F.list(database)
        let uuids = rows.compactMap { $0["notificationUUID"] as? String }
        #expect(uuids.count == deliveries.count && Set(uuids) == Set(deliveries.map(\.notificationUUID)))
        try NotificationsServeTests().expectStatusesMatch(store: store, database: database)
        // The billing failure is in its grace period: still active, in billing retry.
        let first = store.purchaseHistory[0].originalTransactionIdentifier
        let billing = try F.status(database, first, at: clock.now)
        #expect(billing["inBillingRetryPeriod"] as? Bool == true && billing["inGracePeriod"] as? Bool == true)
        #expect(billing["active"] as? Bool == true)

        // The survivor's health, through nginx, reports PostgreSQL.
        let health = try ReceiptTool.curl(["--cacert", environment["CA_CERT"] ?? "", environment["HEALTH_URL"] ?? ""])
        #expect(health.contains(#""store":"postgresql""#) && health.contains(#""status":"ok""#), "\(health)")
    }

    /// deploy/cluster.sh with `--config`: two apps × two environments through nginx to two
    /// instances sharing PostgreSQL; each notification is stored once under its app, and an app
    /// the file does not have is answered 500 and kept as a dead letter.
    @Test(.timeLimit(.minutes(3))) func severalAppsThroughNginxToPostgres() throws {
        typealias M = MultiAppServeTests
        let state = temporaryDirectory().appendingPathComponent("cluster-apps")
        let log = temporaryDirectory().appendingPathComponent("cluster-apps.log")
        let tool = try #require(ReceiptTool.executable)
        let script = Fixtures.packageRoot.appendingPathComponent("deploy/cluster.sh").path
        let config = temporaryDirectory("cluster-apps-config").appendingPathComponent("backend.json")
        let apps = [M.first, M.second].map { ($0, M.appAppleId($0)) }
        try Data(M.configuration(store: "replaced-by-the-cluster", anchor: try F.anchorFile(), apps: apps).utf8).write(to: config)
        let started = try spawnAndWait(
            "/bin/bash",
            [script, "start", state.path, "--instances", "2", "--receipt-tool", tool.path, "--", "--config", config.path, "--quiet"],
            output: log)
        runWhenThisProcessEnds("/bin/bash", [script, "stop", state.path])
        defer {
            _ = try? spawnAndWait("/bin/bash", [script, "stop", state.path], output: log)
            try? FileManager.default.removeItem(at: state)
        }
        try #require(started == 0, "\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        let environment = try parse(String(contentsOf: state.appendingPathComponent("cluster.env"), encoding: .utf8))
        let url = try #require(environment["NOTIFICATIONS_URL"])
        let copy = try #require(environment["CONFIG"])
        #expect(url.hasSuffix(M.path), "\(url)")
        let body = temporaryDirectory("cluster-apps-bodies").appendingPathComponent("body.json")
        func post(_ bytes: [UInt8]) throws -> String {
            try Data(bytes).write(to: body)
            return try ReceiptTool.curl([
                "--cacert", environment["CA_CERT"] ?? "", "-w", " %{http_code}", "-H", "Content-Type: application/json",
                "--data-binary", "@\(body.path)", url,
            ])
        }
        var expected: [String: [String]] = [:]
        var index = 200
        for bundle in [M.first, M.second] {
            for kind in [Environment.production, .sandbox] {
                index += 1
                let (uuid, bytes) = try M.body(bundle, kind, index)
                let answer = try post(bytes)
                #expect(answer.hasSuffix(" 200") && answer.contains("accepted"), "\(bundle) \(kind): \(answer)")
                expected[bundle, default: []].append("\(uuid) \(kind.rawValue)")
            }
        }
        let (_, unknown) = try M.body(M.added, .production, 299)
        let refused = try post(unknown)
        #expect(refused.hasSuffix(" 500") && refused.contains("bundleIdentifier"), "\(refused)")
        for bundle in [M.first, M.second] {
            let rows = try M.listed(copy, bundle)
            let got = rows.map { "\($0["notificationUUID"] as? String ?? "?") \($0["environment"] as? String ?? "?")" }.sorted()
            #expect(got == (expected[bundle] ?? []).sorted(), "\(bundle): \(got)")
        }
        let letters = try ReceiptTool.run(["notifications", "dead-letters", "list", "--config", copy, "--json"])
        let kept = try DeadLettersServeTests.jsonLines(letters.stdout)
        #expect(kept.count == 1 && kept.first?["bundleId"] as? String == M.added, "\(letters.stdout)")
    }

    /// `KEY=value` lines (values may be quoted).
    func parse(_ text: String) -> [String: String] {
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...]).trimmingCharacters(
                in: CharacterSet(charactersIn: "\""))
        }
        return values
    }
}

extension ReceiptTool {
    /// The body `curl` prints for `arguments`.
    static func curl(_ arguments: [String]) throws -> String {
        let output = temporaryDirectory("curl").appendingPathComponent("out")
        _ = try spawnAndWait("/usr/bin/curl", ["-s"] + arguments, output: output)
        return (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }
}

/// Which `receipt-tool` deploy/cluster.sh runs: the release build by default, `--receipt-tool` or
/// `RECEIPT_TOOL` otherwise (checked before anything starts, so no nginx or PostgreSQL is needed).
@Suite struct ClusterScriptTests {
    /// Runs a copy of the script in a folder with no build, so the default names a missing file.
    func start(_ extra: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("deploy"), withIntermediateDirectories: true)
        let script = root.appendingPathComponent("deploy/cluster.sh")
        try FileManager.default.copyItem(at: Fixtures.packageRoot.appendingPathComponent("deploy/cluster.sh"), to: script)
        let log = root.appendingPathComponent("log")
        var variables = ProcessInfo.processInfo.environment.filter { $0.key != "RECEIPT_TOOL" }
        variables.merge(environment) { $1 }
        let status = try spawnAndWait(
            "/bin/bash", [script.path, "start", root.appendingPathComponent("state").path] + extra, environment: variables, output: log)
        return (status, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }

    @Test func defaultsToTheReleaseBuild_withOverrides() throws {
        let release = try start([])
        #expect(release.status == 1)
        #expect(release.output.contains("/.build/release/receipt-tool (swift build -c release"), "\(release.output)")
        let option = try start(["--receipt-tool", "/no/such/receipt-tool"])
        #expect(option.status == 1 && option.output.contains("no receipt-tool at /no/such/receipt-tool"), "\(option.output)")
        let variable = try start([], environment: ["RECEIPT_TOOL": "/no/such/debug/receipt-tool"])
        #expect(variable.status == 1 && variable.output.contains("no receipt-tool at /no/such/debug/receipt-tool"), "\(variable.output)")
    }
}
