import Foundation
import JWS
import RMStore
import StoreTesting
import TestSupport
import Testing

/// `receipt-tool entitlements` on a store `serve` filled from the simulated App Store: the answer
/// per customer and date (a table), the JSON shape, the configuration file, and refusals.
@Suite struct EntitlementsCommandTests {
    typealias F = NotificationFixtures
    static let coins = "com.example.coins"
    static let definitions = [
        "--entitlement", "premium=\(F.monthly),\(F.yearly)", "--entitlement", "annual=\(F.yearly)", "--entitlement",
        "level=\(F.level)", "--entitlement", "coins=\(coins)",
    ]

    /// Monthly and yearly in one subscription group, a non-consumable, a consumable.
    static func catalog() -> StoreCatalog {
        func subscription(_ id: String, _ unit: SubscriptionPeriod.Unit) -> SimulatedProduct {
            SimulatedProduct(
                Product(
                    identifier: id, localizedTitle: id, price: 5, kind: .autoRenewableSubscription,
                    subscriptionPeriod: SubscriptionPeriod(value: 1, unit: unit)), subscriptionGroupIdentifier: "21000001")
        }
        return StoreCatalog(products: [
            subscription(F.monthly, .month), subscription(F.yearly, .year),
            SimulatedProduct(Product(identifier: F.level, localizedTitle: "Level", price: 2, kind: .nonConsumable)),
            SimulatedProduct(Product(identifier: coins, localizedTitle: "Coins", price: 1, kind: .consumable)),
        ])
    }

    /// What the story leaves: the customers, the checkpoint dates, and D's original transaction.
    struct Story {
        var users: [String: String]
        var dates: [Date]
        var familyOriginal: String
    }

    /// Four customers: A subscribes monthly then upgrades to yearly; B buys the non-consumable, then
    /// it is refunded; C buys the consumable; D gets yearly through Family Sharing, then it is
    /// revoked. Checkpoints before and after the changes.
    @MainActor static func play(serverURL: String) async throws -> Story {
        let clock = SimulatedClock()
        let store = SimulatedAppStore(
            catalog: catalog(), bundleIdentifier: F.bundle, jwsIssuer: JWSIssuer(pki: try PKIs.jws.get(), environment: .production),
            clock: clock, deliversAutomatically: false)
        let sender = try F.sender(url: try #require(URL(string: serverURL + "/notifications")), clock: clock)
        store.notificationSender = sender
        let users = ["A": UUID().uuidString, "B": UUID().uuidString, "C": UUID().uuidString, "D": UUID().uuidString]
        func buy(_ product: String, _ user: String) -> String {
            store.add(Payment(productIdentifier: product, applicationUsername: users[user]))
            store.processAllEvents()
            return store.purchaseHistory.last?.transactionIdentifier ?? ""
        }
        func step() {
            store.advanceClock(by: 1)
            store.processAllEvents()
        }
        let a = buy(F.monthly, "A")
        let b = buy(F.level, "B")
        _ = buy(coins, "C")
        store.purchasesAreFamilyShared = true
        let d = buy(F.yearly, "D")
        store.purchasesAreFamilyShared = false
        store.advanceClock(by: 5 * 86_400)
        store.processAllEvents()
        let first = clock.now
        step()
        #expect(store.upgradeSubscription(originalTransactionIdentifier: a, toProduct: F.yearly) != nil)
        store.refund(transactionIdentifier: b)
        store.revokeFamilySharing(transactionIdentifier: d)
        store.processAllEvents()
        step()
        try await onThread { sender.waitUntilIdle() }
        #expect(sender.deliveries.allSatisfy { $0.attempts.map(\.result) == [.status(200)] }, "\(sender.deliveries.map(\.attempts))")
        return Story(users: users, dates: [first, clock.now], familyOriginal: d)
    }

    static func rfc3339(_ date: Date) -> String {
        var format = Date.ISO8601FormatStyle()
        format.timeZone = .gmt
        return date.formatted(format)
    }

    /// `entitlements … --json`: entitlement name → (active, reason, productId).
    static func answers(_ arguments: [String]) throws -> [String: [String: Any]] {
        let result = try ReceiptTool.run(["entitlements"] + arguments + ["--json"])
        try #require(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["entitlements"])
        let list = try #require(object["entitlements"] as? [[String: Any]])
        #expect(list.map { $0["entitlement"] as? String } == ["premium", "annual", "level", "coins"])
        for item in list {
            #expect(
                Set(item.keys) == ["entitlement", "active", "expiresDate", "reason", "productId", "originalTransactionId", "transactionId"])
            if let expires = item["expiresDate"] as? String {
                #expect((try? Date(expires, strategy: .iso8601)) != nil, "\(expires)")
            } else {
                #expect(item["expiresDate"] is NSNull)
            }
        }
        return Dictionary(uniqueKeysWithValues: list.compactMap { item in (item["entitlement"] as? String).map { ($0, item) } })
    }

    /// The table: per checkpoint and customer, each entitlement's (active, reason, product);
    /// entitlements not named are inactive with reason none.
    static let expected: [[String: [String: (Bool, String, String?)]]] = [
        [
            "A": ["premium": (true, "subscribed", F.monthly)],
            "B": ["level": (true, "purchased", F.level)],
            "C": ["coins": (false, "consumed", coins)],
            "D": ["premium": (true, "familyShared", F.yearly), "annual": (true, "familyShared", F.yearly)],
        ],
        [
            "A": ["premium": (true, "subscribed", F.yearly), "annual": (true, "subscribed", F.yearly)],
            "B": ["level": (false, "refunded", F.level)],
            "C": ["coins": (false, "consumed", coins)],
            "D": ["premium": (false, "revoked", F.yearly), "annual": (false, "revoked", F.yearly)],
        ],
    ]

    @MainActor func checkEntitlements(database: String) async throws {
        let server = try ServeProcess(try F.serveArguments(database: database) + ["--quiet"])
        try #require(server.port != 0, "\(server.firstLine)")
        let story = try await Self.play(serverURL: server.baseURL)
        for (index, date) in story.dates.enumerated() {
            for (user, token) in story.users.sorted(by: { $0.key < $1.key }) {
                let answers = try Self.answers(
                    ["--db", database, "--app-account-token", token.lowercased(), "--at", Self.rfc3339(date)] + Self.definitions)
                for name in ["premium", "annual", "level", "coins"] {
                    let want = Self.expected[index][user]?[name] ?? (false, "none", nil)
                    let got = answers[name]
                    #expect(got?["active"] as? Bool == want.0, "checkpoint \(index) \(user) \(name): \(got as Any)")
                    #expect(got?["reason"] as? String == want.1, "checkpoint \(index) \(user) \(name): \(got as Any)")
                    #expect(got?["productId"] as? String == want.2, "checkpoint \(index) \(user) \(name)")
                }
            }
        }
        // By original transaction id: D's family-shared chain.
        let byOriginal = try Self.answers(["--db", database, "--original-transaction-id", story.familyOriginal] + Self.definitions)
        #expect(byOriginal["annual"]?["reason"] as? String == "revoked")
        #expect(byOriginal["annual"]?["originalTransactionId"] as? String == story.familyOriginal)

        // The configuration file instead of --db and --entitlement; --app picks the app.
        let directory = temporaryDirectory("entitlements-config")
        let config = directory.appendingPathComponent("config.json")
        let body = """
            {"store": "\(database)", "notificationsPath": "/notifications", "apps": [
              {"bundleId": "\(F.bundle)", "appAppleId": \(F.appAppleId), "environments": ["Production"], "anchors": ["apple"],
               "policy": "appstore", "entitlements": {"premium": ["\(F.monthly)", "\(F.yearly)"], "annual": ["\(F.yearly)"],
               "level": ["\(F.level)"], "coins": ["\(Self.coins)"]}},
              {"bundleId": "com.example.other", "entitlements": {"x": ["y"]}}]}
            """
        try Data(body.utf8).write(to: config)
        let fromConfig = try Self.answers(
            [
                "--config", config.path, "--app", F.bundle, "--app-account-token", story.users["A"] ?? "", "--at",
                Self.rfc3339(story.dates[1]),
            ])
        #expect(fromConfig["annual"]?["active"] as? Bool == true && fromConfig["premium"]?["productId"] as? String == F.yearly)
        // Another app of the configuration sees none of this app's notifications.
        let other = try ReceiptTool.run([
            "entitlements", "--config", config.path, "--app", "com.example.other", "--app-account-token", story.users["A"] ?? "", "--json",
        ])
        #expect(other.status == 0 && other.stdout.contains(#""reason":"none""#) && !other.stdout.contains("subscribed"), "\(other)")
        let ambiguous = try ReceiptTool.run(["entitlements", "--config", config.path, "--app-account-token", story.users["A"] ?? ""])
        #expect(ambiguous.status == 64 && ambiguous.stderr.contains("has 2 apps: name one with --app"), "\(ambiguous.stderr)")

        // `notifications list|status` take the configuration and --app too.
        let all = try F.list(database)
        func listed(_ app: String) throws -> Int {
            let result = try ReceiptTool.run(["notifications", "list", "--config", config.path, "--app", app, "--json"])
            try #require(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").count
        }
        #expect(try listed(F.bundle) == all.count && all.count > 4)
        #expect(try listed("com.example.other") == 0)
        #expect(try F.list(database, ["--app", F.bundle, "--limit", "2"]).count == 2)
        let tokens = Set(all.compactMap { $0["appAccountToken"] as? String })
        #expect(tokens == Set(story.users.values.map { $0.lowercased() }), "\(tokens)")
        let unknownApp = try ReceiptTool.run(["notifications", "list", "--config", config.path, "--app", "com.example.nope"])
        #expect(unknownApp.status == 64 && unknownApp.stderr.contains("is not in the configuration"), "\(unknownApp.stderr)")
        let otherStatus = try ReceiptTool.run(
            ["notifications", "status", "--config", config.path, "--app", "com.example.other", story.familyOriginal])
        #expect(otherStatus.status == 1 && otherStatus.stderr.contains("no notification of original transaction"))
        let ownStatus = try ReceiptTool.run(
            ["notifications", "status", "--config", config.path, "--app", F.bundle, story.familyOriginal, "--json"])
        #expect(ownStatus.status == 0 && ownStatus.stdout.contains(#""revoked":true"#), "\(ownStatus)")
        #expect(server.stop().status == 0)
    }

    @MainActor @Test(.timeLimit(.minutes(3))) func answersFromAStoreServeFilledWithSQLite() async throws {
        try await checkEntitlements(database: temporaryDirectory().appendingPathComponent("n.db").path)
    }

    @MainActor @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(3)))
    func answersFromAStoreServeFilledWithPostgreSQL() async throws {
        let cluster = try PostgresCluster.start(label: "entitlements-cli")
        defer { cluster.stop() }
        try await checkEntitlements(database: try cluster.createDatabase("notifications"))
    }

    /// Refusals: no customer, two of them, a token that is not a UUID, no entitlements, a bad
    /// definition, a configuration with an unknown key (named, escaped), a store that is not one.
    @Test func refusals() throws {
        let database = temporaryDirectory().appendingPathComponent("none.db").path
        let token = UUID().uuidString
        let cases: [([String], Int32, String)] = [
            (["--db", database] + Self.definitions, 64, "needs one of --app-account-token"),
            (["--db", database, "--app-account-token", token, "--original-transaction-id", "1"] + Self.definitions, 64, "needs one of"),
            (["--db", database, "--app-account-token", "user-7"] + Self.definitions, 64, "\"user-7\" is not a UUID"),
            (["--db", database, "--app-account-token", token], 64, "needs --entitlement"),
            (["--db", database, "--app-account-token", token, "--entitlement", "pro"], 64, "is not NAME=PRODUCT_ID"),
            (["--db", database, "--app-account-token", token, "--entitlement", "a=x", "--entitlement", "a=y"], 64, "configured twice"),
            (["--app-account-token", token] + Self.definitions, 64, "needs --db"),
            (["--db", database, "--app-account-token", token, "--at", "yesterday"] + Self.definitions, 64, "is not a date"),
            (["--db", database, "--app-account-token", token] + Self.definitions, 1, "cannot open the notification store"),
        ]
        for (arguments, status, message) in cases {
            let result = try ReceiptTool.run(["entitlements"] + arguments)
            #expect(result.status == status && result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        let directory = temporaryDirectory("entitlements-bad-config")
        let configs: [(String, String)] = [
            (#"{"apps": [{"bundleId": "a", "entitlements": {"p": ["x"]}}], "stor": "x"}"#, #"unknown key "stor""#),
            (#"{"apps": [{"bundleId": "a", "entitlement": {"p": ["x"]}}]}"#, #"apps[0]: unknown key "entitlement""#),
            (#"{"apps": [{"bundleId": "a", "entitlements": {"p": "x"}}]}"#, "apps[0].entitlements: entitlement \"p\" must be an array"),
            (#"{"apps": [{"bundleId": "a", "environments": ["production"]}]}"#, #""production" is not Production, Sandbox or Xcode"#),
            (#"{"apps": [{"bundleId": "a"}, {"bundleId": "a"}]}"#, "configured twice"),
            (#"{"apps": []}"#, "apps must be a non-empty array"),
            (#"{"apps": [{"bundleId": "a", "policy": "lenient"}]}"#, "policy must be appstore or xcode"),
            ("{\"apps\": [{\"bundleId\": \"a\", \"x\\u001b[31m\": 1}]}", #"unknown key "x\u{1B}[31m""#),
            (#"{"apps": [{"bundleId": "a"}]"#, "not JSON"),
        ]
        for (index, (body, message)) in configs.enumerated() {
            let file = directory.appendingPathComponent("c\(index).json")
            try Data(body.utf8).write(to: file)
            let result = try ReceiptTool.run(["entitlements", "--config", file.path, "--db", database, "--app-account-token", token])
            #expect(result.status == 1 && result.stderr.contains(message), "\(body): \(result.stderr)")
            #expect(!result.stderr.contains("\u{1B}"))
        }
    }
}
