@_spi(RawParsing) import ASN1
import Foundation
import FuzzTargets
import TestSupport
import Testing

@testable import Receipts

/// The payload parser decides exactly what the plain reference parser (``ReferenceReceiptParser``,
/// in the fuzz targets) decides: the same receipt, or an error with the same code.
@Suite struct ReferenceParserTests {
    /// `AppReceipt(payload:)`, or with `reference` the reference parser.
    static func parse(_ payload: ArraySlice<UInt8>, reference: Bool, limits: ReceiptLimits = .default) throws -> AppReceipt {
        reference ? try ReferenceReceiptParser.parse(payload, limits: limits) : try AppReceipt(payload: payload, limits: limits)
    }

    /// The outcome of a parse: the receipt, or the error's code.
    enum Outcome: Equatable {
        case receipt(AppReceipt)
        case failure(ReceiptError.Code)

        var succeeded: Bool {
            if case .receipt = self { return true }
            return false
        }
    }

    static func outcome(_ payload: [UInt8], reference: Bool, limits: ReceiptLimits = .default) -> Outcome {
        do {
            return .receipt(try parse(payload[...], reference: reference, limits: limits))
        } catch let error as ReceiptError {
            return .failure(error.code)
        } catch {
            Issue.record("unexpected error \(error)")
            return .failure(.malformedPayload)
        }
    }

    /// An attribute SEQUENCE from encoded type, version and value elements.
    static func attribute(type: [UInt8], version: [UInt8] = [0x02, 0x01, 0x01], octetString: [UInt8]) -> [UInt8] {
        var w = DERWriter()
        w.append(.sequence, content: type + version + octetString)
        return w.bytes
    }

    /// An attribute with INTEGER type `type`, version 1, and `value` in a DER OCTET STRING.
    static func attribute(_ type: Int, _ value: [UInt8]) -> [UInt8] {
        var t = DERWriter()
        t.appendInteger(type)
        var v = DERWriter()
        v.appendOctetString(value)
        return attribute(type: t.bytes, octetString: v.bytes)
    }

    static func element(_ tag: ASN1Identifier, _ content: [UInt8]) -> [UInt8] {
        var w = DERWriter()
        w.append(tag, content: content)
        return w.bytes
    }

    static func set(_ attributes: [[UInt8]]) -> [UInt8] { element(.set, attributes.flatMap { $0 }) }

    /// A canonical record with one changed attribute, wrapped as a payload with that record.
    static func payload(withRecord record: [UInt8]) -> [UInt8] {
        set([attribute(2, element(.utf8String, Array("com.example".utf8))), attribute(17, record)])
    }

    static let canonical: [[UInt8]] = [
        attribute(1701, element(.integer, [1])),
        attribute(1702, element(.utf8String, Array("com.example.product".utf8))),
        attribute(1703, element(.utf8String, Array("1000000123456789".utf8))),
        attribute(1704, element(.ia5String, Array("2020-02-29T23:59:60Z".utf8))),
    ]

    /// Records that vary one DER or date rule. For each, the parser and the reference must give the
    /// same receipt or the same error code; `taken` marks the canonical shapes the decoder reads
    /// inline (each of them must parse).
    static let variants: [(name: String, attribute: [UInt8], taken: Bool)] = [
        ("canonical", attribute(1705, element(.utf8String, Array("1000000000000001".utf8))), true),
        (
            "non-minimal attribute type",
            attribute(type: [0x02, 0x03, 0x00, 0x06, 0xA5], octetString: element(.octetString, element(.integer, [1]))), false
        ),
        (
            "non-minimal version",
            attribute(
                type: [0x02, 0x02, 0x06, 0xA5], version: [0x02, 0x02, 0x00, 0x01],
                octetString: element(.octetString, element(.integer, [1]))), false
        ),
        (
            "long-form OCTET STRING length below 128",
            attribute(type: [0x02, 0x02, 0x06, 0xA5], octetString: [0x04, 0x81, 0x03, 0x02, 0x01, 0x01]), false
        ),
        (
            "two-octet value length with a leading zero",
            attribute(type: [0x02, 0x02, 0x06, 0xA6], octetString: element(.octetString, [0x0C, 0x82, 0x00, 0x01, 0x61])), false
        ),
        ("non-minimal quantity", attribute(1711, element(.integer, [0x00, 0x05])), false),
        ("negative web order line item", attribute(1711, element(.integer, [0xFF, 0x7F])), true),
        ("string of 200 bytes (long-form length)", attribute(1721, element(.utf8String, Array(repeating: 0x61, count: 200))), true),
        ("non-ASCII string", attribute(1721, element(.utf8String, Array("café".utf8))), false),
        ("date with milliseconds", attribute(1706, element(.ia5String, Array("2021-03-04T05:06:07.890Z".utf8))), true),
        ("date with an offset", attribute(1706, element(.ia5String, Array("2021-03-04T05:06:07+01:30".utf8))), true),
        ("date with a lower-case t and z", attribute(1706, element(.ia5String, Array("2021-03-04t05:06:07z".utf8))), true),
        ("date with a space", attribute(1706, element(.ia5String, Array("2021-03-04 05:06:07Z".utf8))), true),
        ("date before 1970", attribute(1706, element(.ia5String, Array("1969-12-31T23:59:59Z".utf8))), true),
        ("date in year 0", attribute(1706, element(.ia5String, Array("0000-02-29T00:00:00Z".utf8))), true),
        ("February 29 of a common year", attribute(1706, element(.ia5String, Array("2100-02-29T00:00:00Z".utf8))), false),
        ("April 31", attribute(1706, element(.ia5String, Array("2021-04-31T00:00:00Z".utf8))), false),
        ("hour 24", attribute(1706, element(.ia5String, Array("2021-04-30T24:00:00Z".utf8))), false),
        ("a letter in the year", attribute(1706, element(.ia5String, Array("2O21-04-30T00:00:00Z".utf8))), false),
        ("a slash for a dash", attribute(1706, element(.ia5String, Array("2021/04-30T00:00:00Z".utf8))), false),
        ("a non-ASCII separator", attribute(1706, element(.utf8String, Array("2021-04-30\u{00A0}00:00:00Z".utf8))), false),
        ("a date without a zone", attribute(1706, element(.ia5String, Array("2021-04-30T00:00:00".utf8))), false),
        ("an empty date", attribute(1708, element(.ia5String, [])), true),
        ("cancellation reason 1", attribute(1720, element(.integer, [1])), true),
        ("cancellation reason beyond the documented values", attribute(1720, element(.integer, [0x01, 0x00])), true),
        ("cancellation reason as a string", attribute(1720, element(.utf8String, Array("1".utf8))), false),
        ("a string declaring more bytes than it has, for a number", attribute(1707, [0x0C, 0x05, 0x61]), false),
        ("an empty value for a number", attribute(1711, []), false),
        ("an empty value for a string", attribute(1703, []), false),
        ("a number with bytes after it", attribute(1701, [0x02, 0x01, 0x01, 0x00]), false),
        ("a BOOLEAN with bytes after it, for a number", attribute(1711, [0x01, 0x00, 0x7B, 0x24]), false),
    ]

    @Test func everyVariantGetsTheReferenceAnswer() {
        for variant in Self.variants {
            let record = Self.set(Self.canonical + [variant.attribute])
            let payload = Self.payload(withRecord: record)
            let parsed = Self.outcome(payload, reference: false)
            let reference = Self.outcome(payload, reference: true)
            #expect(parsed == reference, "\(variant.name)")
            if variant.taken { #expect(parsed.succeeded, "\(variant.name)") }
        }
    }

    /// Each variant in a record that wraps the SET in an OCTET STRING, carries an unknown attribute
    /// with a long-form length, has a large product type first, or repeats an attribute after it:
    /// the same answers again. With two faults (the variant's and the repeat), both name the first
    /// in byte order.
    @Test func variantsInOtherFramingsGetTheReferenceAnswer() {
        let unknownLong = Self.attribute(
            type: [0x02, 0x02, 0x07, 0xD0], octetString: Self.element(.octetString, Array(repeating: 7, count: 200)))
        for variant in Self.variants {
            let records: [[UInt8]] = [
                Self.set(Self.canonical + [variant.attribute, Self.canonical[0]]),
                Self.element(.octetString, Self.set(Self.canonical + [variant.attribute])),
                Self.set(Self.canonical + [variant.attribute, unknownLong]),
                Self.set([Self.attribute(1707, Self.element(.integer, [0x01, 0x00])), variant.attribute] + Self.canonical),
            ]
            for (index, record) in records.enumerated() {
                let payload = Self.payload(withRecord: record)
                let parsed = Self.outcome(payload, reference: false)
                let reference = Self.outcome(payload, reference: true)
                #expect(parsed == reference, "\(variant.name) \(index)")
            }
        }
    }

    @Test func stringAndDateLimitsHoldInBoth() {
        let record = Self.set(Self.canonical)
        let payload = Self.payload(withRecord: record)
        // The date (20 bytes) and the product identifier (19) are the longest strings.
        for maximum in [18, 19, 20] {
            let limits = ReceiptLimits(maximumStringLength: maximum)
            let parsed = Self.outcome(payload, reference: false, limits: limits)
            #expect(parsed == Self.outcome(payload, reference: true, limits: limits), "\(maximum)")
            #expect((maximum == 20) == parsed.succeeded, "\(maximum)")
        }
    }

    /// The attribute limit counts in-app attributes wherever it is reached.
    @Test func attributeLimitHoldsInBoth() {
        let payload = Self.payload(withRecord: Self.set(Self.canonical))
        for maximum in 1...8 {
            let limits = ReceiptLimits(maximumAttributes: maximum)
            let parsed = Self.outcome(payload, reference: false, limits: limits)
            #expect(parsed == Self.outcome(payload, reference: true, limits: limits), "\(maximum)")
            #expect((maximum >= 6) == parsed.succeeded, "\(maximum)")
        }
    }

    @Test func anEmptyRecordValueAtTheEndOfThePayloadIsATypedError() {
        // `30 08 02 01 11 02 01 01 04 00`: attribute 17 with no value octets, the payload's last bytes.
        let payload = Self.set([Self.attribute(type: [0x02, 0x01, 0x11], octetString: [0x04, 0x00])])
        #expect(Self.outcome(payload, reference: false) == .failure(.malformedPayload))
        #expect(Self.outcome(payload, reference: true) == .failure(.malformedPayload))
    }

    @Test func slotMaskLiteralMatchesTheList() {
        let modelled = [1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1713, 1719, 1720, 1721, 1722]
        #expect(AppReceiptParser.singleValuedPurchaseSlotsLiteral == modelled.reduce(0) { $0 | 1 << UInt32($1 - 1701) })
    }

    @Test(arguments: Fixtures.realAppReceipts)
    func parserAndReferenceAgreeOnRealReceipts(_ name: String) throws {
        let receipt = try Fixtures.receipt(name)
        #expect(try Self.parse(receipt.payload, reference: false) == Self.parse(receipt.payload, reference: true))
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
