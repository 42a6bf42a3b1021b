// Docs/StoreBehaviour.md §8 (and §4): one test per defect of RMStore this port fixes. Each test states the
// behaviour RMStore had and asserts what would have failed under it.

import Foundation
import RMStore
import StoreTesting
import TestSupport
import Testing

@Suite("Docs/StoreBehaviour.md §8 defects")
@MainActor
struct RMStoreDefectTests {
    /// §2.1/§8: RMStore kept one pair of blocks per product id, so a second purchase of the same
    /// product replaced the first purchase's blocks and the first caller was never called back.
    @Test func perPaymentCallbacks_twoPurchasesOfOneProductAreBothCalledBack() throws {
        let f = Fixture()
        f.requestAllProducts()
        var first: [PaymentTransaction] = []
        var second: [PaymentTransaction] = []
        let p1 = try #require(f.store.addPayment(IDs.coins) { first.append($0) })
        let p2 = try #require(f.store.addPayment(IDs.coins) { second.append($0) })
        f.sim.processAllEvents()
        #expect(first.map(\.payment.id) == [p1.id])
        #expect(second.map(\.payment.id) == [p2.id])
        #expect(first.first?.identifier != second.first?.identifier)
    }

    /// §2.1/§4.6: RMStore had one refresh slot; a second refresh before the first completed
    /// replaced the first caller's blocks. Here concurrent callers share one request and every
    /// caller is called back; one notification is posted.
    @Test func refreshReceipt_concurrentCallersAreCoalescedAndAllCalledBack() {
        let f = Fixture()
        var calls: [String] = []
        f.store.refreshReceipt { calls.append("a") }
        f.store.refreshReceipt { calls.append("b") }
        f.store.refreshReceipt { calls.append("c") }
        f.sim.processAllEvents()
        #expect(f.sim.refreshRequestCount == 1)
        #expect(calls == ["a", "b", "c"])
        #expect(f.log.names == [.rmRefreshReceiptFinished])
        // A refresh after completion is a new request.
        f.store.refreshReceipt { calls.append("d") }
        f.sim.processAllEvents()
        #expect(f.sim.refreshRequestCount == 2)
        #expect(calls.last == "d")
    }

    @Test func refreshReceipt_concurrentCallersAllGetTheFailure() {
        let f = Fixture()
        f.sim.refreshError = TestError("offline")
        var failures = 0
        for _ in 0..<3 {
            f.store.refreshReceipt {
                Issue.record("success")
            } failure: { error in
                if error as? TestError == TestError("offline") { failures += 1 }
            }
        }
        f.sim.processAllEvents()
        #expect(f.sim.refreshRequestCount == 1)
        #expect(failures == 3)
        #expect(f.log.names == [.rmRefreshReceiptFailed])
    }

    /// §8.3, PR #150: when the queue delivered a restored transaction twice, RMStore's pending
    /// counter never returned to zero and the restore never completed.
    @Test func restore_duplicateDeliveryDoesNotStall_whileVerificationIsPending() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        f.buy(IDs.monthly)
        let verifier = ScriptedVerifier(.verified)
        verifier.holds = true
        f.store.receiptVerifier = verifier
        f.sim.deliversTransactionUpdatesTwice = true
        var result: RestoreResult?
        f.store.restoreTransactions { result = $0 }
        f.sim.processAllEvents()
        #expect(verifier.waitingCount == 2)  // the duplicates were not verified again
        #expect(result == nil)
        verifier.releaseAll()
        let restored = try #require(result)
        #expect(restored.restoredTransactions.count == 2)
        #expect(f.log.all(.rmRestoreTransactionsFinished).count == 1)
        #expect(f.sim.unfinishedTransactions.isEmpty)
    }

    @Test func restore_duplicateDeliveryDoesNotStall_withSynchronousPipeline() {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        f.sim.deliversTransactionUpdatesTwice = true
        var result: RestoreResult?
        f.store.restoreTransactions { result = $0 }
        f.sim.processAllEvents()
        #expect(result?.restoredTransactions.count == 1)
        #expect(f.log.all(.rmPaymentTransactionFinished).count == 2)  // the purchase and one restore
    }

    /// §8.9 (#212): RMStore read the web order line item id through a 32-bit int. Real ids are
    /// about 10^15; they survive the transaction model, the receipt seam and both persistors
    /// exactly, up to the 64-bit limit (beyond a Double's 53 bits).
    @Test func webOrderLineItemID_is64BitEndToEnd() throws {
        let f = Fixture(receiptIssuer: JSONReceiptIssuerForTests())
        let ledger = DefaultsTransactionPersistor(fileURL: f.directory.appendingPathComponent("ledger.json"))
        f.store.transactionPersistor = ledger
        f.requestAllProducts()
        let recorder = f.buy(IDs.monthly)
        let transaction = try #require(recorder.successes.first)
        let webOrder = try #require(transaction.webOrderLineItemID)
        #expect(webOrder > Int64(Int32.max))
        #expect(try ledger.transactions(forProduct: IDs.monthly).first?.webOrderLineItemID == webOrder)
        let receiptURL = try #require(f.sim.receiptURL)
        let receipt = try JSONReceiptIssuerForTests.decode(Data(contentsOf: receiptURL))
        #expect(receipt.inAppPurchases.first?.webOrderLineItemID == webOrder)

        for kind in PersistorKind.allCases {
            let url = f.directory.appendingPathComponent("max-\(kind.rawValue)")
            var big = purchased("sub", "1")
            big.webOrderLineItemID = Int64.max - 1
            try kind.make(url).persist(big)
            #expect(try kind.make(url).transactions(forProduct: "sub").first?.webOrderLineItemID == Int64.max - 1)
        }
    }

    /// §8.2, §4.3: "could not verify" must not consume the purchase. The transaction stays in the
    /// queue, is delivered again at the next launch (a new store on the same queue), verified
    /// again, and then finished and persisted.
    @Test func unableToComplete_leavesTheTransactionUnfinishedAndItIsRedelivered() throws {
        let sim = SimulatedAppStore(catalog: defaultCatalog(), deliversAutomatically: false)
        let ledger = DefaultsTransactionPersistor(fileURL: temporaryDirectory().appendingPathComponent("ledger.json"))
        var firstFailure: (any Error)?
        do {
            let store = Store(
                appStore: sim, receiptVerifier: ScriptedVerifier(.unableToComplete(TestError("offline"))),
                transactionPersistor: ledger, notificationCenter: NotificationCenter())
            store.requestProducts([IDs.level])
            sim.processAllEvents()
            store.addPayment(IDs.level) { _ in
                Issue.record("success")
            } failure: { _, error in
                firstFailure = error
            }
            sim.processAllEvents()
        }
        #expect(StoreError.code(of: try #require(firstFailure)) == .unableToCompleteVerification)
        #expect(sim.finishedTransactionIdentifiers.isEmpty)
        let pending = try #require(sim.unfinishedTransactions.first)
        #expect(try ledger.count(productIdentifier: IDs.level) == 0)

        // Next launch.
        let verifier = ScriptedVerifier(.verified)
        let store = Store(appStore: sim, receiptVerifier: verifier, transactionPersistor: ledger, notificationCenter: NotificationCenter())
        let log = NotificationLog()
        store.addObserver(log)
        sim.processAllEvents()
        #expect(verifier.verifiedIdentifiers == [pending.identifier])
        #expect(sim.finishedTransactionIdentifiers == [pending.identifier])
        #expect(log.names == [.rmPaymentTransactionFinished])
        #expect(try ledger.count(productIdentifier: IDs.level) == 1)
    }

    /// The "do not finish" decision comes from the typed outcome, not from a code: a verifier
    /// failure whose error happens to carry code 200 still finishes (RMStore compared codes only).
    @Test func failedVerification_withCode200Error_stillFinishes() {
        let f = Fixture()
        f.store.receiptVerifier = ScriptedVerifier(.failed(StoreError(.unableToCompleteVerification)))
        f.requestAllProducts()
        f.buy(IDs.level)
        #expect(f.sim.finishedTransactionIdentifiers.count == 1)
    }

    /// §2.1: RMStore's restoreTransactionsOfUser did not clear the aggregate array, so
    /// transactions of an earlier restore leaked into its result.
    @Test func restoreOfUser_startsAFreshAggregate() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level, applicationUsername: "alice")
        f.buy(IDs.monthly, applicationUsername: "bob")
        var all: RestoreResult?
        f.store.restoreTransactions { all = $0 }
        f.sim.processAllEvents()
        #expect(all?.restoredTransactions.count == 2)
        var alice: RestoreResult?
        f.store.restoreTransactions(applicationUsername: "alice") { alice = $0 }
        f.sim.processAllEvents()
        let result = try #require(alice)
        #expect(result.restoredTransactions.map(\.productIdentifier) == [IDs.level])
        #expect(f.log.all(.rmRestoreTransactionsFinished).last?.rm.transactions?.count == 1)
        #expect(f.sim.restoreRequests == [nil, "alice"])
    }

    /// Restore calls for one user join the running restore (one queue request, every caller
    /// called back); a call for another user is refused instead of mixing results.
    @Test func restore_concurrentCalls_joinOrAreRefused() {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level, applicationUsername: "alice")
        var results = 0
        var refused: (any Error)?
        f.store.restoreTransactions(applicationUsername: "alice") { _ in results += 1 }
        f.store.restoreTransactions(applicationUsername: "alice") { _ in results += 1 }
        f.store.restoreTransactions(applicationUsername: "bob") { _ in
            Issue.record("bob")
        } failure: {
            refused = $0
        }
        f.sim.processAllEvents()
        #expect(results == 2)
        #expect(f.sim.restoreRequests == ["alice"])
        #expect(StoreError.code(of: refused ?? TestError("none")) == .restoreInProgress)
    }

    /// §4.4: RMStore let the download that settled last decide; an early failure followed by a
    /// later success finished the transaction as a success. Here any failure fails it.
    @Test func hostedDownloads_earlyFailureThenLateSuccess_failsTheTransaction() throws {
        let f = Fixture(catalog: defaultCatalog(twoPacksOutcomes: (.failed(TestError("a")), .finished)))
        f.requestAllProducts()
        let recorder = f.buy(IDs.twoPacks)
        let failedIndex = try #require(f.log.names.firstIndex(of: .rmDownloadFailed))
        let finishedIndex = try #require(f.log.names.firstIndex(of: .rmDownloadFinished))
        #expect(failedIndex < finishedIndex)  // the failure settled first, the success last
        #expect(recorder.successes.isEmpty)
        #expect(recorder.failures.first?.1 as? TestError == TestError("a"))
        #expect(f.log.names.last == .rmPaymentTransactionFailed)
    }

    /// §8.3, #164: a restore whose transactions failed still reported plain success. Failed
    /// restored transactions are now listed apart.
    @Test func restore_failedRestoredTransactionsAreReportedDistinctly() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.buy(IDs.level)
        f.buy(IDs.monthly)
        let verifier = ScriptedVerifier(.verified)
        verifier.resultsByProduct[IDs.monthly] = .failed(TestError("forged"))
        f.store.receiptVerifier = verifier
        var result: RestoreResult?
        f.store.restoreTransactions { result = $0 }
        f.sim.processAllEvents()
        let restore = try #require(result)
        #expect(restore.restoredTransactions.map(\.productIdentifier) == [IDs.level])
        #expect(restore.failedTransactions.map(\.transaction.productIdentifier) == [IDs.monthly])
        #expect(restore.failedTransactions.first?.error as? TestError == TestError("forged"))
        let notification = try #require(f.log.all(.rmRestoreTransactionsFinished).last)
        #expect(notification.rm.failedTransactions?.count == 1)
        #expect(notification.rm.transactions?.count == 1)
    }

    /// §8.1 (#172, #151, PR #168): finish only after the app delivered. The success callback
    /// runs with the transaction persisted but still in the queue; the app finishes it.
    @Test func finishAfterDelivery_appFinishesAfterDelivering() throws {
        let f = Fixture(configuration: Store.Configuration(finishMode: .afterDelivery))
        let ledger = DefaultsTransactionPersistor(fileURL: f.directory.appendingPathComponent("ledger.json"))
        f.store.transactionPersistor = ledger
        f.requestAllProducts()
        var delivered: PaymentTransaction?
        f.store.addPayment(IDs.level) { transaction in
            delivered = transaction
            #expect(f.sim.unfinishedTransactions.map(\.identifier) == [transaction.identifier])
            #expect((try? ledger.count(productIdentifier: IDs.level)) == 1)
        }
        f.sim.processAllEvents()
        let transaction = try #require(delivered)
        #expect(f.log.names == [.rmPaymentTransactionFinished])
        #expect(f.sim.finishedTransactionIdentifiers.isEmpty)
        #expect(f.store.transactionsAwaitingDelivery.map(\.identifier) == [transaction.identifier])
        f.store.finishTransaction(transaction)
        #expect(f.sim.finishedTransactionIdentifiers == [transaction.identifier])
        #expect(f.store.transactionsAwaitingDelivery.isEmpty)
    }

    /// §8.1: if the app dies before delivering, the transaction comes back at the next launch,
    /// and persisting it again does not count it twice.
    @Test func finishAfterDelivery_undeliveredTransactionComesBackWithoutDoubleCounting() throws {
        let sim = SimulatedAppStore(catalog: defaultCatalog(), deliversAutomatically: false)
        let ledger = DefaultsTransactionPersistor(fileURL: temporaryDirectory().appendingPathComponent("ledger.json"))
        let configuration = Store.Configuration(finishMode: .afterDelivery)
        do {
            let store = Store(
                appStore: sim, transactionPersistor: ledger, configuration: configuration, notificationCenter: NotificationCenter())
            store.requestProducts([IDs.level])
            sim.processAllEvents()
            store.addPayment(IDs.level)
            sim.processAllEvents()
        }
        #expect(sim.unfinishedTransactions.count == 1)
        let store = Store(
            appStore: sim, transactionPersistor: ledger, configuration: configuration, notificationCenter: NotificationCenter())
        let log = NotificationLog()
        store.addObserver(log)
        sim.processAllEvents()
        let again = try #require(log.first(.rmPaymentTransactionFinished)?.rm.transaction)
        #expect(try ledger.count(productIdentifier: IDs.level) == 1)
        store.finishTransaction(again)
        #expect(sim.unfinishedTransactions.isEmpty)
    }

    /// A persistence failure is reported, not swallowed (RMStore only logged keychain errors).
    /// In after-delivery mode the transaction stays unfinished, so nothing is lost.
    @Test(arguments: [Store.FinishMode.automatic, .afterDelivery])
    func persistenceFailure_isReportedAsAFailure(mode: Store.FinishMode) throws {
        let f = Fixture(configuration: Store.Configuration(finishMode: mode))
        // A real persistor whose directory does not exist: the write really fails.
        f.store.transactionPersistor = DefaultsTransactionPersistor(fileURL: f.directory.appendingPathComponent("missing/ledger.json"))
        f.requestAllProducts()
        let recorder = f.buy(IDs.level)
        let error = try #require(recorder.failures.first?.1 as? StoreError)
        #expect(error.code == .persistenceFailed)
        #expect(error.underlying is PersistenceError)
        #expect(f.log.names == [.rmPaymentTransactionFailed])
        #expect(f.sim.finishedTransactionIdentifiers.count == (mode == .automatic ? 1 : 0))
    }

    /// §8.12 (#50, #85): RMStore's delegates were weak, so a persistor created inline was gone
    /// at once and nothing was persisted. The store holds its delegates strongly.
    @Test func delegatesAreHeldStrongly() throws {
        let f = Fixture()
        let url = f.directory.appendingPathComponent("ledger.json")
        f.store.transactionPersistor = DefaultsTransactionPersistor(fileURL: url)
        f.store.receiptVerifier = ScriptedVerifier(.verified)
        f.store.contentDownloader = ScriptedDownloader()
        f.requestAllProducts()
        f.buy(IDs.level)
        #expect(f.store.receiptVerifier != nil)
        #expect(try DefaultsTransactionPersistor(fileURL: url).count(productIdentifier: IDs.level) == 1)
        #expect(f.log.names == [.rmDownloadFinished, .rmPaymentTransactionFinished])
    }

    /// §6: RMStore's keychain persistence counted a non-consumable again at every restore.
    @Test func restoringTwice_persistsOnce() throws {
        let f = Fixture()
        let ledger = try SecureTransactionPersistor(fileURL: f.directory.appendingPathComponent("secure"), key: PersistorKind.key)
        f.store.transactionPersistor = ledger
        f.requestAllProducts()
        f.buy(IDs.level)
        for _ in 0..<2 {
            f.store.restoreTransactions()
            f.sim.processAllEvents()
        }
        #expect(f.log.all(.rmPaymentTransactionFinished).count == 3)
        #expect(try ledger.count(productIdentifier: IDs.level) == 1)
    }

    /// §8.15, PR #213: buying without a prior products request, when the app opts in.
    @Test func addPaymentWithoutProductRequest_whenAllowed() {
        let f = Fixture(configuration: Store.Configuration(allowsPaymentsForUnrequestedProducts: true))
        let recorder = f.buy(IDs.level)
        #expect(recorder.successes.count == 1)
        #expect(f.sim.productsRequestCount == 0)
    }

    /// The documented order of the pipeline (Docs/StoreBehaviour.md §4.2): verify → self-hosted download →
    /// hosted downloads → finish → persist → callback → notification.
    @Test func pipeline_runsInTheDocumentedOrder() throws {
        let f = Fixture()
        let verifier = ScriptedVerifier(.verified)
        verifier.log = f.log
        let downloader = ScriptedDownloader()
        downloader.progressValues = [0.3]
        downloader.log = f.log
        let ledger = DefaultsTransactionPersistor(fileURL: f.directory.appendingPathComponent("ledger.json"))
        f.store.receiptVerifier = verifier
        f.store.contentDownloader = downloader
        f.store.transactionPersistor = ledger
        f.requestAllProducts()
        f.store.addPayment(IDs.pack) { transaction in
            #expect(f.sim.finishedTransactionIdentifiers == [transaction.identifier])  // finished before
            #expect((try? ledger.count(productIdentifier: IDs.pack)) == 1)  // persisted before
            f.log.timeline.append("callback")
        }
        f.sim.processAllEvents()
        #expect(
            f.log.timeline == [
                "verify", "selfHostedDownload",
                "DownloadUpdated(self-hosted)", "DownloadFinished(self-hosted)",
                "DownloadUpdated(hosted)", "DownloadFinished(hosted)",
                "callback", "PaymentTransactionFinished",
            ])
        let hosted = f.log.all(.rmDownloadFinished)
        #expect(hosted.map { $0.rm.download == nil } == [true, false])
    }
}

@Suite("Duplicate deliveries")
@MainActor
struct DuplicateDeliveryTests {
    /// A queue that delivers every update twice must not produce two callbacks, two finishes
    /// or two notifications, for purchases and for failures alike.
    @Test func purchasedAndFailedUpdatesDeliveredTwice_areReportedOnce() throws {
        let f = Fixture()
        f.requestAllProducts()
        f.sim.deliversTransactionUpdatesTwice = true
        let recorder = f.buy(IDs.level)
        f.sim.setOutcome(.failed(TestError("card")), forProduct: IDs.coins)
        let failures = f.buy(IDs.coins)
        let purchased = try #require(recorder.successes.first)
        let failed = try #require(failures.failures.first?.0)
        #expect(recorder.successes.count == 1)
        #expect(failures.failures.count == 1)
        #expect(f.sim.finishedTransactionIdentifiers == [purchased.identifier, failed.identifier])
        #expect(f.log.names == [.rmPaymentTransactionFinished, .rmPaymentTransactionFailed])
    }
}
