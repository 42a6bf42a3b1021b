// The simulated App Store's StoreKit 2 seam: the JWS it attaches to transactions, what their
// payloads say (Apple's fields, the receipt's ids and dates), renewals, restores, refunds, renewal
// info and subscription statuses. The signatures themselves are verified end to end in
// RMStoreVerifiersTests; here the payloads are read with the JWS decoder.

import Foundation
import JWS
import RMStore
import StoreTesting
import TestSupport
import Testing

/// The payload of a token, decoded (not verified).
func decodedTransaction(_ token: String?, sourceLocation: SourceLocation = #_sourceLocation) throws -> JWSTransaction {
    let token = try #require(token, "no JWS", sourceLocation: sourceLocation)
    return try CompactJWS(token).decodePayloadToVerify(as: JWSTransaction.self)
}

/// The payload of a renewal info token, decoded (not verified).
func decodedRenewalInfo(_ token: String?, sourceLocation: SourceLocation = #_sourceLocation) throws -> JWSRenewalInfo {
    let token = try #require(token, "no JWS", sourceLocation: sourceLocation)
    return try CompactJWS(token).decodePayloadToVerify(as: JWSRenewalInfo.self)
}

/// Milliseconds since 1970 of a simulated date (whole seconds).
func ms(_ date: Date?) -> Int64? {
    date.map { Int64($0.timeIntervalSince1970 * 1000) }
}

/// An issuer that always fails.
struct FailingJWSIssuer: JWSIssuing {
    struct Failure: Error {}
    func issueTransaction(_ contents: TransactionContents) throws -> String { throw Failure() }
    func issueRenewalInfo(_ contents: RenewalInfoContents) throws -> String { throw Failure() }
}

@Suite("Signed transactions (StoreKit 2)")
@MainActor
struct SignedTransactionTests {
    /// A fixture whose simulated store writes JSON receipts and signs JWS with the shared JWS PKI.
    func fixture(catalog: StoreCatalog = defaultCatalog(), label: String = #function) throws -> Fixture {
        let f = Fixture(catalog: catalog, receiptIssuer: JSONReceiptIssuerForTests(), label: label)
        f.sim.jwsIssuer = JWSIssuer(pki: try PKIs.jws.get())
        f.requestAllProducts()
        return f
    }

    func receipt(_ f: Fixture) throws -> ReceiptContents {
        try JSONReceiptIssuerForTests.decode(Data(contentsOf: try #require(f.sim.receiptURL)))
    }

    @Test func consumable_carriesApplesFields_andTheReceiptsIdsAndDates() throws {
        let f = try fixture()
        let bought = try #require(f.buy(IDs.coins).successes.first)
        let token = try #require(bought.jwsRepresentation)
        let jws = try CompactJWS(token)
        #expect(jws.header.algorithm == .es256)
        #expect(jws.header.certificateChain?.count == 3)
        let t = try decodedTransaction(token)
        let entry = try #require(try receipt(f).inAppPurchases.first { $0.transactionIdentifier == bought.identifier })
        #expect(t.transactionId == bought.identifier)
        #expect(t.originalTransactionId == entry.originalTransactionIdentifier)
        #expect(t.originalTransactionId == bought.identifier)
        #expect(t.bundleId == "com.example.app")
        #expect(t.productId == IDs.coins)
        #expect(t.purchaseDate?.milliseconds == ms(entry.purchaseDate))
        #expect(t.purchaseDate?.milliseconds == ms(bought.date))
        #expect(t.originalPurchaseDate?.milliseconds == ms(entry.originalPurchaseDate))
        #expect(t.quantity == 1)
        #expect(t.type == .consumable)
        #expect(t.inAppOwnershipType == .purchased)
        #expect(t.signedDate?.milliseconds == ms(f.sim.clock.now))
        #expect(t.environment == .sandbox)
        #expect(t.transactionReason == .purchase)
        #expect(t.storefront == "USA")
        #expect(t.storefrontId == "143441")
        #expect(t.price == 990)  // 0.99 in milliunits
        #expect(t.currency == "USD")
        // Not a subscription, no token, not refunded: those members are absent, not null.
        #expect(t.expiresDate == nil && t.webOrderLineItemId == nil && t.subscriptionGroupIdentifier == nil)
        #expect(t.appAccountToken == nil && t.revocationDate == nil && t.revocationReason == nil)
        #expect(t.unknownFields.isEmpty)
        let text = String(decoding: t.jsonPayload, as: UTF8.self)
        #expect(text.hasPrefix(#"{"transactionId":"\#(bought.identifier)","originalTransactionId":"#))
    }

    @Test func quantity_andAppAccountToken_comeFromThePayment() throws {
        let f = try fixture()
        let token = UUID()
        let recorder = PurchaseRecorder()
        f.store.addPayment(IDs.coins, quantity: 3, applicationUsername: token.uuidString) { recorder.successes.append($0) }
        f.sim.processAllEvents()
        let bought = try #require(recorder.successes.first)
        #expect(bought.payment.appAccountToken == token)
        let t = try decodedTransaction(bought.jwsRepresentation)
        #expect(t.quantity == 3)
        #expect(t.appAccountToken == token.uuidString.lowercased())  // Apple writes UUIDs lower-cased
        // A username that is not a UUID is not an app account token.
        let named = try #require(f.buy(IDs.level, applicationUsername: "player-42").successes.first)
        #expect(named.payment.appAccountToken == nil)
        #expect(try decodedTransaction(named.jwsRepresentation).appAccountToken == nil)
    }

    @Test func subscription_andEachRenewal_haveTheirOwnJWS_matchingTheReceipt() throws {
        let f = try fixture()
        let first = try #require(f.buy(IDs.monthly).successes.first)
        f.log.clear()
        f.sim.advanceClock(by: 65 * 86_400)  // past two renewals
        f.sim.processAllEvents()
        let renewals = f.log.all(.rmPaymentTransactionFinished).compactMap { $0.rm.transaction }
        #expect(renewals.count == 2)
        let group = try #require(f.sim.catalog.product(IDs.monthly)?.effectiveSubscriptionGroupIdentifier)
        #expect(group.count == 8 && group.allSatisfy(\.isNumber))
        let entries = try receipt(f).inAppPurchases
        #expect(entries.count == 3)
        var tokens: Set<String> = []
        for transaction in [first] + renewals {
            let token = try #require(transaction.jwsRepresentation)
            tokens.insert(token)
            let t = try decodedTransaction(token)
            let entry = try #require(entries.first { $0.transactionIdentifier == transaction.identifier })
            // The JWS and the receipt agree on every id and date.
            #expect(t.transactionId == entry.transactionIdentifier)
            #expect(t.originalTransactionId == entry.originalTransactionIdentifier)
            #expect(t.originalTransactionId == first.identifier)
            #expect(t.webOrderLineItemId == entry.webOrderLineItemID.map(String.init))
            #expect(t.webOrderLineItemId == transaction.webOrderLineItemID.map(String.init))
            #expect(t.purchaseDate?.milliseconds == ms(entry.purchaseDate))
            #expect(t.originalPurchaseDate?.milliseconds == ms(entry.originalPurchaseDate))
            #expect(t.expiresDate?.milliseconds == ms(entry.expirationDate))
            #expect(t.expiresDate?.milliseconds == ms(transaction.expirationDate))
            #expect(t.type == .autoRenewableSubscription)
            #expect(t.subscriptionGroupIdentifier == group)
            #expect(t.price == 5000)
            #expect(t.transactionReason == (transaction.identifier == first.identifier ? .purchase : .renewal))
        }
        #expect(tokens.count == 3)
        // Each renewal is signed when the store reports it: after the clock moved.
        #expect(try decodedTransaction(renewals.last?.jwsRepresentation).signedDate?.milliseconds == ms(f.sim.clock.now))
        #expect(try decodedTransaction(first.jwsRepresentation).signedDate?.milliseconds == ms(first.date))
    }

    @Test func restoredTransaction_carriesThePurchaseItRestores() throws {
        let f = try fixture()
        let level = try #require(f.buy(IDs.level).successes.first)
        f.sim.advanceClock(by: 3600)
        f.log.clear()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        let restored = try #require(f.log.first(.rmPaymentTransactionFinished)?.rm.transaction)
        #expect(restored.state == .restored)
        #expect(restored.identifier != level.identifier)
        #expect(restored.original?.identifier == level.identifier)
        let t = try decodedTransaction(restored.jwsRepresentation)
        #expect(t.transactionId == level.identifier)
        #expect(t.originalTransactionId == level.identifier)
        #expect(t.purchaseDate?.milliseconds == ms(level.date))
        #expect(t.signedDate?.milliseconds == ms(f.sim.clock.now))  // signed again, now
    }

    @Test func failedAndDeferredTransactions_carryNoJWS() throws {
        let f = try fixture()
        f.sim.setOutcome(.cancelled, forProduct: IDs.level)
        let failed = try #require(f.buy(IDs.level).failures.first?.0)
        #expect(failed.state == .failed)
        #expect(failed.jwsRepresentation == nil)
        f.sim.setOutcome(.deferred(.pending), forProduct: IDs.pack)
        f.buy(IDs.pack)
        let deferred = try #require(f.log.first(.rmPaymentTransactionDeferred)?.rm.transaction)
        #expect(deferred.jwsRepresentation == nil)
    }

    @Test func withoutAnIssuer_noJWS_andOnDemandSigningSaysWhy() throws {
        let f = Fixture(receiptIssuer: JSONReceiptIssuerForTests())
        f.requestAllProducts()
        let bought = try #require(f.buy(IDs.level).successes.first)
        #expect(bought.jwsRepresentation == nil)
        #expect(throws: JWSIssuingError.self) { try f.sim.signedTransaction(transactionIdentifier: bought.identifier) }
        #expect(throws: JWSIssuingError.self) { try f.sim.subscriptionGroupStatuses() }
    }

    @Test func issuerFailure_isKept_andTheTransactionGoesOutWithoutJWS() throws {
        let f = try fixture()
        f.sim.jwsIssuer = FailingJWSIssuer()
        let bought = try #require(f.buy(IDs.level).successes.first)
        #expect(bought.jwsRepresentation == nil)
        #expect(f.sim.lastJWSError is FailingJWSIssuer.Failure)
        f.sim.jwsIssuer = JWSIssuer(pki: try PKIs.jws.get())
        #expect(f.buy(IDs.coins).successes.first?.jwsRepresentation != nil)
        #expect(f.sim.lastJWSError == nil)
    }

    @Test func refund_putsTheRevocationFieldsInTheSignedTransaction() throws {
        let f = try fixture()
        let level = try #require(f.buy(IDs.level).successes.first)
        #expect(try decodedTransaction(f.sim.signedTransaction(transactionIdentifier: level.identifier)).revocationDate == nil)
        f.sim.advanceClock(by: 86_400)
        f.sim.refund(transactionIdentifier: level.identifier, reason: .appIssue)
        let refunded = try decodedTransaction(f.sim.signedTransaction(transactionIdentifier: level.identifier))
        let entry = try #require(try receipt(f).inAppPurchases.first { $0.transactionIdentifier == level.identifier })
        #expect(refunded.revocationDate?.milliseconds == ms(entry.cancellationDate))
        #expect(refunded.revocationDate?.milliseconds == ms(f.sim.clock.now))
        #expect(refunded.revocationReason == .appIssue)
        #expect(refunded.revocationType == .refundFull)
        #expect(refunded.transactionId == level.identifier)
        #expect(try f.sim.signedTransaction(transactionIdentifier: "1") == nil)
    }

    @Test func renewalInfo_andSubscriptionStatuses_followTheSubscription() throws {
        let f = try fixture()
        let token = UUID()
        let recorder = PurchaseRecorder()
        f.store.addPayment(IDs.monthly, applicationUsername: token.uuidString) { recorder.successes.append($0) }
        f.sim.processAllEvents()
        let first = try #require(recorder.successes.first)
        let expiry = try #require(first.expirationDate)

        let info = try decodedRenewalInfo(f.sim.signedRenewalInfo(originalTransactionIdentifier: first.identifier))
        #expect(info.originalTransactionId == first.identifier)
        #expect(info.productId == IDs.monthly)
        #expect(info.autoRenewProductId == IDs.monthly)
        #expect(info.autoRenewStatus == .on)
        #expect(info.expirationIntent == nil)
        #expect(info.isInBillingRetryPeriod == false)
        #expect(info.renewalDate?.milliseconds == ms(expiry))
        #expect(info.recentSubscriptionStartDate?.milliseconds == ms(first.date))
        #expect(info.renewalPrice == 5000 && info.currency == "USD")
        #expect(info.environment == .sandbox)
        #expect(info.appAccountToken == token.uuidString.lowercased())
        #expect(try f.sim.signedRenewalInfo(originalTransactionIdentifier: "1") == nil)

        var groups = try f.sim.subscriptionGroupStatuses()
        #expect(groups.count == 1)
        #expect(groups.first?.subscriptionGroupIdentifier == f.sim.catalog.product(IDs.monthly)?.effectiveSubscriptionGroupIdentifier)
        var item = try #require(groups.first?.lastTransactions.first)
        #expect(item.status == .active)
        #expect(item.originalTransactionIdentifier == first.identifier)
        #expect(try decodedTransaction(item.signedTransactionInfo).transactionId == first.identifier)
        #expect(try decodedRenewalInfo(item.signedRenewalInfo).originalTransactionId == first.identifier)

        // One renewal, then auto-renew off and past the end: expired, the customer cancelled.
        f.sim.advanceClock(by: 31 * 86_400)
        f.sim.processAllEvents()
        let renewal = try #require(f.sim.purchaseHistory.last)
        #expect(renewal.transactionIdentifier != first.identifier)
        f.sim.setAutoRenew(false, productIdentifier: IDs.monthly)
        groups = try f.sim.subscriptionGroupStatuses()
        item = try #require(groups.first?.lastTransactions.first)
        #expect(item.status == .active)
        #expect(try decodedTransaction(item.signedTransactionInfo).transactionId == renewal.transactionIdentifier)
        #expect(try decodedRenewalInfo(item.signedRenewalInfo).autoRenewStatus == .off)
        f.sim.advanceClock(by: 62 * 86_400)
        f.sim.processAllEvents()
        item = try #require(try f.sim.subscriptionGroupStatuses().first?.lastTransactions.first)
        #expect(item.status == .expired)
        let expired = try decodedRenewalInfo(item.signedRenewalInfo)
        #expect(expired.expirationIntent == .customerCancelled)
        #expect(expired.renewalDate?.milliseconds == ms(renewal.expirationDate))

        // Refunded: revoked.
        f.sim.refund(transactionIdentifier: renewal.transactionIdentifier)
        item = try #require(try f.sim.subscriptionGroupStatuses().first?.lastTransactions.first)
        #expect(item.status == .revoked)
        #expect(try decodedTransaction(item.signedTransactionInfo).revocationDate != nil)
    }

    /// A `.storekit` group's id is the subscription group; the storefront's currency is the
    /// locale's.
    @Test func storeKitCatalog_groupIdAndCurrency() throws {
        let catalog = try StoreCatalog(storeKitConfiguration: Data(sampleStoreKitConfiguration.utf8))
        #expect(catalog.product("com.example.premium.monthly")?.subscriptionGroupIdentifier == "21000001")
        #expect(catalog.product("com.example.premium.yearly")?.effectiveSubscriptionGroupIdentifier == "21000001")
        #expect(catalog.product("com.example.coins")?.effectiveSubscriptionGroupIdentifier == nil)
        let f = try fixture(catalog: catalog)
        let bought = try #require(f.buy("com.example.premium.monthly").successes.first)
        let t = try decodedTransaction(bought.jwsRepresentation)
        #expect(t.subscriptionGroupIdentifier == "21000001")
        #expect(t.currency == "EUR")
        #expect(t.price == 2990)
    }
}
