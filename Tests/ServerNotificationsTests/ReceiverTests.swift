import Foundation
import Internals
import JSON
import JWS
import ReceiptSigning
import ReceiptVerification
import ServerNotifications
import StoreTesting
import TestSupport
import Testing

@MainActor
@Suite struct ReceiverTests {
    /// A genuine notification is accepted and stored with its decoded columns; the same again is a
    /// duplicate (acknowledged, stored once); a TEST notification is genuine and stored.
    @Test func acceptsStoresAndDeduplicates() throws {
        let store = try SQLiteNotificationStore(path: temporaryDatabase())
        let receiving = try receiver(store: store, clock: { Date(timeIntervalSince1970: 1_700_000_123) })
        let app = try SimulatedApp(transport: ReceiverTransport(receiver: receiving))
        let id = app.buy(IDs.monthly)
        app.flush()
        let delivery = try #require(app.sender.deliveries.first)
        #expect(delivery.isDelivered)
        #expect(delivery.attempts.count == 1)

        let rows = try store.notifications(.all)
        try #require(rows.count == 1)
        let row = rows[0]
        #expect(row.notificationUUID == delivery.notificationUUID)
        #expect(row.notificationType == "SUBSCRIBED" && row.subtype == "INITIAL_BUY")
        #expect(row.bundleId == IDs.bundle && row.environment == "Production" && row.appAppleId == IDs.appAppleId)
        #expect(row.transactionId == id && row.originalTransactionId == id && row.productId == IDs.monthly)
        #expect(row.signedDate == 1_700_000_000_000)
        #expect(row.receivedDate == 1_700_000_123_000)
        #expect(row.expiresDate == StoredNotification.milliseconds(app.store.purchaseHistory[0].expirationDate ?? .distantPast))
        #expect(row.autoRenewStatus == 1 && row.isInBillingRetryPeriod == false && row.revocationDate == nil)
        let token = try #require(try JSONValue.parse(delivery.body)["signedPayload"]?.stringValue)
        #expect(row.signedPayload == token)

        // Apple's retry of the same notification: acknowledged, not stored again.
        guard case .duplicate(let again) = receiving.receive(body: delivery.body) else {
            Issue.record("a retry was not a duplicate")
            return
        }
        #expect(again.notificationUUID == row.notificationUUID)
        #expect(try store.notifications(.all).count == 1)

        // TEST: no nested token, genuine, stored.
        let test = try app.sender.sendTestNotification()
        app.flush()
        let stored = try store.notifications(NotificationQuery(notificationUUID: test))
        #expect(stored.first?.notificationType == "TEST")
        #expect(stored.first?.transactionId == nil && stored.first?.originalTransactionId == nil)
    }

    /// Every kind of forgery and every malformed body is rejected with the check that failed, and
    /// nothing is stored.
    /// The cases of ``rejectsWithoutStoring()`` answered 5xx: our configuration may be wrong (an
    /// untrusted chain, another bundle id, environment or app Apple id), or the outer token is
    /// Apple's (signature and chain verified) and a later check failed.
    static let retryable: Set<String> = [
        "forged outer JWS", "another bundle id", "another environment", "another app Apple id",
    ]

    @Test func rejectsWithoutStoring() throws {
        let store = try SQLiteNotificationStore(path: temporaryDatabase())
        let receiving = try receiver(store: store)
        let pki = try PKIs.jws.get()
        let other = try PKIs.otherJWS.get()
        let app = try SimulatedApp(transport: ReceiverTransport(receiver: receiving))
        let id = app.buy(IDs.monthly)
        app.flush()
        let genuine = try #require(app.sender.deliveries.first)
        let purchase = try #require(app.store.purchaseHistory.first)
        let now = app.clock.now

        func sender(
            signer: JWSSigner = pki.jwsSigner(), bundle: String = IDs.bundle, appAppleId: Int64 = IDs.appAppleId,
            environment: Environment = .production
        )
            -> AppStoreNotificationSender
        {
            AppStoreNotificationSender(
                url: URL(fileURLWithPath: "/"), signer: signer, bundleIdentifier: bundle, appAppleId: appAppleId, environment: environment,
                clock: app.clock)
        }
        func body(_ sender: AppStoreNotificationSender, transaction: String?) throws -> [UInt8] {
            try sender.signedBody(
                for: ServerNotificationEvent(type: .didRenew, signedTransactionInfo: transaction), notificationUUID: UUID().uuidString,
                signedDate: now)
        }
        let transaction = try #require(try app.store.signedTransaction(transactionIdentifier: id))
        let forgedTransaction = try JWSIssuer(pki: other, environment: .production).issueTransaction(
            TransactionContents(bundleIdentifier: IDs.bundle, purchase: purchase, signedDate: now))
        let otherBundleTransaction = try JWSIssuer(pki: pki, environment: .production).issueTransaction(
            TransactionContents(bundleIdentifier: "com.other.app", purchase: purchase, signedDate: now))
        let sandboxTransaction = try JWSIssuer(pki: pki, environment: .sandbox).issueTransaction(
            TransactionContents(bundleIdentifier: IDs.bundle, purchase: purchase, signedDate: now))

        // The genuine body with one payload character changed after signing.
        let token = try #require(try JSONValue.parse(genuine.body)["signedPayload"]?.stringValue)
        let parts = token.split(separator: ".").map(String.init)
        let payload = try Base64.decode(Array(parts[1].utf8), rules: .strictURL)
        let changed = Array(String(decoding: payload, as: UTF8.self).replacingOccurrences(of: "SUBSCRIBED", with: "DID_RENEW").utf8)
        let tampered = parts[0] + "." + Base64.encode(changed, alphabet: .url) + "." + parts[2]

        let cases: [(String, [UInt8], VerificationCheck.Name)] = [
            ("forged outer JWS", try body(sender(signer: other.jwsSigner()), transaction: transaction), .chain),
            ("forged nested JWS", try body(sender(), transaction: forgedTransaction), .signedTransactionInfo),
            ("another bundle id", try body(sender(bundle: "com.other.app"), transaction: otherBundleTransaction), .bundleIdentifier),
            ("another environment", try body(sender(environment: .sandbox), transaction: sandboxTransaction), .environment),
            ("another app Apple id", try body(sender(appAppleId: 1), transaction: transaction), .appAppleId),
            ("a nested token of another bundle", try body(sender(), transaction: otherBundleTransaction), .nestedAgreement),
            ("payload changed after signing", Array(#"{"signedPayload":"\#(tampered)"}"#.utf8), .signature),
            ("empty body", [], .body),
            ("not JSON", Array("signedPayload=eyJ".utf8), .body),
            ("a JSON array", Array("[]".utf8), .body),
            ("no signedPayload", Array(#"{"payload":"x"}"#.utf8), .body),
            ("signedPayload not a string", Array(#"{"signedPayload":5}"#.utf8), .body),
            ("duplicate keys", Array(#"{"signedPayload":"a","signedPayload":"b"}"#.utf8), .body),
            ("a token that is not a JWS", Array(#"{"signedPayload":"garbage"}"#.utf8), .parse),
            ("a bare token, not a body", Array(token.utf8), .body),
        ]
        for (name, bytes, check) in cases {
            guard case .rejected(let rejection) = receiving.receive(body: bytes) else {
                Issue.record("\(name) was not rejected")
                continue
            }
            #expect(rejection.check == check, "\(name): \(rejection)")
            // 5xx (Apple retries) when our configuration may be at fault; 400 when it is not
            // Apple's, or Apple's content is wrong (a nested token of another key or app).
            #expect(rejection.mayBeOurConfiguration == Self.retryable.contains(name), "\(name)")
        }
        // Only the genuine notification was ever stored.
        #expect(try store.notifications(.all).map(\.notificationUUID) == [genuine.notificationUUID])
    }

    /// A notification that verifies but names no notificationUUID cannot be deduplicated: rejected.
    @Test func rejectsANotificationWithoutUUID() throws {
        let store = try SQLiteNotificationStore(path: temporaryDatabase())
        let receiving = try receiver(store: store)
        let json =
            #"{"notificationType":"TEST","data":{"appAppleId":531412,"bundleId":"com.example.app","environment":"Production"},"version":"2.0","signedDate":1700000000000}"#
        let token = try PKIs.jws.get().jwsSigner().sign(payload: Array(json.utf8))
        guard case .rejected(let rejection) = receiving.receive(body: Array(#"{"signedPayload":"\#(token)"}"#.utf8)) else {
            Issue.record("accepted without a UUID")
            return
        }
        #expect(rejection.check == .notificationUUID)
        #expect(try store.notifications(.all).isEmpty)
    }
}
