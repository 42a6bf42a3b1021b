// RMStoreTests.m (Docs/StoreBehaviour.md §7, first row), test by test, on the simulated App Store.
//
// Every test is named after the Objective-C test it ports (`testX_Y` → `x_Y_…`), with what it
// asserts. RMStore drove its store with OCMock queues and called the StoreKit observer methods by
// hand; here the simulated App Store produces the same situations through its public API.
// Not ported: `testDefaultStore` (there is no process-wide queue to bind a default store to on
// Linux; apps create their store at launch) and `testPaymentQueueUpdatedTransactions_Empty` /
// `..._UpdatedDownloads_Empty` (a queue never reports empty updates; their substance, "nothing
// happens", is covered by `updatedTransactions_Purchasing…` and `updatedDownloads_Empty…`).

import Foundation
import RMStore
import StoreTesting
import TestSupport
import Testing

@MainActor
func runUntil(_ fixture: Fixture, _ condition: () -> Bool) {
    while !condition(), fixture.sim.processNextEvent() {}
}

@Suite("RMStoreTests.m")
@MainActor
struct RMStoreTests_m {
    // MARK: Init and StoreKit wrapper

    /// testInit
    @Test func init_hasNoDelegates() {
        let f = Fixture()
        #expect(f.store.receiptVerifier == nil)
        #expect(f.store.transactionPersistor == nil)
        #expect(f.store.contentDownloader == nil)
    }

    /// testDealloc: a store nobody references goes away (the queue holds its observer weakly).
    @Test func dealloc_storeIsReleasedWhenUnreferenced() {
        let sim = SimulatedAppStore(catalog: defaultCatalog(), deliversAutomatically: false)
        weak var weakStore: Store?
        do {
            let store = Store(appStore: sim, notificationCenter: NotificationCenter())
            weakStore = store
            #expect(weakStore != nil)
        }
        #expect(weakStore == nil)
    }

    /// testCanMakePayments
    @Test func canMakePayments_passesThroughTheQueue() {
        let f = Fixture()
        #expect(f.store.canMakePayments)
        f.sim.canMakePayments = false
        #expect(!f.store.canMakePayments)
    }

    /// testAddPayment_UnknownProduct, testAddPayment_UnknownProduct_Nil_Nil,
    /// testAddPayment_UnknownProduct_Block_Block
    @Test func addPayment_UnknownProduct_failsSynchronouslyWithCode100AndNilTransaction() throws {
        let f = Fixture()
        var failure: (PaymentTransaction?, any Error)?
        let payment = f.store.addPayment("test") { _ in
            Issue.record("success block")
        } failure: { transaction, error in
            failure = (transaction, error)
        }
        #expect(payment == nil)
        let (transaction, error) = try #require(failure)
        #expect(transaction == nil)
        #expect(StoreError.code(of: error) == .unknownProductIdentifier)
        #expect(StoreError.code(of: error)?.rawValue == 100)
        // Nothing queued, nothing posted, and the nil/nil variant does not crash.
        f.store.addPayment("test")
        f.sim.processAllEvents()
        #expect(f.sim.addedPayments.isEmpty)
        #expect(f.log.notifications.isEmpty)
    }

    /// testAddPayment_KnownProduct
    @Test func addPayment_KnownProduct_queuesOnePaymentOfQuantityOne() {
        let f = Fixture()
        f.requestAllProducts()
        let payment = f.store.addPayment(IDs.level)
        #expect(f.sim.addedPayments.map(\.id) == [payment?.id].compactMap { $0 })
        #expect(f.sim.addedPayments.first?.productIdentifier == IDs.level)
        #expect(f.sim.addedPayments.first?.quantity == 1)
    }

    /// testAddPaymentUser
    @Test func addPaymentUser_passesTheApplicationUsername() {
        let f = Fixture()
        f.requestAllProducts()
        f.store.addPayment(IDs.level, applicationUsername: "user-1")
        #expect(f.sim.addedPayments.first?.applicationUsername == "user-1")
    }

    /// testRequestProducts_One, testRequestProducts_One_Nil_Nil, testRequestProducts_One_Block_Block
    @Test func requestProducts_One_callsBackAndCaches() {
        let f = Fixture()
        var answered: ([Product], [String])?
        f.store.requestProducts([IDs.level]) { products, invalid in answered = (products, invalid) }
        f.store.requestProducts([IDs.coins])  // nil blocks
        f.sim.processAllEvents()
        #expect(answered?.0.map(\.identifier) == [IDs.level])
        #expect(answered?.1 == [])
        #expect(f.sim.productsRequestCount == 2)
        #expect(f.store.product(forIdentifier: IDs.coins)?.identifier == IDs.coins)
    }

    /// testRestoreTransactions, testRestoreTransactions_Nil_Nil, testRestoreTransactions_Block_Block
    @Test func restoreTransactions_asksTheQueueOnce() {
        let f = Fixture()
        var result: RestoreResult?
        f.store.restoreTransactions {
            result = $0
        } failure: { _ in
            Issue.record("failure")
        }
        f.sim.processAllEvents()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        #expect(f.sim.restoreRequests.count == 2)
        #expect(result?.restoredTransactions.isEmpty == true)
    }

    /// testRestoreTransactionsOfUser
    @Test func restoreTransactionsOfUser_passesTheUsername() {
        let f = Fixture()
        f.store.restoreTransactions(applicationUsername: "test")
        #expect(f.sim.restoreRequests == ["test"])
    }

    // MARK: Receipt

    /// testReceiptURL
    @Test func receiptURL_isTheConfiguredOne() {
        let f = Fixture()
        #expect(f.store.receiptURL == f.sim.receiptURL)
        #expect(f.store.receiptURL != nil)
    }

    /// testRefreshReceipt, testRefreshReceipt_Nil_Nil, testRefreshReceipt_Block_Block
    @Test func refreshReceipt_requestsARefresh() {
        let f = Fixture()
        var succeeded = false
        f.store.refreshReceipt {
            succeeded = true
        } failure: { _ in
            Issue.record("failure")
        }
        f.sim.processAllEvents()
        #expect(succeeded)
        f.store.refreshReceipt()
        f.sim.processAllEvents()
        #expect(f.sim.refreshRequestCount == 2)
    }

    // MARK: Product management

    /// testProductForIdentifierNil
    @Test func productForIdentifierNil_beforeAnyRequest() {
        let f = Fixture()
        #expect(f.store.product(forIdentifier: "test") == nil)
        #expect(f.store.product(forIdentifier: IDs.level) == nil)
    }

    /// testLocalizedPriceOfProduct
    @Test func localizedPriceOfProduct_formatsWithTheProductsLocale() {
        let one = Product(identifier: "p", price: 1, priceLocaleIdentifier: "en_US")
        let formatter = NumberFormatter()
        formatter.numberStyle = .currency
        formatter.locale = Locale(identifier: "en_US")
        #expect(Store.localizedPrice(of: one) == formatter.string(from: 1))
        #expect(
            Store.localizedPrice(of: Product(identifier: "p", price: Decimal(string: "0.99") ?? 0, priceLocaleIdentifier: "en_US"))
                == "$0.99")
        #expect(
            Store.localizedPrice(of: Product(identifier: "p", price: Decimal(string: "0.99") ?? 0, priceLocaleIdentifier: "fr_FR"))
                == "0,99\u{a0}€")
    }

    // MARK: Notifications

    /// testAddStoreObserver: an observer gets this store's notifications and no other store's.
    @Test func addStoreObserver_receivesOnlyThisStoresNotifications() {
        let f = Fixture()
        let other = Store(appStore: f.sim, notificationCenter: NotificationCenter())
        let otherLog = NotificationLog()
        other.addObserver(otherLog)
        f.store.requestProducts([IDs.level])
        f.sim.processAllEvents()
        #expect(f.log.names == [.rmProductsRequestFinished])
        #expect(otherLog.names.isEmpty)
        #expect(f.log.notifications.first?.object as? Store === f.store)
    }

    /// testRemoveStoreObserver
    @Test func removeStoreObserver_stopsNotifications() {
        let f = Fixture()
        f.store.removeObserver(f.log)
        f.store.requestProducts([IDs.level])
        f.sim.processAllEvents()
        #expect(f.log.notifications.isEmpty)
    }

    // MARK: Store-hosted downloads (updatedDownloads)

    /// testPaymentQueueUpdatedDownloads_Empty: a product without hosted content starts no
    /// download and posts no download notification.
    @Test func updatedDownloads_Empty_noDownloadsNoDownloadNotifications() {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        #expect(f.sim.startedDownloadIdentifiers.isEmpty)
        #expect(f.log.names == [.rmPaymentTransactionFinished])
    }

    /// testPaymentQueueUpdatedDownloads_Active
    @Test func updatedDownloads_Active_postsUpdatedWithDownloadTransactionProductAndProgress() throws {
        let f = Fixture()
        f.requestAllProducts()
        let payment = try #require(f.store.addPayment(IDs.pack))
        f.sim.processAllEvents()
        let updated = try #require(f.log.first(.rmDownloadUpdated))
        #expect(updated.rm.download?.state == .active)
        #expect(updated.rm.download?.contentIdentifier == "pack")
        #expect(updated.rm.downloadProgress == 0.5)
        #expect(updated.rm.productIdentifier == IDs.pack)
        #expect(updated.rm.transaction?.payment.id == payment.id)
        #expect(updated.rm.transaction?.identifier == updated.rm.download?.transactionIdentifier)
    }

    /// testPaymentQueueUpdatedDownloads_Canceled__PurchasedTransaction_SingleDownload
    @Test func updatedDownloads_Canceled_PurchasedTransaction_SingleDownload_failsWithCode300AndFinishes() throws {
        let f = Fixture(catalog: defaultCatalog(packOutcome: .cancelled))
        f.requestAllProducts()
        let recorder = f.buy(IDs.pack)
        #expect(f.log.names == [.rmDownloadUpdated, .rmDownloadCanceled, .rmPaymentTransactionFailed])
        let canceled = try #require(f.log.first(.rmDownloadCanceled))
        #expect(canceled.rm.download?.state == .cancelled)
        #expect(canceled.rm.storeError == nil)
        let failed = try #require(f.log.first(.rmPaymentTransactionFailed))
        #expect(failed.rm.download == nil)
        #expect(failed.rm.productIdentifier == IDs.pack)
        #expect(StoreError.code(of: try #require(failed.rm.storeError)) == .downloadCanceled)
        #expect(f.sim.finishedTransactionIdentifiers == [failed.rm.transaction?.identifier].compactMap { $0 })
        #expect(recorder.failures.count == 1)
    }

    /// testPaymentQueueUpdatedDownloads_Canceled__PurchasedTransaction_MultipleFinishedDownloads
    @Test func updatedDownloads_Canceled_PurchasedTransaction_MultipleFinishedDownloads_failsWithCode300() throws {
        let f = Fixture(catalog: defaultCatalog(twoPacksOutcomes: (.cancelled, .finished)))
        f.requestAllProducts()
        f.buy(IDs.twoPacks)
        #expect(f.log.all(.rmDownloadCanceled).count == 1)
        #expect(f.log.all(.rmDownloadFinished).count == 1)
        #expect(f.log.names.last == .rmPaymentTransactionFailed)
        let failed = try #require(f.log.first(.rmPaymentTransactionFailed))
        #expect(StoreError.code(of: try #require(failed.rm.storeError)) == .downloadCanceled)
        #expect(f.sim.finishedTransactionIdentifiers.count == 1)
    }

    /// testPaymentQueueUpdatedDownloads_Canceled__PurchasedTransaction_PendingDownloads
    @Test func updatedDownloads_Canceled_PurchasedTransaction_PendingDownloads_waitsForTheOthers() {
        let f = Fixture(catalog: defaultCatalog(twoPacksOutcomes: (.cancelled, .finished)))
        f.requestAllProducts()
        f.store.addPayment(IDs.twoPacks)
        runUntil(f) { f.log.first(.rmDownloadCanceled) != nil }
        #expect(f.log.first(.rmDownloadCanceled) != nil)
        #expect(f.log.first(.rmPaymentTransactionFailed) == nil)
        #expect(f.sim.finishedTransactionIdentifiers.isEmpty)
        f.sim.processAllEvents()
        #expect(f.log.names.last == .rmPaymentTransactionFailed)
    }

    /// testPaymentQueueUpdatedDownloads_Failed__PurchasedTransaction_SingleDownload
    @Test func updatedDownloads_Failed_PurchasedTransaction_SingleDownload_failsWithTheDownloadErrorAndFinishes() throws {
        let f = Fixture(catalog: defaultCatalog(packOutcome: .failed(TestError("network"))))
        f.requestAllProducts()
        let recorder = f.buy(IDs.pack)
        #expect(f.log.names == [.rmDownloadUpdated, .rmDownloadFailed, .rmPaymentTransactionFailed])
        let downloadFailed = try #require(f.log.first(.rmDownloadFailed))
        #expect(downloadFailed.rm.storeError as? TestError == TestError("network"))
        #expect(downloadFailed.rm.download?.state == .failed)
        let failed = try #require(f.log.first(.rmPaymentTransactionFailed))
        #expect(failed.rm.storeError as? TestError == TestError("network"))
        #expect(recorder.failures.first?.1 as? TestError == TestError("network"))
        #expect(f.sim.finishedTransactionIdentifiers.count == 1)
    }

    /// testPaymentQueueUpdatedDownloads_Failed__PurchasedTransaction_MutipleFinishedDownload
    @Test func updatedDownloads_Failed_PurchasedTransaction_MultipleFinishedDownload_failsAndFinishes() throws {
        let f = Fixture(catalog: defaultCatalog(twoPacksOutcomes: (.failed(TestError("a")), .finished)))
        f.requestAllProducts()
        f.buy(IDs.twoPacks)
        let failed = try #require(f.log.first(.rmPaymentTransactionFailed))
        #expect(failed.rm.storeError as? TestError == TestError("a"))
        #expect(f.log.first(.rmPaymentTransactionFinished) == nil)
        #expect(f.sim.finishedTransactionIdentifiers.count == 1)
    }

    /// testPaymentQueueUpdatedDownloads_Failed__PurchasedTransaction_PendingDownloads
    @Test func updatedDownloads_Failed_PurchasedTransaction_PendingDownloads_waitsForTheOthers() {
        let f = Fixture(catalog: defaultCatalog(twoPacksOutcomes: (.failed(TestError("a")), .finished)))
        f.requestAllProducts()
        f.store.addPayment(IDs.twoPacks)
        runUntil(f) { f.log.first(.rmDownloadFailed) != nil }
        #expect(f.log.first(.rmDownloadFailed) != nil)
        #expect(f.log.first(.rmPaymentTransactionFailed) == nil)
        #expect(f.sim.finishedTransactionIdentifiers.isEmpty)
    }

    /// testPaymentQueueUpdatedDownloads_Finished__PurchasedTransaction_SingleDownload
    @Test func updatedDownloads_Finished_PurchasedTransaction_SingleDownload_finishesAfterTheDownload() throws {
        let f = Fixture()
        f.requestAllProducts()
        let recorder = f.buy(IDs.pack)
        #expect(f.log.names == [.rmDownloadUpdated, .rmDownloadFinished, .rmPaymentTransactionFinished])
        let finished = try #require(f.log.first(.rmDownloadFinished))
        #expect(finished.rm.download?.state == .finished)
        #expect(finished.rm.storeError == nil)
        let url = try #require(finished.rm.download?.contentURL)
        let content = try Data(contentsOf: url.appendingPathComponent("Contents/content.bin"))
        #expect(content == Data("content".utf8))
        #expect(recorder.successes.count == 1)
        #expect(f.sim.finishedTransactionIdentifiers == recorder.successes.map(\.identifier))
    }

    /// testPaymentQueueUpdatedDownloads_Finished__RestoredTransaction_SingleDownload
    @Test func updatedDownloads_Finished_RestoredTransaction_SingleDownload_finishesTheRestoredTransaction() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.pack)
        f.log.clear()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        let finished = try #require(f.log.first(.rmPaymentTransactionFinished))
        #expect(finished.rm.transaction?.state == .restored)
        #expect(
            f.log.names.firstIndex(of: .rmDownloadFinished).map { $0 < (f.log.names.firstIndex(of: .rmPaymentTransactionFinished) ?? 0) }
                == true)
        #expect(f.sim.finishedTransactionIdentifiers.contains(finished.rm.transaction?.identifier ?? "-"))
    }

    /// testPaymentQueueUpdatedDownloads_Finished__RestoredTransaction_SingleDownload_RestoreCompletedTransactionsFinished
    @Test func updatedDownloads_Finished_RestoredTransaction_SingleDownload_RestoreFinishedComesAfterTheDownload() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.pack)
        f.log.clear()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        #expect(f.log.names == [.rmDownloadUpdated, .rmDownloadFinished, .rmPaymentTransactionFinished, .rmRestoreTransactionsFinished])
        let restore = try #require(f.log.first(.rmRestoreTransactionsFinished))
        #expect(restore.rm.transactions?.count == 1)
    }

    /// testPaymentQueueUpdatedDownloads_Finished__PurchasedTransaction_MultipleFinishedDownloads
    @Test func updatedDownloads_Finished_PurchasedTransaction_MultipleFinishedDownloads_finishesOnce() {
        let f = Fixture()
        f.requestAllProducts()
        let recorder = f.buy(IDs.twoPacks)
        #expect(f.log.all(.rmDownloadFinished).count == 2)
        #expect(f.log.all(.rmPaymentTransactionFinished).count == 1)
        #expect(f.log.names.last == .rmPaymentTransactionFinished)
        #expect(recorder.successes.count == 1)
        #expect(f.sim.startedDownloadIdentifiers.count == 2)
    }

    /// testPaymentQueueUpdatedDownloads_Finished__PurchasedTransaction_PendingDownloads
    @Test func updatedDownloads_Finished_PurchasedTransaction_PendingDownloads_waitsForTheOthers() {
        let f = Fixture()
        f.requestAllProducts()
        f.store.addPayment(IDs.twoPacks)
        runUntil(f) { f.log.first(.rmDownloadFinished) != nil }
        #expect(f.log.all(.rmDownloadFinished).count == 1)
        #expect(f.log.first(.rmPaymentTransactionFinished) == nil)
        #expect(f.sim.finishedTransactionIdentifiers.isEmpty)
    }

    /// testPaymentQueueUpdatedDownloads_Paused
    @Test func updatedDownloads_Paused_postsPausedWithDownloadTransactionAndProduct() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.store.addPayment(IDs.pack)
        runUntil(f) { f.log.first(.rmDownloadUpdated) != nil }
        let active = try #require(f.log.first(.rmDownloadUpdated)?.rm.download)
        f.store.queue.pauseDownloads([active])
        f.sim.processAllEvents()
        let paused = try #require(f.log.first(.rmDownloadPaused))
        #expect(paused.rm.download?.id == active.id)
        #expect(paused.rm.download?.state == .paused)
        #expect(paused.rm.productIdentifier == IDs.pack)
        #expect(paused.rm.transaction?.identifier == active.transactionIdentifier)
        #expect(f.log.first(.rmPaymentTransactionFinished) == nil)
    }

    /// testPaymentQueueUpdatedDownloads_Waiting: a waiting update posts nothing.
    @Test func updatedDownloads_Waiting_postsNothing() {
        let f = Fixture()
        f.requestAllProducts()
        f.store.addPayment(IDs.pack)
        runUntil(f) { !f.sim.startedDownloadIdentifiers.isEmpty }
        let before = f.log.names
        f.sim.processNextEvent()  // the waiting update
        #expect(f.log.names == before)
        #expect(!f.log.names.contains(.rmDownloadUpdated))
    }

    // MARK: updatedTransactions

    /// testPaymentQueueUpdatedTransactions_Empty: a purchasing update posts nothing.
    @Test func updatedTransactions_Purchasing_postsNothing() {
        let f = Fixture()
        f.requestAllProducts()
        f.store.addPayment(IDs.level)
        f.sim.processNextEvent()  // purchasing
        #expect(f.log.notifications.isEmpty)
        #expect(f.sim.finishedTransactionIdentifiers.isEmpty)
    }

    /// testPaymentQueueUpdatedTransactions_Purchased__NoVerifier_NoDownloader
    @Test func updatedTransactions_Purchased_NoVerifier_NoDownloader_finishes() {
        let f = Fixture()
        f.requestAllProducts()
        let recorder = f.buy(IDs.level)
        #expect(f.sim.finishedTransactionIdentifiers == recorder.successes.map(\.identifier))
        #expect(f.sim.unfinishedTransactions.isEmpty)
    }

    /// testPaymentQueueUpdatedTransactions_Purchased__NoVerifier_DownloaderSuccess
    @Test func updatedTransactions_Purchased_NoVerifier_DownloaderSuccess_downloadFinishedThenTransactionFinished() throws {
        let f = Fixture()
        f.store.contentDownloader = ScriptedDownloader()
        f.requestAllProducts()
        f.buy(IDs.level)
        #expect(f.log.names == [.rmDownloadFinished, .rmPaymentTransactionFinished])
        let downloadFinished = try #require(f.log.first(.rmDownloadFinished))
        #expect(downloadFinished.rm.download == nil)
        #expect(downloadFinished.rm.storeError == nil)
        #expect(downloadFinished.rm.productIdentifier == IDs.level)
        #expect(f.sim.finishedTransactionIdentifiers.count == 1)
    }

    /// testPaymentQueueUpdatedTransactions_Purchased__NoVerifier_DownloaderProgress
    @Test func updatedTransactions_Purchased_NoVerifier_DownloaderProgress_postsUpdatedWithTheProgress() throws {
        let f = Fixture()
        let downloader = ScriptedDownloader()
        downloader.progressValues = [0.5]
        f.store.contentDownloader = downloader
        f.requestAllProducts()
        f.buy(IDs.level)
        let updated = try #require(f.log.first(.rmDownloadUpdated))
        #expect(updated.rm.downloadProgress == 0.5)
        #expect(updated.rm.download == nil)
        #expect(updated.rm.productIdentifier == IDs.level)
        #expect(updated.rm.transaction?.state == .purchased)
    }

    /// testPaymentQueueUpdatedTransactions_Purchased__NoVerifier_DownloaderFailure
    @Test func updatedTransactions_Purchased_NoVerifier_DownloaderFailure_downloadFailedAndTransactionFailedWithTheSameError() throws {
        let f = Fixture()
        let downloader = ScriptedDownloader()
        downloader.result = .failure(TestError("self-hosted"))
        f.store.contentDownloader = downloader
        f.requestAllProducts()
        let recorder = f.buy(IDs.level)
        #expect(f.log.names == [.rmDownloadFailed, .rmPaymentTransactionFailed])
        #expect(f.log.first(.rmDownloadFailed)?.rm.storeError as? TestError == TestError("self-hosted"))
        #expect(f.log.first(.rmPaymentTransactionFailed)?.rm.storeError as? TestError == TestError("self-hosted"))
        #expect(recorder.failures.first?.1 as? TestError == TestError("self-hosted"))
        #expect(f.sim.finishedTransactionIdentifiers.count == 1)
    }

    /// testPaymentQueueUpdatedTransactions_PurchasedWithDownloads
    @Test func updatedTransactions_PurchasedWithDownloads_startsTheDownloads() {
        let f = Fixture()
        f.requestAllProducts()
        let recorder = f.buy(IDs.pack)
        #expect(f.sim.startedDownloadIdentifiers == recorder.successes.map { "\($0.identifier).pack" })
    }

    /// testPaymentQueueUpdatedTransactions_Purchased__NoVerifier_Blocks
    @Test func updatedTransactions_Purchased_NoVerifier_Blocks_successBlockGetsTheTransaction() throws {
        let f = Fixture()
        f.requestAllProducts()
        var received: PaymentTransaction?
        let payment = try #require(
            f.store.addPayment(IDs.level) {
                received = $0
            } failure: { _, _ in
                Issue.record("failure")
            })
        f.sim.processAllEvents()
        #expect(received?.payment.id == payment.id)
        #expect(received?.state == .purchased)
        #expect(received?.identifier.count == 16)
    }

    /// testPaymentQueueUpdatedTransactions_Purchased__VerifierSuccess
    @Test func updatedTransactions_Purchased_VerifierSuccess_finishes() {
        let f = Fixture()
        let verifier = ScriptedVerifier(.verified)
        f.store.receiptVerifier = verifier
        f.requestAllProducts()
        let recorder = f.buy(IDs.level)
        #expect(verifier.verifiedIdentifiers == recorder.successes.map(\.identifier))
        #expect(f.sim.finishedTransactionIdentifiers == recorder.successes.map(\.identifier))
    }

    /// testPaymentQueueUpdatedTransactions_Purchased__VerifierFailure
    @Test func updatedTransactions_Purchased_VerifierFailure_failsAndFinishes() {
        let f = Fixture()
        f.store.receiptVerifier = ScriptedVerifier(.failed(TestError("forged")))
        f.requestAllProducts()
        let recorder = f.buy(IDs.level)
        #expect(recorder.successes.isEmpty)
        #expect(recorder.failures.first?.1 as? TestError == TestError("forged"))
        #expect(f.sim.finishedTransactionIdentifiers.count == 1)
        #expect(f.log.names == [.rmPaymentTransactionFailed])
    }

    /// testPaymentQueueUpdatedTransactions_Purchased__VerifierUnableToComplete
    @Test func updatedTransactions_Purchased_VerifierUnableToComplete_doesNotFinish() throws {
        let f = Fixture()
        f.store.receiptVerifier = ScriptedVerifier(.unableToComplete(TestError("offline")))
        f.requestAllProducts()
        let recorder = f.buy(IDs.level)
        #expect(f.sim.finishedTransactionIdentifiers.isEmpty)
        #expect(f.sim.unfinishedTransactions.count == 1)
        let error = try #require(recorder.failures.first?.1 as? StoreError)
        #expect(error.code == .unableToCompleteVerification)
        #expect(error.underlying as? TestError == TestError("offline"))
        #expect(f.log.names == [.rmPaymentTransactionFailed])
    }

    /// testPaymentQueueUpdatedTransactions_Restored__NoVerifier_NoDownloader
    @Test func updatedTransactions_Restored_NoVerifier_NoDownloader_postsFinished() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        f.log.clear()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        let finished = try #require(f.log.first(.rmPaymentTransactionFinished))
        #expect(finished.rm.transaction?.state == .restored)
        #expect(finished.rm.transaction?.original != nil)
    }

    /// testPaymentQueueUpdatedTransactions_Restored__NoVerifier_DownloaderSuccess
    @Test func updatedTransactions_Restored_NoVerifier_DownloaderSuccess_downloadFinishedThenFinished() {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        f.store.contentDownloader = ScriptedDownloader()
        f.log.clear()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        #expect(f.log.names == [.rmDownloadFinished, .rmPaymentTransactionFinished, .rmRestoreTransactionsFinished])
        #expect(f.sim.unfinishedTransactions.isEmpty)
    }

    /// testPaymentQueueUpdatedTransactions_Restored__NoVerifier_DownloaderProgress
    @Test func updatedTransactions_Restored_NoVerifier_DownloaderProgress_postsUpdatedWithTheProgress() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        let downloader = ScriptedDownloader()
        downloader.progressValues = [0.5]
        f.store.contentDownloader = downloader
        f.log.clear()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        let updated = try #require(f.log.first(.rmDownloadUpdated))
        #expect(updated.rm.downloadProgress == 0.5)
        #expect(updated.rm.transaction?.state == .restored)
        #expect(updated.rm.productIdentifier == IDs.level)
    }

    /// testPaymentQueueUpdatedTransactions_Restored__NoVerifier_DownloaderFailure
    @Test func updatedTransactions_Restored_NoVerifier_DownloaderFailure_downloadFailedAndTransactionFailed() {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        let downloader = ScriptedDownloader()
        downloader.result = .failure(TestError("self-hosted"))
        f.store.contentDownloader = downloader
        f.log.clear()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        #expect(f.log.names == [.rmDownloadFailed, .rmPaymentTransactionFailed, .rmRestoreTransactionsFinished])
        #expect(f.log.first(.rmPaymentTransactionFailed)?.rm.storeError as? TestError == TestError("self-hosted"))
        #expect(f.sim.unfinishedTransactions.isEmpty)
    }

    /// testPaymentQueueUpdatedTransactions_RestoredWithDownloads
    @Test func updatedTransactions_RestoredWithDownloads_startsTheDownloads() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.pack)
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        let restored = try #require(f.log.first(.rmRestoreTransactionsFinished)?.rm.transactions?.first)
        #expect(f.sim.startedDownloadIdentifiers.contains("\(restored.identifier).pack"))
    }

    /// testPaymentQueueUpdatedTransactions_Restored__storeRestoreTransactionsFinished. RMStore's
    /// test delivered the transaction after the queue's "finished" (relying on a flag that stayed
    /// set, Docs/StoreBehaviour.md §4.5); a real queue delivers it before, which is what this checks.
    @Test func updatedTransactions_Restored_storeRestoreTransactionsFinished_listsTheTransaction() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        f.log.clear()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        #expect(f.log.names == [.rmPaymentTransactionFinished, .rmRestoreTransactionsFinished])
        let finished = try #require(f.log.first(.rmPaymentTransactionFinished)?.rm.transaction)
        let restore = try #require(f.log.first(.rmRestoreTransactionsFinished))
        #expect(restore.rm.transactions?.map(\.identifier) == [finished.identifier])
    }

    /// testPaymentQueueUpdatedTransactions_Restored__Twice
    @Test func updatedTransactions_Restored_Twice_eachRestoreFinishesItsTransaction() {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        f.log.clear()
        var results: [RestoreResult] = []
        f.store.restoreTransactions { results.append($0) }
        f.sim.processAllEvents()
        f.store.restoreTransactions { results.append($0) }
        f.sim.processAllEvents()
        #expect(f.log.all(.rmPaymentTransactionFinished).count == 2)
        #expect(results.map(\.restoredTransactions.count) == [1, 1])
    }

    /// testPaymentQueueUpdatedTransactions_Restored__VerifierSuccess
    @Test func updatedTransactions_Restored_VerifierSuccess_postsFinished() {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        f.store.receiptVerifier = ScriptedVerifier(.verified)
        f.log.clear()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        #expect(f.log.names == [.rmPaymentTransactionFinished, .rmRestoreTransactionsFinished])
    }

    /// testPaymentQueueUpdatedTransactions_Restored__VerifierFailure
    @Test func updatedTransactions_Restored_VerifierFailure_postsFailed() {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        f.store.receiptVerifier = ScriptedVerifier(.failed(TestError("forged")))
        f.log.clear()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        #expect(f.log.names == [.rmPaymentTransactionFailed, .rmRestoreTransactionsFinished])
    }

    /// testPaymentQueueUpdatedTransactions_Failed
    @Test func updatedTransactions_Failed_postsFailedWithTheError() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.sim.setOutcome(.failed(TestError("card")), forProduct: IDs.level)
        f.buy(IDs.level)
        let failed = try #require(f.log.first(.rmPaymentTransactionFailed))
        #expect(failed.rm.storeError as? TestError == TestError("card"))
        #expect(failed.rm.transaction?.state == .failed)
        #expect(f.sim.finishedTransactionIdentifiers.count == 1)
    }

    /// testPaymentQueueUpdatedTransactions_Failed__Blocks
    @Test func updatedTransactions_Failed_Blocks_failureBlockGetsTheTransactionAndError() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.sim.setOutcome(.failed(TestError("card")), forProduct: IDs.level)
        let recorder = f.buy(IDs.level)
        #expect(recorder.successes.isEmpty)
        let (transaction, error) = try #require(recorder.failures.first)
        #expect(transaction?.state == .failed)
        #expect(transaction?.payment.productIdentifier == IDs.level)
        #expect(error as? TestError == TestError("card"))
    }

    /// testPaymentQueueUpdatedTransactions_Deferred
    @Test func updatedTransactions_Deferred_postsDeferredOnly() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.sim.setOutcome(.deferred(.pending), forProduct: IDs.level)
        let recorder = f.buy(IDs.level)
        #expect(f.log.names == [.rmPaymentTransactionDeferred])
        let deferred = try #require(f.log.first(.rmPaymentTransactionDeferred))
        #expect(deferred.rm.productIdentifier == IDs.level)
        #expect(deferred.rm.transaction?.state == .deferred)
        #expect(recorder.successes.isEmpty && recorder.failures.isEmpty)
        #expect(f.sim.finishedTransactionIdentifiers.isEmpty)
    }

    // MARK: Restore completion

    /// testPaymentQueueRestoreCompletedTransactionsFinished
    @Test func restoreCompletedTransactionsFinished_postsFinishedWithNoTransactions() throws {
        let f = Fixture()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        let finished = try #require(f.log.first(.rmRestoreTransactionsFinished))
        #expect(finished.rm.transactions?.isEmpty == true)
        #expect(finished.rm.failedTransactions?.isEmpty == true)
    }

    /// testPaymentQueueRestoreCompletedTransactionsFinished_Queue__Blocks
    @Test func restoreCompletedTransactionsFinished_Blocks_successBlockGetsNoTransactions() {
        let f = Fixture()
        var result: RestoreResult?
        f.store.restoreTransactions {
            result = $0
        } failure: { _ in
            Issue.record("failure")
        }
        f.sim.processAllEvents()
        #expect(result?.restoredTransactions.isEmpty == true)
        #expect(f.log.names == [.rmRestoreTransactionsFinished])
    }

    /// testPaymentQueueRestoreCompletedTransactionsFinished_Queue__TwoTransactions_storeRestoreTransactionsFinished
    @Test func restoreCompletedTransactionsFinished_TwoTransactions_notificationListsBoth() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        f.buy(IDs.monthly)
        f.log.clear()
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        let finished = try #require(f.log.first(.rmRestoreTransactionsFinished))
        #expect(finished.rm.transactions?.map(\.productIdentifier) == [IDs.level, IDs.monthly])
        #expect(
            f.log.all(.rmPaymentTransactionFinished).map { $0.rm.transaction?.identifier } == finished.rm.transactions?.map(\.identifier))
    }

    /// testPaymentQueueRestoreCompletedTransactionsFinished_Queue__TwoTransactions_restoreTransactionsOnSuccess_SuccessBlock
    @Test func restoreCompletedTransactionsFinished_TwoTransactions_successBlockGetsBoth() {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        f.buy(IDs.monthly)
        var result: RestoreResult?
        f.store.restoreTransactions {
            result = $0
        } failure: { _ in
            Issue.record("failure")
        }
        f.sim.processAllEvents()
        #expect(result?.restoredTransactions.map(\.productIdentifier) == [IDs.level, IDs.monthly])
        #expect(result?.restoredTransactions.allSatisfy { $0.state == .restored } == true)
    }

    /// testPaymentQueueRestoreCompletedTransactionsFinished_Queue__TwoTransactions_restoreTransactionsOfUser_SuccessBlock
    @Test func restoreCompletedTransactionsFinished_TwoTransactions_ofUser_successBlockGetsBoth() {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level, applicationUsername: "alice")
        f.buy(IDs.monthly, applicationUsername: "alice")
        var result: RestoreResult?
        f.store.restoreTransactions(applicationUsername: "alice") {
            result = $0
        } failure: { _ in
            Issue.record("failure")
        }
        f.sim.processAllEvents()
        #expect(result?.restoredTransactions.map(\.productIdentifier) == [IDs.level, IDs.monthly])
        #expect(result?.restoredTransactions.allSatisfy { $0.payment.applicationUsername == "alice" } == true)
    }

    /// testPaymentQueueRestoreCompletedTransactionsFailedWithError_Queue_Error
    @Test func restoreCompletedTransactionsFailedWithError_postsFailedWithTheError() throws {
        let f = Fixture()
        f.sim.restoreError = TestError("restore")
        f.store.restoreTransactions()
        f.sim.processAllEvents()
        #expect(f.log.names == [.rmRestoreTransactionsFailed])
        #expect(f.log.first(.rmRestoreTransactionsFailed)?.rm.storeError as? TestError == TestError("restore"))
    }

    /// testPaymentQueueRestoreCompletedTransactionsFailedWithError_Queue_Error__Blocks
    @Test func restoreCompletedTransactionsFailedWithError_Blocks_failureBlockGetsTheError() {
        let f = Fixture()
        f.sim.restoreError = TestError("restore")
        var error: (any Error)?
        f.store.restoreTransactions { _ in
            Issue.record("success")
        } failure: {
            error = $0
        }
        f.sim.processAllEvents()
        #expect(error as? TestError == TestError("restore"))
    }

    // MARK: Receipt refresh (SKRequestDelegate)

    /// testRequestDidFinish_noBlocks
    @Test func requestDidFinish_noBlocks_postsRefreshFinished() {
        let f = Fixture()
        f.store.refreshReceipt()
        f.sim.processAllEvents()
        #expect(f.log.names == [.rmRefreshReceiptFinished])
        #expect(f.log.first(.rmRefreshReceiptFinished)?.userInfo == nil)
    }

    /// testRequestDidFailWithError_noBlocks
    @Test func requestDidFailWithError_noBlocks_postsRefreshFailedWithTheError() {
        let f = Fixture()
        f.sim.refreshError = TestError("refresh")
        f.store.refreshReceipt()
        f.sim.processAllEvents()
        #expect(f.log.names == [.rmRefreshReceiptFailed])
        #expect(f.log.first(.rmRefreshReceiptFailed)?.rm.storeError as? TestError == TestError("refresh"))
    }

    /// testRequestDidFinish_withBlocks
    @Test func requestDidFinish_withBlocks_callsSuccessThenPosts() {
        let f = Fixture()
        f.store.refreshReceipt {
            f.log.timeline.append("success")
        } failure: { _ in
            Issue.record("failure")
        }
        f.sim.processAllEvents()
        #expect(f.log.timeline == ["success", Notification.Name.rmRefreshReceiptFinished.short])
    }

    /// testRequestDidFailWithError_withBlocks
    @Test func requestDidFailWithError_withBlocks_callsFailureWithTheErrorThenPosts() {
        let f = Fixture()
        f.sim.refreshError = TestError("refresh")
        var error: (any Error)?
        f.store.refreshReceipt {
            Issue.record("success")
        } failure: {
            error = $0
            f.log.timeline.append("failure")
        }
        f.sim.processAllEvents()
        #expect(error as? TestError == TestError("refresh"))
        #expect(f.log.timeline == ["failure", Notification.Name.rmRefreshReceiptFailed.short])
    }
}
