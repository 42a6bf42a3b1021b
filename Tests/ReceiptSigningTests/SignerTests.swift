import ASN1
import CryptoBaselines
import Foundation
import ReceiptCrypto
import ReceiptSigning
import Receipts
import Testing

/// The receipt builder's output is what OpenSSL and our parser both accept.
@Suite struct SignerTests {
    static func sampleReceipt() -> AppReceipt {
        var receipt = AppReceipt()
        receipt.receiptType = "ProductionSandbox"
        receipt.bundleIdentifier = "com.example.app"
        receipt.bundleIdentifierData = [0x0C, 15] + Array("com.example.app".utf8)
        receipt.appVersion = "1.2.3"
        receipt.originalAppVersion = "1.0"
        receipt.creationDate = Date(timeIntervalSince1970: 1_722_945_600)
        receipt.opaqueValue = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
        receipt.sha1Hash = [UInt8](repeating: 7, count: 20)
        var purchase = InAppPurchase()
        purchase.quantity = 1
        purchase.productIdentifier = "com.example.app.pro"
        purchase.transactionIdentifier = "2000000000000001"
        purchase.purchaseDate = Date(timeIntervalSince1970: 1_722_945_000)
        purchase.webOrderLineItemID = 1_000_000_054_042_695
        receipt.inAppPurchases = [purchase]
        return receipt
    }

    @Test(arguments: [ReceiptLayout.appStore, .xcode], [DigestAlgorithm.sha1, .sha256])
    func signedReceiptsVerifyWithOpenSSLAndParseBack(layout: ReceiptLayout, digest: DigestAlgorithm) throws {
        let pki = try TestPKI.generate()
        let receipt = Self.sampleReceipt()
        let bytes = try pki.signer(digest: digest).sign(receipt, layout: layout)
        let outcome = OpenSSLPKCS7Verifier.verify(pkcs7: bytes, anchors: [pki.root], at: Date(timeIntervalSince1970: 1_722_945_600))
        #expect(outcome.isValid, "\(outcome.failureReason ?? "")")
        let parsed = try AppReceipt(bytes)
        #expect(parsed == receipt, "parsed receipt differs from the one signed")
        #expect(outcome.content.map { $0 == Array(parsed.payload) } == true)
        #expect(parsed.envelope?.usesBERForms == (layout == .xcode))
        #expect(parsed.envelope?.certificates.count == 3)
        if layout == .appStore { _ = try ASN1Tree.depthFirstNodes(bytes[...], rules: .der) }
        let other = try TestPKI.generate()
        #expect(
            !OpenSSLPKCS7Verifier.verify(pkcs7: bytes, anchors: [other.root], at: Date(timeIntervalSince1970: 1_722_945_600)).isValid)
    }

    @Test func signedAttributesAreAcceptedByOpenSSL() throws {
        let pki = try TestPKI.generate()
        var signer = pki.signer()
        signer.signedAttributes = true
        let bytes = try signer.sign(Self.sampleReceipt())
        #expect(OpenSSLPKCS7Verifier.verify(pkcs7: bytes, anchors: [pki.root], at: Date(timeIntervalSince1970: 1_722_945_600)).isValid)
        let envelope = try ReceiptEnvelope(bytes)
        #expect(envelope.signers[0].messageDigest.map(Array.init) == (try Digest.hash(.sha256, Array(envelope.payload))))
    }
}
