/// The one UTF-8 well-formedness rule of the package (RFC 3629, Unicode's Table 3-7): shortest
/// forms only, no surrogates, nothing past U+10FFFF. The ASN.1 reader (UTF8String) and the JSON
/// reader both call it.
package enum UTF8Sequence {
    /// Why the bytes at a position are not one well-formed multi-byte sequence.
    package enum Problem: Error, Sendable, Equatable {
        /// The first byte cannot start a sequence (a continuation byte, 0xC0, 0xC1, 0xF5…0xFF).
        case invalidLead
        /// The sequence runs past the end of the buffer.
        case truncated
        /// A following byte is not a valid continuation (overlong, surrogate or too large).
        case invalidContinuation
    }

    /// The length (2 to 4) of the well-formed sequence whose first byte, at `i`, is ≥ 0x80, or
    /// why there is none. `i` must be an index of `bytes`.
    @inline(__always)
    package static func length(_ bytes: UnsafeRawBufferPointer, at i: Int) -> Result<Int, Problem> {
        let b0 = bytes[i]
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        let length: Int
        switch b0 {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: return .failure(.invalidLead)
        }
        guard bytes.count - i >= length else { return .failure(.truncated) }
        let b1 = bytes[i + 1]
        guard b1 >= low && b1 <= high else { return .failure(.invalidContinuation) }
        var k = 2
        while k < length {
            guard bytes[i + k] & 0xC0 == 0x80 else { return .failure(.invalidContinuation) }
            k += 1
        }
        return .success(length)
    }

    /// Whether every byte sequence in `bytes` is well-formed UTF-8.
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let n = bytes.count
        while i < n {
            if bytes[i] < 0x80 {
                i += 1
                continue
            }
            guard case .success(let length) = length(bytes, at: i) else { return false }
            i += length
        }
        return true
    }
}
