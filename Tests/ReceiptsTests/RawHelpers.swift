@_spi(RawParsing) import ASN1

enum ASN1RawReaderForTests {
    /// A reader over the children of the payload SET.
    static func set(_ raw: UnsafeRawBufferPointer) throws -> ASN1RawReader {
        var top = ASN1RawReader(buffer: raw, rules: .der)
        return try top.readConstructed(.set)
    }
}
