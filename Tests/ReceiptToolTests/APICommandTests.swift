// `receipt-tool api` and `receipt-tool offer-signature`, run as processes against the simulated
// App Store Server API that the test starts on 127.0.0.1 and stops.

import AppStoreServerAPI
import Foundation
import HTTPServer
import Internals
import JSON
import JWS
import RMStore
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import StoreTesting
import TestSupport
import Testing

/// A simulated App Store and its App Store Server API, with the API key and the JWS root written to
/// files for the tool.
@MainActor
final class APIToolWorld {
    nonisolated static let bundleID = "com.example.app"
    static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    static let keyID = "2X9R4HXF34"
    static let catalog = StoreCatalog(products: [
        SimulatedProduct(Product(identifier: "com.example.coins", localizedTitle: "Coins", price: 1, kind: .consumable)),
        SimulatedProduct(Product(identifier: "com.example.level", localizedTitle: "Level", price: 2, kind: .nonConsumable)),
        SimulatedProduct(
            Product(
                identifier: "com.example.monthly", localizedTitle: "Monthly", price: 5, kind: .autoRenewableSubscription,
                subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .month)), subscriptionGroupIdentifier: "20000001"),
        SimulatedProduct(
            Product(
                identifier: "com.example.yearly", localizedTitle: "Yearly", price: 50, kind: .autoRenewableSubscription,
                subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .year)), subscriptionGroupIdentifier: "20000002"),
    ])

    let directory: URL
    let keyFile: URL
    let anchorFile: URL
    let receiptURL: URL
    let receiptPKI: TestPKI
    let store: SimulatedAppStore
    let server: SimulatedAppStoreServer

    init(pageSize: Int = 2, notificationURL: URL? = nil, rateLimits: APIRateLimits = .unlimited, label: String = #function) throws {
        directory = temporaryDirectory(label)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = try PrivateKey.generateP256()
        keyFile = directory.appendingPathComponent("AuthKey_\(Self.keyID).p8")
        try Data(try key.pemEncoded.utf8).write(to: keyFile)
        let jwsPKI = try PKIs.jws.get()
        anchorFile = directory.appendingPathComponent("jws-root.der")
        try Data(jwsPKI.root.derEncoded).write(to: anchorFile)
        receiptPKI = try PKIs.apple.get()
        receiptURL = directory.appendingPathComponent("receipt")
        let clock = SimulatedClock()
        let issuer = JWSIssuer(pki: jwsPKI)
        let device = try #require(DeviceIdentifier("956328D9-CC6A-47F4-BE40-6953FB0AB6C7"))
        store = SimulatedAppStore(
            catalog: Self.catalog, bundleIdentifier: Self.bundleID, receiptURL: receiptURL,
            receiptIssuer: SignedReceiptIssuer(signer: receiptPKI.signer(), deviceIdentifier: device), jwsIssuer: issuer, clock: clock,
            deliversAutomatically: false)
        server = SimulatedAppStoreServer(
            configuration: .init(
                bundleIdentifier: Self.bundleID, issuerID: Self.issuerID, keyID: Self.keyID, publicKey: try key.publicKey,
                historyPageSize: pageSize, refundPageSize: pageSize, notificationPageSize: pageSize, notificationURL: notificationURL,
                rateLimits: rateLimits),
            // The receiving `serve` shares 2 cores with the whole parallel suite: 30 s, not the 5 s default.
            issuer: issuer, clock: clock, notificationTransport: URLSessionNotificationTransport(timeout: 30))
        try server.start()
    }

    func buy(_ product: String) {
        store.add(Payment(productIdentifier: product))
        store.processAllEvents()
        server.synchronize(with: store)
    }

    /// The options every `api` call of these tests passes.
    var common: [String] {
        [
            "--issuer-id", Self.issuerID, "--key-id", Self.keyID, "--private-key", keyFile.path, "--bundle-id", Self.bundleID,
            "--environment", "sandbox", "--base-url", server.baseURL.absoluteString, "--anchor", anchorFile.path,
        ]
    }

    var ids: [String] { store.purchaseHistory.map(\.transactionIdentifier) }

    func finish() async {
        let server = self.server
        _ = try? await onThread { server.shutdown() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The JSON objects of the output, one a line.
    static func lines(_ output: String) throws -> [JSONValue] {
        try output.split(separator: "\n").map { try JSONValue.parse(String($0)) }
    }
}

/// Runs the tool on a thread of its own, so the main actor (where the simulated store lives) stays
/// free while the process runs.
func tool(_ arguments: [String]) async throws -> ReceiptTool.Result {
    try await onThread { try ReceiptTool.run(arguments) }
}

@Suite("receipt-tool api")
@MainActor
struct APICommandTests {
    @Test func history_printsEveryTransaction_oneLineEach_inPageOrder_withOneToken() async throws {
        let world = try APIToolWorld(pageSize: 2)
        for product in ["com.example.coins", "com.example.level", "com.example.monthly", "com.example.coins", "com.example.yearly"] {
            world.buy(product)
        }
        let result = try await tool(["api", "history", world.ids[2], "--json"] + world.common)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try APIToolWorld.lines(result.stdout)
        #expect(lines.compactMap { $0["transactionId"]?.stringValue } == world.ids)
        #expect(lines.map { $0["productId"]?.stringValue } == world.store.purchaseHistory.map(\.productIdentifier))
        #expect(lines.allSatisfy { $0["bundleId"] == .string(APIToolWorld.bundleID) && $0["environment"] == .string("Sandbox") })
        let requests = world.server.requests
        #expect(requests.count == 3)  // 5 transactions, 2 a page
        #expect(Set(requests.compactMap(\.bearerToken)).count == 1)  // one token for the run
        #expect(requests.allSatisfy { $0.status == 200 })
        // Text: one block per transaction.
        let text = try await tool(["api", "history", world.ids[0]] + world.common)
        #expect(text.status == 0)
        #expect(text.stdout.components(separatedBy: "(verified)").count == 6)
        #expect(text.stdout.contains("Transaction \(world.ids[4]) (verified)"))
        // Filters.
        let subscriptions = try await tool(
            ["api", "history", world.ids[0], "--json", "--product-type", "AUTO_RENEWABLE"] + world.common)
        #expect(
            try APIToolWorld.lines(subscriptions.stdout).compactMap { $0["transactionId"]?.stringValue } == [world.ids[2], world.ids[4]])
        await world.finish()
    }

    @Test func statuses_transaction_order_refunds() async throws {
        let world = try APIToolWorld()
        world.buy("com.example.monthly")
        world.buy("com.example.yearly")
        world.buy("com.example.coins")
        world.store.refund(transactionIdentifier: world.ids[2])
        world.server.synchronize(with: world.store)
        let statuses = try await tool(["api", "statuses", world.ids[2], "--json"] + world.common)
        #expect(statuses.status == 0, "\(statuses.stderr)")
        let lines = try APIToolWorld.lines(statuses.stdout)
        #expect(lines.count == 2)
        #expect(lines.map { $0["originalTransactionId"]?.stringValue } == [world.ids[0], world.ids[1]])
        #expect(lines.map { $0["status"] } == [.number("1"), .number("1")])
        #expect(lines.map { $0["subscriptionGroupIdentifier"]?.stringValue } == ["20000001", "20000002"])
        #expect(lines.first?["signedTransactionInfo"]?["transactionId"]?.stringValue == world.ids[0])
        #expect(lines.first?["signedRenewalInfo"]?["autoRenewStatus"] == .number("1"))
        #expect(lines.last?["signedRenewalInfo"]?["originalTransactionId"]?.stringValue == world.ids[1])

        let transaction = try await tool(["api", "transaction", world.ids[1], "--json"] + world.common)
        #expect(try APIToolWorld.lines(transaction.stdout).map { $0["productId"]?.stringValue } == ["com.example.yearly"])
        let order = world.server.orderIdentifier(forTransactionIdentifier: world.ids[1])
        let lookup = try await tool(["api", "order", order, "--json"] + world.common)
        #expect(try APIToolWorld.lines(lookup.stdout).map { $0["transactionId"]?.stringValue } == [world.ids[1]])
        let invalidOrder = try await tool(["api", "order", "MK5TTTVWJH", "--json"] + world.common)
        #expect(invalidOrder.status == 1 && invalidOrder.stdout.isEmpty)
        #expect(invalidOrder.stderr.contains("is not valid"))
        let refunds = try await tool(["api", "refunds", world.ids[0], "--json"] + world.common)
        let refunded = try APIToolWorld.lines(refunds.stdout)
        #expect(refunded.map { $0["transactionId"]?.stringValue } == [world.ids[2]])
        #expect(refunded.first?["revocationDate"] != nil)
        let text = try await tool(["api", "statuses", world.ids[0]] + world.common)
        #expect(text.stdout.contains("Subscription \(world.ids[0]) in group 20000001: status 1 (active)"))
        await world.finish()
    }

    /// Request a Test Notification end to end: `receipt-tool api test-notification` asks the
    /// simulated App Store Server API, which signs a TEST notification and POSTs it to a
    /// `receipt-tool serve --notifications-db` process; serve verifies and stores it, the API's
    /// status reports the delivery, and `notifications list` shows the notification once.
    @Test func testNotification_isStoredByServe_andItsVerifiedStatusIsPrinted() async throws {
        let database = temporaryDirectory().appendingPathComponent("n.db").path
        let receiver = try ServeProcess([
            "--notifications-db", database, "--anchor", try NotificationFixtures.anchorFile(), "--bundle-id", APIToolWorld.bundleID,
            "--environment", "sandbox",
        ])
        try #require(receiver.port != 0, "\(receiver.firstLine)")
        let world = try APIToolWorld(notificationURL: URL(string: receiver.baseURL + "/notifications"))
        let result = try await tool(["api", "test-notification", "--json"] + world.common)
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(try APIToolWorld.lines(result.stdout).first)
        #expect(line["testNotificationToken"]?.stringValue?.isEmpty == false)
        #expect(line["signedPayload"]?["notificationType"] == .string("TEST"))
        #expect(line["signedPayload"]?["data"]?["bundleId"] == .string(APIToolWorld.bundleID))
        #expect(line["sendAttempts"]?.arrayValue?.first?["sendAttemptResult"] == .string("SUCCESS"))
        let uuid = try #require(line["signedPayload"]?["notificationUUID"]?.stringValue)
        let stored = try NotificationFixtures.list(database)
        #expect(stored.map { $0["notificationUUID"] as? String } == [uuid])
        #expect(stored.first?["notificationType"] as? String == "TEST")
        #expect(stored.first?["environment"] as? String == "Sandbox")
        // It is in the history.
        let now = world.store.clock.now
        let history = try await tool(
            [
                "api", "notifications", "--json", "--start", String(Int64(now.timeIntervalSince1970 * 1000) - 60_000), "--end",
                String(Int64(now.timeIntervalSince1970 * 1000) + 60_000),
            ] + world.common)
        #expect(history.status == 0, "\(history.stderr)")
        #expect(try APIToolWorld.lines(history.stdout).map { $0["signedPayload"]?["notificationType"] } == [.string("TEST")])
        await world.finish()
        #expect(receiver.stop().status == 0)
    }

    @Test func aForgedPayload_isNeverPrinted_andExitsOne() async throws {
        let world = try APIToolWorld(pageSize: 2)
        for _ in 0..<5 { world.buy("com.example.coins") }
        let pki = try PKIs.jws.get()
        let anotherKey = JWSSigner(key: try PrivateKey.generateP256(), chain: [pki.leaf, pki.intermediate, pki.root])
        world.server.script([.none, .none, .forgedSignature(anotherKey, index: 0)], for: .transactionHistory)
        let result = try await tool(["api", "history", world.ids[0], "--json"] + world.common)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty, "nothing from the pages before the forged one is printed either")
        #expect(result.stderr.contains("verificationFailed"))
        #expect(result.stderr.contains("page 3: signedTransactions[0]"))
        // A JWS chained to another root than the anchor: the same.
        let rootless = try await tool(
            ["api", "transaction", world.ids[0], "--json"] + world.common.dropLast(2) + ["--anchor", "apple"])
        #expect(rootless.status == 1 && rootless.stdout.isEmpty)
        #expect(rootless.stderr.contains("chain"))
        await world.finish()
    }

    @Test func apiErrors_401_andEnvironment_exitOne() async throws {
        let world = try APIToolWorld()
        world.buy("com.example.coins")
        let strangerFile = world.directory.appendingPathComponent("stranger.p8")
        try Data(try PrivateKey.generateP256().pemEncoded.utf8).write(to: strangerFile)
        var stranger = world.common
        if let index = stranger.firstIndex(of: "--private-key") { stranger[index + 1] = strangerFile.path }
        let unauthorized = try await tool(["api", "transaction", world.ids[0]] + stranger)
        #expect(unauthorized.status == 1 && unauthorized.stdout.isEmpty)
        #expect(unauthorized.stderr.contains("unauthorized") && unauthorized.stderr.contains("HTTP 401"))
        let missing = try await tool(["api", "transaction", "2999999999999999"] + world.common)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("transactionIdNotFound (4040010)"))
        var production = world.common
        if let index = production.firstIndex(of: "--environment") { production[index + 1] = "production" }
        let wrongEnvironment = try await tool(["api", "transaction", world.ids[0]] + production)
        #expect(wrongEnvironment.status == 1 && wrongEnvironment.stdout.isEmpty)
        #expect(wrongEnvironment.stderr.contains("environment"))
        world.server.script([.rateLimited(retryAfter: "0")], for: .transactionInfo)
        let retried = try await tool(["api", "transaction", world.ids[0], "--json"] + world.common)
        #expect(retried.status == 0)
        #expect(world.server.requests.suffix(2).map(\.status) == [429, 200])
        await world.finish()
    }

    @Test func historyFromAReceipt_verifiesTheReceiptFirst() async throws {
        let world = try APIToolWorld()
        world.buy("com.example.level")
        world.buy("com.example.coins")
        let receiptAnchor = world.directory.appendingPathComponent("receipt-root.der")
        try Data(world.receiptPKI.root.derEncoded).write(to: receiptAnchor)
        let verified = try await tool(
            ["api", "history", "--from-receipt", world.receiptURL.path, "--receipt-anchor", receiptAnchor.path, "--json"] + world.common)
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(try APIToolWorld.lines(verified.stdout).compactMap { $0["transactionId"]?.stringValue } == world.ids)
        #expect(world.server.requests.first?.path == "/inApps/v2/history/\(world.ids[0])")
        // Against Apple's roots the test receipt does not verify: nothing is requested.
        let before = world.server.requests.count
        let refused = try await tool(["api", "history", "--from-receipt", world.receiptURL.path, "--json"] + world.common)
        #expect(refused.status == 1 && refused.stdout.isEmpty)
        #expect(refused.stderr.contains("notVerified"))
        #expect(world.server.requests.count == before)
        // Only when asked by name is it read unverified.
        let unverified = try await tool(
            ["api", "history", "--from-receipt", world.receiptURL.path, "--unverified-receipt", "--json"] + world.common)
        #expect(unverified.status == 0)
        #expect(try APIToolWorld.lines(unverified.stdout).count == 2)
        await world.finish()
    }

    @Test func usageErrors_exit64() async throws {
        let world = try APIToolWorld()
        let common = world.common
        for arguments in [
            ["api"], ["api", "nonsense"] + common, ["api", "history"] + common, ["api", "statuses", "1", "2"] + common,
            ["api", "transaction", "1"] + common.filter { $0 != "--issuer-id" && $0 != APIToolWorld.issuerID },
            ["api", "transaction", "1", "--environment", "staging"] + common.suffix(4),
            ["api", "transaction", "1", "--from-receipt", "r"] + common, ["api", "statuses", "1", "--status", "9"] + common,
            ["api", "transaction", "1"] + common + ["--base-url", "ftp://x"],
        ] {
            let result = try await tool(arguments)
            #expect(result.status == 64, "\(arguments.prefix(4)): \(result.stderr)")
        }
        #expect(world.server.requests.isEmpty)
        await world.finish()
    }
}

@Suite("receipt-tool offer-signature")
struct OfferSignatureCommandTests {
    @Test func printsTheVersion1Signature_lastLine_verifiableWithThePublicKey() throws {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try PrivateKey.generateP256()
        let keyFile = directory.appendingPathComponent("SubscriptionKey.p8")
        try Data(try key.pemEncoded.utf8).write(to: keyFile)
        let arguments = [
            "offer-signature", "--bundle-id", "com.example.app", "--key-id", "KEY123", "--product-id", "com.example.monthly",
            "--offer-id", "WINBACK", "--app-account-token", "5F8E7D6C-4B3A-4928-8716-0F1E2D3C4B5A", "--nonce",
            "D3B2A1C0-5E4F-4A3B-9C8D-7E6F5A4B3C2D", "--timestamp", "1700000000123", "--private-key", keyFile.path,
        ]
        let result = try ReceiptTool.run(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let signature = try #require(result.stdout.split(separator: "\n").last.map(String.init))
        let der = try Base64.decode(Array(signature.utf8), rules: .strictStandard)
        #expect(der.first == 0x30)
        let payload = [
            "com.example.app", "KEY123", "com.example.monthly", "WINBACK", "5f8e7d6c-4b3a-4928-8716-0f1e2d3c4b5a",
            "d3b2a1c0-5e4f-4a3b-9c8d-7e6f5a4b3c2d", "1700000000123",
        ].joined(separator: "\u{2063}")
        #expect(try key.publicKey.verify(signature: der, over: Array(payload.utf8), digest: .sha256))
        #expect(!(try key.publicKey.verify(signature: der, over: Array((payload + "0").utf8), digest: .sha256)))
        #expect(result.stdout.contains("d3b2a1c0-5e4f-4a3b-9c8d-7e6f5a4b3c2d"))
        // Usage errors.
        for (index, value) in [(12, "not-a-uuid"), (14, "soon"), (10, "x")] {
            var bad = arguments
            bad[index] = value
            #expect(try ReceiptTool.run(bad).status == 64, "\(bad[index - 1]) \(value)")
        }
        let missing = try ReceiptTool.run(Array(arguments.dropLast(2)))
        #expect(missing.status == 64 && missing.stderr.contains("--private-key is required"), "\(missing.stderr)")
        let stray = try ReceiptTool.run(arguments + ["extra"])
        #expect(stray.status == 64 && stray.stderr.contains("offer-signature takes no arguments, found extra"), "\(stray.stderr)")
        var missingKey = arguments
        missingKey[16] = directory.appendingPathComponent("missing.p8").path
        #expect(try ReceiptTool.run(missingKey).status == 1)
    }
}
