/// Base64 (RFC 4648, standard alphabet) as receipts travel: decoding skips ASCII whitespace and
/// accepts missing padding; anything else is an error, never ignored.
public enum Base64 {
    @usableFromInline static let invalid: UInt8 = 0xFF
    @usableFromInline static let whitespace: UInt8 = 0xFE

    @usableFromInline static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        for (value, char) in alphabet.enumerated() { table[Int(char)] = UInt8(value) }
        for char in [UInt8(ascii: " "), 0x09, 0x0A, 0x0D, 0x0B, 0x0C] { table[Int(char)] = whitespace }
        return table
    }()

    static let encodeTable = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Decodes base64 text. Whitespace anywhere is skipped; `=` padding is optional but, when
    /// present, must be correct and last.
    /// - Throws: ``ReceiptError/Code/invalidBase64`` with the offset of the first bad character.
    public static func decode(_ text: some Collection<UInt8>) throws(ReceiptError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.count / 4 * 3 + 3)
        var accumulator: UInt32 = 0
        var count = 0
        var padding = 0
        var offset = 0
        let table = decodeTable
        for char in text {
            defer { offset += 1 }
            let value = table[Int(char)]
            if value < 64 {
                guard padding == 0 else {
                    throw ReceiptError.make(.invalidBase64, offset, "data after '=' padding")
                }
                accumulator = accumulator << 6 | UInt32(value)
                count += 1
                if count == 4 {
                    output.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                    output.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                    output.append(UInt8(truncatingIfNeeded: accumulator))
                    accumulator = 0
                    count = 0
                }
            } else if value == whitespace {
                continue
            } else if char == UInt8(ascii: "=") {
                padding += 1
                guard count >= 2, count + padding <= 4 else {
                    throw ReceiptError.make(.invalidBase64, offset, "misplaced '=' padding")
                }
            } else {
                throw ReceiptError.make(.invalidBase64, offset, "byte 0x\(String(char, radix: 16)) is not base64")
            }
        }
        switch count {
        case 0:
            break
        case 1:
            throw ReceiptError.make(.invalidBase64, offset, "base64 text ends with a single dangling character")
        case 2:
            guard padding == 0 || padding == 2 else { throw ReceiptError.make(.invalidBase64, offset, "bad padding") }
            output.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        default:
            guard padding == 0 || padding == 1 else { throw ReceiptError.make(.invalidBase64, offset, "bad padding") }
            output.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            output.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        }
        return output
    }

    /// Encodes bytes as base64 with padding and no line breaks.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next()
            let b2 = iterator.next()
            let n = UInt32(b0) << 16 | UInt32(b1 ?? 0) << 8 | UInt32(b2 ?? 0)
            output.append(encodeTable[Int(n >> 18 & 63)])
            output.append(encodeTable[Int(n >> 12 & 63)])
            output.append(b1 == nil ? UInt8(ascii: "=") : encodeTable[Int(n >> 6 & 63)])
            output.append(b2 == nil ? UInt8(ascii: "=") : encodeTable[Int(n & 63)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Whether `bytes` look like base64 text: only alphabet, `=` and whitespace, at least 4 characters.
    public static func looksLikeBase64(_ bytes: some Collection<UInt8>) -> Bool {
        var significant = 0
        for char in bytes {
            let value = decodeTable[Int(char)]
            if value < 64 || char == UInt8(ascii: "=") {
                significant += 1
            } else if value != whitespace {
                return false
            }
        }
        return significant >= 4
    }
}
