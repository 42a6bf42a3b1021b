import ReceiptVerification

/// The one reading of an input in the CLI (`verify`, `dump`): a token pasted in quotes or after
/// `Bearer ` unwrapped, then the format detected once (`SignedInput.detect`).
enum InputReading {
    /// The bytes as read (unwrapped when pasted) and what they are.
    static func read(_ raw: [UInt8]) -> (bytes: [UInt8], detected: Result<SignedInput, SignedInputError>) {
        let bytes = PastedToken.unwrapped(raw)
        do throws(SignedInputError) {
            return (bytes, .success(try SignedInput.detect(bytes)))
        } catch {
            return (bytes, .failure(error))
        }
    }
}

/// A JWS as people paste it: in double or single quotes (copied from JSON or a shell line) or
/// after `Bearer ` (copied from an Authorization header).
enum PastedToken {
    /// The compact JWS inside `bytes` when they are one wrapped that way (surrounding whitespace
    /// allowed); `bytes` unchanged otherwise, so every other input is read as it is.
    static func unwrapped(_ bytes: [UInt8]) -> [UInt8] {
        var text = trimmed(bytes[...])
        var changed = false
        for _ in 0..<2 {
            if let first = text.first, first == UInt8(ascii: "\"") || first == UInt8(ascii: "'"), text.count >= 2, text.last == first {
                text = trimmed(text.dropFirst().dropLast())
                changed = true
            }
            let bearer = Array("bearer".utf8)
            if text.count > bearer.count, zip(text, bearer).allSatisfy({ $0 | 0x20 == $1 }),
                isSpace(text[text.startIndex + bearer.count])
            {
                text = trimmed(text.dropFirst(bearer.count))
                changed = true
            }
        }
        let isToken = text.starts(with: Array("eyJ".utf8)) && !text.contains(where: { isSpace($0) || $0 == 0x22 || $0 == 0x27 })
        return changed && isToken ? Array(text) : bytes
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return bytes[bytes.startIndex..<bytes.startIndex]
        }
        return bytes[first...last]
    }
}
