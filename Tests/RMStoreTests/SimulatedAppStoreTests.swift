// The simulated App Store's own features: .storekit catalogs, scripted outcomes, downloads under
// app control, subscriptions on the simulated clock, the receipt seam, identifiers.

import Foundation
import RMStore
import StoreTesting
import TestSupport
import Testing

/// A configuration in the shape Xcode writes (version 3), trimmed to a few products.
let sampleStoreKitConfiguration = """
    {
      "identifier" : "4A0F3C1E",
      "nonRenewingSubscriptions" : [
        {
          "displayPrice" : "9.99",
          "familyShareable" : false,
          "internalID" : "6450000003",
          "localizations" : [ { "description" : "A season of content", "displayName" : "Season Pass", "locale" : "fr_FR" } ],
          "productID" : "com.example.season",
          "referenceName" : "Season",
          "type" : "NonRenewable"
        }
      ],
      "products" : [
        {
          "displayPrice" : "0.99",
          "familyShareable" : false,
          "internalID" : "6450000001",
          "localizations" : [
            { "description" : "100 coins", "displayName" : "Coins", "locale" : "en_US" },
            { "description" : "100 pièces", "displayName" : "Pièces", "locale" : "fr_FR" }
          ],
          "productID" : "com.example.coins",
          "referenceName" : "Coins",
          "type" : "Consumable"
        },
        {
          "displayPrice" : "4.99",
          "familyShareable" : true,
          "internalID" : "6450000002",
          "localizations" : [ ],
          "productID" : "com.example.level",
          "referenceName" : "Level Pack",
          "type" : "NonConsumable"
        }
      ],
      "settings" : {
        "_applicationInternalID" : "6450000000",
        "_developerTeamID" : "ABCDE12345",
        "_failTransactionsEnabled" : false,
        "_locale" : "fr_FR",
        "_storefront" : "FRA",
        "_storeKitErrors" : [ { "current" : null, "enabled" : false, "name" : "Load Products" } ]
      },
      "subscriptionGroups" : [
        {
          "id" : "21000001",
          "localizations" : [ ],
          "name" : "Premium",
          "subscriptions" : [
            {
              "adHocOffers" : [ ],
              "codeOffers" : [ ],
              "displayPrice" : "2.99",
              "familyShareable" : false,
              "groupNumber" : 1,
              "internalID" : "6450000004",
              "introductoryOffer" : null,
              "localizations" : [ { "description" : "Premium, monthly", "displayName" : "Premium mensuel", "locale" : "fr_FR" } ],
              "productID" : "com.example.premium.monthly",
              "recurringSubscriptionPeriod" : "P1M",
              "referenceName" : "Premium Monthly",
              "subscriptionGroupID" : "21000001",
              "type" : "RecurringSubscription"
            },
            {
              "displayPrice" : "29.99",
              "localizations" : [ ],
              "productID" : "com.example.premium.yearly",
              "recurringSubscriptionPeriod" : "P1Y",
              "referenceName" : "Premium Yearly",
              "type" : "RecurringSubscription"
            }
          ]
        }
      ],
      "version" : { "major" : 3, "minor" : 0 }
    }
    """

@Suite("SimulatedAppStore")
@MainActor
struct SimulatedAppStoreTests {
    @Test func storeKitConfiguration_isParsed() throws {
        let url = temporaryDirectory().appendingPathComponent("Products.storekit")
        try Data(sampleStoreKitConfiguration.utf8).write(to: url)
        let catalog = try StoreCatalog(storeKitConfigurationAt: url)
        #expect(catalog.storefront == "FRA")
        #expect(
            catalog.products.map(\.product.identifier) == [
                "com.example.coins", "com.example.level", "com.example.season",
                "com.example.premium.monthly", "com.example.premium.yearly",
            ])
        let coins = try #require(catalog.product("com.example.coins")?.product)
        #expect(coins.kind == .consumable)
        #expect(coins.price == Decimal(string: "0.99"))
        #expect(coins.localizedTitle == "Pièces")  // the configured locale's localization
        #expect(coins.localizedDescription == "100 pièces")
        #expect(coins.priceLocaleIdentifier == "fr_FR")
        #expect(Store.localizedPrice(of: coins) == "0,99\u{a0}€")
        let level = try #require(catalog.product("com.example.level")?.product)
        #expect(level.kind == .nonConsumable)
        #expect(level.localizedTitle == "Level Pack")  // no localization: the reference name
        #expect(catalog.product("com.example.season")?.product.kind == .nonRenewingSubscription)
        let monthly = try #require(catalog.product("com.example.premium.monthly")?.product)
        #expect(monthly.kind == .autoRenewableSubscription)
        #expect(monthly.subscriptionPeriod == SubscriptionPeriod(value: 1, unit: .month))
        #expect(catalog.product("com.example.premium.yearly")?.product.subscriptionPeriod?.iso8601 == "P1Y")
    }

    @Test(arguments: [
        #"{"products":[{"productID":"a","displayPrice":"1","type":"Mystery"}]}"#,
        #"{"products":[{"productID":"a","displayPrice":"one","type":"Consumable"}]}"#,
        #"{"subscriptionGroups":[{"subscriptions":[{"productID":"s","displayPrice":"1","recurringSubscriptionPeriod":"monthly"}]}]}"#,
        #"{"products":[{"productID":"a","displayPrice":"1","type":"Consumable"},{"productID":"a","displayPrice":"2","type":"Consumable"}]}"#,
        #"[1, 2, 3]"#,
    ])
    func storeKitConfiguration_rejectsInvalidFiles(json: String) {
        #expect(throws: StoreKitConfigurationError.self) { try StoreCatalog(storeKitConfiguration: Data(json.utf8)) }
    }

    @Test func subscriptionPeriod_parsesISO8601() {
        #expect(SubscriptionPeriod(iso8601: "P1W") == SubscriptionPeriod(value: 1, unit: .week))
        #expect(SubscriptionPeriod(iso8601: "P3D") == SubscriptionPeriod(value: 3, unit: .day))
        #expect(SubscriptionPeriod(iso8601: "P6M") == SubscriptionPeriod(value: 6, unit: .month))
        for invalid in ["", "P", "PM", "P0M", "P1X", "1M", "P-1M", "P1.5M"] {
            #expect(SubscriptionPeriod(iso8601: invalid) == nil, "\(invalid)")
        }
    }

    /// A catalog from a .storekit file drives a real purchase.
    @Test func storeKitCatalog_canBeBought() throws {
        let catalog = try StoreCatalog(storeKitConfiguration: Data(sampleStoreKitConfiguration.utf8))
        let f = Fixture(catalog: catalog)
        f.requestAllProducts()
        let recorder = f.buy("com.example.premium.monthly")
        #expect(recorder.successes.first?.expirationDate != nil)
    }

    @Test func transactionIdentifiers_areSixteenDigitIncreasingAndUnique() {
        let f = Fixture()
        f.requestAllProducts()
        var ids: [String] = []
        for _ in 0..<5 {
            ids += f.buy(IDs.coins).successes.map(\.identifier)
        }
        #expect(ids.count == 5)
        #expect(ids.allSatisfy { $0.count == 16 && $0.allSatisfy(\.isNumber) && $0.hasPrefix("2000000") })
        #expect(Set(ids).count == 5)
        #expect(ids.compactMap { UInt64($0) } == ids.compactMap { UInt64($0) }.sorted())
    }

    @Test func cancelledPayment_failsWithPaymentCancelled() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.sim.setOutcome(.cancelled, forProduct: IDs.level)
        let recorder = f.buy(IDs.level)
        #expect(StoreError.code(of: try #require(recorder.failures.first?.1)) == .paymentCancelled)
        #expect(f.sim.purchaseHistory.isEmpty)
    }

    @Test func scriptedOutcomes_perPaymentBeatPerProductQueueBeatsDefault() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.sim.setOutcome(.failed(TestError("default")), forProduct: IDs.coins)
        f.sim.enqueueOutcomes([.purchased, .cancelled], forProduct: IDs.coins)
        var results: [String] = []
        func add() -> Payment? {
            f.store.addPayment(IDs.coins) { _ in
                results.append("ok")
            } failure: { _, error in
                results.append((error as? TestError)?.name ?? StoreError.code(of: error)?.description ?? "?")
            }
        }
        let first = try #require(add())
        f.sim.setOutcome(.failed(TestError("mine")), forPayment: first.id)
        _ = add()
        _ = add()
        _ = add()
        f.sim.processAllEvents()
        #expect(results == ["mine", "ok", "paymentCancelled(500)", "default"])
    }

    @Test func paymentsNotAllowed_fail() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.sim.canMakePayments = false
        let recorder = f.buy(IDs.level)
        #expect(StoreError.code(of: try #require(recorder.failures.first?.1)) == .paymentNotAllowed)
    }

    @Test func askToBuy_deferredThenApproved_callsBackOnApproval() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.sim.setOutcome(.deferred(.pending), forProduct: IDs.level)
        let recorder = PurchaseRecorder()
        let payment = try #require(f.store.addPayment(IDs.level) { recorder.successes.append($0) })
        f.sim.processAllEvents()
        #expect(f.log.names == [.rmPaymentTransactionDeferred])
        #expect(recorder.successes.isEmpty)
        #expect(f.sim.approveAskToBuy(payment.id))
        f.sim.processAllEvents()
        #expect(recorder.successes.map(\.payment.id) == [payment.id])
        #expect(f.log.names == [.rmPaymentTransactionDeferred, .rmPaymentTransactionFinished])
        #expect(!f.sim.approveAskToBuy(payment.id))
    }

    @Test func askToBuy_declined_failsWithPaymentDeclined() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.sim.setOutcome(.deferred(.declined), forProduct: IDs.level)
        let recorder = f.buy(IDs.level)
        #expect(f.log.names == [.rmPaymentTransactionDeferred, .rmPaymentTransactionFailed])
        #expect(StoreError.code(of: try #require(recorder.failures.first?.1)) == .paymentDeclined)
    }

    @Test func interruptedPurchase_failsThenANewTransactionSucceeds() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.sim.setOutcome(.interrupted(.pending), forProduct: IDs.level)
        let recorder = PurchaseRecorder()
        let payment = try #require(
            f.store.addPayment(IDs.level) {
                recorder.successes.append($0)
            } failure: {
                recorder.failures.append(($0, $1))
            })
        f.sim.processAllEvents()
        #expect(StoreError.code(of: try #require(recorder.failures.first?.1)) == .paymentInterrupted)
        #expect(f.sim.resolveInterruptedPurchase(payment.id))
        f.sim.processAllEvents()
        // The callbacks were used by the failure; the new transaction is reported by notification.
        let finished = try #require(f.log.first(.rmPaymentTransactionFinished)?.rm.transaction)
        #expect(finished.payment.id == payment.id)
        #expect(finished.identifier != recorder.failures.first?.0?.identifier)
        #expect(f.sim.purchaseHistory.count == 1)
    }

    @Test func hostedDownload_pauseResumeAndAppCancel() throws {
        let f = Fixture(catalog: defaultCatalog(packSteps: [0.25, 0.5, 0.75]))
        f.requestAllProducts()
        f.store.addPayment(IDs.pack)
        runUntil(f) { f.log.first(.rmDownloadUpdated) != nil }
        let download = try #require(f.log.first(.rmDownloadUpdated)?.rm.download)
        f.sim.pauseDownloads([download])
        f.sim.processAllEvents()
        #expect(f.log.names.last == .rmDownloadPaused)
        #expect(f.sim.download(withIdentifier: download.id)?.state == .paused)
        let progressWhilePaused = f.log.all(.rmDownloadUpdated).count
        f.sim.resumeDownloads([download])
        f.sim.processAllEvents()
        #expect(f.log.all(.rmDownloadUpdated).count > progressWhilePaused)
        #expect(f.log.names.suffix(2) == [.rmDownloadFinished, .rmPaymentTransactionFinished])
        // Progress never went backwards across pause/resume.
        let progress = f.log.all(.rmDownloadUpdated).compactMap { $0.rm.downloadProgress }
        #expect(progress == progress.sorted())

        // The app cancels a second purchase's download: code 300.
        f.log.clear()
        let recorder = PurchaseRecorder()
        f.store.addPayment(IDs.pack) {
            recorder.successes.append($0)
        } failure: {
            recorder.failures.append(($0, $1))
        }
        runUntil(f) { f.log.first(.rmDownloadUpdated) != nil }
        let second = try #require(f.log.first(.rmDownloadUpdated)?.rm.download)
        f.store.queue.cancelDownloads([second])
        f.sim.processAllEvents()
        #expect(f.log.names.suffix(2) == [.rmDownloadCanceled, .rmPaymentTransactionFailed])
        #expect(StoreError.code(of: try #require(recorder.failures.first?.1)) == .downloadCanceled)
    }

    /// Renewals come from the simulated clock: no real waiting.
    @Test func autoRenewableSubscription_renewsOnTheSimulatedClock() throws {
        let f = Fixture(receiptIssuer: JSONReceiptIssuerForTests())
        let ledger = DefaultsTransactionPersistor(fileURL: f.directory.appendingPathComponent("ledger.json"))
        f.store.transactionPersistor = ledger
        f.requestAllProducts()
        let first = try #require(f.buy(IDs.monthly).successes.first)
        let firstExpiry = try #require(first.expirationDate)
        f.log.clear()
        f.sim.advanceClock(by: 65 * 86_400)  // past two renewals
        f.sim.processAllEvents()
        let renewals = f.log.all(.rmPaymentTransactionFinished).compactMap { $0.rm.transaction }
        #expect(renewals.count == 2)
        #expect(renewals.allSatisfy { $0.original?.identifier == first.identifier })
        #expect(renewals.first?.date == firstExpiry)
        #expect(renewals.first?.expirationDate == renewals.last?.date)
        let webOrders = [first.webOrderLineItemID] + renewals.map(\.webOrderLineItemID)
        #expect(Set(webOrders.compactMap { $0 }).count == 3)
        #expect(try ledger.count(productIdentifier: IDs.monthly) == 3)
        let receipt = try JSONReceiptIssuerForTests.decode(Data(contentsOf: try #require(f.sim.receiptURL)))
        #expect(receipt.inAppPurchases.count == 3)
        #expect(Set(receipt.inAppPurchases.map(\.originalTransactionIdentifier)) == [first.identifier])

        // Turned off: no more renewals.
        f.sim.setAutoRenew(false, productIdentifier: IDs.monthly)
        f.log.clear()
        f.sim.advanceClock(by: 100 * 86_400)
        f.sim.processAllEvents()
        #expect(f.log.notifications.isEmpty)
    }

    /// The receipt seam: called after every purchase and on refresh, written atomically to the
    /// receipt URL, with the app's whole history (finished consumables left out).
    @Test func receiptSeam_isCalledAfterEveryPurchaseAndOnRefresh() throws {
        let f = Fixture(receiptIssuer: JSONReceiptIssuerForTests())
        let url = try #require(f.sim.receiptURL)
        f.requestAllProducts()
        #expect(!FileManager.default.fileExists(atPath: url.path))
        let level = try #require(f.buy(IDs.level).successes.first)
        #expect(f.sim.receiptIssueCount == 1)
        var receipt = try JSONReceiptIssuerForTests.decode(Data(contentsOf: url))
        #expect(receipt.bundleIdentifier == "com.example.app")
        #expect(receipt.appVersion == "1.0")
        #expect(receipt.receiptURL == url)
        #expect(receipt.inAppPurchases.map(\.transactionIdentifier) == [level.identifier])
        #expect(receipt.inAppPurchases.first?.productType == .nonConsumable)
        #expect(receipt.inAppPurchases.first?.purchaseDate == level.date)

        f.buy(IDs.coins)
        #expect(f.sim.receiptIssueCount == 2)
        receipt = try JSONReceiptIssuerForTests.decode(Data(contentsOf: url))
        #expect(receipt.inAppPurchases.map(\.productIdentifier) == [IDs.level, IDs.coins])  // consumable present while unfinished

        f.store.refreshReceipt()
        f.sim.processAllEvents()
        #expect(f.sim.receiptIssueCount == 3)
        receipt = try JSONReceiptIssuerForTests.decode(Data(contentsOf: url))
        #expect(receipt.inAppPurchases.map(\.productIdentifier) == [IDs.level])  // finished consumable gone
    }

    @Test func receiptIssuerFailure_failsTheRefresh() throws {
        struct Broken: ReceiptIssuing {
            func issueReceipt(for contents: ReceiptContents) throws -> Data { throw TestError("signer") }
        }
        let f = Fixture(receiptIssuer: Broken())
        var error: (any Error)?
        f.store.refreshReceipt {
            Issue.record("success")
        } failure: {
            error = $0
        }
        f.sim.processAllEvents()
        #expect(error as? TestError == TestError("signer"))
        f.requestAllProducts()
        f.buy(IDs.level)
        #expect(f.sim.lastReceiptError as? TestError == TestError("signer"))
    }

    /// Unfinished transactions are delivered again to an observer added later (next launch).
    @Test func unfinishedTransactions_areRedeliveredToANewObserver() throws {
        let f = Fixture(configuration: Store.Configuration(finishMode: .afterDelivery))
        f.requestAllProducts()
        let transaction = try #require(f.buy(IDs.level).successes.first)
        let second = Store(appStore: f.sim, notificationCenter: NotificationCenter())
        let log = NotificationLog()
        second.addObserver(log)
        f.sim.processAllEvents()
        #expect(log.first(.rmPaymentTransactionFinished)?.rm.transaction?.identifier == transaction.identifier)
        // Deferred transactions are not redelivered.
        f.sim.setOutcome(.deferred(.pending), forProduct: IDs.coins)
        f.store.finishTransaction(transaction)
        f.buy(IDs.coins)
        let third = Store(appStore: f.sim, notificationCenter: NotificationCenter())
        let thirdLog = NotificationLog()
        third.addObserver(thirdLog)
        f.sim.processAllEvents()
        #expect(thirdLog.notifications.isEmpty)
    }
}
