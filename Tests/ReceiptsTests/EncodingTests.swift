import ASN1
import Foundation
import FuzzTargets
import Internals
import JSON
import Receipts
import TestSupport
import Testing

@Suite struct EncodingTests {
    /// Xcode receipts (BER, indefinite lengths, segmented OCTET STRING, +hhmm dates, unsorted SETs)
    /// re-encoded as DER give identical fields.
    @Test(arguments: Fixtures.xcodeReceipts)
    func xcodeReceiptReencodedAsDERGivesIdenticalFields(_ name: String) throws {
        let bytes = try Fixtures.bytes(name)
        let ber = try AppReceipt(bytes)
        // DER rejects the original envelope outright.
        #expect(throws: ASN1Error.self) { _ = try ASN1Tree.depthFirstNodes(bytes[...], rules: .der) }

        // Re-encode the envelope canonically and the payload with sorted SETs.
        var reader = try ASN1Reader(bytes, rules: .ber)
        var envelope = DERWriter()
        try envelope.appendCanonical(reader.readElement())
        let derEnvelope = envelope.bytes
        _ = try ASN1Tree.depthFirstNodes(derEnvelope[...], rules: .der)
        let fromDEREnvelope = try AppReceipt(derEnvelope)
        #expect(fromDEREnvelope == ber)
        #expect(fromDEREnvelope.envelope?.usesBERForms == false)

        var payloadReader = try ASN1Reader(ber.payload, rules: .ber)
        var sortedPayload = DERWriter()
        try sortedPayload.appendCanonical(payloadReader.readElement(), sortingSets: true)
        let derPayload = try AppReceipt(payload: sortedPayload.bytes[...])
        #expect(derPayload.inAppPurchases == ber.inAppPurchases)
        #expect(derPayload == ber)
    }

    /// Parsing, encoding with our encoder and parsing again is the identity on every real receipt.
    @Test(arguments: Fixtures.realAppReceipts)
    func payloadEncoderRoundTrips(_ name: String) throws {
        let original = try Fixtures.receipt(name)
        let encoded = original.encodedPayload()
        let reparsed = try AppReceipt(payload: encoded[...])
        #expect(reparsed == original)
        let xcodeLayout = try AppReceipt(payload: original.encodedPayload(options: .xcode)[...])
        #expect(xcodeLayout == original)
    }

    /// For App Store receipts the re-encoded payload is byte-identical: they are DER with sorted
    /// SETs, and the model keeps attribute versions, empty date strings and unknown attributes.
    @Test(arguments: Fixtures.realAppReceipts.filter { !Fixtures.xcodeReceipts.contains($0) })
    func appStorePayloadsReencodeByteForByte(_ name: String) throws {
        let original = try Fixtures.receipt(name)
        #expect(original.encodedPayload() == Array(original.payload))
        // Through JSON and back as well: nothing is lost on the way.
        let rebuilt = try AppReceipt(json: JSONValue.parse(original.jsonText()))
        #expect(rebuilt.encodedPayload() == Array(original.payload))
    }

    @Test(arguments: Fixtures.realAppReceipts)
    func jsonRoundTrips(_ name: String) throws {
        let original = try Fixtures.receipt(name)
        let text = original.jsonText()
        let rebuilt = try AppReceipt(json: JSONValue.parse(text))
        #expect(rebuilt == original)
        // Compact output parses to the same value.
        #expect(try JSONValue.parse(original.jsonText(indent: 0)) == JSONValue.parse(text))
    }

    /// The verifyReceipt JSON of RevenueCat's sample1 matches Apple's own response field by field
    /// wherever both carry the field.
    @Test func jsonMatchesApplesVerifyReceiptResponse() throws {
        let receipt = try Fixtures.receipt("base64encodedreceiptsample1.der")
        let apple = try JSONValue.parse(Fixtures.bytes("json/verifyReceiptSample1.json"))
        let appleReceipt = try #require(apple["receipt"])
        let ours = try JSONValue.parse(receipt.jsonText(options: ReceiptJSONOptions(includeReceiptOnlyFields: false)))
        guard case .object(let appleMembers) = appleReceipt, case .object(let ourMembers) = ours else {
            Issue.record("not objects")
            return
        }
        var compared = 0
        for (key, value) in appleMembers where !key.hasPrefix("request_date") && key != "in_app" {
            #expect(ours[key] == value, "\(key)")
            compared += 1
        }
        #expect(compared == 14)
        // Our receipt-level keys are all Apple's (no extras without includeReceiptOnlyFields).
        for (key, _) in ourMembers { #expect(appleReceipt[key] != nil, "\(key)") }
        let appleInApp = try #require(appleReceipt["in_app"]?.arrayValue)
        let ourInApp = try #require(ours["in_app"]?.arrayValue)
        #expect(appleInApp.count == ourInApp.count)
        for (a, o) in zip(appleInApp, ourInApp) {
            #expect(a == o)
        }
    }
}

@Suite struct DateTests {
    @Test func acceptedForms() throws {
        #expect(try ReceiptDate.parse("2020-07-14T19:36:40Z") == Date(timeIntervalSince1970: 1_594_755_400))
        #expect(try ReceiptDate.parse("2020-09-27T12:07:19.686Z") == Date(timeIntervalSince1970: 1_601_208_439.686))
        #expect(try ReceiptDate.parse("2020-09-27T12:07:19.6Z") == Date(timeIntervalSince1970: 1_601_208_439.6))
        #expect(try ReceiptDate.parse("2020-09-27T12:07:19.123456789Z") == Date(timeIntervalSince1970: 1_601_208_439.123))
        #expect(try ReceiptDate.parse("2021-04-03T22:38:45+0300") == (try ReceiptDate.parse("2021-04-03T19:38:45Z")))
        #expect(try ReceiptDate.parse("2021-04-03T22:38:45+03:00") == (try ReceiptDate.parse("2021-04-03T19:38:45Z")))
        #expect(try ReceiptDate.parse("2021-04-03T12:38:45-0730") == (try ReceiptDate.parse("2021-04-03T20:08:45Z")))
        #expect(try ReceiptDate.parse("2021-04-03 19:38:45z") == (try ReceiptDate.parse("2021-04-03T19:38:45Z")))
        #expect(try ReceiptDate.parse("") == nil)
        #expect(try ReceiptDate.parse("4001-01-01T00:00:00Z") == Date(timeIntervalSince1970: 64_092_211_200))
        #expect(try ReceiptDate.parse("2024-02-29T00:00:00Z") != nil)
    }

    @Test(arguments: [
        "2020-07-14", "2020-07-14T19:36:40", "2020-07-14T19:36:40ZZ", "2020-13-14T19:36:40Z", "2023-02-29T00:00:00Z",
        "2020-07-14T24:00:00Z", "2020-07-14T19:60:00Z", "2020-07-14T19:36:40.Z", "2020-07-14T19:36:40+030",
        "2020-07-14T19:36:40+2400", "2020/07/14T19:36:40Z", "20-07-14T19:36:40Z", "2020-07-14T19:36:40.1234567890Z",
        " 2020-07-14T19:36:40Z", "2020-07-14T19:36:4OZ",
    ])
    func rejectedForms(_ text: String) {
        #expect(receiptErrorCode { _ = try ReceiptDate.parse(text) } == .invalidDate)
    }

    @Test func appleFormats() throws {
        let date = try #require(try ReceiptDate.parse("2020-07-22T17:39:08Z"))
        #expect(ReceiptDate.appleGMT(date) == "2020-07-22 17:39:08 Etc/GMT")
        #expect(ReceiptDate.applePacific(date) == "2020-07-22 10:39:08 America/Los_Angeles")
        let winter = try #require(try ReceiptDate.parse("2013-01-01T07:00:00Z"))
        #expect(ReceiptDate.applePacific(winter) == "2012-12-31 23:00:00 America/Los_Angeles")
        #expect(ReceiptDate.rfc3339(Date(timeIntervalSince1970: 1_601_208_439.686)) == "2020-09-27T12:07:19.686Z")
        #expect(ReceiptDate.rfc3339(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
    }

    /// The hand-written America/Los_Angeles rules agree with the system time zone database.
    @Test func pacificOffsetMatchesTimeZoneDatabase() throws {
        let zone = try #require(TimeZone(identifier: "America/Los_Angeles"))
        var rng = SplitMix64(seed: 99)
        var checked = 0
        // Random instants 1970–2037, plus every transition hour of 2006–2008 and 2020.
        var instants: [Int64] = (0..<20_000).map { _ in Int64(rng.next() % 2_145_916_800) }
        for year in [1987, 2006, 2007, 2008, 2020, 2030] {
            for hour in 0..<(366 * 24) {
                let start = Int64((try? ReceiptDate.parse("\(year)-01-01T00:00:00Z"))??.timeIntervalSince1970 ?? 0)
                instants.append(start + Int64(hour) * 3600 + 1800)
            }
        }
        for instant in instants {
            let expected = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant)))
            #expect(ReceiptDate.pacificOffset(utcSeconds: instant) == expected, "\(instant)")
            checked += 1
        }
        #expect(checked > 50_000)
    }
}

@Suite struct QueryTests {
    static func purchase(_ product: String, _ id: String, original: String, from: Int, to: Int?, cancelled: Bool = false) -> InAppPurchase {
        var p = InAppPurchase()
        p.productIdentifier = product
        p.transactionIdentifier = id
        p.originalTransactionIdentifier = original
        p.purchaseDate = seconds(from)
        p.subscriptionExpirationDate = to.map(seconds)
        p.cancellationDate = cancelled ? seconds(from + 10) : nil
        return p
    }

    @Test func activeSubscriptionConsidersEveryRecord() {
        var receipt = AppReceipt()
        receipt.inAppPurchases = [
            Self.purchase("sub", "1", original: "1", from: 1000, to: 2000),
            // A future-dated renewal: latest expiry, not started at 1500. RMStore answered NO.
            Self.purchase("sub", "2", original: "1", from: 2000, to: 3000),
        ]
        #expect(receipt.containsActiveAutoRenewableSubscription(ofProduct: "sub", at: seconds(1500)))
        #expect(receipt.containsActiveAutoRenewableSubscription(ofProduct: "sub", at: seconds(2500)))
        #expect(!receipt.containsActiveAutoRenewableSubscription(ofProduct: "sub", at: seconds(3000)))
        #expect(!receipt.containsActiveAutoRenewableSubscription(ofProduct: "sub", at: seconds(999)))
        #expect(receipt.containsActiveAutoRenewableSubscription(ofProduct: "sub", at: seconds(3005), gracePeriod: 10))
        #expect(!receipt.containsActiveAutoRenewableSubscription(ofProduct: "other", at: seconds(1500)))
    }

    @Test func cancelledRecordsDoNotCountButDoNotHideOthers() {
        var receipt = AppReceipt()
        receipt.inAppPurchases = [
            Self.purchase("sub", "1", original: "1", from: 1000, to: 3000),
            Self.purchase("sub", "2", original: "1", from: 1000, to: 4000, cancelled: true),
            Self.purchase("once", "3", original: "3", from: 1000, to: nil, cancelled: true),
        ]
        #expect(receipt.containsActiveAutoRenewableSubscription(ofProduct: "sub", at: seconds(2000)))
        #expect(!receipt.containsActiveAutoRenewableSubscription(ofProduct: "sub", at: seconds(3500)))
        #expect(!receipt.containsInAppPurchase(ofProduct: "once"))
        #expect(receipt.inAppPurchases(ofProduct: "once").count == 1)
        #expect(receipt.latestSubscriptionRecords()["1"]?.transactionIdentifier == "1")
    }

    @Test func latestExpiryPerOriginalTransaction() throws {
        let receipt = try Fixtures.receipt("base64encodedreceiptsample1.der")
        let latest = receipt.latestSubscriptionRecords()
        #expect(latest.count == 1)
        #expect(latest["1000000692878476"]?.transactionIdentifier == "1000000696553650")
        #expect(receipt.containsInAppPurchase(ofProduct: "com.revenuecat.annual_39.99.2_week_intro"))
        #expect(receipt.inAppPurchase(transactionIdentifier: "1000000692905419")?.purchaseDate == seconds(1_594_763_877))
        #expect(
            receipt.containsActiveAutoRenewableSubscription(
                ofProduct: "com.revenuecat.annual_39.99.2_week_intro", at: seconds(1_595_440_000)))
        #expect(
            !receipt.containsActiveAutoRenewableSubscription(
                ofProduct: "com.revenuecat.annual_39.99.2_week_intro", at: seconds(1_595_443_146)))
    }

    @Test func deviceIdentifiers() {
        #expect(DeviceIdentifier("3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CD")?.bytes.count == 16)
        #expect(DeviceIdentifier("3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CD")?.description == "3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CD")
        #expect(DeviceIdentifier("f8:ff:c2:1e:91:82")?.bytes == [0xF8, 0xFF, 0xC2, 0x1E, 0x91, 0x82])
        #expect(DeviceIdentifier("f8ffc21e9182")?.description == "f8:ff:c2:1e:91:82")
        #expect(DeviceIdentifier("f8:ff:c2:1e:91") == nil)
        #expect(DeviceIdentifier("zz:ff:c2:1e:91:82") == nil)
        #expect(DeviceIdentifier("3B76A7BD8F5B-46A4-BCB1-CCE8DBD1B3CD") == nil)
    }

    /// Strings are read and written in runs: escapes between, before and after runs, and a
    /// kilobyte run, survive both ways.
    @Test func jsonStringsRoundTripAroundEscapes() throws {
        let long = String(repeating: "QUJD", count: 3000)
        for text in ["", "plain", "\"", "a\"b\\c\u{1}d\ne\tf\rg", "\\end\\", "é😀\u{1F}", long + "\"" + long] {
            var writer = JSONWriter(indent: 0)
            writer.beginObject()
            writer.string("k", text)
            writer.endObject()
            #expect(try JSONValue.parse(writer.output)["k"]?.stringValue == text, "\(text.prefix(20))")
        }
        var writer = JSONWriter(indent: 0)
        writer.string("a\"b\u{1}")
        #expect(writer.text == #""a\"b\u0001""#)
        #expect(try JSONValue.parse(#""x\u00e9\ud83d\ude00y\/""#) == .string("xé😀y/"))
        #expect(throws: JSONError.self) { try JSONValue.parse([0x22, 0x61, 0x0A, 0x22]) }
    }
}

/// In-app attribute 1720: the cancellation reason, decoded on both parse paths, written back, and
/// carried in the verifyReceipt JSON as a string.
@Suite struct CancellationReasonEncodingTests {
    func receipt(reason: InAppPurchase.CancellationReason?) -> AppReceipt {
        var purchase = InAppPurchase()
        purchase.quantity = 1
        purchase.productIdentifier = "com.example.monthly"
        purchase.transactionIdentifier = "1000"
        purchase.purchaseDate = Date(timeIntervalSince1970: 1_738_400_000)
        purchase.cancellationDate = Date(timeIntervalSince1970: 1_738_584_000)
        purchase.cancellationReason = reason
        var receipt = AppReceipt()
        receipt.bundleIdentifier = "com.example"
        receipt.inAppPurchases = [purchase]
        return receipt
    }

    @Test(arguments: [InAppPurchase.CancellationReason.other, .issueInApp, InAppPurchase.CancellationReason(rawValue: 7)])
    func roundTrip(reason: InAppPurchase.CancellationReason) throws {
        let payload = receipt(reason: reason).encodedPayload()
        let parsed = try AppReceipt(payload: payload[...])
        let record = try #require(parsed.inAppPurchases.first)
        #expect(record.cancellationReason == reason)
        #expect(record.unknownAttributes.isEmpty)
        #expect(try ReferenceReceiptParser.parse(payload[...]).inAppPurchases.first?.cancellationReason == reason)
        let json = parsed.jsonText(indent: 0)
        #expect(json.contains("\"cancellation_reason\":\"\(reason.rawValue)\""))
        let again = try AppReceipt(json: try JSONValue.parse(json))
        #expect(again.inAppPurchases.first?.cancellationReason == reason)
    }

    @Test func absentWhenNotWritten() throws {
        let parsed = try AppReceipt(payload: receipt(reason: nil).encodedPayload()[...])
        #expect(parsed.inAppPurchases.first?.cancellationReason == nil)
        #expect(!parsed.jsonText().contains("cancellation_reason"))
    }
}
