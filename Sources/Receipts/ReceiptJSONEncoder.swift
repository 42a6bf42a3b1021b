import FoundationEssentials
import Internals
import JSON

/// The verifyReceipt-shaped JSON of receipts and records, written straight into bytes.
///
/// the tests keep the plain form of the same output (`AppReceipt.writeReferenceJSON(to:key:options:)`),
/// which tests compare this encoder with byte for byte. This one writes into one scratch buffer
/// that it copies into the `JSONWriter`'s output a block at a time:
///
/// - keys are static bytes (quotes and colon included), copied whole;
/// - numbers are written with a table of two-digit pairs;
/// - a date triplet reads its day from a cache holding, per day number, the `YYYY-MM-DD` text
///   and the America/Los_Angeles offset of that UTC day (with the second at which it changes on
///   the two days a year it does), so the calendar and the daylight saving rule run once per day,
///   not once per field; the time of day is three table lookups;
/// - strings without characters to escape are copied whole; unknown attribute values are
///   base64-encoded in place, read from the receipt's bytes.
///
/// It honours the writer's indentation, nesting and comma state exactly as `JSONWriter`'s own
/// methods do, and hands that state back when done.
struct ReceiptJSONEncoder: ~Copyable {
    /// Where bytes are written: the scratch block (writer mode) or the caller's memory (in place).
    var buffer: UnsafeMutablePointer<UInt8>
    var capacity: Int
    var count = 0
    /// Whether `buffer` was allocated here (and is freed here).
    var ownsBuffer: Bool
    /// Writer mode: the writer's output, taken over for the duration and given back by
    /// ``finish(into:)``; full scratch blocks are appended to it. In place: what did not fit.
    var sink: [UInt8]
    /// In place: the caller's memory proved too small and writing moved to `sink`.
    var spilled = false
    let indent: Int
    var level: Int
    var needsComma: Bool
    var days: DayCache

    static let blockSize = 16_384

    /// Continues `json`: writes through a 16 KiB block appended to the writer's output when full.
    init(continuing json: inout JSONWriter) {
        capacity = ReceiptJSONEncoder.blockSize
        buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        ownsBuffer = true
        sink = []
        swap(&sink, &json.output)
        indent = json.indent
        level = json.level
        needsComma = json.needsComma
        days = DayCache()
    }

    /// Writes into `memory` (for example a String's storage), at nesting level 0.
    init(inPlace memory: UnsafeMutableBufferPointer<UInt8>, indent: Int) {
        buffer = memory.baseAddress ?? UnsafeMutablePointer<UInt8>.allocate(capacity: 0)
        capacity = memory.baseAddress == nil ? 0 : memory.count
        ownsBuffer = memory.baseAddress == nil
        sink = []
        self.indent = indent
        level = 0
        needsComma = false
        days = DayCache()
    }

    deinit {
        if ownsBuffer { buffer.deallocate() }
    }

    /// Writer mode: hands the output, with what was written, and the nesting state back to `json`.
    consuming func finish(into json: inout JSONWriter) {
        flush()
        swap(&sink, &json.output)
        json.level = level
        json.needsComma = needsComma
    }

    /// In place: how many bytes were written into the memory, or nil when they did not fit (they
    /// are then in ``spilledBytes``).
    var inPlaceCount: Int? { spilled ? nil : count }

    /// In place, after a spill: everything written, in order.
    mutating func spilledBytes() -> [UInt8] {
        flush()
        return sink
    }

    /// Appends the block to `sink` and empties it.
    mutating func flush() {
        guard ownsBuffer || spilled, count > 0 else { return }
        sink.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count))
        count = 0
    }

    /// Room for `n` more bytes in the block.
    @inline(__always)
    mutating func reserve(_ n: Int) {
        if capacity &- count < n { makeRoom(n) }
    }

    @inline(never)
    mutating func makeRoom(_ n: Int) {
        if !ownsBuffer {
            // In place and out of room: keep what is written and continue in a block of our own.
            sink.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count))
            spilled = true
            ownsBuffer = true
            capacity = max(ReceiptJSONEncoder.blockSize, n)
            buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            count = 0
            return
        }
        flush()
        if n > capacity {
            buffer.deallocate()
            capacity = n
            buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        }
    }

    /// Writer mode: makes room in the output for what writing `r` adds, so it grows at most once.
    mutating func expect(_ r: AppReceipt, key: String?, options: ReceiptJSONOptions) {
        guard ownsBuffer && !spilled else { return }
        let bytes = ReceiptJSONEncoder.bound(r, key: key, options: options, indent: indent, level: level)
        sink.reserveCapacity(sink.count &+ count &+ bytes)
    }

    // MARK: Primitives (each reserves what it writes)

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        reserve(1)
        buffer[count] = value
        count &+= 1
    }

    @inline(__always)
    mutating func bytes(_ text: StaticString) {
        let n = text.utf8CodeUnitCount
        reserve(n)
        (buffer + count).update(from: text.utf8Start, count: n)
        count &+= n
    }

    @inline(__always)
    mutating func bytes(_ source: UnsafeRawBufferPointer) {
        guard let base = source.baseAddress, !source.isEmpty else { return }
        reserve(source.count)
        UnsafeMutableRawPointer(buffer + count).copyMemory(from: base, byteCount: source.count)
        count &+= source.count
    }

    /// `JSONWriter.beforeValue`: a comma after a sibling, then a new line at the current depth.
    @inline(__always)
    mutating func beforeValue() {
        if needsComma { byte(UInt8(ascii: ",")) }
        if level > 0 && indent > 0 { newline() }
    }

    @inline(never)
    mutating func newline() {
        let n = 1 &+ max(0, level) &* indent
        reserve(n)
        buffer[count] = 0x0A
        (buffer + count + 1).initialize(repeating: 0x20, count: n &- 1)
        count &+= n
    }

    /// `"key":` (a space after the colon when indenting); `key` holds the quotes and the colon.
    @inline(__always)
    mutating func key(_ key: StaticString) {
        beforeValue()
        bytes(key)
        if indent > 0 { byte(0x20) }
        needsComma = true
    }

    /// A key from text, escaped as JSONWriter escapes keys.
    mutating func key(text: String) {
        beforeValue()
        string(text)
        byte(UInt8(ascii: ":"))
        if indent > 0 { byte(0x20) }
        needsComma = true
    }

    mutating func beginObject() {
        beforeValue()
        byte(UInt8(ascii: "{"))
        level &+= 1
        needsComma = false
    }

    mutating func beginObject(_ name: StaticString) {
        key(name)
        byte(UInt8(ascii: "{"))
        level &+= 1
        needsComma = false
    }

    @inline(__always)
    mutating func beginArray(_ name: StaticString) {
        key(name)
        byte(UInt8(ascii: "["))
        level &+= 1
        needsComma = false
    }

    /// `JSONWriter.endObject`/`endArray`: a new line before the bracket unless the container is empty.
    mutating func end(_ bracket: UInt8) {
        level &-= 1
        if needsComma && indent > 0 { newline() }
        byte(bracket)
        needsComma = true
    }

    /// The digits of 0...99, two ASCII bytes each (a literal, so reading it needs no lazy
    /// initialisation check).
    static let pairText: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// The two ASCII digits of `value` (0...99), the first in the low byte.
    @inline(__always)
    static func pair(_ value: Int) -> UInt16 {
        UInt16(littleEndian: UnsafeRawPointer(pairText.utf8Start).loadUnaligned(fromByteOffset: value &* 2, as: UInt16.self))
    }

    /// Writes the decimal form of `value` (as `String(value)` does).
    @inline(__always)
    mutating func decimal(_ value: Int64) {
        reserve(20)
        if value < 0 {
            buffer[count] = UInt8(ascii: "-")
            count &+= 1
        }
        unsignedDecimal(value.magnitude)
    }

    mutating func unsignedDecimal(_ value: UInt64) {
        reserve(20)
        // Eight digits at a time in 32-bit arithmetic (shorter multiplications, and the pairs of a
        // block do not wait for each other).
        guard value >= 100_000_000 else { return smallDecimal(UInt32(truncatingIfNeeded: value)) }
        let high = value / 100_000_000
        let low = UInt32(truncatingIfNeeded: value &- high &* 100_000_000)
        if high < 100_000_000 {
            smallDecimal(UInt32(truncatingIfNeeded: high))
        } else {
            let top = high / 100_000_000  // at most 1844
            smallDecimal(UInt32(truncatingIfNeeded: top))
            eightDigits(UInt32(truncatingIfNeeded: high &- top &* 100_000_000))
        }
        eightDigits(low)
    }

    /// The decimal form of a number below 10^8 (room reserved by the caller).
    @inline(__always)
    mutating func smallDecimal(_ value: UInt32) {
        let digits = ReceiptJSONEncoder.smallDigitCount(value)
        var v = value
        var at = count &+ digits
        while v >= 100 {
            let next = v / 100
            at &-= 2
            UnsafeMutableRawPointer(buffer + at).storeBytes(
                of: Self.pair(Int(truncatingIfNeeded: v &- next &* 100)).littleEndian, as: UInt16.self)
            v = next
        }
        if v >= 10 {
            at &-= 2
            UnsafeMutableRawPointer(buffer + at).storeBytes(of: Self.pair(Int(truncatingIfNeeded: v)).littleEndian, as: UInt16.self)
        } else {
            at &-= 1
            buffer[at] = UInt8(truncatingIfNeeded: v) &+ 0x30
        }
        count &+= digits
    }

    /// Exactly eight digits of `value` (below 10^8), leading zeros included (room reserved by the caller).
    @inline(__always)
    mutating func eightDigits(_ value: UInt32) {
        let a = value / 10_000
        let b = value &- a &* 10_000
        let a1 = a / 100
        let b1 = b / 100
        var word = UInt64(Self.pair(Int(truncatingIfNeeded: a1)))
        word |= UInt64(Self.pair(Int(truncatingIfNeeded: a &- a1 &* 100))) << 16
        word |= UInt64(Self.pair(Int(truncatingIfNeeded: b1))) << 32
        word |= UInt64(Self.pair(Int(truncatingIfNeeded: b &- b1 &* 100))) << 48
        UnsafeMutableRawPointer(buffer + count).storeBytes(of: word.littleEndian, as: UInt64.self)
        count &+= 8
    }

    /// How many decimal digits `value` has (1 for 0).
    static func digitCount(_ value: UInt64) -> Int {
        if value < 100_000_000 { return smallDigitCount(UInt32(truncatingIfNeeded: value)) }
        if value < 10_000_000_000_000_000 { return 8 &+ smallDigitCount(UInt32(truncatingIfNeeded: value / 100_000_000)) }
        return 16 &+ smallDigitCount(UInt32(truncatingIfNeeded: value / 10_000_000_000_000_000))
    }

    /// How many decimal digits a number below 10^8 has (1 for 0), by comparisons.
    @inline(__always)
    static func smallDigitCount(_ v: UInt32) -> Int {
        v < 10_000
            ? (v < 100 ? (v < 10 ? 1 : 2) : (v < 1000 ? 3 : 4))
            : (v < 1_000_000 ? (v < 100_000 ? 5 : 6) : (v < 10_000_000 ? 7 : 8))
    }

    /// `"` + the decimal form + `"`: Apple's numbers-as-strings.
    mutating func quotedDecimal(_ value: Int64) {
        byte(0x22)
        decimal(value)
        byte(0x22)
    }

    /// A JSON string with JSONWriter's escapes: `\"`, `\\`, `\n`, `\r`, `\t`, `\u00XX` for other
    /// control characters; every other byte (UTF-8 included) as it is.
    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(UnsafeRawBufferPointer($0)) }
    }

    mutating func string(_ text: UnsafeRawBufferPointer) {
        reserve(text.count &+ 2)
        buffer[count] = 0x22
        count &+= 1
        if ReceiptJSONEncoder.needsNoEscape(text) {
            bytes(text)
        } else {
            for b in text { escaped(b) }
        }
        byte(0x22)
    }

    /// Whether no byte is below 0x20, `"` or `\`, eight bytes at a time.
    @inline(__always)
    static func needsNoEscape(_ text: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        var flags: UInt64 = 0
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        while i &+ 8 <= text.count {
            let w = text.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            // A byte is below 0x20, 0x22 or 0x5C exactly when one of these has its top bit set
            // while the byte itself has not (bytes ≥ 0x80 never need escapes).
            let control = w &- ones &* 0x20
            let quote = (w ^ (ones &* 0x22)) &- ones
            let backslash = (w ^ (ones &* 0x5C)) &- ones
            flags |= (control | quote | backslash) & ~w & high
            i &+= 8
        }
        while i < text.count {
            let b = text[i]
            if b < 0x20 || b == 0x22 || b == 0x5C { return false }
            i &+= 1
        }
        return flags == 0
    }

    mutating func escaped(_ b: UInt8) {
        switch b {
        case 0x22: bytes("\\\"")
        case 0x5C: bytes("\\\\")
        case 0x0A: bytes("\\n")
        case 0x0D: bytes("\\r")
        case 0x09: bytes("\\t")
        case 0..<0x20:
            bytes("\\u00")
            let hex: StaticString = "0123456789abcdef"
            byte(hex.utf8Start[Int(b >> 4)])
            byte(hex.utf8Start[Int(b & 15)])
        default: byte(b)
        }
    }

    /// Standard base64 with padding, as `Base64.encode` writes it.
    mutating func base64(_ value: ArraySlice<UInt8>) {
        let table: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        let t = table.utf8Start
        reserve((value.count &+ 2) / 3 &* 4 &+ 2)
        buffer[count] = 0x22
        count &+= 1
        value.withUnsafeBufferPointer { source in
            var i = 0
            let n = source.count
            var out = buffer + count
            while i &+ 3 <= n {
                let v = UInt32(source[i]) << 16 | UInt32(source[i &+ 1]) << 8 | UInt32(source[i &+ 2])
                out[0] = t[Int(v >> 18 & 63)]
                out[1] = t[Int(v >> 12 & 63)]
                out[2] = t[Int(v >> 6 & 63)]
                out[3] = t[Int(v & 63)]
                out += 4
                i &+= 3
            }
            if i < n {
                let two = i &+ 1 < n
                let v = UInt32(source[i]) << 16 | (two ? UInt32(source[i &+ 1]) << 8 : 0)
                out[0] = t[Int(v >> 18 & 63)]
                out[1] = t[Int(v >> 12 & 63)]
                out[2] = two ? t[Int(v >> 6 & 63)] : UInt8(ascii: "=")
                out[3] = UInt8(ascii: "=")
                out += 4
            }
            count = out - buffer
        }
        buffer[count] = 0x22
        count &+= 1
    }
}
