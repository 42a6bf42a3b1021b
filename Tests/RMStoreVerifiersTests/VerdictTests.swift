// What the app-receipt verifier rejects, and how it says so: the failing check named, anchors that
// fail closed, the validation time, and the transaction matched by id (restored ones by original id).

import Foundation
import RMStore
import RMStoreVerifiers
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import StoreTesting
import TestSupport
import Testing

/// A configuration the receipt does not meet, and the check that must name it.
struct Mismatch: Sendable, CustomTestStringConvertible {
    let label: String
    let check: VerificationCheck.Name
    let apply: @Sendable (inout AppReceiptStoreVerifier.Configuration) throws -> Void

    var testDescription: String { label }

    static let all: [Mismatch] = [
        Mismatch(label: "wrong bundle id", check: .bundleIdentifier) { $0.bundleIdentifier = "com.example.other" },
        Mismatch(label: "wrong version", check: .appVersion) { $0.appVersion = "2.0" },
        Mismatch(label: "wrong device", check: .deviceHash) {
            $0.deviceIdentifier = DeviceIdentifier(bytes: Array(repeating: 0xAB, count: 16))
        },
        Mismatch(label: "wrong anchor", check: .chain) { $0.trust.anchors = .anchors(TrustAnchors([try PKIs.other.get().root])) },
        Mismatch(label: "production only", check: .environment) { $0.allowedEnvironments = [.production] },
    ]
}

/// An anchor source that cannot give anchors, and the loader's error code.
struct BrokenAnchors: Sendable, CustomTestStringConvertible {
    let label: String
    let code: TrustAnchorError.Code
    let make: @Sendable (URL) throws -> TrustAnchorSource

    var testDescription: String { label }

    static let all: [BrokenAnchors] = [
        BrokenAnchors(label: "missing file", code: .missing) { $0.appendingPathComponent("no-such-root.cer").asAnchorFile },
        BrokenAnchors(label: "unreadable file (a directory)", code: .unreadable) { directory in
            let path = directory.appendingPathComponent("root.cer")
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
            return .file(path)
        },
        BrokenAnchors(label: "file without a certificate", code: .malformed) { directory in
            let path = directory.appendingPathComponent("root.cer")
            try Data("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n".utf8).write(to: path)
            return .file(path)
        },
        BrokenAnchors(label: "empty file", code: .malformed) { directory in
            let path = directory.appendingPathComponent("root.cer")
            try Data().write(to: path)
            return .file(path)
        },
        BrokenAnchors(label: "empty anchor set", code: .empty) { _ in .anchors(TrustAnchors([])) },
    ]
}

extension URL {
    fileprivate var asAnchorFile: TrustAnchorSource { .file(self) }
}

@MainActor
@Suite(.timeLimit(.minutes(5))) struct VerdictTests {
    /// Must show: a receipt that does not match the configuration (bundle id, version, device,
    /// anchor, environment) fails, and the error names the verdict's failing check. The verifier
    /// refreshes once (a fresh receipt could have fixed it), then the failure is final and the
    /// transaction is finished.
    @Test(arguments: Mismatch.all)
    func mismatchingReceipt_fails_namingTheFailedCheck(_ mismatch: Mismatch) async throws {
        var thrown: (any Error)?
        let f = try VerifierFixture(label: "mismatch\(mismatch.check)") { configuration in
            do { try mismatch.apply(&configuration) } catch { thrown = error }
        }
        if let thrown { throw thrown }
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.level)

        #expect(recorder.successes.isEmpty)
        #expect(recorder.storeCode == .verificationFailed)
        let detail = try #require(recorder.verifierError)
        #expect(detail.code == .receiptInvalid)
        #expect(detail.failedCheckNames.contains(mismatch.check), "\(detail)")
        #expect(detail.message.contains(mismatch.check.rawValue))
        let named = detail.failedChecks.map { "\($0.name) (\($0.reason))" }.joined(separator: "; ")
        #expect(detail.message == "The app receipt failed verification: \(named)")
        let storeError = try #require(recorder.failures.first?.1 as? StoreError)
        #expect(storeError.message.contains(mismatch.check.rawValue))
        #expect(f.sim.refreshRequestCount == 1)
        #expect(f.sim.finishedTransactionIdentifiers.count == 1)
        #expect(try f.persistor.count(productIdentifier: IDs.level) == 0)
    }

    /// The sentence that names the failed checks, written out: each check with its reason, in
    /// order; and, when a verdict is invalid without a failed check, that a required one did not run.
    @Test func theFailedChecksSentence() {
        let failures = [
            VerificationCheck(name: .bundleIdentifier, passed: false, reason: "expected a, found b"),
            VerificationCheck(name: .chain, passed: false, reason: "certificate has expired"),
        ]
        let named = StoreVerifierError(.receiptInvalid, "The app receipt failed verification", naming: failures)
        #expect(
            named.message
                == "The app receipt failed verification: bundleIdentifier (expected a, found b); chain (certificate has expired)")
        #expect(named.failedCheckNames == [.bundleIdentifier, .chain])
        let none = StoreVerifierError(.receiptInvalid, "The signed transaction failed verification", naming: [])
        #expect(none.message == "The signed transaction failed verification: a required check did not run")
        #expect(none.failedChecks.isEmpty)
    }

    /// Must show (Docs/StoreBehaviour.md §4.8, §8.10): an anchor file that is missing or unreadable (or holds no
    /// certificate, or no anchor at all) makes verification FAIL, visibly: not a silent pass
    /// (RMStore skipped the signature check) and not "unable to complete" (which would leave the
    /// transaction to fail again at every launch). The receipt is not even read and no refresh
    /// is made (it cannot help a configuration error); `configurationError` reports it at once.
    @Test(arguments: BrokenAnchors.all)
    func anchorsThatCannotBeLoaded_failEveryTransaction_withoutRefreshing(_ broken: BrokenAnchors) async throws {
        let directory = temporaryDirectory("anchors")
        let source = try broken.make(directory)
        let f = try VerifierFixture(label: "anchors") { $0.trust.anchors = source }
        let verifier = try f.theVerifier()
        let configurationError = try #require(verifier.configurationError)
        #expect(configurationError.code == .anchorsUnavailable)
        #expect((configurationError.underlying as? TrustAnchorError)?.code == broken.code)
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.level)

        #expect(recorder.successes.isEmpty)
        #expect(recorder.storeCode == .verificationFailed)
        #expect(recorder.verifierError?.code == .anchorsUnavailable)
        #expect(f.sim.refreshRequestCount == 0)
        #expect(f.sim.finishedTransactionIdentifiers.count == 1)
        #expect(f.log.names == [.rmPaymentTransactionFailed])
        await #expect(throws: StoreVerifierError.self) { _ = try await verifier.verifiedReceipt() }
    }

    /// The good receipt verifies with the same fixture when the anchor file is fine (the control
    /// for the test above): a DER file and a PEM file of the test root.
    @Test(arguments: ["der", "pem"])
    func anchorFile_thatHoldsTheRoot_verifies(_ format: String) async throws {
        let pki = try PKIs.apple.get()
        let path = temporaryDirectory("anchorfile").appendingPathComponent("root.\(format)")
        try (format == "der" ? Data(pki.root.derEncoded) : Data(pki.root.pemEncoded.utf8)).write(to: path)
        let f = try VerifierFixture(label: "anchorfile") { $0.trust.anchors = .file(path) }
        #expect(try f.theVerifier().configurationError == nil)
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.level)

        #expect(recorder.successes.count == 1)
    }

    /// The default anchors are Apple's bundled roots: a receipt signed by the test PKI does not
    /// chain to them.
    @Test func defaultAnchors_areApplesRoots_andDoNotTrustTheTestPKI() async throws {
        let f = try VerifierFixture(refreshes: false) { $0.trust.anchors = .bundledAppleRoots }
        #expect(try f.theVerifier().configurationError == nil)
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.level)

        #expect(recorder.verifierError?.failedCheckNames.contains(.chain) == true)
    }

    /// Validation time: by default the receipt's creation date (like Apple's endpoint), so a
    /// receipt signed while the leaf was valid verifies after the leaf expired; with a clock the
    /// chain is checked at the clock's time, and the expired leaf fails the `chain` check.
    @Test func validationTime_defaultsToTheCreationDate_andAClockCanBeInjected() async throws {
        let afterExpiry = Date(timeIntervalSince1970: 1_735_689_600)  // 2025-01-01, the leaf expired 2024-01-01
        let byCreation = try VerifierFixture(label: "creation", pki: PKIs.expiringLeaf, refreshes: false, automatic: true)
        let byClock = try VerifierFixture(label: "clock", pki: PKIs.expiringLeaf, refreshes: false, automatic: true) {
            $0.trust.validationTime = .clock { afterExpiry }
        }
        for fixture in [byCreation, byClock] {
            _ = try await fixture.theStore().requestProducts([IDs.level])
        }

        _ = try await byCreation.theStore().purchase(IDs.level)
        await #expect(throws: PurchaseError.self) { _ = try await byClock.theStore().purchase(IDs.level) }

        let failure = try #require(byClock.log.all(.rmPaymentTransactionFailed).first?.rm.storeError)
        let detail = try #require(StoreVerifierError.from(failure))
        #expect(detail.failedCheckNames == [.chain])
        #expect(detail.message.contains("expired"))
    }

    /// RMStore accepted any purchase of the same product (Docs/StoreBehaviour.md §2.3). Here a transaction whose id the
    /// receipt does not hold fails, although the receipt holds a purchase of that product.
    @Test func transactionIsMatchedById_notByProduct() async throws {
        let f = try VerifierFixture(automatic: true)
        let store = try f.theStore()
        let verifier = try f.theVerifier()
        _ = try await store.requestProducts([IDs.level])
        let bought = try await store.purchase(IDs.level)

        let other = PaymentTransaction(identifier: "1000000000000001", state: .purchased, payment: Payment(productIdentifier: IDs.level))
        let result = await verifier.verify(other)

        let detail = try #require(failure(of: result))
        #expect(detail.code == .transactionNotInReceipt)
        #expect(try #require(verifier.lastVerifiedReceipt).containsInAppPurchase(ofProduct: IDs.level))
        #expect(f.sim.refreshRequestCount == 1)  // refreshed once, still not there
        #expect(bought.identifier != other.identifier)
    }

    /// A restored transaction is accepted by its original transaction id (the App Store lists the
    /// original purchase); a purchased one only by its own id; and the record must be for the
    /// same product.
    @Test func restoredTransaction_matchesByOriginalId_purchasedOnlyByItsOwn_andTheProductMustAgree() async throws {
        let f = try VerifierFixture(automatic: true)
        let store = try f.theStore()
        let verifier = try f.theVerifier()
        _ = try await store.requestProducts([IDs.level, IDs.monthly])
        let level = try await store.purchase(IDs.level)
        let monthly = try await store.purchase(IDs.monthly)
        let original = OriginalTransaction(identifier: level.identifier, date: level.date)

        let restored = PaymentTransaction(
            identifier: "2999999999999999", state: .restored, payment: Payment(productIdentifier: IDs.level), original: original)
        #expect(isVerified(await verifier.verify(restored)))
        #expect(f.sim.refreshRequestCount == 0)

        let purchasedWithOriginal = PaymentTransaction(
            identifier: "2999999999999998", state: .purchased, payment: Payment(productIdentifier: IDs.level), original: original)
        #expect(failure(of: await verifier.verify(purchasedWithOriginal))?.code == .transactionNotInReceipt)

        let refreshesBefore = f.sim.refreshRequestCount
        let wrongProduct = PaymentTransaction(
            identifier: "2999999999999997", state: .restored, payment: Payment(productIdentifier: IDs.level),
            original: OriginalTransaction(identifier: monthly.identifier, date: monthly.date))
        let mismatch = try #require(failure(of: await verifier.verify(wrongProduct)))
        #expect(mismatch.code == .productMismatch)
        #expect(mismatch.message.contains(IDs.monthly))
        #expect(f.sim.refreshRequestCount == refreshesBefore)  // final at once
    }

    /// A purchase Apple refunded before the app verified it fails at once (no refresh can undo a
    /// refund).
    @Test func refundedTransaction_failsAsCancelled_withoutRefreshing() async throws {
        let f = try VerifierFixture()
        try await f.requestAllProducts()
        let recorder = try f.addPayment(IDs.level)
        // Deliver the purchase, then refund it before the verifier (off the main actor) reads the receipt.
        f.sim.processAllEvents()
        let pending = try #require(f.sim.unfinishedTransactions.first)
        f.sim.refund(transactionIdentifier: pending.identifier)
        try await f.pump("the purchase") { recorder.isDone }

        #expect(recorder.storeCode == .verificationFailed)
        #expect(recorder.verifierError?.code == .transactionCancelled)
        #expect(f.sim.refreshRequestCount == 0)
    }

    /// Receipt bytes that are not for this device, written by an attacker who signs with their
    /// own PKI and claims the purchase: refused by the chain even though the device hash and the
    /// transaction match.
    @Test func receiptSignedByAnotherPKI_forThisDevice_isRefused() async throws {
        let f = try VerifierFixture(refreshes: false)
        let forged = SignedReceiptIssuer(signer: try PKIs.other.get().signer(), deviceIdentifier: testDevice)
        f.sim.receiptIssuer = forged
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.level)

        let detail = try #require(recorder.verifierError)
        #expect(detail.code == .receiptInvalid)
        #expect(detail.failedCheckNames == [.chain])
    }
}

func isVerified(_ result: VerificationResult) -> Bool {
    if case .verified = result { return true }
    return false
}

/// The verifier error of a `.failed` result (nil for other results).
func failure(of result: VerificationResult) -> StoreVerifierError? {
    if case .failed(let error) = result { return StoreVerifierError.from(error) }
    return nil
}
