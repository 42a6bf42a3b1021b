/// One ASN.1 element (identifier, length, content) as a zero-copy view of the input.
///
/// ``encodedBytes`` is a slice of the caller's buffer, so `encodedBytes.startIndex` is the element's
/// absolute offset in that buffer. Typed accessors such as ``integer(_:)`` decode the content and
/// do not look at the tag (which lets them serve implicitly tagged fields); ``ASN1Reader``'s
/// `read…` methods check the tag first.
public struct ASN1Element: Sendable {
    /// The identifier.
    public let identifier: ASN1Identifier
    /// The whole element: identifier, length, content and, for indefinite lengths, the
    /// end-of-contents marker. Keep these bytes when the element is signed or hashed.
    public let encodedBytes: ArraySlice<UInt8>
    /// Number of identifier and length octets.
    public let headerLength: Int
    /// Number of content octets (without an end-of-contents marker).
    public let contentLength: Int
    /// The rules the element was read with.
    public let rules: ASN1EncodingRules
    /// Nesting depth of the reader that read this element.
    public let depth: Int
    let maximumDepth: Int

    /// The absolute offset of the element's first octet.
    public var offset: Int { encodedBytes.startIndex }

    /// The content octets.
    public var content: ArraySlice<UInt8> {
        let start = encodedBytes.startIndex + headerLength
        return encodedBytes[start..<start + contentLength]
    }

    /// Whether the element used the BER indefinite length form.
    public var isIndefiniteLength: Bool { headerLength + contentLength != encodedBytes.count }

    init(_ raw: ASN1RawElement, in bytes: ArraySlice<UInt8>, rules: ASN1EncodingRules, depth: Int, maximumDepth: Int) {
        let base = bytes.startIndex
        self.identifier = raw.identifier
        self.encodedBytes = bytes[(base + raw.start)..<(base + raw.end)]
        self.headerLength = raw.headerLength
        self.contentLength = raw.contentLength
        self.rules = rules
        self.depth = depth
        self.maximumDepth = maximumDepth
    }

    /// Runs `body` with a raw view whose positions are relative to `encodedBytes.startIndex`.
    func withRaw<R>(_ body: (UnsafeRawBufferPointer, ASN1RawElement) throws(ASN1Error) -> R) throws(ASN1Error) -> R {
        let raw = ASN1RawElement(
            identifier: identifier, start: 0, contentStart: headerLength, contentEnd: headerLength + contentLength,
            end: encodedBytes.count)
        return try encodedBytes.span.withUnsafeBufferPointer { (buffer) throws(ASN1Error) -> R in
            try body(UnsafeRawBufferPointer(buffer), raw)
        }
    }

    /// A reader over the children of this constructed element.
    public func children() throws(ASN1Error) -> ASN1Reader {
        guard identifier.isConstructed else {
            throw ASN1Error.make(.invalidConstruction, offset, "\(identifier) is primitive; expected constructed")
        }
        guard depth < maximumDepth else {
            throw ASN1Error.make(.depthLimitExceeded, offset, "nesting deeper than \(maximumDepth)")
        }
        return ASN1Reader(validated: content, rules: rules, depth: depth + 1, maximumDepth: maximumDepth)
    }

    /// The content as a two's-complement integer of type `T`; ``ASN1Error/Code/integerOverflow`` if it
    /// does not fit.
    public func integer<T: FixedWidthInteger>(_: T.Type = T.self) throws(ASN1Error) -> T {
        try requirePrimitive()
        let base = offset
        let rules = rules
        return try withRaw { (buffer, raw) throws(ASN1Error) -> T in
            try ASN1RawReader.decodeInteger(buffer, raw.contentStart..<raw.contentEnd, rules: rules, at: base)
        }
    }

    /// The content octets of an INTEGER of any size, validated (non-empty; minimal in DER).
    /// Use it for serial numbers and other values that may exceed 64 bits.
    public func integerBytes() throws(ASN1Error) -> ArraySlice<UInt8> {
        try requirePrimitive()
        let content = content
        guard content.count >= 1 else {
            throw ASN1Error.make(.invalidInteger, offset, "INTEGER has no content octets")
        }
        if rules == .distinguished, content.count >= 2,
            DERFraming.isRedundantLeadingOctet(content[content.startIndex], before: content[content.startIndex + 1])
        {
            throw ASN1Error.make(.invalidInteger, offset, "INTEGER is not minimally encoded (DER)")
        }
        return content
    }

    /// The content as a BOOLEAN.
    public func boolean() throws(ASN1Error) -> Bool {
        try requirePrimitive()
        let base = offset
        let rules = rules
        return try withRaw { (buffer, raw) throws(ASN1Error) -> Bool in
            try ASN1RawReader.decodeBoolean(buffer, raw.contentStart..<raw.contentEnd, rules: rules, at: base)
        }
    }

    /// Checks that the content of a NULL is empty.
    public func null() throws(ASN1Error) {
        try requirePrimitive()
        guard contentLength == 0 else { throw ASN1Error.make(.invalidNull, offset, "NULL has content octets") }
    }

    /// The content as an OBJECT IDENTIFIER.
    public func objectIdentifier() throws(ASN1Error) -> ASN1ObjectIdentifier {
        try requirePrimitive()
        return try ASN1ObjectIdentifier(validatingContent: content, offset: offset)
    }

    /// The content as a BIT STRING.
    public func bitString() throws(ASN1Error) -> ASN1BitString {
        try requirePrimitive()
        let base = offset
        let rules = rules
        let (data, unused) = try withRaw { (buffer, raw) throws(ASN1Error) -> (Range<Int>, UInt8) in
            try ASN1RawReader.decodeBitString(buffer, raw.contentStart..<raw.contentEnd, rules: rules, at: base)
        }
        return ASN1BitString(bytes: encodedBytes[(base + data.lowerBound)..<(base + data.upperBound)], unusedBits: unused)
    }

    /// The octets of an OCTET STRING (or any string type). A BER constructed encoding is flattened
    /// into a new buffer, the only case that allocates; then the slice's indices start at 0.
    public func octets() throws(ASN1Error) -> ArraySlice<UInt8> {
        guard identifier.isConstructed else { return content }
        var output: [UInt8] = []
        let base = offset
        let rules = rules
        let depth = depth
        let maximumDepth = maximumDepth
        _ = try withRaw { (buffer, raw) throws(ASN1Error) -> Bool in
            try ASN1RawReader.appendSegments(
                buffer, of: raw, base: base, rules: rules, depth: depth, maximumDepth: maximumDepth, into: &output)
        }
        return output[...]
    }

    /// The content as a UTF8String; invalid UTF-8 is an ``ASN1Error/Code/invalidString`` error,
    /// never replaced.
    public func utf8String() throws(ASN1Error) -> String { try string(.utf8) }

    /// The content as an IA5String (ASCII).
    public func ia5String() throws(ASN1Error) -> String { try string(.ia5) }

    /// The content as a PrintableString.
    public func printableString() throws(ASN1Error) -> String { try string(.printable) }

    /// The content as the character string its universal tag names (UTF8String, IA5String,
    /// PrintableString, VisibleString; T61String is read as Latin-1).
    public func anyString() throws(ASN1Error) -> String {
        switch identifier.tagNumber {
        case 12 where identifier.tagClass == .universal: return try string(.utf8)
        case 22 where identifier.tagClass == .universal: return try string(.ia5)
        case 19 where identifier.tagClass == .universal: return try string(.printable)
        case 26 where identifier.tagClass == .universal: return try string(.visible)
        case 20 where identifier.tagClass == .universal:
            return String(decoding: try octets().map { UInt16($0) }, as: UTF16.self)
        default:
            throw ASN1Error.make(.unexpectedTag, offset, "\(identifier) is not a supported character string")
        }
    }

    func string(_ kind: ASN1StringKind) throws(ASN1Error) -> String {
        let bytes = try octets()
        let base = offset
        try bytes.span.withUnsafeBufferPointer { (buffer) throws(ASN1Error) in
            let raw = UnsafeRawBufferPointer(buffer)
            try ASN1RawReader.validateString(raw, 0..<raw.count, kind: kind, at: base)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The content as a UTCTime (`isGeneralized == false`) or GeneralizedTime, chosen by the tag.
    public func time() throws(ASN1Error) -> ASN1Time {
        try requirePrimitive()
        let generalized: Bool
        switch (identifier.tagClass, identifier.tagNumber) {
        case (.universal, 23): generalized = false
        case (.universal, 24): generalized = true
        default: throw ASN1Error.make(.unexpectedTag, offset, "\(identifier) is not UTCTime or GeneralizedTime")
        }
        let base = offset
        let rules = rules
        return try withRaw { (buffer, raw) throws(ASN1Error) -> ASN1Time in
            try ASN1RawReader.decodeTime(
                buffer, raw.contentStart..<raw.contentEnd, generalized: generalized, rules: rules, at: base)
        }
    }

    func requirePrimitive() throws(ASN1Error) {
        if identifier.isConstructed {
            throw ASN1Error.make(.invalidConstruction, offset, "\(identifier) is constructed; expected primitive")
        }
    }
}

/// A cursor for decoding fixed schemas: reads one element at a time from the front of a byte
/// slice, checks tags, and never copies the input.
///
/// ```swift
/// var outer = try ASN1Reader(bytes, rules: .der)
/// var sequence = try outer.readSequence()
/// let version: Int = try sequence.readInteger()
/// let name = try sequence.readElement(.utf8String).utf8String()
/// try sequence.finish()
/// try outer.finish()
/// ```
///
/// Positions are absolute indices into the buffer the reader was created over; errors carry them.
public struct ASN1Reader: Sendable {
    /// The bytes this reader covers.
    public let bytes: ArraySlice<UInt8>
    /// Absolute index of the next element.
    public private(set) var position: Int
    /// DER or BER.
    public let rules: ASN1EncodingRules
    /// Number of constructed elements this reader is inside.
    public let depth: Int
    let maximumDepth: Int

    /// A reader over `bytes`, enforcing `limits`.
    public init(_ bytes: ArraySlice<UInt8>, rules: ASN1EncodingRules = .der, limits: ASN1Limits = .default) throws(ASN1Error) {
        guard bytes.count <= limits.maximumInputSize else {
            throw ASN1Error.make(
                .inputTooLarge, bytes.startIndex, "input of \(bytes.count) bytes exceeds the limit of \(limits.maximumInputSize)")
        }
        self.init(validated: bytes, rules: rules, depth: 0, maximumDepth: limits.maximumDepth)
    }

    /// A reader over all of `bytes`, enforcing `limits`.
    public init(_ bytes: [UInt8], rules: ASN1EncodingRules = .der, limits: ASN1Limits = .default) throws(ASN1Error) {
        try self.init(bytes[...], rules: rules, limits: limits)
    }

    init(validated bytes: ArraySlice<UInt8>, rules: ASN1EncodingRules, depth: Int, maximumDepth: Int) {
        self.bytes = bytes
        self.position = bytes.startIndex
        self.rules = rules
        self.depth = depth
        self.maximumDepth = maximumDepth
    }

    /// Whether every element has been read.
    public var isAtEnd: Bool { position >= bytes.endIndex }

    mutating func withRaw<R>(_ body: (inout ASN1RawReader) throws(ASN1Error) -> R) throws(ASN1Error) -> R {
        let base = bytes.startIndex
        let start = position - base
        let (rules, depth, maximumDepth) = (self.rules, self.depth, self.maximumDepth)
        let (result, newPosition) = try bytes.span.withUnsafeBufferPointer {
            (buffer) throws(ASN1Error) -> (R, Int) in
            var raw = ASN1RawReader(
                buffer: UnsafeRawBufferPointer(buffer), base: base, position: start, rules: rules, depth: depth,
                maximumDepth: maximumDepth)
            let result = try body(&raw)
            return (result, raw.position)
        }
        position = base + newPosition
        return result
    }

    /// The identifier of the next element, or `nil` at the end; the reader does not move.
    public func peekIdentifier() throws(ASN1Error) -> ASN1Identifier? {
        guard !isAtEnd else { return nil }
        var copy = self
        return try copy.readElement().identifier
    }

    /// Reads the next element, whatever its tag.
    public mutating func readElement() throws(ASN1Error) -> ASN1Element {
        let raw = try withRaw { (r) throws(ASN1Error) in try r.readElement() }
        return ASN1Element(raw, in: bytes, rules: rules, depth: depth, maximumDepth: maximumDepth)
    }

    /// Reads the next element and checks that it has identifier `expected`.
    public mutating func readElement(_ expected: ASN1Identifier) throws(ASN1Error) -> ASN1Element {
        let raw = try withRaw { (r) throws(ASN1Error) in try r.readElement(expected) }
        return ASN1Element(raw, in: bytes, rules: rules, depth: depth, maximumDepth: maximumDepth)
    }

    /// Reads the next element if it has identifier `expected`; otherwise returns `nil` and stays put.
    public mutating func readOptionalElement(_ expected: ASN1Identifier) throws(ASN1Error) -> ASN1Element? {
        let raw = try withRaw { (r) throws(ASN1Error) in try r.readOptionalElement(expected) }
        return raw.map { ASN1Element($0, in: bytes, rules: rules, depth: depth, maximumDepth: maximumDepth) }
    }

    /// Skips the next element.
    public mutating func skipElement() throws(ASN1Error) {
        _ = try withRaw { (r) throws(ASN1Error) in try r.readElement() }
    }

    /// Reads a constructed element with identifier `expected` and returns a reader over its children.
    public mutating func readConstructed(_ expected: ASN1Identifier) throws(ASN1Error) -> ASN1Reader {
        try readElement(expected).children()
    }

    /// Reads a SEQUENCE and returns a reader over its children.
    public mutating func readSequence() throws(ASN1Error) -> ASN1Reader { try readConstructed(.sequence) }

    /// Reads a SET and returns a reader over its children (the order of a DER SET OF is not checked).
    public mutating func readSet() throws(ASN1Error) -> ASN1Reader { try readConstructed(.set) }

    /// Throws ``ASN1Error/Code/trailingBytes`` unless every element has been read.
    public func finish() throws(ASN1Error) {
        guard isAtEnd else {
            throw ASN1Error.make(.trailingBytes, position, "\(bytes.endIndex - position) unexpected trailing bytes")
        }
    }

    /// Reads an INTEGER (or `identifier`, for implicit tags) into `T`, checking for overflow.
    public mutating func readInteger<T: FixedWidthInteger>(
        _: T.Type = T.self, identifier: ASN1Identifier = .integer
    ) throws(ASN1Error) -> T {
        try readElement(identifier).integer(T.self)
    }

    /// Reads a BOOLEAN.
    public mutating func readBoolean() throws(ASN1Error) -> Bool { try readElement(.boolean).boolean() }

    /// Reads a NULL.
    public mutating func readNull() throws(ASN1Error) { try readElement(.null).null() }

    /// Reads an OBJECT IDENTIFIER.
    public mutating func readObjectIdentifier() throws(ASN1Error) -> ASN1ObjectIdentifier {
        try readElement(.objectIdentifier).objectIdentifier()
    }

    /// Reads an OCTET STRING, primitive or (BER) constructed, and returns its octets.
    public mutating func readOctetString() throws(ASN1Error) -> ArraySlice<UInt8> {
        let element = try readElement()
        guard element.identifier.tagClass == .universal, element.identifier.tagNumber == 4 else {
            throw ASN1Error.unexpected(element.identifier, expected: .octetString, at: element.offset)
        }
        return try element.octets()
    }

    /// Reads a UTF8String.
    public mutating func readUTF8String() throws(ASN1Error) -> String {
        let element = try readElement()
        guard element.identifier.tagClass == .universal, element.identifier.tagNumber == 12 else {
            throw ASN1Error.unexpected(element.identifier, expected: .utf8String, at: element.offset)
        }
        return try element.utf8String()
    }

    /// Reads a BIT STRING.
    public mutating func readBitString() throws(ASN1Error) -> ASN1BitString { try readElement(.bitString).bitString() }

    /// Reads a UTCTime or GeneralizedTime.
    public mutating func readTime() throws(ASN1Error) -> ASN1Time { try readElement().time() }
}

/// One node of a fully parsed ASN.1 tree, as ``ASN1Tree/depthFirstNodes(_:rules:limits:)`` lists them.
public struct ASN1Node: Sendable {
    /// The element.
    public let element: ASN1Element
    /// 0 for the root, 1 for its children, and so on.
    public var depth: Int { element.depth }
    /// Absolute offset of the first octet.
    public var offset: Int { element.offset }
}

/// Whole-input parsing: every element of an input, checked, as a flat list.
public enum ASN1Tree {
    /// Parses `bytes` (one root element, nothing after it), descending into every constructed
    /// element, and returns all the elements as one flat list in document (depth-first) order, each
    /// with its depth, the shape `openssl asn1parse -i` prints. Also the way to check that a whole
    /// input is well-formed under `rules`.
    @discardableResult
    public static func depthFirstNodes(
        _ bytes: ArraySlice<UInt8>, rules: ASN1EncodingRules = .der, limits: ASN1Limits = .default
    ) throws(ASN1Error) -> [ASN1Node] {
        var reader = try ASN1Reader(bytes, rules: rules, limits: limits)
        var nodes: [ASN1Node] = []
        let root = try reader.readElement()
        try reader.finish()
        try append(root, to: &nodes)
        return nodes
    }

    static func append(_ element: ASN1Element, to nodes: inout [ASN1Node]) throws(ASN1Error) {
        nodes.append(ASN1Node(element: element))
        guard element.identifier.isConstructed else { return }
        var children = try element.children()
        while !children.isAtEnd {
            try append(try children.readElement(), to: &nodes)
        }
    }
}
