import Foundation
import Internals
import JSON
import ReceiptSigning
import TestSupport
import Testing

@testable import Receipts

/// The compact record storage keeps every value the public properties accept, and the byte
/// encoder of the verifyReceipt JSON writes exactly what the field-by-field writer writes.
@Suite struct RecordLayoutAndJSONTests {
    // MARK: Record storage

    @Test func recordsAre104Bytes() {
        #expect(MemoryLayout<InAppPurchase>.stride == 104)
        #expect(MemoryLayout<AppReceipt>.stride == 8)
    }

    /// Identifiers: canonical decimals become numbers, everything else stays text, and both read
    /// back as set.
    @Test(arguments: [
        "0", "1", "7", "10", "1000000123456789", "2000000400000001", "9999999999999999999", "1234567", "12345678",
        "123456789", "00", "01", "0123", "", " 1", "1 ", "+1", "-1", "12a4", "10000000000000000000", "18446744073709551615",
        "99999999999999999999", "١٢٣", "abc", "1.0", "0x10", "9/9",
    ])
    func identifiersRoundTrip(_ text: String) {
        var purchase = InAppPurchase()
        purchase.transactionIdentifier = text
        purchase.originalTransactionIdentifier = text
        #expect(purchase.transactionIdentifier == text)
        #expect(purchase.originalTransactionIdentifier == text)
        #expect(purchase.hasTransactionIdentifier(text))
        #expect(!purchase.hasTransactionIdentifier(text + "0"))
        let canonical =
            text.utf8.count >= 1 && text.utf8.count <= 19 && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
            && (text.utf8.count == 1 || text.utf8.first != 0x30)
        #expect(InAppPurchase.numericIdentifier(text) == (canonical ? UInt64(text) : nil))
        #expect(purchase.present.contains(.transactionIDText) == !canonical)
        purchase.transactionIdentifier = nil
        #expect(purchase.transactionIdentifier == nil)
        #expect(!purchase.hasTransactionIdentifier(text))
    }

    /// Numbers that fit inline and numbers that do not, and the rare fields, read back as set;
    /// clearing them leaves a record equal to an empty one (no box left behind).
    @Test func numbersAndRareFieldsRoundTrip() {
        let values: [Int64] = [0, 1, -1, 127, 128, -128, -129, 255, 32767, 2_147_483_647, 2_147_483_648, -2_147_483_649, .max, .min]
        for value in values {
            var p = InAppPurchase()
            p.quantity = value
            p.productType = .init(rawValue: value)
            p.undocumentedInteger1722 = value
            p.cancellationReason = .init(rawValue: value)
            p.webOrderLineItemID = value
            #expect(p.quantity == value)
            #expect(p.productType?.rawValue == value)
            #expect(p.undocumentedInteger1722 == value)
            #expect(p.cancellationReason?.rawValue == value)
            #expect(p.webOrderLineItemID == value)
            p.quantity = nil
            p.productType = nil
            p.undocumentedInteger1722 = nil
            p.cancellationReason = nil
            p.webOrderLineItemID = nil
            #expect(p == InAppPurchase())
            #expect(p.rare == nil)
        }
        var p = InAppPurchase()
        p.cancellationDate = Date(timeIntervalSince1970: 0)
        p.promotionalOfferIdentifier = "offer"
        p.attributeVersions = [1704: 2]
        #expect(p.cancellationDate == Date(timeIntervalSince1970: 0))
        #expect(p.isCancelled)
        #expect(p.promotionalOfferIdentifier == "offer")
        #expect(p.attributeVersions == [1704: 2])
        p.promotionalOfferIdentifier = nil
        p.attributeVersions = [:]
        #expect(p.rare == nil)  // a cancellation at 0 ms needs no box
        #expect(p.cancellationDate == Date(timeIntervalSince1970: 0))
        p.cancellationDate = nil
        #expect(p == InAppPurchase())
    }

    /// A receipt is one reference: a copy shares it until one side changes.
    @Test func receiptsCopyOnWrite() throws {
        let original = SyntheticReceipts.receipt(purchases: 3)
        var copy = original
        #expect(copy.box === original.box)
        copy.bundleIdentifier = "changed"
        copy.inAppPurchases[0].quantity = 9
        #expect(copy.box !== original.box)
        #expect(original.bundleIdentifier == "com.example.benchmark.app")
        #expect(original.inAppPurchases[0].quantity == 1)
        #expect(copy.inAppPurchases[0].quantity == 9)
    }

    /// Canonical shapes read in a straight line and odd ones (versions, big numbers, text ids)
    /// give the records their setters make.
    @Test func parsedRecordsEqualRecordsBuiltInCode() throws {
        var receipt = SyntheticReceipts.receipt(purchases: 40)
        receipt.inAppPurchases[1].quantity = 3_000_000_000
        receipt.inAppPurchases[2].productType = .init(rawValue: 1000)
        receipt.inAppPurchases[3].transactionIdentifier = "xcode-7"
        receipt.inAppPurchases[4].originalTransactionIdentifier = "0042"
        receipt.inAppPurchases[5].attributeVersions = [1701: 2, 1722: 3]
        receipt.inAppPurchases[6].promotionalOfferIdentifier = "promo"
        receipt.inAppPurchases[7].cancellationReason = .issueInApp
        receipt.inAppPurchases[8].undocumentedInteger1722 = -1000
        receipt.inAppPurchases[9].unknownAttributes = []
        // Xcode's layout keeps the records in order; DER sorts them (by encoding), so those are
        // matched by transaction identifier.
        let xcode = try AppReceipt(payload: receipt.encodedPayload(options: .xcode)[...])
        #expect(xcode == receipt)
        let der = try AppReceipt(payload: receipt.encodedPayload()[...])
        let byIdentifier = Dictionary(uniqueKeysWithValues: receipt.inAppPurchases.map { ($0.transactionIdentifier ?? "", $0) })
        #expect(der.inAppPurchases.count == receipt.inAppPurchases.count)
        for parsed in der.inAppPurchases + xcode.inAppPurchases {
            let built = byIdentifier[parsed.transactionIdentifier ?? ""]
            #expect(parsed == built)
            #expect(parsed.unknownAttributes == built?.unknownAttributes)
            #expect(parsed.attributeVersions == built?.attributeVersions)
            // The sizes kept for JSON output agree with the attributes themselves.
            #expect(parsed.unknownSizes == parsed.unknown.sizes)
            if let built { #expect(built.unknownSizes == built.unknown.sizes) }
        }
    }

    /// The eight-digit decoder of identifiers against the obvious one, over every length and
    /// digit position.
    @Test func decimalIdentifiersEightAtATime() {
        var rng = SplitMix64(seed: 16)
        for length in 0...22 {
            for _ in 0..<200 {
                var bytes = (0..<length).map { _ in UInt8(0x30 + rng.next() % 10) }
                if length > 0 && rng.next() % 4 == 0 {
                    bytes[Int(rng.next() % UInt64(length))] = UInt8(truncatingIfNeeded: rng.next())
                }
                let text = String(decoding: bytes, as: UTF8.self)
                let expected: UInt64? =
                    bytes.count >= 1 && bytes.count <= 19 && bytes.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
                        && (bytes.count == 1 || bytes[0] != 0x30) ? UInt64(text) : nil
                let decoded = bytes.withUnsafeBytes { AppReceiptParser.decimalIdentifier($0, 0..<$0.count) }
                #expect(decoded == expected, "\(bytes)")
            }
        }
    }

    // MARK: JSON

    static let optionSets: [ReceiptJSONOptions] = [
        ReceiptJSONOptions(),
        ReceiptJSONOptions(includeReceiptOnlyFields: false),
        ReceiptJSONOptions(requestDate: Date(timeIntervalSince1970: 1_700_000_000.123)),
    ]

    static func expectSameJSON(_ receipt: AppReceipt, _ label: String) {
        for indent in [0, 2, 5] {
            for options in optionSets {
                let fast = receipt.jsonText(indent: indent, options: options)
                let reference = receipt.referenceJSONText(indent: indent, options: options)
                #expect(fast == reference, "\(label), indent \(indent)")
                // The size bound jsonText writes in place with holds (so no spill happened).
                let bound = ReceiptJSONEncoder.bound(receipt, key: nil, options: options, indent: indent, level: 0)
                #expect(bound >= fast.utf8.count, "\(label), indent \(indent)")
                if fast != reference { return }
            }
        }
    }

    @Test(arguments: Fixtures.realAppReceipts)
    func realReceiptsWriteTheSameJSON(_ name: String) throws {
        Self.expectSameJSON(try Fixtures.receipt(name), name)
    }

    @Test func syntheticReceiptsWriteTheSameJSON() throws {
        for n in [0, 1, 25, 300] {
            let receipt = SyntheticReceipts.receipt(purchases: n, seed: UInt64(n) + 3)
            Self.expectSameJSON(receipt, "synthetic \(n), built")
            Self.expectSameJSON(try AppReceipt(payload: receipt.encodedPayload()[...]), "synthetic \(n), DER")
            Self.expectSameJSON(try AppReceipt(payload: receipt.encodedPayload(options: .xcode)[...]), "synthetic \(n), BER")
        }
    }

    /// Odd values: escapes, non-ASCII, text identifiers, extreme numbers, dates far from now
    /// and at every daylight saving change, unknown values of every base64 padding.
    @Test func oddRecordsWriteTheSameJSON() {
        var receipt = AppReceipt()
        receipt.receiptType = "Pro\"duction\\\n\t\u{01}\u{1F}é😀"
        receipt.bundleIdentifier = "com.example.\u{7F}"
        receipt.appItemID = .min
        receipt.downloadID = .max
        receipt.creationDate = Date(timeIntervalSince1970: -62_167_219_200)  // 0000-01-01T00:00:00Z
        receipt.expirationDate = Date(timeIntervalSince1970: 253_402_300_799.999)
        receipt.emptyDateAttributeTypes = [8, 63, 0]
        receipt.attributeVersions = [4: 2, 17: 3, 1000: -1]
        receipt.unknownAttributes = (0..<7).map {
            ReceiptAttribute(type: 100 + $0, version: $0 - 3, value: Array(repeating: 0xFB, count: $0)[...])
        }
        var instants: [Int64] = [0, -1, -999, 1, 999, -86_400_001, 1_700_000_000_123, 253_402_300_799_999, -62_167_219_200_000]
        for year in [1966, 1967, 1973, 1974, 1975, 1976, 1986, 1987, 2006, 2007, 2024, 2037] {
            for month in [1, 2, 3, 4, 10, 11] {
                let first = CivilCalendar.daysSince1970(year: year, month: month, day: 1)
                for day in 0..<31 {
                    for second: Int64 in [32_399, 32_400, 35_999, 36_000] {
                        instants.append(((first + Int64(day)) * 86_400 + second) * 1000)
                    }
                }
            }
        }
        var records: [InAppPurchase] = []
        for (index, ms) in instants.enumerated() {
            var p = InAppPurchase()
            p.quantity = [1, -5, 3_000_000_000, .min, .max][index % 5]
            p.productIdentifier = ["a\"b", "plain", "é", "", "tab\there"][index % 5]
            p.transactionIdentifier = ["1000000123456789", "0042", "x", "0", "9999999999999999999"][index % 5]
            p.originalTransactionIdentifier = index % 3 == 0 ? nil : String(index)
            p.purchaseDate = ReceiptDate.date(milliseconds: ms)
            p.originalPurchaseDate = ReceiptDate.date(milliseconds: ms + 1)
            if index % 2 == 0 { p.subscriptionExpirationDate = ReceiptDate.date(milliseconds: ms + 86_400_000) }
            if index % 7 == 0 {
                p.cancellationDate = ReceiptDate.date(milliseconds: ms - 3_600_000)
                p.cancellationReason = .init(rawValue: Int64(index % 3))
            }
            p.webOrderLineItemID = index % 4 == 0 ? nil : Int64(index) * 1_000_003
            p.isTrialPeriod = index % 3 == 0 ? nil : index % 3 == 1
            p.isInIntroOfferPeriod = index % 5 == 0 ? nil : index % 2 == 0
            p.promotionalOfferIdentifier = index % 11 == 0 ? "offer\\\(index)" : nil
            p.productType = index % 6 == 0 ? nil : .init(rawValue: Int64(index % 5) - 1)
            p.undocumentedInteger1722 = index % 9 == 0 ? 1 << 40 : 0
            p.attributeVersions = index % 13 == 0 ? [1703: 2] : [:]
            p.emptyDateAttributeTypes = index % 2 == 0 ? [1712] : [1708, 1712]
            p.unknownAttributes = (0..<(index % 4)).map {
                ReceiptAttribute(type: 1709 + $0, version: 1, value: Array(repeating: UInt8(index & 0xFF), count: $0 + index % 3)[...])
            }
            records.append(p)
        }
        receipt.inAppPurchases = records
        Self.expectSameJSON(receipt, "odd values")
    }

    /// Writing in place into memory too small for the output moves to a buffer of the encoder's
    /// own and loses nothing.
    @Test(arguments: [0, 1, 100, 5000, 1_000_000])
    func inPlaceSpillKeepsEverything(_ size: Int) {
        let receipt = SyntheticReceipts.receipt(purchases: 30)
        let expected = receipt.referenceJSONText(indent: 2)
        var memory = [UInt8](repeating: 0, count: size)
        let (text, spilled): (String, Bool) = memory.withUnsafeMutableBufferPointer { m in
            var encoder = ReceiptJSONEncoder(inPlace: m, indent: 2)
            encoder.write(receipt, key: nil, options: ReceiptJSONOptions())
            if let n = encoder.inPlaceCount { return (String(decoding: m[0..<n], as: UTF8.self), false) }
            return (String(decoding: encoder.spilledBytes(), as: UTF8.self), true)
        }
        #expect(text == expected)
        #expect(spilled == (size < expected.utf8.count))
    }

    /// The encoder continues and hands back the writer's state: values before and after it, keys,
    /// arrays of records.
    @Test func encoderContinuesTheWriter() {
        let receipt = SyntheticReceipts.receipt(purchases: 5)
        for indent in [0, 2] {
            var fast = JSONWriter(indent: indent)
            var reference = JSONWriter(indent: indent)
            for writer in [0, 1] {
                var json = JSONWriter(indent: indent)
                json.beginObject()
                json.number("status", "0")
                if writer == 0 {
                    receipt.writeJSON(to: &json, key: "receipt")
                    InAppPurchase.writeJSON(receipt.inAppPurchases, key: "latest_receipt_info", to: &json)
                    json.beginArray("one")
                    receipt.inAppPurchases[0].writeJSON(to: &json)
                    json.endArray()
                } else {
                    receipt.writeReferenceJSON(to: &json, key: "receipt")
                    json.beginArray("latest_receipt_info")
                    for p in receipt.inAppPurchases { p.writeReferenceJSON(to: &json) }
                    json.endArray()
                    json.beginArray("one")
                    receipt.inAppPurchases[0].writeReferenceJSON(to: &json)
                    json.endArray()
                }
                json.string("after", "x")
                json.endObject()
                if writer == 0 { fast = json } else { reference = json }
            }
            #expect(fast.text == reference.text)
        }
    }

    /// The day cache's Pacific offsets against the rule, every hour from 1960 to 2040 and every
    /// second around each change.
    @Test func dayCacheOffsets() {
        let start = CivilCalendar.daysSince1970(year: 1960, month: 1, day: 1)
        let end = CivilCalendar.daysSince1970(year: 2041, month: 1, day: 1)
        var mismatches: [Int64] = []
        var changes = 0
        for day in start..<end {
            let entry = DayCache.make(day)
            var seconds = (0..<24).map { $0 * 3600 }
            if entry.switchSecond != 86_400 {
                changes += 1
                seconds += Array(Int(entry.switchSecond) - 2...Int(entry.switchSecond) + 2)
            }
            for second in seconds {
                let offset = second < Int(entry.switchSecond) ? Int(entry.offsetBefore) : Int(entry.offsetAfter)
                if offset != ReceiptDate.pacificOffset(utcSeconds: day * 86_400 + Int64(second)) {
                    mismatches.append(day * 86_400 + Int64(second))
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        #expect(changes == 2 * (2040 - 1967 + 1))  // two changes a year since 1967
    }

    /// Digit counts at every power of ten and its neighbours.
    @Test func digitCounts() {
        var values: [UInt64] = [0, 1, 9, .max, .max - 1]
        var power: UInt64 = 1
        for _ in 0..<19 {
            power *= 10
            values += [power - 1, power, power + 1]
        }
        for value in values { #expect(ReceiptJSONEncoder.digitCount(value) == String(value).count, "\(value)") }
    }

    /// The escape test of the encoder against the byte-by-byte rule, for every byte in every
    /// position of a word.
    @Test func escapeDetection() {
        var mismatches: [[UInt8]] = []
        for length in 0...17 {
            for position in 0..<max(length, 1) {
                for byte in 0...255 {
                    for filler in [UInt8(ascii: "a"), 0xC3, 0x21, 0x5D] {
                        var bytes = Array(repeating: filler, count: length)
                        if length > 0 { bytes[position] = UInt8(byte) }
                        let expected = !bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
                        if bytes.withUnsafeBytes({ ReceiptJSONEncoder.needsNoEscape($0) }) != expected { mismatches.append(bytes) }
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
