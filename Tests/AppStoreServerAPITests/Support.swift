// A simulated App Store with a small catalog, its simulated App Store Server API on 127.0.0.1, an
// API key, and clients for it; a minimal App Store Server Notifications endpoint that verifies
// what it receives.

import AppStoreServerAPI
import Foundation
import HTTPServer
import Internals
import JSON
import JWS
import RMStore
import ReceiptCrypto
import ReceiptServer
import ReceiptSigning
import ReceiptVerification
import ServerNotifications
import StoreTesting
import TestSupport
import Testing

enum Products {
    static let coins = "com.example.coins"
    static let level = "com.example.level"
    static let monthly = "com.example.monthly"
    static let yearly = "com.example.yearly"
    static let season = "com.example.season"
    static let monthlyGroup = "20000001"
    static let yearlyGroup = "20000002"

    static let catalog = StoreCatalog(products: [
        SimulatedProduct(Product(identifier: coins, localizedTitle: "Coins", price: Decimal(string: "0.99") ?? 1, kind: .consumable)),
        SimulatedProduct(Product(identifier: level, localizedTitle: "Level", price: 2, kind: .nonConsumable)),
        SimulatedProduct(
            Product(
                identifier: monthly, localizedTitle: "Monthly", price: 5, kind: .autoRenewableSubscription,
                subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .month)), subscriptionGroupIdentifier: monthlyGroup),
        SimulatedProduct(
            Product(
                identifier: yearly, localizedTitle: "Yearly", price: 50, kind: .autoRenewableSubscription,
                subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .year)), subscriptionGroupIdentifier: yearlyGroup),
        SimulatedProduct(Product(identifier: season, localizedTitle: "Season", price: 9, kind: .nonRenewingSubscription)),
    ])
}

/// The developer's App Store Connect API key, as a `.p8` file would hold it.
struct APIKeyFixture {
    static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    static let keyID = "2X9R4HXF34"
    let privateKey: PrivateKey
    let p8: String

    init() throws {
        privateKey = try PrivateKey.generateP256()
        p8 = try privateKey.pemEncoded
    }

    /// The key as the client reads it: from the `.p8` text.
    func key(issuerID: String = APIKeyFixture.issuerID, keyID: String = APIKeyFixture.keyID) throws -> AppStoreConnectKey {
        try AppStoreConnectKey(issuerID: issuerID, keyID: keyID, p8: p8)
    }
}

/// A simulated App Store, its App Store Server API on 127.0.0.1 and the key registered with it.
@MainActor
final class ServerWorld {
    nonisolated static let bundleID = "com.example.app"
    let jwsPKI: TestPKI
    let apiKey: APIKeyFixture
    let clock: SimulatedClock
    let store: SimulatedAppStore
    let server: SimulatedAppStoreServer

    init(
        pageSize: Int = 20, notificationURL: URL? = nil, transport: any NotificationTransport = URLSessionNotificationTransport(timeout: 5),
        configure: (inout SimulatedAppStoreServer.Configuration) -> Void = { _ in }
    ) throws {
        jwsPKI = try PKIs.jws.get()
        apiKey = try APIKeyFixture()
        clock = SimulatedClock()
        let issuer = JWSIssuer(pki: jwsPKI)
        store = SimulatedAppStore(catalog: Products.catalog, bundleIdentifier: Self.bundleID, jwsIssuer: issuer, clock: clock)
        store.deliversAutomatically = false
        var configuration = SimulatedAppStoreServer.Configuration(
            bundleIdentifier: Self.bundleID, appAppleId: 1_234_567_890, issuerID: APIKeyFixture.issuerID, keyID: APIKeyFixture.keyID,
            publicKey: try apiKey.privateKey.publicKey, historyPageSize: pageSize, refundPageSize: pageSize,
            notificationPageSize: pageSize, notificationURL: notificationURL)
        configure(&configuration)
        server = SimulatedAppStoreServer(configuration: configuration, issuer: issuer, clock: clock, notificationTransport: transport)
        try server.start()
    }

    /// Buys a product (its transaction is reported and left unfinished) and takes the new state.
    func buy(_ product: String, quantity: Int = 1, applicationUsername: String? = nil) {
        store.add(Payment(productIdentifier: product, quantity: quantity, applicationUsername: applicationUsername))
        store.processAllEvents()
        server.synchronize(with: store)
    }

    /// Moves the clock (renewing subscriptions) and takes the new state.
    func advance(days: Double) {
        store.advanceClock(by: days * 86_400)
        store.processAllEvents()
        server.synchronize(with: store)
    }

    /// A client for the server, trusting the JWS test PKI's root, payloads in Sandbox.
    func client(
        key: AppStoreConnectKey? = nil, bundleID: String = ServerWorld.bundleID, environment: Environment = .sandbox,
        configure: (inout AppStoreServerAPIClient.Configuration) -> Void = { _ in }
    ) throws -> AppStoreServerAPIClient {
        var configuration = AppStoreServerAPIClient.Configuration(
            key: try key ?? apiKey.key(), bundleID: bundleID,
            environment: AppStoreServerEnvironment(baseURL: server.baseURL, payloadEnvironment: environment),
            anchors: TrustAnchors([jwsPKI.root]), timeout: 10,
            retry: RetryPolicy(maximumAttempts: 3, initialBackoff: 0.01, maximumBackoff: 0.05), rateLimits: .unlimited)
        configure(&configuration)
        return try AppStoreServerAPIClient(configuration: configuration)
    }

    /// The requests the server recorded for one endpoint.
    func requests(_ endpoint: SimulatedAppStoreServer.Endpoint) -> [SimulatedAppStoreServer.RecordedRequest] {
        server.requests.filter { $0.endpoint == endpoint }
    }

    /// Stops the server off the cooperative pool.
    func shutdown() async {
        let server = self.server
        _ = try? await onThread { server.shutdown() }
    }

    /// Transaction ids of the store's purchase history, in order.
    var historyIDs: [String] { store.purchaseHistory.map(\.transactionIdentifier) }
}

/// The notifications endpoint `receipt-tool serve` mounts (ReceiptServer's `NotificationsEndpoint`
/// over a `NotificationReceiver`), on 127.0.0.1: verifies each `{"signedPayload": …}` against the JWS
/// test PKI's root, the app's bundle id and Sandbox, and stores it in a SQLite file of its own.
/// `failWith` makes it a receiver that answers that status to every request instead (a broken
/// backend, as Apple's retries meet it).
final class NotificationsReceiver: HTTPHandler {
    let directory: URL
    let store: SQLiteNotificationStore
    let endpoint: NotificationsEndpoint
    let failWith: Int?
    private let requestCount = Locked(0)

    init(anchor: Certificate, failWith: Int? = nil) throws {
        directory = temporaryDirectory("notifications")
        store = try SQLiteNotificationStore(path: directory.appendingPathComponent("n.db").path)
        endpoint = NotificationsEndpoint(
            receiver: NotificationReceiver(
                verifier: NotificationVerifier(anchors: [anchor]),
                expectations: JWSExpectations(bundleIdentifier: ServerWorld.bundleID, environments: [.sandbox]), store: store))
        self.failWith = failWith
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        requestCount.withLock { $0 += 1 }
        if let failWith { return HTTPResponse(status: failWith) }
        return endpoint.respond(to: request)
    }

    /// How many requests arrived.
    var requests: Int { requestCount.withLock { $0 } }

    /// Every notification stored, in order.
    var stored: [StoredNotification] { (try? store.notifications(.all)) ?? [] }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

/// Seconds since `start`.
func elapsed(since start: ContinuousClock.Instant) -> Double {
    let duration = ContinuousClock.now - start
    return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The error a call threw (nil when it returned).
@MainActor
func apiError<T>(_ body: @MainActor () async throws -> T) async -> AppStoreServerAPIError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? AppStoreServerAPIError
    }
}
