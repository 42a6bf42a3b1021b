// store-demo: RMStore's API against the simulated App Store, with real signed receipts and real
// StoreKit 2 signed transactions (JWS), both verified for every transaction (the app-receipt
// verifier and the JWS transaction verifier, combined), and the secure persistor. Buys a
// consumable, a non-consumable with hosted content and a subscription, lets the subscription renew
// on the simulated clock, refreshes the receipt, restores, and prints every store notification and
// every verified signed transaction as it happens, then a summary.
//
// Everything lives in a fresh temporary directory that is removed at the end. Exit status 0 when
// every step behaved as expected, 1 otherwise.

import Foundation
import JWS
import RMStore
import RMStoreVerifiers
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import StoreTesting

/// Prints each store notification when it is posted, with the time since the start.
@MainActor
final class NotificationPrinter: StoreObserver {
    let start = ContinuousClock.now
    private(set) var finishedTransactions: [PaymentTransaction] = []
    private(set) var count = 0

    func elapsed() -> String {
        let duration = ContinuousClock.now - start
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return String(format: "%6.3f s", Double(milliseconds) / 1000)
    }

    func say(_ text: String) {
        print("[\(elapsed())] \(text)")
    }

    private func show(_ notification: Notification, _ details: String = "") {
        count += 1
        let name = notification.name.rawValue.replacingOccurrences(of: "RMSK", with: "")
        var parts = ["  ▸ \(name)"]
        if let product = notification.rm.productIdentifier { parts.append(product) }
        if let transaction = notification.rm.transaction {
            parts.append("transaction \(transaction.identifier) (\(transaction.state.rawValue))")
        }
        if !details.isEmpty { parts.append(details) }
        if let error = notification.rm.storeError { parts.append("error: \(error)") }
        say(parts.joined(separator: "  "))
    }

    func storeProductsRequestFinished(_ notification: Notification) {
        show(notification, "\(notification.rm.products?.count ?? 0) products, invalid: \(notification.rm.invalidProductIdentifiers ?? [])")
    }
    func storeProductsRequestFailed(_ notification: Notification) { show(notification) }
    func storePaymentTransactionFinished(_ notification: Notification) {
        if let transaction = notification.rm.transaction { finishedTransactions.append(transaction) }
        show(notification)
    }
    func storePaymentTransactionFailed(_ notification: Notification) { show(notification) }
    func storePaymentTransactionDeferred(_ notification: Notification) { show(notification) }
    func storeRestoreTransactionsFinished(_ notification: Notification) {
        show(notification, "\(notification.rm.transactions?.count ?? 0) restored, \(notification.rm.failedTransactions?.count ?? 0) failed")
    }
    func storeRestoreTransactionsFailed(_ notification: Notification) { show(notification) }
    func storeRefreshReceiptFinished(_ notification: Notification) { show(notification) }
    func storeRefreshReceiptFailed(_ notification: Notification) { show(notification) }
    func storeDownloadUpdated(_ notification: Notification) {
        show(notification, String(format: "progress %.0f%%", (notification.rm.downloadProgress ?? 0) * 100))
    }
    func storeDownloadFinished(_ notification: Notification) {
        show(notification, notification.rm.download?.contentURL.map { "content at \($0.lastPathComponent)/" } ?? "")
    }
    func storeDownloadFailed(_ notification: Notification) { show(notification) }
    func storeDownloadCanceled(_ notification: Notification) { show(notification) }
    func storeDownloadPaused(_ notification: Notification) { show(notification) }
}

struct DemoFailure: Error, CustomStringConvertible {
    let description: String
}

enum Demo {
    static let bundleIdentifier = "com.example.demo"
    static let appVersion = "1.0"
    static let coins = "com.example.demo.coins"
    static let level = "com.example.demo.level"
    static let pack = "com.example.demo.pack"
    static let monthly = "com.example.demo.monthly"

    static var catalog: StoreCatalog {
        StoreCatalog(products: [
            SimulatedProduct(
                Product(identifier: coins, localizedTitle: "100 Coins", price: Decimal(string: "0.99") ?? 1, kind: .consumable)),
            SimulatedProduct(
                Product(identifier: level, localizedTitle: "Bonus Level", price: Decimal(string: "1.99") ?? 2, kind: .nonConsumable)),
            SimulatedProduct(
                Product(
                    identifier: pack, localizedTitle: "Sound Pack", price: Decimal(string: "2.99") ?? 3, priceLocaleIdentifier: "fr_FR",
                    kind: .nonConsumable),
                hostedContents: [SimulatedDownloadContent(contentIdentifier: "sounds", progressSteps: [0.25, 0.5, 0.75])]
            ),
            SimulatedProduct(
                Product(
                    identifier: monthly, localizedTitle: "Premium (monthly)", price: Decimal(string: "4.99") ?? 5,
                    kind: .autoRenewableSubscription, subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .month)
                )),
        ])
    }

    @MainActor
    static func run(printer: NotificationPrinter, directory: URL) async throws {
        printer.say("Generating a test PKI (root → WWDR-like intermediate → receipt-signing leaf)")
        let pki = try TestPKI.generate()
        printer.say("Generating a JWS test PKI (P-384 root → P-384 WWDR-like intermediate → P-256 ES256 signing leaf)")
        let jwsPKI = try TestPKI.jws()
        let device = DeviceIdentifier(bytes: withUnsafeBytes(of: UUID().uuid) { Array($0) })
        let receiptURL = directory.appendingPathComponent("StoreKit/receipt")
        let sim = SimulatedAppStore(
            catalog: catalog, bundleIdentifier: bundleIdentifier, appVersion: appVersion, receiptURL: receiptURL,
            receiptIssuer: SignedReceiptIssuer(signer: pki.signer(), deviceIdentifier: device), jwsIssuer: JWSIssuer(pki: jwsPKI),
            downloadsDirectory: directory.appendingPathComponent("Downloads"))
        var key = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in key.indices { key[index] = UInt8.random(in: 0...255, using: &generator) }
        let persistor = try SecureTransactionPersistor(fileURL: directory.appendingPathComponent("purchases.ledger"), key: key)
        let store = Store(
            appStore: sim, transactionPersistor: persistor, configuration: Store.Configuration(receiptURL: receiptURL),
            notificationCenter: NotificationCenter())
        // One trust for both verifiers: the two test roots as the only anchors, the App Store policy.
        let trust = StoreVerifierTrust(anchors: .anchors(TrustAnchors([pki.root, jwsPKI.root])), policy: .appStore)
        let verifier = AppReceiptStoreVerifier(
            configuration: AppReceiptStoreVerifier.Configuration(
                receiptURL: receiptURL, bundleIdentifier: bundleIdentifier, appVersion: appVersion, deviceIdentifier: device,
                trust: trust),
            store: store)
        if let error = verifier.configurationError { throw error }
        let jwsVerifier = JWSTransactionStoreVerifier(
            configuration: JWSTransactionStoreVerifier.Configuration(
                bundleIdentifier: bundleIdentifier, allowedEnvironments: [.sandbox], trust: trust))
        if let error = jwsVerifier.configurationError { throw error }
        var verifiedSignedTransactions = 0
        jwsVerifier.onVerified = { transaction, payload in
            verifiedSignedTransactions += 1
            printer.say("    ✓ JWS \(describe(payload)) (for \(transaction.state.rawValue) \(transaction.identifier))")
        }
        // Both must vouch for every transaction: the signed app receipt, then the signed transaction.
        store.receiptVerifier = CombinedStoreVerifier([verifier, jwsVerifier])
        store.addObserver(printer)
        printer.say(
            "Store ready: device \(device), the test roots as the only anchors, App Store policy, receipt and JWS verified, secure ledger")

        printer.say("Requesting products")
        let response = try await store.requestProducts([coins, level, pack, monthly, "com.example.demo.unknown"])
        for product in response.products {
            printer.say("    \(product.localizedTitle) (\(product.kind.rawValue)): \(Store.localizedPrice(of: product))")
        }

        for product in [coins, coins, level, pack, monthly] {
            printer.say("Buying \(product)")
            let transaction = try await store.purchase(product)
            printer.say("    purchased \(transaction.identifier), verified against the signed receipt and its JWS, and persisted")
        }
        if let verdict = jwsVerifier.lastVerdict {
            let chain = verdict.chain?.map { $0.subject.commonName ?? "?" }.joined(separator: " → ") ?? "?"
            printer.say(
                "    the JWS chain: \(chain), checked at \(verdict.validationTime.map { "\($0)" } ?? "?") (the signedDate), \(verdict.checks.count) checks"
            )
        }
        printer.say("Consuming one coin purchase: \(try persistor.consume(productIdentifier: coins) ? "done" : "none left")")

        printer.say("A month passes on the simulated clock: the subscription renews")
        let before = printer.finishedTransactions.count
        sim.advanceClock(by: 31 * 86_400)
        try await waitUntil("the renewal") { printer.finishedTransactions.count > before }

        printer.say("Refreshing the receipt")
        try await store.refreshReceipt()

        printer.say("Restoring completed transactions")
        let restored = try await store.restoreTransactions()
        guard restored.failedTransactions.isEmpty else {
            throw DemoFailure(description: "restored transactions failed: \(restored.failedTransactions.map(\.error))")
        }

        let receipt = try await verifier.verifiedReceipt()
        let now = sim.clock.now
        let subscribed = receipt.containsActiveAutoRenewableSubscription(ofProduct: monthly, at: now)
        guard sim.unfinishedTransactions.isEmpty, subscribed, try persistor.isPurchased(productIdentifier: level) else {
            throw DemoFailure(description: "unexpected final state")
        }
        // The subscription as the App Store Server API would report it: signed transaction and
        // renewal info, verified with the same JWS root.
        let status = try sim.subscriptionGroupStatuses().first?.lastTransactions.first
        let renewalVerifier = JWSRenewalInfoVerifier(anchors: [jwsPKI.root])
        let renewalInfo = status.flatMap { renewalVerifier.verify(token: $0.signedRenewalInfo).value() as JWSRenewalInfo? }
        guard let status, let renewalInfo, renewalInfo.originalTransactionId == status.originalTransactionIdentifier else {
            throw DemoFailure(description: "the subscription's signed renewal info did not verify")
        }

        print("")
        print("Summary")
        print("  notifications posted:        \(printer.count)")
        print(
            "  transactions finished:       \(sim.finishedTransactionIdentifiers.count) (unfinished: \(sim.unfinishedTransactions.count))")
        print("  receipt refreshes:           \(sim.refreshRequestCount) (verifier asked for \(verifier.refreshRequestCount))")
        print(
            "  receipt:                     \(receipt.receiptType ?? "?"), \(receipt.inAppPurchases.count) in-app records, created \(receipt.creationDate.map { "\($0)" } ?? "?")"
        )
        print("  subscription active now:     \(subscribed) (\(receipt.inAppPurchases(ofProduct: monthly).count) periods in the receipt)")
        print("  signed transactions (JWS):   \(verifiedSignedTransactions) verified (ES256, chain to the JWS test root, Sandbox)")
        print(
            "  subscription status (JWS):   \(status.status == .active ? "active" : "status \(status.status.rawValue)"), renewal info verified: auto-renew \(renewalInfo.autoRenewStatus == .on ? "on" : "off"), renews \(renewalInfo.renewalDate?.date.description ?? "?")"
        )
        print("  ledger (\(persistor.fileURL.lastPathComponent), mode 0600, HMAC-tagged):")
        for product in try persistor.purchasedProductIdentifiers().sorted() {
            let records = try persistor.transactions(forProduct: product)
            let webOrder = records.compactMap(\.webOrderLineItemID).map(String.init).joined(separator: ", ")
            print(
                "    \(product): \(records.count) record(s), \(try persistor.count(productIdentifier: product)) unconsumed"
                    + (webOrder.isEmpty ? "" : ", web order line items \(webOrder)"))
        }
    }

    /// Waits (at most 5 s) until `condition` holds; the simulated App Store delivers on its own.
    @MainActor
    static func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw DemoFailure(description: "timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}

/// One line about a verified signed transaction: type, id, product, reason, dates, price.
func describe(_ payload: JWSTransaction) -> String {
    var parts = [
        "\(payload.type?.rawValue ?? "?") \(payload.transactionId ?? "?") of \(payload.productId ?? "?")",
        "\(payload.transactionReason?.rawValue ?? "?")",
        "purchased \(payload.purchaseDate?.date.description ?? "?")",
    ]
    if let expires = payload.expiresDate { parts.append("expires \(expires.date)") }
    if let original = payload.originalTransactionId, original != payload.transactionId { parts.append("original \(original)") }
    if let price = payload.price, let currency = payload.currency { parts.append("\(price) milli-\(currency)") }
    parts.append(payload.environment?.rawValue ?? "no environment")
    return parts.joined(separator: ", ")
}

/// Runs the demo in a fresh temporary directory, removes it, and returns the exit status. Everything
/// it creates is released before the process exits.
@MainActor
func runDemo() async -> Int32 {
    let printer = NotificationPrinter()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-demo-\(UUID().uuidString)")
    var status: Int32 = 0
    do {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try await Demo.run(printer: printer, directory: directory)
        printer.say("Done")
    } catch {
        printer.say("FAILED: \(error)")
        status = 1
    }
    try? FileManager.default.removeItem(at: directory)
    return status
}

exit(await runDemo())
