// The async/await API over the simulated App Store delivering by itself (no manual stepping).

import Foundation
import RMStore
import StoreTesting
import TestSupport
import Testing

// The limit catches a hang, not slowness: these tests wait for the main actor, which the parallel
// suite's other main-actor tests hold for minutes on a loaded machine (60 s was exceeded once).
@Suite("Async API", .timeLimit(.minutes(5)))
@MainActor
struct AsyncAPITests {
    @Test func productsPurchaseRestoreRefresh_async() async throws {
        let f = Fixture(automatic: true, receiptIssuer: JSONReceiptIssuerForTests())
        let response = try await f.store.requestProducts([IDs.level, IDs.coins, "nope"])
        #expect(response.products.map(\.identifier) == [IDs.coins, IDs.level])
        #expect(response.invalidProductIdentifiers == ["nope"])
        let transaction = try await f.store.purchase(IDs.level)
        #expect(transaction.state == .purchased)
        #expect(f.sim.finishedTransactionIdentifiers == [transaction.identifier])
        let restored = try await f.store.restoreTransactions()
        #expect(restored.restoredTransactions.map { $0.original?.identifier } == [transaction.identifier])
        try await f.store.refreshReceipt()
        #expect(f.sim.refreshRequestCount == 1)
    }

    @Test func purchase_async_throwsPurchaseErrorWithTheTransaction() async throws {
        let f = Fixture(automatic: true)
        _ = try await f.store.requestProducts([IDs.level])
        f.sim.setOutcome(.failed(TestError("card")), forProduct: IDs.level)
        do {
            _ = try await f.store.purchase(IDs.level)
            Issue.record("no error")
        } catch let error as PurchaseError {
            #expect(error.error as? TestError == TestError("card"))
            #expect(error.transaction?.state == .failed)
        }
        do {
            _ = try await f.store.purchase("unknown")
            Issue.record("no error")
        } catch let error as PurchaseError {
            #expect(error.transaction == nil)
            #expect(StoreError.code(of: error.error) == .unknownProductIdentifier)
        }
    }

    @Test func purchase_async_cancelledBeforeStart_queuesNothing() async throws {
        let f = Fixture(automatic: true)
        _ = try await f.store.requestProducts([IDs.level])
        let task = Task { @MainActor in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await f.store.purchase(IDs.level)
        }
        do {
            _ = try await task.value
            Issue.record("no error")
        } catch let error as PurchaseError {
            #expect(error.error is CancellationError)
        }
        #expect(f.sim.addedPayments.isEmpty)
    }

    /// A cancelled waiter leaves at once; the shared refresh goes on and the other waiter is
    /// still called back.
    @Test func refresh_async_cancelledWaiterLeavesOthersAreCalledBack() async throws {
        let f = Fixture()  // manual delivery: the refresh stays pending until we run events
        let cancelled = Task { @MainActor in try await f.store.refreshReceipt() }
        let kept = Task { @MainActor in try await f.store.refreshReceipt() }
        while f.sim.refreshRequestCount == 0 || f.sim.pendingEventCount == 0 {
            await Task.yield()
        }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        f.sim.processAllEvents()
        try await kept.value
        #expect(f.sim.refreshRequestCount == 1)
        #expect(f.log.names == [.rmRefreshReceiptFinished])
    }

    /// Cancelling a purchase after the payment was queued does not lose its outcome.
    @Test func purchase_async_cancelledAfterQueueing_stillReturnsTheOutcome() async throws {
        let f = Fixture()
        f.requestAllProducts()
        let task = Task { @MainActor in try await f.store.purchase(IDs.level) }
        while f.sim.addedPayments.isEmpty { await Task.yield() }
        task.cancel()
        f.sim.processAllEvents()
        let transaction = try await task.value
        #expect(transaction.state == .purchased)
    }
}
