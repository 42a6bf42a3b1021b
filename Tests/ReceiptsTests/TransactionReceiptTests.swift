import Foundation
import Internals
import JSON
import Receipts
import TestSupport
import Testing

/// What Docs/Formats.md §6 and TestReceipts/README.md (with the upstream sources it names) say the
/// four real legacy receipts hold.
struct LegacyReceiptExpectation: Sendable, CustomStringConvertible {
    let file: String
    let bundleIdentifier: String
    let bundleVersion: String
    let productIdentifier: String
    let transactionIdentifier: String
    let originalTransactionIdentifier: String
    let itemID: Int64
    let purchaseMilliseconds: Int64
    let originalPurchaseMilliseconds: Int64
    let purchaseDateText: String
    let uniqueIdentifier: String?
    let uniqueVendorIdentifier: String?
    let expiresMilliseconds: Int64?
    let webOrderLineItemID: Int64?
    let leafSerial: String
    let keyCount: Int

    var description: String { file }

    static let all: [LegacyReceiptExpectation] = [
        LegacyReceiptExpectation(
            file: "legacy/venice-legacy-transaction-receipt.b64", bundleIdentifier: "com.mindmobapp.MindMob",
            bundleVersion: "20120427", productIdentifier: "com.mindmobapp.download", transactionIdentifier: "1000000046178817",
            originalTransactionIdentifier: "1000000046178817", itemID: 521_129_812, purchaseMilliseconds: 1_335_798_355_868,
            originalPurchaseMilliseconds: 1_335_798_355_868, purchaseDateText: "2012-04-30 15:05:55 Etc/GMT", uniqueIdentifier: nil,
            uniqueVendorIdentifier: nil, expiresMilliseconds: nil, webOrderLineItemID: nil, leafSerial: "6514914DD95804B5",
            keyCount: 13),
        LegacyReceiptExpectation(
            file: "legacy/itunes-iap-legacy-transaction-receipt.b64", bundleIdentifier: "com.vanillabreeze.igunbattle",
            bundleVersion: "1.0", productIdentifier: "BattleGold50", transactionIdentifier: "1000000056161764",
            originalTransactionIdentifier: "1000000056161764", itemID: 554_499_305, purchaseMilliseconds: 1_348_191_098_192,
            originalPurchaseMilliseconds: 1_348_191_098_192, purchaseDateText: "2012-09-21 01:31:38 Etc/GMT",
            uniqueIdentifier: "42c1b3d45563820dd9a59c79a75641001fc85e39", uniqueVendorIdentifier: nil, expiresMilliseconds: nil,
            webOrderLineItemID: nil, leafSerial: "6514914DD95804B5", keyCount: 14),
        LegacyReceiptExpectation(
            file: "legacy/base64encoded_unsupportedReceipt1.b64", bundleIdentifier: "com.mbaasy.ios.demo", bundleVersion: "1",
            productIdentifier: "yearly", transactionIdentifier: "1000000181298734", originalTransactionIdentifier: "1000000180636226",
            itemID: 1_028_950_797, purchaseMilliseconds: 1_447_821_281_000, originalPurchaseMilliseconds: 1_447_778_081_000,
            purchaseDateText: "2015-11-18 04:34:41 Etc/GMT", uniqueIdentifier: "dd0e33ebf56bb1f3ad4c2dbaa7a0b33ac68b0e85",
            uniqueVendorIdentifier: "4E5E1A3B-F01A-4855-820F-F349F1242148", expiresMilliseconds: 1_448_346_881_000,
            webOrderLineItemID: 1_000_000_030_938_713, leafSerial: "1BA9E3E3C0866FCB", keyCount: 19),
        LegacyReceiptExpectation(
            file: "legacy/base64encoded_unsupportedReceipt2.b64", bundleIdentifier: "com.es.Purchaser", bundleVersion: "3",
            productIdentifier: "purchaser.consumableFeature", transactionIdentifier: "1000000181492557",
            originalTransactionIdentifier: "1000000181492557", itemID: 1_061_557_484, purchaseMilliseconds: 1_448_296_347_138,
            originalPurchaseMilliseconds: 1_448_296_347_138, purchaseDateText: "2015-11-23 16:32:27 Etc/GMT",
            uniqueIdentifier: "e47425df7fb6ab8c3c7e5730c3a7eb5b6563823d", uniqueVendorIdentifier: "5C275B5A-3E66-4026-9523-845B225755FC",
            expiresMilliseconds: nil, webOrderLineItemID: nil, leafSerial: "1BA9E3E3C0866FCB", keyCount: 15),
    ]
}

@Suite struct TransactionReceiptTests {
    @Test(arguments: LegacyReceiptExpectation.all)
    func realReceiptParsesToTheDocumentedValues(_ expected: LegacyReceiptExpectation) throws {
        let receipt = try TransactionReceipt(Fixtures.bytes(expected.file))
        #expect(receipt.entries.map(\.key) == ["signature", "purchase-info", "environment", "pod", "signing-status"])
        #expect(receipt.environment == "Sandbox")
        #expect(receipt.environmentKind == .sandbox)
        #expect(receipt.pod == "100")
        #expect(receipt.signingStatus == "0")
        #expect(receipt.unknownEntries.isEmpty)

        let info = receipt.purchaseInfo
        #expect(info.bundleIdentifier == expected.bundleIdentifier)
        #expect(info.bundleVersion == expected.bundleVersion)
        #expect(info.productIdentifier == expected.productIdentifier)
        #expect(info.transactionIdentifier == expected.transactionIdentifier)
        #expect(info.originalTransactionIdentifier == expected.originalTransactionIdentifier)
        #expect(info.quantity == 1)
        #expect(info.itemID == expected.itemID)
        #expect(info.purchaseDate.map(ReceiptDate.milliseconds) == expected.purchaseMilliseconds)
        #expect(info.originalPurchaseDate.map(ReceiptDate.milliseconds) == expected.originalPurchaseMilliseconds)
        #expect(info.string(forKey: "purchase-date") == expected.purchaseDateText)
        #expect(info.uniqueIdentifier == expected.uniqueIdentifier)
        #expect(info.uniqueVendorIdentifier == expected.uniqueVendorIdentifier)
        #expect(info.expiresDate.map(ReceiptDate.milliseconds) == expected.expiresMilliseconds)
        #expect(info.webOrderLineItemID == expected.webOrderLineItemID)
        #expect(info.entries.count == expected.keyCount)
        #expect(info.unknownEntries.isEmpty)
        // The purchase-info bytes are kept exactly: they are what the signature covers.
        #expect(info.data == receipt.purchaseInfoData)
        #expect(Base64.encode(receipt.purchaseInfoData) == receipt.entries[1].value.stringValue)

        // The signature blob: 988 bytes, version 2, 128-byte signature, 855-byte leaf certificate.
        #expect(receipt.signatureBlob?.count == 988)
        let signature = try receipt.signature()
        #expect(signature.version == 2)
        #expect(signature.signature.count == 128)
        #expect(signature.certificate.count == 855)
        #expect(Array(signature.certificate.prefix(2)) == [0x30, 0x82])
        #expect(signature.signedData(purchaseInfoData: receipt.purchaseInfoData) == [2] + receipt.purchaseInfoData)
        #expect(
            TransactionReceiptSignature.encode(version: 2, signature: signature.signature, certificate: signature.certificate)
                == receipt.signatureBlob)
    }

    /// The text forms of the dates agree with the millisecond values under our own formatters (both
    /// the Etc/GMT and the America/Los_Angeles forms, across daylight saving time).
    @Test(arguments: LegacyReceiptExpectation.all)
    func dateTextsAgreeWithMilliseconds(_ expected: LegacyReceiptExpectation) throws {
        let info = try TransactionReceipt(Fixtures.bytes(expected.file)).purchaseInfo
        let purchase = try #require(info.purchaseDate)
        let original = try #require(info.originalPurchaseDate)
        #expect(info.string(forKey: "purchase-date") == ReceiptDate.appleGMT(purchase))
        #expect(info.string(forKey: "purchase-date-pst") == ReceiptDate.applePacific(purchase))
        #expect(info.string(forKey: "original-purchase-date") == ReceiptDate.appleGMT(original))
        #expect(info.string(forKey: "original-purchase-date-pst") == ReceiptDate.applePacific(original))
        if let expires = info.expiresDate {
            #expect(info.string(forKey: "expires-date-formatted") == ReceiptDate.appleGMT(expires))
            #expect(info.string(forKey: "expires-date-formatted-pst") == ReceiptDate.applePacific(expires))
        }
    }

    @Test func whitespaceFreeVariantParses() throws {
        let bytes = try Fixtures.bytes("legacy/base64encoded_unsupportedReceipt2.b64")
        let receipt = try TransactionReceipt(bytes)
        #expect(!receipt.text.contains(0x0A))
        #expect(!receipt.text.contains(0x09))
        #expect(receipt.textString.hasPrefix("{\"signature\" = \""))
        #expect(receipt.purchaseInfo.transactionIdentifier == "1000000181492557")
        // Its only whitespace is the " = " separators and one space after the first ';'. Rebuilt
        // from its parts in the compact layout, it is the same text without that one space.
        let semicolonSpace = receipt.text.indices.filter {
            $0 + 1 < receipt.text.count && receipt.text[$0] == 0x3B && receipt.text[$0 + 1] == 0x20
        }
        #expect(semicolonSpace.count == 1)
        var expected = receipt.text
        if let index = semicolonSpace.first { expected.remove(at: index + 1) }
        let rebuilt = try TransactionReceipt(
            signatureBlob: receipt.signatureBlob, purchaseInfoData: receipt.purchaseInfoData, compact: true)
        #expect(rebuilt.text == expected)
        #expect(rebuilt.purchaseInfo == receipt.purchaseInfo)
    }

    /// Rebuilding the tab-indented receipts from their parts reproduces Apple's layout byte for byte.
    @Test(arguments: LegacyReceiptExpectation.all.prefix(3))
    func rebuildingReproducesApplesLayout(_ expected: LegacyReceiptExpectation) throws {
        let receipt = try TransactionReceipt(Fixtures.bytes(expected.file))
        let rebuilt = try TransactionReceipt(signatureBlob: receipt.signatureBlob, purchaseInfoData: receipt.purchaseInfoData)
        #expect(rebuilt.text == receipt.text)
        #expect(rebuilt == receipt)
        // The purchase-info written from its entries is byte-identical too (Apple's inner layout).
        #expect(OldStylePropertyList.encode(receipt.purchaseInfo.entries) == receipt.purchaseInfoData)
    }

    @Test func syntheticUnsignedMockParses() throws {
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/app-store-server-library-legacyTransaction.b64"))
        #expect(receipt.purchaseInfo.transactionIdentifier == "33993399")
        #expect(receipt.purchaseInfo.entries.count == 1)
        #expect(receipt.signatureBlob == nil)
        #expect(receipt.environment == nil)
        #expect(receipt.environmentKind == .production)
        #expect(receipt.entries.map(\.key) == ["purchase-info"])
        #expect(receiptErrorCode { _ = try receipt.signature() } == .malformedTransactionReceipt)
    }

    @Test func rawTextBase64AndRequestBodiesAreAccepted() throws {
        let base64Text = try Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64")
        let fromBase64 = try TransactionReceipt(base64Text)
        let fromText = try TransactionReceipt(fromBase64.text)
        #expect(fromText == fromBase64)
        #expect(try ReceiptInput.detect(fromBase64.text) == .transactionReceipt(fromBase64.text))
        let body = Array("{\"receipt-data\": \"\(fromBase64.base64Encoded)\", \"password\": \"x\"}".utf8)
        #expect(try TransactionReceipt(body) == fromBase64)
        // Base64 of the base64 is not unwrapped twice.
        #expect(receiptErrorCode { _ = try TransactionReceipt(Array(Base64.encode(base64Text).utf8)) } == .notAReceipt)
    }

    @Test func appAndTransactionReceiptsRejectEachOther() throws {
        let legacy = try Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64")
        #expect(receiptErrorCode { _ = try AppReceipt(legacy) } == .notAReceipt)
        let app = try Fixtures.bytes("base64encodedreceiptsample1.der")
        #expect(receiptErrorCode { _ = try TransactionReceipt(app) } == .notAReceipt)
    }

    @Test func keyOrderAndUnknownKeysAreKept() throws {
        let info = Array("{\"b\" = \"2\"; \"transaction-id\" = \"7\"; \"a\" = \"1\";}".utf8)
        let text =
            "{\"x-extra\" = \"kept\"; \"purchase-info\" = \"\(Base64.encode(info))\"; \"signature\" = \"AAAA\"; \"environment\" = \"Production\";}"
        let receipt = try TransactionReceipt(text: Array(text.utf8))
        #expect(receipt.entries.map(\.key) == ["x-extra", "purchase-info", "signature", "environment"])
        #expect(receipt.unknownEntries == [OldStylePropertyList.Entry(key: "x-extra", value: .string("kept"))])
        #expect(receipt.environmentKind == .production)
        #expect(receipt.signatureBlob == [0, 0, 0])
        #expect(receipt.purchaseInfo.transactionIdentifier == "7")
        #expect(receipt.purchaseInfo.unknownEntries.map(\.key) == ["b", "a"])
        #expect(receipt.purchaseInfo.data == info)
        let other = try TransactionReceipt(
            text: Array("{\"purchase-info\" = \"\(Base64.encode(info))\"; \"environment\" = \"Staging\";}".utf8))
        #expect(other.environmentKind == .unknown)
    }

    @Test func typedFieldErrorsPointAtTheValue() throws {
        func error(_ info: String) -> ReceiptError? {
            let text = "{\"purchase-info\" = \"\(Base64.encode(Array(info.utf8)))\";}"
            do {
                _ = try TransactionReceipt(text: Array(text.utf8))
                return nil
            } catch {
                return error
            }
        }
        let quantity = error("{\"quantity\" = \"one\";}")
        #expect(quantity?.code == .malformedTransactionReceipt)
        #expect(quantity?.offset == 14)
        #expect(quantity?.reason.hasPrefix("purchase-info:") == true)
        #expect(error("{\"purchase-date-ms\" = \"12x\";}")?.code == .malformedTransactionReceipt)
        #expect(error("{\"web-order-line-item-id\" = \"99999999999999999999\";}")?.code == .malformedTransactionReceipt)
        #expect(error("{\"expires-date\" = \"soon\";}")?.code == .malformedTransactionReceipt)
        #expect(error("{\"is-trial-period\" = \"maybe\";}")?.code == .malformedTransactionReceipt)
        #expect(error("{\"bid\" = (\"a\");}")?.code == .malformedTransactionReceipt)
        #expect(error("(\"not\", \"a\", \"dictionary\")")?.code == .malformedTransactionReceipt)
        #expect(error("{\"transaction-id\" = \"1\"") != nil)
        // 64-bit values and the text-date fallback work.
        let big = try PurchaseInfo(
            data: Array("{\"web-order-line-item-id\" = \"9223372036854775807\"; \"purchase-date\" = \"2012-04-30 15:05:55 Etc/GMT\";}".utf8)
        )
        #expect(big.webOrderLineItemID == Int64.max)
        #expect(big.purchaseDate.map(ReceiptDate.milliseconds) == 1_335_798_355_000)
    }

    @Test func outerStructureErrors() {
        func code(_ text: String) -> ReceiptError.Code? {
            receiptErrorCode { _ = try TransactionReceipt(text: Array(text.utf8)) }
        }
        #expect(code("{\"signature\" = \"AAAA\";}") == .malformedTransactionReceipt)  // no purchase-info
        #expect(code("{\"purchase-info\" = \"!!\";}") == .invalidBase64)
        #expect(code("{\"purchase-info\" = (\"e30=\");}") == .malformedTransactionReceipt)
        #expect(code("{\"purchase-info\" = \"e30=\"; \"signature\" = \"*\";}") == .invalidBase64)
        #expect(code("(\"purchase-info\")") == .malformedTransactionReceipt)
        #expect(code("{\"purchase-info\" = \"e30=\"; \"purchase-info\" = \"e30=\";}") == .malformedTransactionReceipt)
        #expect(code("{\"purchase-info\" = \"e30=\";}") == nil)  // e30= is "{}"
    }

    @Test func signatureBlobBoundsAreChecked() throws {
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64"))
        let blob = try #require(receipt.signatureBlob)
        // Every truncation fails with a typed error, never a crash.
        for length in 0..<blob.count {
            #expect(receiptErrorCode { _ = try TransactionReceiptSignature(blob: Array(blob[..<length])) } == .malformedTransactionReceipt)
        }
        #expect(receiptErrorCode { _ = try TransactionReceiptSignature(blob: blob + [0]) } == .malformedTransactionReceipt)
        var unknownVersion = blob
        unknownVersion[0] = 4
        #expect(receiptErrorCode { _ = try TransactionReceiptSignature(blob: unknownVersion) } == .malformedTransactionReceipt)
        var hugeLength = blob
        hugeLength.replaceSubrange(129..<133, with: [0xFF, 0xFF, 0xFF, 0xFF])
        do {
            _ = try TransactionReceiptSignature(blob: hugeLength)
            Issue.record("accepted a 4 GiB certificate length")
        } catch {
            #expect(error.offset == 129)
        }
        var zero = blob
        zero.replaceSubrange(129..<133, with: [0, 0, 0, 0])
        #expect(receiptErrorCode { _ = try TransactionReceiptSignature(blob: zero) } == .malformedTransactionReceipt)
        // A version 3 layout: 256-byte signature.
        let v3 = TransactionReceiptSignature.encode(version: 3, signature: [UInt8](repeating: 7, count: 256), certificate: [0x30, 0x00])
        let parsed = try TransactionReceiptSignature(blob: v3)
        #expect(parsed.version == 3)
        #expect(parsed.signature.count == 256)
        #expect(parsed.certificate == [0x30, 0x00])
        // A version 2 length with a version 3 byte is too short.
        var mislabelled = blob
        mislabelled[0] = 3
        #expect(receiptErrorCode { _ = try TransactionReceiptSignature(blob: mislabelled) } == .malformedTransactionReceipt)
    }

    @Test func iOS6JSONOfARealReceipt() throws {
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/base64encoded_unsupportedReceipt1.b64"))
        let json = try JSONValue.parse(receipt.jsonText())
        #expect(json["transaction_id"] == .string("1000000181298734"))
        #expect(json["bid"] == .string("com.mbaasy.ios.demo"))
        #expect(json["bvrs"] == .string("1"))
        #expect(json["item_id"] == .string("1028950797"))
        #expect(json["expires_date"] == .string("1448346881000"))
        #expect(json["expires_date_formatted"] == .string("2015-11-24 06:34:41 Etc/GMT"))
        #expect(json["expires_date_formatted_pst"] == .string("2015-11-23 22:34:41 America/Los_Angeles"))
        #expect(json["web_order_line_item_id"] == .string("1000000030938713"))
        #expect(json["unique_vendor_identifier"] == .string("4E5E1A3B-F01A-4855-820F-F349F1242148"))
        guard case .object(let members) = json else {
            Issue.record("not an object")
            return
        }
        #expect(members.count == 19)
        #expect(members.allSatisfy { !$0.0.contains("-") })
        // Reading the JSON back gives the same typed values.
        let back = try PurchaseInfo(verifyReceiptJSON: json)
        #expect(
            back.entries
                == receipt.purchaseInfo.entries.map {
                    OldStylePropertyList.Entry(key: $0.key, value: $0.value)
                })
        #expect(back.expiresDate == receipt.purchaseInfo.expiresDate)
    }

    /// Apple's own iOS 6 auto-renewable response (itunes-iap fixture) reads into PurchaseInfo with
    /// `expires_date` in milliseconds, and our writer gives back the same members.
    @Test func applesIOS6ResponseReadsBack() throws {
        let response = try JSONValue.parse(Fixtures.bytes("json/verifyReceipt-autorenew-legacy-ios6.json"))
        let receiptJSON = try #require(response["receipt"])
        let info = try PurchaseInfo(verifyReceiptJSON: receiptJSON)
        #expect(info.bundleIdentifier == "com.example.001")
        #expect(info.bundleVersion == "7")
        #expect(info.itemID == 580_190_000)
        #expect(info.expiresDate.map(ReceiptDate.milliseconds) == 1_354_436_154_000)
        #expect(info.webOrderLineItemID == 1_000_000_026_430_000)
        #expect(info.uniqueIdentifier == "0000b0090000")
        #expect(info.purchaseDate.map(ReceiptDate.milliseconds) == 1_354_432_554_000)
        let ours = try JSONValue.parse(info.jsonText())
        guard case .object(let appleMembers) = receiptJSON, case .object(let ourMembers) = ours else {
            Issue.record("not objects")
            return
        }
        #expect(ourMembers.count == appleMembers.count)
        for (key, value) in appleMembers { #expect(ours[key] == value, "\(key)") }
        // Our formatters agree with Apple's texts for the dates (GMT and Pacific).
        let expires = try #require(info.expiresDate)
        #expect(receiptJSON["expires_date_formatted"] == .string(ReceiptDate.appleGMT(expires)))
        #expect(receiptJSON["expires_date_formatted_pst"] == .string(ReceiptDate.applePacific(expires)))
    }

    @Test func missingDateTextsAreDerivedInJSON() throws {
        let info = try PurchaseInfo(data: Array("{\"purchase-date-ms\" = \"1335798355868\"; \"expires-date\" = \"1448346881000\";}".utf8))
        let json = try JSONValue.parse(info.jsonText())
        #expect(json["purchase_date"] == .string("2012-04-30 15:05:55 Etc/GMT"))
        #expect(json["purchase_date_pst"] == .string("2012-04-30 08:05:55 America/Los_Angeles"))
        #expect(json["expires_date"] == .string("1448346881000"))
        #expect(json["expires_date_formatted"] == .string("2015-11-24 06:34:41 Etc/GMT"))
    }
}
