// Shared fixtures: a simulated App Store that signs real receipts with a test PKI, a store with
// the real app-receipt verifier and the secure persistor on real files, and helpers to drive the
// simulated store's events while the verifier works off the main actor. The PKIs, the
// notification log and the other helpers shared with other test targets are in TestSupport.

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

enum IDs {
    static let bundle = "com.example.app"
    static let version = "1.0"
    static let coins = "com.example.coins"
    static let level = "com.example.level"
    static let pack = "com.example.pack"
    static let monthly = "com.example.monthly"
}

/// The device the receipts are bound to.
let testDevice = DeviceIdentifier(bytes: [0x3B, 0x76, 0xA7, 0xBD, 0x8F, 0x5B, 0x46, 0xA4, 0xBC, 0xB1, 0xCC, 0xE8, 0xDB, 0xD1, 0xB3, 0xCD])

func testCatalog() -> StoreCatalog {
    StoreCatalog(products: [
        SimulatedProduct(Product(identifier: IDs.coins, localizedTitle: "Coins", price: 1, kind: .consumable)),
        SimulatedProduct(Product(identifier: IDs.level, localizedTitle: "Level", price: 2, kind: .nonConsumable)),
        SimulatedProduct(
            Product(identifier: IDs.pack, localizedTitle: "Pack", price: 3, kind: .nonConsumable),
            hostedContents: [SimulatedDownloadContent(contentIdentifier: "pack", progressSteps: [0.5])]
        ),
        SimulatedProduct(
            Product(
                identifier: IDs.monthly, localizedTitle: "Monthly", price: 5, kind: .autoRenewableSubscription,
                subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .month)
            )),
    ])
}

/// A receipt issuer that leaves some products out of every receipt it signs: the App Store's
/// receipt lagging behind a purchase. Everything else is the real signed receipt.
struct OmittingIssuer: ReceiptIssuing {
    let base: SignedReceiptIssuer
    let omittedProducts: Set<String>

    func issueReceipt(for contents: ReceiptContents) throws -> Data {
        var contents = contents
        contents.inAppPurchases.removeAll { omittedProducts.contains($0.productIdentifier) }
        return try base.issueReceipt(for: contents)
    }
}

/// What the callbacks of one payment received.
@MainActor
final class PurchaseRecorder {
    var successes: [PaymentTransaction] = []
    var failures: [(PaymentTransaction?, any Error)] = []
    var isDone: Bool { !successes.isEmpty || !failures.isEmpty }

    /// The failure's error, as the verifier described it.
    var verifierError: StoreVerifierError? { failures.first.flatMap { StoreVerifierError.from($0.1) } }
    /// The store code of the failure.
    var storeCode: StoreError.Code? { failures.first.flatMap { StoreError.code(of: $0.1) } }
}

/// A simulated App Store signing real receipts with `PKIs.apple`, a store over it with the real
/// `AppReceiptStoreVerifier` (the test PKI's root as the only anchor, the App Store policy), the
/// secure persistor on a real file, and a notification log. Manual delivery: tests drive the
/// events with `pump(until:)`, so they decide exactly when the App Store answers.
@MainActor
final class VerifierFixture {
    let directory: URL
    let sim: SimulatedAppStore
    let issuer: SignedReceiptIssuer
    private(set) var store: Store?
    private(set) var verifier: AppReceiptStoreVerifier?
    let persistor: SecureTransactionPersistor
    let log = NotificationLog()
    let pki: TestPKI

    /// - Parameters:
    ///   - configure: changes to the verifier's configuration (defaults: the fixture's receipt
    ///     URL, bundle id, version, device, sandbox allowed, the store PKI's root as the anchor).
    ///   - issuesReceipts: whether the simulated store signs receipts from the start.
    ///   - refreshes: whether the verifier refreshes through the store (else no refresher).
    init(
        label: String = #function,
        pki: Result<TestPKI, CryptoError> = PKIs.apple,
        issuesReceipts: Bool = true,
        refreshes: Bool = true,
        automatic: Bool = false,
        configure: (inout AppReceiptStoreVerifier.Configuration) -> Void = { _ in }
    ) throws {
        self.pki = try pki.get()
        directory = temporaryDirectory(label)
        issuer = SignedReceiptIssuer(signer: self.pki.signer(), deviceIdentifier: testDevice)
        sim = SimulatedAppStore(
            catalog: testCatalog(),
            bundleIdentifier: IDs.bundle,
            appVersion: IDs.version,
            receiptURL: directory.appendingPathComponent("StoreKit/receipt"),
            receiptIssuer: issuesReceipts ? issuer : nil,
            downloadsDirectory: directory.appendingPathComponent("Downloads"),
            deliversAutomatically: automatic
        )
        persistor = try SecureTransactionPersistor(
            fileURL: directory.appendingPathComponent("ledger.secure"), key: Array("integrity key of the test app".utf8))
        try launch(refreshes: refreshes, configure: configure)
    }

    var receiptURL: URL { directory.appendingPathComponent("StoreKit/receipt") }

    func configuration(_ configure: (inout AppReceiptStoreVerifier.Configuration) -> Void = { _ in })
        -> AppReceiptStoreVerifier.Configuration
    {
        var configuration = AppReceiptStoreVerifier.Configuration(
            receiptURL: receiptURL,
            bundleIdentifier: IDs.bundle,
            appVersion: IDs.version,
            deviceIdentifier: testDevice,
            trust: StoreVerifierTrust(anchors: .anchors(TrustAnchors([pki.root])), policy: .appStore)
        )
        configure(&configuration)
        return configuration
    }

    /// A new store and verifier on the same simulated App Store and files (the next launch). The
    /// previous store is released first, so it no longer observes the queue.
    func launch(refreshes: Bool = true, configure: (inout AppReceiptStoreVerifier.Configuration) -> Void = { _ in }) throws {
        store = nil
        verifier = nil
        let store = Store(
            appStore: sim, transactionPersistor: persistor,
            configuration: Store.Configuration(receiptURL: receiptURL), notificationCenter: NotificationCenter())
        let verifier =
            refreshes
            ? AppReceiptStoreVerifier(configuration: configuration(configure), store: store)
            : AppReceiptStoreVerifier(configuration: configuration(configure), refresher: nil)
        store.receiptVerifier = verifier
        store.addObserver(log)
        self.store = store
        self.verifier = verifier
    }

    func theStore() throws -> Store { try #require(store) }
    func theVerifier() throws -> AppReceiptStoreVerifier { try #require(verifier) }

    /// Requests every catalog product so that payments are accepted, and clears the log.
    func requestAllProducts() async throws {
        let store = try theStore()
        var done = false
        store.requestProducts(Set(sim.catalog.products.map(\.product.identifier))) { _, _ in done = true }
        try await pump { done }
        log.clear()
    }

    /// Adds a payment; the recorder fills in when its callbacks run.
    func addPayment(_ productIdentifier: String) throws -> PurchaseRecorder {
        let recorder = PurchaseRecorder()
        let log = self.log
        try theStore().addPayment(productIdentifier) { transaction in
            log.note("callback:success")
            recorder.successes.append(transaction)
        } failure: { transaction, error in
            log.note("callback:failure")
            recorder.failures.append((transaction, error))
        }
        return recorder
    }

    /// Buys and waits for the payment's callback.
    @discardableResult
    func buy(_ productIdentifier: String) async throws -> PurchaseRecorder {
        let recorder = try addPayment(productIdentifier)
        try await pump { recorder.isDone }
        return recorder
    }

    /// Runs the simulated store's events and lets the verifier's off-main work finish, until
    /// `condition` holds. The condition is checked **before** each batch of events, so a test can
    /// act between a request reaching the App Store and the App Store answering it.
    ///
    /// The timeout only catches hangs: alone, every wait here takes milliseconds, but in the full
    /// `swift test` run other suites can keep the cooperative thread pool (two threads on two
    /// cores) busy for a minute, and the verifier's off-main work waits for a thread.
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
            sim.processAllEvents()
            if condition() { return }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Lets pending work run for a moment, processing events (to show that nothing more happens).
    func settle() async throws {
        for _ in 0..<20 {
            sim.processAllEvents()
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
