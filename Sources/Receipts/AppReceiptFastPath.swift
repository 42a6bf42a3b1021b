import ASN1
import FoundationEssentials

// The fast path for in-app purchase records.
//
// Almost every record in every real receipt has one canonical DER shape: a SET of attribute
// SEQUENCEs with small INTEGER types and versions, short lengths, ASCII strings and dates written
// exactly as `YYYY-MM-DDTHH:MM:SSZ`. This path decodes that shape in one straight pass over the
// bytes. Whenever anything differs (a longer length form, a fraction or offset in a date, a
// non-ASCII string, a duplicate, a limit reached, malformed bytes) it gives up and the record is
// parsed again by the general path, which applies every rule and produces every error. So the
// fast path never accepts what the general path rejects, and never decides anything differently:
// tests parse every fixture both ways and compare.

extension AppReceiptParser {
    /// Decodes a record in the canonical shape into `purchase`; `false` (with no side effects) if
    /// the record needs the general path.
    mutating func fastPurchase(_ b: UnsafeRawBufferPointer, _ value: Range<Int>, into purchase: inout InAppPurchase) -> Bool {
        let end = value.upperBound
        guard value.lowerBound < end, b[value.lowerBound] == 0x31,
            let set = AppReceiptParser.fastLength(b, value.lowerBound &+ 1, end), set.start &+ set.length == end,
            limits.maximumDepth > 4
        else { return false }
        let unknownStart = unknown.count
        let attributesBefore = attributeCount
        var seen: UInt32 = 0
        var p = set.start
        var ok = true
        while p < end {
            // The attribute SEQUENCE, decoded inline (see fastAttribute for the rules).
            guard b[p] == 0x30, let sequence = AppReceiptParser.fastLength(b, p &+ 1, end) else {
                ok = false
                break
            }
            let sequenceEnd = sequence.start &+ sequence.length
            guard let type = AppReceiptParser.fastSmallInteger(b, sequence.start, sequenceEnd),
                let version = AppReceiptParser.fastSmallInteger(b, type.end, sequenceEnd),
                version.end < sequenceEnd, b[version.end] == 0x04,
                let valueLength = AppReceiptParser.fastLength(b, version.end &+ 1, sequenceEnd),
                valueLength.start &+ valueLength.length == sequenceEnd
            else {
                ok = false
                break
            }
            let a = Attribute(type: type.value, version: version.value, start: p, value: valueLength.start..<sequenceEnd)
            #if DEBUG
                ASN1Instrumentation.count(5)  // SEQUENCE, two INTEGERs, OCTET STRING, the value's element
            #endif
            attributeCount &+= 1
            p = sequenceEnd
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
            // The value's own TLV: one-octet tag, short length, filling the OCTET STRING exactly.
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
            let length = Int(b[v.lowerBound &+ 1])
            guard length < 0x80, length &+ 2 == v.count else {
                ok = false
                break
            }
            let cs = v.lowerBound &+ 2
            switch a.type {
            case 1701, 1707, 1711, 1722, 1713, 1719:
                guard tag == 0x02, let number = AppReceiptParser.fastInteger(b, cs, v.upperBound) else {
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
                default:
                    guard number == 0 || number == 1 else {
                        ok = false
                        break
                    }
                    if a.type == 1713 { purchase.isTrialPeriod = number == 1 } else { purchase.isInIntroOfferPeriod = number == 1 }
                }
            case 1702, 1703, 1705, 1721:
                guard tag == 0x0C || tag == 0x16, length <= limits.maximumStringLength,
                    AppReceiptParser.allASCII(b, cs, v.upperBound)
                else {
                    ok = false
                    break
                }
                let bytes = UnsafeRawBufferPointer(rebasing: b[cs..<v.upperBound])
                switch a.type {
                case 1702: purchase.productIdentifier = recentStrings.string(for: bytes)
                case 1705: purchase.originalTransactionIdentifier = recentStrings.string(for: bytes)
                case 1703: purchase.transactionIdentifier = String(decoding: bytes, as: UTF8.self)
                default: purchase.promotionalOfferIdentifier = String(decoding: bytes, as: UTF8.self)
                }
            default:  // 1704, 1706, 1708, 1712: dates
                guard tag == 0x16 || tag == 0x0C else {
                    ok = false
                    break
                }
                if length == 0 {
                    purchase.emptyDateMask |= 1 << UInt16(slot)
                } else if let ms = AppReceiptParser.fastDate(b, cs, v.upperBound) {
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
    /// 1719, 1721, 1722). A test checks it against `singleValuedPurchaseSlots`.
    static let singleValuedPurchaseSlotsLiteral: UInt32 = 0x34_1CFF

    /// A minimal DER INTEGER content of one to eight octets.
    @inline(__always)
    static func fastInteger(_ b: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Int64? {
        let count = end &- start
        guard count >= 1, count <= 8 else { return nil }
        let first = b[start]
        if count >= 2 {
            let second = b[start &+ 1]
            if (first == 0 && second & 0x80 == 0) || (first == 0xFF && second & 0x80 != 0) { return nil }
        }
        var value: Int64 = first & 0x80 != 0 ? -1 : 0
        var i = start
        while i < end {
            value = value &<< 8 | Int64(b[i])
            i &+= 1
        }
        return value
    }

    /// Whether every byte in the range is ASCII.
    @inline(__always)
    static func allASCII(_ b: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Bool {
        var i = start
        var accumulated: UInt8 = 0
        while i < end {
            accumulated |= b[i]
            i &+= 1
        }
        return accumulated < 0x80
    }

    /// Days before each month in a common year.
    static let daysBeforeMonth: [Int64] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]

    /// Exactly `YYYY-MM-DDTHH:MM:SSZ` (20 bytes) or `YYYY-MM-DDTHH:MM:SS.mmmZ` (24 bytes), validated
    /// as strictly as the general parser.
    @inline(__always)
    static func fastDate(_ b: UnsafeRawBufferPointer, _ s: Int, _ end: Int) -> Int64? {
        let length = end &- s
        guard length == 20 || length == 24, b[s &+ 4] == 0x2D, b[s &+ 7] == 0x2D, b[s &+ 10] == 0x54,
            b[s &+ 13] == 0x3A, b[s &+ 16] == 0x3A, b[end &- 1] == 0x5A
        else { return nil }
        @inline(__always) func d(_ i: Int) -> Int {
            let v = Int(b[s &+ i]) &- 0x30
            return v >= 0 && v <= 9 ? v : -10_000
        }
        let year = d(0) &* 1000 &+ d(1) &* 100 &+ d(2) &* 10 &+ d(3)
        let month = d(5) &* 10 &+ d(6)
        let day = d(8) &* 10 &+ d(9)
        let hour = d(11) &* 10 &+ d(12)
        let minute = d(14) &* 10 &+ d(15)
        let second = d(17) &* 10 &+ d(18)
        var millis = 0
        if length == 24 {
            guard b[s &+ 19] == 0x2E else { return nil }
            millis = d(20) &* 100 &+ d(21) &* 10 &+ d(22)
            guard millis >= 0 else { return nil }
        }
        guard year >= 1970, month >= 1, month <= 12, day >= 1, hour >= 0, hour <= 23, minute >= 0, minute <= 59,
            second >= 0, second <= 60
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthLength = month == 2 ? (leap ? 29 : 28) : (month == 4 || month == 6 || month == 9 || month == 11 ? 30 : 31)
        guard day <= monthLength else { return nil }
        let y = Int64(year &- 1)
        let leapDaysBefore = y / 4 - y / 100 + y / 400 - 477  // 477 leap days before 1970
        var days = Int64(year &- 1970) &* 365 &+ leapDaysBefore &+ daysBeforeMonth[month &- 1] &+ Int64(day &- 1)
        if leap && month > 2 { days &+= 1 }
        return (days &* 86_400 &+ Int64(hour &* 3600 &+ minute &* 60 &+ second)) &* 1000 &+ Int64(millis)
    }
}
