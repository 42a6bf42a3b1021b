// The legacy transaction-receipt verifier against the project's own verifyReceipt endpoint served
// on 127.0.0.1 (production and sandbox instances), scripted local servers for Apple's temporary
// statuses and garbage bodies, a closed port for transport failures, and offline.

import Foundation
import HTTPServer
import Internals
import RMStore
import RMStoreVerifiers
import ReceiptCrypto
import ReceiptServer
import ReceiptSigning
import ReceiptVerification
import Receipts
import StoreTesting
import TestSupport
import Testing
import VerifyReceipt

/// A signed iOS 6 transaction receipt and the transaction it came with.
struct LegacyPurchase {
    static let purchaseDate = Date(timeIntervalSince1970: 1_700_000_000)

    let receipt: TransactionReceipt
    let transaction: PaymentTransaction

    /// A receipt for `transactionID` / `product` signed by `pki`, attached to a transaction (whose
    /// own id and product may differ, to test mismatches).
    static func make(
        pki: Result<TestPKI, CryptoError> = PKIs.transactionReceipts, transactionID: String = "1000000046178817",
        originalTransactionID: String? = nil, product: String = IDs.level, bundleIdentifier: String = IDs.bundle,
        environment: String? = "Production", state: TransactionState = .purchased,
        transactionIdentifier: String? = nil, transactionProduct: String? = nil, original: OriginalTransaction? = nil
    ) throws -> LegacyPurchase {
        let info = try PurchaseInfo(entries: [
            .init(key: "original-purchase-date-ms", value: .string("1700000000000")),
            .init(key: "unique-identifier", value: .string("0000b0090000")),
            .init(key: "original-transaction-id", value: .string(originalTransactionID ?? transactionID)),
            .init(key: "bvrs", value: .string("1.0")),
            .init(key: "transaction-id", value: .string(transactionID)),
            .init(key: "quantity", value: .string("1")),
            .init(key: "product-id", value: .string(product)),
            .init(key: "purchase-date-ms", value: .string("1700000000000")),
            .init(key: "bid", value: .string(bundleIdentifier)),
        ])
        let receipt = try pki.get().transactionReceiptSigner().sign(info, environment: environment)
        let transaction = PaymentTransaction(
            identifier: transactionIdentifier ?? transactionID, state: state,
            payment: Payment(productIdentifier: transactionProduct ?? product), date: purchaseDate, original: original,
            transactionReceipt: Data(receipt.text))
        return LegacyPurchase(receipt: receipt, transaction: transaction)
    }
}

/// The project's own verifyReceipt endpoint for `environment`, trusting the legacy test PKI (app
/// receipts are not sent here; its root stands in as their anchor too).
func endpoint(_ environment: VerifyReceiptEnvironment) throws -> VerifyReceiptEndpoint {
    let legacy = try PKIs.transactionReceipts.get()
    return VerifyReceiptEndpoint(
        configuration: VerifyReceiptEndpoint.Configuration(environment: environment, clock: { LegacyPurchase.purchaseDate }),
        appReceiptVerifier: AppReceiptVerifier(anchors: TrustAnchors([legacy.root])),
        transactionReceiptVerifier: TransactionReceiptVerifier(intermediate: legacy.intermediate, anchors: [legacy.root]))
}

/// Production and sandbox endpoints on 127.0.0.1 and an online verifier pointing at them.
struct OnlineFixture {
    let production: LocalServer
    let sandbox: LocalServer

    init(production: some HTTPHandler, sandbox: some HTTPHandler) throws {
        self.production = try LocalServer(production)
        self.sandbox = try LocalServer(sandbox)
    }

    init() throws {
        try self.init(production: try endpoint(.production), sandbox: try endpoint(.sandbox))
    }

    @MainActor
    func verifier(bundleVersion: String? = nil) -> TransactionReceiptStoreVerifier {
        let client = VerifyReceiptClient(
            configuration: VerifyReceiptClient.Configuration(
                productionURL: production.url, sandboxURL: sandbox.url, timeout: 30))
        return TransactionReceiptStoreVerifier(
            configuration: TransactionReceiptStoreVerifier.Configuration(
                method: .online(client), bundleIdentifier: IDs.bundle, bundleVersion: bundleVersion))
    }

    func shutdown() async {
        await production.shutdown()
        await sandbox.shutdown()
    }
}

@MainActor
func offlineVerifier(time: ValidationTime = .signedDate) throws -> TransactionReceiptStoreVerifier {
    let pki = try PKIs.transactionReceipts.get()
    return TransactionReceiptStoreVerifier(
        configuration: TransactionReceiptStoreVerifier.Configuration(
            method: .offline(TransactionReceiptVerifier(intermediate: pki.intermediate, anchors: [pki.root]), validationTime: time),
            bundleIdentifier: IDs.bundle, bundleVersion: "1.0", allowedEnvironments: [.production, .sandbox]))
}

func unableToComplete(_ result: VerificationResult) -> StoreVerifierError? {
    if case .unableToComplete(let error) = result {
        return StoreError.code(of: error) == .unableToCompleteVerification ? StoreVerifierError.from(error) : nil
    }
    return nil
}

@MainActor
@Suite(.timeLimit(.minutes(5))) struct TransactionReceiptStoreVerifierTests {
    // MARK: Online, against the project's own endpoint on 127.0.0.1

    /// Status 0 from production: verified, one request.
    @Test func online_status0_isVerified() async throws {
        let servers = try OnlineFixture()
        let purchase = try LegacyPurchase.make(environment: "Production")

        let result = await servers.verifier(bundleVersion: "1.0").verify(purchase.transaction)

        #expect(isVerified(result))
        #expect(servers.production.requests == 1)
        #expect(servers.sandbox.requests == 0)
        await servers.shutdown()
    }

    /// A sandbox receipt: production answers 21007, the verifier (its client) asks the sandbox,
    /// which verifies it.
    @Test func online_21007_retriesOnTheSandbox_andIsVerified() async throws {
        let servers = try OnlineFixture()
        let purchase = try LegacyPurchase.make(environment: "Sandbox")

        let result = await servers.verifier().verify(purchase.transaction)

        #expect(isVerified(result))
        #expect(servers.production.requests == 1)
        #expect(servers.sandbox.requests == 1)
        await servers.shutdown()
    }

    /// Nobody listens on the port: unable to complete (the transaction would stay unfinished),
    /// with the client's typed transport error underneath.
    @Test func online_transportFailure_isUnableToComplete() async throws {
        let closed = try LocalServer(ScriptedHandler { _ in .json(Array("{}".utf8)) })
        let url = closed.url
        await closed.shutdown()
        let client = VerifyReceiptClient(configuration: VerifyReceiptClient.Configuration(productionURL: url, sandboxURL: url, timeout: 30))
        let verifier = TransactionReceiptStoreVerifier(
            configuration: TransactionReceiptStoreVerifier.Configuration(
                method: .online(client), bundleIdentifier: IDs.bundle))

        let result = await verifier.verify(try LegacyPurchase.make().transaction)

        let detail = try #require(unableToComplete(result))
        #expect(detail.code == .transport)
        #expect((detail.underlying as? VerifyReceiptClientError)?.code == .cannotConnect)
    }

    /// Status 0, but the verified receipt is for another product, transaction or app: failed,
    /// naming what differs (RMStore never looked, Docs/StoreBehaviour.md §5 step 7).
    @Test(arguments: ["product", "transaction", "bundle"])
    func online_status0_forAnotherPurchase_fails(_ what: String) async throws {
        let servers = try OnlineFixture()
        let purchase = try LegacyPurchase.make(
            bundleIdentifier: what == "bundle" ? "com.example.other" : IDs.bundle,
            transactionIdentifier: what == "transaction" ? "1000000099999999" : nil,
            transactionProduct: what == "product" ? IDs.monthly : nil)

        let result = await servers.verifier().verify(purchase.transaction)

        let detail = try #require(failure(of: result))
        #expect(detail.code == .responseMismatch)
        let field = ["product": "product-id", "transaction": "transaction-id", "bundle": "bid"][what] ?? what
        #expect(detail.message.contains(field), "\(detail)")
        #expect(servers.production.requests == 1)
        await servers.shutdown()
    }

    /// A value of the answer quoted in the message is escaped: a `bid` holding a newline and an
    /// escape sequence cannot forge a log line or colour a terminal.
    @Test func online_status0_forAnotherApp_quotesItsBundleIdEscaped() async throws {
        let servers = try OnlineFixture()
        let purchase = try LegacyPurchase.make(bundleIdentifier: "com.example.other\n\u{1B}[31mforged \"line\"")

        let result = await servers.verifier().verify(purchase.transaction)

        let detail = try #require(failure(of: result))
        #expect(detail.code == .responseMismatch)
        #expect(detail.message.contains(#"bid "com.example.other\n\u{1B}[31mforged \"line\"", expected "\#(IDs.bundle)""#), "\(detail)")
        #expect(!detail.message.unicodeScalars.contains { $0.value < 0x20 })
        await servers.shutdown()
    }

    /// A receipt signed by someone else: the endpoint answers 21003; failed with that status.
    @Test func online_21003_fails_withTheStatus() async throws {
        let servers = try OnlineFixture()
        let forged = try LegacyPurchase.make(pki: PKIs.otherTransactionReceipts)

        let result = await servers.verifier().verify(forged.transaction)

        let detail = try #require(failure(of: result))
        #expect(detail.code == .status)
        #expect(detail.status == 21003)
        await servers.shutdown()
    }

    /// Apple's server could not answer (21005, 21100–21199, is-retryable): no verdict, unable to
    /// complete (RMStore finished the transaction). A body that is not a verifyReceipt answer is
    /// no verdict either.
    @Test(arguments: [
        #"{"status": 21005}"#, #"{"status": 21150}"#, #"{"status": 21009}"#, #"{"status": 21002, "is-retryable": true}"#,
        "<html>Service Unavailable</html>",
    ])
    func online_serverCouldNotAnswer_isUnableToComplete(_ body: String) async throws {
        let servers = try OnlineFixture(
            production: ScriptedHandler { _ in .json(Array(body.utf8)) }, sandbox: ScriptedHandler { _ in .json(Array(body.utf8)) })

        let result = await servers.verifier().verify(try LegacyPurchase.make().transaction)

        let detail = try #require(unableToComplete(result))
        #expect(detail.code == (body.hasPrefix("{") ? .status : .transport))
        await servers.shutdown()
    }

    // MARK: Offline

    @Test func offline_validReceipt_isVerified_andARestoredTransactionMatchesByItsOriginal() async throws {
        let verifier = try offlineVerifier()
        #expect(isVerified(await verifier.verify(try LegacyPurchase.make().transaction)))

        let restored = try LegacyPurchase.make(
            transactionID: "1000000046178900", originalTransactionID: "1000000046178817", state: .restored,
            transactionIdentifier: "1000000046178999", original: OriginalTransaction(identifier: "1000000046178817", date: nil))
        #expect(isVerified(await verifier.verify(restored.transaction)))
    }

    @Test func offline_forgedReceipt_failsNamingTheCheck() async throws {
        let verifier = try offlineVerifier()
        let result = await verifier.verify(try LegacyPurchase.make(pki: PKIs.otherTransactionReceipts).transaction)

        let detail = try #require(failure(of: result))
        #expect(detail.code == .receiptInvalid)
        #expect(!detail.failedChecks.isEmpty)
        #expect(detail.message.contains(detail.failedChecks[0].name.rawValue))
    }

    @Test func offline_otherProductOrTransaction_fails() async throws {
        let verifier = try offlineVerifier()
        let otherProduct = await verifier.verify(try LegacyPurchase.make(transactionProduct: IDs.monthly).transaction)
        #expect(failure(of: otherProduct)?.failedCheckNames.contains(.productIdentifier) == true)

        let otherTransaction = await verifier.verify(try LegacyPurchase.make(transactionIdentifier: "1000000099999999").transaction)
        #expect(failure(of: otherTransaction)?.code == .responseMismatch)
    }

    // MARK: In a store

    /// RMStoreTransactionReceiptVerifierTests "No receipt → failure": in a store over the simulated
    /// App Store (whose transactions carry no transaction receipt) the purchase fails and is
    /// finished, with no network call.
    @Test func inAStore_aTransactionWithoutReceipt_failsAndIsFinished() async throws {
        let servers = try OnlineFixture()
        let sim = SimulatedAppStore(catalog: testCatalog())
        let store = Store(appStore: sim, receiptVerifier: servers.verifier(), notificationCenter: NotificationCenter())
        _ = try await store.requestProducts([IDs.level])

        await #expect(throws: PurchaseError.self) { _ = try await store.purchase(IDs.level) }

        #expect(sim.finishedTransactionIdentifiers.count == 1)
        #expect(servers.production.requests == 0)
        await servers.shutdown()
    }
}
