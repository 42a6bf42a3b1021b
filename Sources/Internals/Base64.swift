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
        // Contiguous text (arrays, slices, UTF-8 strings) is decoded by the non-generic loop over
        // a buffer: the generic loop goes through witness tables byte by byte across modules and
        // was the largest cost of a verifyReceipt request.
        if let result = text.withContiguousStorageIfAvailable({ decodeResult($0, rules: rules) }) { return try result.get() }
        return try Array(text).withUnsafeBufferPointer { decodeResult($0, rules: rules) }.get()
    }

    /// ``decode(buffer:rules:)`` as a result (closures of `withContiguousStorageIfAvailable` cannot
    /// throw typed errors).
    private static func decodeResult(_ text: UnsafeBufferPointer<UInt8>, rules: Rules) -> Result<[UInt8], Failure> {
        do throws(Failure) {
            return .success(try decode(buffer: text, rules: rules))
        } catch {
            return .failure(error)
        }
    }

    /// The general decoder: every rule, every error with its offset, one character at a time.
    static func decodeLoop(_ text: UnsafeBufferPointer<UInt8>, rules: Rules) throws(Failure) -> [UInt8] {
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
        if let result = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0, alphabet: alphabet) }) { return result }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0, alphabet: alphabet) }
    }

    private static func encode(buffer bytes: UnsafeBufferPointer<UInt8>, alphabet: Alphabet) -> [UInt8] {
        let table = alphabet == .standard ? standardEncoding : urlEncoding
        let pads = alphabet == .standard
        let whole = bytes.count / 3
        let rest = bytes.count - whole * 3
        let length = whole * 4 + (rest == 0 ? 0 : pads ? 4 : rest + 1)
        // With capacity 0 the initialiser below writes the count of the shared empty-array
        // storage, which other threads read: a race ThreadSanitizer reports.
        guard length > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: length) { output, initialized in
            var out = 0
            var index = 0
            for _ in 0..<whole {
                let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                output[out] = table[Int(n >> 18 & 63)]
                output[out + 1] = table[Int(n >> 12 & 63)]
                output[out + 2] = table[Int(n >> 6 & 63)]
                output[out + 3] = table[Int(n & 63)]
                index += 3
                out += 4
            }
            if rest > 0 {
                let n = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
                output[out] = table[Int(n >> 18 & 63)]
                output[out + 1] = table[Int(n >> 12 & 63)]
                out += 2
                if rest == 2 {
                    output[out] = table[Int(n >> 6 & 63)]
                    out += 1
                } else if pads {
                    output[out] = UInt8(ascii: "=")
                    out += 1
                }
                if pads {
                    output[out] = UInt8(ascii: "=")
                    out += 1
                }
            }
            initialized = out
        }
    }

    /// Whether `bytes` look like standard base64 text: only alphabet, `=` and whitespace, at least
    /// 4 significant characters.
    package static func looksLikeBase64(_ bytes: some Collection<UInt8>) -> Bool {
        if let result = bytes.withContiguousStorageIfAvailable({ looksLikeBase64(buffer: $0) }) { return result }
        return Array(bytes).withUnsafeBufferPointer { looksLikeBase64(buffer: $0) }
    }

    private static func looksLikeBase64(buffer bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let table = standardTable
        var significant = 0
        for char in bytes {
            let value = table[Int(char)]
            if value < 64 || char == UInt8(ascii: "=") {
                significant += 1
            } else if value != whitespace {
                return false
            }
        }
        return significant >= 4
    }
}
