import Foundation
import Glibc
import JSON
import JWS
import RMStore
import ReceiptCrypto
import ReceiptSigning
import StoreTesting
import TestSupport
import Testing

/// What the notification tests share: the app, the anchor file, signed bodies, HTTP posts and the
/// `notifications` commands.
enum NotificationFixtures {
    static let bundle = "com.example.app"
    static let appAppleId: Int64 = 531_412
    static let monthly = "com.example.monthly"
    static let yearly = "com.example.yearly"
    static let level = "com.example.level"

    /// The JWS test PKI's root as a DER file (the anchor `serve --anchor` pins).
    static func anchorFile() throws -> String {
        let url = temporaryDirectory("anchor").appendingPathComponent("jws-root.der")
        try Data(try PKIs.jws.get().root.derEncoded).write(to: url)
        return url.path
    }

    /// `serve` options for notifications of the app in production, trusting the JWS test PKI.
    static func serveArguments(database: String) throws -> [String] {
        [
            "--notifications-db", database, "--anchor", try anchorFile(), "--bundle-id", bundle, "--app-apple-id", String(appAppleId),
            "--environment", "production",
        ]
    }

    /// `count` genuine notification bodies (DID_RENEW with a signed transaction and renewal info),
    /// each with its own notificationUUID.
    static func bodies(_ count: Int) throws -> [(uuid: String, body: [UInt8])] {
        let pki = try PKIs.jws.get()
        let clock = SimulatedClock()
        let now = clock.now
        let purchase = ReceiptInAppPurchase(
            productIdentifier: monthly, transactionIdentifier: "2000000000000002", originalTransactionIdentifier: "2000000000000001",
            purchaseDate: now, originalPurchaseDate: now.addingTimeInterval(-30 * 86_400),
            expirationDate: now.addingTimeInterval(30 * 86_400),
            webOrderLineItemID: 2_000_000_000_000_100, productType: .autoRenewableSubscription)
        let issuer = JWSIssuer(pki: pki, environment: .production)
        let transaction = try issuer.issueTransaction(
            TransactionContents(bundleIdentifier: bundle, purchase: purchase, transactionReason: .renewal, signedDate: now))
        let renewal = try issuer.issueRenewalInfo(
            RenewalInfoContents(
                originalTransactionIdentifier: "2000000000000001", productIdentifier: monthly, autoRenewStatus: .on, signedDate: now))
        let sender = try sender(url: URL(fileURLWithPath: "/"), clock: clock)
        let event = ServerNotificationEvent(
            type: .didRenew, signedTransactionInfo: transaction, signedRenewalInfo: renewal, status: .active)
        return try (0..<count).map { index in
            let uuid = String(format: "6b9f2e1a-0000-4000-8000-%012d", index)
            return (uuid, try sender.signedBody(for: event, notificationUUID: uuid, signedDate: now))
        }
    }

    /// A sender of the app's production notifications, signing with the JWS test PKI.
    static func sender(
        url: URL, clock: SimulatedClock, signer: JWSSigner? = nil, bundle: String = bundle, environment: Environment = .production,
        transport: any NotificationTransport = URLSessionNotificationTransport()
    ) throws -> AppStoreNotificationSender {
        AppStoreNotificationSender(
            url: url, signer: try signer ?? PKIs.jws.get().jwsSigner(),
            bundleIdentifier: bundle, appAppleId: appAppleId, bundleVersion: "1.0", environment: environment, clock: clock,
            transport: transport)
    }

    /// A catalog with two subscriptions and a non-consumable.
    static func catalog() -> StoreCatalog {
        StoreCatalog(products: [
            SimulatedProduct(
                Product(
                    identifier: monthly, localizedTitle: "Monthly", price: 5, kind: .autoRenewableSubscription,
                    subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .month))),
            SimulatedProduct(
                Product(
                    identifier: yearly, localizedTitle: "Yearly", price: 40, kind: .autoRenewableSubscription,
                    subscriptionPeriod: SubscriptionPeriod(value: 1, unit: .year))),
            SimulatedProduct(Product(identifier: level, localizedTitle: "Level", price: 2, kind: .nonConsumable)),
        ])
    }

    /// POSTs `body` to `path` on `port` over a new connection; nil when there was no answer
    /// (refused, reset: the server is down).
    static func post(port: UInt16, path: String = "/notifications", _ body: [UInt8], timeout: TimeInterval = 10) -> RawHTTPResponse? {
        guard let connection = try? RawHTTPConnection(port: port, timeout: timeout) else { return nil }
        guard connection.send(RawHTTPConnection.post(path, body: body, keepAlive: false)) else { return nil }
        return try? connection.readResponse()
    }

    /// `receipt-tool notifications list --db <location> --json`, one dictionary per line.
    static func list(_ location: String, _ extra: [String] = []) throws -> [[String: Any]] {
        let result = try ReceiptTool.run(["notifications", "list", "--db", location, "--json"] + extra)
        try #require(result.status == 0, "\(result.stderr)")
        return try result.stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    /// `receipt-tool notifications status --db <location> <id> --at <date> --json`.
    static func status(_ location: String, _ original: String, at date: Date) throws -> [String: Any] {
        var format = Date.ISO8601FormatStyle()
        format.timeZone = .gmt
        let result = try ReceiptTool.run(["notifications", "status", "--db", location, original, "--at", date.formatted(format), "--json"])
        try #require(result.status == 0, "\(original): \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    /// Milliseconds since 1970, as the JSON of `notifications` writes dates.
    static func milliseconds(_ date: Date?) -> Int64? {
        date.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    }
}
