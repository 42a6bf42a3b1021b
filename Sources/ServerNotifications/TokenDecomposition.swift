import Internals

/// A compact JWS taken apart into what is stored of it: the header's JSON with each `x5c`
/// certificate replaced by an index into a certificate table, the payload's JSON with each nested
/// token (`signedTransactionInfo`, `signedRenewalInfo`, any string shaped like a compact JWS)
/// taken apart the same way, and the signature's bytes; and put back together, byte for byte.
///
/// The binary form (before the envelope of ``CompactPayload``):
/// - token: header part, payload part, then the signature as `varint length, bytes`;
/// - part (the base64url-decoded bytes of a segment): segments, ended by `0x00`; a segment is
///   `0x01 varint length, bytes` (bytes as they are), `0x02 varint index` (the certificate of the
///   table at `index`, written as standard base64 with padding, as `x5c` writes it) or `0x03 token`
///   (a nested token, written as its compact serialisation).
///
/// Taking apart never guesses: what is not recognised stays literal bytes, and ``CompactPayload``
/// keeps a token only when putting it back together gives the original bytes.
enum TokenDecomposition {
    /// The deepest nesting taken apart and accepted when read (a notification holds tokens one
    /// level down; two more levels are room, not a need).
    static let maximumDepth = 3

    /// Segment tags.
    static let endTag: UInt8 = 0x00
    static let literalTag: UInt8 = 0x01
    static let certificateTag: UInt8 = 0x02
    static let tokenTag: UInt8 = 0x03

    /// What taking apart builds: the binary form and the distinct certificates it references.
    struct Writer {
        var bytes: [UInt8] = []
        /// DER of each distinct certificate, in order of first use.
        var certificates: [[UInt8]] = []
        private var indexes: [[UInt8]: Int] = [:]

        mutating func varint(_ value: Int) {
            var rest = UInt64(max(0, value))
            while rest >= 0x80 {
                bytes.append(UInt8(rest & 0x7F) | 0x80)
                rest >>= 7
            }
            bytes.append(UInt8(rest))
        }

        mutating func literal(_ slice: ArraySlice<UInt8>) {
            guard !slice.isEmpty else { return }
            bytes.append(TokenDecomposition.literalTag)
            varint(slice.count)
            bytes.append(contentsOf: slice)
        }

        mutating func certificate(_ der: [UInt8]) {
            let index: Int
            if let known = indexes[der] {
                index = known
            } else {
                index = certificates.count
                certificates.append(der)
                indexes[der] = index
            }
            bytes.append(TokenDecomposition.certificateTag)
            varint(index)
        }
    }

    /// The three segments of a compact JWS, base64url-decoded.
    struct Segments {
        var header: [UInt8]
        var payload: [UInt8]
        var signature: [UInt8]

        /// The segments of `token`, or nil when it is not three canonical base64url segments.
        init?(_ token: ArraySlice<UInt8>) {
            let parts = token.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard parts.count == 3,
                let header = try? Base64.decode(parts[0], rules: .strictURL),
                let payload = try? Base64.decode(parts[1], rules: .strictURL),
                let signature = try? Base64.decode(parts[2], rules: .strictURL)
            else { return nil }
            self.header = header
            self.payload = payload
            self.signature = signature
        }
    }

    /// Appends `token` (the compact serialisation) to `writer`; false, with `writer` unchanged,
    /// when it is not three canonical base64url segments.
    static func write(token: ArraySlice<UInt8>, depth: Int, into writer: inout Writer) -> Bool {
        guard depth <= maximumDepth, let segments = Segments(token) else { return false }
        write(segments, depth: depth, into: &writer)
        return true
    }

    /// Appends the token of `segments`: what is checked is checked before (nothing here fails, so
    /// nothing is undone and no copy of the writer is made).
    private static func write(_ segments: Segments, depth: Int, into writer: inout Writer) {
        writeHeader(segments.header[...], into: &writer)
        writePayload(segments.payload[...], depth: depth, into: &writer)
        writer.varint(segments.signature.count)
        writer.bytes.append(contentsOf: segments.signature)
    }

    /// The header's bytes with each element of its `x5c` array that is canonical standard base64
    /// replaced by a certificate reference.
    private static func writeHeader(_ header: ArraySlice<UInt8>, into writer: inout Writer) {
        var start = header.startIndex
        for element in x5cElements(header) {
            guard let der = try? Base64.decode(header[element], rules: .strictStandard), !der.isEmpty,
                Base64.encodedBytes(der)[...] == header[element]
            else { continue }
            writer.literal(header[start..<element.lowerBound])
            writer.certificate(der)
            start = element.upperBound
        }
        writer.literal(header[start...])
        writer.bytes.append(endTag)
    }

    /// The payload's bytes with each JSON string shaped like a compact JWS taken apart.
    private static func writePayload(_ payload: ArraySlice<UInt8>, depth: Int, into writer: inout Writer) {
        var start = payload.startIndex
        if depth < maximumDepth {
            for content in jsonStrings(payload) where content.count >= 16 && payload[content].count(where: { $0 == UInt8(ascii: ".") }) == 2
            {
                guard let segments = Segments(payload[content]) else { continue }
                writer.literal(payload[start..<content.lowerBound])
                writer.bytes.append(tokenTag)
                write(segments, depth: depth + 1, into: &writer)
                start = content.upperBound
            }
        }
        writer.literal(payload[start...])
        writer.bytes.append(endTag)
    }

    /// The contents (between the quotes) of the strings of the header's first `x5c` array, when it
    /// reads `"x5c" : [ "…", … ]` with nothing unexpected; none otherwise.
    static func x5cElements(_ header: ArraySlice<UInt8>) -> [Range<Int>] {
        let key = Array("\"x5c\"".utf8)
        guard let keyStart = header.indices.first(where: { header[$0...].starts(with: key) }) else { return [] }
        var index = skipWhitespace(header, from: keyStart + key.count)
        guard index < header.endIndex, header[index] == UInt8(ascii: ":") else { return [] }
        index = skipWhitespace(header, from: index + 1)
        guard index < header.endIndex, header[index] == UInt8(ascii: "[") else { return [] }
        var elements: [Range<Int>] = []
        index = skipWhitespace(header, from: index + 1)
        while index < header.endIndex, header[index] == UInt8(ascii: "\"") {
            guard let end = header[(index + 1)...].firstIndex(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }),
                header[end] == UInt8(ascii: "\"")
            else { return elements }
            elements.append((index + 1)..<end)
            index = skipWhitespace(header, from: end + 1)
            guard index < header.endIndex, header[index] == UInt8(ascii: ",") else { break }
            index = skipWhitespace(header, from: index + 1)
        }
        return elements
    }

    /// The contents of every JSON string in `bytes` that holds no escape (a compact JWS needs
    /// none), found by following quotes and escapes from the start.
    static func jsonStrings(_ bytes: ArraySlice<UInt8>) -> [Range<Int>] {
        var strings: [Range<Int>] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard bytes[index] == UInt8(ascii: "\"") else {
                index += 1
                continue
            }
            let start = index + 1
            var cursor = start
            var escaped = false
            while cursor < bytes.endIndex, bytes[cursor] != UInt8(ascii: "\"") {
                if bytes[cursor] == UInt8(ascii: "\\") {
                    escaped = true
                    cursor += 1
                }
                cursor += 1
            }
            guard cursor < bytes.endIndex else { break }
            if !escaped { strings.append(start..<cursor) }
            index = cursor + 1
        }
        return strings
    }

    private static func skipWhitespace(_ bytes: ArraySlice<UInt8>, from start: Int) -> Int {
        var index = start
        while index < bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }
}
