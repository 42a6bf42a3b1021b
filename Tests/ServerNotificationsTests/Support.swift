import Foundation
import JWS
import RMStore
import ReceiptSigning
import ReceiptVerification
import ServerNotifications
import StoreTesting
import TestSupport
import Testing

enum IDs {
    static let monthly = "com.example.monthly"
    static let yearly = "com.example.yearly"
    static let level = "com.example.level"
    static let bundle = "com.example.app"
    static let appAppleId: Int64 = 531_412
}

/// A catalog with two subscriptions and a non-consumable.
func catalog() -> StoreCatalog {
    StoreCatalog(products: [
        SimulatedProduct(
            Product(
                identifier: IDs.monthly, localizedTitle: "Monthly", price: 5, kind: .autoRenewableSubscription,
                subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .month))),
        SimulatedProduct(
            Product(
                identifier: IDs.yearly, localizedTitle: "Yearly", price: 40, kind: .autoRenewableSubscription,
                subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .year))),
        SimulatedProduct(Product(identifier: IDs.level, localizedTitle: "Level", price: 2, kind: .nonConsumable)),
    ])
}

/// Hands each POST to a receiver in this process (no socket): the real verifier and store, the
/// HTTP statuses `serve` would answer.
struct ReceiverTransport: NotificationTransport {
    let receiver: NotificationReceiver

    func post(_ body: [UInt8], to url: URL) -> NotificationAttemptResult {
        switch receiver.receive(body: body) {
        case .accepted, .duplicate: .status(200)
        case .rejected(let rejection): .status(rejection.mayBeOurConfiguration ? 500 : 400)
        case .unavailable: .status(503)
        }
    }
}

/// The simulated App Store (production, signing with the JWS test PKI) with a notification sender.
@MainActor
final class SimulatedApp {
    let clock = SimulatedClock()
    let store: SimulatedAppStore
    let sender: AppStoreNotificationSender

    init(transport: any NotificationTransport, url: URL = URL(fileURLWithPath: "/"), retrySchedule: [TimeInterval]? = nil) throws {
        let pki = try PKIs.jws.get()
        store = SimulatedAppStore(
            catalog: catalog(), bundleIdentifier: IDs.bundle, jwsIssuer: JWSIssuer(pki: pki, environment: .production), clock: clock,
            deliversAutomatically: false)
        sender = AppStoreNotificationSender(
            url: url, signer: pki.jwsSigner(), bundleIdentifier: IDs.bundle, appAppleId: IDs.appAppleId, bundleVersion: "1.0",
            environment: .production, clock: clock, retrySchedule: retrySchedule ?? AppStoreNotificationSender.appleRetrySchedule,
            transport: transport)
        store.notificationSender = sender
    }

    /// Buys `product` and returns the new transaction's identifier.
    @discardableResult
    func buy(_ product: String, user: String? = nil) -> String {
        store.add(Payment(productIdentifier: product, applicationUsername: user))
        store.processAllEvents()
        let purchase = store.purchaseHistory.last { $0.productIdentifier == product }
        return purchase?.transactionIdentifier ?? ""
    }

    /// Advances the simulated clock by `days` and lets everything due happen.
    func advance(days: Double) {
        store.advanceClock(by: days * 86_400)
        store.processAllEvents()
    }

    /// Advances the simulated clock by one second: a step that follows another (a recovery after
    /// a failure, auto-renew switched on after off) is then signed after it, as Apple's would be.
    /// Notifications signed at the same instant are ordered by a rule of their own
    /// (``SubscriptionState``), not by the order the simulation happened to send them.
    func moment() {
        store.advanceClock(by: 1)
        store.processAllEvents()
    }

    /// Waits for every notification attempt scheduled so far.
    func flush() { sender.waitUntilIdle() }
}

/// A receiver trusting the JWS test PKI, expecting the app's bundle id, app Apple id and production.
func receiver(store: any NotificationStore, clock: @escaping @Sendable () -> Date = { Date() }) throws -> NotificationReceiver {
    NotificationReceiver(
        verifier: NotificationVerifier(anchors: [try PKIs.jws.get().root], cache: nil),
        expectations: JWSExpectations(bundleIdentifier: IDs.bundle, appAppleId: IDs.appAppleId, environments: [.production]),
        store: store, clock: clock)
}

/// A fresh SQLite database path in a temporary directory.
func temporaryDatabase(_ label: String = #function) -> String {
    temporaryDirectory(label).appendingPathComponent("notifications.db").path
}

/// A row with only what a store needs.
func row(_ uuid: String, type: String = "TEST", original: String? = nil, signed: Int64? = nil) -> StoredNotification {
    StoredNotification(
        notificationUUID: uuid, notificationType: type, signedDate: signed, receivedDate: 1_700_000_000_000,
        originalTransactionId: original,
        signedPayload: "payload-\(uuid)")
}

/// Runs `body` on `count` threads at once and waits for all of them.
func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    group.wait()
}
