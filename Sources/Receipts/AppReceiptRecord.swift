@_spi(RawParsing) import ASN1
import FoundationEssentials

// Decoding one in-app purchase record: the only decoder of the record grammar.
//
// Almost every record in every real receipt has one canonical DER shape: a SET of attribute
// SEQUENCEs with small INTEGER types and versions, short lengths, ASCII strings and RFC 3339 dates.
// Each step below reads that shape in a straight line, with the framing primitives of `ASN1`
// (`DERFraming`: lengths, tags, integer minimality) and the receipt date parser (`ReceiptDate`).
// Whenever a step meets anything else (an attribute framed otherwise, a non-ASCII string, a wrapped SET,
// malformed bytes) it takes the general reading of that one step, out of line: the raw reader for
// an attribute's framing (`readAttributeSlowly`), `Context`'s value readers for a value (after
// walking the record's framing again to find the attribute). Those accept every other valid
// encoding and produce every error, so an odd encoding costs a detour for the step that meets
// it, not a second decoder of the record.
//
// Errors are those of reading the record in byte order: the failure at the lowest offset is thrown
// (``RecordFailure``), whichever pass found it. `ReferenceReceiptParser` (in the fuzz targets) is
// the plain byte-order oracle the tests and the fuzzer compare this decoder with.

extension AppReceiptParser {
    /// Decodes the record in `value` (the OCTET STRING content of an attribute of type 17) into
    /// `purchase`. With `views`, the record's unknown attributes are kept as a view of its bytes in
    /// that storage (when every attribute has the canonical framing the view reads); otherwise
    /// they are listed.
    ///
    /// Two passes, so the processor can predict the branches: DER sorts a record's attributes by
    /// their encodings, so their order follows the lengths of their values and changes from one
    /// record to the next. The first pass only frames the attributes, without branching on their
    /// type: each modelled one's value range goes to the slot of its type (`type - 1701`), and
    /// versions other than 1 are gathered as a bit set; it stops at a framing error, a duplicate or
    /// an attribute beyond 32 bits. The second pass then decodes the modelled attributes in a fixed
    /// order. Failures are collected and the earliest thrown, so the outcome does not depend on the
    /// order the passes visit the attributes in.
    mutating func decodePurchase(
        _ c: Context, _ value: Range<Int>, views: ReceiptStorage?, into purchase: inout InAppPurchase
    ) throws(ReceiptError) {
        let b = c.raw
        // The record's SET, read in a straight line when it is the whole value (as DER puts it);
        // otherwise by the general reader (up to two OCTET STRING wrappers, every error).
        let frame: RecordFrame
        if let set = DERFraming.content(b, tag: 0x31, at: value.lowerBound, end: value.upperBound), set.upperBound == value.upperBound,
            limits.maximumDepth > 4
        {
            frame = RecordFrame(context: c, set: set, depth: 4)
        } else {
            let reader = try openSet(c, start: value.lowerBound, end: value.upperBound, depth: 3)
            frame = RecordFrame(context: c, set: reader.position..<reader.end, depth: reader.depth)
        }
        let end = frame.set.upperBound
        let maximumStringLength = limits.maximumStringLength
        let fastFraming = frame.depth < limits.maximumDepth
        let attributesBefore = attributeCount
        let listStart = unknown.count
        let failure = withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 32) { slots -> RecordFailure? in
            // Pass 1: framing, without a branch on the type (the selects below compile to
            // conditional moves and masks). Slot 31 is never modelled; unknown attributes write there.
            var failure: RecordFailure?
            var seen: UInt32 = 0
            var versioned: UInt32 = 0
            var unknownCount = 0
            var unknownBytes = 0
            var count = 0
            var generallyFramed = false
            var p = frame.set.lowerBound
            framing: while p < end {
                count &+= 1  // counted before it is read, as the receipt's other attributes are
                let a: Attribute
                if fastFraming, let framed = AppReceiptParser.fastAttribute(b, at: p, end: end) {
                    a = framed
                } else {
                    generallyFramed = true
                    switch AppReceiptParser.generalAttribute(frame, at: p) {
                    case .success(let framed): a = framed
                    case .failure(let error):
                        failure = RecordFailure(start: p, stage: .framing, error: error)
                        break framing
                    }
                }
                #if DEBUG
                    ASN1Instrumentation.count()  // the value's element
                #endif
                let slot = a.type &- 1701
                let candidate = 1 << UInt32(truncatingIfNeeded: slot & 31) & AppReceiptParser.singleValuedPurchaseSlotsLiteral
                let bit = UInt(bitPattern: slot) < 32 ? candidate : 0
                if seen & bit != 0 {
                    failure = RecordFailure(
                        start: p, stage: .framing,
                        error: c.fail(.duplicateAttribute, a, "in-app attribute \(a.type) occurs more than once"))
                    break
                }
                p = a.value.upperBound
                let unknownFlag = Int(truncatingIfNeeded: (bit &- 1) >> 31)  // 1 when bit == 0
                unknownCount &+= unknownFlag
                unknownBytes &+= (a.value.upperBound &- a.value.lowerBound) & (0 &- unknownFlag)
                seen |= bit
                versioned |= bit & (0 &- UInt32(truncatingIfNeeded: a.version &- 1 == 0 ? 0 : 1))
                slots[(slot & 31) | (31 & (0 &- unknownFlag))] =
                    UInt64(truncatingIfNeeded: a.value.lowerBound) << 32 | UInt64(truncatingIfNeeded: a.value.upperBound)
            }
            attributeCount &+= count
            // Past the receipt's attribute limit the failure is the limit's, at the first attribute
            // beyond it (pass 1 frames on to the record's end or its first failure, as checking the
            // count per attribute costs the common case about 1 % of a parse).
            if attributeCount > limits.maximumAttributes {
                failure = RecordFailure.earliest(
                    failure, AppReceiptParser.attributeLimit(frame, at: limits.maximumAttributes - attributesBefore))
            }
            // Slots hold only the attributes before the first framing failure (a duplicate, an
            // attribute beyond 32 bits); the limit's failure, if earlier, is thrown before them.

            // Pass 2: the modelled attributes, in type order. Each value is read in a straight line
            // when it has the common encoding (the helpers below; nil otherwise), and otherwise by
            // the general reading of its kind (`generalInteger`, `generalFlag`, `generalString`,
            // `generalDate`), which decodes every other valid encoding and notes any error.
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
                guard let (tag, content) = element(n), tag == 0x0C || tag == 0x16,
                    content.upperBound &- content.lowerBound <= maximumStringLength,
                    AppReceiptParser.allASCII(b, content)
                else { return nil }
                return content
            }
            /// A date's milliseconds; `.some(nil)` for an empty string.
            @inline(__always) func date(_ n: Int) -> Int64?? {
                guard let (tag, content) = element(n), tag == 0x16 || tag == 0x0C,
                    content.upperBound &- content.lowerBound <= maximumStringLength
                else {
                    return nil
                }
                if content.isEmpty { return .some(nil) }
                guard let ms = ReceiptDate.value(b, content) else { return nil }
                return .some(ms)
            }
            var present: UInt32 = 0  // InAppPurchase.Present bits (plain integer operations)
            var rare: RareAccumulator?
            // 1701 quantity
            if seen & 1 << 0 != 0, let number = integer(0) ?? AppReceiptParser.generalInteger(0, frame, &failure) {
                if let small = Int32(exactly: number) {
                    purchase.quantityValue = small
                } else {
                    RareAccumulator.of(&rare).fields.quantity = number
                    present |= InAppPurchase.Present.quantityInRare.rawValue
                }
                present |= InAppPurchase.Present.quantity.rawValue
            }
            // 1702 product identifier
            if seen & 1 << 1 != 0, let content = string(1) ?? AppReceiptParser.generalString(1, frame, &failure) {
                purchase.storedProductIdentifier = recentStrings.string(for: UnsafeRawBufferPointer(rebasing: b[content]))
            }
            // 1703 transaction identifier
            if seen & 1 << 2 != 0, let content = string(2) ?? AppReceiptParser.generalString(2, frame, &failure) {
                if let number = AppReceiptParser.decimalIdentifier(b, content) {
                    purchase.transactionNumber = number
                } else {
                    RareAccumulator.of(&rare).fields.transactionText = String(
                        decoding: UnsafeRawBufferPointer(rebasing: b[content]), as: UTF8.self)
                    present |= InAppPurchase.Present.transactionIDText.rawValue
                }
                present |= InAppPurchase.Present.transactionID.rawValue
            }
            // 1705 original transaction identifier
            if seen & 1 << 4 != 0, let content = string(4) ?? AppReceiptParser.generalString(4, frame, &failure) {
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
            if seen & 1 << 3 != 0, let ms = date(3) ?? AppReceiptParser.generalDate(3, frame, &failure) {
                if let ms {
                    purchase.purchaseMS = ms
                    present |= InAppPurchase.Present.purchaseDate.rawValue
                } else {
                    purchase.emptyDateMask |= 1 << 3
                }
            }
            if seen & 1 << 5 != 0, let ms = date(5) ?? AppReceiptParser.generalDate(5, frame, &failure) {
                if let ms {
                    purchase.originalPurchaseMS = ms
                    present |= InAppPurchase.Present.originalPurchaseDate.rawValue
                } else {
                    purchase.emptyDateMask |= 1 << 5
                }
            }
            if seen & 1 << 7 != 0, let ms = date(7) ?? AppReceiptParser.generalDate(7, frame, &failure) {
                if let ms {
                    purchase.expiresMS = ms
                    present |= InAppPurchase.Present.expiresDate.rawValue
                } else {
                    purchase.emptyDateMask |= 1 << 7
                }
            }
            if seen & 1 << 11 != 0, let ms = date(11) ?? AppReceiptParser.generalDate(11, frame, &failure) {
                if let ms {
                    RareAccumulator.of(&rare).fields.cancellationMS = ms
                    present |= InAppPurchase.Present.cancellationDate.rawValue
                } else {
                    purchase.emptyDateMask |= 1 << 11
                }
            }
            // 1707 product type
            if seen & 1 << 6 != 0, let number = integer(6) ?? AppReceiptParser.generalInteger(6, frame, &failure) {
                if let small = Int8(exactly: number) {
                    purchase.productTypeValue = small
                } else {
                    RareAccumulator.of(&rare).fields.productType = number
                    present |= InAppPurchase.Present.productTypeInRare.rawValue
                }
                present |= InAppPurchase.Present.productType.rawValue
            }
            // 1711 web order line item id
            if seen & 1 << 10 != 0, let number = integer(10) ?? AppReceiptParser.generalInteger(10, frame, &failure) {
                purchase.webOrderLineItemIDValue = number
                present |= InAppPurchase.Present.webOrderLineItemID.rawValue
            }
            // 1713 trial flag
            if seen & 1 << 12 != 0,
                let isSet = integer(12).flatMap(AppReceiptParser.flag) ?? AppReceiptParser.generalFlag(12, frame, &failure)
            {
                present |= isSet ? InAppPurchase.Present([.trial, .trialValue]).rawValue : InAppPurchase.Present.trial.rawValue
            }
            // 1719 intro offer flag
            if seen & 1 << 18 != 0,
                let isSet = integer(18).flatMap(AppReceiptParser.flag) ?? AppReceiptParser.generalFlag(18, frame, &failure)
            {
                present |= isSet ? InAppPurchase.Present([.intro, .introValue]).rawValue : InAppPurchase.Present.intro.rawValue
            }
            // 1720 cancellation reason
            if seen & 1 << 19 != 0, let number = integer(19) ?? AppReceiptParser.generalInteger(19, frame, &failure) {
                RareAccumulator.of(&rare).fields.cancellationReason = number
                present |= InAppPurchase.Present.cancellationReason.rawValue
            }
            // 1721 promotional offer identifier
            if seen & 1 << 20 != 0, let content = string(20) ?? AppReceiptParser.generalString(20, frame, &failure) {
                RareAccumulator.of(&rare).fields.promotionalOfferIdentifier = String(
                    decoding: UnsafeRawBufferPointer(rebasing: b[content]), as: UTF8.self)
            }
            // 1722
            if seen & 1 << 21 != 0, let number = integer(21) ?? AppReceiptParser.generalInteger(21, frame, &failure) {
                if let small = Int8(exactly: number) {
                    purchase.undocumented1722Value = small
                } else {
                    RareAccumulator.of(&rare).fields.undocumented1722 = number
                    present |= InAppPurchase.Present.undocumented1722InRare.rawValue
                }
                present |= InAppPurchase.Present.undocumented1722.rawValue
            }
            // Past a failure nothing more is decoded: the record throws the earliest one.
            if failure != nil { return failure }
            if versioned != 0 {
                // Versions other than 1 are rare: walk the record again for them.
                AppReceiptParser.forEachAttribute(in: frame) { a in
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
                if let views, !generallyFramed {
                    // The view reads the canonical framing only, which every attribute here has.
                    purchase.unknown = .record(views, frame.set)
                } else {
                    // Listed (payloads of 2 GiB or more, or an attribute in another framing): walk
                    // the record again for them. Pass 1 checked that their types and versions fit
                    // 32 bits.
                    AppReceiptParser.forEachAttribute(in: frame) { a in
                        guard !AppReceiptParser.isModelledPurchaseAttribute(a.type) else { return }
                        unknown.append(
                            ReceiptStorage.RawAttribute(
                                type: Int32(truncatingIfNeeded: a.type), version: Int32(truncatingIfNeeded: a.version),
                                start: UInt32(truncatingIfNeeded: a.value.lowerBound),
                                end: UInt32(truncatingIfNeeded: a.value.upperBound)))
                    }
                    purchase.unknown = .list(shared, listStart..<unknown.count)
                }
            }
            return nil
        }
        if let failure { throw failure.error }
    }

    /// The general reading of slot `n`'s INTEGER (every valid encoding, every error), or nil with
    /// the error noted in `failure`.
    @inline(never)
    static func generalInteger(_ n: Int, _ frame: RecordFrame, _ failure: inout RecordFailure?) -> Int64? {
        generalValue(n, frame, &failure) { (a) throws(ReceiptError) in try frame.context.integer(a) }
    }

    /// The flag an INTEGER holds: 0 or 1, nil for any other value.
    @inline(__always)
    static func flag(_ number: Int64) -> Bool? { number == 0 || number == 1 ? number == 1 : nil }

    /// The general reading of slot `n`'s flag (an INTEGER, 0 or 1), or nil with the error noted.
    @inline(never)
    static func generalFlag(_ n: Int, _ frame: RecordFrame, _ failure: inout RecordFailure?) -> Bool? {
        generalValue(n, frame, &failure) { (a) throws(ReceiptError) in try frame.context.boolean(a) }
    }

    /// The general reading of slot `n`'s string (UTF8String or IA5String, validated): its content,
    /// or nil with the error noted.
    @inline(never)
    static func generalString(_ n: Int, _ frame: RecordFrame, _ failure: inout RecordFailure?) -> Range<Int>? {
        generalValue(n, frame, &failure) { (a) throws(ReceiptError) in try frame.context.stringRange(a) }
    }

    /// The general reading of slot `n`'s date: its milliseconds (`.some(nil)` for an empty
    /// string), or nil with the error noted.
    @inline(never)
    static func generalDate(_ n: Int, _ frame: RecordFrame, _ failure: inout RecordFailure?) -> Int64?? {
        generalValue(n, frame, &failure) { (a) throws(ReceiptError) -> Int64? in
            let c = frame.context
            return try ReceiptDate.milliseconds(c.raw, c.stringRange(a), offset: c.base + a.start, attribute: a.type)
        }
    }

    /// `read` applied to the attribute of slot `n`, or nil with its error noted in `failure`.
    static func generalValue<Value>(
        _ n: Int, _ frame: RecordFrame, _ failure: inout RecordFailure?, _ read: (Attribute) throws(ReceiptError) -> Value
    ) -> Value? {
        guard let a = attribute(type: 1701 + n, in: frame) else { return nil }
        do {
            return try read(a)
        } catch {
            failure = RecordFailure.earliest(failure, RecordFailure(start: a.start, stage: .value, error: error))
            return nil
        }
    }

    /// An attribute of a record that ``fastAttribute(_:at:end:)`` does not read (another framing,
    /// a depth limit, malformed bytes), read by the general reader with every rule: the attribute,
    /// or the error the record throws there. An unknown attribute's type and version must fit 32
    /// bits, the limit of how they are kept.
    @inline(never)
    static func generalAttribute(_ frame: RecordFrame, at p: Int) -> Result<Attribute, ReceiptError> {
        let c = frame.context
        var reader = frame.reader
        reader.position = p
        let a: Attribute
        do {
            a = try readAttributeSlowly(&reader)
        } catch {
            return .failure(c.asn1(error, attribute: nil))
        }
        if !isModelledPurchaseAttribute(a.type) {
            do {
                _ = try c.raw(a)
            } catch {
                return .failure(error)
            }
        }
        return .success(a)
    }

    /// Calls `body` with each attribute of a record whose framing pass 1 has read without error.
    static func forEachAttribute(in frame: RecordFrame, _ body: (Attribute) -> Void) {
        var reader = frame.reader
        while !reader.isAtEnd {
            // Pass 1 read every attribute of the record before this is called, so none fails here.
            guard let a = try? readAttribute(&reader) else { return }
            body(a)
        }
    }

    /// The first attribute of type `type` in the record (nil if none is found before the end or
    /// a framing error).
    static func attribute(type: Int, in frame: RecordFrame) -> Attribute? {
        var reader = frame.reader
        while !reader.isAtEnd {
            guard let a = try? readAttribute(&reader) else { return nil }
            if a.type == type { return a }
        }
        return nil
    }

    /// The failure of the attribute that takes the receipt past ``ReceiptLimits/maximumAttributes``:
    /// the record's attribute at `index` (the ones before it are within the limit).
    @inline(never)
    static func attributeLimit(_ frame: RecordFrame, at index: Int) -> RecordFailure {
        var reader = frame.reader
        var skipped = 0
        while skipped < index, !reader.isAtEnd, (try? AppReceiptParser.readAttribute(&reader)) != nil {
            skipped += 1
        }
        return RecordFailure(start: reader.position, stage: .limit, error: frame.context.attributeLimit(at: reader.position))
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

/// Where a record's attributes lie: the content of its SET, and the depth of that SET's elements.
struct RecordFrame {
    let context: AppReceiptParser.Context
    let set: Range<Int>
    let depth: Int

    /// A raw reader over the attributes, with the receipt's rules and limits.
    var reader: ASN1RawReader {
        var reader = context.reader(set)
        reader.depth = depth
        return reader
    }
}

/// The error a record throws, chosen from everything that failed in it: the failure at the lowest
/// offset; at one attribute, a limit before its framing (or duplication) before its value, the order
/// in which reading the record byte by byte meets them.
struct RecordFailure {
    /// What failed, in the order reading one attribute meets them.
    enum Stage: Int, Comparable {
        case limit, framing, value

        static func < (lhs: Stage, rhs: Stage) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Where the attribute starts (a position in the payload buffer).
    let start: Int
    /// What failed there.
    let stage: Stage
    /// The error to throw.
    let error: ReceiptError

    /// Whichever of the two the reading in byte order meets first.
    static func earliest(_ current: RecordFailure?, _ new: RecordFailure) -> RecordFailure {
        guard let current else { return new }
        return (new.start, new.stage) < (current.start, current.stage) ? new : current
    }
}

/// The rare fields of one record while it is decoded.
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
