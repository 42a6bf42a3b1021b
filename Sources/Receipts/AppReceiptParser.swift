import ASN1
import FoundationEssentials

/// The receipt payload parser: one pass over the attribute SET with the raw ASN.1 core, no
/// allocation per attribute except the strings it materializes.
struct AppReceiptParser {
    let limits: ReceiptLimits
    let segmentedPayload: Bool
    var attributeCount = 0
    var unknown: [ReceiptStorage.RawAttribute] = []

    init(limits: ReceiptLimits, segmentedPayload: Bool) {
        self.limits = limits
        self.segmentedPayload = segmentedPayload
    }

    /// One attribute: positions in the buffer.
    struct Attribute {
        let type: Int
        let version: Int
        let start: Int
        let value: Range<Int>
    }

    /// Buffer plus context for the duration of one parse.
    struct Context {
        let raw: UnsafeRawBufferPointer
        let typed: UnsafeBufferPointer<UInt8>
        let base: Int
        let limits: ReceiptLimits
        let segmented: Bool

        @inline(never)
        func asn1(_ error: ASN1Error, attribute: Int?) -> ReceiptError {
            let context = segmented ? "receipt payload (offsets within the concatenated payload)" : "receipt payload"
            return ReceiptError.wrap(error, as: .malformedPayload, attribute: attribute, context: context)
        }

        @inline(never)
        func fail(_ code: ReceiptError.Code, _ attribute: Attribute, _ reason: String) -> ReceiptError {
            ReceiptError.make(code, base + attribute.start, attribute: attribute.type, reason)
        }

        /// Reads the single DER element inside an attribute's value octets.
        @inline(__always)
        func inner(_ attribute: Attribute) throws(ReceiptError) -> ASN1RawElement {
            var reader = ASN1RawReader(
                buffer: raw, base: base, position: attribute.value.lowerBound, end: attribute.value.upperBound,
                rules: .der, depth: 3, maximumDepth: limits.maximumDepth)
            do {
                let element = try reader.readElement()
                try reader.finish()
                return element
            } catch {
                throw asn1(error, attribute: attribute.type)
            }
        }

        func integer(_ attribute: Attribute) throws(ReceiptError) -> Int64 {
            let element = try inner(attribute)
            guard element.identifier == .integer else {
                throw fail(.invalidAttributeValue, attribute, "value is \(element.identifier), expected INTEGER")
            }
            do {
                return try ASN1RawReader.decodeInteger(
                    raw, element.contentStart..<element.contentEnd, base: base, rules: .der, at: base + element.start)
            } catch {
                throw asn1(error, attribute: attribute.type)
            }
        }

        func boolean(_ attribute: Attribute) throws(ReceiptError) -> Bool {
            switch try integer(attribute) {
            case 0: return false
            case 1: return true
            case let other: throw fail(.invalidAttributeValue, attribute, "flag is \(other), expected 0 or 1")
            }
        }

        /// The content range of a UTF8String or IA5String value, validated.
        func stringRange(_ attribute: Attribute) throws(ReceiptError) -> Range<Int> {
            let element = try inner(attribute)
            let kind: ASN1StringKind
            switch element.identifier {
            case .utf8String: kind = .utf8
            case .ia5String: kind = .ia5
            case .printableString: kind = .printable
            default:
                throw fail(.invalidAttributeValue, attribute, "value is \(element.identifier), expected a string")
            }
            let range = element.contentStart..<element.contentEnd
            guard range.count <= limits.maximumStringLength else {
                throw fail(.limitExceeded, attribute, "string of \(range.count) bytes exceeds \(limits.maximumStringLength)")
            }
            do {
                try ASN1RawReader.validateString(raw, range, kind: kind, at: base + element.start)
            } catch {
                throw ReceiptError(
                    code: .invalidString, offset: error.offset, attributeType: attribute.type, reason: error.reason,
                    underlying: error)
            }
            return range
        }

        func string(_ attribute: Attribute) throws(ReceiptError) -> String {
            let range = try stringRange(attribute)
            return String(decoding: UnsafeBufferPointer(rebasing: typed[range]), as: UTF8.self)
        }

        /// A date, or `nil` for an empty string (whose type is then recorded in `empty`).
        func date(_ attribute: Attribute, empty: inout Set<Int>) throws(ReceiptError) -> Date? {
            let range = try stringRange(attribute)
            guard let ms = try ReceiptDate.milliseconds(raw, range, offset: base + attribute.start, attribute: attribute.type) else {
                empty.insert(attribute.type)
                return nil
            }
            return ReceiptDate.date(milliseconds: ms)
        }

        func bytes(_ attribute: Attribute) -> [UInt8] {
            Array(UnsafeBufferPointer(rebasing: typed[attribute.value]))
        }
    }

    mutating func parse(_ payload: ArraySlice<UInt8>) throws(ReceiptError) -> AppReceipt {
        var receipt = try payload.span.withUnsafeBufferPointer { (typed) throws(ReceiptError) -> AppReceipt in
            let context = Context(
                raw: UnsafeRawBufferPointer(typed), typed: typed, base: payload.startIndex, limits: limits,
                segmented: segmentedPayload)
            return try parseReceipt(context)
        }
        let storage = ReceiptStorage(payload: payload, unknown: unknown)
        if case .pending(let range) = receipt.unknown { receipt.unknown = .stored(storage, range) }
        for index in receipt.inAppPurchases.indices {
            if case .pending(let range) = receipt.inAppPurchases[index].unknown {
                receipt.inAppPurchases[index].unknown = .stored(storage, range)
            }
        }
        return receipt
    }

    /// Reads the next attribute SEQUENCE of a SET.
    @inline(__always)
    mutating func nextAttribute(_ set: inout ASN1RawReader, _ context: Context) throws(ReceiptError) -> Attribute {
        attributeCount &+= 1
        guard attributeCount <= limits.maximumAttributes else {
            throw ReceiptError.make(
                .limitExceeded, set.offset, "more than \(limits.maximumAttributes) attributes in the receipt")
        }
        do {
            let start = set.position
            var sequence = try set.readConstructed(.sequence)
            let type = try sequence.readInteger(Int.self)
            let version = try sequence.readInteger(Int.self)
            let value = try sequence.readPrimitiveContent(.octetString)
            try sequence.finish()
            return Attribute(type: type, version: version, start: start, value: value)
        } catch {
            throw context.asn1(error, attribute: nil)
        }
    }

    /// Opens the payload: a SET of attributes, possibly wrapped once or twice more in an OCTET STRING.
    func openSet(_ context: Context, start: Int, end: Int, depth: Int) throws(ReceiptError) -> ASN1RawReader {
        var reader = ASN1RawReader(
            buffer: context.raw, base: context.base, position: start, end: end, rules: .der, depth: depth,
            maximumDepth: limits.maximumDepth)
        do {
            var element = try reader.readElement()
            try reader.finish()
            var wrappers = 0
            while element.identifier == .octetString && wrappers < 2 {
                wrappers += 1
                reader = ASN1RawReader(
                    buffer: context.raw, base: context.base, position: element.contentStart, end: element.contentEnd,
                    rules: .der, depth: depth, maximumDepth: limits.maximumDepth)
                element = try reader.readElement()
                try reader.finish()
            }
            guard element.identifier == .set else {
                throw ReceiptError.make(
                    .malformedPayload, context.base + element.start, "payload is \(element.identifier), expected a SET of attributes")
            }
            return try reader.children(of: element)
        } catch let error as ASN1Error {
            throw context.asn1(error, attribute: nil)
        } catch let error as ReceiptError {
            throw error
        } catch {
            throw ReceiptError.make(.malformedPayload, nil, "\(error)")
        }
    }

    /// Bit n set: receipt attribute type n is modelled and may occur once.
    static let singleValuedReceiptTypes: UInt64 = [0, 1, 2, 3, 4, 5, 8, 10, 12, 13, 15, 16, 18, 19, 21, 25]
        .reduce(0) { $0 | 1 << UInt64($1) }
    /// Bit n set: in-app attribute type 1701 + n is modelled and may occur once.
    static let singleValuedPurchaseSlots: UInt32 = [1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1713, 1719, 1721, 1722]
        .reduce(0) { $0 | 1 << UInt32($1 - 1701) }

    mutating func parseReceipt(_ c: Context) throws(ReceiptError) -> AppReceipt {
        var set = try openSet(c, start: 0, end: c.raw.count, depth: 0)
        var receipt = AppReceipt()
        var seen: UInt64 = 0
        // In-app records append their unknown attributes to `unknown` while this loop runs, so the
        // receipt's own unknown attributes are collected apart and appended at the end.
        var topLevelUnknown: [ReceiptStorage.RawAttribute] = []
        while !set.isAtEnd {
            let a = try nextAttribute(&set, c)
            if a.type >= 0 && a.type < 64 && a.type != 17 {
                let bit: UInt64 = 1 << UInt64(a.type)
                if AppReceiptParser.singleValuedReceiptTypes & bit != 0 {
                    guard seen & bit == 0 else {
                        throw c.fail(.duplicateAttribute, a, "attribute \(a.type) occurs more than once")
                    }
                    seen |= bit
                    if a.version != 1 { receipt.attributeVersions[a.type] = a.version }
                }
            }
            switch a.type {
            case 0: receipt.receiptType = try c.string(a)
            case 1: receipt.appItemID = try c.integer(a)
            case 2:
                receipt.bundleIdentifier = try c.string(a)
                receipt.bundleIdentifierData = c.bytes(a)
            case 3: receipt.appVersion = try c.string(a)
            case 4: receipt.opaqueValue = c.bytes(a)
            case 5: receipt.sha1Hash = c.bytes(a)
            case 8: receipt.undocumentedDate8 = try c.date(a, empty: &receipt.emptyDateAttributeTypes)
            case 10: receipt.ageRating = try c.string(a)
            case 12: receipt.creationDate = try c.date(a, empty: &receipt.emptyDateAttributeTypes)
            case 13: receipt.undocumentedInteger13 = try c.integer(a)
            case 15: receipt.downloadID = try c.integer(a)
            case 16: receipt.versionExternalIdentifier = try c.integer(a)
            case 17:
                if a.version != 1 { receipt.attributeVersions[17] = a.version }
                guard receipt.inAppPurchases.count < limits.maximumInAppPurchases else {
                    throw c.fail(.limitExceeded, a, "more than \(limits.maximumInAppPurchases) in-app purchases")
                }
                receipt.inAppPurchases.append(try parsePurchase(a, c))
            case 18: receipt.originalPurchaseDate = try c.date(a, empty: &receipt.emptyDateAttributeTypes)
            case 19: receipt.originalAppVersion = try c.string(a)
            case 21: receipt.expirationDate = try c.date(a, empty: &receipt.emptyDateAttributeTypes)
            case 25: receipt.undocumentedInteger25 = try c.integer(a)
            default: topLevelUnknown.append(ReceiptStorage.RawAttribute(type: a.type, version: a.version, value: a.value))
            }
        }
        if !topLevelUnknown.isEmpty {
            let start = unknown.count
            unknown.append(contentsOf: topLevelUnknown)
            receipt.unknown = .pending(start..<unknown.count)
        }
        return receipt
    }

    mutating func parsePurchase(_ attribute: Attribute, _ c: Context) throws(ReceiptError) -> InAppPurchase {
        var set = try openSet(c, start: attribute.value.lowerBound, end: attribute.value.upperBound, depth: 3)
        var purchase = InAppPurchase()
        var seen: UInt32 = 0
        let unknownStart = unknown.count
        while !set.isAtEnd {
            let a = try nextAttribute(&set, c)
            let slot = a.type &- 1701
            if slot >= 0 && slot < 32 {
                let bit: UInt32 = 1 << UInt32(slot)
                if AppReceiptParser.singleValuedPurchaseSlots & bit != 0 {
                    guard seen & bit == 0 else {
                        throw c.fail(.duplicateAttribute, a, "in-app attribute \(a.type) occurs more than once")
                    }
                    seen |= bit
                    if a.version != 1 { purchase.attributeVersions[a.type] = a.version }
                }
            }
            switch a.type {
            case 1701: purchase.quantity = try c.integer(a)
            case 1702: purchase.productIdentifier = try c.string(a)
            case 1703: purchase.transactionIdentifier = try c.string(a)
            case 1704: purchase.purchaseDate = try c.date(a, empty: &purchase.emptyDateAttributeTypes)
            case 1705: purchase.originalTransactionIdentifier = try c.string(a)
            case 1706: purchase.originalPurchaseDate = try c.date(a, empty: &purchase.emptyDateAttributeTypes)
            case 1707: purchase.productType = InAppPurchase.ProductType(rawValue: try c.integer(a))
            case 1708: purchase.subscriptionExpirationDate = try c.date(a, empty: &purchase.emptyDateAttributeTypes)
            case 1711: purchase.webOrderLineItemID = try c.integer(a)
            case 1712: purchase.cancellationDate = try c.date(a, empty: &purchase.emptyDateAttributeTypes)
            case 1713: purchase.isTrialPeriod = try c.boolean(a)
            case 1719: purchase.isInIntroOfferPeriod = try c.boolean(a)
            case 1721: purchase.promotionalOfferIdentifier = try c.string(a)
            case 1722: purchase.undocumentedInteger1722 = try c.integer(a)
            default: unknown.append(ReceiptStorage.RawAttribute(type: a.type, version: a.version, value: a.value))
            }
        }
        if unknown.count > unknownStart { purchase.unknown = .pending(unknownStart..<unknown.count) }
        return purchase
    }
}
