/// The encoding rules an ``ASN1Writer`` writes under, as a type: ``DERWriter`` and ``BERWriter``
/// share every definite-length form, and only ``BERWriter`` has the BER-only ones.
public protocol ASN1WriterRules: Sendable {}

/// DER: definite minimal lengths, primitive strings, SET OF sorted.
public enum DistinguishedWriterRules: ASN1WriterRules {}

/// BER: also the indefinite length form, segmented (constructed) strings and SETs in written order.
public enum BasicWriterRules: ASN1WriterRules {}

/// A writer that produces DER only: every method it has writes the distinguished encoding.
public typealias DERWriter = ASN1Writer<DistinguishedWriterRules>

/// A writer for BER: the DER forms plus ``ASN1Writer/appendIndefinite(_:_:)``,
/// ``ASN1Writer/appendSegmentedOctetString(_:segmentSize:)`` and
/// ``ASN1Writer/appendUnsortedSet(_:)``, the forms Apple's Xcode receipts use. What it writes is
/// DER exactly when none of those three is used.
public typealias BERWriter = ASN1Writer<BasicWriterRules>

/// A small ASN.1 encoder that appends to one growing buffer, as ``DERWriter`` or ``BERWriter``.
///
/// Constructed elements are written with a closure; their length is filled in when the closure
/// returns.
///
/// ```swift
/// var writer = DERWriter()
/// writer.appendSequence { w in
///     w.appendInteger(1)
///     w.appendUTF8String("com.example.app")
/// }
/// let bytes = writer.bytes
/// ```
public struct ASN1Writer<Rules: ASN1WriterRules>: Sendable {
    /// Everything written so far.
    public private(set) var bytes: [UInt8]

    /// An empty writer; `capacity` reserves room up front.
    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends identifier octets.
    public mutating func appendIdentifier(_ identifier: ASN1Identifier) {
        if let byte = identifier.shortFormByte {
            bytes.append(byte)
            return
        }
        bytes.append(identifier.tagClass.rawValue << 6 | (identifier.isConstructed ? 0x20 : 0) | 0x1F)
        var groups: [UInt8] = []
        var n = identifier.tagNumber
        repeat {
            groups.append(UInt8(n & 0x7F))
            n >>= 7
        } while n != 0
        for (i, g) in groups.reversed().enumerated() {
            bytes.append(i == groups.count - 1 ? g : g | 0x80)
        }
    }

    /// The minimal DER length octets for `length`.
    public static func lengthOctets(_ length: Int) -> [UInt8] {
        if length < 0x80 { return [UInt8(length)] }
        var octets: [UInt8] = []
        var n = UInt64(length)
        while n != 0 {
            octets.insert(UInt8(n & 0xFF), at: 0)
            n >>= 8
        }
        return [0x80 | UInt8(octets.count)] + octets
    }

    /// Appends a complete element with the given content octets.
    public mutating func append(_ identifier: ASN1Identifier, content: some Collection<UInt8>) {
        appendIdentifier(identifier)
        bytes.append(contentsOf: ASN1Writer.lengthOctets(content.count))
        bytes.append(contentsOf: content)
    }

    /// Appends already-encoded elements verbatim.
    public mutating func appendEncoded(_ encoded: some Collection<UInt8>) {
        bytes.append(contentsOf: encoded)
    }

    /// Appends a constructed element whose children `body` writes (definite length).
    public mutating func appendConstructed<E: Error>(
        _ identifier: ASN1Identifier, _ body: (inout ASN1Writer) throws(E) -> Void
    ) throws(E) {
        appendIdentifier(identifier.asConstructed)
        let contentStart = bytes.count
        try body(&self)
        let length = bytes.count - contentStart
        bytes.insert(contentsOf: ASN1Writer.lengthOctets(length), at: contentStart)
    }

    /// Appends a SEQUENCE.
    public mutating func appendSequence<E: Error>(_ body: (inout ASN1Writer) throws(E) -> Void) throws(E) {
        try appendConstructed(.sequence, body)
    }

    /// Appends a SET whose elements are sorted by their encodings, as DER requires for SET OF.
    public mutating func appendSetOf<E: Error>(_ body: (inout ASN1Writer) throws(E) -> Void) throws(E) {
        var inner = ASN1Writer()
        try body(&inner)
        let elements = ASN1Writer.splitElements(inner.bytes).sorted { $0.lexicographicallyPrecedes($1) }
        append(.set, content: elements.joined())
    }

    /// Appends an INTEGER with the minimal two's-complement encoding of `value`.
    public mutating func appendInteger<T: FixedWidthInteger>(_ value: T, identifier: ASN1Identifier = .integer) {
        var octets: [UInt8] = []
        var v = value
        for _ in 0..<MemoryLayout<T>.size {
            octets.insert(UInt8(truncatingIfNeeded: v), at: 0)
            v = v >> 8
        }
        if !T.isSigned && (octets.first ?? 0) & 0x80 != 0 { octets.insert(0, at: 0) }
        while octets.count >= 2, DERFraming.isRedundantLeadingOctet(octets[0], before: octets[1]) {
            octets.removeFirst()
        }
        append(identifier, content: octets)
    }

    /// Appends an INTEGER from big-endian magnitude octets of a non-negative number (leading zeros
    /// are removed and a zero octet is added when the top bit is set).
    public mutating func appendUnsignedInteger(bytes magnitude: some Collection<UInt8>) {
        var octets = Array(magnitude.drop { $0 == 0 })
        if octets.isEmpty || octets[0] & 0x80 != 0 { octets.insert(0, at: 0) }
        append(.integer, content: octets)
    }

    /// Appends a BOOLEAN (`FF` for true).
    public mutating func appendBoolean(_ value: Bool) { append(.boolean, content: [value ? 0xFF : 0x00]) }

    /// Appends a NULL.
    public mutating func appendNull() { append(.null, content: EmptyCollection()) }

    /// Appends an OBJECT IDENTIFIER.
    public mutating func appendObjectIdentifier(_ oid: ASN1ObjectIdentifier) {
        append(.objectIdentifier, content: oid.encodedContent)
    }

    /// Appends an OCTET STRING (primitive).
    public mutating func appendOctetString(_ octets: some Collection<UInt8>) {
        append(.octetString, content: octets)
    }

    /// Appends a UTF8String.
    public mutating func appendUTF8String(_ string: String) { append(.utf8String, content: Array(string.utf8)) }

    /// Appends an IA5String (the caller supplies ASCII).
    public mutating func appendIA5String(_ string: String) { append(.ia5String, content: Array(string.utf8)) }

    /// Appends a BIT STRING.
    public mutating func appendBitString(_ octets: some Collection<UInt8>, unusedBits: UInt8 = 0) {
        append(.bitString, content: [unusedBits] + Array(octets))
    }

    /// Splits a concatenation of well-formed definite-length elements (written by this writer).
    static func splitElements(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        bytes.withUnsafeBytes { buffer in
            var reader = ASN1RawReader(buffer: buffer, rules: .basic)
            while !reader.isAtEnd {
                guard let element = try? reader.readElement() else {
                    // Not well-formed (appended verbatim by the caller): keep it as one unit.
                    result.append(bytes[reader.position...])
                    return
                }
                result.append(bytes[element.start..<element.end])
            }
        }
        return result
    }
}

extension ASN1Writer where Rules == BasicWriterRules {
    /// Appends a constructed element with the BER indefinite length form and an end-of-contents marker.
    public mutating func appendIndefinite<E: Error>(
        _ identifier: ASN1Identifier, _ body: (inout BERWriter) throws(E) -> Void
    ) throws(E) {
        appendIdentifier(identifier.asConstructed)
        bytes.append(0x80)
        try body(&self)
        bytes.append(contentsOf: [0, 0])
    }

    /// Appends a SET keeping the order `body` wrote (BER; Xcode receipts do this). DER requires a
    /// SET OF sorted: see ``ASN1Writer/appendSetOf(_:)``.
    public mutating func appendUnsortedSet<E: Error>(_ body: (inout BERWriter) throws(E) -> Void) throws(E) {
        try appendConstructed(.set, body)
    }

    /// Appends an OCTET STRING in the BER constructed form: an indefinite-length OCTET STRING
    /// holding primitive segments of at most `segmentSize` octets (at least one segment; a size
    /// below 1 counts as 1).
    public mutating func appendSegmentedOctetString(_ octets: some Collection<UInt8>, segmentSize: Int) {
        appendIndefinite(.octetString) { writer in
            var rest = octets[...]
            repeat {
                let chunk = rest.prefix(max(segmentSize, 1))
                writer.appendOctetString(chunk)
                rest = rest.dropFirst(chunk.count)
            } while !rest.isEmpty
        }
    }
}

extension ASN1Writer where Rules == DistinguishedWriterRules {
    /// Appends `element` re-encoded canonically: definite lengths, segmented strings joined into
    /// one primitive string, and (with `sortingSets`) the elements of every SET sorted as DER
    /// requires. Content inside OCTET STRINGs is copied as is.
    public mutating func appendCanonical(_ element: ASN1Element, sortingSets: Bool = true) throws(ASN1Error) {
        let id = element.identifier
        let isString = id.tagClass == .universal && [3, 4, 12, 19, 20, 22, 26, 30].contains(id.tagNumber)
        if id.isConstructed && isString {
            append(ASN1Identifier(tagClass: id.tagClass, tagNumber: id.tagNumber, constructed: false), content: try element.octets())
            return
        }
        guard id.isConstructed else {
            append(id, content: element.content)
            return
        }
        var children = try element.children()
        var encoded: [[UInt8]] = []
        while !children.isAtEnd {
            var child = DERWriter()
            try child.appendCanonical(try children.readElement(), sortingSets: sortingSets)
            encoded.append(child.bytes)
        }
        if sortingSets && id == .set { encoded.sort { $0.lexicographicallyPrecedes($1) } }
        append(id, content: encoded.joined())
    }
}
