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
    ///
    /// Two passes, so the processor can predict the branches: DER sorts a record's attributes by
    /// their encodings, so their order follows the lengths of their values and changes from one
    /// record to the next. The first pass only frames the attributes, without branching on their
    /// type: each modelled one's value range goes to the slot of its type (`type - 1701`), and
    /// duplicates and versions other than 1 are gathered as bit sets. The second pass then decodes
    /// the modelled attributes in a fixed order. Any failure (including a duplicate) returns
    /// `false`, as the one-pass form did; the outcome does not depend on the order.
    mutating func fastPurchase(
        _ b: UnsafeRawBufferPointer, _ value: Range<Int>, views: ReceiptStorage?, into purchase: inout InAppPurchase
    ) -> Bool {
        let end = value.upperBound
        guard let set = DERFraming.content(b, tag: 0x31, at: value.lowerBound, end: end), set.upperBound == end,
            limits.maximumDepth > 4
        else { return false }
        let attributesBefore = attributeCount
        let listStart = unknown.count
        let decoded = withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 32) { slots -> Bool in
            // Pass 1: framing, without a branch on the type (the selects below compile to
            // conditional moves and masks). Slot 31 is never modelled; unknown attributes write there.
            var seen: UInt32 = 0
            var duplicates: UInt32 = 0
            var versioned: UInt32 = 0
            var unknownCount = 0
            var unknownBytes = 0
            var count = 0
            var p = set.lowerBound
            while p < end {
                guard let a = AppReceiptParser.fastAttribute(b, at: p, end: end) else { return false }
                #if DEBUG
                    ASN1Instrumentation.count()  // the value's element
                #endif
                count &+= 1
                p = a.value.upperBound
                let slot = a.type &- 1701
                let candidate = 1 << UInt32(truncatingIfNeeded: slot & 31) & AppReceiptParser.singleValuedPurchaseSlotsLiteral
                let bit = UInt(bitPattern: slot) < 32 ? candidate : 0
                let unknownFlag = Int(truncatingIfNeeded: (bit &- 1) >> 31)  // 1 when bit == 0
                unknownCount &+= unknownFlag
                unknownBytes &+= a.value.count & (0 &- unknownFlag)
                duplicates |= seen & bit
                seen |= bit
                versioned |= bit & (0 &- UInt32(truncatingIfNeeded: a.version &- 1 == 0 ? 0 : 1))
                slots[(slot & 31) | (31 & (0 &- unknownFlag))] =
                    UInt64(truncatingIfNeeded: a.value.lowerBound) << 32 | UInt64(truncatingIfNeeded: a.value.upperBound)
            }
            attributeCount &+= count
            guard duplicates == 0, attributeCount <= limits.maximumAttributes else { return false }

            // Pass 2: the modelled attributes, in type order.
            /// The single element filling slot `n`'s OCTET STRING: its one-octet tag and content.
            @inline(__always) func element(_ n: Int) -> (tag: UInt8, content: Range<Int>)? {
                let packed = slots[n]
                let start = Int(truncatingIfNeeded: packed >> 32)
                let stop = Int(truncatingIfNeeded: packed & 0xFFFF_FFFF)
                guard stop &- start >= 2 else { return nil }
                let tag = b[start]
                guard let content = DERFraming.content(b, tag: tag, at: start, end: stop), content.upperBound == stop else { return nil }
                return (tag, content)
            }
            @inline(__always) func integer(_ n: Int) -> Int64? {
                guard let (tag, content) = element(n), tag == 0x02 else { return nil }
                return DERFraming.minimalInt64(b, content)
            }
            /// An ASCII string's content (UTF8String or IA5String).
            @inline(__always) func string(_ n: Int) -> Range<Int>? {
                guard let (tag, content) = element(n), tag == 0x0C || tag == 0x16, content.count <= limits.maximumStringLength,
                    AppReceiptParser.allASCII(b, content)
                else { return nil }
                return content
            }
            /// A date's milliseconds; `.some(nil)` for an empty string.
            @inline(__always) func date(_ n: Int) -> Int64?? {
                guard let (tag, content) = element(n), tag == 0x16 || tag == 0x0C, content.count <= limits.maximumStringLength else {
                    return nil
                }
                if content.isEmpty { return .some(nil) }
                guard let ms = ReceiptDate.value(b, content) else { return nil }
                return .some(ms)
            }
            var present: UInt32 = 0  // InAppPurchase.Present bits (plain integer operations)
            var rare: RareAccumulator?
            if seen & 1 << 0 != 0 {  // 1701 quantity
                guard let number = integer(0) else { return false }
                if let small = Int32(exactly: number) {
                    purchase.quantityValue = small
                } else {
                    RareAccumulator.of(&rare).fields.quantity = number
                    present |= InAppPurchase.Present.quantityInRare.rawValue
                }
                present |= InAppPurchase.Present.quantity.rawValue
            }
            if seen & 1 << 1 != 0 {  // 1702 product identifier
                guard let content = string(1) else { return false }
                purchase.storedProductIdentifier = recentStrings.string(for: UnsafeRawBufferPointer(rebasing: b[content]))
            }
            if seen & 1 << 2 != 0 {  // 1703 transaction identifier
                guard let content = string(2) else { return false }
                if let number = AppReceiptParser.decimalIdentifier(b, content) {
                    purchase.transactionNumber = number
                } else {
                    RareAccumulator.of(&rare).fields.transactionText = String(
                        decoding: UnsafeRawBufferPointer(rebasing: b[content]), as: UTF8.self)
                    present |= InAppPurchase.Present.transactionIDText.rawValue
                }
                present |= InAppPurchase.Present.transactionID.rawValue
            }
            if seen & 1 << 4 != 0 {  // 1705 original transaction identifier
                guard let content = string(4) else { return false }
                if let number = AppReceiptParser.decimalIdentifier(b, content) {
                    purchase.originalTransactionNumber = number
                } else {
                    RareAccumulator.of(&rare).fields.originalTransactionText = String(
                        decoding: UnsafeRawBufferPointer(rebasing: b[content]), as: UTF8.self)
                    present |= InAppPurchase.Present.originalTransactionIDText.rawValue
                }
                present |= InAppPurchase.Present.originalTransactionID.rawValue
            }
            // Dates: 1704 purchase, 1706 original purchase, 1708 expiration, 1712 cancellation.
            if seen & 1 << 3 != 0 {
                guard let ms = date(3) else { return false }
                if let ms {
                    purchase.purchaseMS = ms
                    present |= InAppPurchase.Present.purchaseDate.rawValue
                } else {
                    purchase.emptyDateMask |= 1 << 3
                }
            }
            if seen & 1 << 5 != 0 {
                guard let ms = date(5) else { return false }
                if let ms {
                    purchase.originalPurchaseMS = ms
                    present |= InAppPurchase.Present.originalPurchaseDate.rawValue
                } else {
                    purchase.emptyDateMask |= 1 << 5
                }
            }
            if seen & 1 << 7 != 0 {
                guard let ms = date(7) else { return false }
                if let ms {
                    purchase.expiresMS = ms
                    present |= InAppPurchase.Present.expiresDate.rawValue
                } else {
                    purchase.emptyDateMask |= 1 << 7
                }
            }
            if seen & 1 << 11 != 0 {
                guard let ms = date(11) else { return false }
                if let ms {
                    RareAccumulator.of(&rare).fields.cancellationMS = ms
                    present |= InAppPurchase.Present.cancellationDate.rawValue
                } else {
                    purchase.emptyDateMask |= 1 << 11
                }
            }
            if seen & 1 << 6 != 0 {  // 1707 product type
                guard let number = integer(6) else { return false }
                if let small = Int8(exactly: number) {
                    purchase.productTypeValue = small
                } else {
                    RareAccumulator.of(&rare).fields.productType = number
                    present |= InAppPurchase.Present.productTypeInRare.rawValue
                }
                present |= InAppPurchase.Present.productType.rawValue
            }
            if seen & 1 << 10 != 0 {  // 1711 web order line item id
                guard let number = integer(10) else { return false }
                purchase.webOrderLineItemIDValue = number
                present |= InAppPurchase.Present.webOrderLineItemID.rawValue
            }
            if seen & 1 << 12 != 0 {  // 1713 trial flag
                guard let number = integer(12), number == 0 || number == 1 else { return false }
                present |= number == 1 ? InAppPurchase.Present([.trial, .trialValue]).rawValue : InAppPurchase.Present.trial.rawValue
            }
            if seen & 1 << 18 != 0 {  // 1719 intro offer flag
                guard let number = integer(18), number == 0 || number == 1 else { return false }
                present |= number == 1 ? InAppPurchase.Present([.intro, .introValue]).rawValue : InAppPurchase.Present.intro.rawValue
            }
            if seen & 1 << 19 != 0 {  // 1720 cancellation reason
                guard let number = integer(19) else { return false }
                RareAccumulator.of(&rare).fields.cancellationReason = number
                present |= InAppPurchase.Present.cancellationReason.rawValue
            }
            if seen & 1 << 20 != 0 {  // 1721 promotional offer identifier
                guard let content = string(20) else { return false }
                RareAccumulator.of(&rare).fields.promotionalOfferIdentifier = String(
                    decoding: UnsafeRawBufferPointer(rebasing: b[content]), as: UTF8.self)
            }
            if seen & 1 << 21 != 0 {  // 1722
                guard let number = integer(21) else { return false }
                if let small = Int8(exactly: number) {
                    purchase.undocumented1722Value = small
                } else {
                    RareAccumulator.of(&rare).fields.undocumented1722 = number
                    present |= InAppPurchase.Present.undocumented1722InRare.rawValue
                }
                present |= InAppPurchase.Present.undocumented1722.rawValue
            }
            if versioned != 0 {
                // Versions other than 1 are rare: walk the record again for them.
                var q = set.lowerBound
                while q < end, let a = AppReceiptParser.fastAttribute(b, at: q, end: end) {
                    q = a.value.upperBound
                    if a.version != 1 && AppReceiptParser.isModelledPurchaseAttribute(a.type) {
                        RareAccumulator.of(&rare).fields.attributeVersions[a.type] = a.version
                    }
                }
            }
            purchase.present = InAppPurchase.Present(rawValue: present)
            // A box only for a record that has a rare field; one whose rare values are all zero (a
            // cancellation in 1970 with reason 0) keeps none either, as the setters do.
            if let rare, rare.fields != .empty { purchase.rare = InAppPurchase.Rare(rare.fields) }
            let hinted = unknownCount < Int(UInt16.max) && unknownBytes <= Int(UInt16.max)
            purchase.unknownCountHint = hinted ? UInt16(truncatingIfNeeded: unknownCount) : .max
            purchase.unknownBytesHint = hinted ? UInt16(truncatingIfNeeded: unknownBytes) : 0
            if unknownCount > 0 {
                if let views {
                    purchase.unknown = .record(views, set)
                } else {
                    // Listed (payloads of 2 GiB or more): walk the record again for them.
                    var q = set.lowerBound
                    while q < end, let a = AppReceiptParser.fastAttribute(b, at: q, end: end) {
                        q = a.value.upperBound
                        guard !AppReceiptParser.isModelledPurchaseAttribute(a.type) else { continue }
                        // Fast-path types and versions are one or two octets, so they fit 32 bits.
                        unknown.append(
                            ReceiptStorage.RawAttribute(
                                type: Int32(truncatingIfNeeded: a.type), version: Int32(truncatingIfNeeded: a.version),
                                start: UInt32(truncatingIfNeeded: a.value.lowerBound),
                                end: UInt32(truncatingIfNeeded: a.value.upperBound)))
                    }
                    purchase.unknown = .list(shared, listStart..<unknown.count)
                }
            }
            return true
        }
        guard decoded else {
            unknown.removeSubrange(listStart...)
            attributeCount = attributesBefore
            purchase = InAppPurchase()
            return false
        }
        return true
    }

    /// The value of the canonical decimal identifier in `range` (as
    /// `InAppPurchase.numericIdentifier(_:)` defines it), eight digits at a time; nil for any other text.
    @inline(__always)
    static func decimalIdentifier(_ b: UnsafeRawBufferPointer, _ range: Range<Int>) -> UInt64? {
        var i = range.lowerBound
        let end = range.upperBound
        let count = end &- i
        guard count >= 1, count <= 19, count == 1 || b[i] != 0x30 else { return nil }
        var value: UInt64 = 0
        while end &- i >= 8 {
            let word = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            // Every byte 0x30...0x39: high nibble 3, and adding 6 leaves it 3.
            let high = word & 0xF0F0_F0F0_F0F0_F0F0
            let carried = ((word &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4
            guard high | carried == 0x3333_3333_3333_3333 else { return nil }
            // Eight digits to a number (first digit most significant): pairs, then fours, then eight.
            var d = word &- 0x3030_3030_3030_3030
            d = d &* 10 &+ (d >> 8)
            let low = (d & 0x0000_00FF_0000_00FF) &* 0x000F_4240_0000_0064
            let next = ((d >> 16) & 0x0000_00FF_0000_00FF) &* 0x0000_2710_0000_0001
            d = (low &+ next) >> 32
            value = value &* 100_000_000 &+ d
            i &+= 8
        }
        while i < end {
            let digit = b[i] &- 0x30
            guard digit <= 9 else { return nil }
            value = value &* 10 &+ UInt64(digit)
            i &+= 1
        }
        return value
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

/// The rare fields of one record while the fast path reads it.
final class RareAccumulator {
    var fields = InAppPurchase.RareFields()

    /// The accumulator in `slot`, made on first use.
    @inline(__always)
    static func of(_ slot: inout RareAccumulator?) -> RareAccumulator {
        if let existing = slot { return existing }
        let made = RareAccumulator()
        slot = made
        return made
    }
}
