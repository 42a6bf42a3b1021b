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
    /// the record needs the general path. With `views`, the record's unknown attributes are kept
    /// as a view of its bytes in that storage; without (or for a payload of 2 GiB or more) they
    /// are listed.
    mutating func fastPurchase(
        _ b: UnsafeRawBufferPointer, _ value: Range<Int>, views: ReceiptStorage?, into purchase: inout InAppPurchase
    ) -> Bool {
        let end = value.upperBound
        guard let set = DERFraming.content(b, tag: 0x31, at: value.lowerBound, end: end), set.upperBound == end,
            limits.maximumDepth > 4
        else { return false }
        let attributesBefore = attributeCount
        let listStart = unknown.count
        var unknownCount = 0
        var seen: UInt32 = 0
        var present: InAppPurchase.Present = []
        var rare = InAppPurchase.RareFields()
        var hasRare = false
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
            guard slot >= 0 && slot < 32 && AppReceiptParser.singleValuedPurchaseSlotsLiteral & (1 << UInt32(truncatingIfNeeded: slot)) != 0
            else {
                unknownCount &+= 1
                if views == nil {
                    // Fast-path types and versions are one or two octets, so they fit 32 bits.
                    unknown.append(
                        ReceiptStorage.RawAttribute(
                            type: Int32(truncatingIfNeeded: a.type), version: Int32(truncatingIfNeeded: a.version),
                            start: UInt32(truncatingIfNeeded: a.value.lowerBound), end: UInt32(truncatingIfNeeded: a.value.upperBound)))
                }
                continue
            }
            let bit: UInt32 = 1 << UInt32(truncatingIfNeeded: slot)
            guard seen & bit == 0 else {
                ok = false
                break
            }
            seen |= bit
            if a.version != 1 {
                rare.attributeVersions[a.type] = a.version
                hasRare = true
            }
            // The value's own element: a one-octet tag and a short DER length, filling the OCTET STRING.
            let v = a.value
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
                    if let small = Int32(exactly: number) {
                        purchase.quantityValue = small
                    } else {
                        rare.quantity = number
                        hasRare = true
                        present.insert(.quantityInRare)
                    }
                    present.insert(.quantity)
                case 1707:
                    if let small = Int8(exactly: number) {
                        purchase.productTypeValue = small
                    } else {
                        rare.productType = number
                        hasRare = true
                        present.insert(.productTypeInRare)
                    }
                    present.insert(.productType)
                case 1711:
                    purchase.webOrderLineItemIDValue = number
                    present.insert(.webOrderLineItemID)
                case 1722:
                    if let small = Int8(exactly: number) {
                        purchase.undocumented1722Value = small
                    } else {
                        rare.undocumented1722 = number
                        hasRare = true
                        present.insert(.undocumented1722InRare)
                    }
                    present.insert(.undocumented1722)
                case 1720:
                    rare.cancellationReason = number
                    hasRare = true
                    present.insert(.cancellationReason)
                default:
                    guard number == 0 || number == 1 else {
                        ok = false
                        break
                    }
                    if a.type == 1713 {
                        present.insert(number == 1 ? [.trial, .trialValue] : .trial)
                    } else {
                        present.insert(number == 1 ? [.intro, .introValue] : .intro)
                    }
                }
            case 1702, 1703, 1705, 1721:
                guard tag == 0x0C || tag == 0x16, content.count <= limits.maximumStringLength, AppReceiptParser.allASCII(b, content)
                else {
                    ok = false
                    break
                }
                let bytes = UnsafeRawBufferPointer(rebasing: b[content])
                switch a.type {
                case 1702: purchase.storedProductIdentifier = recentStrings.string(for: bytes)
                case 1703:
                    if let number = InAppPurchase.numericIdentifier(bytes) {
                        purchase.transactionNumber = number
                    } else {
                        rare.transactionText = String(decoding: bytes, as: UTF8.self)
                        hasRare = true
                        present.insert(.transactionIDText)
                    }
                    present.insert(.transactionID)
                case 1705:
                    if let number = InAppPurchase.numericIdentifier(bytes) {
                        purchase.originalTransactionNumber = number
                    } else {
                        rare.originalTransactionText = String(decoding: bytes, as: UTF8.self)
                        hasRare = true
                        present.insert(.originalTransactionIDText)
                    }
                    present.insert(.originalTransactionID)
                default:
                    rare.promotionalOfferIdentifier = String(decoding: bytes, as: UTF8.self)
                    hasRare = true
                }
            default:  // 1704, 1706, 1708, 1712: dates
                guard tag == 0x16 || tag == 0x0C, content.count <= limits.maximumStringLength else {
                    ok = false
                    break
                }
                if content.isEmpty {
                    purchase.emptyDateMask |= 1 << UInt16(truncatingIfNeeded: slot)
                } else if let ms = ReceiptDate.value(b, content, &monthStarts) {
                    switch a.type {
                    case 1704:
                        purchase.purchaseMS = ms
                        present.insert(.purchaseDate)
                    case 1706:
                        purchase.originalPurchaseMS = ms
                        present.insert(.originalPurchaseDate)
                    case 1708:
                        purchase.expiresMS = ms
                        present.insert(.expiresDate)
                    default:
                        rare.cancellationMS = ms
                        hasRare = true
                        present.insert(.cancellationDate)
                    }
                } else {
                    ok = false
                    break
                }
            }
            if !ok { break }
        }
        guard ok, attributeCount <= limits.maximumAttributes else {
            unknown.removeSubrange(listStart...)
            attributeCount = attributesBefore
            purchase = InAppPurchase()
            return false
        }
        purchase.present = present
        // A box only for a record that has a rare field; a cancellation date of 0 (1970) or a
        // reason of 0 alone leaves the fields at their defaults, and then no box is kept either.
        if hasRare && rare != .empty { purchase.rare = InAppPurchase.Rare(rare) }
        if unknownCount > 0 {
            if let views {
                purchase.unknown = .record(views, set)
            } else {
                purchase.unknown = .pending(listStart..<unknown.count)
            }
        }
        return true
    }

    /// Whether in-app attribute `type` is one of the modelled, single-valued ones (the others are
    /// kept as unknown attributes).
    @inline(__always)
    static func isModelledPurchaseAttribute(_ type: Int) -> Bool {
        let slot = type &- 1701
        return slot >= 0 && slot < 32 && singleValuedPurchaseSlotsLiteral & (1 << UInt32(truncatingIfNeeded: slot)) != 0
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
