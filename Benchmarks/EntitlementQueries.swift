import Foundation
import JWS
import ReceiptSigning
import ReceiptVerification
import ServerNotifications
import TestSupport

/// `Benchmarks --entitlement-queries ROWS [QUERIES]`: entitlement queries per second on a
/// PostgreSQL store holding ROWS notifications (a cluster of its own, TestSupport's
/// PostgresCluster), by app account token, from one and from two threads, with the query plan.
///
/// The store is filled the way a real one is: one customer's notifications (a subscription bought
/// and renewed, an upgrade within the group, a non-consumable and a consumable, each with the
/// customer's `appAccountToken`) are received through the real receiver — verified and committed —,
/// then copied in SQL with new notification UUIDs, transaction ids, original transaction ids and
/// tokens per customer, so ROWS / 6 customers with the same history; `ANALYZE` follows. The queries
/// ask for random customers' tokens; each answer is checked (three entitlements, the subscription
/// active), so a query that finds nothing cannot pass for a fast one.
enum EntitlementQueriesBenchmark {
    static let bundleId = "com.example.app"
    static let map = [
        "pro=com.example.monthly,com.example.yearly", "lifetime=com.example.lifetime", "coins=com.example.coins",
    ]

    static func run(rows: Int, queries: Int) throws {
        let cluster = try PostgresCluster.start(label: "entitlements-bench")
        defer { cluster.stop() }
        let url = try cluster.createDatabase("bench")
        let store = try PostgresNotificationStore(url: url, maximumConnections: 2)
        defer { store.close() }

        let templates = try receiveTemplates(into: store)
        let customers = max(rows / templates, 1)
        let fill = Date()
        try copyTemplates(cluster: cluster, customers: customers)
        try cluster.sql("ANALYZE notifications", database: "bench")
        let fillSeconds = Date().timeIntervalSince(fill)
        let stored = Int(try cluster.sql("SELECT count(*) FROM notifications", database: "bench")) ?? 0

        let entitlementMap = try EntitlementMap(definitions: map)
        let at = Date(timeIntervalSince1970: 1_700_000_000 + 86_400)
        let plan = try store.queryPlan(NotificationQuery(appAccountToken: token(customers / 2)))
        guard plan.contains("notifications_by_app_account_token"), !plan.contains("Seq Scan") else {
            throw BenchmarkError(description: "the entitlement query does not use the token index:\n\(plan)")
        }

        func measure(threads: Int) throws -> Double {
            let next = SharedCounter()
            let failures = SharedCounter()
            let group = DispatchGroup()
            let start = Date()
            for _ in 0..<threads {
                group.enter()
                Thread {
                    var generator = SystemRandomNumberGenerator()
                    while next.take(below: queries) != nil {
                        let customer = Int.random(in: 1...customers, using: &generator)
                        let answers = try? store.entitlements(appAccountToken: token(customer), map: entitlementMap, at: at)
                        if !isExpected(answers) { failures.add() }
                    }
                    group.leave()
                }.start()
            }
            group.wait()
            let seconds = Date().timeIntervalSince(start)
            guard failures.value == 0 else {
                throw BenchmarkError(description: "\(failures.value) of \(queries) entitlement answers were not the expected ones")
            }
            return Double(queries) / seconds
        }
        _ = try measure(threads: 1)  // warm the buffer cache and the connections
        let one = try measure(threads: 1)
        let two = try measure(threads: 2)
        print(
            "entitlement-queries store=postgres notifications=\(stored) customers=\(customers) queries=\(queries) "
                + "queries_per_s_1_thread=\(String(format: "%.0f", one)) queries_per_s_2_threads=\(String(format: "%.0f", two)) "
                + "fill_seconds=\(String(format: "%.1f", fillSeconds))")
        print("plan (app account token):")
        print(plan)
    }

    /// The app account token of customer `index` (the template customer is 0).
    static func token(_ index: Int) -> String {
        String(format: "%08x-0000-4000-8000-000000000000", index)
    }

    /// Three entitlements answered; `pro` active by the renewed (upgraded) subscription.
    static func isExpected(_ answers: [EntitlementAnswer]?) -> Bool {
        guard let answers, answers.count == 3 else { return false }
        return answers.contains { $0.entitlement == "pro" && $0.isActive }
            && answers.contains { $0.entitlement == "lifetime" && $0.isActive }
            && answers.contains { $0.entitlement == "coins" && !$0.isActive }
    }

    /// Receives customer 0's notifications through the real receiver; returns how many.
    static func receiveTemplates(into store: PostgresNotificationStore) throws -> Int {
        let pki = try PKIs.jws.get()
        let signer = pki.jwsSigner()
        let day: Int64 = 86_400_000
        let start: Int64 = 1_700_000_000_000 - 40 * day
        let account = token(0)
        func transaction(_ id: Int, original: Int, product: String, type: String, at date: Int64, expires: Int64?) throws -> String {
            let expiry = expires.map { #","expiresDate":\#($0)"# } ?? ""
            return try signer.sign(
                payload: Array(
                    #"{"transactionId":"\#(id)","originalTransactionId":"\#(original)","bundleId":"\#(bundleId)","productId":"\#(product)","purchaseDate":\#(date),"originalPurchaseDate":\#(date)\#(expiry),"quantity":1,"type":"\#(type)","inAppOwnershipType":"PURCHASED","appAccountToken":"\#(account)","signedDate":\#(date),"environment":"Production"}"#
                        .utf8))
        }
        let subscription = "Auto-Renewable Subscription"
        let events: [(type: String, transaction: String, date: Int64)] = [
            (
                "SUBSCRIBED",
                try transaction(11, original: 10, product: "com.example.monthly", type: subscription, at: start, expires: start + 30 * day),
                start
            ),
            (
                "DID_RENEW",
                try transaction(
                    12, original: 10, product: "com.example.monthly", type: subscription, at: start + 30 * day, expires: start + 60 * day),
                start + 30 * day
            ),
            (
                "DID_CHANGE_RENEWAL_PREF",
                try transaction(
                    13, original: 10, product: "com.example.yearly", type: subscription, at: start + 35 * day, expires: start + 400 * day),
                start + 35 * day
            ),
            (
                "ONE_TIME_CHARGE",
                try transaction(
                    21, original: 21, product: "com.example.lifetime", type: "Non-Consumable", at: start + 2 * day, expires: nil),
                start + 2 * day
            ),
            (
                "ONE_TIME_CHARGE",
                try transaction(31, original: 31, product: "com.example.coins", type: "Consumable", at: start + 3 * day, expires: nil),
                start + 3 * day
            ),
            (
                "ONE_TIME_CHARGE",
                try transaction(32, original: 32, product: "com.example.coins", type: "Consumable", at: start + 4 * day, expires: nil),
                start + 4 * day
            ),
        ]
        let receiver = NotificationReceiver(
            verifier: NotificationVerifier(anchors: [pki.root]),
            expectations: JWSExpectations(bundleIdentifier: bundleId, appAppleId: 531_412, environments: [.production]),
            store: store)
        for (index, event) in events.enumerated() {
            let uuid = String(format: "e0000000-0000-4000-8000-%012d", index)
            let token = try signer.sign(
                payload: Array(
                    #"{"notificationType":"\#(event.type)","notificationUUID":"\#(uuid)","data":{"appAppleId":531412,"bundleId":"\#(bundleId)","environment":"Production","signedTransactionInfo":"\#(event.transaction)","status":1},"version":"2.0","signedDate":\#(event.date)}"#
                        .utf8))
            guard case .accepted = receiver.receive(body: Array(#"{"signedPayload":"\#(token)"}"#.utf8)) else {
                throw BenchmarkError(description: "template notification \(index) (\(event.type)) was not accepted")
            }
        }
        return events.count
    }

    /// Copies customer 0's rows for customers 1…`customers` in one statement: every column as it
    /// is, except the identifiers, which get the customer's number.
    static func copyTemplates(cluster: PostgresCluster, customers: Int) throws {
        let columns = try cluster.sql(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'notifications' AND column_name <> 'id' "
                + "ORDER BY ordinal_position", database: "bench"
        ).split(separator: "\n").map(String.init)
        let replaced: [String: String] = [
            "notification_uuid": "md5(t.notification_uuid || '/' || g)::uuid::text",
            "transaction_id": "t.transaction_id || '-' || g",
            "original_transaction_id": "t.original_transaction_id || '-' || g",
            "app_account_token": "lpad(to_hex(g), 8, '0') || '-0000-4000-8000-000000000000'",
        ]
        guard Set(replaced.keys).isSubset(of: Set(columns)) else {
            throw BenchmarkError(description: "the notifications table lacks a column the copy replaces: \(columns)")
        }
        let values = columns.map { replaced[$0] ?? "t.\($0)" }
        try cluster.sql(
            "INSERT INTO notifications (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) "
                + "FROM notifications t CROSS JOIN generate_series(1, \(customers)) g", database: "bench")
    }
}
