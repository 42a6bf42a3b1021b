import Internals

/// Puts a token taken apart by ``TokenDecomposition`` back together, from bytes read back from a
/// database: every length and index is checked, nesting is bounded by
/// ``TokenDecomposition/maximumDepth``, and no part grows beyond `limit` bytes, so a damaged or
/// hostile row fails with ``NotificationStoreError/Code/corrupt`` instead of exhausting memory.
struct TokenReassembly {
    private let bytes: [UInt8]
    private var offset: Int
    /// The certificates the form references, DER, by index.
    private let certificates: [[UInt8]]
    /// The most bytes any part (and the token) may reach.
    private let limit: Int

    init(_ bytes: [UInt8], from offset: Int, certificates: [[UInt8]], limit: Int) {
        self.bytes = bytes
        self.offset = offset
        self.certificates = certificates
        self.limit = limit
    }

    /// Whether every byte was read.
    var isAtEnd: Bool { offset == bytes.count }
    /// How many bytes are left to read.
    var remaining: Int { bytes.count - offset }

    static func corrupt(_ reason: String) -> NotificationStoreError { NotificationStoreError(.corrupt, reason) }

    /// Reads one byte.
    mutating func byte() throws(NotificationStoreError) -> UInt8 {
        guard offset < bytes.count else { throw Self.corrupt("the compact form ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads a varint of at most four bytes (values below 2^28).
    mutating func varint() throws(NotificationStoreError) -> Int {
        var value = 0
        for shift in stride(from: 0, to: 28, by: 7) {
            let next = try byte()
            value |= Int(next & 0x7F) << shift
            if next & 0x80 == 0 { return value }
        }
        throw Self.corrupt("a length of the compact form is too large")
    }

    /// Reads `count` bytes.
    mutating func take(_ count: Int) throws(NotificationStoreError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - offset else { throw Self.corrupt("the compact form ends early") }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    /// Reads a token at nesting `depth` and returns its compact serialisation.
    mutating func token(depth: Int) throws(NotificationStoreError) -> [UInt8] {
        guard depth <= TokenDecomposition.maximumDepth else { throw Self.corrupt("tokens nest too deeply") }
        let header = try part(depth: depth)
        let payload = try part(depth: depth)
        let signature = try take(try varint())
        var token = Base64.encodedBytes(header, alphabet: .url)
        token.append(UInt8(ascii: "."))
        token += Base64.encodedBytes(payload, alphabet: .url)
        token.append(UInt8(ascii: "."))
        token += Base64.encodedBytes(signature, alphabet: .url)
        guard token.count <= limit else { throw Self.corrupt("a token grows beyond \(limit) bytes") }
        return token
    }

    /// Reads a part's segments up to its end tag and returns its bytes.
    private mutating func part(depth: Int) throws(NotificationStoreError) -> [UInt8] {
        var result: [UInt8] = []
        while true {
            switch try byte() {
            case TokenDecomposition.endTag:
                return result
            case TokenDecomposition.literalTag:
                result += try take(try varint())
            case TokenDecomposition.certificateTag:
                let index = try varint()
                guard index < certificates.count else { throw Self.corrupt("a certificate reference is out of range") }
                result += Base64.encodedBytes(certificates[index])
            case TokenDecomposition.tokenTag:
                result += try token(depth: depth + 1)
            default:
                throw Self.corrupt("the compact form holds an unknown segment")
            }
            guard result.count <= limit else { throw Self.corrupt("a token grows beyond \(limit) bytes") }
        }
    }
}
