// StoreKit 2 signed transactions end to end, no mocks of our own code: the simulated App Store
// signs a real JWS (ES256, Apple-shaped test PKI) for every purchase, renewal and restore, the real
// JWSTransactionStoreVerifier checks it with OpenSSL against the test PKI's root, and the store
// finishes, persists and reports. Forgeries are real tokens signed with other keys or for other
// purchases.

import Foundation
import JWS
import RMStore
import RMStoreVerifiers
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import StoreTesting
import TestSupport
import Testing

/// The real issuer, with the transaction contents changed before signing: a genuine signature
/// over what the App Store would not have said.
struct TamperingIssuer: JWSIssuing {
    let base: JWSIssuer
    let tamper: @Sendable (inout TransactionContents) -> Void

    func issueTransaction(_ contents: TransactionContents) throws -> String {
        var contents = contents
        tamper(&contents)
        return try base.issueTransaction(contents)
    }

    func issueRenewalInfo(_ contents: RenewalInfoContents) throws -> String { try base.issueRenewalInfo(contents) }
}

/// A simulated App Store signing receipts (`PKIs.apple`) and JWS (`PKIs.jws`, or what `issuer`
/// returns), and a store whose verifier is the real `JWSTransactionStoreVerifier` (the JWS PKI's
/// root as the only anchor, sandbox allowed), alone or combined with the real app-receipt
/// verifier. Automatic delivery: the async API drives it.
@MainActor
final class JWSFixture {
    let directory: URL
    let sim: SimulatedAppStore
    let store: Store
    let verifier: JWSTransactionStoreVerifier
    let receiptVerifier: AppReceiptStoreVerifier
    let persistor: SecureTransactionPersistor
    let log = NotificationLog()
    let jwsPKI: TestPKI

    var receiptURL: URL { directory.appendingPathComponent("StoreKit/receipt") }

    init(
        label: String = #function,
        issuesReceipts: Bool = true,
        combined: Bool = false,
        issuer: (TestPKI) throws -> (any JWSIssuing)? = { JWSIssuer(pki: $0) },
        configure: (inout JWSTransactionStoreVerifier.Configuration) -> Void = { _ in }
    ) throws {
        jwsPKI = try PKIs.jws.get()
        directory = temporaryDirectory(label)
        let receiptURL = directory.appendingPathComponent("StoreKit/receipt")
        sim = SimulatedAppStore(
            catalog: testCatalog(), bundleIdentifier: IDs.bundle, appVersion: IDs.version, receiptURL: receiptURL,
            receiptIssuer: issuesReceipts ? SignedReceiptIssuer(signer: try PKIs.apple.get().signer(), deviceIdentifier: testDevice) : nil,
            jwsIssuer: try issuer(jwsPKI), downloadsDirectory: directory.appendingPathComponent("Downloads"))
        persistor = try SecureTransactionPersistor(
            fileURL: directory.appendingPathComponent("ledger.secure"), key: Array("integrity key of the test app".utf8))
        store = Store(
            appStore: sim, transactionPersistor: persistor, configuration: Store.Configuration(receiptURL: receiptURL),
            notificationCenter: NotificationCenter())
        var configuration = JWSTransactionStoreVerifier.Configuration(
            bundleIdentifier: IDs.bundle, allowedEnvironments: [.sandbox],
            trust: StoreVerifierTrust(anchors: .anchors(TrustAnchors([jwsPKI.root]))))
        configure(&configuration)
        verifier = JWSTransactionStoreVerifier(configuration: configuration)
        receiptVerifier = AppReceiptStoreVerifier(
            configuration: AppReceiptStoreVerifier.Configuration(
                receiptURL: receiptURL, bundleIdentifier: IDs.bundle, appVersion: IDs.version, deviceIdentifier: testDevice,
                trust: StoreVerifierTrust(anchors: .anchors(TrustAnchors([try PKIs.apple.get().root])))),
            store: store)
        store.receiptVerifier = combined ? CombinedStoreVerifier([receiptVerifier, verifier]) : verifier
        store.addObserver(log)
        // Payments for products no request returned are refused: request them all (`buy` waits).
        store.requestProducts(Set(sim.catalog.products.map(\.product.identifier)))
    }

    /// Waits until `condition` holds (the store and the verifier work on their own).
    func pump(
        _ what: String = "condition", timeout: Duration = .seconds(180), sourceLocation: SourceLocation = #_sourceLocation,
        until condition: () -> Bool
    ) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !condition() {
            guard clock.now < deadline else {
                Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
                throw TestError("timeout")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Buys and returns the transaction; the purchase must succeed.
    func buy(_ product: String, applicationUsername: String? = nil) async throws -> PaymentTransaction {
        try await pump("products") { store.product(forIdentifier: product) != nil }
        return try await store.purchase(product, applicationUsername: applicationUsername)
    }

    /// Buys; the purchase must fail. Returns the failure.
    func buyFailing(
        _ product: String, applicationUsername: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> PurchaseError {
        try await pump("products") { store.product(forIdentifier: product) != nil }
        do {
            let transaction = try await store.purchase(product, applicationUsername: applicationUsername)
            Issue.record("the purchase of \(transaction.productIdentifier) succeeded", sourceLocation: sourceLocation)
            throw TestError("succeeded")
        } catch let error as PurchaseError {
            return error
        }
    }
}

/// The verifier error of a verification result, when it failed.
func rejection(_ result: VerificationResult) -> StoreVerifierError? {
    if case .failed(let error) = result { return StoreVerifierError.from(error) }
    return nil
}

/// The verifier error of a verification result, when it could not complete.
func noVerdict(_ result: VerificationResult) -> StoreVerifierError? {
    if case .unableToComplete(let error) = result { return StoreVerifierError.from(error) }
    return nil
}

/// The milliseconds of a date, as the JWS writes them.
func milliseconds(_ date: Date?) -> Int64? { date.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } }

@MainActor
@Suite(.timeLimit(.minutes(5))) struct JWSTransactionStoreVerifierTests {
    // MARK: - Genuine transactions verify

    @Test(arguments: [IDs.coins, IDs.level, IDs.pack, IDs.monthly])
    func purchase_isVerifiedByItsSignedTransaction_finishedAndPersisted(_ product: String) async throws {
        let f = try JWSFixture()
        let transaction = try await f.buy(product)

        let verified = try #require(f.verifier.lastVerifiedTransaction)
        #expect(verified.transactionId == transaction.identifier)
        #expect(verified.productId == product)
        #expect(verified.bundleId == IDs.bundle)
        #expect(verified.environment == .sandbox)
        let verdict = try #require(f.verifier.lastVerdict)
        #expect(verdict.isValid)
        #expect(verdict.assurance == .configuredAnchor)
        #expect(verdict.chain?.last?.derEncoded == f.jwsPKI.root.derEncoded)
        #expect(verdict.chain?.first?.derEncoded == f.jwsPKI.leaf.derEncoded)
        // Checked at the JWS's own signedDate, by default.
        #expect(milliseconds(verdict.validationTime) == verified.signedDate?.milliseconds)
        #expect(verdict.check(.signature)?.passed == true)
        #expect(verdict.check(.bundleIdentifier)?.passed == true)
        #expect(verdict.check(.environment)?.passed == true)
        #expect(verdict.unchecked.contains(.appAccountToken))  // the payment carried none
        #expect(f.sim.finishedTransactionIdentifiers.contains(transaction.identifier))
        #expect(try f.persistor.transactions(forProduct: product).map(\.transactionIdentifier) == [transaction.identifier])
        #expect(f.verifier.configurationError == nil)
    }

    /// A renewal on the simulated clock carries its own JWS, verified by its own id and its
    /// original's.
    @Test func subscriptionRenewal_onTheSimulatedClock_isVerifiedByItsOwnJWS() async throws {
        let f = try JWSFixture()
        let first = try await f.buy(IDs.monthly)
        f.sim.advanceClock(by: 31 * 86_400)
        try await f.pump("renewal") { f.log.all(.rmPaymentTransactionFinished).count == 2 }
        let renewal = try #require(f.log.all(.rmPaymentTransactionFinished).last?.rm.transaction)
        #expect(renewal.original?.identifier == first.identifier)
        #expect(f.log.all(.rmPaymentTransactionFailed).isEmpty)
        let verified = try #require(f.verifier.lastVerifiedTransaction)
        #expect(verified.transactionId == renewal.identifier)
        #expect(verified.originalTransactionId == first.identifier)
        #expect(verified.transactionReason == .renewal)
        #expect(verified.purchaseDate?.milliseconds == milliseconds(first.expirationDate))
        #expect(verified.signedDate?.milliseconds == milliseconds(f.sim.clock.now))
        #expect(try f.persistor.count(productIdentifier: IDs.monthly) == 2)
    }

    /// A restored transaction's JWS is the purchase it restores: matched by the restored
    /// transaction's original id.
    @Test func restore_isVerifiedByThePurchasesItRestores() async throws {
        let f = try JWSFixture()
        var seen: [(String, String?)] = []
        f.verifier.onVerified = { transaction, payload in seen.append((transaction.identifier, payload.transactionId)) }
        let level = try await f.buy(IDs.level)
        let monthly = try await f.buy(IDs.monthly)
        _ = try await f.buy(IDs.coins)  // consumables are not restored
        let result = try await f.store.restoreTransactions()
        #expect(result.failedTransactions.isEmpty)
        #expect(result.restoredTransactions.count == 2)
        // The hook saw every verification, the restored ones with the purchase they carry.
        #expect(seen.count == 5)
        #expect(Set(seen.suffix(2).map(\.1)) == [level.identifier, monthly.identifier])
        #expect(Set(seen.suffix(2).map(\.0)) == Set(result.restoredTransactions.map(\.identifier)))
        for restored in result.restoredTransactions {
            let original = try #require(restored.original?.identifier)
            #expect([level.identifier, monthly.identifier].contains(original))
            #expect(restored.identifier != original)
            let payload = try await f.verifier.verifiedTransaction(for: restored)
            #expect(payload.transactionId == original)
            #expect(payload.productId == restored.productIdentifier)
        }
        #expect(try f.persistor.count(productIdentifier: IDs.level) == 1)  // not counted twice
    }

    /// Alongside the receipt verifier: every transaction verified by both, and the verified
    /// JWS's ids and dates equal the verified receipt's.
    @Test func combinedWithTheReceiptVerifier_theJWSAndTheReceiptAgree() async throws {
        let f = try JWSFixture(combined: true)
        let level = try await f.buy(IDs.level)
        let monthly = try await f.buy(IDs.monthly)
        f.sim.advanceClock(by: 31 * 86_400)
        try await f.pump("renewal") { f.log.all(.rmPaymentTransactionFinished).count == 3 }
        let renewal = try #require(f.log.all(.rmPaymentTransactionFinished).last?.rm.transaction)
        let coins = try await f.store.purchase(IDs.coins, quantity: 2)  // last: the receipt still lists it
        let restore = try await f.store.restoreTransactions()
        #expect(restore.failedTransactions.isEmpty)
        #expect(restore.restoredTransactions.count == 3)
        #expect(f.log.all(.rmPaymentTransactionFailed).isEmpty)

        let receipt = try await f.receiptVerifier.verifiedReceipt()
        for transaction in [level, monthly, renewal, coins] {
            let jws = try await f.verifier.verifiedTransaction(for: transaction)
            let record = try #require(receipt.inAppPurchase(transactionIdentifier: transaction.identifier))
            #expect(jws.transactionId == record.transactionIdentifier)
            #expect(jws.originalTransactionId == record.originalTransactionIdentifier)
            #expect(jws.productId == record.productIdentifier)
            #expect(jws.purchaseDate?.milliseconds == milliseconds(record.purchaseDate))
            #expect(jws.originalPurchaseDate?.milliseconds == milliseconds(record.originalPurchaseDate))
            #expect(jws.expiresDate?.milliseconds == milliseconds(record.subscriptionExpirationDate))
            #expect(jws.webOrderLineItemId == record.webOrderLineItemID.flatMap { $0 == 0 ? nil : String($0) })
            #expect(jws.quantity.map(Int64.init) == record.quantity)
        }
        #expect(try await f.verifier.verifiedTransaction(for: coins).quantity == 2)
        #expect(try await f.verifier.verifiedTransaction(for: renewal).originalTransactionId == monthly.identifier)
    }

    // MARK: - Forgeries fail, the check named

    /// A whole chain of the forger's own: the signature is good, the chain ends elsewhere.
    @Test func forgedJWS_signedUnderAnotherPKI_failsTheChain() async throws {
        let f = try JWSFixture(issuer: { _ in JWSIssuer(pki: try PKIs.otherJWS.get()) })
        let failure = try await f.buyFailing(IDs.level)
        #expect(StoreError.code(of: failure.error) == .verificationFailed)
        let error = try #require(StoreVerifierError.from(failure.error))
        #expect(error.code == .signedTransactionInvalid)
        #expect(error.failedCheckNames == [.chain])
        #expect(error.message.contains("chain"))
        let transaction = try #require(failure.transaction)
        #expect(f.sim.finishedTransactionIdentifiers.contains(transaction.identifier))  // a verdict: finished
        #expect(try f.persistor.count(productIdentifier: IDs.level) == 0)
        #expect(f.verifier.lastVerifiedTransaction == nil)
        #expect(f.verifier.lastVerdict?.isValid == false)
    }

    /// The genuine chain in `x5c`, but the signature made with another key.
    @Test func forgedJWS_genuineChainAnotherKey_failsTheSignature() async throws {
        let f = try JWSFixture(issuer: { pki in
            JWSIssuer(signer: JWSSigner(key: try PKIs.otherJWS.get().leafKey, chain: [pki.leaf, pki.intermediate, pki.root]))
        })
        let error = try #require(StoreVerifierError.from(try await f.buyFailing(IDs.coins).error))
        #expect(error.code == .signedTransactionInvalid)
        #expect(error.failedCheckNames.first == .signature)
    }

    /// A forger's root that copies Apple Root CA - G3's name, against the real Apple roots.
    @Test func rogueRootNamedLikeApple_isNotTrusted() async throws {
        let f = try JWSFixture(
            issuer: { _ in JWSIssuer(pki: try PKIs.rogueJWS.get()) }, configure: { $0.trust.anchors = .bundledAppleRoots })
        let error = try #require(StoreVerifierError.from(try await f.buyFailing(IDs.level).error))
        #expect(error.code == .signedTransactionInvalid)
        #expect(error.failedCheckNames == [.chain])
    }

    /// Genuinely signed, but for another transaction id.
    @Test func aJWSForAnotherTransaction_failsTheTransactionIdMatch() async throws {
        let f = try JWSFixture(issuer: { pki in
            TamperingIssuer(base: JWSIssuer(pki: pki)) { $0.purchase.transactionIdentifier = "2000000000000001" }
        })
        let failure = try await f.buyFailing(IDs.level)
        let error = try #require(StoreVerifierError.from(failure.error))
        #expect(StoreError.code(of: failure.error) == .verificationFailed)
        #expect(error.code == .signedTransactionMismatch)
        #expect(error.failedCheckNames == [.transactionId])
        #expect(error.message.contains("2000000000000001"))
    }

    /// A genuine JWS of one purchase replayed with another transaction.
    @Test func aGenuineJWSReplayedWithAnotherTransaction_fails() async throws {
        let f = try JWSFixture()
        let level = try await f.buy(IDs.level)
        let pack = try await f.buy(IDs.pack)
        var replay = pack
        replay.jwsRepresentation = level.jwsRepresentation
        let error = try #require(rejection(await f.verifier.verify(replay)))
        #expect(error.code == .signedTransactionMismatch)
        #expect(error.failedCheckNames == [.transactionId, .productId])
        // The same JWS with its own transaction still verifies.
        #expect(rejection(await f.verifier.verify(level)) == nil)
        // A renewal's JWS must name the renewal's original transaction.
        let monthly = try await f.buy(IDs.monthly)
        var renewal = monthly
        renewal.original = OriginalTransaction(identifier: "2000000000000002", date: nil)
        #expect(rejection(await f.verifier.verify(renewal))?.failedCheckNames == [.originalTransactionId])
        var more = level
        more.payment.quantity = 2
        #expect(rejection(await f.verifier.verify(more))?.failedCheckNames == [.quantity])
    }

    @Test func anotherProduct_failsTheProductMatch() async throws {
        let f = try JWSFixture(issuer: { pki in TamperingIssuer(base: JWSIssuer(pki: pki)) { $0.purchase.productIdentifier = IDs.pack } })
        let error = try #require(StoreVerifierError.from(try await f.buyFailing(IDs.level).error))
        #expect(error.code == .signedTransactionMismatch)
        #expect(error.failedCheckNames == [.productId])
    }

    @Test func anotherBundleId_failsTheBundleIdentifierCheck() async throws {
        let f = try JWSFixture(issuer: { pki in TamperingIssuer(base: JWSIssuer(pki: pki)) { $0.bundleIdentifier = "com.example.other" } })
        let error = try #require(StoreVerifierError.from(try await f.buyFailing(IDs.level).error))
        #expect(error.code == .signedTransactionInvalid)
        #expect(error.failedCheckNames == [.bundleIdentifier])
        #expect(error.message.contains("com.example.other"))
    }

    @Test func anotherEnvironment_failsTheEnvironmentCheck() async throws {
        let f = try JWSFixture(issuer: { JWSIssuer(pki: $0, environment: .production) })
        let error = try #require(StoreVerifierError.from(try await f.buyFailing(IDs.level).error))
        #expect(error.code == .signedTransactionInvalid)
        #expect(error.failedCheckNames == [.environment])
        // Xcode is not allowed by the default configuration.
        let xcode = try JWSFixture(
            issuer: { JWSIssuer(pki: $0, environment: .xcode) },
            configure: {
                $0.allowedEnvironments = JWSTransactionStoreVerifier.Configuration(bundleIdentifier: IDs.bundle).allowedEnvironments
            })
        #expect(xcode.verifier.configuration.allowedEnvironments == [.production, .sandbox])
        let refused = try #require(StoreVerifierError.from(try await xcode.buyFailing(IDs.level).error))
        #expect(refused.failedCheckNames == [.environment])
    }

    /// The payment's app account token must be in the signed transaction.
    @Test func appAccountToken_isMatchedWhenThePaymentCarriesOne() async throws {
        let token = UUID()
        let f = try JWSFixture()
        _ = try await f.buy(IDs.level, applicationUsername: token.uuidString)
        #expect(f.verifier.lastVerdict?.check(.appAccountToken)?.passed == true)
        #expect(f.verifier.lastVerifiedTransaction?.appAccountToken == token.uuidString.lowercased())

        let other = try JWSFixture(issuer: { pki in TamperingIssuer(base: JWSIssuer(pki: pki)) { $0.appAccountToken = UUID() } })
        let error = try #require(
            StoreVerifierError.from(try await other.buyFailing(IDs.level, applicationUsername: token.uuidString).error))
        #expect(error.code == .signedTransactionInvalid)
        #expect(error.failedCheckNames == [.appAccountToken])

        let none = try JWSFixture(issuer: { pki in TamperingIssuer(base: JWSIssuer(pki: pki)) { $0.appAccountToken = nil } })
        let missing = try #require(
            StoreVerifierError.from(try await none.buyFailing(IDs.level, applicationUsername: token.uuidString).error))
        #expect(missing.failedCheckNames == [.appAccountToken])
        // A payment without a token does not check the JWS's.
        _ = try await other.buy(IDs.pack)
        #expect(other.verifier.lastVerdict?.unchecked.contains(.appAccountToken) == true)
    }

    /// No JWS is a failure with its own code, never a pass; garbage fails parsing.
    @Test func transactionWithoutJWS_failsWithItsOwnCode_neverPasses() async throws {
        let f = try JWSFixture(issuer: { _ in nil })
        let failure = try await f.buyFailing(IDs.level)
        #expect(StoreError.code(of: failure.error) == .verificationFailed)
        let error = try #require(StoreVerifierError.from(failure.error))
        #expect(error.code == .signedTransactionMissing)
        #expect(error.failedChecks.isEmpty)
        let transaction = try #require(failure.transaction)
        #expect(f.sim.finishedTransactionIdentifiers.contains(transaction.identifier))

        var empty = transaction
        empty.state = .purchased
        empty.jwsRepresentation = ""
        #expect(rejection(await f.verifier.verify(empty))?.code == .signedTransactionMissing)
        var garbage = empty
        garbage.jwsRepresentation = "not.a.token"
        let parse = try #require(rejection(await f.verifier.verify(garbage)))
        #expect(parse.code == .signedTransactionInvalid)
        #expect(parse.failedCheckNames == [.parse])
    }

    /// A refunded purchase's signed transaction carries its revocation: restoring it fails.
    @Test func refundedPurchase_failsAsCancelled() async throws {
        let f = try JWSFixture()
        let level = try await f.buy(IDs.level)
        f.sim.advanceClock(by: 86_400)
        f.sim.refund(transactionIdentifier: level.identifier, reason: .appIssue)
        let result = try await f.store.restoreTransactions()
        #expect(result.restoredTransactions.isEmpty)
        let failed = try #require(result.failedTransactions.first)
        let error = try #require(StoreVerifierError.from(failed.error))
        #expect(error.code == .transactionCancelled)
        #expect(error.failedCheckNames == [.revocation])
        #expect(error.message.contains("reason 1"))
    }

    // MARK: - Configuration

    /// Anchors that cannot be loaded: every transaction fails at once with `anchorsUnavailable`,
    /// as the app-receipt verifier does (a configuration error, not a redelivery loop).
    @Test(arguments: [
        TrustAnchorSource.file(URL(fileURLWithPath: "/nonexistent/anchor.der")), .bytes([0x30, 0x03, 0x02, 0x01]),
        .anchors(TrustAnchors([])),
    ])
    func anchorsUnreadable_failEveryTransactionAtOnce_likeTheReceiptVerifier(_ anchors: TrustAnchorSource) async throws {
        let f = try JWSFixture(configure: { $0.trust.anchors = anchors })
        let trust = f.verifier.configuration.trust
        #expect(f.verifier.configurationError?.code == .anchorsUnavailable)
        let failure = try await f.buyFailing(IDs.level)
        #expect(StoreError.code(of: failure.error) == .verificationFailed)
        let error = try #require(StoreVerifierError.from(failure.error))
        #expect(error.code == .anchorsUnavailable)
        #expect(f.verifier.lastVerdict == nil)  // nothing was verified
        // The app-receipt verifier given the same trust answers the same way.
        let receiptVerifier = AppReceiptStoreVerifier(
            configuration: AppReceiptStoreVerifier.Configuration(
                receiptURL: f.receiptURL, bundleIdentifier: IDs.bundle, appVersion: IDs.version, deviceIdentifier: testDevice,
                trust: trust),
            refresher: nil)
        let transaction = try #require(failure.transaction)
        #expect(rejection(await receiptVerifier.verify(transaction))?.code == .anchorsUnavailable)
    }

    /// The validation time: the signed date by default; a later fixed date or a clock past the
    /// leaf's expiry fails the chain.
    @Test func validationTime_signedDateByDefault_fixedOrClockOnRequest() async throws {
        let expiring = try TestPKI.jws { $0.leafNotAfter = utc(2023, 12, 1) }  // the simulated clock starts 2023-11-14
        let f = try JWSFixture(
            issuer: { _ in JWSIssuer(pki: expiring) }, configure: { $0.trust.anchors = .anchors(TrustAnchors([expiring.root])) })
        let level = try await f.buy(IDs.level)
        #expect(milliseconds(f.verifier.lastVerdict?.validationTime) == milliseconds(level.date))

        let later = JWSTransactionStoreVerifier(
            configuration: .init(
                bundleIdentifier: IDs.bundle, allowedEnvironments: [.sandbox],
                trust: StoreVerifierTrust(anchors: .anchors(TrustAnchors([expiring.root])), validationTime: .fixed(utc(2024, 6, 1)))))
        let error = try #require(rejection(await later.verify(level)))
        #expect(error.failedCheckNames == [.chain])
        #expect(error.message.contains("expired"))

        let clock = f.sim.clock
        let clocked = JWSTransactionStoreVerifier(
            configuration: .init(
                bundleIdentifier: IDs.bundle, allowedEnvironments: [.sandbox],
                trust: StoreVerifierTrust(anchors: .anchors(TrustAnchors([expiring.root])), validationTime: .clock { clock.now })))
        #expect(rejection(await clocked.verify(level)) == nil)
        f.sim.advanceClock(by: 30 * 86_400)
        #expect(rejection(await clocked.verify(level))?.failedCheckNames == [.chain])
    }

    /// Xcode's self-signed StoreKit testing JWS verify under the xcode policy with that
    /// certificate as the anchor, and fail the App Store policy.
    @Test func xcodeSignedJWS_verifiesUnderTheXcodePolicyOnly() async throws {
        let xcode = try TestPKI.xcodeJWS()
        let certificate = try #require(xcode.chain.first)
        let f = try JWSFixture(
            issuer: { _ in JWSIssuer(signer: xcode, environment: .xcode) },
            configure: {
                $0.trust.anchors = .anchors(TrustAnchors([certificate]))
                $0.trust.policy = .xcode
                $0.allowedEnvironments = [.xcode]
            })
        let level = try await f.buy(IDs.level)
        #expect(f.verifier.lastVerdict?.assurance == .storeKitTesting)
        let appStore = JWSTransactionStoreVerifier(
            configuration: .init(
                bundleIdentifier: IDs.bundle, allowedEnvironments: [.xcode],
                trust: StoreVerifierTrust(anchors: .anchors(TrustAnchors([certificate])))))
        #expect(rejection(await appStore.verify(level))?.failedCheckNames == [.certificateCount])
    }

    // MARK: - Combined

    @Test func combinedVerifier_aRejectionIsFinal_noVerdictOnlyWhenNoneRejects() async throws {
        // No receipt is ever written and the refresh fails: the receipt verifier cannot decide.
        let f = try JWSFixture(issuesReceipts: false)
        f.sim.refreshError = TestError("offline")
        f.store.receiptVerifier = nil
        let level = try await f.buy(IDs.level)  // no verifier: delivered as is, with its JWS
        #expect(noVerdict(await f.receiptVerifier.verify(level))?.code == .refreshFailed)

        // Receipt undecided, JWS verified: undecided (the transaction stays unfinished).
        let both = CombinedStoreVerifier([f.receiptVerifier, f.verifier])
        #expect(noVerdict(await both.verify(level))?.code == .refreshFailed)
        // Receipt undecided, JWS missing: rejected.
        var stripped = level
        stripped.jwsRepresentation = nil
        #expect(rejection(await both.verify(stripped))?.code == .signedTransactionMissing)
        // A rejection first: the later verifiers do not run (no refresh is asked for).
        let refreshes = f.receiptVerifier.refreshRequestCount
        #expect(
            rejection(await CombinedStoreVerifier([f.verifier, f.receiptVerifier]).verify(stripped))?.code == .signedTransactionMissing)
        #expect(f.receiptVerifier.refreshRequestCount == refreshes)
        // Only the JWS: verified.
        if case .verified = await CombinedStoreVerifier([f.verifier]).verify(level) {} else { Issue.record("not verified") }
        // Nothing combined vouches for nothing.
        #expect(rejection(await CombinedStoreVerifier([]).verify(level))?.code == .noVerifier)
        // A verifier that answers twice is heard once.
        #expect(rejection(await CombinedStoreVerifier([TwiceAnsweringVerifier(), f.verifier]).verify(level)) == nil)
    }

    /// The completion form every verifier here has from `AsyncReceiptVerifier`: the async form's
    /// verdict, handed over once, on the main actor, never before `verify(_:completion:)` returns.
    @Test func completionForm_handsOverTheAsyncVerdict_onceAndNeverSynchronously() async throws {
        let f = try JWSFixture()
        let level = try await f.buy(IDs.level)
        var stripped = level
        stripped.jwsRepresentation = nil
        func outcome(_ result: VerificationResult) -> String {
            switch result {
            case .verified: "verified"
            case .failed(let error): "failed \(StoreVerifierError.from(error)?.code.rawValue ?? "?")"
            case .unableToComplete(let error): "no verdict \(StoreVerifierError.from(error)?.code.rawValue ?? "?")"
            }
        }
        let verifiers: [any AsyncReceiptVerifier] = [f.verifier, CombinedStoreVerifier([f.verifier])]
        for verifier in verifiers {
            for (transaction, expected) in [(level, "verified"), (stripped, "failed signedTransactionMissing")] {
                #expect(outcome(await verifier.verify(transaction)) == expected)
                let heard = CompletionCalls()
                let answer: VerificationResult = await withCheckedContinuation { continuation in
                    verifier.verify(transaction) { result in
                        heard.count += 1
                        if heard.count == 1 { continuation.resume(returning: result) }
                    }
                    heard.returnedFirst = heard.count == 0
                }
                #expect(heard.returnedFirst)
                #expect(outcome(answer) == expected)
                await Task.yield()
                #expect(heard.count == 1)
            }
        }
    }
}

/// A verifier that breaks the protocol's contract: it answers `.verified` twice.
@MainActor
final class TwiceAnsweringVerifier: ReceiptVerifier {
    func verify(_ transaction: PaymentTransaction, completion: @escaping @MainActor @Sendable (VerificationResult) -> Void) {
        completion(.verified)
        completion(.verified)
    }
}

/// How often a completion was called, and whether `verify(_:completion:)` returned before the first call.
@MainActor
final class CompletionCalls {
    var count = 0
    var returnedFirst = false
}
