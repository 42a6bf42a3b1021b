// Promotional offer signatures (version 1, checked with the public key and with `openssl dgst`),
// the JWS signatures for offers, and transaction ids taken from receipts, verified first.

import Foundation
import Internals
import JSON
import JWS
import RMStore
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import StoreTesting
import TestSupport
import Testing

@testable import AppStoreServerAPI

@Suite("Offer signatures")
struct OfferSignatureTests {
    static let nonce = UUID(uuidString: "D3B2A1C0-5E4F-4A3B-9C8D-7E6F5A4B3C2D") ?? UUID()
    static let token = "5F8E7D6C-4B3A-4928-8716-0F1E2D3C4B5A"

    @Test func payload_isTheSevenPartsJoinedByInvisibleSeparators_uuidsLowercased() throws {
        let creator = try PromotionalOfferSignatureCreator(privateKey: try .generateP256(), keyID: "KEY123", bundleID: "com.example.app")
        let payload = creator.payload(
            productID: "com.example.monthly", offerID: "WINBACK", appAccountToken: Self.token, nonce: Self.nonce,
            timestamp: 1_700_000_000_123)
        let separator = "\u{2063}"
        #expect(Array(separator.utf8) == [0xE2, 0x81, 0xA3])
        #expect(
            payload
                == [
                    "com.example.app", "KEY123", "com.example.monthly", "WINBACK", "5f8e7d6c-4b3a-4928-8716-0f1e2d3c4b5a",
                    "d3b2a1c0-5e4f-4a3b-9c8d-7e6f5a4b3c2d", "1700000000123",
                ].joined(separator: separator))
        #expect(payload.split(separator: "\u{2063}").count == 7)
    }

    @Test func signature_verifiesWithThePublicKey_andWithOpenSSLDgst() throws {
        let key = try PrivateKey.generateP256()
        let creator = try PromotionalOfferSignatureCreator(privateKey: key, keyID: "KEY123", bundleID: "com.example.app")
        let signature = try creator.signature(
            productID: "com.example.monthly", offerID: "WINBACK", appAccountToken: Self.token, nonce: Self.nonce,
            timestamp: 1_700_000_000_123)
        let payload = creator.payload(
            productID: "com.example.monthly", offerID: "WINBACK", appAccountToken: Self.token, nonce: Self.nonce,
            timestamp: 1_700_000_000_123)
        let publicKey = try key.publicKey
        #expect(PromotionalOfferSignatureCreator.verify(signature: signature, payload: payload, publicKey: publicKey))
        // DER, not r ‖ s: a SEQUENCE of two INTEGERs.
        let der = try Base64.decode(Array(signature.utf8), rules: .strictStandard)
        #expect(der.first == 0x30 && der.count >= 8 && der.count <= 72)
        // Another payload, another key, or a flipped byte do not verify.
        #expect(!PromotionalOfferSignatureCreator.verify(signature: signature, payload: payload + "x", publicKey: publicKey))
        #expect(
            !PromotionalOfferSignatureCreator.verify(
                signature: signature, payload: payload, publicKey: try PrivateKey.generateP256().publicKey))
        var flipped = der
        flipped[flipped.count - 1] ^= 1
        #expect(!PromotionalOfferSignatureCreator.verify(signature: Base64.encode(flipped), payload: payload, publicKey: publicKey))
        #expect(!PromotionalOfferSignatureCreator.verify(signature: "not base64!", payload: payload, publicKey: publicKey))

        // OpenSSL's own command line agrees.
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("public.der")
        let signatureFile = directory.appendingPathComponent("signature.der")
        let payloadFile = directory.appendingPathComponent("payload.txt")
        try Data(publicKey.derEncoded).write(to: keyFile)
        try Data(der).write(to: signatureFile)
        try Data(payload.utf8).write(to: payloadFile)
        let verified = try openSSL([
            "dgst", "-sha256", "-verify", keyFile.path, "-keyform", "DER", "-signature", signatureFile.path, payloadFile.path,
        ])
        #expect(verified.status == 0)
        #expect(verified.output.contains("Verified OK"))
        try Data((payload + "x").utf8).write(to: payloadFile)
        let altered = try openSSL([
            "dgst", "-sha256", "-verify", keyFile.path, "-keyform", "DER", "-signature", signatureFile.path, payloadFile.path,
        ])
        #expect(altered.status != 0)
        #expect(altered.output.contains("Verification failure"))
    }

    @Test func aKeyThatIsNotP256_isRefused() throws {
        #expect(throws: AppStoreServerAPIError.self) {
            try PromotionalOfferSignatureCreator(privateKey: try .generateP384(), keyID: "K", bundleID: "com.example.app")
        }
        #expect(throws: AppStoreServerAPIError.self) {
            try AppStoreConnectKey(issuerID: "i", keyID: "k", privateKey: try .generateRSA(bits: 1024))
        }
        #expect(throws: AppStoreServerAPIError.self) { try AppStoreConnectKey(issuerID: "i", keyID: "k", p8: "not a key") }
    }

    @Test func jwsSignatures_promotionalOfferV2_andIntroductoryOfferEligibility_verify() throws {
        let fixture = try APIKeyFixture()
        let creator = JWSSignatureCreator(
            key: try fixture.key(), bundleID: "com.example.app", clock: { Date(timeIntervalSince1970: 1_750_000_000) })
        let publicKey = try fixture.privateKey.publicKey
        let promotional = try creator.promotionalOffer(
            productID: "com.example.monthly", offerIdentifier: "WINBACK", transactionID: "2000000000000001")
        let expectations = OfferJWSExpectations(
            keyID: APIKeyFixture.keyID, issuerID: APIKeyFixture.issuerID, bundleID: "com.example.app",
            audience: JWSSignatureCreator.promotionalOfferAudience)
        #expect(JWSSignatureCreator.problems(with: promotional, publicKey: publicKey, expecting: expectations).isEmpty)
        let jwt = try SignedJWT(promotional)
        #expect(jwt.string("aud") == "promotional-offer")
        #expect(jwt.string("productId") == "com.example.monthly")
        #expect(jwt.string("offerIdentifier") == "WINBACK")
        #expect(jwt.string("transactionId") == "2000000000000001")
        #expect(jwt.integer("iat") == 1_750_000_000)
        #expect(jwt.keyID == APIKeyFixture.keyID && jwt.type == "JWT" && jwt.algorithm == .es256)
        // Each signature has its own nonce.
        let again = try SignedJWT(try creator.promotionalOffer(productID: "com.example.monthly", offerIdentifier: "WINBACK"))
        #expect(again.string("nonce") != jwt.string("nonce"))
        #expect(again.claims["transactionId"] == nil)

        let intro = try creator.introductoryOfferEligibility(
            productID: "com.example.monthly", allowIntroductoryOffer: false, transactionID: "2000000000000001")
        var introExpectations = expectations
        introExpectations.audience = JWSSignatureCreator.introductoryOfferEligibilityAudience
        #expect(JWSSignatureCreator.problems(with: intro, publicKey: publicKey, expecting: introExpectations).isEmpty)
        #expect(try SignedJWT(intro).claims["allowIntroductoryOffer"] == .bool(false))
        // The wrong audience, key or bundle id are reported.
        #expect(
            JWSSignatureCreator.problems(with: intro, publicKey: publicKey, expecting: expectations) == [
                "aud is introductory-offer-eligibility, not promotional-offer"
            ])
        let stranger = try PrivateKey.generateP256().publicKey
        #expect(
            JWSSignatureCreator.problems(with: intro, publicKey: stranger, expecting: introExpectations) == [
                "the ES256 signature does not verify with the key"
            ])
        #expect(!JWSSignatureCreator.problems(with: "a.b.c", publicKey: publicKey, expecting: introExpectations).isEmpty)
    }

    /// Runs the system `openssl`.
    func openSSL(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.runRetryingBadDescriptor()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}

@Suite("Transaction ids from receipts")
struct ReceiptUtilityTests {
    @Test func appReceipt_verifiedFirst_thenItsFirstTransactionID() async throws {
        let pki = try PKIs.apple.get()
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receiptURL = directory.appendingPathComponent("receipt")
        let device = try #require(DeviceIdentifier("956328D9-CC6A-47F4-BE40-6953FB0AB6C7"))
        let (bytes, firstID) = try await MainActor.run {
            let store = SimulatedAppStore(
                catalog: Products.catalog, receiptURL: receiptURL,
                receiptIssuer: SignedReceiptIssuer(
                    signer: pki.signer(), deviceIdentifier: device),
                deliversAutomatically: false)
            store.add(.init(productIdentifier: Products.level))
            store.add(.init(productIdentifier: Products.monthly))
            store.processAllEvents()
            return (try [UInt8](Data(contentsOf: receiptURL)), store.purchaseHistory.first?.transactionIdentifier)
        }
        let verifier = AppReceiptVerifier(anchors: [pki.root])
        let id = try ReceiptUtility.transactionID(fromAppReceipt: bytes, verifier: verifier)
        #expect(id != nil && id == firstID)
        #expect(try ReceiptUtility.unverifiedTransactionID(fromAppReceipt: bytes) == firstID)
        // Another anchor: refused, with the check that failed.
        let wrong = AppReceiptVerifier(anchors: [try PKIs.other.get().root])
        #expect {
            try ReceiptUtility.transactionID(fromAppReceipt: bytes, verifier: wrong)
        } throws: { error in
            let error = error as? ReceiptUtilityError
            return error?.code == .notVerified && error?.failedCheck?.name == .chain
        }
        // Expectations apply too.
        #expect(throws: ReceiptUtilityError.self) {
            try ReceiptUtility.transactionID(
                fromAppReceipt: bytes, verifier: verifier, expecting: ReceiptExpectations(bundleIdentifier: "com.example.other"))
        }
        #expect {
            try ReceiptUtility.transactionID(fromAppReceipt: Array("garbage".utf8), verifier: verifier)
        } throws: { ($0 as? ReceiptUtilityError)?.failedCheck?.name == .parse }
        #expect(throws: ReceiptUtilityError.self) { try ReceiptUtility.unverifiedTransactionID(fromAppReceipt: Array("garbage".utf8)) }
    }

    @Test func xcodeReceipts_asApplesReceiptUtilityReadsThem() throws {
        // Apple's tests: the receipt with a transaction gives "0", the empty one nil.
        let withTransaction = try Fixtures.bytes("receipt-xcode-with-purchases.der")
        #expect(try ReceiptUtility.unverifiedTransactionID(fromAppReceipt: withTransaction) == "0")
        #expect(try ReceiptUtility.unverifiedTransactionID(fromAppReceipt: try Fixtures.bytes("xcode-app-receipt-empty.der")) == nil)
        // Verified against the App Store roots, an Xcode receipt is refused.
        #expect(throws: ReceiptUtilityError.self) {
            try ReceiptUtility.transactionID(fromAppReceipt: withTransaction, verifier: try AppReceiptVerifier.appStore())
        }
    }

    @Test func transactionReceipts_verifiedFirst_thenTheirTransactionID() throws {
        let verifier = TransactionReceiptVerifier(intermediate: try Fixtures.iTunesStoreCA(), anchors: [try Fixtures.appleRoot()])
        for file in Fixtures.legacyFiles {
            let bytes = try Fixtures.bytes(file)
            let expected = try TransactionReceipt(bytes).purchaseInfo.transactionIdentifier
            #expect(expected != nil)
            #expect(try ReceiptUtility.transactionID(fromTransactionReceipt: bytes, verifier: verifier) == expected, "\(file)")
            #expect(try ReceiptUtility.unverifiedTransactionID(fromTransactionReceipt: bytes) == expected)
        }
        // Apple's mock legacy receipt carries no signature: read unverified it gives Apple's
        // "33993399"; verified, it is refused.
        let mock = try Fixtures.bytes(Fixtures.mockLegacyReceipt)
        #expect(try ReceiptUtility.unverifiedTransactionID(fromTransactionReceipt: mock) == "33993399")
        #expect {
            try ReceiptUtility.transactionID(fromTransactionReceipt: mock, verifier: verifier)
        } throws: { ($0 as? ReceiptUtilityError)?.code == .notVerified }
    }
}

@Suite("Retry-After and backoff")
struct RetryTimingTests {
    @Test func retryAfter_secondsOrHTTPDate() {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.seconds("1", now: now) == 1)
        #expect(RetryAfter.seconds(" 120 ", now: now) == 120)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:47 GMT", now: now) == 10)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:27 GMT", now: now) == 0)  // in the past: at once
        for bad in [
            "", "-1", "1.5", "soon", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun 06 Nov 1994 08:49:37 GMT",
        ] {
            #expect(RetryAfter.seconds(bad, now: now) == nil, "\(bad)")
        }
        #expect(RetryAfter.seconds(String(repeating: "9", count: 40), now: now) ?? 0 > 60)
    }

    @Test func retryAfter_applesUnixMilliseconds_delaySeconds_andHTTPDate_areToldApartByMagnitude() {
        let now = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28
        let nowMilliseconds: UInt64 = 1_780_000_000_000
        // Apple's form: a UNIX time in milliseconds, the wait is that time minus now.
        #expect(RetryAfter.seconds(String(nowMilliseconds + 1_500), now: now) == 1.5)
        #expect(RetryAfter.seconds(String(nowMilliseconds + 60_000), now: now) == 60)
        #expect(RetryAfter.seconds(String(nowMilliseconds - 5_000), now: now) == 0)  // in the past: at once
        // The boundary: 10^11 and above are milliseconds (March 1973), below are delay seconds.
        #expect(RetryAfter.unixMillisecondsThreshold == 100_000_000_000)
        #expect(RetryAfter.seconds("99999999999", now: now) == 99_999_999_999)
        #expect(RetryAfter.seconds("100000000000", now: now) == 0)
        #expect(RetryAfter.seconds("100000000000", now: Date(timeIntervalSince1970: 99_999_998)) == 2)
        // Delay seconds, small and large.
        #expect(RetryAfter.seconds("0", now: now) == 0)
        #expect(RetryAfter.seconds("3600", now: now) == 3600)
        #expect(RetryAfter.seconds("1780000000", now: now) == 1_780_000_000)  // UNIX seconds are not a form: a long delay
        // An HTTP date.
        #expect(RetryAfter.seconds("Thu, 28 May 2026 20:26:50 GMT", now: now) == 10)
        // 19 digits are still a time (far away); more are past any time: too long for any policy.
        #expect((RetryAfter.seconds("9999999999999999999", now: now) ?? 0) > 1e14)
        #expect(RetryAfter.seconds("10000000000000000000", now: now) == RetryAfter.beyondAnyTime)
        #expect(RetryAfter.seconds(String(nowMilliseconds) + ".5", now: now) == nil)
    }

    @Test func backoff_growsAndIsCapped() {
        let policy = RetryPolicy(maximumAttempts: 10, initialBackoff: 0.5, multiplier: 2, maximumBackoff: 3, jitter: 0)
        #expect((1...5).map { policy.backoff(after: $0) } == [0.5, 1, 2, 3, 3])
        let jittered = RetryPolicy(initialBackoff: 1, jitter: 0.2)
        for _ in 0..<50 { #expect((1.0..<1.2).contains(jittered.backoff(after: 1))) }
        #expect(RetryPolicy(maximumAttempts: 0).attempts == 1)
        #expect(RetryPolicy(maximumAttempts: 1_000_000).attempts == 100)
        #expect(RetryPolicy(initialBackoff: .infinity, maximumBackoff: 8, jitter: 0).backoff(after: 3) == 8)
    }
}
