import ASN1
import Foundation
public import Receipts

/// The receipt payload grammar read the plain way, as an oracle for `AppReceipt(payload:)`.
///
/// Written on the public element reader (`ASN1Reader`) and the models' public setters, one
/// attribute at a time in document order, with no shortcut: the library's parser (one straight
/// pass over the raw cursor) must accept exactly what this accepts and build an equal receipt. The
/// fuzz target `payload` and `ReceiptsTests.ReferenceParserTests` compare the two, error codes
/// included: where an input has several faults, both name the first in byte order.
/// Only the depth under an OCTET STRING wrapper is counted from the wrapper's content (a limit
/// the comparisons leave at its default).
public enum ReferenceReceiptParser {
    /// Parses a bare payload (the DER SET of receipt attributes) into a receipt.
    public static func parse(_ payload: ArraySlice<UInt8>, limits: ReceiptLimits = .default) throws(ReceiptError) -> AppReceipt {
        var state = State(limits: limits)
        do {
            return try state.receipt(payload)
        } catch let error as ReceiptError {
            throw error
        } catch let error as ASN1Error {
            throw ReceiptError(code: .malformedPayload, offset: error.offset, reason: "receipt payload: \(error.reason)", underlying: error)
        } catch {
            throw ReceiptError(code: .malformedPayload, offset: nil, reason: "\(error)")
        }
    }

    /// One attribute SEQUENCE: type, version, and the OCTET STRING's content.
    struct Attribute {
        let type: Int
        let version: Int
        let offset: Int
        let value: ArraySlice<UInt8>
    }

    /// Modelled receipt attributes that may occur once.
    static let singleValuedReceiptTypes: Set<Int> = [0, 1, 2, 3, 4, 5, 8, 10, 12, 13, 15, 16, 18, 19, 21, 25]
    /// Modelled in-app attributes that may occur once.
    static let singleValuedPurchaseTypes: Set<Int> = [
        1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1713, 1719, 1720, 1721, 1722,
    ]

    struct State {
        let limits: ReceiptLimits
        var attributes = 0

        var asn1Limits: ASN1Limits { ASN1Limits(maximumDepth: limits.maximumDepth, maximumInputSize: Int.max) }

        /// The attributes of a SET, unwrapping at most two OCTET STRINGs around it.
        func openSet(_ bytes: ArraySlice<UInt8>) throws -> ASN1Reader {
            var reader = try ASN1Reader(bytes, rules: .der, limits: asn1Limits)
            var element = try reader.readElement()
            try reader.finish()
            var wrappers = 0
            while element.identifier == .octetString && wrappers < 2 {
                wrappers += 1
                reader = try ASN1Reader(element.content, rules: .der, limits: asn1Limits)
                element = try reader.readElement()
                try reader.finish()
            }
            guard element.identifier == .set else {
                throw ASN1Error(code: .unexpectedTag, offset: element.offset, reason: "expected a SET of attributes")
            }
            return try element.children()
        }

        mutating func next(_ set: inout ASN1Reader) throws -> Attribute {
            attributes += 1
            guard attributes <= limits.maximumAttributes else {
                throw ReceiptError(code: .limitExceeded, offset: set.position, reason: "too many attributes")
            }
            let element = try set.readElement(.sequence)
            var sequence = try element.children()
            let type = try sequence.readInteger(Int64.self)
            let version = try sequence.readInteger(Int64.self)
            let value = try sequence.readOctetString()
            try sequence.finish()
            return Attribute(type: Int(type), version: Int(version), offset: element.offset, value: value)
        }

        func fail(_ code: ReceiptError.Code, _ a: Attribute, _ reason: String) -> ReceiptError {
            ReceiptError(code: code, offset: a.offset, attributeType: a.type, reason: reason)
        }

        /// The one element inside the value, which must carry one of `tags`.
        func element(_ a: Attribute, _ tags: Set<ASN1Identifier>) throws -> ASN1Element {
            var reader = try ASN1Reader(a.value, rules: .der, limits: asn1Limits)
            let element = try reader.readElement()
            try reader.finish()
            guard tags.contains(element.identifier) else { throw fail(.invalidAttributeValue, a, "unexpected value type") }
            return element
        }

        func integer(_ a: Attribute) throws -> Int64 { try element(a, [.integer]).integer(Int64.self) }

        func flag(_ a: Attribute) throws -> Bool {
            switch try integer(a) {
            case 0: return false
            case 1: return true
            default: throw fail(.invalidAttributeValue, a, "flag is not 0 or 1")
            }
        }

        func string(_ a: Attribute) throws -> String {
            let element = try element(a, [.utf8String, .ia5String])
            guard element.contentLength <= limits.maximumStringLength else { throw fail(.limitExceeded, a, "string too long") }
            do {
                return element.identifier == .utf8String ? try element.utf8String() : try element.ia5String()
            } catch {
                throw ReceiptError(
                    code: .invalidString, offset: error.offset, attributeType: a.type, reason: error.reason, underlying: error)
            }
        }

        /// A date, or nil for an empty string (then the attribute type joins `empty`).
        func date(_ a: Attribute, empty: inout Set<Int>) throws -> Date? {
            let text = try string(a)
            do {
                guard let date = try ReceiptDate.parse(text) else {
                    empty.insert(a.type)
                    return nil
                }
                return date
            } catch {
                throw ReceiptError(code: error.code, offset: a.offset, attributeType: a.type, reason: error.reason)
            }
        }

        func unknown(_ a: Attribute) throws -> ReceiptAttribute {
            guard Int32(exactly: a.type) != nil, Int32(exactly: a.version) != nil else {
                throw fail(.limitExceeded, a, "attribute type or version beyond 32 bits")
            }
            return ReceiptAttribute(type: a.type, version: a.version, value: a.value)
        }

        mutating func receipt(_ payload: ArraySlice<UInt8>) throws -> AppReceipt {
            guard payload.count < Int(UInt32.max) else {
                throw ReceiptError(code: .limitExceeded, offset: nil, reason: "payload too large")
            }
            var receipt = AppReceipt()
            var set = try openSet(payload)
            var seen: Set<Int> = []
            var versions: [Int: Int] = [:]
            var empty: Set<Int> = []
            var unknown: [ReceiptAttribute] = []
            var purchases: [InAppPurchase] = []
            while !set.isAtEnd {
                let a = try next(&set)
                if ReferenceReceiptParser.singleValuedReceiptTypes.contains(a.type) {
                    guard seen.insert(a.type).inserted else { throw fail(.duplicateAttribute, a, "duplicate attribute") }
                    if a.version != 1 { versions[a.type] = a.version }
                }
                switch a.type {
                case 0: receipt.receiptType = try string(a)
                case 1: receipt.appItemID = try integer(a)
                case 2:
                    receipt.bundleIdentifier = try string(a)
                    receipt.bundleIdentifierData = Array(a.value)
                case 3: receipt.appVersion = try string(a)
                case 4: receipt.opaqueValue = Array(a.value)
                case 5: receipt.sha1Hash = Array(a.value)
                case 8: receipt.undocumentedDate8 = try date(a, empty: &empty)
                case 10: receipt.ageRating = try string(a)
                case 12: receipt.creationDate = try date(a, empty: &empty)
                case 13: receipt.undocumentedInteger13 = try integer(a)
                case 15: receipt.downloadID = try integer(a)
                case 16: receipt.versionExternalIdentifier = try integer(a)
                case 17:
                    if a.version != 1 { versions[17] = a.version }
                    guard purchases.count < limits.maximumInAppPurchases else { throw fail(.limitExceeded, a, "too many in-app purchases") }
                    purchases.append(try purchase(a))
                case 18: receipt.originalPurchaseDate = try date(a, empty: &empty)
                case 19: receipt.originalAppVersion = try string(a)
                case 21: receipt.expirationDate = try date(a, empty: &empty)
                case 25: receipt.undocumentedInteger25 = try integer(a)
                default: unknown.append(try self.unknown(a))
                }
            }
            receipt.attributeVersions = versions
            receipt.emptyDateAttributeTypes = empty
            receipt.unknownAttributes = unknown
            receipt.inAppPurchases = purchases
            return receipt
        }

        mutating func purchase(_ record: Attribute) throws -> InAppPurchase {
            var purchase = InAppPurchase()
            var set = try openSet(record.value)
            var seen: Set<Int> = []
            var versions: [Int: Int] = [:]
            var empty: Set<Int> = []
            var unknown: [ReceiptAttribute] = []
            while !set.isAtEnd {
                let a = try next(&set)
                if ReferenceReceiptParser.singleValuedPurchaseTypes.contains(a.type) {
                    guard seen.insert(a.type).inserted else { throw fail(.duplicateAttribute, a, "duplicate in-app attribute") }
                    if a.version != 1 { versions[a.type] = a.version }
                }
                switch a.type {
                case 1701: purchase.quantity = try integer(a)
                case 1702: purchase.productIdentifier = try string(a)
                case 1703: purchase.transactionIdentifier = try string(a)
                case 1704: purchase.purchaseDate = try date(a, empty: &empty)
                case 1705: purchase.originalTransactionIdentifier = try string(a)
                case 1706: purchase.originalPurchaseDate = try date(a, empty: &empty)
                case 1707: purchase.productType = InAppPurchase.ProductType(rawValue: try integer(a))
                case 1708: purchase.subscriptionExpirationDate = try date(a, empty: &empty)
                case 1711: purchase.webOrderLineItemID = try integer(a)
                case 1712: purchase.cancellationDate = try date(a, empty: &empty)
                case 1713: purchase.isTrialPeriod = try flag(a)
                case 1719: purchase.isInIntroOfferPeriod = try flag(a)
                case 1720: purchase.cancellationReason = InAppPurchase.CancellationReason(rawValue: try integer(a))
                case 1721: purchase.promotionalOfferIdentifier = try string(a)
                case 1722: purchase.undocumentedInteger1722 = try integer(a)
                default: unknown.append(try self.unknown(a))
                }
            }
            purchase.attributeVersions = versions
            purchase.emptyDateAttributeTypes = empty
            purchase.unknownAttributes = unknown
            return purchase
        }
    }
}
