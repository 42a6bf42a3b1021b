import Foundation
import RMStore
import StoreTesting

/// The app and the customers `receipt-tool simulate` serves: a small catalog and a few histories
/// that show what the App Store Server API answers (a renewed subscription, a consumable, a
/// refund), each customer a store of its own, so a transaction id answers only its customer's data.
enum SimulatedCustomers {
    static let bundleID = "com.example.app"
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

    /// One customer as `simulate` reports it.
    struct Customer {
        let name: String
        let summary: String
        let purchases: [ReceiptInAppPurchase]
    }

    /// Builds every customer's history on `clock` (which ends at the real time now) and hands each
    /// to `server`.
    @MainActor
    static func populate(_ server: SimulatedAppStoreServer, issuer: JWSIssuer, clock: SimulatedClock) -> [Customer] {
        let day: TimeInterval = 86_400
        clock.set(Date().addingTimeInterval(-80 * day))
        func store(seed: UInt64) -> SimulatedAppStore {
            SimulatedAppStore(
                catalog: catalog, bundleIdentifier: bundleID, jwsIssuer: issuer, clock: clock, deliversAutomatically: false, seed: seed)
        }
        // An hour between purchases, so that every purchase has a date of its own.
        func buy(_ product: String, in store: SimulatedAppStore) {
            store.add(Payment(productIdentifier: product))
            store.processAllEvents()
            clock.advance(by: 3600)
        }
        // Bob first: his purchases are the older ones, and his store renews nothing.
        let bob = store(seed: 2)
        buy("com.example.level", in: bob)
        buy("com.example.coins", in: bob)
        buy("com.example.coins", in: bob)
        clock.advance(by: day)
        if let refunded = bob.purchaseHistory.last?.transactionIdentifier { bob.refund(transactionIdentifier: refunded) }
        buy("com.example.yearly", in: bob)

        let alice = store(seed: 1)
        buy("com.example.monthly", in: alice)
        buy("com.example.coins", in: alice)
        // Two renewals of the monthly subscription (a month is 28 to 31 days).
        alice.advanceClock(by: 32 * day)
        alice.processAllEvents()
        alice.advanceClock(by: 32 * day)
        alice.processAllEvents()
        // Signed dates are today's from now on; the monthly period runs until after today.
        clock.set(Date())

        server.synchronize(with: alice, customer: "alice")
        server.synchronize(with: bob, customer: "bob")
        return [
            Customer(
                name: "alice", summary: "a monthly subscription that renewed twice, and coins (consumable)",
                purchases: alice.purchaseHistory),
            Customer(
                name: "bob", summary: "a level (non-consumable), coins twice (the second refunded), a yearly subscription",
                purchases: bob.purchaseHistory),
        ]
    }
}
