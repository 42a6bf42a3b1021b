import Foundation
import HTTPServer
import Internals
import JSON
import ReceiptCrypto
import ReceiptServer
import ReceiptSigning
import ReceiptVerification
import Receipts
import TestSupport
import Testing
import VerifyReceipt

/// The endpoint's answers, without sockets.
@Suite struct VerifyReceiptEndpointTests {
    /// The endpoint `serve` runs by default: the bundled Apple anchors for both receipt kinds.
    static func endpoint(
        _ environment: VerifyReceiptEnvironment, sharedSecret: String? = nil, now: Date = Date(timeIntervalSince1970: 1_780_000_000)
    ) throws -> VerifyReceiptEndpoint {
        try VerifyReceiptEndpoint.apple(configuration: .init(environment: environment, sharedSecret: sharedSecret, clock: { now }))
    }

    static func body(_ receiptText: [UInt8], password: String? = nil) -> [UInt8] {
        VerifyReceiptRequest(receipt: receiptText, password: password).jsonBody
    }

    /// The real receipts (all sandbox): 0 on a sandbox endpoint, 21007 on a production endpoint.
    @Test(arguments: Fixtures.legacyFiles)
    func realReceiptsRouteLikeApple(_ file: String) throws {
        let receipt = try TransactionReceipt(Fixtures.bytes(file))
        let sandbox = try Self.endpoint(.sandbox)
        let answer = sandbox.verifyReceipt(body: Self.body(receipt.text))
        let isSubscription = receipt.purchaseInfo.expiresDate != nil
        // The one subscription (expired in 2015) is 21006 with the receipt, like Apple's iOS 6 endpoint.
        #expect(answer.status == (isSubscription ? .subscriptionExpired : .valid), "\(answer.reason)")
        let response = try VerifyReceiptResponse(body: answer.body)
        #expect(response.environment == "Sandbox")
        #expect(try response.purchaseInfo()?.transactionIdentifier == receipt.purchaseInfo.transactionIdentifier)
        #expect(try Self.endpoint(.production).verifyReceipt(body: Self.body(receipt.text)).status == .sandboxReceiptOnProduction)
        // The base64 the device sent works as well as the text.
        #expect(
            sandbox.verifyReceipt(body: VerifyReceiptRequest(receiptData: Base64.encode(receipt.text)).jsonBody).status
                == answer.status)
    }

    @Test func subscriptionBeforeItsExpiryIsValid() throws {
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/base64encoded_unsupportedReceipt1.b64"))
        let during = try Self.endpoint(.sandbox, now: Date(timeIntervalSince1970: 1_448_000_000))
        let answer = during.verifyReceipt(body: Self.body(receipt.text))
        #expect(answer.status == .valid)
        let response = try VerifyReceiptResponse(body: answer.body)
        #expect(response.latestReceiptInfo.count == 1)
        #expect(response.latestReceipt == receipt.base64Encoded)
    }

    @Test func productionReceiptsOnTheSandboxEndpointGet21008() throws {
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64"))
        // `environment` is not signed: relabelling keeps the signature valid.
        for label in ["Production", nil] {
            let relabelled = try TransactionReceipt(
                signatureBlob: receipt.signatureBlob, purchaseInfoData: receipt.purchaseInfoData, environment: label)
            #expect(try Self.endpoint(.sandbox).verifyReceipt(body: Self.body(relabelled.text)).status == .productionReceiptOnSandbox)
            let production = try Self.endpoint(.production).verifyReceipt(body: Self.body(relabelled.text))
            #expect(production.status == .valid)
            #expect(try VerifyReceiptResponse(body: production.body).environment == "Production")
        }
    }

    @Test func badRequestsGetApplesStatuses() throws {
        let endpoint = try Self.endpoint(.sandbox)
        func status(_ body: [UInt8]) -> Int { endpoint.verifyReceipt(body: body).status.rawValue }
        #expect(status(Array("nonsense".utf8)) == 21000)
        #expect(status(Array("[]".utf8)) == 21000)
        #expect(status([]) == 21000)
        #expect(status(Array("{}".utf8)) == 21002)
        #expect(status(Array(#"{"receipt-data": "!!!"}"#.utf8)) == 21002)
        #expect(status(Array(#"{"receipt-data": "QUJDRA=="}"#.utf8)) == 21002)
        #expect(status(VerifyReceiptRequest(receipt: Array("{\"purchase-info\" = \"!\";}".utf8)).jsonBody) == 21002)
        // Well-formed but unauthenticated: the unsigned mock, a tampered receipt.
        #expect(
            status(
                VerifyReceiptRequest(receiptData: String(decoding: try Fixtures.bytes(Fixtures.mockLegacyReceipt), as: UTF8.self)).jsonBody)
                == 21003)
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/itunes-iap-legacy-transaction-receipt.b64"))
        let tampered = try Fixtures.withQuantityTwo(receipt)
        #expect(tampered.purchaseInfo.quantity == 2)
        #expect(status(Self.body(tampered.text)) == 21003)
        // Each answer's body is `{"status":N}` exactly.
        #expect(endpoint.verifyReceipt(body: Array("{}".utf8)).body == Array(#"{"status":21002}"#.utf8))
    }

    @Test func sharedSecret() throws {
        let subscription = try TransactionReceipt(Fixtures.bytes("legacy/base64encoded_unsupportedReceipt1.b64"))
        let consumable = try TransactionReceipt(Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64"))
        let endpoint = try Self.endpoint(.sandbox, sharedSecret: "secret", now: Date(timeIntervalSince1970: 1_448_000_000))
        #expect(endpoint.verifyReceipt(body: Self.body(subscription.text, password: "secret")).status == .valid)
        #expect(endpoint.verifyReceipt(body: Self.body(subscription.text, password: "wrong")).status == .sharedSecretMismatch)
        #expect(endpoint.verifyReceipt(body: Self.body(subscription.text)).status == .sharedSecretMismatch)
        #expect(endpoint.verifyReceipt(body: Self.body(consumable.text)).status == .valid)
        #expect(endpoint.verifyReceipt(body: Self.body(consumable.text, password: "wrong")).status == .sharedSecretMismatch)
    }

    @Test func routes() throws {
        let endpoint = try Self.endpoint(.production)
        #expect(endpoint.respond(to: HTTPRequest(method: "GET", target: "/verifyReceipt")).status == 405)
        #expect(endpoint.respond(to: HTTPRequest(method: "GET", target: "/verifyReceipt")).headers.contains(HTTPHeader("Allow", "POST")))
        #expect(endpoint.respond(to: HTTPRequest(method: "POST", target: "/health")).status == 405)
        #expect(endpoint.respond(to: HTTPRequest(method: "POST", target: "/nowhere")).status == 404)
        let health = endpoint.respond(to: HTTPRequest(method: "GET", target: "/health?probe=1"))
        #expect(health.status == 200)
        #expect(String(decoding: health.body, as: UTF8.self) == #"{"status":"ok","environment":"Production"}"#)
        let post = endpoint.respond(to: HTTPRequest(method: "POST", target: "/verifyReceipt", body: Array("{}".utf8)))
        #expect(post.status == 200)
        #expect(post.headers.contains(HTTPHeader("Content-Type", "application/json")))
    }

    // MARK: - App receipts

    /// End to end: the endpoint's whole response for RevenueCat's sample1 (with Apple's request
    /// time) matches Apple's own response field by field: `receipt` entirely (request_date
    /// included), every `in_app` record, and every `latest_receipt_info` record except
    /// `subscription_group_identifier`, which the receipt does not contain.
    @Test func appReceiptResponseMatchesApplesSample1() throws {
        let der = try Fixtures.bytes("base64encodedreceiptsample1.der")
        let endpoint = try Self.endpoint(.sandbox, now: ReceiptDate.date(milliseconds: 1_595_440_486_402))
        let answer = endpoint.verifyReceipt(body: VerifyReceiptRequest(receipt: der).jsonBody)
        #expect(answer.status == .valid, "\(answer.reason)")
        let ours = try JSONValue.parse(answer.body)
        let apple = try JSONValue.parse(Fixtures.bytes("json/verifyReceiptSample1.json"))
        #expect(ours["status"] == apple["status"])
        #expect(ours["environment"] == apple["environment"])
        #expect(ours["receipt"] == apple["receipt"])
        let appleLatest = try #require(apple["latest_receipt_info"]?.arrayValue)
        let ourLatest = try #require(ours["latest_receipt_info"]?.arrayValue)
        #expect(appleLatest.count == ourLatest.count)
        for (a, o) in zip(appleLatest, ourLatest) {
            guard case .object(let members) = a else { continue }
            #expect(o == .object(members.filter { $0.0 != "subscription_group_identifier" }))
        }
        #expect(ours["latest_receipt"] == .string(Base64.encode(der)))
        // On the production endpoint the same receipt is a sandbox receipt: 21007.
        #expect(
            try Self.endpoint(.production).verifyReceipt(body: VerifyReceiptRequest(receipt: der).jsonBody).status
                == .sandboxReceiptOnProduction)
        // exclude-old-transactions keeps the newest record of the one subscription.
        let excluded = endpoint.verifyReceipt(body: VerifyReceiptRequest(receipt: der, excludeOldTransactions: true).jsonBody)
        #expect(try VerifyReceiptResponse(body: excluded.body).latestReceiptInfo.count == 1)
    }

    @Test func damagedAppReceipts() throws {
        let endpoint = try Self.endpoint(.sandbox)
        let der = try Fixtures.bytes("base64encodedreceiptsample1.der")
        func status(_ bytes: [UInt8]) -> VerifyReceiptStatus {
            endpoint.verifyReceipt(body: VerifyReceiptRequest(receipt: bytes).jsonBody).status
        }
        // One payload byte changed (inside the bundle id): parses, but the signature fails.
        let bundle = Array("com.revenuecat.sampleapp".utf8)
        let at = try #require((0...(der.count - bundle.count)).first { Array(der[$0..<($0 + bundle.count)]) == bundle })
        var tampered = der
        tampered[at] = UInt8(ascii: "C")
        #expect(status(tampered) == .notAuthenticated)
        // Truncated: does not parse.
        #expect(status(Array(der.prefix(der.count / 2))) == .malformedReceiptData)
        // A real receipt signed by Xcode's StoreKit test certificate is not trusted by Apple's anchors.
        #expect(status(try Fixtures.bytes("receipt-xcode.der")) == .notAuthenticated)
    }

    /// apple-purchase-receipt-verifier's expectations for a verifyReceipt-compatible endpoint, with
    /// its fake PKI (policy of its verifier: a chain of 3 and the leaf marker; its fake intermediate
    /// has no WWDR marker): production types are 0 on production and 21008 on sandbox; sandbox
    /// and untyped receipts are 21007 on production and 0 on sandbox; a foreign receipt is 21003.
    @Test func syntheticReceiptsRouteAsTheirProvenanceStates() throws {
        let policy = VerificationPolicy.custom([ChainLengthPolicy(exactly: 3), CertificateExtensionPolicy.appleReceiptSigningLeaf])
        let anchors = try TrustAnchors(derOrPEM: Fixtures.bytes("synthetic/receipt-root.der"))
        func endpoint(_ environment: VerifyReceiptEnvironment) throws -> VerifyReceiptEndpoint {
            VerifyReceiptEndpoint(
                configuration: .init(environment: environment),
                appReceiptVerifier: AppReceiptVerifier(anchors: anchors, policy: policy),
                transactionReceiptVerifier: try TransactionReceiptVerifier.apple())
        }
        let production = try endpoint(.production)
        let sandbox = try endpoint(.sandbox)
        let expectations: [(String, VerifyReceiptStatus, VerifyReceiptStatus)] = [
            ("receipt-type-production.der", .valid, .productionReceiptOnSandbox),
            ("receipt-type-vpp.der", .valid, .productionReceiptOnSandbox),
            ("receipt-type-vpp-sandbox.der", .sandboxReceiptOnProduction, .valid),
            ("receipt-no-type.der", .sandboxReceiptOnProduction, .valid),
            ("receipt.der", .sandboxReceiptOnProduction, .valid),
            ("receipt-foreign.der", .notAuthenticated, .notAuthenticated),
        ]
        for (file, onProduction, onSandbox) in expectations {
            let body = VerifyReceiptRequest(receipt: try Fixtures.bytes("synthetic/" + file)).jsonBody
            let productionAnswer = production.verifyReceipt(body: body)
            let sandboxAnswer = sandbox.verifyReceipt(body: body)
            #expect(productionAnswer.status == onProduction, "\(file) on production: \(productionAnswer.reason)")
            #expect(sandboxAnswer.status == onSandbox, "\(file) on sandbox: \(sandboxAnswer.reason)")
        }
        // The valid synthetic receipt's JSON: date triplets, numbers as strings.
        let answer = sandbox.verifyReceipt(body: VerifyReceiptRequest(receipt: try Fixtures.bytes("synthetic/receipt.der")).jsonBody)
        let json = try JSONValue.parse(answer.body)
        let vip = try #require(json["receipt"]?["in_app"]?.arrayValue?.first { $0["product_id"] == .string("com.example.app.vip") })
        #expect(vip["expires_date"] == .string("2030-02-01 09:30:00 Etc/GMT"))
        #expect(vip["expires_date_ms"] == .string("1896168600000"))
        #expect(vip["web_order_line_item_id"] == .string("42"))
    }
}
