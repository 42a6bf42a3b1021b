// The behaviour rows of RMStore's own verifier tests (Docs/StoreBehaviour.md §7), one test each, named after
// the original test file so the mapping is visible. RMStore ran them with empty data and no
// network; here they run against the simulated App Store and a verifyReceipt endpoint on 127.0.0.1.

import Foundation
import RMStore
import RMStoreVerifiers
import ReceiptVerification
import Receipts
import StoreTesting
import TestSupport
import Testing
import VerifyReceipt

@MainActor
@Suite("RMStoreAppReceiptVerifierTests.m", .timeLimit(.minutes(5)))
struct RMStoreAppReceiptVerifierRows {
    /// testVerifyTransaction_NoReceipt: no app receipt → failure. Here the verifier first
    /// refreshes (the simulated App Store has no receipt to give either), then fails.
    @Test func verifyTransaction_NoReceipt_fails() async throws {
        let f = try VerifierFixture(issuesReceipts: false)
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.level)

        #expect(recorder.successes.isEmpty)
        #expect(recorder.storeCode == .verificationFailed)
        #expect(recorder.verifierError?.code == .receiptMissing)
        #expect(f.sim.refreshRequestCount == 1)
        #expect(!FileManager.default.fileExists(atPath: f.receiptURL.path))
    }

    /// testBundleIdentifier / testBundleVersion (default and set): RMStore fell back to the main
    /// bundle's values; this port has no process default, the configured values are the ones
    /// compared. The receipt's version is the build number ("1.0" here): configuring the
    /// marketing-style "1.0.0" instead fails the `appVersion` check (RMStore #58, PR #145).
    @Test func bundleIdentifierAndVersion_areTheConfiguredValues() async throws {
        let matching = try VerifierFixture(label: "matching", refreshes: false)
        #expect(try matching.theVerifier().configuration.bundleIdentifier == IDs.bundle)
        #expect(try matching.theVerifier().configuration.appVersion == IDs.version)
        try await matching.requestAllProducts()
        #expect(try await matching.buy(IDs.level).successes.count == 1)

        let marketing = try VerifierFixture(label: "marketing", refreshes: false) { $0.appVersion = "1.0.0" }
        try await marketing.requestAllProducts()
        let recorder = try await marketing.buy(IDs.level)
        #expect(recorder.verifierError?.failedCheckNames == [.appVersion])
    }
}

@MainActor
@Suite("RMStoreTransactionReceiptVerifierTests.m", .timeLimit(.minutes(5)))
struct RMStoreTransactionReceiptVerifierRows {
    /// testVerifyTransaction_NoReceipt: no transaction receipt → failure, and no request.
    @Test func verifyTransaction_NoReceipt_failsWithoutARequest() async throws {
        let servers = try OnlineFixture()
        var transaction = try LegacyPurchase.make().transaction
        transaction.transactionReceipt = nil

        let result = await servers.verifier().verify(transaction)

        #expect(failure(of: result)?.code == .transactionReceiptMissing)
        #expect(servers.production.requests == 0)
        await servers.shutdown()
    }

    /// testVerifyTransaction_Receipt: the receipt "receipt" → success is never called. Here the
    /// endpoint answers 21002 (malformed receipt data) and the verifier fails once with that
    /// status; offline it fails the `parse` check.
    @Test func verifyTransaction_ReceiptThatIsNotOne_neverSucceeds() async throws {
        let servers = try OnlineFixture()
        var transaction = try LegacyPurchase.make().transaction
        transaction.transactionReceipt = Data("receipt".utf8)
        var results: [VerificationResult] = []

        let verifier = servers.verifier()
        try await confirmation { called in
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                verifier.verify(transaction) { result in
                    results.append(result)
                    called()
                    continuation.resume()
                }
            }
        }

        #expect(results.count == 1)
        let detail = try #require(results.first.flatMap(failure(of:)))
        #expect(detail.code == .status)
        #expect(detail.status == 21002)
        let local = try offlineVerifier()
        let offline = await local.verify(transaction)
        #expect(failure(of: offline)?.failedCheckNames == [.parse])
        await servers.shutdown()
    }
}
