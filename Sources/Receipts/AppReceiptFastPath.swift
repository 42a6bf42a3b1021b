@_spi(RawParsing) import ASN1
import FoundationEssentials

// The fast path for in-app purchase records.
//
// Almost every record in every real receipt has one canonical DER shape: a SET of attribute
// SEQUENCEs with small INTEGER types and versions, short lengths, ASCII strings and RFC 3339 dates.
// This path decodes that shape in one straight pass over the bytes, with the framing primitives of
// `ASN1` (`DERFraming`: lengths, tags, integer minimality) and the receipt date parser
// (`ReceiptDate`), so it applies the same rules as the general path, only fewer of them. Whenever
// anything differs (a longer length form, a non-ASCII string, a duplicate, a limit reached,
// malformed bytes) it gives up and the record is parsed again by the general path, which applies
// every rule and produces every error. So the fast path never accepts what the general path
// rejects, and never decides anything differently: tests parse every fixture both ways and compare.

extension AppReceiptParser {
    /// Decodes a record in the canonical shape into `purchase`; `false` (with no side effects) if
    /// the record needs the general path.
    mutating func fastPurchase(_ b: UnsafeRawBufferPointer, _ value: Range<Int>, into purchase: inout InAppPurchase) -> Bool {
        let end = value.upperBound
        guard let set = DERFraming.content(b, tag: 0x31, at: value.lowerBound, end: end), set.upperBound == end,
            limits.maximumDepth > 4
        else { return false }
        let unknownStart = unknown.count
        let attributesBefore = attributeCount
        var seen: UInt32 = 0
        var p = set.lowerBound
        var ok = true
        while p < end {
            guard let a = AppReceiptParser.fastAttribute(b, at: p, end: end) else {
                ok = false
                break
            }
            #if DEBUG
                ASN1Instrumentation.count()  // the value's element
            #endif
            attributeCount &+= 1
            p = a.value.upperBound
            let slot = a.type &- 1701
            if slot >= 0 && slot < 32 {
                let bit: UInt32 = 1 << UInt32(slot)
                if AppReceiptParser.singleValuedPurchaseSlotsLiteral & bit != 0 {
                    guard seen & bit == 0 else {
                        ok = false
                        break
                    }
                    seen |= bit
                    if a.version != 1 { purchase.attributeVersions[a.type] = a.version }
                }
            }
            // The value's own element: a one-octet tag and a short DER length, filling the OCTET STRING.
            let v = a.value
            let known = slot >= 0 && slot < 32 && AppReceiptParser.singleValuedPurchaseSlotsLiteral & (1 << UInt32(slot)) != 0
            guard known else {
                // Fast-path types and versions are one or two octets, so they fit 32 bits.
                unknown.append(
                    ReceiptStorage.RawAttribute(
                        type: Int32(truncatingIfNeeded: a.type), version: Int32(truncatingIfNeeded: a.version),
                        start: UInt32(truncatingIfNeeded: a.value.lowerBound), end: UInt32(truncatingIfNeeded: a.value.upperBound)))
                continue
            }
            guard v.count >= 2 else {
                ok = false
                break
            }
            let tag = b[v.lowerBound]
            guard let content = DERFraming.content(b, tag: tag, at: v.lowerBound, end: v.upperBound), content.upperBound == v.upperBound
            else {
                ok = false
                break
            }
            switch a.type {
            case 1701, 1707, 1711, 1722, 1720, 1713, 1719:
                guard tag == 0x02, let number = DERFraming.minimalInt64(b, content) else {
                    ok = false
                    break
                }
                switch a.type {
                case 1701:
                    purchase.quantityValue = number
                    purchase.present.insert(.quantity)
                case 1707:
                    purchase.productTypeValue = number
                    purchase.present.insert(.productType)
                case 1711:
                    purchase.webOrderLineItemIDValue = number
                    purchase.present.insert(.webOrderLineItemID)
                case 1722:
                    purchase.undocumented1722Value = number
                    purchase.present.insert(.undocumented1722)
                case 1720:
                    purchase.cancellationReasonValue = number
                    purchase.present.insert(.cancellationReason)
                default:
                    guard number == 0 || number == 1 else {
                        ok = false
                        break
                    }
                    if a.type == 1713 { purchase.isTrialPeriod = number == 1 } else { purchase.isInIntroOfferPeriod = number == 1 }
                }
            case 1702, 1703, 1705, 1721:
                guard tag == 0x0C || tag == 0x16, content.count <= limits.maximumStringLength, AppReceiptParser.allASCII(b, content)
                else {
                    ok = false
                    break
                }
                let bytes = UnsafeRawBufferPointer(rebasing: b[content])
                switch a.type {
                case 1702: purchase.productIdentifier = recentStrings.string(for: bytes)
                case 1705: purchase.originalTransactionIdentifier = recentStrings.string(for: bytes)
                case 1703: purchase.transactionIdentifier = String(decoding: bytes, as: UTF8.self)
                default: purchase.promotionalOfferIdentifier = String(decoding: bytes, as: UTF8.self)
                }
            default:  // 1704, 1706, 1708, 1712: dates
                guard tag == 0x16 || tag == 0x0C, content.count <= limits.maximumStringLength else {
                    ok = false
                    break
                }
                if content.isEmpty {
                    purchase.emptyDateMask |= 1 << UInt16(slot)
                } else if let ms = ReceiptDate.value(b, content, &monthStarts) {
                    switch a.type {
                    case 1704:
                        purchase.purchaseMS = ms
                        purchase.present.insert(.purchaseDate)
                    case 1706:
                        purchase.originalPurchaseMS = ms
                        purchase.present.insert(.originalPurchaseDate)
                    case 1708:
                        purchase.expiresMS = ms
                        purchase.present.insert(.expiresDate)
                    default:
                        purchase.cancellationMS = ms
                        purchase.present.insert(.cancellationDate)
                    }
                } else {
                    ok = false
                    break
                }
            }
            if !ok { break }
        }
        guard ok, attributeCount <= limits.maximumAttributes else {
            unknown.removeSubrange(unknownStart...)
            attributeCount = attributesBefore
            purchase = InAppPurchase()
            return false
        }
        if unknown.count > unknownStart { purchase.unknown = .pending(unknownStart..<unknown.count) }
        return true
    }

    /// Bit n: in-app attribute type 1701 + n is modelled and single-valued (1701–1708, 1711–1713,
    /// 1719–1722). A test checks it against `singleValuedPurchaseSlots`.
    static let singleValuedPurchaseSlotsLiteral: UInt32 = 0x3C_1CFF

    /// Whether every byte in `range` is ASCII.
    @inline(__always)
    static func allASCII(_ b: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        var i = range.lowerBound
        var words: UInt64 = 0
        while i &+ 8 <= range.upperBound {
            words |= b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i &+= 8
        }
        var tail: UInt8 = 0
        while i < range.upperBound {
            tail |= b[i]
            i &+= 1
        }
        return words & 0x8080_8080_8080_8080 == 0 && tail < 0x80
    }
}
