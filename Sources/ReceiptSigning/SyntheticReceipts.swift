import ASN1
import Foundation
import Internals
public import Receipts

/// Realistic synthetic receipts for benchmarks, fuzz seeds and tests: deterministic for a seed,
/// shaped like App Store receipts of 2023+ (every undocumented attribute real receipts carry,
/// empty date strings, subscription renewal chains, consumables, refunds).
public enum SyntheticReceipts {
    /// The product every generated receipt contains exactly once as a non-consumable, for
    /// "does the receipt contain X" queries.
    public static let markerProduct = "com.example.app.lifetime"

    /// A receipt with `purchases` in-app records.
    ///
    /// Mix: about half auto-renewable subscription periods in chains of 12 renewals (monthly or
    /// annual products, trial and intro flags, web order line item ids), a third consumables, the
    /// rest non-consumables and non-renewing passes; 1 in 25 records refunded; one record of
    /// ``markerProduct`` in the middle.
    public static func receipt(purchases: Int, seed: UInt64 = 1) -> AppReceipt {
        var rng = SplitMix64(seed: seed)
        var receipt = AppReceipt()
        let created: Int64 = 1_700_000_000_000
        receipt.receiptType = "Production"
        receipt.appItemID = 1_234_567_890
        receipt.bundleIdentifier = "com.example.benchmark.app"
        receipt.bundleIdentifierData = AppReceipt.canonicalBundleData(receipt.bundleIdentifier)
        receipt.appVersion = "2024.11.3"
        receipt.originalAppVersion = "1.0"
        receipt.opaqueValue = (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        receipt.sha1Hash = (0..<20).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        receipt.creationDate = ReceiptDate.date(milliseconds: created)
        receipt.undocumentedDate8 = receipt.creationDate
        receipt.originalPurchaseDate = ReceiptDate.date(milliseconds: created - 86_400_000 * 400)
        receipt.ageRating = "4+"
        receipt.downloadID = 80_123_456_789_012
        receipt.versionExternalIdentifier = 861_234_567
        receipt.undocumentedInteger13 = 180_100
        receipt.undocumentedInteger25 = 3
        receipt.attributeVersions = [4: 2]
        receipt.unknownAttributes = [
            ReceiptAttribute(type: 6, version: 1, value: (0..<55).map { _ in UInt8(truncatingIfNeeded: rng.next()) }[...]),
            ReceiptAttribute(type: 7, version: 1, value: (0..<54).map { _ in UInt8(truncatingIfNeeded: rng.next()) }[...]),
            ReceiptAttribute(type: 9, version: 1, value: [0x02, 0x04, 0x50, 0x33, 0x30, 0x35]),
            ReceiptAttribute(type: 11, version: 1, value: [0x02, 0x01, 0x00]),
            ReceiptAttribute(type: 14, version: 1, value: [0x02, 0x02, 0x00, 0xE5]),
            ReceiptAttribute(type: 20, version: 1, value: [0x0C, 0x00]),
        ]
        let undocumented =
            [1709, 1714, 1715, 1716, 1717, 1718].map {
                ReceiptAttribute(type: $0, version: 1, value: [0x0C, 0x00])
            } + [ReceiptAttribute(type: 1710, version: 1, value: [0x02, 0x01, 0x00])]

        var records: [InAppPurchase] = []
        records.reserveCapacity(purchases)
        var transaction: Int64 = 2_000_000_400_000_000
        var webOrder: Int64 = 2_000_000_100_000_000
        var chainRemaining = 0
        var chainOriginal = ""
        var chainProduct = ""
        var chainStart: Int64 = 0
        var period: Int64 = 0
        while records.count < purchases {
            var p = InAppPurchase()
            transaction += Int64(1 + rng.next() % 5_000)
            p.quantity = 1
            p.transactionIdentifier = String(transaction)
            p.unknownAttributes = undocumented
            p.undocumentedInteger1722 = 0
            let kind = rng.next() % 12
            if records.count == purchases / 2 {
                p.productIdentifier = markerProduct
                p.productType = .nonConsumable
                p.originalTransactionIdentifier = p.transactionIdentifier
                p.purchaseDate = ReceiptDate.date(milliseconds: created - 86_400_000 * 30)
                p.originalPurchaseDate = p.purchaseDate
                p.emptyDateAttributeTypes = [1708, 1712]
                p.isTrialPeriod = false
                p.isInIntroOfferPeriod = false
            } else if chainRemaining > 0 || kind < 6 {
                if chainRemaining == 0 {
                    chainRemaining = 12
                    chainOriginal = String(transaction)
                    let annual = rng.next() % 4 == 0
                    chainProduct =
                        annual ? "com.example.benchmark.app.subscription.pro.annual" : "com.example.benchmark.app.subscription.pro.monthly"
                    period = annual ? 86_400_000 * 365 : 86_400_000 * 30
                    chainStart = created - period * 12 - Int64(rng.next() % 1_000_000)
                }
                let index = Int64(12 - chainRemaining)
                chainRemaining -= 1
                p.productIdentifier = chainProduct
                p.productType = .autoRenewableSubscription
                p.originalTransactionIdentifier = chainOriginal
                p.purchaseDate = ReceiptDate.date(milliseconds: chainStart + index * period)
                p.originalPurchaseDate = ReceiptDate.date(milliseconds: chainStart + 3_000)
                p.subscriptionExpirationDate = ReceiptDate.date(milliseconds: chainStart + (index + 1) * period)
                webOrder += Int64(1 + rng.next() % 100)
                p.webOrderLineItemID = webOrder
                p.isTrialPeriod = index == 0
                p.isInIntroOfferPeriod = index == 1
                p.emptyDateAttributeTypes = [1712]
            } else {
                let consumable = kind < 10
                p.productIdentifier =
                    consumable
                    ? "com.example.benchmark.app.coins.\([100, 500, 1200][Int(rng.next() % 3)])"
                    : "com.example.benchmark.app.pass.\(rng.next() % 8)"
                p.productType = consumable ? .consumable : .nonRenewingSubscription
                p.originalTransactionIdentifier = p.transactionIdentifier
                let date = created - Int64(rng.next() % (86_400_000 * 365))
                p.purchaseDate = ReceiptDate.date(milliseconds: date)
                p.originalPurchaseDate = p.purchaseDate
                p.emptyDateAttributeTypes = [1708, 1712]
                p.webOrderLineItemID = 0
                p.isTrialPeriod = false
                p.isInIntroOfferPeriod = false
            }
            if rng.next() % 25 == 0, let purchased = p.purchaseDate {
                p.cancellationDate = purchased.addingTimeInterval(3_600)
                p.emptyDateAttributeTypes.remove(1712)
            }
            records.append(p)
        }
        receipt.inAppPurchases = records
        return receipt
    }
}
