import Foundation
import TestSupport
import Testing

/// `receipt-tool dump` on legacy iOS 6 transaction receipts.
@Suite struct LegacyDumpTests {
    @Test(arguments: [
        ("legacy/venice-legacy-transaction-receipt.b64", "1000000046178817", "com.mindmobapp.MindMob", "6514914DD95804B5"),
        ("legacy/itunes-iap-legacy-transaction-receipt.b64", "1000000056161764", "com.vanillabreeze.igunbattle", "6514914DD95804B5"),
        ("legacy/base64encoded_unsupportedReceipt1.b64", "1000000181298734", "com.mbaasy.ios.demo", "1BA9E3E3C0866FCB"),
        ("legacy/base64encoded_unsupportedReceipt2.b64", "1000000181492557", "com.es.Purchaser", "1BA9E3E3C0866FCB"),
    ])
    func dumpPrintsTransactionReceipts(_ file: String, _ transaction: String, _ bundle: String, _ serial: String) throws {
        let result = try ReceiptTool.run(["dump", Fixtures.path(file)])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("Transaction receipt (iOS 6"))
        #expect(result.stdout.contains("Transaction id              \(transaction)"))
        #expect(result.stdout.contains("Bundle id (bid)             \(bundle)"))
        #expect(result.stdout.contains("version 2"))
        #expect(result.stdout.contains("PurchaseReceiptCertificate"))
        #expect(result.stdout.contains("Serial                    \(serial)"))
        #expect(result.stdout.contains("Sandbox (not covered by the signature)"))
        #expect(result.stderr.isEmpty)
    }

    @Test func dumpJSONIsTheIOS6ReceiptObject() throws {
        let result = try ReceiptTool.run(["dump", "--json", Fixtures.path("legacy/base64encoded_unsupportedReceipt1.b64")])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(object?["bid"] as? String == "com.mbaasy.ios.demo")
        #expect(object?["expires_date"] as? String == "1448346881000")
        #expect(object?["expires_date_formatted"] as? String == "2015-11-24 06:34:41 Etc/GMT")
        #expect(object?["web_order_line_item_id"] as? String == "1000000030938713")
        #expect(object?.count == 19)
    }

    @Test func rawTextFromStandardInputAndTheUnsignedMock() throws {
        let base64 = try String(contentsOfFile: Fixtures.path("legacy/venice-legacy-transaction-receipt.b64"), encoding: .utf8)
        let text = try #require(Data(base64Encoded: base64.filter { !$0.isWhitespace }))
        let fromText = try ReceiptTool.run(["dump", "-"], stdin: text)
        #expect(fromText.status == 0)
        #expect(fromText.stdout.contains("Transaction id              1000000046178817"))
        #expect(!fromText.stdout.contains("decoded from base64"))

        let mock = try ReceiptTool.run(["dump", Fixtures.path("legacy/app-store-server-library-legacyTransaction.b64")])
        #expect(mock.status == 0)
        #expect(mock.stdout.contains("Transaction id              33993399"))
        #expect(mock.stdout.contains("no \"signature\""))
    }

    @Test func malformedTransactionReceiptsExitOneWithTheOffset() throws {
        let bad = try ReceiptTool.run(["dump", "-"], stdin: Data("{\"purchase-info\" = \"e30=\"; \"pod\" = \"1\"".utf8))
        #expect(bad.status == 1)
        #expect(bad.stderr.hasPrefix("Error: "))
        #expect(bad.stderr.contains("malformedTransactionReceipt at offset"))
        let badInfo = try ReceiptTool.run(
            ["dump", "-"], stdin: Data("{\"purchase-info\" = \"\(Data("{\"quantity\" = \"x\";}".utf8).base64EncodedString())\";}".utf8))
        #expect(badInfo.status == 1)
        #expect(badInfo.stderr.contains("purchase-info: \"quantity\""))
    }
}
