import Foundation
import JSON
import JWS
import RMStore
import ServerNotifications
import StoreTesting
import TestSupport
import Testing

/// The products of the entitlement scenarios: two subscriptions of one group (an upgrade moves
/// between them), a subscription of another group, a non-consumable and a consumable.
enum EntitlementProducts {
    static let basic = "com.example.basic.monthly"
    static let pro = "com.example.pro.monthly"
    static let news = "com.example.news.monthly"
    static let level = "com.example.level"
    static let coins = "com.example.coins"

    static func catalog() -> StoreCatalog {
        func monthly(_ id: String, group: String) -> SimulatedProduct {
            SimulatedProduct(
                Product(
                    identifier: id, localizedTitle: id, price: 5, kind: .autoRenewableSubscription,
                    subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .month)), subscriptionGroupIdentifier: group)
        }
        return StoreCatalog(products: [
            monthly(basic, group: "20000001"), monthly(pro, group: "20000001"), monthly(news, group: "20000002"),
            SimulatedProduct(Product(identifier: level, localizedTitle: "Level", price: 2, kind: .nonConsumable)),
            SimulatedProduct(Product(identifier: coins, localizedTitle: "Coins", price: 1, kind: .consumable)),
        ])
    }

    /// `basic`, `pro` (granted by pro, and by nothing of basic), `news`, `level`, `coins`.
    static func map() throws -> EntitlementMap {
        try EntitlementMap(definitions: ["basic=\(basic)", "pro=\(pro)", "news=\(news)", "level=\(level)", "coins=\(coins)"])
    }
}

/// One expected answer: whether the entitlement is active and why.
struct Expected: Hashable, CustomStringConvertible {
    var active: Bool
    var reason: EntitlementReason
    var description: String { "\(active ? "active" : "inactive") \(reason.rawValue)" }

    static func active(_ reason: EntitlementReason) -> Expected { Expected(active: true, reason: reason) }
    static func inactive(_ reason: EntitlementReason) -> Expected { Expected(active: false, reason: reason) }
}

/// A moment of a scenario and what the customer is entitled to then (entitlements not named:
/// inactive, `none`); `expires` maps entitlements to their expected `expiresDate`.
struct Checkpoint {
    var label: String
    var date: Date
    var expected: [String: Expected]
    var expires: [String: Int64?] = [:]
}

/// A scenario: a story played on the simulated App Store for the customer `token`, with the
/// answers expected at its checkpoints.
struct EntitlementScenario: Sendable {
    var name: String
    var play: @MainActor @Sendable (SimulatedApp, String) -> [Checkpoint]
}

/// The table: purchase and renewal, expiry, an upgrade across a subscription group, two groups,
/// refund, revoke of a family-shared purchase, grace period then billing retry then recovery,
/// billing retry without grace until expiry, consumables and a non-consumable.
enum EntitlementScenarios {
    typealias P = EntitlementProducts

    static func milliseconds(_ date: Date?) -> Int64? { date.map(StoredNotification.milliseconds) }

    @MainActor static func expiry(_ app: SimulatedApp, _ original: String) -> Int64? {
        milliseconds(app.store.purchaseHistory.last { $0.originalTransactionIdentifier == original }?.expirationDate)
    }

    static let all: [EntitlementScenario] = [
        EntitlementScenario(name: "purchase, renewal, expiry") { app, user in
            let original = app.buy(P.pro, user: user)
            var points = [
                Checkpoint(
                    label: "bought", date: app.clock.now, expected: ["pro": .active(.subscribed)], expires: ["pro": expiry(app, original)])
            ]
            app.advance(days: 31)
            points.append(
                Checkpoint(
                    label: "renewed", date: app.clock.now, expected: ["pro": .active(.subscribed)], expires: ["pro": expiry(app, original)])
            )
            app.moment()
            app.store.setAutoRenew(false, productIdentifier: P.pro)
            app.advance(days: 31)
            points.append(
                Checkpoint(
                    label: "expired", date: app.clock.now, expected: ["pro": .inactive(.expired)], expires: ["pro": expiry(app, original)]))
            return points
        },
        EntitlementScenario(name: "upgrade within a subscription group") { app, user in
            let original = app.buy(P.basic, user: user)
            app.advance(days: 10)
            let before = Checkpoint(label: "basic", date: app.clock.now, expected: ["basic": .active(.subscribed)])
            app.moment()
            let upgrade = app.store.upgradeSubscription(originalTransactionIdentifier: original, toProduct: P.pro)
            app.store.processAllEvents()
            let upgraded = app.store.purchaseHistory.last { $0.transactionIdentifier == upgrade }
            return [
                before,
                Checkpoint(
                    label: "upgraded", date: app.clock.now, expected: ["pro": .active(.subscribed), "basic": .inactive(.replaced)],
                    expires: ["pro": milliseconds(upgraded?.expirationDate), "basic": milliseconds(upgraded?.purchaseDate)]),
            ]
        },
        EntitlementScenario(name: "two subscription groups") { app, user in
            app.buy(P.pro, user: user)
            app.moment()
            app.buy(P.news, user: user)
            // Another customer's purchase is not this one's.
            app.buy(P.level, user: UUID().uuidString)
            return [
                Checkpoint(label: "both", date: app.clock.now, expected: ["pro": .active(.subscribed), "news": .active(.subscribed)])
            ]
        },
        EntitlementScenario(name: "refund") { app, user in
            let original = app.buy(P.pro, user: user)
            app.advance(days: 5)
            let bought = Checkpoint(label: "bought", date: app.clock.now, expected: ["pro": .active(.subscribed)])
            app.moment()
            app.store.refund(transactionIdentifier: original)
            app.store.processAllEvents()
            return [
                bought,
                Checkpoint(
                    label: "refunded", date: app.clock.now, expected: ["pro": .inactive(.refunded)],
                    expires: ["pro": milliseconds(app.clock.now)]),
            ]
        },
        EntitlementScenario(name: "revoke of a family-shared purchase") { app, user in
            app.store.purchasesAreFamilyShared = true
            let subscription = app.buy(P.pro, user: user)
            let level = app.buy(P.level, user: user)
            app.advance(days: 2)
            let shared = Checkpoint(
                label: "shared", date: app.clock.now, expected: ["pro": .active(.familyShared), "level": .active(.familyShared)],
                expires: ["level": nil])
            app.moment()
            app.store.revokeFamilySharing(transactionIdentifier: subscription)
            app.store.revokeFamilySharing(transactionIdentifier: level)
            app.store.processAllEvents()
            return [
                shared,
                Checkpoint(label: "revoked", date: app.clock.now, expected: ["pro": .inactive(.revoked), "level": .inactive(.revoked)]),
            ]
        },
        EntitlementScenario(name: "grace period, billing retry, recovery") { app, user in
            let original = app.buy(P.pro, user: user)
            let firstExpiry = expiry(app, original) ?? 0
            app.store.setBillingFailure(true, productIdentifier: P.pro, gracePeriod: 16 * 86_400)
            app.advance(days: 32)
            let grace = Checkpoint(
                label: "grace period", date: app.clock.now, expected: ["pro": .active(.gracePeriod)],
                expires: ["pro": firstExpiry + 16 * 86_400_000])
            app.advance(days: 20)
            let retry = Checkpoint(label: "billing retry", date: app.clock.now, expected: ["pro": .inactive(.billingRetry)])
            app.moment()
            app.store.setBillingFailure(false, productIdentifier: P.pro)
            app.store.processAllEvents()
            return [
                grace, retry,
                Checkpoint(
                    label: "recovered", date: app.clock.now, expected: ["pro": .active(.subscribed)],
                    expires: ["pro": expiry(app, original)]),
            ]
        },
        EntitlementScenario(name: "billing retry without grace, then expiry") { app, user in
            app.buy(P.news, user: user)
            app.store.setBillingFailure(true, productIdentifier: P.news)
            app.advance(days: 32)
            let retry = Checkpoint(label: "billing retry", date: app.clock.now, expected: ["news": .inactive(.billingRetry)])
            app.advance(days: 70)
            return [retry, Checkpoint(label: "expired", date: app.clock.now, expected: ["news": .inactive(.expired)])]
        },
        EntitlementScenario(name: "consumable and non-consumable") { app, user in
            app.buy(P.coins, user: user)
            app.moment()
            let second = app.buy(P.coins, user: user)
            app.moment()
            app.buy(P.level, user: user)
            app.advance(days: 400)
            _ = second
            return [
                Checkpoint(
                    label: "a year on", date: app.clock.now, expected: ["coins": .inactive(.consumed), "level": .active(.purchased)],
                    expires: ["coins": nil, "level": nil])
            ]
        },
    ]
}

@MainActor
@Suite struct EntitlementTests {
    typealias P = EntitlementProducts

    /// Plays every scenario through the simulated App Store into a receiver with the store
    /// `open` gives, and checks each checkpoint's answers (read afterwards at the checkpoint's
    /// date, and by original transaction id for the chains of the customer).
    static func playAll(open: (String) throws -> any NotificationStore) throws {
        let map = try P.map()
        for scenario in EntitlementScenarios.all {
            let store = try open(scenario.name)
            defer { store.close() }
            let app = try SimulatedApp(transport: ReceiverTransport(receiver: try receiver(store: store)), catalog: P.catalog())
            let user = UUID().uuidString
            let checkpoints = scenario.play(app, user)
            app.flush()
            #expect(app.sender.deliveries.allSatisfy { $0.isDelivered }, "\(scenario.name)")
            #expect(!checkpoints.isEmpty)
            for point in checkpoints {
                // The token as the app may write it (capitals) finds the rows Apple wrote lower-cased.
                let answers = try store.entitlements(appAccountToken: user.uppercased(), map: map, at: point.date)
                #expect(answers.map(\.entitlement) == map.entitlements.map(\.name), "\(scenario.name)")
                for answer in answers {
                    let expected = point.expected[answer.entitlement] ?? .inactive(.none)
                    let got = Expected(active: answer.isActive, reason: answer.reason)
                    #expect(got == expected, "\(scenario.name) / \(point.label) / \(answer.entitlement)")
                    if let expires = point.expires[answer.entitlement] {
                        #expect(answer.expiresDate == expires, "\(scenario.name) / \(point.label) / \(answer.entitlement) expires")
                    }
                    if expected.reason == .none {
                        #expect(answer.productId == nil && answer.originalTransactionId == nil)
                    } else {
                        #expect(answer.productId != nil && answer.originalTransactionId != nil && answer.transactionId != nil)
                        // The same answer by the original transaction id alone.
                        let byOriginal = try store.entitlements(
                            originalTransactionId: answer.originalTransactionId ?? "", map: map, at: point.date)
                        #expect(byOriginal.first { $0.entitlement == answer.entitlement } == answer, "\(scenario.name) / \(point.label)")
                    }
                }
            }
            // Before the first purchase: nothing.
            let before = try store.entitlements(appAccountToken: user, map: map, at: Date(timeIntervalSince1970: 0))
            #expect(before.allSatisfy { !$0.isActive && $0.reason == .none })
        }
    }

    @Test func scenariosWithSQLite() throws {
        try Self.playAll { name in try SQLiteNotificationStore(path: temporaryDatabase(name)) }
    }

    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(3)))
    func scenariosWithPostgreSQL() throws {
        let cluster = try PostgresCluster.start(label: "entitlements")
        defer { cluster.stop() }
        var count = 0
        try Self.playAll { _ in
            count += 1
            return try PostgresNotificationStore(url: try cluster.createDatabase("scenario\(count)"))
        }
    }

    /// A consumable bought twice is answered once, by its latest transaction; an unknown token
    /// finds nothing; an entitlement map refuses what it cannot mean.
    @Test func consumableOnceAndMapRules() throws {
        let store = try SQLiteNotificationStore(path: temporaryDatabase())
        let app = try SimulatedApp(transport: ReceiverTransport(receiver: try receiver(store: store)), catalog: P.catalog())
        let user = UUID().uuidString
        app.buy(P.coins, user: user)
        app.moment()
        let second = app.buy(P.coins, user: user)
        app.flush()
        let answers = try store.entitlements(appAccountToken: user, map: try P.map(), at: app.clock.now)
        let coins = try #require(answers.first { $0.entitlement == "coins" })
        #expect(coins.transactionId == second && coins.originalTransactionId == second && coins.reason == .consumed && !coins.isActive)
        #expect(
            try store.entitlements(appAccountToken: UUID().uuidString, map: try P.map(), at: app.clock.now).allSatisfy {
                $0.reason == .none
            })

        for bad in [[], ["pro"], ["=a"], ["pro="], ["pro=a,,b"], ["pro=a,a"], ["pro=a", "pro=b"]] {
            #expect(throws: NotificationStoreError.self, "\(bad)") { try EntitlementMap(definitions: bad) }
        }
        for bad in [#"[]"#, #"{"pro": "a"}"#, #"{"pro": [1]}"#, #"{"pro": []}"#, #"{}"#] {
            #expect(throws: NotificationStoreError.self, "\(bad)") { try EntitlementMap(json: try JSONValue.parse(bad)) }
        }
        let parsed = try EntitlementMap(json: try JSONValue.parse(#"{"pro": ["a", "b"], "level": ["c"]}"#))
        #expect(parsed.entitlements.map(\.name) == ["pro", "level"] && parsed.entitlements[0].productIds == ["a", "b"])
    }
}
