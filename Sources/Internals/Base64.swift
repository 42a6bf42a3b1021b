/// Base64 (RFC 4648) in the two alphabets the package meets: the standard one (receipts,
/// verifyReceipt bodies, certificates in a JWS header) and the URL-safe one (JWS segments).
///
/// Decoding is table-driven and never ignores a character silently: whitespace is skipped only
/// when the caller allows it, padding is optional or forbidden as the caller says, and in strict
/// mode the unused low bits of the last character must be zero, so every byte string has exactly
/// one accepted encoding.
package enum Base64 {
    /// Which characters encode the values 62 and 63.
    package enum Alphabet: Sendable {
        /// `+` and `/` (RFC 4648 §4).
        case standard
        /// `-` and `_` (RFC 4648 §5), used by JWS.
        case url
    }

    /// How decoding treats text around the alphabet.
    package struct Rules: Sendable {
        /// The alphabet.
        package var alphabet: Alphabet
        /// Skip ASCII whitespace anywhere (receipts travel with line breaks).
        package var skipsWhitespace: Bool
        /// Accept `=` padding (when present it must be correct and last).
        package var allowsPadding: Bool
        /// Reject a last character whose unused low bits are not zero (a second spelling of the
        /// same bytes).
        package var requiresCanonicalTail: Bool

        /// Receipts and verifyReceipt bodies: standard alphabet, whitespace skipped, padding optional.
        package static let lenient = Rules(alphabet: .standard, skipsWhitespace: true, allowsPadding: true, requiresCanonicalTail: false)
        /// Certificates in a JWS `x5c` header: standard alphabet, padding allowed, nothing else.
        package static let strictStandard = Rules(
            alphabet: .standard, skipsWhitespace: false, allowsPadding: true, requiresCanonicalTail: true)
        /// JWS segments: URL-safe alphabet, no padding, no whitespace, canonical last character.
        package static let strictURL = Rules(alphabet: .url, skipsWhitespace: false, allowsPadding: false, requiresCanonicalTail: true)
    }

    /// Why text is not base64 under the rules: the offset of the offending character and a reason.
    package struct Failure: Error, Sendable, Equatable {
        /// Offset of the offending character in the text.
        package let offset: Int
        /// A sentence for people.
        package let reason: String
    }

    @usableFromInline static let invalid: UInt8 = 0xFF
    @usableFromInline static let whitespace: UInt8 = 0xFE

    private static func table(_ last2: String) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        let alphabet = Array(("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + last2).utf8)
        for (value, char) in alphabet.enumerated() { table[Int(char)] = UInt8(value) }
        for char in [UInt8(ascii: " "), 0x09, 0x0A, 0x0D, 0x0B, 0x0C] { table[Int(char)] = whitespace }
        return table
    }

    private static let standardTable = table("+/")
    private static let urlTable = table("-_")
    private static let standardEncoding = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlEncoding = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Decodes base64 text under `rules` (lenient receipt rules by default).
    /// - Throws: ``Failure`` with the offset of the first character that breaks the rules.
    package static func decode(_ text: some Collection<UInt8>, rules: Rules = .lenient) throws(Failure) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.count / 4 * 3 + 3)
        var accumulator: UInt32 = 0
        var count = 0
        var padding = 0
        var offset = 0
        var lastSignificant = 0
        let table = rules.alphabet == .standard ? standardTable : urlTable
        for char in text {
            defer { offset += 1 }
            let value = table[Int(char)]
            if value < 64 {
                guard padding == 0 else { throw Failure(offset: offset, reason: "data after '=' padding") }
                lastSignificant = offset
                accumulator = accumulator << 6 | UInt32(value)
                count += 1
                if count == 4 {
                    output.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                    output.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                    output.append(UInt8(truncatingIfNeeded: accumulator))
                    accumulator = 0
                    count = 0
                }
            } else if value == whitespace && rules.skipsWhitespace {
                continue
            } else if char == UInt8(ascii: "=") && rules.allowsPadding {
                padding += 1
                guard count >= 2, count + padding <= 4 else { throw Failure(offset: offset, reason: "misplaced '=' padding") }
            } else if char == UInt8(ascii: "=") {
                throw Failure(offset: offset, reason: "'=' padding is not allowed here")
            } else {
                throw Failure(offset: offset, reason: "byte 0x\(String(char, radix: 16)) is not in the base64 alphabet")
            }
        }
        switch count {
        case 0:
            break
        case 1:
            throw Failure(offset: offset, reason: "base64 text ends with a single dangling character")
        case 2:
            guard padding == 0 || padding == 2 else { throw Failure(offset: offset, reason: "bad padding") }
            guard !rules.requiresCanonicalTail || accumulator & 0xF == 0 else {
                throw Failure(offset: lastSignificant, reason: "the last character has non-zero unused bits")
            }
            output.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        default:
            guard padding == 0 || padding == 1 else { throw Failure(offset: offset, reason: "bad padding") }
            guard !rules.requiresCanonicalTail || accumulator & 0x3 == 0 else {
                throw Failure(offset: lastSignificant, reason: "the last character has non-zero unused bits")
            }
            output.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            output.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        }
        return output
    }

    /// Encodes bytes without line breaks: the standard alphabet with padding, or the URL-safe
    /// alphabet without it (as JWS writes it).
    package static func encode(_ bytes: some Collection<UInt8>, alphabet: Alphabet = .standard) -> String {
        String(decoding: encodedBytes(bytes, alphabet: alphabet), as: UTF8.self)
    }

    /// ``encode(_:alphabet:)`` as UTF-8 bytes.
    package static func encodedBytes(_ bytes: some Collection<UInt8>, alphabet: Alphabet = .standard) -> [UInt8] {
        let table = alphabet == .standard ? standardEncoding : urlEncoding
        let pads = alphabet == .standard
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next()
            let b2 = iterator.next()
            let n = UInt32(b0) << 16 | UInt32(b1 ?? 0) << 8 | UInt32(b2 ?? 0)
            output.append(table[Int(n >> 18 & 63)])
            output.append(table[Int(n >> 12 & 63)])
            if b1 != nil { output.append(table[Int(n >> 6 & 63)]) } else if pads { output.append(UInt8(ascii: "=")) }
            if b2 != nil { output.append(table[Int(n & 63)]) } else if pads { output.append(UInt8(ascii: "=")) }
        }
        return output
    }

    /// Whether `bytes` look like standard base64 text: only alphabet, `=` and whitespace, at least
    /// 4 significant characters.
    package static func looksLikeBase64(_ bytes: some Collection<UInt8>) -> Bool {
        var significant = 0
        for char in bytes {
            let value = standardTable[Int(char)]
            if value < 64 || char == UInt8(ascii: "=") {
                significant += 1
            } else if value != whitespace {
                return false
            }
        }
        return significant >= 4
    }
}
