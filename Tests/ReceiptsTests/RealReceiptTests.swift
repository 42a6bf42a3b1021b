import Foundation
import Internals
import Receipts
import TestSupport
import Testing

/// Every value the vectors' PROVENANCE.md files state, asserted on the real receipts.
@Suite struct RealReceiptTests {
    @Test(arguments: Fixtures.realAppReceipts)
    func everyRealReceiptParses(_ name: String) throws {
        let receipt = try Fixtures.receipt(name)
        #expect(receipt.bundleIdentifier?.isEmpty == false)
        #expect(receipt.appVersion?.isEmpty == false)
        #expect(receipt.creationDate != nil)
        #expect(receipt.envelope?.signers.count == 1)
        #expect(receipt.payload.isEmpty == false)
    }

    struct Summary: Sendable, CustomTestStringConvertible {
        let file: String
        let type: String
        let bundle: String
        let version: String
        let original: String?
        let created: String
        let inApp: Int
        var testDescription: String { file }
    }

    /// The "Facts we measured" tables of every PROVENANCE.md.
    static let summaries: [Summary] = [
        Summary(
            file: "hannes_mac_mindnode_2_receipt.der", type: "Production", bundle: "com.ideasoncanvas.MindNodeMac", version: "2.5.8",
            original: "2.5.5", created: "2023-02-22T12:56:25Z", inApp: 0),
        Summary(
            file: "hannes_mac_mindnode_receipt.der", type: "Production", bundle: "com.ideasoncanvas.MindNodeMac", version: "2.5.5",
            original: "2.5.5", created: "2017-09-04T09:01:20Z", inApp: 0),
        Summary(
            file: "mac_mindnode_rebought_receipt.der", type: "Production", bundle: "com.ideasoncanvas.MindNodeMac", version: "2.5.5",
            original: "2.5.5", created: "2017-09-04T14:45:30Z", inApp: 0),
        Summary(
            file: "mindnode_ios_michaelsandbox_receipt1.der", type: "ProductionSandbox", bundle: "com.mindnode.mindnodetouch",
            version: "3394", original: "1.0", created: "2017-09-11T09:38:34Z", inApp: 0),
        Summary(
            file: "mindnode_ios_michaelsandbox_receipt2.der", type: "ProductionSandbox", bundle: "com.mindnode.mindnodetouch",
            version: "3392", original: "1.0", created: "2017-08-16T13:13:14Z", inApp: 0),
        Summary(
            file: "mindnode_mac_sha256_receipt.der", type: "Production", bundle: "com.ideasoncanvas.mindnode.macos", version: "2023.2.2",
            original: "5.0", created: "2023-08-28T10:24:05Z", inApp: 3),
        Summary(
            file: "purchasing_experiments_sandbox_receipt.der", type: "ProductionSandbox", bundle: "com.hannesoid.PurchasingExperiments",
            version: "1", original: "1.0", created: "2023-02-22T14:30:15Z", inApp: 2),
        Summary(
            file: "kvitto-demo-newReceipt.der", type: "ProductionSandbox", bundle: "de.emmi-club.manager", version: "372", original: "1.0",
            created: "2015-10-07T16:16:10Z", inApp: 6),
        Summary(
            file: "kvitto-receipt.der", type: "Production", bundle: "com.apple.dt.Xcode", version: "7.0", original: "4.3",
            created: "2015-09-22T08:55:28Z", inApp: 0),
        Summary(
            file: "kvitto-sandboxReceipt.der", type: "ProductionSandbox", bundle: "com.cocoanetics.EmmiView", version: "246",
            original: "1.0", created: "2015-05-25T15:22:10Z", inApp: 6),
        Summary(
            file: "kvitto-storeKitTestReceipt.der", type: "Xcode", bundle: "com.rd.eehelper", version: "2020.10.02.1149", original: nil,
            created: "2020-10-16T14:29:30+0300", inApp: 1),
        Summary(
            file: "base64encoded_sandboxReceipt2.der", type: "ProductionSandbox", bundle: "com.mbaasy.ios.demo", version: "1",
            original: "1.0", created: "2015-08-13T07:50:46Z", inApp: 7),
        Summary(
            file: "base64encoded_sandboxReceipt3.der", type: "ProductionSandbox", bundle: "com.belive.app.ios", version: "3",
            original: "1.0", created: "2018-11-13T16:46:31Z", inApp: 1),
        Summary(
            file: "base64encodedreceiptsample1.der", type: "ProductionSandbox", bundle: "com.revenuecat.sampleapp", version: "4",
            original: "1.0", created: "2020-07-22T17:39:08Z", inApp: 9),
        Summary(
            file: "receipt-crash.der", type: "ProductionSandbox", bundle: "de.holtwick.mac.PDFify", version: "3.3.1b4", original: "1.0",
            created: "2020-10-30T10:54:04Z", inApp: 0),
        Summary(
            file: "receipt-no-orig-purchase-date.der", type: "Xcode", bundle: "com.nutcall.alert", version: "34", original: nil,
            created: "2021-04-03T22:38:45+0300", inApp: 1),
        Summary(
            file: "receipt-sandbox-g5.der", type: "ProductionSandbox", bundle: "dev.bonzer.weeka.app", version: "2", original: "1.0",
            created: "2025-12-26T18:39:47Z", inApp: 2),
        Summary(
            file: "receipt-sandbox-legacy.der", type: "ProductionSandbox", bundle: "com.nutcall.alert", version: "32", original: "1.0",
            created: "2020-05-06T18:28:49Z", inApp: 187),
        Summary(
            file: "receipt-watch.der", type: "Production", bundle: "net.zachariadis.cyclemaps", version: "32.3.1", original: "31.12.1",
            created: "2020-09-21T05:35:19Z", inApp: 1),
        Summary(
            file: "receipt-xcode-with-purchases.der", type: "Xcode", bundle: "com.example.naturelab.backyardbirds.example", version: "1",
            original: nil, created: "2023-10-19T01:45:40Z", inApp: 1),
        Summary(
            file: "receipt-xcode.der", type: "Xcode", bundle: "net.zachariadis.cyclemaps", version: "31.10.0", original: nil,
            created: "2020-07-22T18:33:15+0100", inApp: 1),
        Summary(
            file: "xcode-app-receipt-empty.der", type: "Xcode", bundle: "com.example.naturelab.backyardbirds.example", version: "1",
            original: nil, created: "2023-10-19T01:18:54Z", inApp: 0),
    ]

    @Test(arguments: summaries)
    func provenanceTable(_ s: Summary) throws {
        let r = try Fixtures.receipt(s.file)
        #expect(r.receiptType == s.type)
        #expect(r.bundleIdentifier == s.bundle)
        #expect(r.appVersion == s.version)
        #expect(r.originalAppVersion == s.original)
        #expect(r.creationDate == date(s.created))
        #expect(r.inAppPurchases.count == s.inApp)
        #expect(r.opaqueValue?.count == (s.type == "Xcode" ? 8 : 16))
        #expect(r.sha1Hash?.count == 20)
        if s.type == "Xcode" {
            #expect(
                r.expirationDate == date("4001-01-01T00:00:00Z")
                    || r.expirationDate.map { ReceiptDate.rfc3339($0).hasPrefix("4001-01-0") } == true)
            #expect(r.envelope?.usesBERForms == true)
            #expect(r.envelope?.certificates.count == 1)
        } else {
            #expect(r.expirationDate == nil)
            #expect(r.envelope?.usesBERForms == false)
            #expect(r.envelope?.certificates.count == 3)
        }
    }

    @Test func appReceiptValidatorMindNode2() throws {
        let r = try Fixtures.receipt("hannes_mac_mindnode_2_receipt.der")
        #expect(r.bundleIdentifierData == base64("DB1jb20uaWRlYXNvbmNhbnZhcy5NaW5kTm9kZU1hYw=="))
        #expect(r.opaqueValue == base64("ZRyo4rFO+zpyYoGJoDUYIQ=="))
        #expect(r.sha1Hash == base64("EtemZhuYKqGofTIwv+x0nNqS5BU="))
        #expect(r.expirationDate == nil)
        #expect(r.inAppPurchases.isEmpty)
    }

    @Test func appReceiptValidatorMacReceiptsAndDeviceHashes() throws {
        let hannes = try Fixtures.receipt("hannes_mac_mindnode_receipt.der")
        #expect(hannes.opaqueValue == base64("mjF2f4xnFu/L4J3msJ1fxQ=="))
        #expect(hannes.sha1Hash == base64("gfM0Izu/eKMBRLbJqlTXtNvvmss="))
        #expect(hannes.hashMatches(device: DeviceIdentifier(bytes: base64("bEAItZRe"))))
        #expect(hannes.hashMatches(device: try #require(DeviceIdentifier("6c:40:08:b5:94:5e"))))
        #expect(!hannes.hashMatches(device: try #require(DeviceIdentifier("6c:40:08:b5:94:5f"))))

        let rebought = try Fixtures.receipt("mac_mindnode_rebought_receipt.der")
        #expect(rebought.opaqueValue == base64("VzgcF3QeYC6RGBfGC5rP+A=="))
        #expect(rebought.sha1Hash == base64("fqauHWwZo7XrxhQJcksK447Fzvg="))

        let sandbox = try Fixtures.receipt("mindnode_ios_michaelsandbox_receipt1.der")
        #expect(sandbox.opaqueValue == base64("YslufpOntElA2SgjZc/BZw=="))
        #expect(sandbox.sha1Hash == base64("d3UPNvYmUF8EOyfB9Ap8VBETHbE="))
        #expect(sandbox.hashMatches(device: try #require(DeviceIdentifier("3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CD"))))
        #expect(!sandbox.hashMatches(device: try #require(DeviceIdentifier("3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CE"))))
    }

    @Test func purchasingExperiments() throws {
        let r = try Fixtures.receipt("purchasing_experiments_sandbox_receipt.der")
        #expect(r.opaqueValue == base64("CPYuy3sssm2OQks5Dfav1Q=="))
        #expect(r.sha1Hash == base64("gfxUPQjdI7OUJFRcSX7Hl/98JpI="))
        #expect(r.hashMatches(device: DeviceIdentifier(bytes: base64("5hgQmGLdQz+7lGddOBXSYw=="))))
        let oneTime = r.inAppPurchases[0]
        #expect(oneTime.productIdentifier == "com.hannesoid.PurchasingExperiments.oneTime")
        #expect(oneTime.transactionIdentifier == "2000000284164152")
        #expect(oneTime.originalTransactionIdentifier == "2000000284164152")
        #expect(oneTime.purchaseDate == date("2023-02-22T14:29:20Z"))
        let subscription = r.inAppPurchases[1]
        #expect(subscription.productIdentifier == "com.hannesoid.PurchasingExperiments.subscription1")
        #expect(subscription.transactionIdentifier == "2000000284164527")
        #expect(subscription.purchaseDate == date("2023-02-22T14:29:39Z"))
        #expect(subscription.originalPurchaseDate == date("2023-02-22T14:29:44Z"))
        #expect(subscription.subscriptionExpirationDate == date("2023-02-22T14:34:39Z"))
        #expect(subscription.webOrderLineItemID == 2_000_000_021_470_597)
    }

    @Test func mindNodeSHA256() throws {
        let r = try Fixtures.receipt("mindnode_mac_sha256_receipt.der")
        #expect(r.opaqueValue == base64("VmWS/KFzfC1svdKl/fE28w=="))
        #expect(r.sha1Hash == base64("qDMXlx3d0G20ClaveV6dpPPHDRg="))
        #expect(r.hashMatches(device: try #require(DeviceIdentifier("f8:ff:c2:1e:91:82"))))
        let p = r.inAppPurchases
        #expect(p[0].productIdentifier?.hasSuffix("iap.trial") == true)
        #expect(p[0].transactionIdentifier == "710000250371060")
        #expect(p[0].purchaseDate == date("2017-11-28T11:13:57Z"))
        #expect(p[1].productIdentifier?.hasSuffix("iap.fullversionfree") == true)
        #expect(p[1].transactionIdentifier == "710000253893482")
        #expect(p[1].purchaseDate == date("2017-12-13T14:04:33Z"))
        #expect(p[2].productIdentifier?.hasSuffix("subscription.yearly") == true)
        #expect(p[2].transactionIdentifier == "710000831465389")
        #expect(p[2].purchaseDate == date("2021-09-10T12:37:29Z"))
        #expect(p[2].originalPurchaseDate == date("2021-09-10T12:37:34Z"))
        #expect(p[2].subscriptionExpirationDate == date("2022-09-24T12:37:29Z"))
        #expect(p[2].webOrderLineItemID == 710_000_353_660_114)
    }

    @Test func kvittoReceipts() throws {
        let xcodeApp = try Fixtures.receipt("kvitto-receipt.der")
        #expect(xcodeApp.payload.count == 505)
        #expect(xcodeApp.ageRating == "4+")
        #expect(xcodeApp.appItemID == 497_799_835)
        #expect(xcodeApp.downloadID == 30_015_324_719_813)
        #expect(xcodeApp.versionExternalIdentifier == 813_293_765)
        #expect(xcodeApp.environment == .production)

        let sandbox = try Fixtures.receipt("kvitto-sandboxReceipt.der")
        #expect(sandbox.payload.count == 2833)
        #expect(sandbox.ageRating == "4+")
        #expect(sandbox.expirationDate == nil)
        let first = sandbox.inAppPurchases[0]
        #expect(first.productIdentifier == "com.cocoanetics.EmmiView.OneMonth")
        #expect(first.transactionIdentifier == "1000000156449405")
        #expect(first.originalTransactionIdentifier == "1000000156444989")
        #expect(first.subscriptionExpirationDate != nil)
        #expect(first.webOrderLineItemID == 1_000_000_029_801_037)
        #expect(first.cancellationDate == nil)

        let storeKit = try Fixtures.receipt("kvitto-storeKitTestReceipt.der")
        #expect(storeKit.ageRating == nil)
        #expect(storeKit.environment == .xcode)
        let iap = storeKit.inAppPurchases[0]
        #expect(iap.productIdentifier == "com.rd.eehelper.pro_subscription")
        #expect(iap.transactionIdentifier == "0")
        #expect(iap.originalTransactionIdentifier == nil)
        #expect(iap.subscriptionExpirationDate != nil)
        #expect(iap.webOrderLineItemID == nil)
    }

    struct Row: Sendable {
        let product: String
        let transaction: String
        let purchase: Int
        let expires: Int
        let trial: Bool
        let webOrder: Int64
    }

    @Test func revenueCatSample1() throws {
        let r = try Fixtures.receipt("base64encodedreceiptsample1.der")
        #expect(r.creationDate == seconds(1_595_439_548))
        #expect(r.expirationDate == nil)
        #expect(r.environment == .sandbox)
        #expect(r.opaqueValue == base64("S5Yfx+yvdaa9O5w6EvDuZA=="))
        #expect(r.sha1Hash == base64("deUV5jHlBbtD8cm+XBgY/95o7zw="))
        let monthly = "com.revenuecat.monthly_4.99.1_week_intro"
        let rows: [Row] = [
            Row(
                product: monthly, transaction: "1000000692879214", purchase: 1_594_755_400, expires: 1_594_755_700, trial: false,
                webOrder: 1_000_000_054_042_695),
            Row(
                product: monthly, transaction: "1000000692901513", purchase: 1_594_762_977, expires: 1_594_763_277, trial: false,
                webOrder: 1_000_000_054_042_739),
            Row(
                product: monthly, transaction: "1000000692902182", purchase: 1_594_763_277, expires: 1_594_763_577, trial: false,
                webOrder: 1_000_000_054_044_460),
            Row(
                product: monthly, transaction: "1000000692902990", purchase: 1_594_763_577, expires: 1_594_763_877, trial: false,
                webOrder: 1_000_000_054_044_520),
            Row(
                product: monthly, transaction: "1000000692905419", purchase: 1_594_763_877, expires: 1_594_764_177, trial: false,
                webOrder: 1_000_000_054_044_587),
            Row(
                product: monthly, transaction: "1000000692905971", purchase: 1_594_764_177, expires: 1_594_764_477, trial: false,
                webOrder: 1_000_000_054_044_637),
            Row(
                product: monthly, transaction: "1000000692906727", purchase: 1_594_764_500, expires: 1_594_764_800, trial: false,
                webOrder: 1_000_000_054_044_710),
            Row(
                product: "com.revenuecat.annual_39.99.2_week_intro", transaction: "1000000696553650", purchase: 1_595_439_546,
                expires: 1_595_443_146, trial: false, webOrder: 1_000_000_054_044_800),
            Row(
                product: monthly, transaction: "1000000692878476", purchase: 1_594_755_206, expires: 1_594_755_386, trial: true,
                webOrder: 1_000_000_054_042_694),
        ]
        #expect(r.inAppPurchases.count == rows.count)
        for (purchase, row) in zip(r.inAppPurchases, rows) {
            #expect(purchase.productIdentifier == row.product)
            #expect(purchase.transactionIdentifier == row.transaction)
            #expect(purchase.originalTransactionIdentifier == "1000000692878476")
            #expect(purchase.purchaseDate == seconds(row.purchase))
            #expect(purchase.originalPurchaseDate == seconds(1_594_755_207))
            #expect(purchase.subscriptionExpirationDate == seconds(row.expires))
            #expect(purchase.isTrialPeriod == row.trial)
            #expect(purchase.isInIntroOfferPeriod == false)
            #expect(purchase.webOrderLineItemID == row.webOrder)
            #expect(purchase.quantity == 1)
            #expect(purchase.productType == .autoRenewableSubscription)
            #expect(purchase.cancellationDate == nil)
            #expect(purchase.promotionalOfferIdentifier == nil)
        }
    }

    @Test func revenueCatSandboxReceipts2And3() throws {
        let two = try Fixtures.receipt("base64encoded_sandboxReceipt2.der")
        #expect(two.opaqueValue == base64("xN1AVLC2Gge+tYX2qELgSA=="))
        #expect(two.sha1Hash == base64("LgoRW+rBxXAjpb03NJlVqa2Z200="))
        #expect(two.creationDate == seconds(1_439_452_246))
        let consumable = two.inAppPurchases[0]
        #expect(consumable.productIdentifier == "consumable")
        #expect(consumable.transactionIdentifier == "1000000166865231")
        #expect(consumable.purchaseDate == seconds(1_438_979_875))
        #expect(consumable.productType == .consumable)
        #expect(consumable.webOrderLineItemID == 0)
        #expect(consumable.isInIntroOfferPeriod == nil)
        let monthlyIDs = [
            "1000000166965150", "1000000166965327", "1000000166965895", "1000000166967152", "1000000166967484", "1000000166967782",
        ]
        #expect(two.inAppPurchases.dropFirst().map(\.transactionIdentifier) == monthlyIDs)
        for monthly in two.inAppPurchases.dropFirst() {
            #expect(monthly.productIdentifier == "monthly")
            #expect(monthly.productType == .autoRenewableSubscription)
            #expect(monthly.originalTransactionIdentifier == "1000000166965150")
            #expect(monthly.isInIntroOfferPeriod == nil)
        }
        #expect(two.inAppPurchases[1].webOrderLineItemID == 1_000_000_030_274_153)

        let three = try Fixtures.receipt("base64encoded_sandboxReceipt3.der")
        #expect(three.opaqueValue == base64("NOI0mwvWYuTsEnpr/RCvJA=="))
        #expect(three.sha1Hash == base64("JzhO1BR1kxOVGrCEqQLkwvUuZP8="))
        #expect(three.creationDate == seconds(1_542_127_591))
        #expect(three.inAppPurchases.map(\.productIdentifier) == ["test2"])
        #expect(three.inAppPurchases[0].productType == .consumable)
        #expect(three.inAppPurchases[0].transactionIdentifier == "1000000472106082")
        #expect(three.inAppPurchases[0].purchaseDate == seconds(1_542_127_591))
    }

    @Test func tpInAppReceiptVectors() throws {
        let g5 = try Fixtures.receipt("receipt-sandbox-g5.der")
        #expect(g5.inAppPurchases.allSatisfy { $0.productIdentifier == "dev.bonzer.weeka.app.subscription.pro.annual" })
        #expect(
            Set(g5.inAppPurchases.compactMap(\.transactionIdentifier)).isSuperset(of: ["2000001092134138"])
                || Set(g5.inAppPurchases.compactMap(\.originalTransactionIdentifier)).contains("2000001092134138"))
        #expect(g5.inAppPurchases.contains { $0.transactionIdentifier == "2000001092148094" })
        #expect(g5.hashMatches(device: try #require(DeviceIdentifier("956328D9-CC6A-47F4-BE40-6953FB0AB6C7"))))
        #expect(!g5.hashMatches(device: DeviceIdentifier(bytes: [UInt8](repeating: 0, count: 16))))
        #expect(g5.inAppPurchases.allSatisfy { $0.undocumentedInteger1722 != nil })

        let legacy = try Fixtures.receipt("receipt-sandbox-legacy.der")
        #expect(legacy.inAppPurchases[0].productIdentifier == "com.nutcallalert.inapp.pro")
        #expect(legacy.inAppPurchases[0].transactionIdentifier == "1000000637840752")

        let watch = try Fixtures.receipt("receipt-watch.der")
        #expect(watch.inAppPurchases.map(\.productIdentifier) == ["CYCLEMAPS_PREMIUM"])
        #expect(watch.inAppPurchases[0].transactionIdentifier == "110000822416835")

        let withPurchases = try Fixtures.receipt("receipt-xcode-with-purchases.der")
        #expect(withPurchases.inAppPurchases[0].productIdentifier == "pass.premium")
        #expect(withPurchases.inAppPurchases[0].transactionIdentifier == "0")
        #expect(withPurchases.inAppPurchases[0].isInIntroOfferPeriod == true)

        let crash = try Fixtures.receipt("receipt-no-orig-purchase-date.der")
        #expect(crash.inAppPurchases[0].originalPurchaseDate == nil)
        #expect(crash.originalAppVersion == nil)
    }

    @Test(arguments: Fixtures.xcodeReceipts)
    func xcodeReceiptsCarryOnlyXcodeFields(_ name: String) throws {
        let r = try Fixtures.receipt(name)
        #expect(r.originalAppVersion == nil)
        for purchase in r.inAppPurchases {
            #expect(purchase.originalTransactionIdentifier == nil)
            #expect(purchase.unknownAttributes.isEmpty)
        }
    }

    @Test func syntheticFixtures() throws {
        let r = try Fixtures.receipt("synthetic/receipt.der")
        #expect(r.appVersion == "1.2.3")
        #expect(r.originalAppVersion == "1.0")
        #expect(r.receiptType == "ProductionSandbox")
        #expect(r.creationDate == date("2024-08-06T12:00:00Z"))
        #expect(r.inAppPurchases.map(\.productIdentifier) == ["com.example.app.coins100", "com.example.app.vip"])
        #expect(r.inAppPurchases[0].transactionIdentifier == "70000000000001")
        #expect(r.inAppPurchases[1].webOrderLineItemID == 42)
        #expect(r.inAppPurchases[1].subscriptionExpirationDate == date("2030-02-01T09:30:00Z"))
        #expect(r.unknownAttributes == [ReceiptAttribute(type: 9999, version: 1, value: [1, 2, 3])])
        #expect(r.hashMatches(device: try #require(DeviceIdentifier("112233445566778899aabbccddeeff00"))))
        #expect(r.opaqueValue == [1, 2, 3, 4, 5, 6, 7, 8])

        let wrapped = try Fixtures.receipt("synthetic/receipt-double-wrapped.der")
        #expect(wrapped.appVersion == "1.2.3")
        #expect(wrapped.inAppPurchases.count == 2)
        #expect(try Fixtures.receipt("synthetic/receipt-type-vpp.der").receiptType == "ProductionVPP")
        #expect(try Fixtures.receipt("synthetic/receipt-type-vpp.der").environment == .production)
        #expect(try Fixtures.receipt("synthetic/receipt-type-vpp-sandbox.der").environment == .sandbox)
        #expect(try Fixtures.receipt("synthetic/receipt-no-type.der").receiptType == nil)
    }

    @Test func base64InputParsesLikeDER() throws {
        let fromBase64 = try Fixtures.receipt("base64encodedreceiptsample1.b64")
        let fromDER = try Fixtures.receipt("base64encodedreceiptsample1.der")
        #expect(fromBase64 == fromDER)
        let json = "{\"receipt-data\": \"\(Base64.encode(try Fixtures.bytes("receipt-watch.der")))\", \"password\": \"x\"}"
        #expect(try AppReceipt(Array(json.utf8)) == (try Fixtures.receipt("receipt-watch.der")))
    }

    @Test func unknownAttributesAreKept() throws {
        let r = try Fixtures.receipt("receipt-sandbox-g5.der")
        #expect(Set(r.unknownAttributes.map(\.type)) == [6, 7, 9, 11, 14, 20])
        #expect(Set(r.inAppPurchases[0].unknownAttributes.map(\.type)) == [1709, 1710, 1714, 1715, 1716, 1717, 1718])
        #expect(r.attributeVersions == [4: 2])
    }
}
