// The decoding core. Every reader in this module, and the receipt hot path in `Receipts`, runs on
// these functions. They work on an `UnsafeRawBufferPointer` with explicit positions so that the hot
// path costs no allocation and no reference counting per element. Safety rests on one rule, checked
// everywhere below: a byte is read only after its position was compared with `end`, and `end` never
// exceeds the buffer's count (established in `init`). The fuzz targets run these paths under
// AddressSanitizer.

/// One decoded element, as positions relative to the start of the reader's buffer.
@_spi(RawParsing) public struct ASN1RawElement: Sendable {
    /// The element's identifier.
    public var identifier: ASN1Identifier
    /// Position of the first identifier octet.
    public var start: Int
    /// Position of the first content octet.
    public var contentStart: Int
    /// Position just after the last content octet (before the end-of-contents marker, if any).
    public var contentEnd: Int
    /// Position just after the whole element, including an end-of-contents marker.
    public var end: Int

    /// Creates an element from positions (used by the decoder).
    @inlinable
    public init(identifier: ASN1Identifier, start: Int, contentStart: Int, contentEnd: Int, end: Int) {
        self.identifier = identifier
        self.start = start
        self.contentStart = contentStart
        self.contentEnd = contentEnd
        self.end = end
    }

    /// Whether the element used the BER indefinite length form.
    @inlinable public var isIndefiniteLength: Bool { end != contentEnd }
    /// Length of the identifier and length octets.
    @inlinable public var headerLength: Int { contentStart - start }
    /// Number of content octets.
    @inlinable public var contentLength: Int { contentEnd - contentStart }
}

/// A cursor over a raw buffer: reads one element at a time, never allocates, and throws
/// ``ASN1Error`` with absolute offsets on any malformed input.
///
/// The buffer must stay valid for the reader's whole life; use it only inside a `withUnsafeBytes`
/// scope (the public ``ASN1Reader`` wraps it safely).
///
/// Package-internal in intent, but `@_spi(RawParsing) public` in fact, so that its `@inlinable`
/// paths inline into `Receipts` (see `DERFraming.swift` for why `package` would not).
@_spi(RawParsing) public struct ASN1RawReader {
    /// The whole buffer the positions refer to.
    public let buffer: UnsafeRawBufferPointer
    /// Absolute offset of `buffer[0]` in the original input, used for error offsets.
    public let base: Int
    /// Position of the next element.
    public var position: Int
    /// Position just after the last byte this reader may read.
    public var end: Int
    /// DER or BER.
    public let rules: ASN1EncodingRules
    /// Number of constructed elements this reader is inside.
    public var depth: Int
    /// Maximum depth a child reader may reach.
    public let maximumDepth: Int

    /// A reader over `buffer[position..<end]`. Positions outside the buffer are clamped, so a bad
    /// caller-supplied range cannot lead to an out-of-bounds read.
    @inlinable
    public init(
        buffer: UnsafeRawBufferPointer,
        base: Int = 0,
        position: Int = 0,
        end: Int? = nil,
        rules: ASN1EncodingRules,
        depth: Int = 0,
        maximumDepth: Int = ASN1Limits.default.maximumDepth
    ) {
        self.buffer = buffer
        self.base = base
        let limit = Swift.min(Swift.max(end ?? buffer.count, 0), buffer.count)
        self.end = limit
        self.position = Swift.min(Swift.max(position, 0), limit)
        self.rules = rules
        self.depth = depth
        self.maximumDepth = maximumDepth
    }

    /// Whether every byte has been consumed.
    @inlinable public var isAtEnd: Bool { position >= end }

    /// The absolute offset of the next element.
    @inlinable public var offset: Int { base + position }

    /// Reads the identifier and length of the next element and returns the whole element,
    /// advancing past it. For indefinite lengths (BER only) the content is scanned to its
    /// end-of-contents marker, descending at most to ``maximumDepth``.
    @inlinable
    public mutating func readElement() throws(ASN1Error) -> ASN1RawElement {
        let element = try ASN1RawReader.decodeElement(
            buffer, at: position, end: end, base: base, rules: rules, depth: depth, maximumDepth: maximumDepth)
        position = element.end
        return element
    }

    /// Reads the next element and checks that its identifier is `expected`.
    @inlinable
    public mutating func readElement(_ expected: ASN1Identifier) throws(ASN1Error) -> ASN1RawElement {
        let element = try ASN1RawReader.decodeElement(
            buffer, at: position, end: end, base: base, rules: rules, depth: depth, maximumDepth: maximumDepth)
        guard element.identifier == expected else {
            throw ASN1Error.unexpected(element.identifier, expected: expected, at: base + position)
        }
        position = element.end
        return element
    }

    /// Reads the next element if its identifier is `expected`; otherwise leaves the reader unchanged.
    @inlinable
    public mutating func readOptionalElement(_ expected: ASN1Identifier) throws(ASN1Error) -> ASN1RawElement? {
        guard position < end else { return nil }
        var copy = self
        let element = try copy.readElement()
        guard element.identifier == expected else { return nil }
        self = copy
        return element
    }

    /// A reader over the content of a constructed element read by this reader.
    @inlinable
    public func children(of element: ASN1RawElement) throws(ASN1Error) -> ASN1RawReader {
        guard element.identifier.isConstructed else {
            throw ASN1Error.make(
                .invalidConstruction, base + element.start, "\(element.identifier) is primitive; expected constructed")
        }
        guard depth < maximumDepth else {
            throw ASN1Error.make(.depthLimitExceeded, base + element.start, "nesting deeper than \(maximumDepth)")
        }
        return ASN1RawReader(
            buffer: buffer, base: base, position: element.contentStart, end: element.contentEnd,
            rules: rules, depth: depth + 1, maximumDepth: maximumDepth)
    }

    /// Reads a constructed element with identifier `expected` and returns a reader over its content.
    @inlinable
    public mutating func readConstructed(_ expected: ASN1Identifier) throws(ASN1Error) -> ASN1RawReader {
        let element = try readElement(expected)
        return try children(of: element)
    }

    /// Throws ``ASN1Error/Code/trailingBytes`` unless every byte has been consumed.
    @inlinable @inline(__always)
    public func finish() throws(ASN1Error) {
        guard position >= end else { throw trailing() }
    }

    @usableFromInline @inline(never)
    func trailing() -> ASN1Error {
        ASN1Error.make(.trailingBytes, base + position, "\(end - position) unexpected trailing bytes")
    }

    /// Reads the next element, which must have the single-octet identifier `tag` and a definite
    /// length, and returns its content range. The common case (``DERFraming/content(_:tag:at:end:)``)
    /// is decoded inline; anything else goes through the general ``decodeElement``, so the rules and
    /// limits are exactly the same.
    @inlinable @inline(__always)
    public mutating func readContent(tag: UInt8) throws(ASN1Error) -> Range<Int> {
        #if DEBUG
            ASN1Instrumentation.count()
        #endif
        if let content = DERFraming.content(buffer, tag: tag, at: position, end: end) {
            position = content.upperBound
            return content
        }
        return try readContentSlowly(tag: tag)
    }

    @usableFromInline @inline(never)
    mutating func readContentSlowly(tag: UInt8) throws(ASN1Error) -> Range<Int> {
        let element = try readElement(ASN1Identifier(shortForm: tag))
        return element.contentStart..<element.contentEnd
    }

    /// A reader over `range` of the same buffer, one level deeper (checked against the depth limit).
    @inlinable @inline(__always)
    public func descending(into range: Range<Int>, at start: Int) throws(ASN1Error) -> ASN1RawReader {
        guard depth < maximumDepth else {
            throw ASN1Error.make(.depthLimitExceeded, base + start, "nesting deeper than \(maximumDepth)")
        }
        var reader = self
        reader.position = range.lowerBound
        reader.end = range.upperBound
        reader.depth = depth &+ 1
        return reader
    }

    /// Reads an INTEGER that must fit in 64 bits. A concrete (non-generic) fast path for hot loops
    /// in other modules: one or two content octets (every attribute type and version in receipts)
    /// are decoded inline by ``DERFraming/smallInteger(_:at:end:)``.
    @inlinable @inline(__always)
    public mutating func readInt64() throws(ASN1Error) -> Int64 {
        if let small = DERFraming.smallInteger(buffer, at: position, end: end) {
            #if DEBUG
                ASN1Instrumentation.count()
            #endif
            position = small.end
            return Int64(small.value)
        }
        return try readInt64Slowly()
    }

    @usableFromInline @inline(never)
    mutating func readInt64Slowly() throws(ASN1Error) -> Int64 {
        let start = position
        let content = try readContent(tag: 0x02)
        return try ASN1RawReader.decodeInt64(buffer, content, rules: rules, at: base + start)
    }

    /// Decodes INTEGER content octets into an `Int64`: minimal encodings of up to eight octets
    /// inline, everything else (and every error) through ``decodeInteger(_:_:rules:at:)``.
    @inlinable @inline(__always)
    public static func decodeInt64(
        _ buffer: UnsafeRawBufferPointer, _ range: Range<Int>, rules: ASN1EncodingRules, at offset: Int
    ) throws(ASN1Error) -> Int64 {
        if let value = DERFraming.minimalInt64(buffer, range) { return value }
        return try decodeInt64Slowly(buffer, range, rules: rules, at: offset)
    }

    @usableFromInline @inline(never)
    static func decodeInt64Slowly(
        _ buffer: UnsafeRawBufferPointer, _ range: Range<Int>, rules: ASN1EncodingRules, at offset: Int
    ) throws(ASN1Error) -> Int64 {
        try decodeInteger(buffer, range, rules: rules, at: offset)
    }

    // MARK: - Core

    /// Decodes one element header at `start` and finds its end. The single place that interprets
    /// identifier and length octets.
    @inlinable
    public static func decodeElement(
        _ buffer: UnsafeRawBufferPointer, at start: Int, end: Int, base: Int,
        rules: ASN1EncodingRules, depth: Int, maximumDepth: Int
    ) throws(ASN1Error) -> ASN1RawElement {
        #if DEBUG
            ASN1Instrumentation.count()
        #endif
        var p = start
        guard p < end else {
            throw ASN1Error.make(.truncated, base + start, "expected an element, found the end of the input")
        }
        let first = buffer[p]
        p &+= 1
        let identifier: ASN1Identifier
        if first & 0x1F != 0x1F {
            if first == 0 {
                throw ASN1Error.make(.invalidTag, base + start, "end-of-contents marker where an element was expected")
            }
            identifier = ASN1Identifier(shortForm: first)
        } else {
            identifier = try decodeHighTag(buffer, first: first, at: &p, start: start, end: end, base: base)
        }

        guard p < end else {
            throw ASN1Error.make(.truncated, base + start, "input ends before the length octets of \(identifier)")
        }
        let lengthByte = buffer[p]
        p &+= 1
        if lengthByte < 0x80 {
            let length = Int(lengthByte)
            guard length <= end &- p else {
                throw truncatedContent(identifier, length: length, available: end &- p, at: base + start)
            }
            return ASN1RawElement(
                identifier: identifier, start: start, contentStart: p, contentEnd: p &+ length, end: p &+ length)
        }
        if lengthByte == 0x80 {
            return try decodeIndefinite(
                buffer, identifier: identifier, start: start, contentStart: p, end: end, base: base,
                rules: rules, depth: depth, maximumDepth: maximumDepth)
        }
        let length = try decodeLongLength(
            buffer, lengthByte: lengthByte, at: &p, start: start, end: end, base: base, rules: rules)
        guard length <= end &- p else {
            throw truncatedContent(identifier, length: length, available: end &- p, at: base + start)
        }
        return ASN1RawElement(
            identifier: identifier, start: start, contentStart: p, contentEnd: p &+ length, end: p &+ length)
    }

    @usableFromInline @inline(never)
    static func truncatedContent(_ identifier: ASN1Identifier, length: Int, available: Int, at offset: Int) -> ASN1Error {
        ASN1Error.make(
            .truncated, offset, "\(identifier) declares \(length) content bytes but only \(available) remain")
    }

    @usableFromInline
    static func decodeHighTag(
        _ buffer: UnsafeRawBufferPointer, first: UInt8, at p: inout Int, start: Int, end: Int, base: Int
    ) throws(ASN1Error) -> ASN1Identifier {
        var number: UInt32 = 0
        var octets = 0
        while true {
            guard p < end else {
                throw ASN1Error.make(.truncated, base + start, "input ends inside a multi-byte tag")
            }
            let byte = buffer[p]
            p += 1
            if octets == 0 && byte == 0x80 {
                throw ASN1Error.make(.invalidTag, base + start, "tag number has a superfluous leading octet")
            }
            octets += 1
            guard octets <= 5, number <= UInt32.max >> 7 else {
                throw ASN1Error.make(.invalidTag, base + start, "tag number too large")
            }
            number = number << 7 | UInt32(byte & 0x7F)
            if byte & 0x80 == 0 { break }
        }
        guard number >= 31 else {
            throw ASN1Error.make(.invalidTag, base + start, "tag number \(number) must use the single-octet form")
        }
        return ASN1Identifier(
            tagClass: ASN1TagClass(rawValue: first >> 6) ?? .universal, tagNumber: number,
            constructed: first & 0x20 != 0)
    }

    @usableFromInline
    static func decodeLongLength(
        _ buffer: UnsafeRawBufferPointer, lengthByte: UInt8, at p: inout Int, start: Int, end: Int, base: Int,
        rules: ASN1EncodingRules
    ) throws(ASN1Error) -> Int {
        guard lengthByte != 0xFF else {
            throw ASN1Error.make(.invalidLength, base + start, "reserved length octet 0xFF")
        }
        let count = Int(lengthByte & 0x7F)
        guard count <= 8 else {
            throw ASN1Error.make(.invalidLength, base + start, "length uses \(count) octets; at most 8 are supported")
        }
        guard count <= end &- p else {
            throw ASN1Error.make(.truncated, base + start, "input ends inside the length octets")
        }
        var value: UInt64 = 0
        for i in 0..<count {
            value = value << 8 | UInt64(buffer[p &+ i])
        }
        if rules == .distinguished {
            guard DERFraming.isMinimalLongFormLength(value, octets: count) else {
                throw ASN1Error.make(.invalidLength, base + start, "length is not minimally encoded (DER)")
            }
        }
        p &+= count
        guard value <= UInt64(Int.max) else {
            throw ASN1Error.make(.invalidLength, base + start, "length \(value) does not fit in a signed 64-bit integer")
        }
        return Int(value)
    }

    @usableFromInline
    static func decodeIndefinite(
        _ buffer: UnsafeRawBufferPointer, identifier: ASN1Identifier, start: Int, contentStart: Int, end: Int,
        base: Int, rules: ASN1EncodingRules, depth: Int, maximumDepth: Int
    ) throws(ASN1Error) -> ASN1RawElement {
        guard rules == .basic else {
            throw ASN1Error.make(.indefiniteLength, base + start, "indefinite length is not allowed in DER")
        }
        guard identifier.isConstructed else {
            throw ASN1Error.make(.indefiniteLength, base + start, "indefinite length on primitive \(identifier)")
        }
        guard depth < maximumDepth else {
            throw ASN1Error.make(.depthLimitExceeded, base + start, "nesting deeper than \(maximumDepth)")
        }
        // Walk the children until the end-of-contents marker. Nested indefinite elements recurse
        // through decodeElement, one level per nesting, bounded by maximumDepth.
        var p = contentStart
        while true {
            guard p < end else {
                throw ASN1Error.make(
                    .missingEndOfContents, base + start, "\(identifier) with indefinite length has no end-of-contents marker")
            }
            if buffer[p] == 0 {
                guard p &+ 1 < end else {
                    throw ASN1Error.make(.missingEndOfContents, base + start, "input ends inside an end-of-contents marker")
                }
                guard buffer[p &+ 1] == 0 else {
                    throw ASN1Error.make(.invalidTag, base + p, "malformed end-of-contents marker")
                }
                return ASN1RawElement(
                    identifier: identifier, start: start, contentStart: contentStart, contentEnd: p, end: p &+ 2)
            }
            let child = try decodeElement(
                buffer, at: p, end: end, base: base, rules: rules, depth: depth &+ 1, maximumDepth: maximumDepth)
            p = child.end
        }
    }

    /// Decodes the content octets `range` as a two's-complement integer of type `T`.
    @inlinable
    public static func decodeInteger<T: FixedWidthInteger>(
        _ buffer: UnsafeRawBufferPointer, _ range: Range<Int>, rules: ASN1EncodingRules, at offset: Int
    ) throws(ASN1Error) -> T {
        let e = range.upperBound
        var s = try significantStart(buffer, range, rules: rules, at: offset)
        let negative = buffer[s] & 0x80 != 0
        if !T.isSigned {
            guard !negative else { throw ASN1Error.make(.integerOverflow, offset, "negative INTEGER for \(T.self)") }
            if buffer[s] == 0 && e &- s >= 2 { s &+= 1 }
        }
        guard e &- s <= MemoryLayout<T>.size else {
            throw ASN1Error.make(.integerOverflow, offset, "INTEGER of \(e - s) octets does not fit \(T.self)")
        }
        var value: T = negative ? ~0 : 0
        while s < e {
            value = value &<< 8 | T(truncatingIfNeeded: buffer[s])
            s &+= 1
        }
        return value
    }

    /// Checks INTEGER content octets `range` (not empty; minimal in DER) and returns the position of
    /// the first octet that is not a redundant sign octet (BER allows those; DER does not).
    @usableFromInline
    static func significantStart(
        _ buffer: UnsafeRawBufferPointer, _ range: Range<Int>, rules: ASN1EncodingRules, at offset: Int
    ) throws(ASN1Error) -> Int {
        var s = range.lowerBound
        guard s < range.upperBound else { throw ASN1Error.make(.invalidInteger, offset, "INTEGER has no content octets") }
        while range.upperBound &- s >= 2, DERFraming.isRedundantLeadingOctet(buffer[s], before: buffer[s &+ 1]) {
            if rules == .distinguished {
                throw ASN1Error.make(.invalidInteger, offset, "INTEGER is not minimally encoded (DER)")
            }
            s &+= 1
        }
        return s
    }
}
