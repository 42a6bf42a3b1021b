import ASN1
import Foundation
import Receipts
import TestSupport
import Testing

/// Bad input gets a typed error: never a crash, a hang or unbounded memory.
@Suite struct MalformedInputTests {
    @Test(arguments: ["base64encoded_sandboxReceipt3.der", "receipt-xcode.der"])
    func everyTruncationPrefixFailsWithATypedError(_ name: String) throws {
        let bytes = try Fixtures.bytes(name)
        for length in 0..<bytes.count {
            let code = receiptErrorCode { _ = try AppReceipt(Array(bytes[..<length])) }
            #expect(code != nil, "prefix of \(length) bytes parsed")
        }
        _ = try AppReceipt(bytes)
    }

    @Test func everyTruncationOfThePayloadFails() throws {
        let receipt = try Fixtures.receipt("purchasing_experiments_sandbox_receipt.der")
        let payload = Array(receipt.payload)
        for length in 0..<payload.count {
            #expect(receiptErrorCode { _ = try AppReceipt(payload: payload[..<length]) } != nil)
        }
    }

    @Test func missingEndOfContentsMarker() throws {
        // The Xcode receipt ends with the end-of-contents markers of its indefinite-length layers.
        var bytes = try Fixtures.bytes("receipt-xcode.der")
        #expect(Array(bytes.suffix(2)) == [0, 0])
        bytes.removeLast(2)
        do {
            _ = try AppReceipt(bytes)
            Issue.record("parsed without its end-of-contents marker")
        } catch {
            #expect(error.code == .malformedEnvelope)
            #expect(error.underlying?.code == .missingEndOfContents)
        }
    }

    @Test func lengthsPastTheEndAnd64BitLengths() throws {
        var bytes = try Fixtures.bytes("receipt-watch.der")
        // Outer SEQUENCE: 30 82 xx xx. Declare one byte more than there is.
        #expect(bytes[0] == 0x30 && bytes[1] == 0x82)
        let length = Int(bytes[2]) << 8 | Int(bytes[3])
        bytes[2] = UInt8((length + 1) >> 8)
        bytes[3] = UInt8((length + 1) & 0xFF)
        #expect(receiptErrorCode { _ = try AppReceipt(bytes) } == .malformedEnvelope)

        let sixtyFourBit: [UInt8] = [0x30, 0x88, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x06, 0x00]
        do {
            _ = try AppReceipt(sixtyFourBit)
            Issue.record("accepted a 64-bit length")
        } catch {
            #expect(error.underlying?.code == .invalidLength)
        }
    }

    @Test func depthBeyondTheLimit() throws {
        var bytes: [UInt8] = []
        for _ in 0..<60 { bytes += [0x30, 0x80] }
        bytes += [UInt8](repeating: 0, count: 120)
        do {
            _ = try AppReceipt(bytes)
            Issue.record("accepted 60 levels")
        } catch {
            #expect(error.underlying?.code == .depthLimitExceeded)
        }
    }

    @Test func trailingBytes() throws {
        let bytes = try Fixtures.bytes("receipt-watch.der") + [0, 0, 0, 0]
        do {
            _ = try AppReceipt(bytes)
            Issue.record("accepted trailing bytes")
        } catch {
            #expect(error.underlying?.code == .trailingBytes)
            #expect(error.offset == bytes.count - 4)
        }
    }

    /// Builds a payload from raw attribute SEQUENCE contents.
    static func payload(_ attributes: [[UInt8]], setTag: UInt8 = 0x31) -> [UInt8] {
        var writer = DERWriter()
        writer.append(
            ASN1Identifier(shortForm: setTag),
            content: attributes.flatMap { attribute in
                var w = DERWriter()
                w.append(.sequence, content: attribute)
                return w.bytes
            })
        return writer.bytes
    }

    static func attribute(_ type: Int, _ value: [UInt8], version: Int = 1) -> [UInt8] {
        var w = DERWriter()
        w.appendInteger(type)
        w.appendInteger(version)
        w.appendOctetString(value)
        return w.bytes
    }

    static func utf8(_ s: String) -> [UInt8] {
        var w = DERWriter()
        w.appendUTF8String(s)
        return w.bytes
    }

    @Test func wrongTagsWhereSetSequenceOrIntegerAreExpected() {
        // The payload is a SEQUENCE instead of a SET.
        let notASet = Self.payload([Self.attribute(2, Self.utf8("a"))], setTag: 0x30)
        #expect(receiptErrorCode { _ = try AppReceipt(payload: notASet[...]) } == .malformedPayload)
        // An attribute is a SET instead of a SEQUENCE.
        var w = DERWriter()
        w.appendSetOf { $0.appendSetOf { $0.appendInteger(2) } }
        #expect(receiptErrorCode { _ = try AppReceipt(payload: w.bytes[...]) } == .malformedPayload)
        // The attribute type is an OCTET STRING instead of an INTEGER.
        var bad = DERWriter()
        bad.appendOctetString([2])
        bad.appendInteger(1)
        bad.appendOctetString(Self.utf8("a"))
        #expect(receiptErrorCode { _ = try AppReceipt(payload: Self.payload([bad.bytes])[...]) } == .malformedPayload)
        // A quantity that is a string, and a bundle id that is an INTEGER.
        var quantity = DERWriter()
        quantity.appendInteger(1)
        let inApp = Self.payload([Self.attribute(1701, Self.utf8("1"))])
        #expect(receiptErrorCode { _ = try AppReceipt(payload: Self.payload([Self.attribute(17, inApp)])[...]) } == .invalidAttributeValue)
        #expect(
            receiptErrorCode { _ = try AppReceipt(payload: Self.payload([Self.attribute(2, quantity.bytes)])[...]) }
                == .invalidAttributeValue)
    }

    @Test func duplicateBundleIdentifierIsRejected() {
        let payload = Self.payload([Self.attribute(2, Self.utf8("com.good")), Self.attribute(2, Self.utf8("com.evil"))])
        do {
            _ = try AppReceipt(payload: payload[...])
            Issue.record("accepted two bundle ids")
        } catch {
            #expect(error.code == .duplicateAttribute)
            #expect(error.attributeType == 2)
        }
        let purchase = Self.payload([Self.attribute(1703, Self.utf8("1")), Self.attribute(1703, Self.utf8("2"))])
        #expect(receiptErrorCode { _ = try AppReceipt(payload: Self.payload([Self.attribute(17, purchase)])[...]) } == .duplicateAttribute)
    }

    @Test func invalidUTF8IsAnErrorNotAReplacement() {
        var w = DERWriter()
        w.append(.utf8String, content: [0x63, 0x6F, 0xC3, 0x28])
        let payload = Self.payload([Self.attribute(2, w.bytes)])
        #expect(receiptErrorCode { _ = try AppReceipt(payload: payload[...]) } == .invalidString)
    }

    @Test func badDatesAndFlags() {
        var w = DERWriter()
        w.appendIA5String("2020-13-01T00:00:00Z")
        #expect(receiptErrorCode { _ = try AppReceipt(payload: Self.payload([Self.attribute(12, w.bytes)])[...]) } == .invalidDate)
        var flag = DERWriter()
        flag.appendInteger(2)
        let inApp = Self.payload([Self.attribute(1713, flag.bytes)])
        #expect(receiptErrorCode { _ = try AppReceipt(payload: Self.payload([Self.attribute(17, inApp)])[...]) } == .invalidAttributeValue)
        var huge = DERWriter()
        huge.appendUnsignedInteger(bytes: [UInt8](repeating: 0xFF, count: 9))
        let bigID = Self.payload([Self.attribute(1711, huge.bytes)])
        #expect(receiptErrorCode { _ = try AppReceipt(payload: Self.payload([Self.attribute(17, bigID)])[...]) } == .malformedPayload)
    }

    @Test func limitsAreEnforced() {
        let purchases = (0..<5).map { _ in Self.attribute(17, Self.payload([])) }
        let payload = Self.payload(purchases)
        var limits = ReceiptLimits()
        limits.maximumInAppPurchases = 4
        #expect(receiptErrorCode { _ = try AppReceipt(payload: payload[...], limits: limits) } == .limitExceeded)
        limits = ReceiptLimits(maximumAttributes: 3)
        #expect(receiptErrorCode { _ = try AppReceipt(payload: payload[...], limits: limits) } == .limitExceeded)
        limits = ReceiptLimits(maximumStringLength: 3)
        #expect(
            receiptErrorCode { _ = try AppReceipt(payload: Self.payload([Self.attribute(2, Self.utf8("abcd"))])[...], limits: limits) }
                == .limitExceeded)
        limits = ReceiptLimits(maximumInputSize: 100)
        #expect(receiptErrorCode { _ = try AppReceipt([0x30] + [UInt8](repeating: 0, count: 200), limits: limits) } == .inputTooLarge)
    }

    @Test func nonReceiptFiles() throws {
        #expect(receiptErrorCode { _ = try AppReceipt([]) } == .notAReceipt)
        #expect(receiptErrorCode { _ = try AppReceipt(Fixtures.bytes("not_a_receipt")) } == .notAReceipt)
        // A certificate is a SEQUENCE but not a ContentInfo.
        #expect(receiptErrorCode { _ = try AppReceipt(Fixtures.bytes("certs/AppleIncRootCertificate.cer")) } == .malformedEnvelope)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let random = (0..<Int.random(in: 0..<512, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(receiptErrorCode { _ = try AppReceipt(random) } != nil)
        }
        #expect(receiptErrorCode { _ = try AppReceipt(Array("QUJD!".utf8)) } == .notAReceipt)
        #expect(receiptErrorCode { _ = try AppReceipt(Array("MIIB=A==".utf8)) } == .invalidBase64)
    }

    @Test func contentTypeOtherThanSignedData() {
        var w = DERWriter()
        w.appendSequence { ci in
            ci.appendObjectIdentifier(ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 7, 1))
            ci.appendConstructed(.contextSpecific(0, constructed: true)) { $0.appendOctetString([1]) }
        }
        #expect(receiptErrorCode { _ = try AppReceipt(w.bytes) } == .unsupportedEnvelope)
    }
}
