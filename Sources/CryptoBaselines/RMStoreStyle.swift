internal import COpenSSL
package import Foundation
package import ReceiptCrypto

/// Benchmark baselines: what the Objective-C RMStore did, rewritten in Swift over OpenSSL.
///
/// RMStore's `RMAppReceipt` decoded the PKCS#7 envelope with `d2i_PKCS7`, took the SignedData's
/// `data` OCTET STRING, and walked the receipt's attribute SET with `ASN1_get_object`, reading the
/// attribute type and version with `d2i_ASN1_INTEGER` and materialising strings, data and date
/// strings field by field. These functions do the same work so that the package's Swift parser can
/// be compared against it, in `Benchmarks` and in the tests. Unlike RMStore they check every length
/// and return nil on malformed input instead of crashing. The attribute numbers below are RMStore's
/// (the receipt fields it read); the package's own are in Receipts.
package enum OpenSSLBaselines {
    /// Parses a receipt the RMStore way and returns the number of in-app purchase records, or nil
    /// if the bytes are not a SignedData receipt with a well-formed attribute SET.
    package static func rmstoreStyleParse(_ receipt: [UInt8]) -> Int? {
        defer { OpenSSLErrorQueue.clear() }
        guard let message = try? PKCS7Handle(berEncoded: receipt, allowTrailingBytes: true) else { return nil }
        return parsePayload(of: message)?.inAppPurchases.count
    }

    /// Verifies the receipt with `PKCS7_verify` against a store holding only `anchor` at `time`
    /// (as RMStore's `verifyPKCS7` did, but with an explicit time and purpose "any"), then parses
    /// it like ``rmstoreStyleParse(_:)``. Returns nil when verification or parsing fails.
    package static func rmstoreStyleVerifyAndParse(_ receipt: [UInt8], anchor: Certificate, at time: Date) -> Int? {
        defer { OpenSSLErrorQueue.clear() }
        guard let message = try? PKCS7Handle(berEncoded: receipt, allowTrailingBytes: true),
            rmshim_PKCS7_type_is_signed(message.pointer) == 1,
            let store = try? AnchorStore(anchors: [anchor], time: time)
        else { return nil }
        guard PKCS7_verify(message.pointer, nil, store.pointer, nil, nil, 0) == 1 else { return nil }
        return parsePayload(of: message)?.inAppPurchases.count
    }

    // MARK: - The RMStore-style model

    /// The receipt fields RMStore's `RMAppReceipt` kept, as raw strings and bytes.
    package struct Receipt {
        package var bundleIdentifier: String?
        package var bundleIdentifierData: [UInt8]?
        package var appVersion: String?
        package var opaqueValue: [UInt8]?
        package var receiptHash: [UInt8]?
        package var originalAppVersion: String?
        package var creationDate: String?
        package var expirationDate: String?
        package var inAppPurchases: [InAppPurchase] = []
    }

    /// The in-app purchase fields RMStore's `RMAppReceiptIAP` kept.
    package struct InAppPurchase {
        package var quantity: Int = 0
        package var productIdentifier: String?
        package var transactionIdentifier: String?
        package var originalTransactionIdentifier: String?
        package var purchaseDate: String?
        package var originalPurchaseDate: String?
        package var subscriptionExpirationDate: String?
        package var cancellationDate: String?
        package var webOrderLineItemID: Int = 0
    }

    /// The attached payload of `message`, parsed like ``parseReceipt(_:)``.
    static func parsePayload(of message: PKCS7Handle) -> Receipt? {
        guard let octets = message.signedContent else { return nil }
        let length = Int(ASN1_STRING_length(octets))
        guard length > 0, let data = ASN1_STRING_get0_data(octets) else { return nil }
        return parseReceipt(UnsafeBufferPointer(start: data, count: length))
    }

    /// Walks a receipt payload (the attribute SET) the RMStore way; nil if it is malformed.
    package static func parseReceipt(_ payload: UnsafeBufferPointer<UInt8>) -> Receipt? {
        var receipt = Receipt()
        let ok = walkAttributes(payload) { type, value in
            switch type {
            case 2:
                guard let text = readString(value, tag: V_ASN1_UTF8STRING) else { return false }
                receipt.bundleIdentifier = text
                receipt.bundleIdentifierData = Array(value)
            case 3:
                guard let text = readString(value, tag: V_ASN1_UTF8STRING) else { return false }
                receipt.appVersion = text
            case 4:
                receipt.opaqueValue = Array(value)
            case 5:
                receipt.receiptHash = Array(value)
            case 12:
                guard let text = readString(value, tag: V_ASN1_IA5STRING) else { return false }
                receipt.creationDate = text
            case 17:
                guard let purchase = parseInAppPurchase(value) else { return false }
                receipt.inAppPurchases.append(purchase)
            case 19:
                guard let text = readString(value, tag: V_ASN1_UTF8STRING) else { return false }
                receipt.originalAppVersion = text
            case 21:
                guard let text = readString(value, tag: V_ASN1_IA5STRING) else { return false }
                receipt.expirationDate = text
            default:
                break
            }
            return true
        }
        return ok ? receipt : nil
    }

    /// Walks one in-app purchase record (the SET inside attribute 17); nil if it is malformed.
    package static func parseInAppPurchase(_ payload: UnsafeBufferPointer<UInt8>) -> InAppPurchase? {
        var purchase = InAppPurchase()
        let ok = walkAttributes(payload) { type, value in
            switch type {
            case 1701:
                guard let number = readInteger(value) else { return false }
                purchase.quantity = number
            case 1702:
                guard let text = readString(value, tag: V_ASN1_UTF8STRING) else { return false }
                purchase.productIdentifier = text
            case 1703:
                guard let text = readString(value, tag: V_ASN1_UTF8STRING) else { return false }
                purchase.transactionIdentifier = text
            case 1705:
                guard let text = readString(value, tag: V_ASN1_UTF8STRING) else { return false }
                purchase.originalTransactionIdentifier = text
            case 1704:
                guard let text = readString(value, tag: V_ASN1_IA5STRING) else { return false }
                purchase.purchaseDate = text
            case 1706:
                guard let text = readString(value, tag: V_ASN1_IA5STRING) else { return false }
                purchase.originalPurchaseDate = text
            case 1708:
                guard let text = readString(value, tag: V_ASN1_IA5STRING) else { return false }
                purchase.subscriptionExpirationDate = text
            case 1711:
                guard let number = readInteger(value) else { return false }
                purchase.webOrderLineItemID = number
            case 1712:
                guard let text = readString(value, tag: V_ASN1_IA5STRING) else { return false }
                purchase.cancellationDate = text
            default:
                break
            }
            return true
        }
        return ok ? purchase : nil
    }

    // MARK: - ASN1_get_object walking

    /// One DER header read with `ASN1_get_object`, checked: no error flag, definite length,
    /// universal class, the expected tag and form, and contents within `limit`.
    private static func readHeader(
        _ cursor: inout UnsafePointer<UInt8>?,
        limit: UnsafePointer<UInt8>,
        tag expectedTag: Int32,
        constructed: Bool
    ) -> Int? {
        guard let start = cursor, start < limit else { return nil }
        var length = 0
        var tag: Int32 = 0
        var tagClass: Int32 = 0
        let flags = ASN1_get_object(&cursor, &length, &tag, &tagClass, limit - start)
        guard flags & 0x80 == 0, flags & 0x01 == 0,
            (flags & V_ASN1_CONSTRUCTED != 0) == constructed,
            tagClass == V_ASN1_UNIVERSAL, tag == expectedTag,
            let contents = cursor, length >= 0, length <= limit - contents
        else { return nil }
        return length
    }

    /// Walks `SET OF SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`, calling
    /// `visit` with each attribute's type and the OCTET STRING's contents. Stops and returns false
    /// at the first malformed element or when `visit` returns false.
    private static func walkAttributes(
        _ payload: UnsafeBufferPointer<UInt8>,
        _ visit: (Int, UnsafeBufferPointer<UInt8>) -> Bool
    ) -> Bool {
        guard let base = payload.baseAddress, payload.count > 0 else { return false }
        let end = base + payload.count
        var cursor: UnsafePointer<UInt8>? = base
        guard let setLength = readHeader(&cursor, limit: end, tag: V_ASN1_SET, constructed: true),
            let setStart = cursor
        else { return false }
        let setEnd = setStart + setLength
        while let position = cursor, position < setEnd {
            guard let sequenceLength = readHeader(&cursor, limit: setEnd, tag: V_ASN1_SEQUENCE, constructed: true),
                let sequenceStart = cursor
            else { return false }
            let sequenceEnd = sequenceStart + sequenceLength
            guard let type = readIntegerElement(&cursor, limit: sequenceEnd),
                readIntegerElement(&cursor, limit: sequenceEnd) != nil,
                let valueLength = readHeader(&cursor, limit: sequenceEnd, tag: V_ASN1_OCTET_STRING, constructed: false),
                let valueStart = cursor
            else { return false }
            guard visit(type, UnsafeBufferPointer(start: valueStart, count: valueLength)) else { return false }
            cursor = sequenceEnd
        }
        return true
    }

    /// Reads an INTEGER element the RMStore way (`d2i_ASN1_INTEGER` + `ASN1_INTEGER_get`).
    private static func readIntegerElement(_ cursor: inout UnsafePointer<UInt8>?, limit: UnsafePointer<UInt8>) -> Int? {
        guard let start = cursor, start < limit else { return nil }
        guard let integer = d2i_ASN1_INTEGER(nil, &cursor, limit - start) else { return nil }
        defer { ASN1_INTEGER_free(integer) }
        guard let after = cursor, after <= limit else { return nil }
        let value = ASN1_INTEGER_get(integer)
        // ASN1_INTEGER_get returns -1 both for -1 and for values that do not fit in a long.
        guard value != -1 else { return nil }
        return value
    }

    /// The value of an OCTET STRING that holds one INTEGER.
    private static func readInteger(_ value: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = value.baseAddress, value.count > 0 else { return nil }
        var cursor: UnsafePointer<UInt8>? = base
        return readIntegerElement(&cursor, limit: base + value.count)
    }

    /// The text of an OCTET STRING that holds one string element with `tag`.
    private static func readString(_ value: UnsafeBufferPointer<UInt8>, tag: Int32) -> String? {
        guard let base = value.baseAddress, value.count > 0 else { return nil }
        var cursor: UnsafePointer<UInt8>? = base
        guard let length = readHeader(&cursor, limit: base + value.count, tag: tag, constructed: false),
            let contents = cursor
        else { return nil }
        return String(decoding: UnsafeBufferPointer(start: contents, count: length), as: UTF8.self)
    }
}
