@_spi(RawParsing) import ASN1
import Foundation
import TestSupport
import Testing

@testable import Receipts

/// The fast path for in-app records decides exactly what the general path decides.
@Suite struct FastPathTests {
    static func parse(_ payload: ArraySlice<UInt8>, fast: Bool) throws -> AppReceipt {
        var parser = AppReceiptParser(limits: .default, segmentedPayload: false, fastPath: fast)
        return try parser.parse(payload)
    }

    @Test func slotMaskLiteralMatchesTheList() {
        #expect(AppReceiptParser.singleValuedPurchaseSlotsLiteral == AppReceiptParser.singleValuedPurchaseSlots)
    }

    @Test(arguments: Fixtures.realAppReceipts)
    func bothPathsAgreeOnRealReceipts(_ name: String) throws {
        let receipt = try Fixtures.receipt(name)
        #expect(try Self.parse(receipt.payload, fast: true) == Self.parse(receipt.payload, fast: false))
    }

    @Test func fastPathTakesCanonicalRecords() throws {
        let receipt = try Fixtures.receipt("receipt-sandbox-g5.der")
        var parser = AppReceiptParser(limits: .default, segmentedPayload: false)
        var taken = 0
        try receipt.payload.span.withUnsafeBufferPointer { buffer in
            let raw = UnsafeRawBufferPointer(buffer)
            var set = try ASN1RawReaderForTests.set(raw)
            while let a = AppReceiptParser.fastAttribute(raw, at: set.position, end: set.end) {
                set.position = a.value.upperBound
                if a.type == 17 {
                    var purchase = InAppPurchase()
                    if parser.fastPurchase(raw, a.value, into: &purchase) { taken += 1 }
                }
            }
        }
        #expect(taken == 2)
    }
}

@Suite struct LazyAppReceiptTests {
    @Test(arguments: Fixtures.realAppReceipts)
    func lazyAnswersMatchTheFullParse(_ name: String) throws {
        let bytes = try Fixtures.bytes(name)
        let full = try AppReceipt(bytes)
        let lazy = try LazyAppReceipt(bytes)
        #expect(try lazy.inAppPurchaseCount() == full.inAppPurchases.count)
        for product in Set(full.inAppPurchases.compactMap(\.productIdentifier)) {
            #expect(try lazy.containsInAppPurchase(ofProduct: product))
        }
        #expect(try !lazy.containsInAppPurchase(ofProduct: "com.example.not-there"))
    }

    @Test func lazyQueryRejectsBrokenStructure() throws {
        let receipt = try Fixtures.receipt("purchasing_experiments_sandbox_receipt.der")
        let payload = Array(receipt.payload)
        for length in stride(from: 0, to: payload.count, by: 7) {
            let lazy = LazyAppReceipt(payload: payload[..<length])
            #expect(throws: ReceiptError.self) { _ = try lazy.inAppPurchaseCount() }
        }
    }
}
