@_spi(RawParsing) import ASN1
import FoundationEssentials

/// The receipt payload parser: one pass over the attribute SET with the raw ASN.1 core, no
/// allocation per attribute except the strings it materializes.
struct AppReceiptParser {
    let limits: ReceiptLimits
    let segmentedPayload: Bool
    var attributeCount = 0
    var unknown: [ReceiptStorage.RawAttribute] = []
    /// The storage every record of this parse refers to; it adopts `unknown` at the end.
    var shared: ReceiptStorage?
    /// Recently decoded product identifiers, reused when the same bytes come again: receipts repeat
    /// them in every record of a product.
    var recentStrings = StringInterner()

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

        /// The error for the attribute at `position` (in the buffer), which takes the receipt past
        /// ``ReceiptLimits/maximumAttributes``.
        @inline(never)
        func attributeLimit(at position: Int) -> ReceiptError {
            ReceiptError.make(.limitExceeded, base + position, "more than \(limits.maximumAttributes) attributes in the receipt")
        }

        @inline(never)
        func fail(_ code: ReceiptError.Code, _ attribute: Attribute, _ reason: String) -> ReceiptError {
            ReceiptError.make(code, base + attribute.start, attribute: attribute.type, reason)
        }

        /// A reader over `range` of the payload, as deep as attribute values sit.
        @inline(__always)
        func reader(_ range: Range<Int>) -> ASN1RawReader {
            ASN1RawReader(
                buffer: raw, base: base, position: range.lowerBound, end: range.upperBound, rules: .der, depth: 3,
                maximumDepth: limits.maximumDepth)
        }

        /// Reads the single DER element inside an attribute's value octets, which must have one of
        /// the given single-octet tags; returns the tag and the content range.
        @inline(__always)
        func inner(_ attribute: Attribute, _ tags: (UInt8, UInt8)) throws(ReceiptError) -> (tag: UInt8, content: Range<Int>) {
            guard let tag = attribute.value.first.map({ raw[$0] }), tag == tags.0 || tag == tags.1 else {
                throw unexpectedValue(attribute)
            }
            var inner = reader(attribute.value)
            do {
                let content = try inner.readContent(tag: tag)
                try inner.finish()
                return (tag, content)
            } catch {
                throw asn1(error, attribute: attribute.type)
            }
        }

        /// The error for a value whose element is not of the expected type: the framing error when
        /// the value is not one well-formed element (as reading it first finds), otherwise what
        /// the element is.
        @inline(never)
        func unexpectedValue(_ attribute: Attribute) -> ReceiptError {
            var inner = reader(attribute.value)
            do {
                let found = try inner.readElement()
                try inner.finish()
                return fail(.invalidAttributeValue, attribute, "value holds \(found.identifier), not the expected type")
            } catch {
                return asn1(error, attribute: attribute.type)
            }
        }

        func integer(_ attribute: Attribute) throws(ReceiptError) -> Int64 {
            let (_, content) = try inner(attribute, (0x02, 0x02))
            do {
                return try ASN1RawReader.decodeInt64(raw, content, rules: .der, at: base + attribute.start)
            } catch {
                throw asn1(error, attribute: attribute.type)
            }
        }

        func boolean(_ attribute: Attribute) throws(ReceiptError) -> Bool {
            let number = try integer(attribute)
            guard let flag = AppReceiptParser.flag(number) else {
                throw fail(.invalidAttributeValue, attribute, "flag is \(number), expected 0 or 1")
            }
            return flag
        }

        /// The content range of a UTF8String or IA5String value, validated.
        func stringRange(_ attribute: Attribute) throws(ReceiptError) -> Range<Int> {
            let (tag, range) = try inner(attribute, (0x0C, 0x16))
            guard range.count <= limits.maximumStringLength else {
                throw fail(.limitExceeded, attribute, "string of \(range.count) bytes exceeds \(limits.maximumStringLength)")
            }
            // ASCII is valid for both types; only non-ASCII needs the full checks.
            if !AppReceiptParser.allASCII(raw, range) {
                do {
                    try ASN1RawReader.validateString(raw, range, kind: tag == 0x0C ? .utf8 : .ia5, at: base + attribute.start)
                } catch {
                    throw ReceiptError(
                        code: .invalidString, offset: error.offset, attributeType: attribute.type, reason: error.reason,
                        underlying: error)
                }
            }
            return range
        }

        func string(_ attribute: Attribute) throws(ReceiptError) -> String {
            let range = try stringRange(attribute)
            return String(decoding: UnsafeBufferPointer(rebasing: typed[range]), as: UTF8.self)
        }

        /// A date, or `nil` for an empty string (whose bit is then set in `emptyMask`).
        @inline(__always)
        func date<Mask: FixedWidthInteger>(_ attribute: Attribute, emptyMask: inout Mask, bit: Int) throws(ReceiptError) -> Date? {
            let range = try stringRange(attribute)
            guard let ms = try ReceiptDate.milliseconds(raw, range, offset: base + attribute.start, attribute: attribute.type) else {
                emptyMask |= 1 << Mask(bit)
                return nil
            }
            return ReceiptDate.date(milliseconds: ms)
        }

        /// The attribute as kept raw; types and versions must fit 32 bits (a limit, not a format rule).
        func raw(_ attribute: Attribute) throws(ReceiptError) -> ReceiptStorage.RawAttribute {
            guard let type = Int32(exactly: attribute.type), let version = Int32(exactly: attribute.version) else {
                throw fail(.limitExceeded, attribute, "attribute type or version beyond 32 bits")
            }
            return ReceiptStorage.RawAttribute(
                type: type, version: version, start: UInt32(truncatingIfNeeded: attribute.value.lowerBound),
                end: UInt32(truncatingIfNeeded: attribute.value.upperBound))
        }

        func bytes(_ attribute: Attribute) -> [UInt8] {
            Array(UnsafeBufferPointer(rebasing: typed[attribute.value]))
        }
    }

    mutating func parse(_ payload: ArraySlice<UInt8>, envelope: ReceiptEnvelope? = nil) throws(ReceiptError) -> AppReceipt {
        guard payload.count < Int(UInt32.max) else {
            throw ReceiptError.make(.limitExceeded, nil, "payloads of 4 GiB or more are not supported")
        }
        // Records keep their unknown attributes as a view of the payload, in this storage; those
        // a view cannot read (another framing) and the receipt's own as ranges of the list it
        // adopts once the parse is done.
        let shared = ReceiptStorage(payload: payload, unknown: [])
        self.shared = shared
        // The fields are put in the receipt's box where they were filled in, so the struct of
        // every field is not copied on its way out (a copy retains each string and array).
        let box = try payload.span.withUnsafeBufferPointer { (typed) throws(ReceiptError) -> AppReceipt.Box in
            let context = Context(
                raw: UnsafeRawBufferPointer(typed), typed: typed, base: payload.startIndex, limits: limits,
                segmented: segmentedPayload)
            return try parseReceipt(context, shared: shared, payload: payload, envelope: envelope)
        }
        if !unknown.isEmpty { shared.adopt(unknown) }
        return AppReceipt(box: box)
    }

    /// Reads the next attribute SEQUENCE of a SET.
    @inline(__always)
    mutating func nextAttribute(_ set: inout ASN1RawReader, _ context: Context) throws(ReceiptError) -> Attribute {
        attributeCount &+= 1
        guard attributeCount <= limits.maximumAttributes else { throw context.attributeLimit(at: set.position) }
        do {
            return try AppReceiptParser.readAttribute(&set)
        } catch {
            throw context.asn1(error, attribute: nil)
        }
    }

    /// Reads the attribute SEQUENCE at the reader's position: the straight-line path when it is
    /// canonical DER with small fields, otherwise the general reader (which reports any error).
    @inline(__always)
    static func readAttribute(_ set: inout ASN1RawReader) throws(ASN1Error) -> Attribute {
        if let attribute = fastAttribute(set.buffer, at: set.position, end: set.end), set.depth < set.maximumDepth {
            set.position = attribute.value.upperBound
            return attribute
        }
        return try readAttributeSlowly(&set)
    }

    /// ``readAttribute(_:)`` for every other encoding, out of line so that loops stay small.
    @inline(never)
    static func readAttributeSlowly(_ set: inout ASN1RawReader) throws(ASN1Error) -> Attribute {
        let start = set.position
        var sequence = try set.descending(into: set.readContent(tag: 0x30), at: start)
        let type = Int(try sequence.readInt64())
        let version = Int(try sequence.readInt64())
        let value = try sequence.readContent(tag: 0x04)
        try sequence.finish()
        return Attribute(type: type, version: version, start: start, value: value)
    }

    /// The common encoding of one attribute — `30 len 02 type 02 version 04 len value` with small
    /// integers and short lengths — decoded without the general reader. Anything else (and every
    /// malformed input) returns nil and is read by ``readAttributeSlowly(_:)``, which applies every
    /// rule and reports errors; this accepts only encodings that one reads identically.
    @_transparent
    static func fastAttribute(_ b: UnsafeRawBufferPointer, at p: Int, end: Int) -> Attribute? {
        #if DEBUG
            ASN1Instrumentation.count(4)  // SEQUENCE, two INTEGERs, OCTET STRING
        #endif
        if let attribute = quickAttribute(b, at: p, end: end) { return attribute }
        guard let sequence = DERFraming.content(b, tag: 0x30, at: p, end: end),
            let type = DERFraming.smallInteger(b, at: sequence.lowerBound, end: sequence.upperBound),
            let version = DERFraming.smallInteger(b, at: type.end, end: sequence.upperBound),
            let value = DERFraming.content(b, tag: 0x04, at: version.end, end: sequence.upperBound),
            value.upperBound == sequence.upperBound
        else { return nil }
        return Attribute(type: type.value, version: version.value, start: p, value: value)
    }

    /// The one shape nearly every in-app attribute has, checked with two loads: `30 L 02 02 hi lo
    /// 02 01 01 04 V` with short lengths (`L`, `V` below 0x80, so minimal DER), a two-octet
    /// INTEGER type whose first octet is 0x01...0x7F (so minimal and positive: 256...32767),
    /// version 1, and `L = V + 9` (the OCTET STRING ends the SEQUENCE). The same attribute
    /// ``fastAttribute(_:at:end:)``'s general checks would read, or nil (then they run).
    @inline(__always)
    static func quickAttribute(_ b: UnsafeRawBufferPointer, at p: Int, end: Int) -> Attribute? {
        guard end &- p >= 11 else { return nil }
        let head = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: p, as: UInt64.self))
        // Bytes 0, 2, 3, 6, 7 fixed (30 · 02 02 · · 02 01); byte 1 (L) and 4 (hi) below 0x80.
        guard head & 0xFFFF_0080_FFFF_80FF == 0x0102_0000_0202_0030 else { return nil }
        let hi = Int(truncatingIfNeeded: head >> 32) & 0xFF
        let length = Int(truncatingIfNeeded: head >> 8) & 0xFF
        let tail = UInt32(b[p &+ 8]) | UInt32(b[p &+ 9]) << 8 | UInt32(b[p &+ 10]) << 16
        let valueLength = Int(tail >> 16)
        guard hi != 0, tail & 0x80_FFFF == 0x00_0401, length == valueLength &+ 9, length <= end &- p &- 2 else { return nil }
        let type = hi << 8 | Int(truncatingIfNeeded: head >> 40) & 0xFF
        let start = p &+ 11
        return Attribute(type: type, version: 1, start: p, value: Range(uncheckedBounds: (start, start &+ valueLength)))
    }

    /// Opens the payload: a SET of attributes, possibly wrapped once or twice more in an OCTET STRING.
    func openSet(_ context: Context, start: Int, end: Int, depth: Int) throws(ReceiptError) -> ASN1RawReader {
        let reader = ASN1RawReader(
            buffer: context.raw, base: context.base, position: start, end: end, rules: .der, depth: depth,
            maximumDepth: limits.maximumDepth)
        do {
            return try AppReceiptParser.openPayload(reader)
        } catch {
            throw context.asn1(error, attribute: nil)
        }
    }

    /// The attribute SET the whole of `reader` holds, unwrapping at most two OCTET STRINGs around
    /// it, as a reader over its attributes (shared by the parser and ``LazyAppReceipt``).
    static func openPayload(_ reader: ASN1RawReader) throws(ASN1Error) -> ASN1RawReader {
        var reader = reader
        var element = try reader.readElement()
        try reader.finish()
        var wrappers = 0
        while element.identifier == .octetString && wrappers < 2 {
            wrappers += 1
            reader.position = element.contentStart
            reader.end = element.contentEnd
            element = try reader.readElement()
            try reader.finish()
        }
        guard element.identifier == .set else {
            throw ASN1Error(
                code: .unexpectedTag, offset: reader.base + element.start,
                reason: "payload is \(element.identifier), expected a SET of attributes")
        }
        return try reader.children(of: element)
    }

    /// Bit n set: receipt attribute type n is modelled and may occur once.
    static let singleValuedReceiptTypes: UInt64 = [0, 1, 2, 3, 4, 5, 8, 10, 12, 13, 15, 16, 18, 19, 21, 25]
        .reduce(0) { $0 | 1 << UInt64($1) }
    /// Bit n set: in-app attribute type 1701 + n is modelled and may occur once.
    static let singleValuedPurchaseSlots: UInt32 = [
        1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1713, 1719, 1720, 1721, 1722,
    ]
    .reduce(0) { $0 | 1 << UInt32($1 - 1701) }

    mutating func parseReceipt(
        _ c: Context, shared: ReceiptStorage, payload: ArraySlice<UInt8>, envelope: ReceiptEnvelope?
    ) throws(ReceiptError) -> AppReceipt.Box {
        // The fields are written in place and handed to the box from here, where the optimizer
        // moves them: returned from the function that fills them they were copied (and every
        // reference they hold retained) and the original destroyed.
        var fields = AppReceipt.Fields()
        try parseFields(c, shared: shared, payload: payload, envelope: envelope, into: &fields)
        return AppReceipt.Box(fields)
    }

    mutating func parseFields(
        _ c: Context, shared: ReceiptStorage, payload: ArraySlice<UInt8>, envelope: ReceiptEnvelope?, into receipt: inout AppReceipt.Fields
    ) throws(ReceiptError) {
        var set = try openSet(c, start: 0, end: c.raw.count, depth: 0)
        var seen: UInt64 = 0
        // In-app records append their unknown attributes to `unknown` while this loop runs, so the
        // receipt's own unknown attributes are collected apart and appended at the end.
        var topLevelUnknown: [ReceiptStorage.RawAttribute] = []
        // Count the in-app records first (a cheap walk over the top-level framing) so the array
        // is allocated once at its final size: no regrowth, no transient double copy.
        var records = 0
        var scan = set.position
        while let attribute = AppReceiptParser.fastAttribute(c.raw, at: scan, end: set.end) {
            if attribute.type == 17 { records &+= 1 }
            scan = attribute.value.upperBound
        }
        var purchases: [InAppPurchase] = []
        purchases.reserveCapacity(min(records, limits.maximumInAppPurchases))
        // Record views need offsets below 2 GiB (the top bit marks them).
        let views = c.raw.count < Int(UnknownAttributes.recordFlag) ? shared : nil
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
            case 8: receipt.undocumentedDate8 = try c.date(a, emptyMask: &receipt.emptyDateMask, bit: 8)
            case 10: receipt.ageRating = try c.string(a)
            case 12: receipt.creationDate = try c.date(a, emptyMask: &receipt.emptyDateMask, bit: 12)
            case 13: receipt.undocumentedInteger13 = try c.integer(a)
            case 15: receipt.downloadID = try c.integer(a)
            case 16: receipt.versionExternalIdentifier = try c.integer(a)
            case 17:
                if a.version != 1 { receipt.attributeVersions[17] = a.version }
                guard purchases.count < limits.maximumInAppPurchases else {
                    throw c.fail(.limitExceeded, a, "more than \(limits.maximumInAppPurchases) in-app purchases")
                }
                purchases.append(InAppPurchase())
                try decodePurchase(c, a.value, views: views, into: &purchases[purchases.count - 1])
            case 18: receipt.originalPurchaseDate = try c.date(a, emptyMask: &receipt.emptyDateMask, bit: 18)
            case 19: receipt.originalAppVersion = try c.string(a)
            case 21: receipt.expirationDate = try c.date(a, emptyMask: &receipt.emptyDateMask, bit: 21)
            case 25: receipt.undocumentedInteger25 = try c.integer(a)
            default:
                if topLevelUnknown.isEmpty { topLevelUnknown.reserveCapacity(8) }
                topLevelUnknown.append(try c.raw(a))
            }
        }
        if !topLevelUnknown.isEmpty {
            let start = unknown.count
            if start == 0 {
                unknown = topLevelUnknown  // no in-app record listed any: the list as it is, not a copy
            } else {
                unknown.append(contentsOf: topLevelUnknown)
            }
            receipt.unknown = .list(shared, start..<unknown.count)
        }
        receipt.inAppPurchases = purchases
        receipt.payload = payload
        receipt.envelope = envelope
    }
}
