// `receipt-tool api` for the endpoints Apple added since 2023 and for several ids in one run,
// against the simulated App Store Server on 127.0.0.1: it routes by Apple's method and path,
// checks the bearer token and decodes each body with Apple's rules.

import AppStoreServerAPI
import Foundation
import JSON
import RMStore
import StoreTesting
import TestSupport
import Testing

@Suite("receipt-tool api: 2026 endpoints and batches")
@MainActor
struct APIManagementCommandTests {
    func write(_ text: String, _ name: String, in world: APIToolWorld) throws -> String {
        let url = world.directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test func newSubcommands_sendApplesRequests_andPrintTheVerifiedAnswer() async throws {
        let world = try APIToolWorld()
        world.buy("com.example.coins")
        world.buy("com.example.monthly")
        let ids = world.ids
        let common = world.common

        let app = try await tool(["api", "app-transaction", ids[0], "--json"] + common)
        #expect(app.status == 0, "\(app.stderr)")
        let appLine = try #require(try APIToolWorld.lines(app.stdout).first)
        #expect(appLine["receiptType"] == .string("Sandbox") && appLine["bundleId"] == .string(APIToolWorld.bundleID))
        let appText = try await tool(["api", "app-transaction", ids[1]] + common)
        #expect(
            appText.status == 0 && appText.stdout.contains("App transaction \(appLine["appTransactionId"]?.stringValue ?? "?") (verified)"))

        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let set = try await tool(["api", "set-app-account-token", ids[1], token, "--json"] + common)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(world.server.appAccountToken(forOriginalTransactionIdentifier: ids[1])?.uuidString.lowercased() == token)
        let shown = try await tool(["api", "transaction", ids[1], "--json"] + common)
        #expect(try APIToolWorld.lines(shown.stdout).first?["appAccountToken"] == .string(token))

        let body = try write(
            #"{"customerConsented": true, "consumptionPercentage": 100000, "deliveryStatus": "UNDELIVERED_SERVER_OUTAGE", "sampleContentProvided": true}"#,
            "consumption.json", in: world)
        let consumption = try await tool(["api", "consumption", ids[0], "--body", body] + common)
        #expect(consumption.status == 0, "\(consumption.stderr)")
        #expect(consumption.stdout.contains("Consumption information for transaction \(ids[0]) accepted"))
        let received = try #require(world.server.consumptionRequestsV2.first)
        #expect(received.transactionIdentifier == ids[0])
        #expect(received.body.consumptionPercentage == 100_000 && received.body.deliveryStatus == .undeliveredServerOutage)
        #expect(received.body.refundPreference == nil && received.body.sampleContentProvided)

        let finish = try await tool(["api", "finish", ids[0], "--json"] + common)
        #expect(finish.status == 0)
        #expect(try APIToolWorld.lines(finish.stdout).first?["finished"] == .bool(true))
        #expect(world.server.finishedTransactionIdentifiers == [ids[0]])

        let requestID = "758883e8-151b-47b7-abd0-60c4d804c2f5"
        let extend = try write(
            #"{"extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "\#(requestID)", "productId": "com.example.monthly", "storefrontCountryCodes": ["USA"]}"#,
            "extend.json", in: world)
        let accepted = try await tool(["api", "extend-all", "--body", extend, "--json"] + common)
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(try APIToolWorld.lines(accepted.stdout).first?["requestIdentifier"] == .string(requestID))
        let status = try await tool(["api", "extend-all-status", "com.example.monthly", requestID, "--json"] + common)
        #expect(status.status == 0, "\(status.stderr)")
        let statusLine = try #require(try APIToolWorld.lines(status.stdout).first)
        #expect(
            statusLine["complete"] == .bool(true) && statusLine["succeededCount"] == .number("1")
                && statusLine["failedCount"] == .number("0"))

        // Exactly Apple's method and path for each, no query, every token accepted.
        let requests = world.server.requests.filter { $0.endpoint != .transactionInfo }
        #expect(
            requests.map { "\($0.method) \($0.path) \($0.status)" } == [
                "GET /inApps/v1/transactions/appTransactions/\(ids[0]) 200", "GET /inApps/v1/transactions/appTransactions/\(ids[1]) 200",
                "PUT /inApps/v1/transactions/\(ids[1])/appAccountToken 200", "PUT /inApps/v2/transactions/consumption/\(ids[0]) 202",
                "POST /inApps/v1/transactions/\(ids[0])/finish 200", "POST /inApps/v1/subscriptions/extend/mass 200",
                "GET /inApps/v1/subscriptions/extend/mass/com.example.monthly/\(requestID) 200",
            ])
        #expect(world.server.requests.allSatisfy { $0.query == nil && $0.rejection == nil })

        // Several ids in one run: one client, one token, answers in order.
        let several = try await tool(["api", "transaction", ids[1], ids[0], ids[1], "--json"] + common)
        #expect(several.status == 0)
        #expect(try APIToolWorld.lines(several.stdout).map { $0["transactionId"]?.stringValue } == [ids[1], ids[0], ids[1]])
        #expect(Set(world.server.requests.suffix(3).compactMap(\.bearerToken)).count == 1)
        let histories = try await tool(["api", "history", ids[0], ids[1], "--json"] + common)
        #expect(try APIToolWorld.lines(histories.stdout).count == 4)
        await world.finish()
    }

    @Test func malformedLocalValues_exit64_beforeAnyRequest() async throws {
        let world = try APIToolWorld()
        world.buy("com.example.coins")
        let id = world.ids[0]
        let common = world.common
        let over = try write(
            #"{"customerConsented": true, "consumptionPercentage": 100001, "deliveryStatus": "DELIVERED", "sampleContentProvided": false}"#,
            "over.json", in: world)
        let unknownMember = try write(
            #"{"customerConsented": true, "deliveryStatus": "DELIVERED", "sampleContentProvided": false, "playTime": 3}"#, "v1.json",
            in: world)
        let badStatus = try write(
            #"{"customerConsented": true, "deliveryStatus": "LOST", "sampleContentProvided": false}"#, "s.json", in: world)
        let noDays = try write(
            #"{"extendByDays": 0, "extendReasonCode": 1, "requestIdentifier": "r", "productId": "p"}"#, "e.json", in: world)
        for (arguments, message) in [
            (["api", "consumption", id, "--body", over], "consumptionPercentage"),
            (["api", "consumption", id, "--body", unknownMember], "playTime"),
            (["api", "consumption", id, "--body", badStatus], "deliveryStatus"),
            (["api", "consumption", id], "--body"),
            (["api", "set-app-account-token", id, "not-a-uuid"], "not a UUID"),
            (["api", "set-app-account-token", id, "7e3fb20b4cdb47cc936d99d65f608138"], "not a UUID"),
            (["api", "extend-all", "--body", noDays], "extendByDays"),
            (["api", "transaction", id, "a/b"], "is not an id"),
            (["api", "finish", id, "--body", over], "--body is for"),
            (["api", "extend-all-status", "com.example.monthly"], "needs 2 arguments"),
        ] {
            let result = try await tool(arguments + common)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(world.server.requests.isEmpty)
        await world.finish()
    }

    /// The one slow test: 200 ids in one run against a server enforcing Apple's sandbox limit for
    /// Get Transaction Info (5 a second). The tool's throttle spaces them: no 429, and the run
    /// takes at least what the limit allows (about 40 s: 199 intervals of 0.2 s).
    @Test func twoHundredIds_inOneRun_stayWithinTheSandboxLimit() async throws {
        let world = try APIToolWorld(rateLimits: .sandbox)
        for _ in 0..<20 { world.store.add(Payment(productIdentifier: "com.example.coins")) }
        world.store.processAllEvents()
        world.server.synchronize(with: world.store)
        let ids = world.ids
        #expect(ids.count == 20)
        let batch = (0..<200).map { ids[$0 % ids.count] }
        let start = ContinuousClock.now
        let result = try await tool(["api", "transaction"] + batch + ["--json"] + world.common)
        let duration = ContinuousClock.now - start
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        #expect(result.status == 0, "\(result.stderr.prefix(500))")
        #expect(try APIToolWorld.lines(result.stdout).map { $0["transactionId"]?.stringValue } == batch)
        let requests = world.server.requests
        #expect(requests.count == 200)
        #expect(requests.filter { $0.status == 429 }.isEmpty)
        // 200 requests at 5 a second: the last may start 39.8 s after the first, so never faster.
        // Alone the run takes about 42 s (1.05x, measured for issue 23); inside the parallel suite
        // on a loaded machine the other tests stretch it (63 s and over 120 s seen), so the upper
        // bound only catches a throttle that never lets requests through: how close it stays to
        // the limit is a figure for Benchmarks, not for a timed test.
        #expect(seconds >= 199 * 0.2, "\(seconds) s for 200 requests at 5/s")
        #expect(seconds <= 200 * 0.2 * 10, "\(seconds) s for 200 requests at 5/s")
        await world.finish()
    }
}
