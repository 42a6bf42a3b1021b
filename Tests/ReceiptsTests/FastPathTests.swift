@_spi(RawParsing) import ASN1
import Foundation
@testable import Receipts
import Testing

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
