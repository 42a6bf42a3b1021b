// End to end, no mocks of our own code: the simulated App Store signs a real PKCS#7 receipt, the
// real AppReceiptStoreVerifier checks it with OpenSSL against the test PKI's root, the secure
// persistor writes a real file, and the store reports in Docs/StoreBehaviour.md §4.2 order.

import Foundation
import RMStore
import RMStoreVerifiers
import ReceiptSigning
import ReceiptVerification
import Receipts
import StoreTesting
import TestSupport
import Testing

/// Forwards to the real verifier and notes when verification starts and how it ended, so the
/// pipeline order can be read from one timeline. It decides nothing itself. The log is held
/// weakly: the log keeps the store's notifications, which keep the store, which keeps this.
@MainActor
final class TimelineVerifier: ReceiptVerifier {
    let real: AppReceiptStoreVerifier
    weak var log: NotificationLog?

    init(_ real: AppReceiptStoreVerifier, log: NotificationLog) {
        self.real = real
        self.log = log
    }

    func verify(_ transaction: PaymentTransaction, completion: @escaping @MainActor @Sendable (VerificationResult) -> Void) {
        log?.note("verify:begin")
        real.verify(transaction) { [weak log] result in
            switch result {
            case .verified: log?.note("verify:verified")
            case .failed: log?.note("verify:failed")
            case .unableToComplete: log?.note("verify:unableToComplete")
            }
            completion(result)
        }
    }
}

/// Forwards to the real secure persistor and notes, at the moment the store persists, whether the
/// queue had already finished the transaction.
final class TimelinePersistor: TransactionPersistor {
    let real: SecureTransactionPersistor
    let onPersist: @Sendable (PaymentTransaction) -> Void

    init(_ real: SecureTransactionPersistor, onPersist: @escaping @Sendable (PaymentTransaction) -> Void) {
        self.real = real
        self.onPersist = onPersist
    }

    func persist(_ transaction: PaymentTransaction) throws {
        onPersist(transaction)
        try real.persist(transaction)
    }
}

/// A real self-hosted content downloader: copies the product's file from a local "server"
/// directory into the app's content directory in two chunks, reporting progress.
@MainActor
final class FileContentDownloader: ContentDownloader {
    let serverDirectory: URL
    let contentDirectory: URL
    var onBegin: (PaymentTransaction) -> Void = { _ in }

    init(serverDirectory: URL, contentDirectory: URL) {
        self.serverDirectory = serverDirectory
        self.contentDirectory = contentDirectory
    }

    func downloadContent(
        for transaction: PaymentTransaction,
        progress: @escaping @MainActor @Sendable (Double) -> Void,
        completion: @escaping @MainActor @Sendable (Result<Void, any Error>) -> Void
    ) {
        onBegin(transaction)
        do {
            let source = serverDirectory.appendingPathComponent(transaction.productIdentifier + ".bin")
            let bytes = try Data(contentsOf: source)
            let target = contentDirectory.appendingPathComponent(transaction.identifier)
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            let file = target.appendingPathComponent(transaction.productIdentifier + ".bin")
            let half = bytes.count / 2
            try bytes.prefix(half).write(to: file)
            progress(0.5)
            let handle = try FileHandle(forWritingTo: file)
            try handle.seekToEnd()
            try handle.write(contentsOf: bytes.dropFirst(half))
            try handle.close()
            progress(1)
            completion(.success(()))
        } catch {
            completion(.failure(error))
        }
    }
}

@MainActor
@Suite(.timeLimit(.minutes(5))) struct EndToEndTests {
    /// Must show: simulated purchase → signed receipt → real verifier → persisted (secure
    /// persistor, real file) → success callback and notifications in the documented order:
    /// verify → self-hosted download → hosted downloads → finish → persist → callback →
    /// notification (Docs/StoreBehaviour.md §4.2).
    @Test func purchase_isVerifiedDownloadedFinishedPersistedCalledBackAndNotified_inPipelineOrder() async throws {
        let f = try VerifierFixture()
        let store = try f.theStore()
        let verifier = try f.theVerifier()
        store.receiptVerifier = TimelineVerifier(verifier, log: f.log)
        let sim = f.sim
        let log = f.log
        // Closures the store keeps hold the log weakly (the log keeps notifications that keep the store).
        store.transactionPersistor = TimelinePersistor(f.persistor) { [weak log, weak sim] transaction in
            MainActor.assumeIsolated {
                let finished = sim?.finishedTransactionIdentifiers.contains(transaction.identifier) ?? false
                log?.note("persist(finishedOnQueue: \(finished))")
            }
        }
        let server = f.directory.appendingPathComponent("server")
        try FileManager.default.createDirectory(at: server, withIntermediateDirectories: true)
        let content = Data((0..<1000).map { UInt8($0 % 251) })
        try content.write(to: server.appendingPathComponent(IDs.pack + ".bin"))
        let downloader = FileContentDownloader(serverDirectory: server, contentDirectory: f.directory.appendingPathComponent("Content"))
        downloader.onBegin = { [weak verifier, weak log] transaction in
            let verified = verifier?.lastVerifiedReceipt?.inAppPurchase(transactionIdentifier: transaction.identifier) != nil
            log?.note("selfHosted:begin(receiptVerified: \(verified))")
        }
        store.contentDownloader = downloader
        try await f.requestAllProducts()

        let recorder = try await f.buy(IDs.pack)

        let transaction = try #require(recorder.successes.first)
        #expect(recorder.failures.isEmpty)
        #expect(
            f.log.timeline == [
                "verify:begin", "verify:verified",
                "selfHosted:begin(receiptVerified: true)", "DownloadUpdated(self-hosted)", "DownloadUpdated(self-hosted)",
                "DownloadFinished(self-hosted)",
                "DownloadUpdated(hosted)", "DownloadFinished(hosted)",
                "persist(finishedOnQueue: true)",
                "callback:success",
                "PaymentTransactionFinished",
            ])
        #expect(f.log.all(.rmPaymentTransactionFinished).first?.rm.transaction?.identifier == transaction.identifier)
        #expect(f.sim.finishedTransactionIdentifiers == [transaction.identifier])
        #expect(f.sim.refreshRequestCount == 0)

        // The receipt on disk is a real signed receipt holding the transaction: an independent
        // verifier (no cache) agrees.
        let bytes = try [UInt8](Data(contentsOf: f.receiptURL))
        let verdict = AppReceiptVerifier(anchors: TrustAnchors([f.pki.root]), policy: .appStore, cache: nil)
            .verify(bytes, expecting: ReceiptExpectations(bundleIdentifier: IDs.bundle, deviceIdentifier: testDevice))
        #expect(verdict.isValid, "\(verdict)")
        #expect(verdict.receipt?.inAppPurchase(transactionIdentifier: transaction.identifier)?.productIdentifier == IDs.pack)

        // Persisted in the secure file: read back by a fresh persistor with the same key.
        let reread = try SecureTransactionPersistor(fileURL: f.persistor.fileURL, key: Array("integrity key of the test app".utf8))
        #expect(try reread.transactions(forProduct: IDs.pack).map(\.transactionIdentifier) == [transaction.identifier])
        let mode = try FileManager.default.attributesOfItem(atPath: f.persistor.fileURL.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)

        // Both contents arrived.
        let selfHosted = f.directory.appendingPathComponent("Content/\(transaction.identifier)/\(IDs.pack).bin")
        #expect(try Data(contentsOf: selfHosted) == content)
        let hostedURLs = f.log.all(.rmDownloadFinished).compactMap { $0.rm.download?.contentURL }
        let hosted = try #require(hostedURLs.first)
        #expect(FileManager.default.fileExists(atPath: hosted.appendingPathComponent("Contents/content.bin").path))
    }

    /// A consumable, a non-consumable, a subscription and its renewal (simulated clock), then a
    /// restore, all through the async API with the real verifier: every transaction is found in
    /// the receipt by id (restored ones by their original id), nothing needs a refresh, and the
    /// restore does not count the non-consumable twice.
    @Test func consumable_nonConsumable_subscriptionRenewal_andRestore_allVerify() async throws {
        let f = try VerifierFixture(automatic: true)
        let store = try f.theStore()
        let verifier = try f.theVerifier()
        _ = try await store.requestProducts([IDs.coins, IDs.level, IDs.monthly])

        let coins = try await store.purchase(IDs.coins)
        let level = try await store.purchase(IDs.level)
        let monthly = try await store.purchase(IDs.monthly)
        #expect(try f.persistor.count(productIdentifier: IDs.coins) == 1)
        #expect(try f.persistor.consume(productIdentifier: IDs.coins))
        #expect(try f.persistor.count(productIdentifier: IDs.coins) == 0)

        // The month passes: the App Store renews and delivers the renewal (no callbacks, only the
        // notification); the verifier finds the renewal by its own id.
        f.sim.advanceClock(by: 30 * 86_400 + 60)
        try await f.pump("renewal") { f.log.all(.rmPaymentTransactionFinished).count == 4 }
        let renewal = try #require(f.log.all(.rmPaymentTransactionFinished).last?.rm.transaction)
        #expect(renewal.productIdentifier == IDs.monthly)
        #expect(renewal.original?.identifier == monthly.identifier)
        #expect(verifier.lastVerifiedReceipt?.inAppPurchase(transactionIdentifier: renewal.identifier) != nil)

        let restore = try await store.restoreTransactions()
        #expect(restore.failedTransactions.isEmpty)
        let restoredOriginals = Set(restore.restoredTransactions.compactMap(\.original?.identifier))
        #expect(restoredOriginals == [level.identifier, monthly.identifier, renewal.identifier])
        #expect(restore.restoredTransactions.allSatisfy { $0.state == .restored })
        // The restore transactions' own ids are not in the receipt: they matched by original id.
        let receipt = try #require(verifier.lastVerifiedReceipt)
        #expect(restore.restoredTransactions.allSatisfy { receipt.inAppPurchase(transactionIdentifier: $0.identifier) == nil })
        #expect(f.sim.refreshRequestCount == 0)
        #expect(verifier.refreshRequestCount == 0)
        #expect(try f.persistor.count(productIdentifier: IDs.level) == 1)
        #expect(try f.persistor.transactions(forProduct: IDs.level).map(\.transactionIdentifier) == [level.identifier])
        #expect(coins.identifier != level.identifier)
    }

    /// Must show (Docs/StoreBehaviour.md §8.9): the 64-bit web order line item id survives purchase → signed receipt →
    /// verifier → persistor. RMStore read it through a 32-bit int.
    @Test func webOrderLineItemID_is64Bit_fromPurchaseThroughReceiptVerifierAndPersistor() async throws {
        let f = try VerifierFixture(automatic: true)
        let store = try f.theStore()
        _ = try await store.requestProducts([IDs.monthly])

        let transaction = try await store.purchase(IDs.monthly)

        let id = try #require(transaction.webOrderLineItemID)
        #expect(id > Int64(Int32.max))
        #expect(id > Int64(UInt32.max))
        let verifier = try f.theVerifier()
        let receipt = try #require(verifier.lastVerifiedReceipt)
        #expect(receipt.inAppPurchase(transactionIdentifier: transaction.identifier)?.webOrderLineItemID == id)
        // The receipt bytes themselves, parsed independently, carry the full value.
        let parsed = try AppReceipt([UInt8](Data(contentsOf: f.receiptURL)))
        #expect(parsed.inAppPurchase(transactionIdentifier: transaction.identifier)?.webOrderLineItemID == id)
        let reread = try SecureTransactionPersistor(fileURL: f.persistor.fileURL, key: Array("integrity key of the test app".utf8))
        #expect(try reread.transactions(forProduct: IDs.monthly).first?.webOrderLineItemID == id)
        let fileText = String(decoding: try Data(contentsOf: f.persistor.fileURL), as: UTF8.self)
        #expect(fileText.contains(String(id)))
    }

    /// Must show (Docs/StoreBehaviour.md §8.4, #230): with a future-dated renewal in the verified receipt, the app-level
    /// query `containsActiveAutoRenewableSubscription` answers true for the current period.
    /// RMStore tested only the record with the latest expiry, which has not started yet.
    @Test func subscription_withFutureDatedRenewal_isActiveForTheCurrentPeriod() async throws {
        let f = try VerifierFixture(automatic: true)
        let store = try f.theStore()
        let verifier = try f.theVerifier()
        _ = try await store.requestProducts([IDs.monthly])
        let first = try await store.purchase(IDs.monthly)
        let firstExpiry = try #require(first.expirationDate)

        // The renewal is charged at the end of the first period...
        f.sim.advanceClock(by: firstExpiry.timeIntervalSince(f.sim.clock.now))
        try await f.pump("renewal") { f.log.all(.rmPaymentTransactionFinished).count == 2 }
        // ...and, as the App Store does a day ahead, the receipt the app holds a day before the
        // renewal starts already lists it: set the clock back a day and refresh.
        let now = firstExpiry.addingTimeInterval(-86_400)
        f.sim.clock.set(now)
        try await store.refreshReceipt()

        let receipt = try await verifier.verifiedReceipt()
        #expect(receipt.creationDate == now)
        let records = receipt.inAppPurchases(ofProduct: IDs.monthly)
        #expect(records.count == 2)
        let latest = try #require(
            records.max { ($0.subscriptionExpirationDate ?? .distantPast) < ($1.subscriptionExpirationDate ?? .distantPast) })
        #expect(try #require(latest.purchaseDate) > now)  // future-dated

        #expect(receipt.containsActiveAutoRenewableSubscription(ofProduct: IDs.monthly, at: now))
        #expect(!rmStoreSubscriptionRule(receipt, product: IDs.monthly, date: now))  // RMStore's answer
        // After both periods it is not active.
        let later = try #require(latest.subscriptionExpirationDate).addingTimeInterval(1)
        #expect(!receipt.containsActiveAutoRenewableSubscription(ofProduct: IDs.monthly, at: later))
    }
}

/// RMStore's `containsActiveAutoRenewableSubscriptionOfProductIdentifier:forDate:` (Docs/StoreBehaviour.md
/// §4.7): only the record with the latest expiration date, active iff purchase ≤ date ≤ expiry.
func rmStoreSubscriptionRule(_ receipt: AppReceipt, product: String, date: Date) -> Bool {
    var latest: InAppPurchase?
    for record in receipt.inAppPurchases(ofProduct: product) {
        guard let expires = record.subscriptionExpirationDate else { continue }
        if let current = latest?.subscriptionExpirationDate, current >= expires { continue }
        latest = record
    }
    guard let record = latest, record.cancellationDate == nil, let start = record.purchaseDate,
        let end = record.subscriptionExpirationDate
    else { return false }
    return start <= date && date <= end
}
