import Foundation
import TestSupport
import Testing

/// `receipt-tool verify` on legacy iOS 6 transaction receipts: by default the bundled iTunes Store
/// CA and Apple Inc. Root, at the purchase date.
@Suite struct LegacyVerifyTests {
    static let files = [
        "legacy/venice-legacy-transaction-receipt.b64", "legacy/itunes-iap-legacy-transaction-receipt.b64",
        "legacy/base64encoded_unsupportedReceipt1.b64", "legacy/base64encoded_unsupportedReceipt2.b64",
    ].map(Fixtures.path)

    @Test func realReceiptsVerifyWithTheBundledCertificates() throws {
        let result = try ReceiptTool.run(["verify"] + Self.files)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("4 receipts: 4 valid, 0 invalid, 0 unreadable"))
        #expect(result.stdout.components(separatedBy: "VALID (transaction receipt, signature version 2)").count == 5)
        #expect(result.stdout.contains("✓ pinnedIntermediate   met (transactionReceiptV2 policy)"))
        #expect(result.stdout.contains("✓ leafMarker           met (transactionReceiptV2 policy)"))
        #expect(result.stdout.contains("validated at 2012-04-30T15:05:55.868Z"))
    }

    @Test func expectationsTimeAndAnchorsAreApplied() throws {
        let venice = Fixtures.path("legacy/venice-legacy-transaction-receipt.b64")
        let matching = try ReceiptTool.run([
            "verify", venice, "--bundle-id", "com.mindmobapp.MindMob", "--app-version", "20120427",
            "--product-id", "com.mindmobapp.download", "--environment", "sandbox",
        ])
        #expect(matching.status == 0)
        #expect(!matching.stdout.contains("not checked"))
        let wrongProduct = try ReceiptTool.run(["verify", venice, "--product-id", "com.other"])
        #expect(wrongProduct.status == 1)
        #expect(wrongProduct.stdout.contains("✗ productIdentifier"))
        let today = try ReceiptTool.run(["verify", venice, "--at", "now"])
        #expect(today.status == 1)
        #expect(today.stdout.contains("✗ chain"))
        let wrongAnchor = try ReceiptTool.run(["verify", venice, "--anchor", Fixtures.path("certs/frank4dd-cacert.der")])
        #expect(wrongAnchor.status == 1)
        #expect(wrongAnchor.stdout.contains("✗ chain"))
        let wrongIntermediate = try ReceiptTool.run(["verify", venice, "--itunes-ca", Fixtures.path("certs/AppleWWDRCA-G5.der")])
        #expect(wrongIntermediate.status == 1)
        let mock = try ReceiptTool.run(["verify", Fixtures.path("legacy/app-store-server-library-legacyTransaction.b64")])
        #expect(mock.status == 1)
        #expect(mock.stdout.contains("✗ signatureBlob"))
    }

    @Test func jsonLinesNameTheKind() throws {
        let result = try ReceiptTool.run(["verify", "--json", Self.files[2], Fixtures.path("base64encodedreceiptsample1.der")])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.count == 2)
        #expect(lines.first??["kind"] as? String == "transaction_receipt")
        #expect(lines.first??["transaction_id"] as? String == "1000000181298734")
        #expect(lines.first??["assurance"] as? String == "apple")
        #expect((lines.first??["chain"] as? [String])?.count == 3)
        #expect(lines.last??["bundle_id"] as? String == "com.revenuecat.sampleapp")
        #expect(lines.last??["kind"] as? String == "app_receipt")
        #expect(lines.last??["assurance"] as? String == "apple")
    }
}
