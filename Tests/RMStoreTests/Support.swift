// Shared test fixtures: a simulated App Store with a small catalog, a store over it, a
// notification log, and app-side delegates (verifier, downloader) whose answers a test scripts.

import Foundation
import RMStore
import StoreTesting
import TestSupport
import Testing

enum IDs {
    static let coins = "com.example.coins"
    static let level = "com.example.level"
    static let pack = "com.example.pack"
    static let twoPacks = "com.example.twopacks"
    static let monthly = "com.example.monthly"
}

func defaultCatalog(
    packOutcome: DownloadOutcome = .finished,
    packSteps: [Double] = [0.5],
    twoPacksOutcomes: (DownloadOutcome, DownloadOutcome) = (.finished, .finished)
) -> StoreCatalog {
    StoreCatalog(products: [
        SimulatedProduct(Product(identifier: IDs.coins, localizedTitle: "Coins", price: Decimal(string: "0.99") ?? 1, kind: .consumable)),
        SimulatedProduct(Product(identifier: IDs.level, localizedTitle: "Level", price: 2, kind: .nonConsumable)),
        SimulatedProduct(
            Product(identifier: IDs.pack, localizedTitle: "Pack", price: 3, kind: .nonConsumable),
            hostedContents: [SimulatedDownloadContent(contentIdentifier: "pack", progressSteps: packSteps, outcome: packOutcome)]
        ),
        SimulatedProduct(
            Product(identifier: IDs.twoPacks, localizedTitle: "Two packs", price: 4, kind: .nonConsumable),
            hostedContents: [
                SimulatedDownloadContent(contentIdentifier: "a", progressSteps: [0.5], outcome: twoPacksOutcomes.0),
                SimulatedDownloadContent(contentIdentifier: "b", progressSteps: [0.25, 0.5, 0.75], outcome: twoPacksOutcomes.1),
            ]
        ),
        SimulatedProduct(
            Product(
                identifier: IDs.monthly, localizedTitle: "Monthly", price: 5, kind: .autoRenewableSubscription,
                subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .month)
            )),
    ])
}

/// An app-side receipt verifier whose verdict the test sets. With `holds`, completions wait
/// until `release` is called.
@MainActor
final class ScriptedVerifier: ReceiptVerifier {
    var result: VerificationResult
    /// Overrides `result` for some products.
    var resultsByProduct: [String: VerificationResult] = [:]
    var holds = false
    private(set) var verifiedIdentifiers: [String] = []
    private var waiting: [@MainActor @Sendable (VerificationResult) -> Void] = []
    weak var log: NotificationLog?

    init(_ result: VerificationResult = .verified) { self.result = result }

    func verify(_ transaction: PaymentTransaction, completion: @escaping @MainActor @Sendable (VerificationResult) -> Void) {
        verifiedIdentifiers.append(transaction.identifier)
        log?.timeline.append("verify")
        let verdict = resultsByProduct[transaction.productIdentifier] ?? result
        if holds {
            waiting.append { _ in completion(verdict) }
        } else {
            completion(verdict)
        }
    }

    var waitingCount: Int { waiting.count }

    func releaseAll() {
        let all = waiting
        waiting = []
        for completion in all { completion(result) }
    }
}

/// An app-side downloader of self-hosted content whose progress and result the test sets.
@MainActor
final class ScriptedDownloader: ContentDownloader {
    var progressValues: [Double] = []
    var result: Result<Void, any Error> = .success(())
    weak var log: NotificationLog?

    func downloadContent(
        for transaction: PaymentTransaction,
        progress: @escaping @MainActor @Sendable (Double) -> Void,
        completion: @escaping @MainActor @Sendable (Result<Void, any Error>) -> Void
    ) {
        log?.timeline.append("selfHostedDownload")
        for value in progressValues { progress(value) }
        completion(result)
    }
}

/// A simulated App Store (manual delivery unless asked otherwise), a store over it with its own
/// notification center, and a log of the store's notifications.
@MainActor
struct Fixture {
    let sim: SimulatedAppStore
    let store: Store
    let log = NotificationLog()
    let directory: URL

    init(
        catalog: StoreCatalog = defaultCatalog(),
        configuration: Store.Configuration = Store.Configuration(),
        automatic: Bool = false,
        receiptIssuer: (any ReceiptIssuing)? = nil,
        label: String = #function
    ) {
        directory = temporaryDirectory(label)
        sim = SimulatedAppStore(
            catalog: catalog,
            receiptURL: directory.appendingPathComponent("StoreKit/receipt"),
            receiptIssuer: receiptIssuer,
            downloadsDirectory: directory.appendingPathComponent("Downloads"),
            deliversAutomatically: automatic
        )
        var configuration = configuration
        configuration.receiptURL = configuration.receiptURL ?? sim.receiptURL
        store = Store(appStore: sim, configuration: configuration, notificationCenter: NotificationCenter())
        store.addObserver(log)
    }

    /// Requests every catalog product so that payments are accepted.
    func requestAllProducts() {
        store.requestProducts(Set(sim.catalog.products.map(\.product.identifier)))
        sim.processAllEvents()
        log.clear()
    }

    /// Buys a product and runs every event; returns the callbacks' results.
    @discardableResult
    func buy(_ productIdentifier: String, applicationUsername: String? = nil) -> PurchaseRecorder {
        let recorder = PurchaseRecorder()
        store.addPayment(productIdentifier, applicationUsername: applicationUsername) { transaction in
            recorder.successes.append(transaction)
        } failure: { transaction, error in
            recorder.failures.append((transaction, error))
        }
        sim.processAllEvents()
        return recorder
    }
}

@MainActor
final class PurchaseRecorder {
    var successes: [PaymentTransaction] = []
    var failures: [(PaymentTransaction?, any Error)] = []
}
