// The DER framing rules, written once. The general decoder (`ASN1RawReader.decodeElement` and the
// typed decoders), the reader's inline fast paths and the in-app record decoder in `Receipts` all call
// these functions, so a length form or an integer encoding is accepted or refused in one place.
//
// The `content`, `smallInteger` and `minimalInt64` shortcuts accept only a subset of DER (one-octet
// tags, lengths below 64 KiB, integers of at most eight octets) and return `nil` for everything
// else. `nil` never means "invalid": the caller then runs the general decoder, which applies every
// rule under the reader's `ASN1EncodingRules` and reports the error, if there is one. What a
// shortcut accepts, the general decoder accepts with the same result under both DER and BER.
//
// Every function reads `b[i]` only for `i < end`, and callers pass `end <= b.count` (the raw reader's
// invariant), so the unchecked subscripts stay in bounds.
//
// Visibility: like `ASN1RawReader`, these are `@_spi(RawParsing) public`, not `package`. The Swift
// 6.3 compiler does not inline `@inlinable package` (nor `@_alwaysEmitIntoClient package`)
// functions into other modules of the package, even with `@inline(__always)`; every call stays a
// call. Measured with callgrind, that made receipt parsing a third slower. SPI keeps them out of
// the documented API: only code that writes `@_spi(RawParsing) import ASN1` sees them.

/// The DER rules for lengths, tags and INTEGER encodings, as `@inlinable` primitives shared by every
/// decoder in the package.
@_spi(RawParsing) public enum DERFraming {
    /// Whether an INTEGER whose content starts with the octets `first`, `second` is not minimally
    /// encoded: its first nine bits are all zero or all one, so `first` only repeats the sign
    /// (X.690 8.3.2). DER refuses such encodings; BER skips the redundant octets.
    @inlinable @inline(__always)
    public static func isRedundantLeadingOctet(_ first: UInt8, before second: UInt8) -> Bool {
        (first == 0 && second & 0x80 == 0) || (first == 0xFF && second & 0x80 != 0)
    }

    /// Whether a long-form length of `octets` length octets with value `value` is the minimal DER
    /// encoding: the value needs the long form (at least 0x80) and its first length octet is not
    /// zero (X.690 10.1).
    @inlinable @inline(__always)
    public static func isMinimalLongFormLength(_ value: UInt64, octets: Int) -> Bool {
        value >= 0x80 && value >> (8 &* UInt64(truncatingIfNeeded: octets &- 1)) != 0
    }

    /// The content range of the element at `p` when its identifier is the single octet `tag` and
    /// its definite length is minimal DER in the short form or in one or two long-form octets, and
    /// the content fits before `end`; `nil` for anything else (decode it with the general decoder).
    @inlinable @inline(__always)
    public static func content(_ b: UnsafeRawBufferPointer, tag: UInt8, at p: Int, end: Int) -> Range<Int>? {
        guard p &+ 2 <= end, b[p] == tag else { return nil }
        let l0 = b[p &+ 1]
        let start: Int
        let length: Int
        if l0 < 0x80 {
            start = p &+ 2
            length = Int(l0)
        } else if l0 == 0x81, p &+ 3 <= end {
            start = p &+ 3
            length = Int(b[p &+ 2])
            guard isMinimalLongFormLength(UInt64(length), octets: 1) else { return nil }
        } else if l0 == 0x82, p &+ 4 <= end {
            start = p &+ 4
            length = Int(b[p &+ 2]) << 8 | Int(b[p &+ 3])
            guard isMinimalLongFormLength(UInt64(length), octets: 2) else { return nil }
        } else {
            return nil
        }
        guard length <= end &- start else { return nil }
        // start + length <= end and length >= 0: the bounds are ordered (no need to check again).
        return Range(uncheckedBounds: (start, start &+ length))
    }

    /// A minimal INTEGER of one or two content octets at `p` (identifier `02` included) ending by
    /// `end`: its value and the position after it; `nil` for anything else.
    @inlinable @inline(__always)
    public static func smallInteger(_ b: UnsafeRawBufferPointer, at p: Int, end: Int) -> (value: Int, end: Int)? {
        guard p &+ 3 <= end, b[p] == 0x02 else { return nil }
        let length = b[p &+ 1]
        if length == 1 { return (Int(Int8(bitPattern: b[p &+ 2])), p &+ 3) }
        guard length == 2, p &+ 4 <= end else { return nil }
        let high = b[p &+ 2]
        let low = b[p &+ 3]
        guard !isRedundantLeadingOctet(high, before: low) else { return nil }
        return (Int(Int16(bitPattern: UInt16(high) << 8 | UInt16(low))), p &+ 4)
    }

    /// The value of INTEGER content octets `range` when there are one to eight of them and they are
    /// minimal; `nil` for anything else (empty, longer, or with a redundant leading octet).
    @inlinable @inline(__always)
    public static func minimalInt64(_ b: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int64? {
        let start = range.lowerBound
        let count = range.upperBound &- start
        guard count >= 1, count <= 8 else { return nil }
        let first = b[start]
        if count == 1 { return Int64(Int8(bitPattern: first)) }
        guard !isRedundantLeadingOctet(first, before: b[start &+ 1]) else { return nil }
        var value: Int64 = first & 0x80 != 0 ? -1 : 0
        var i = start
        while i < range.upperBound {
            value = value &<< 8 | Int64(b[i])
            i &+= 1
        }
        return value
    }
}
