import CryptoBaselines
import Foundation
import JSON
import ReceiptCrypto
import ReceiptVerification
import Receipts
import TestSupport
import Testing

/// The receipts scripts/make-test-receipts.sh made with `receipt-tool pki` and `receipt-tool make`
/// (TestReceipts/generated/): each verifies against its own PKI, at its creation date, bound to
/// the script's device, and against nothing else.
@Suite struct GeneratedFixtureTests {
    func device() throws -> DeviceIdentifier { try #require(DeviceIdentifier("E3C1C4D2-6F1A-4F53-9C3B-2A7E5D8B9F10")) }

    func anchor(_ path: String) throws -> TrustAnchors {
        try TrustAnchors(contentsOfFile: Fixtures.root.appendingPathComponent("generated/" + path).path)
    }

    func expectations() throws -> ReceiptExpectations {
        ReceiptExpectations(bundleIdentifier: "com.rmstore.example", appVersion: "42", deviceIdentifier: try device())
    }

    @Test(arguments: [
        ("appstore-sha1.der", "pki-sha1/root.pem", DigestAlgorithm.sha1, 2),
        ("appstore-sha256.der", "pki/root.pem", .sha256, 2),
        ("appstore-many-purchases.der", "pki/root.pem", .sha256, 150),
    ])
    func appStoreLayoutVerifiesWithItsRoot(name: String, root: String, digest: DigestAlgorithm, purchases: Int) throws {
        let bytes = try Fixtures.bytes("generated/" + name)
        let verdict = AppReceiptVerifier(anchors: try anchor(root)).verify(bytes, expecting: try expectations())
        #expect(verdict.isValid, "\(verdict)")
        #expect(verdict.check(.digestAlgorithm)?.reason == "\(digest)")
        #expect(verdict.receipt?.inAppPurchases.count == purchases)
        #expect(verdict.receipt?.envelope?.usesBERForms == false)
        #expect(verdict.chain?.count == 3)
        // The other PKI's root, Apple's roots and the StoreKit-like certificate all refuse it.
        let other = root.hasPrefix("pki-sha1") ? "pki/root.pem" : "pki-sha1/root.pem"
        for anchors in [try anchor(other), try TrustAnchors.appleRoots, try anchor("storekit/storekit.pem")] {
            #expect(AppReceiptVerifier(anchors: anchors).verify(bytes).failed(.chain))
        }
        let pkcs7 = OpenSSLPKCS7Verifier.verify(
            pkcs7: bytes, anchors: try anchor(root).certificates, at: try #require(verdict.validationTime))
        #expect(pkcs7.isValid)
    }

    @Test func xcodeLayoutVerifiesWithItsStoreKitCertificate() throws {
        let bytes = try Fixtures.bytes("generated/xcode-ber.der")
        let storeKit = try anchor("storekit/storekit.pem")
        let verdict = AppReceiptVerifier(anchors: storeKit, policy: .xcode).verify(bytes, expecting: try expectations())
        #expect(verdict.isValid, "\(verdict)")
        #expect(verdict.receipt?.envelope?.usesBERForms == true)
        #expect(verdict.receipt?.receiptType == "Xcode")
        #expect(verdict.passed(.expirationDate))
        #expect(AppReceiptVerifier(anchors: storeKit, policy: .appStore).verify(bytes).failed(.chainLength))
        #expect(try AppReceiptVerifier.xcode().verify(bytes).failed(.chain), "Xcode's real certificate did not sign it")
    }

    @Test func generatedReceiptsAreBoundToTheScriptsDevice() throws {
        let other = try #require(DeviceIdentifier("E3C1C4D2-6F1A-4F53-9C3B-2A7E5D8B9F11"))
        let verdict = AppReceiptVerifier(anchors: try anchor("pki/root.pem"))
            .verify(try Fixtures.bytes("generated/appstore-sha256.der"), expecting: ReceiptExpectations(deviceIdentifier: other))
        #expect(verdict.failures.map(\.name) == [.deviceHash])
    }

    @Test func descriptionsRoundTripThroughTheSignedReceipts() throws {
        let description = try JSONValue.parse(Fixtures.bytes("generated/descriptions/appstore.json"))
        var expected = try AppReceipt(json: description)
        let signed = try AppReceipt(Fixtures.bytes("generated/appstore-sha256.der"))
        expected.sha1Hash = signed.sha1Hash  // the placeholder that `make --device-id` replaced
        #expect(signed == expected)
        #expect(signed.sha1Hash == signed.expectedHash(for: try device()))
    }
}
