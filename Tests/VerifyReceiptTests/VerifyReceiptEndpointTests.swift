import Foundation
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import Testing
import VerifyReceipt

/// The endpoint's answers, without sockets.
@Suite struct VerifyReceiptEndpointTests {
    static func endpoint(
        _ environment: VerifyReceiptEnvironment, sharedSecret: String? = nil, now: Date = Date(timeIntervalSince1970: 1_780_000_000)
    ) throws -> VerifyReceiptEndpoint {
        VerifyReceiptEndpoint(
            configuration: .init(environment: environment, sharedSecret: sharedSecret, clock: { now }),
            transactionReceiptVerifier: LegacyReceiptVerifier(intermediate: try Vectors.iTunesStoreCA, anchors: [try Vectors.appleRoot]))
    }

    static func body(_ receiptText: [UInt8], password: String? = nil) -> [UInt8] {
        VerifyReceiptRequest(receipt: receiptText, password: password).jsonBody
    }

    /// The real receipts (all sandbox): 0 on a sandbox endpoint, 21007 on a production endpoint.
    @Test(arguments: Vectors.legacyFiles)
    func realReceiptsRouteLikeApple(_ file: String) throws {
        let receipt = try TransactionReceipt(Vectors.bytes(file))
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
        #expect(sandbox.verifyReceipt(body: VerifyReceiptRequest(receiptData: Base64.encode(receipt.text)).jsonBody).status
            == answer.status)
    }

    @Test func subscriptionBeforeItsExpiryIsValid() throws {
        let receipt = try TransactionReceipt(Vectors.bytes("legacy/base64encoded_unsupportedReceipt1.b64"))
        let during = try Self.endpoint(.sandbox, now: Date(timeIntervalSince1970: 1_448_000_000))
        let answer = during.verifyReceipt(body: Self.body(receipt.text))
        #expect(answer.status == .valid)
        let response = try VerifyReceiptResponse(body: answer.body)
        #expect(response.latestReceiptInfo.count == 1)
        #expect(response.latestReceipt == receipt.base64Encoded)
    }

    @Test func productionReceiptsOnTheSandboxEndpointGet21008() throws {
        let receipt = try TransactionReceipt(Vectors.bytes("legacy/venice-legacy-transaction-receipt.b64"))
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
        #expect(status(VerifyReceiptRequest(receiptData: String(decoding: try Vectors.bytes(Vectors.mockLegacyReceipt), as: UTF8.self)).jsonBody)
            == 21003)
        let receipt = try TransactionReceipt(Vectors.bytes("legacy/itunes-iap-legacy-transaction-receipt.b64"))
        let tampered = try Vectors.withQuantityTwo(receipt)
        #expect(tampered.purchaseInfo.quantity == 2)
        #expect(status(Self.body(tampered.text)) == 21003)
        // Each answer's body is `{"status":N}` exactly.
        #expect(endpoint.verifyReceipt(body: Array("{}".utf8)).body == Array(#"{"status":21002}"#.utf8))
    }

    @Test func sharedSecret() throws {
        let subscription = try TransactionReceipt(Vectors.bytes("legacy/base64encoded_unsupportedReceipt1.b64"))
        let consumable = try TransactionReceipt(Vectors.bytes("legacy/venice-legacy-transaction-receipt.b64"))
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
}
