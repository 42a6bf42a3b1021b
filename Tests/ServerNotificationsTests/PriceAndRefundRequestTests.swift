import Foundation
import JWS
import ServerNotifications
import StoreTesting
import TestSupport
import Testing

/// The simulated App Store's price increases and refund requests, received and stored as Apple
/// sends them: `PRICE_INCREASE` (`PENDING`, then `ACCEPTED`), renewals at the new price,
/// `CONSUMPTION_REQUEST` and `REFUND_DECLINED` for an old transaction — none of which ends a
/// paying customer's access.
@MainActor
@Suite struct PriceAndRefundRequestTests {
    /// The price in milliunits of a signed transaction the simulation issued (decoded without
    /// verifying: the test reads what its own issuer wrote).
    func price(_ app: SimulatedApp, _ transactionIdentifier: String) throws -> Int64? {
        let token = try #require(try app.store.signedTransaction(transactionIdentifier: transactionIdentifier))
        return try JWSTransaction(jsonPayload: try CompactJWS(token).unverifiedPayload, limits: .default).price
    }

    @Test func priceIncreaseConsentedRenewsAtTheNewPrice() throws {
        let store = try SQLiteNotificationStore(path: temporaryDatabase())
        let app = try SimulatedApp(transport: ReceiverTransport(receiver: try receiver(store: store)))
        let original = app.buy(IDs.monthly)
        app.moment()
        app.store.increasePrice(productIdentifier: IDs.monthly, to: Decimal(string: "6.99") ?? 0)
        app.flush()
        #expect(app.store.renewalInfoContents(originalTransactionIdentifier: original)?.priceIncreaseStatus == .notResponded)
        #expect(app.store.renewalInfoContents(originalTransactionIdentifier: original)?.renewalPrice == Decimal(string: "6.99"))
        var state = try #require(try store.subscriptionState(originalTransactionId: original, at: app.clock.now))
        #expect(state.isActive && state.latestNotificationType == "PRICE_INCREASE" && state.latestSubtype == "PENDING")

        app.moment()
        app.store.respondToPriceIncrease(originalTransactionIdentifier: original, consents: true)
        app.flush()
        state = try #require(try store.subscriptionState(originalTransactionId: original, at: app.clock.now))
        #expect(state.isActive && state.latestSubtype == "ACCEPTED" && state.latestTransactionId == original)
        #expect(app.store.renewalInfoContents(originalTransactionIdentifier: original)?.priceIncreaseStatus == .consentedOrNotified)

        app.advance(days: 31)
        app.flush()
        let renewal = try #require(app.store.purchaseHistory.last { $0.originalTransactionIdentifier == original })
        #expect(renewal.transactionIdentifier != original)
        #expect(try price(app, original) == 5000)
        #expect(try price(app, renewal.transactionIdentifier) == 6990)
        state = try #require(try store.subscriptionState(originalTransactionId: original, at: app.clock.now))
        #expect(state.isActive && state.latestTransactionId == renewal.transactionIdentifier)
    }

    @Test func priceIncreaseRefusedEndsWithThePeriod() throws {
        let store = try SQLiteNotificationStore(path: temporaryDatabase())
        let app = try SimulatedApp(transport: ReceiverTransport(receiver: try receiver(store: store)))
        let original = app.buy(IDs.monthly)
        app.moment()
        app.store.increasePrice(productIdentifier: IDs.monthly, to: 7)
        app.moment()
        app.store.respondToPriceIncrease(originalTransactionIdentifier: original, consents: false)
        app.flush()
        var state = try #require(try store.subscriptionState(originalTransactionId: original, at: app.clock.now))
        #expect(state.isActive && state.autoRenewStatus == 0 && state.latestSubtype == "AUTO_RENEW_DISABLED")
        app.advance(days: 31)
        app.flush()
        state = try #require(try store.subscriptionState(originalTransactionId: original, at: app.clock.now))
        #expect(!state.isActive && state.latestNotificationType == "EXPIRED")
        #expect(app.store.purchaseHistory.filter { $0.originalTransactionIdentifier == original }.count == 1)
    }

    @Test func refundRequestedThenDeclinedKeepsTheCurrentPeriod() throws {
        let store = try SQLiteNotificationStore(path: temporaryDatabase())
        let app = try SimulatedApp(transport: ReceiverTransport(receiver: try receiver(store: store)))
        let original = app.buy(IDs.monthly)
        app.advance(days: 31)  // renewed: the first transaction is now an old one
        let renewal = try #require(app.store.purchaseHistory.last { $0.originalTransactionIdentifier == original })
        app.moment()
        app.store.requestRefund(transactionIdentifier: original)
        app.moment()
        app.store.declineRefund(transactionIdentifier: original)
        app.flush()
        #expect(app.sender.deliveries.allSatisfy { $0.isDelivered })
        let types = try store.notifications(.all).compactMap(\.notificationType)
        #expect(types.suffix(2) == ["CONSUMPTION_REQUEST", "REFUND_DECLINED"], "\(types)")
        let state = try #require(try store.subscriptionState(originalTransactionId: original, at: app.clock.now))
        // The re-signed old transaction does not replace the renewal.
        #expect(state.isActive && !state.isRevoked && state.latestTransactionId == renewal.transactionIdentifier)
        #expect(state.latestNotificationType == "REFUND_DECLINED")
    }
}
