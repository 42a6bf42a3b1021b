// Docs/StoreBehaviour.md §4.6 and §8: refresh once, then retry; a failed refresh leaves the transaction
// unfinished; concurrent verifications share one refresh.

import Foundation
import RMStore
import RMStoreVerifiers
import ReceiptVerification
import Receipts
import StoreTesting
import TestSupport
import Testing

@MainActor
@Suite(.timeLimit(.minutes(5))) struct RefreshAndRetryTests {
    /// The receipt the app holds lags behind the purchase: the verifier refreshes once, and the
    /// refreshed receipt holds the transaction, so it succeeds.
    @Test func receiptWithoutTheTransaction_refreshesOnce_andTheRefreshedReceiptVerifies() async throws {
        let f = try VerifierFixture()
        try await f.requestAllProducts()
        try await f.buy(IDs.coins)  // a receipt exists
        f.log.clear()
        f.sim.receiptIssuer = nil  // the App Store does not update the app's receipt yet

        let recorder = try f.addPayment(IDs.level)
        try await f.pump("the refresh request") { f.sim.refreshRequestCount == 1 }

        // The first attempt saw a valid receipt without this transaction.
        let pending = try #require(f.sim.unfinishedTransactions.first { $0.productIdentifier == IDs.level })
        let stale = try AppReceipt([UInt8](Data(contentsOf: f.receiptURL)))
        #expect(stale.inAppPurchase(transactionIdentifier: pending.identifier) == nil)
        #expect(!recorder.isDone)

        f.sim.receiptIssuer = f.issuer  // the refresh brings the up-to-date receipt
        try await f.pump("the purchase") { recorder.isDone }

        #expect(recorder.successes.map(\.identifier) == [pending.identifier])
        #expect(f.sim.refreshRequestCount == 1)
        #expect(try f.theVerifier().refreshRequestCount == 1)
        #expect(f.log.timeline == ["RefreshReceiptFinished", "callback:success", "PaymentTransactionFinished"])
        #expect(f.sim.finishedTransactionIdentifiers.contains(pending.identifier))
        #expect(try f.persistor.count(productIdentifier: IDs.level) == 1)
    }

    /// No receipt file at all triggers the refresh too.
    @Test func missingReceiptFile_triggersARefresh_thenVerifies() async throws {
        let f = try VerifierFixture(issuesReceipts: false)
        try await f.requestAllProducts()

        let recorder = try f.addPayment(IDs.level)
        try await f.pump("the refresh request") { f.sim.refreshRequestCount == 1 }
        #expect(!FileManager.default.fileExists(atPath: f.receiptURL.path))
        f.sim.receiptIssuer = f.issuer
        try await f.pump("the purchase") { recorder.isDone }

        #expect(recorder.successes.count == 1)
        #expect(FileManager.default.fileExists(atPath: f.receiptURL.path))
        #expect(f.sim.refreshRequestCount == 1)
    }

    /// The refreshed receipt still lacks the transaction: a definitive failure. The transaction is
    /// finished (not delivered again), nothing is persisted, exactly one refresh was made.
    @Test func transactionStillMissingAfterTheRefresh_fails_andTheTransactionIsFinished() async throws {
        let f = try VerifierFixture()
        f.sim.receiptIssuer = OmittingIssuer(base: f.issuer, omittedProducts: [IDs.level])
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.level)

        let (transaction, error) = try #require(recorder.failures.first)
        let id = try #require(transaction?.identifier)
        #expect(StoreError.code(of: error) == .verificationFailed)
        let detail = try #require(StoreVerifierError.from(error))
        #expect(detail.code == .transactionNotInReceipt)
        #expect(detail.message.contains(id))
        #expect(f.sim.refreshRequestCount == 1)
        #expect(f.sim.finishedTransactionIdentifiers == [id])
        #expect(f.sim.unfinishedTransactions.isEmpty)
        #expect(try f.persistor.count(productIdentifier: IDs.level) == 0)
        #expect(f.log.timeline == ["RefreshReceiptFinished", "callback:failure", "PaymentTransactionFailed"])
        #expect(
            f.log.all(.rmPaymentTransactionFailed).first.flatMap { $0.rm.storeError.flatMap(StoreVerifierError.from) }?.code
                == .transactionNotInReceipt)
    }

    /// Must show (§8.2, §4.6): the refresh fails (offline), so verification is unable to complete:
    /// code 200, the transaction is NOT finished, nothing is persisted. At the next launch the
    /// queue delivers it again, the refresh works, and it is verified, finished and persisted.
    /// RMStore passed the refresh error on unchanged, which finished the transaction.
    @Test func refreshFailure_isUnableToComplete_transactionStaysUnfinished_andIsVerifiedWhenRedelivered() async throws {
        let f = try VerifierFixture(issuesReceipts: false)
        f.sim.refreshError = URLError(.notConnectedToInternet)
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.level)

        let (transaction, error) = try #require(recorder.failures.first)
        let id = try #require(transaction?.identifier)
        #expect(StoreError.code(of: error) == .unableToCompleteVerification)
        let detail = try #require(StoreVerifierError.from(error))
        #expect(detail.code == .refreshFailed)
        #expect((detail.underlying as? URLError)?.code == .notConnectedToInternet)
        #expect(f.sim.finishedTransactionIdentifiers.isEmpty)
        #expect(f.sim.unfinishedTransactions.map(\.identifier) == [id])
        #expect(try f.persistor.count(productIdentifier: IDs.level) == 0)
        #expect(f.log.names == [.rmRefreshReceiptFailed, .rmPaymentTransactionFailed])

        // Next launch, back online.
        f.sim.refreshError = nil
        f.sim.receiptIssuer = f.issuer
        f.log.clear()
        try f.launch()
        try await f.pump("the redelivered transaction") { !f.log.all(.rmPaymentTransactionFinished).isEmpty }

        #expect(f.log.all(.rmPaymentTransactionFinished).first?.rm.transaction?.identifier == id)
        #expect(f.sim.finishedTransactionIdentifiers == [id])
        #expect(f.sim.unfinishedTransactions.isEmpty)
        #expect(try f.persistor.transactions(forProduct: IDs.level).map(\.transactionIdentifier) == [id])
    }

    /// Must show (§8, single refresh slot): two transactions failing verification at the same
    /// time, and the app's own refresh on top, share ONE refresh, and every caller is called
    /// back. RMStore kept one slot, so all callers but the last were never called back.
    @Test func concurrentFailingVerifications_andAnAppRefresh_shareOneRefresh_everyCallerCalledBack() async throws {
        let f = try VerifierFixture(issuesReceipts: false)
        try await f.requestAllProducts()
        let verifier = try f.theVerifier()

        let level = try f.addPayment(IDs.level)
        let coins = try f.addPayment(IDs.coins)
        try await f.pump("both verifications asking for a refresh") { verifier.refreshRequestCount == 2 }
        #expect(f.sim.refreshRequestCount == 1)
        var appRefreshed = false
        try f.theStore().refreshReceipt {
            appRefreshed = true
        } failure: { _ in
            Issue.record("the app's refresh failed")
        }
        #expect(f.sim.refreshRequestCount == 1)

        f.sim.receiptIssuer = f.issuer
        try await f.pump("both purchases") { level.isDone && coins.isDone && appRefreshed }

        #expect(level.successes.count == 1)
        #expect(coins.successes.count == 1)
        #expect(f.sim.refreshRequestCount == 1)
        #expect(f.log.all(.rmRefreshReceiptFinished).count == 1)
        #expect(f.sim.finishedTransactionIdentifiers.count == 2)
    }

    /// Without a refresher the first failure is final: no refresh, a failure.
    @Test func noRefresher_theFirstFailureIsFinal() async throws {
        let f = try VerifierFixture(issuesReceipts: false, refreshes: false)
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.level)

        #expect(recorder.storeCode == .verificationFailed)
        #expect(recorder.verifierError?.code == .receiptMissing)
        #expect(f.sim.refreshRequestCount == 0)
        #expect(try f.theVerifier().refreshRequestCount == 0)
        #expect(f.sim.finishedTransactionIdentifiers.count == 1)
    }

    /// Garbage in the receipt file never crashes: it fails the `parse` check (no refresher here,
    /// so that failure is the verdict).
    @Test func garbageReceiptFile_failsTheParseCheck() async throws {
        let f = try VerifierFixture(issuesReceipts: false, refreshes: false)
        try FileManager.default.createDirectory(at: f.receiptURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: f.receiptURL)
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.level)

        #expect(recorder.storeCode == .verificationFailed)
        let detail = try #require(recorder.verifierError)
        #expect(detail.code == .receiptInvalid)
        #expect(detail.failedCheckNames == [.parse])
        #expect(detail.message.contains("parse"))
    }

    /// ...and with a refresher, the refreshed (real) receipt replaces the garbage and verifies.
    @Test func garbageReceiptFile_isReplacedByTheRefresh() async throws {
        let f = try VerifierFixture(issuesReceipts: false)
        try FileManager.default.createDirectory(at: f.receiptURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("not a receipt".utf8).write(to: f.receiptURL)
        try await f.requestAllProducts()

        let recorder = try f.addPayment(IDs.level)
        try await f.pump("the refresh request") { f.sim.refreshRequestCount == 1 }
        f.sim.receiptIssuer = f.issuer
        try await f.pump("the purchase") { recorder.isDone }

        #expect(recorder.successes.count == 1)
    }

    /// A receipt path that cannot be read (here a directory) is no verdict on the transaction:
    /// unable to complete, not finished.
    @Test func unreadableReceiptFile_isUnableToComplete() async throws {
        let f = try VerifierFixture(issuesReceipts: false, refreshes: false)
        try FileManager.default.createDirectory(at: f.receiptURL, withIntermediateDirectories: true)
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.level)

        #expect(recorder.storeCode == .unableToCompleteVerification)
        #expect(recorder.verifierError?.code == .receiptUnreadable)
        #expect(f.sim.finishedTransactionIdentifiers.isEmpty)
        #expect(f.sim.unfinishedTransactions.count == 1)
    }
}
