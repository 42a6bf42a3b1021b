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
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var count = 0
    /// Whether `buffer` was allocated here (and is freed here).
    private var ownsBuffer: Bool
    /// Writer mode: the writer's output, taken over for the duration and given back by
    /// ``finish(into:)``; full scratch blocks are appended to it. In place: what did not fit.
    private var sink: [UInt8]
    /// In place: the caller's memory proved too small and writing moved to `sink`.
    private var spilled = false
    private let indent: Int
    private var level: Int
    private var needsComma: Bool
    private var days: DayCache

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
    private mutating func flush() {
        guard ownsBuffer || spilled, count > 0 else { return }
        sink.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count))
        count = 0
    }

    /// Room for `n` more bytes in the block.
    @inline(__always)
    private mutating func reserve(_ n: Int) {
        if capacity &- count < n { makeRoom(n) }
    }

    @inline(never)
    private mutating func makeRoom(_ n: Int) {
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
    private mutating func byte(_ value: UInt8) {
        reserve(1)
        buffer[count] = value
        count &+= 1
    }

    @inline(__always)
    private mutating func bytes(_ text: StaticString) {
        let n = text.utf8CodeUnitCount
        reserve(n)
        (buffer + count).update(from: text.utf8Start, count: n)
        count &+= n
    }

    @inline(__always)
    private mutating func bytes(_ source: UnsafeRawBufferPointer) {
        guard let base = source.baseAddress, !source.isEmpty else { return }
        reserve(source.count)
        UnsafeMutableRawPointer(buffer + count).copyMemory(from: base, byteCount: source.count)
        count &+= source.count
    }

    /// `JSONWriter.beforeValue`: a comma after a sibling, then a new line at the current depth.
    @inline(__always)
    private mutating func beforeValue() {
        if needsComma { byte(UInt8(ascii: ",")) }
        if level > 0 && indent > 0 { newline() }
    }

    @inline(never)
    private mutating func newline() {
        let n = 1 &+ max(0, level) &* indent
        reserve(n)
        buffer[count] = 0x0A
        (buffer + count + 1).initialize(repeating: 0x20, count: n &- 1)
        count &+= n
    }

    /// `"key":` (a space after the colon when indenting); `key` holds the quotes and the colon.
    @inline(__always)
    private mutating func key(_ key: StaticString) {
        beforeValue()
        bytes(key)
        if indent > 0 { byte(0x20) }
        needsComma = true
    }

    /// A key from text, escaped as JSONWriter escapes keys.
    private mutating func key(text: String) {
        beforeValue()
        string(text)
        byte(UInt8(ascii: ":"))
        if indent > 0 { byte(0x20) }
        needsComma = true
    }

    private mutating func beginObject() {
        beforeValue()
        byte(UInt8(ascii: "{"))
        level &+= 1
        needsComma = false
    }

    private mutating func beginObject(_ name: StaticString) {
        key(name)
        byte(UInt8(ascii: "{"))
        level &+= 1
        needsComma = false
    }

    private mutating func beginArray(_ name: StaticString) {
        key(name)
        byte(UInt8(ascii: "["))
        level &+= 1
        needsComma = false
    }

    /// `JSONWriter.endObject`/`endArray`: a new line before the bracket unless the container is empty.
    private mutating func end(_ bracket: UInt8) {
        level &-= 1
        if needsComma && indent > 0 { newline() }
        byte(bracket)
        needsComma = true
    }

    /// The digits of 0...99, two ASCII bytes each (a literal, so reading it needs no lazy
    /// initialisation check).
    private static let pairText: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// The two ASCII digits of `value` (0...99), the first in the low byte.
    @inline(__always)
    private static func pair(_ value: Int) -> UInt16 {
        UInt16(littleEndian: UnsafeRawPointer(pairText.utf8Start).loadUnaligned(fromByteOffset: value &* 2, as: UInt16.self))
    }

    /// Writes the decimal form of `value` (as `String(value)` does).
    @inline(__always)
    private mutating func decimal(_ value: Int64) {
        reserve(20)
        if value < 0 {
            buffer[count] = UInt8(ascii: "-")
            count &+= 1
        }
        unsignedDecimal(value.magnitude)
    }

    private mutating func unsignedDecimal(_ value: UInt64) {
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
    private mutating func smallDecimal(_ value: UInt32) {
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
    private mutating func eightDigits(_ value: UInt32) {
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
    private mutating func quotedDecimal(_ value: Int64) {
        byte(0x22)
        decimal(value)
        byte(0x22)
    }

    /// A JSON string with JSONWriter's escapes: `\"`, `\\`, `\n`, `\r`, `\t`, `\u00XX` for other
    /// control characters; every other byte (UTF-8 included) as it is.
    private mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(UnsafeRawBufferPointer($0)) }
    }

    private mutating func string(_ text: UnsafeRawBufferPointer) {
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

    private mutating func escaped(_ b: UInt8) {
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
    private mutating func base64(_ value: ArraySlice<UInt8>) {
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

    // MARK: Dates

    /// A date triplet: `key` (UTC, `YYYY-MM-DD HH:MM:SS Etc/GMT`), `key_ms`, `key_pst`
    /// (America/Los_Angeles), as the tests' plain writer (`JSONWriter.dateTriplet`) writes it.
    private mutating func dateTriplet(_ keys: DateKeys, milliseconds ms: Int64) {
        let seconds = ReceiptDate.floorDiv(ms, 1000)
        let day = ReceiptDate.floorDiv(seconds, 86_400)
        let secondOfDay = Int(truncatingIfNeeded: seconds &- day &* 86_400)
        let utc = days.entry(day)
        key(keys.utc)
        wallClock(utc, secondOfDay, suffix: " Etc/GMT\"")
        key(keys.ms)
        quotedDecimal(ms)
        key(keys.pacific)
        let offset = secondOfDay < Int(utc.switchSecond) ? Int(utc.offsetBefore) : Int(utc.offsetAfter)
        var local = secondOfDay &+ offset
        var localDay = day
        if local < 0 {
            local &+= 86_400
            localDay &-= 1
        }
        wallClock(localDay == day ? utc : days.entry(localDay), local, suffix: " America/Los_Angeles\"")
    }

    /// `"YYYY-MM-DD HH:MM:SS` + `suffix` for a day and a second of that day.
    @inline(__always)
    private mutating func wallClock(_ day: DayCache.Entry, _ second: Int, suffix: StaticString) {
        reserve(32 &+ suffix.utf8CodeUnitCount)
        buffer[count] = 0x22
        count &+= 1
        if day.textLength == 10 {
            let at = UnsafeMutableRawPointer(buffer + count)
            at.storeBytes(of: day.text.littleEndian, as: UInt64.self)
            at.storeBytes(of: day.textTail.littleEndian, toByteOffset: 8, as: UInt16.self)
            count &+= 10
        } else {
            // Years outside 0...9999: JSONWriter's form (a signed year of any width).
            let (y, m, d) = CivilCalendar.date(daysSince1970: day.day)
            decimal(Int64(y))
            byte(UInt8(ascii: "-"))
            twoDigits(m)
            byte(UInt8(ascii: "-"))
            twoDigits(d)
        }
        reserve(9)
        let hours = second / 3600
        let minutes = second / 60 % 60
        let seconds = Self.pair(second % 60)
        var time = UInt64(0x20)  // ' '
        time |= UInt64(Self.pair(hours)) << 8
        time |= UInt64(0x3A) << 24
        time |= UInt64(Self.pair(minutes)) << 32
        time |= UInt64(0x3A) << 48
        time |= UInt64(seconds & 0xFF) << 56
        let at = UnsafeMutableRawPointer(buffer + count)
        at.storeBytes(of: time.littleEndian, as: UInt64.self)
        at.storeBytes(of: UInt8(truncatingIfNeeded: seconds >> 8), toByteOffset: 8, as: UInt8.self)
        count &+= 9
        bytes(suffix)
    }

    @inline(__always)
    private mutating func twoDigits(_ value: Int) {
        reserve(2)
        UnsafeMutableRawPointer(buffer + count).storeBytes(of: Self.pair(value).littleEndian, as: UInt16.self)
        count &+= 2
    }

    /// The three keys of a date triplet, quotes and colons included.
    struct DateKeys {
        let utc: StaticString
        let ms: StaticString
        let pacific: StaticString

        static let purchase = DateKeys(
            utc: "\"purchase_date\":", ms: "\"purchase_date_ms\":", pacific: "\"purchase_date_pst\":")
        static let originalPurchase = DateKeys(
            utc: "\"original_purchase_date\":", ms: "\"original_purchase_date_ms\":", pacific: "\"original_purchase_date_pst\":")
        static let expires = DateKeys(utc: "\"expires_date\":", ms: "\"expires_date_ms\":", pacific: "\"expires_date_pst\":")
        static let cancellation = DateKeys(
            utc: "\"cancellation_date\":", ms: "\"cancellation_date_ms\":", pacific: "\"cancellation_date_pst\":")
        static let receiptCreation = DateKeys(
            utc: "\"receipt_creation_date\":", ms: "\"receipt_creation_date_ms\":", pacific: "\"receipt_creation_date_pst\":")
        static let request = DateKeys(utc: "\"request_date\":", ms: "\"request_date_ms\":", pacific: "\"request_date_pst\":")
        static let expiration = DateKeys(
            utc: "\"expiration_date\":", ms: "\"expiration_date_ms\":", pacific: "\"expiration_date_pst\":")
        static let undocumented8 = DateKeys(
            utc: "\"undocumented_date_8\":", ms: "\"undocumented_date_8_ms\":", pacific: "\"undocumented_date_8_pst\":")
    }

    private mutating func dateTriplet(_ keys: DateKeys, _ date: Date?) {
        guard let date else { return }
        dateTriplet(keys, milliseconds: ReceiptDate.milliseconds(date))
    }

    // MARK: Receipt-only fields

    private mutating func attributeVersions(_ versions: [Int: Int]) {
        guard !versions.isEmpty else { return }
        beginObject("\"attribute_versions\":")
        for (type, version) in versions.sorted(by: { $0.key < $1.key }) {
            key(text: String(type))
            decimal(Int64(version))
        }
        end(UInt8(ascii: "}"))
    }

    /// `empty_date_attributes`: the set bits of `mask`, bit n naming type `base + n`, ascending.
    private mutating func emptyDates(_ mask: UInt64, base: Int) {
        guard mask != 0 else { return }
        beginArray("\"empty_date_attributes\":")
        var rest = mask
        while rest != 0 {
            let bit = rest.trailingZeroBitCount
            rest &= rest &- 1
            beforeValue()
            decimal(Int64(base &+ bit))
            needsComma = true
        }
        end(UInt8(ascii: "]"))
    }

    private mutating func unknownAttributes(_ unknown: UnknownAttributes) {
        guard !unknown.isEmpty else { return }
        beginArray("\"unknown_attributes\":")
        unknown.visit { type, version, value in
            beginObject()
            key("\"type\":")
            decimal(Int64(type))
            key("\"version\":")
            decimal(Int64(version))
            key("\"value\":")
            base64(value)
            end(UInt8(ascii: "}"))
        }
        end(UInt8(ascii: "]"))
    }

    // MARK: Records and receipts

    /// One `in_app` object, as the tests' plain writer (`InAppPurchase.writeReferenceJSON`) writes it.
    mutating func write(_ p: InAppPurchase, options: ReceiptJSONOptions) {
        beginObject()
        let present = p.present
        // The box, read only for the fields that are in it (most records have none).
        let rare = p.rare?.fields
        if present.contains(.quantity) {
            key("\"quantity\":")
            quotedDecimal(present.contains(.quantityInRare) ? rare?.quantity ?? 0 : Int64(p.quantityValue))
        }
        if let product = p.storedProductIdentifier {
            key("\"product_id\":")
            string(product)
        }
        identifier("\"transaction_id\":", p, .transactionID, .transactionIDText, p.transactionNumber, rare?.transactionText)
        identifier(
            "\"original_transaction_id\":", p, .originalTransactionID, .originalTransactionIDText, p.originalTransactionNumber,
            rare?.originalTransactionText)
        if present.contains(.purchaseDate) { dateTriplet(.purchase, milliseconds: p.purchaseMS) }
        if present.contains(.originalPurchaseDate) { dateTriplet(.originalPurchase, milliseconds: p.originalPurchaseMS) }
        if present.contains(.expiresDate) { dateTriplet(.expires, milliseconds: p.expiresMS) }
        if present.contains(.webOrderLineItemID) {
            key("\"web_order_line_item_id\":")
            quotedDecimal(p.webOrderLineItemIDValue)
        }
        if present.contains(.trial) {
            key("\"is_trial_period\":")
            bytes(present.contains(.trialValue) ? "\"true\"" : "\"false\"")
        }
        if present.contains(.intro) {
            key("\"is_in_intro_offer_period\":")
            bytes(present.contains(.introValue) ? "\"true\"" : "\"false\"")
        }
        if present.contains(.cancellationDate) { dateTriplet(.cancellation, milliseconds: rare?.cancellationMS ?? 0) }
        if present.contains(.cancellationReason) {
            key("\"cancellation_reason\":")
            quotedDecimal(rare?.cancellationReason ?? 0)
        }
        if let offer = rare?.promotionalOfferIdentifier {
            key("\"promotional_offer_id\":")
            string(offer)
        }
        if options.includeReceiptOnlyFields {
            if present.contains(.productType) {
                key("\"product_type\":")
                quotedDecimal(present.contains(.productTypeInRare) ? rare?.productType ?? 0 : Int64(p.productTypeValue))
            }
            if present.contains(.undocumented1722) {
                key("\"undocumented_integer_1722\":")
                quotedDecimal(present.contains(.undocumented1722InRare) ? rare?.undocumented1722 ?? 0 : Int64(p.undocumented1722Value))
            }
            if let versions = rare?.attributeVersions { attributeVersions(versions) }
            emptyDates(UInt64(p.emptyDateMask), base: 1701)
            unknownAttributes(p.unknown)
        }
        end(UInt8(ascii: "}"))
    }

    private mutating func identifier(
        _ name: StaticString, _ p: InAppPurchase, _ bit: InAppPurchase.Present, _ textBit: InAppPurchase.Present, _ number: UInt64,
        _ text: String?
    ) {
        guard p.present.contains(bit) else { return }
        key(name)
        if p.present.contains(textBit) {
            string(text ?? "")
        } else {
            byte(0x22)
            unsignedDecimal(number)
            byte(0x22)
        }
    }

    /// The `receipt` object, as the tests' plain writer (`AppReceipt.writeReferenceJSON`) writes it.
    mutating func write(_ r: AppReceipt, key name: String?, options: ReceiptJSONOptions) {
        if let name {
            key(text: name)
            byte(UInt8(ascii: "{"))
            level &+= 1
            needsComma = false
        } else {
            beginObject()
        }
        let f = r.box.fields
        if let receiptType = f.receiptType {
            key("\"receipt_type\":")
            string(receiptType)
        }
        if let appItemID = f.appItemID {
            key("\"adam_id\":")
            decimal(appItemID)
            key("\"app_item_id\":")
            decimal(appItemID)
        }
        if let bundleIdentifier = f.bundleIdentifier {
            key("\"bundle_id\":")
            string(bundleIdentifier)
        }
        if let appVersion = f.appVersion {
            key("\"application_version\":")
            string(appVersion)
        }
        if let downloadID = f.downloadID {
            key("\"download_id\":")
            decimal(downloadID)
        }
        if let versionExternalIdentifier = f.versionExternalIdentifier {
            key("\"version_external_identifier\":")
            decimal(versionExternalIdentifier)
        }
        dateTriplet(.receiptCreation, f.creationDate)
        dateTriplet(.request, options.requestDate)
        dateTriplet(.originalPurchase, f.originalPurchaseDate)
        if let originalAppVersion = f.originalAppVersion {
            key("\"original_application_version\":")
            string(originalAppVersion)
        }
        dateTriplet(.expiration, f.expirationDate)
        if options.includeReceiptOnlyFields {
            if let opaqueValue = f.opaqueValue {
                key("\"opaque_value\":")
                base64(opaqueValue[...])
            }
            if let sha1Hash = f.sha1Hash {
                key("\"sha1_hash\":")
                base64(sha1Hash[...])
            }
            if let data = f.bundleIdentifierData, data != AppReceipt.canonicalBundleData(f.bundleIdentifier) {
                key("\"bundle_id_data\":")
                base64(data[...])
            }
            if let ageRating = f.ageRating {
                key("\"age_rating\":")
                string(ageRating)
            }
            dateTriplet(.undocumented8, f.undocumentedDate8)
            if let value = f.undocumentedInteger13 {
                key("\"undocumented_integer_13\":")
                decimal(value)
            }
            if let value = f.undocumentedInteger25 {
                key("\"undocumented_integer_25\":")
                decimal(value)
            }
            attributeVersions(f.attributeVersions)
            emptyDates(f.emptyDateMask, base: 0)
            unknownAttributes(f.unknown)
        }
        beginArray("\"in_app\":")
        f.inAppPurchases.withUnsafeBufferPointer { records in
            for index in records.indices { write(records[index], options: options) }
        }
        end(UInt8(ascii: "]"))
        end(UInt8(ascii: "}"))
    }

    // MARK: Size bounds

    /// At least the bytes ``write(_:options:)`` writes for `p` at the current nesting level (a
    /// few per value more), so `jsonText` can write in place; never less, or writing spills to a
    /// block of its own (correct, only slower).
    static func bound(_ p: InAppPurchase, options: ReceiptJSONOptions, indent: Int, level: Int) -> Int {
        // Per key or element: a comma, a new line with its indentation (records nest at most five
        // levels below here), a space after the colon.
        let item = 2 &+ (indent > 0 ? 2 &+ (max(0, level) &+ 6) &* indent : 0)
        let present = p.present
        var keys = 2  // the braces
        var bytes = 0
        @inline(__always) func field(_ key: Int, _ value: Int) {
            keys &+= 1
            bytes &+= key &+ value
        }
        if present.contains(.quantity) { field(11, 22) }
        if let product = p.storedProductIdentifier { field(12, Self.stringBound(product)) }
        let rare = p.rare?.fields ?? InAppPurchase.RareFields()
        if present.contains(.transactionID) { field(17, rare.transactionText.map(Self.stringBound) ?? 22) }
        if present.contains(.originalTransactionID) { field(26, rare.originalTransactionText.map(Self.stringBound) ?? 22) }
        @inline(__always) func date(_ bit: InAppPurchase.Present, _ ms: Int64) {
            guard present.contains(bit) else { return }
            keys &+= 3
            bytes &+= Self.dateBound(ms, keys: 3 &* 30 &+ 7)
        }
        date(.purchaseDate, p.purchaseMS)
        date(.originalPurchaseDate, p.originalPurchaseMS)
        date(.expiresDate, p.expiresMS)
        date(.cancellationDate, rare.cancellationMS)
        if present.contains(.webOrderLineItemID) { field(25, 22) }
        if present.contains(.trial) { field(18, 7) }
        if present.contains(.intro) { field(27, 7) }
        if present.contains(.cancellationReason) { field(22, 22) }
        if let offer = rare.promotionalOfferIdentifier { field(23, Self.stringBound(offer)) }
        if options.includeReceiptOnlyFields {
            if present.contains(.productType) { field(15, 22) }
            if present.contains(.undocumented1722) { field(28, 22) }
            if !rare.attributeVersions.isEmpty {
                field(21, 0)
                keys &+= 1 &+ rare.attributeVersions.count
                bytes &+= rare.attributeVersions.count &* 46
            }
            if p.emptyDateMask != 0 {
                field(24, 0)
                keys &+= 1 &+ p.emptyDateMask.nonzeroBitCount
                bytes &+= p.emptyDateMask.nonzeroBitCount &* 20
            }
            if !p.unknown.isEmpty {
                field(21, 0)
                let (attributes, valueBytes) = p.unknownSizes
                keys &+= 1 &+ 5 &* attributes
                bytes &+= attributes &* (26 &+ 40 &+ 2 &+ 4) &+ valueBytes / 3 &* 4 &+ 4
            }
        }
        return bytes &+ keys &* item
    }

    /// At least the bytes of ``write(_:key:options:)`` for `r` at the current nesting level.
    static func bound(_ r: AppReceipt, key name: String?, options: ReceiptJSONOptions, indent: Int, level: Int) -> Int {
        let f = r.box.fields
        let item = 2 &+ (indent > 0 ? 2 &+ (max(0, level) &+ 6) &* indent : 0)
        var bytes = 64 &+ (name.map(Self.stringBound) ?? 0) &+ 8 &* item
        for text in [f.receiptType, f.bundleIdentifier, f.appVersion, f.originalAppVersion, f.ageRating] {
            if let text { bytes &+= 32 &+ Self.stringBound(text) &+ item }
        }
        bytes &+= 6 &* (32 &+ 22 &+ item)  // numbers
        for date in [f.creationDate, options.requestDate, f.originalPurchaseDate, f.expirationDate, f.undocumentedDate8] {
            if let date { bytes &+= Self.dateBound(ReceiptDate.milliseconds(date), keys: 3 &* 32 &+ 7) &+ 3 &* item }
        }
        for data in [f.opaqueValue, f.sha1Hash, f.bundleIdentifierData] {
            if let data { bytes &+= 32 &+ (data.count &+ 2) / 3 &* 4 &+ 2 &+ item }
        }
        bytes &+= f.attributeVersions.count &* (46 &+ item) &+ 64 &* (f.emptyDateMask.nonzeroBitCount &+ 2) &* item / 2
        bytes &+= 32 &+ 2 &* item
        let (attributes, valueBytes) = f.unknown.sizes
        bytes &+= attributes &* (5 &* item &+ 26 &+ 40 &+ 2 &+ 4) &+ valueBytes / 3 &* 4 &+ 4
        f.inAppPurchases.withUnsafeBufferPointer { records in
            for index in records.indices { bytes &+= bound(records[index], options: options, indent: indent, level: level) }
        }
        return bytes
    }

    /// A quoted string with every byte escaped at worst (`\u00XX`).
    static func stringBound(_ text: String) -> Int { 2 &+ 6 &* text.utf8.count }

    /// A date triplet: its keys (`keys`) and values; the date texts have 10 characters for the
    /// years 0001–9999 and at most 27 otherwise (a signed year of up to 20 digits).
    static func dateBound(_ ms: Int64, keys: Int) -> Int {
        let day = ms >= -62_135_596_800_000 && ms <= 253_402_300_799_999 ? 10 : 27
        return keys &+ (2 &+ day &+ 9 &+ 8) &+ 22 &+ (2 &+ day &+ 9 &+ 20)
    }

    /// An array of records under `name`.
    mutating func writeArray(_ name: String, _ records: some Sequence<InAppPurchase>, options: ReceiptJSONOptions) {
        key(text: name)
        byte(UInt8(ascii: "["))
        level &+= 1
        needsComma = false
        for record in records { write(record, options: options) }
        end(UInt8(ascii: "]"))
    }
}

/// Per day number: the `YYYY-MM-DD` text and the America/Los_Angeles offset during that UTC day.
/// A direct-mapped table of 256 days (a receipt's dates fall on a few hundred days), filled on
/// first use of a day from ``ReceiptDate/pacificOffset(utcSeconds:)``, so the rule is evaluated
/// once per day; a test compares every hour of 1960–2040 with it.
struct DayCache: ~Copyable {
    struct Entry {
        var day: Int64
        /// The first eight bytes of `YYYY-MM-DD` (first byte lowest).
        var text: UInt64
        /// Its last two bytes.
        var textTail: UInt16
        /// 10 for a year in 0...9999; 0 otherwise (the text is then written the long way).
        var textLength: UInt8
        /// The offset in seconds from midnight UTC until `switchSecond`, and after it.
        var offsetBefore: Int32
        var offsetAfter: Int32
        /// The second of the UTC day at which the offset changes (86,400 when it does not).
        var switchSecond: Int32
    }

    private let entries: UnsafeMutablePointer<Entry>
    static let size = 256

    init() {
        entries = UnsafeMutablePointer<Entry>.allocate(capacity: DayCache.size)
        entries.initialize(
            repeating: Entry(day: .min, text: 0, textTail: 0, textLength: 0, offsetBefore: 0, offsetAfter: 0, switchSecond: 0),
            count: DayCache.size)
    }

    deinit {
        entries.deallocate()
    }

    @inline(__always)
    func entry(_ day: Int64) -> Entry {
        let slot = entries + Int(truncatingIfNeeded: day & Int64(DayCache.size &- 1))
        if slot.pointee.day == day && day != .min { return slot.pointee }
        let made = DayCache.make(day)
        slot.pointee = made
        return made
    }

    static func make(_ day: Int64) -> Entry {
        let (y, m, d) = CivilCalendar.date(daysSince1970: day)
        var text: UInt64 = 0
        var tail: UInt16 = 0
        var length: UInt8 = 0
        if y >= 0 && y < 10_000 {
            let digits: [UInt8] = [
                UInt8(0x30 + y / 1000), UInt8(0x30 + y / 100 % 10), UInt8(0x30 + y / 10 % 10), UInt8(0x30 + y % 10), 0x2D,
                UInt8(0x30 + m / 10), UInt8(0x30 + m % 10), 0x2D, UInt8(0x30 + d / 10), UInt8(0x30 + d % 10),
            ]
            for (i, b) in digits.prefix(8).enumerated() { text |= UInt64(b) << (8 * UInt64(i)) }
            tail = UInt16(digits[8]) | UInt16(digits[9]) << 8
            length = 10
        }
        let start = day &* 86_400
        let before = ReceiptDate.pacificOffset(utcSeconds: start)
        let after = ReceiptDate.pacificOffset(utcSeconds: start &+ 86_399)
        // Daylight saving time starts at 10:00 UTC and ends at 09:00 UTC (02:00 local).
        let switchSecond: Int32 = before == after ? 86_400 : after > before ? 36_000 : 32_400
        return Entry(
            day: day, text: text, textTail: tail, textLength: length, offsetBefore: Int32(before), offsetAfter: Int32(after),
            switchSecond: switchSecond)
    }
}
