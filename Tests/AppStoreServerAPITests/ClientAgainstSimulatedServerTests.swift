// The App Store Server API client against the simulated App Store Server on 127.0.0.1: every
// endpoint answered from the simulated App Store's state, every JWS signed by the JWS test PKI and
// verified by the client.

import AppStoreServerAPI
import Foundation
import JSON
import JWS
import ReceiptSigning
import ReceiptVerification
import ServerNotifications
import StoreTesting
import TestSupport
import Testing

@Suite("App Store Server API client against the simulated server")
@MainActor
struct ClientAgainstSimulatedServerTests {
    /// Six purchases, two renewals of the monthly subscription and a refund: eight transactions.
    func simulation(pageSize: Int) throws -> ServerWorld {
        let world = try ServerWorld(pageSize: pageSize)
        world.buy(Products.coins)
        world.buy(Products.level)
        world.buy(Products.monthly)
        world.buy(Products.yearly)
        world.buy(Products.coins, quantity: 2, applicationUsername: "8F2E33C8-0C1B-4E63-9D1A-2B7E8E3A5F10")
        world.buy(Products.season)
        world.advance(days: 70)
        world.store.refund(transactionIdentifier: world.historyIDs[0])
        world.server.synchronize(with: world.store)
        return world
    }

    @Test func history_acrossSeveralPages_returnsEveryTransactionOfTheSimulationOnce_inOrder() async throws {
        let world = try simulation(pageSize: 3)
        let client = try world.client()
        let expected = world.store.purchaseHistory
        #expect(expected.count == 8)
        let history = try await client.transactionHistory(transactionID: expected[4].transactionIdentifier)
        await world.shutdown()
        #expect(history.transactions.map { $0.value.transactionId } == expected.map(\.transactionIdentifier))
        #expect(Set(history.transactions.compactMap(\.value.transactionId)).count == 8)
        #expect(history.pageCount == 3)
        let pages = world.requests(.transactionHistory)
        #expect(pages.count == 3)
        #expect(pages.map(\.status) == [200, 200, 200])
        #expect(pages.map { $0.query?.prefix(11) } == [nil, "revision=3-", "revision=6-"])
        for (signed, entry) in zip(history.transactions, expected) {
            let t = signed.value
            #expect(t.productId == entry.productIdentifier)
            #expect(t.originalTransactionId == entry.originalTransactionIdentifier)
            #expect(t.purchaseDate?.milliseconds == Int64(entry.purchaseDate.timeIntervalSince1970 * 1000))
            #expect(t.expiresDate?.milliseconds == entry.expirationDate.map { Int64($0.timeIntervalSince1970 * 1000) })
            #expect(t.quantity == entry.quantity)
            #expect(t.bundleId == ServerWorld.bundleID)
            #expect(t.environment == .sandbox)
            #expect((t.revocationDate != nil) == (entry.cancellationDate != nil))
        }
        #expect(history.transactions[0].value.revocationReason == .other)
        #expect(history.transactions[4].value.appAccountToken == "8f2e33c8-0c1b-4e63-9d1a-2b7e8e3a5f10")
        #expect(history.transactions.filter { $0.value.transactionReason == .renewal }.count == 2)
    }

    @Test func history_revisionOfTheLastPage_returnsOnlyLaterTransactions_andFiltersApply() async throws {
        let world = try simulation(pageSize: 20)
        let client = try world.client()
        let id = world.historyIDs[0]
        let first = try await client.transactionHistory(transactionID: id)
        #expect(first.pageCount == 1 && first.transactions.count == 8)
        world.buy(Products.level)
        let later = try await client.transactionHistory(transactionID: id, revision: first.revision)
        #expect(later.transactions.map(\.value.transactionId) == [world.historyIDs.last])
        let subscriptions = try await client.transactionHistory(
            transactionID: id, request: TransactionHistoryRequest(productTypes: [.autoRenewable]))
        #expect(subscriptions.transactions.allSatisfy { $0.value.type == .autoRenewableSubscription })
        #expect(subscriptions.transactions.count == 4)
        let descending = try await client.transactionHistory(transactionID: id, request: TransactionHistoryRequest(order: .descending))
        #expect(descending.transactions.map(\.value.transactionId) == world.historyIDs.reversed())
        let revoked = try await client.transactionHistory(transactionID: id, request: TransactionHistoryRequest(revoked: true))
        #expect(revoked.transactions.map(\.value.transactionId) == [id])
        let group = try await client.transactionHistory(
            transactionID: id, request: TransactionHistoryRequest(productIDs: [Products.coins], subscriptionGroupIdentifiers: []))
        #expect(group.transactions.count == 2 && group.transactions.allSatisfy { $0.value.productId == Products.coins })
        let start = world.store.purchaseHistory[6].purchaseDate
        let window = try await client.transactionHistory(transactionID: id, request: TransactionHistoryRequest(startDate: start))
        #expect(window.transactions.map(\.value.transactionId) == Array(world.historyIDs[6...]))
        // A revision made for other filters is Apple's invalidRequestRevision.
        let mismatched = await apiError {
            try await client.transactionHistoryPage(
                transactionID: id, request: TransactionHistoryRequest(productTypes: [.consumable]), revision: first.revision)
        }
        #expect(mismatched?.apiErrorCode == .invalidRequestRevision)
        #expect(mismatched?.httpStatus == 400)
        await world.shutdown()
    }

    @Test func statuses_matchTheSimulatedSubscriptions() async throws {
        let world = try ServerWorld()
        world.buy(Products.monthly)
        world.buy(Products.yearly, applicationUsername: "0B7A3F52-34C6-4F1E-8C0D-6F9D4B2A1E77")
        world.store.setAutoRenew(false, productIdentifier: Products.monthly)
        world.advance(days: 40)
        let client = try world.client()
        let anyID = world.historyIDs[0]
        let statuses = try await client.subscriptionStatuses(transactionID: anyID)
        let simulated = world.store.subscriptionStatusContents()
        #expect(statuses.environment == .sandbox)
        #expect(statuses.bundleId == ServerWorld.bundleID)
        #expect(statuses.appAppleId == 1_234_567_890)
        #expect(statuses.groups.map(\.subscriptionGroupIdentifier) == simulated.map(\.subscriptionGroupIdentifier))
        #expect(statuses.groups.map(\.subscriptionGroupIdentifier) == [Products.monthlyGroup, Products.yearlyGroup])
        for (group, expected) in zip(statuses.groups, simulated) {
            #expect(group.lastTransactions.count == expected.lastTransactions.count)
            for (item, contents) in zip(group.lastTransactions, expected.lastTransactions) {
                #expect(item.status == contents.status)
                #expect(item.originalTransactionId == contents.originalTransactionIdentifier)
                #expect(item.transaction.value.transactionId == contents.transaction.purchase.transactionIdentifier)
                #expect(item.transaction.value.expiresDate?.milliseconds == contents.transaction.purchase.expirationDate.map(ms))
                #expect(item.renewalInfo.value.originalTransactionId == contents.originalTransactionIdentifier)
                #expect(item.renewalInfo.value.autoRenewStatus == contents.renewalInfo.autoRenewStatus)
                #expect(item.renewalInfo.value.renewalDate?.milliseconds == contents.renewalInfo.renewalDate.map(ms))
            }
        }
        let monthly = try #require(statuses.groups.first?.lastTransactions.first)
        #expect(monthly.status == .expired)
        #expect(monthly.renewalInfo.value.autoRenewStatus == .off)
        #expect(monthly.renewalInfo.value.expirationIntent == .customerCancelled)
        let yearly = try #require(statuses.groups.last?.lastTransactions.first)
        #expect(yearly.status == .active)
        #expect(yearly.transaction.value.appAccountToken == "0b7a3f52-34c6-4f1e-8c0d-6f9d4b2a1e77")
        // The status filter, and a refund turning the yearly subscription into "revoked".
        let active = try await client.subscriptionStatuses(transactionID: anyID, status: [.active])
        #expect(active.groups.flatMap(\.lastTransactions).map(\.originalTransactionId) == [yearly.originalTransactionId])
        world.store.refund(transactionIdentifier: yearly.originalTransactionId)
        world.server.synchronize(with: world.store)
        let afterRefund = try await client.subscriptionStatuses(transactionID: anyID)
        #expect(afterRefund.groups.last?.lastTransactions.first?.status == .revoked)
        #expect(afterRefund.groups.last?.lastTransactions.first?.transaction.value.revocationDate != nil)
        await world.shutdown()
    }

    @Test func refunds_andOrderLookup_matchTheSimulation() async throws {
        let world = try ServerWorld(pageSize: 1)
        world.buy(Products.coins)
        world.buy(Products.level)
        world.buy(Products.monthly)
        world.buy(Products.coins)
        let ids = world.historyIDs
        world.advance(days: 1)
        world.store.refund(transactionIdentifier: ids[3], reason: .appIssue)
        world.advance(days: 1)
        world.store.refund(transactionIdentifier: ids[1])
        world.server.synchronize(with: world.store)
        let client = try world.client()
        let refunds = try await client.refundHistory(transactionID: ids[0])
        #expect(refunds.map(\.value.transactionId) == [ids[3], ids[1]])  // in the order they were refunded
        #expect(refunds.map(\.value.revocationReason) == [.appIssue, .other])
        #expect(refunds.allSatisfy { $0.value.revocationDate != nil && $0.value.revocationType == .refundFull })
        #expect(world.requests(.refundHistory).count == 2)  // one refund per page

        for id in ids {
            let order = world.server.orderIdentifier(forTransactionIdentifier: id)
            #expect(order.count == 10 && order.allSatisfy { $0.isUppercase || $0.isNumber })
            let lookup = try await client.lookUpOrder(orderID: order)
            #expect(lookup.status == .valid)
            #expect(lookup.transactions.map(\.value.transactionId) == [id])
        }
        let unknown = try await client.lookUpOrder(orderID: "MK5TTTVWJH")
        #expect(unknown.status == .invalid && unknown.transactions.isEmpty)
        let info = try await client.transactionInfo(transactionID: ids[1])
        #expect(info.value.transactionId == ids[1] && info.value.revocationDate != nil)
        let missing = await apiError { try await client.transactionInfo(transactionID: "2999999999999999") }
        #expect(missing?.code == .apiError)
        #expect(missing?.apiErrorCode == .transactionIdNotFound)
        #expect(missing?.httpStatus == 404)
        #expect(missing?.attempts == 1)  // a 404 is not retried
        await world.shutdown()
    }

    @Test func testNotification_isVerifiedAndStoredByTheNotificationsEndpoint() async throws {
        let endpoint = try NotificationsReceiver(anchor: try PKIs.jws.get().root)
        let receiver = try LocalServer(endpoint)
        do {
            let world = try ServerWorld(notificationURL: url(receiver.server, "/notifications"))
            world.buy(Products.coins)
            let client = try world.client()
            let token = try await client.requestTestNotification()
            let status = try await client.testNotificationStatus(token: token)
            #expect(status.notification.value.notificationType == .test)
            #expect(status.notification.value.data?.bundleId == ServerWorld.bundleID)
            #expect(status.notification.value.data?.environment == .sandbox)
            #expect(status.sendAttempts.map(\.result) == [.success])
            // Verified and stored by the receiver `serve` mounts, byte for byte the token the status shows.
            let stored = endpoint.stored
            #expect(stored.count == 1)
            #expect(stored.first?.notificationType == "TEST")
            #expect(stored.first?.notificationUUID == status.notification.value.notificationUUID)
            #expect(stored.first.map { Array($0.signedPayload.utf8) } == status.notification.jws.token)
            // It is in the notification history too, and a second one pages after it.
            _ = try await client.requestTestNotification()
            let window = NotificationHistoryRequest(
                startDate: world.clock.now.addingTimeInterval(-3600), endDate: world.clock.now.addingTimeInterval(3600))
            let history = try await client.notificationHistory(window)
            #expect(history.count == 2)
            #expect(history.first?.notification.value.notificationUUID == status.notification.value.notificationUUID)
            #expect(history.allSatisfy { $0.sendAttempts.map(\.result) == [.success] })
            let failures = try await client.notificationHistory(
                NotificationHistoryRequest(startDate: window.startDate, endDate: window.endDate, onlyFailures: true))
            #expect(failures.isEmpty)
            let unknown = await apiError { try await client.testNotificationStatus(token: "f00d") }
            #expect(unknown?.apiErrorCode == .testNotificationNotFound)
            await world.shutdown()
        }
        await receiver.shutdown()
    }

    @Test func testNotification_toAnEndpointThatFails_isRecordedAsUnsuccessful() async throws {
        let endpoint = try NotificationsReceiver(anchor: try PKIs.jws.get().root, failWith: 500)
        let receiver = try LocalServer(endpoint)
        do {
            let world = try ServerWorld(pageSize: 1, notificationURL: url(receiver.server, "/notifications"))
            let client = try world.client()
            _ = try await client.requestTestNotification()
            let token = try await client.requestTestNotification()
            let status = try await client.testNotificationStatus(token: token)
            #expect(status.sendAttempts.map(\.result) == [.unsuccessfulHTTPResponseCode])
            #expect(endpoint.requests == 2)  // one attempt each, both answered 500
            #expect(endpoint.stored.isEmpty)
            let window = NotificationHistoryRequest(
                startDate: world.clock.now.addingTimeInterval(-60), endDate: world.clock.now.addingTimeInterval(60), onlyFailures: true)
            let history = try await client.notificationHistory(window)
            #expect(history.count == 2)
            #expect(world.requests(.notificationHistory).count == 2)  // one per page
            await world.shutdown()
        }
        await receiver.shutdown()
        let world = try ServerWorld()
        let noURL = await apiError { try await world.client().requestTestNotification() }
        #expect(noURL?.apiErrorCode == .serverNotificationUrlNotFound)
        await world.shutdown()
    }

    @Test func consumptionInformation_andRenewalExtension_reachTheSimulation() async throws {
        let world = try ServerWorld()
        world.buy(Products.coins)
        world.buy(Products.monthly)
        let client = try world.client()
        let ids = world.historyIDs
        let consumption = ConsumptionRequest(
            customerConsented: true, consumptionStatus: 2, platform: 1, sampleContentProvided: false, deliveryStatus: 0,
            appAccountToken: nil, accountTenure: 3, playTime: 4, lifetimeDollarsRefunded: 0, lifetimeDollarsPurchased: 2, userStatus: 1)
        try await client.sendConsumptionInformation(transactionID: ids[0], consumption)
        #expect(world.server.consumptionRequests.map(\.transactionIdentifier) == [ids[0]])
        #expect(world.server.consumptionRequests.first?.body["consumptionStatus"] == .number("2"))
        var refused = consumption
        refused.customerConsented = false
        let noConsent = await apiError { try await client.sendConsumptionInformation(transactionID: ids[0], refused) }
        #expect(noConsent?.apiErrorCode == .invalidCustomerConsented)

        let before = try #require(
            world.store.subscriptionStatusContents().first?.lastTransactions.first?.transaction.purchase.expirationDate)
        let request = ExtendRenewalDateRequest(extendByDays: 7, extendReasonCode: 1)
        let extended = try await client.extendSubscriptionRenewalDate(originalTransactionID: ids[1], request)
        #expect(extended.success)
        #expect(extended.originalTransactionId == ids[1])
        #expect(extended.effectiveDate?.milliseconds == ms(before.addingTimeInterval(7 * 86_400)))
        // The same request identifier extends once.
        let again = try await client.extendSubscriptionRenewalDate(originalTransactionID: ids[1], request)
        #expect(again == extended)
        let statuses = try await client.subscriptionStatuses(transactionID: ids[1])
        #expect(statuses.groups.first?.lastTransactions.first?.transaction.value.expiresDate == extended.effectiveDate)
        #expect(statuses.groups.first?.lastTransactions.first?.renewalInfo.value.renewalDate == extended.effectiveDate)
        world.server.synchronize(with: world.store)
        #expect(
            world.store.subscriptionStatusContents().first?.lastTransactions.first?.transaction.purchase.expirationDate
                == before.addingTimeInterval(7 * 86_400))
        let notOriginal = await apiError {
            try await client.extendSubscriptionRenewalDate(
                originalTransactionID: ids[0], ExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: 0))
        }
        #expect(notOriginal?.apiErrorCode == .transactionIdIsNotOriginalTransactionId)
        let tooLong = await apiError {
            try await client.extendSubscriptionRenewalDate(
                originalTransactionID: ids[1], ExtendRenewalDateRequest(extendByDays: 91, extendReasonCode: 0))
        }
        #expect(tooLong?.apiErrorCode == .invalidExtendByDays)
        await world.shutdown()
    }
}

/// Milliseconds since 1970 of a whole-second simulated date.
func ms(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1000) }
