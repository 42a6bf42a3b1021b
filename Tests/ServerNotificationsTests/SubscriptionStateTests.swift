import Foundation
import JWS
import ServerNotifications
import StoreTesting
import TestSupport
import Testing

@MainActor
@Suite struct SubscriptionStateTests {
    /// The derived state at the simulation's current time equals what the simulated App Store holds.
    func expectMatches(
        _ state: SubscriptionState?, _ app: SimulatedApp, _ original: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let state else {
            Issue.record("no state for \(original)", sourceLocation: sourceLocation)
            return
        }
        let status = app.store.subscriptionStatus(originalTransactionIdentifier: original)
        let renewal = app.store.renewalInfoContents(originalTransactionIdentifier: original)
        let latest = app.store.purchaseHistory.last { $0.originalTransactionIdentifier == original }
        #expect(state.isActive == (status == .active || status == .billingGracePeriod), "\(status as Any)", sourceLocation: sourceLocation)
        #expect(state.isRevoked == (status == .revoked), sourceLocation: sourceLocation)
        #expect(state.isInBillingRetryPeriod == (status == .billingRetry || status == .billingGracePeriod), sourceLocation: sourceLocation)
        #expect(state.isInGracePeriod == (status == .billingGracePeriod), sourceLocation: sourceLocation)
        #expect(state.autoRenewStatus == renewal?.autoRenewStatus.rawValue, sourceLocation: sourceLocation)
        #expect(state.latestTransactionId == latest?.transactionIdentifier, sourceLocation: sourceLocation)
        #expect(state.expiresDate == latest?.expirationDate.map(StoredNotification.milliseconds), sourceLocation: sourceLocation)
    }

    /// Purchase, renewals, auto-renew off, expiry: delivered in order, in reverse, and with the
    /// renewal before the purchase and the expiry before the renewal, the derived state is the
    /// simulation's; read at an earlier date it is the state of then.
    @Test func outOfOrderDeliveryGivesTheSameState() throws {
        // Collect the signed bodies (the transport stores nothing: every attempt is refused).
        let collecting = try SimulatedApp(
            transport: CurlNotificationTransport(), url: URL(string: "http://127.0.0.1:9/n") ?? URL(fileURLWithPath: "/"), retrySchedule: []
        )
        let original = collecting.buy(IDs.monthly)
        collecting.advance(days: 31)  // DID_RENEW
        let afterFirstRenewal = collecting.clock.now
        collecting.advance(days: 30)  // DID_RENEW
        collecting.store.setAutoRenew(false, productIdentifier: IDs.monthly)  // DID_CHANGE_RENEWAL_STATUS
        collecting.advance(days: 40)  // EXPIRED
        collecting.flush()
        let deliveries = collecting.sender.deliveries
        #expect(deliveries.map(\.event.type) == [.subscribed, .didRenew, .didRenew, .didChangeRenewalStatus, .expired])
        #expect(deliveries.last?.event.subtype == .voluntary)
        #expect(deliveries.allSatisfy { !$0.isDelivered })

        let orders: [(String, [Int])] = [
            ("in order", [0, 1, 2, 3, 4]),
            ("reversed", [4, 3, 2, 1, 0]),
            ("renewal before purchase", [1, 0, 2, 3, 4]),
            ("expiry before renewal", [0, 1, 4, 2, 3]),
            ("expiry first, purchase last", [4, 2, 3, 1, 0]),
        ]
        for (name, order) in orders {
            let store = try SQLiteNotificationStore(path: temporaryDatabase(name))
            let receiving = try receiver(store: store)
            for index in order {
                #expect(receiving.receive(body: deliveries[index].body).isAcknowledged, "\(name)")
            }
            let state = try store.subscriptionState(originalTransactionId: original, at: collecting.clock.now)
            expectMatches(state, collecting, original)
            #expect(state?.isActive == false && state?.autoRenewStatus == 0, "\(name)")
            #expect(state?.latestNotificationType == "EXPIRED", "\(name)")
            #expect(state?.notificationCount == 5)
            // Read at the time of the first renewal: active, renewing, the first renewal's expiry.
            let then = try store.subscriptionState(originalTransactionId: original, at: afterFirstRenewal)
            #expect(then?.isActive == true && then?.autoRenewStatus == 1, "\(name)")
            #expect(then?.notificationCount == 2)
            #expect(then?.latestTransactionId == collecting.store.purchaseHistory[1].transactionIdentifier, "\(name)")
        }
    }

    /// Billing failure with a grace period, the grace period's end, recovery; a refund; a
    /// Family Sharing revocation; a renewal-status change: each notification type the simulation
    /// sends, and the state derived from them is the simulation's after each step.
    @Test func everyNotificationTypeOfTheSimulation() throws {
        let store = try SQLiteNotificationStore(path: temporaryDatabase())
        let receiving = try receiver(store: store)
        let app = try SimulatedApp(transport: ReceiverTransport(receiver: receiving))
        let monthly = app.buy(IDs.monthly)
        let yearly = app.buy(IDs.yearly)
        let level = app.buy(IDs.level)
        func check(_ step: String) throws {
            app.flush()
            #expect(app.sender.deliveries.allSatisfy { $0.isDelivered }, "\(step)")
            for original in [monthly, yearly] {
                expectMatches(try store.subscriptionState(originalTransactionId: original, at: app.clock.now), app, original)
            }
        }
        try check("purchases")

        // Billing fails with a 16-day grace period: still entitled in the grace period.
        app.store.setBillingFailure(true, productIdentifier: IDs.monthly, gracePeriod: 16 * 86_400)
        app.advance(days: 32)
        try check("billing retry, grace period")
        let inGrace = try #require(try store.subscriptionState(originalTransactionId: monthly, at: app.clock.now))
        #expect(inGrace.isInGracePeriod && inGrace.isActive && inGrace.latestNotificationType == "DID_FAIL_TO_RENEW")
        #expect(inGrace.latestSubtype == "GRACE_PERIOD")
        app.advance(days: 20)
        try check("grace period over")
        let retrying = try #require(try store.subscriptionState(originalTransactionId: monthly, at: app.clock.now))
        #expect(!retrying.isActive && retrying.isInBillingRetryPeriod && !retrying.isInGracePeriod)
        #expect(retrying.latestNotificationType == "GRACE_PERIOD_EXPIRED")
        // The card works again: renewed at once.
        app.moment()
        app.store.setBillingFailure(false, productIdentifier: IDs.monthly)
        app.store.processAllEvents()
        try check("recovered")
        let recovered = try #require(try store.subscriptionState(originalTransactionId: monthly, at: app.clock.now))
        #expect(recovered.isActive && !recovered.isInBillingRetryPeriod && recovered.latestSubtype == "BILLING_RECOVERY")

        // Auto-renew off and on again.
        app.moment()
        app.store.setAutoRenew(false, productIdentifier: IDs.yearly)
        try check("auto-renew off")
        app.moment()
        #expect(try store.subscriptionState(originalTransactionId: yearly, at: app.clock.now)?.autoRenewStatus == 0)
        app.store.setAutoRenew(true, productIdentifier: IDs.yearly)
        try check("auto-renew on")

        // A refund of the yearly subscription: revoked at once.
        app.advance(days: 1)
        app.store.refund(transactionIdentifier: yearly)
        try check("refund")
        let refunded = try #require(try store.subscriptionState(originalTransactionId: yearly, at: app.clock.now))
        #expect(refunded.isRevoked && !refunded.isActive && refunded.latestNotificationType == "REFUND")
        // The non-consumable shared through Family Sharing, then revoked.
        app.store.revokeFamilySharing(transactionIdentifier: level)
        try check("revoke")
        let revoked = try #require(try store.subscriptionState(originalTransactionId: level, at: app.clock.now))
        #expect(revoked.isRevoked && !revoked.isActive && revoked.latestNotificationType == "REVOKE")

        // Billing never recovers: after 60 days of retry, EXPIRED (BILLING_RETRY).
        app.store.setBillingFailure(true, productIdentifier: IDs.monthly)
        app.advance(days: 40)
        app.advance(days: 70)
        try check("expired by billing")
        let expired = try #require(try store.subscriptionState(originalTransactionId: monthly, at: app.clock.now))
        #expect(!expired.isActive && expired.latestNotificationType == "EXPIRED" && expired.latestSubtype == "BILLING_RETRY")

        let types = Set(try store.notifications(.all).compactMap(\.notificationType))
        #expect(
            types == [
                "SUBSCRIBED", "ONE_TIME_CHARGE", "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "DID_RENEW", "DID_CHANGE_RENEWAL_STATUS",
                "REFUND", "REVOKE", "EXPIRED",
            ])
    }
}
