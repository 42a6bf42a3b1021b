public import FoundationEssentials
import Internals

/// Receipt date handling without Foundation formatters: a hand-written RFC 3339 parser for the
/// IA5String dates inside receipts, and the formats Apple's verifyReceipt JSON used.
///
/// Accepted input: `YYYY-MM-DDTHH:MM:SS` (`T`, `t` or a space between date and time), an optional
/// fraction of 1–9 digits, then `Z`/`z`, `±HH:MM` or `±HHMM`. The empty string means "absent".
/// Dates have millisecond resolution: digits beyond the third fractional digit are truncated.
public enum ReceiptDate {
    /// Parses a receipt date string; `nil` for the empty string.
    /// - Throws: ``ReceiptError/Code/invalidDate``.
    public static func parse(_ text: String) throws(ReceiptError) -> Date? {
        let bytes = Array(text.utf8)
        let ms = try bytes.span.withUnsafeBufferPointer { (buffer) throws(ReceiptError) -> Int64? in
            try milliseconds(UnsafeRawBufferPointer(buffer), 0..<buffer.count, offset: nil, attribute: nil)
        }
        return ms.map(date(milliseconds:))
    }

    /// The `Date` for a count of milliseconds since 1970.
    @inlinable
    public static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Milliseconds since 1970 of a date, rounded to the nearest millisecond.
    @inlinable
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The core parser over raw bytes. Returns `nil` for an empty range.
    /// - Throws: ``ReceiptError/Code/invalidDate`` at `offset` (for `attribute`) for anything else
    ///   than an accepted date.
    static func milliseconds(
        _ b: UnsafeRawBufferPointer, _ range: Range<Int>, offset: Int?, attribute: Int?
    ) throws(ReceiptError) -> Int64? {
        if range.isEmpty { return nil }
        guard let value = value(b, range) else { throw invalid(b, range, offset, attribute) }
        return value
    }

    /// Milliseconds since 1970 of the non-empty date in `range`, or `nil` if it is not a date this
    /// parser accepts. The receipt's own dates (through ``milliseconds(_:_:offset:attribute:)``)
    /// and the in-app record decoder's straight-line step both call it, so a date is read one way.
    ///
    /// The fixed part `YYYY-MM-DDTHH:MM:SS` (19 bytes) is checked and decoded eight bytes at a time
    /// (``fixedPart(_:at:)``); the fraction and the zone that follow are read byte by byte. Arithmetic
    /// wraps: every field is at most four digits (a non-digit in the tail reads as -1000 and fails
    /// the range checks), so nothing can overflow.
    static func value(_ b: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int64? {
        let n = range.count
        let s = range.lowerBound
        @inline(__always) func digit(_ i: Int) -> Int {
            let v = Int(b[s &+ i]) &- 0x30
            return v >= 0 && v <= 9 ? v : -1000
        }
        guard n >= 20, let (year, month, day, hour, minute, second) = fixedPart(b, at: s) else { return nil }
        // Days up to 28 exist in every month: only later days need the calendar.
        guard month >= 1, month <= 12, day >= 1, day <= 28 || day <= CivilCalendar.daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var i = 19
        var millis = 0
        if b[s &+ i] == 0x2E {
            i &+= 1
            var digits = 0
            while i < n, digit(i) >= 0 {
                if digits < 3 { millis = millis &* 10 &+ digit(i) }
                digits &+= 1
                i &+= 1
            }
            guard digits >= 1, digits <= 9 else { return nil }
            var scale = digits
            while scale < 3 {
                millis &*= 10
                scale &+= 1
            }
        }
        guard i < n else { return nil }
        var zoneSeconds = 0
        let zone = b[s &+ i]
        if zone == 0x5A || zone == 0x7A {
            i &+= 1
        } else if zone == 0x2B || zone == 0x2D {
            let rest = n &- i &- 1
            let oh: Int
            let om: Int
            if rest == 5, b[s &+ i &+ 3] == 0x3A {
                oh = digit(i &+ 1) &* 10 &+ digit(i &+ 2)
                om = digit(i &+ 4) &* 10 &+ digit(i &+ 5)
            } else if rest == 4 {
                oh = digit(i &+ 1) &* 10 &+ digit(i &+ 2)
                om = digit(i &+ 3) &* 10 &+ digit(i &+ 4)
            } else {
                return nil
            }
            guard oh >= 0, oh <= 23, om >= 0, om <= 59 else { return nil }
            zoneSeconds = (oh &* 3600 &+ om &* 60) &* (zone == 0x2D ? -1 : 1)
            i = n
        } else {
            return nil
        }
        guard i == n else { return nil }
        let days = CivilCalendar.daysSince1970(validYear: year, month: month, day: day)
        let seconds = days &* 86_400 &+ Int64(hour &* 3600 &+ minute &* 60 &+ second &- zoneSeconds)
        return seconds &* 1000 &+ Int64(millis)
    }

    /// Checks and decodes `YYYY-MM-DDTHH:MM:SS` at `s` (`T` may also be `t` or a space): digits
    /// where digits belong, `-` at 4 and 7, `:` at 13 and 16. The caller guarantees 20 readable
    /// bytes. `nil` if any byte is out of place.
    ///
    /// Three unaligned 8-byte loads (offsets 0, 8 and 11) cover the 19 bytes. With every byte below
    /// 0x80, adding 0x50 sets a byte's top bit exactly when it is at least `0`, and adding 0x46 exactly
    /// when it is above `9`, without carries between bytes; so a few word operations check every
    /// byte, and one branch decides. Digits minus `0` are then combined in pairs (`10 × tens +
    /// ones`) by one multiply and add per word.
    @inline(__always)
    static func fixedPart(
        _ b: UnsafeRawBufferPointer, at s: Int
    ) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)? {
        let first = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: s, as: UInt64.self))  // YYYY-MM-
        let middle = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: s &+ 8, as: UInt64.self))  // DDTHH:MM
        let last = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: s &+ 11, as: UInt64.self))  // HH:MM:SS
        // Digit positions (0xFF per byte, little-endian: byte k is bits 8k...8k+7).
        let firstDigits: UInt64 = 0x00FF_FF00_FFFF_FFFF
        let middleDigits: UInt64 = 0xFFFF_00FF_FF00_FFFF
        let lastDigits: UInt64 = 0xFFFF_0000_0000_0000
        let high: UInt64 = 0x8080_8080_8080_8080
        /// Top bit set in each byte of `mask` that is not a digit (every byte below 0x80).
        @inline(__always) func nonDigits(_ word: UInt64, _ mask: UInt64) -> UInt64 {
            let atLeastZero = (word &+ 0x5050_5050_5050_5050) & high
            let aboveNine = (word &+ 0x4646_4646_4646_4646) & high
            return (atLeastZero & ~aboveNine ^ high) & mask
        }
        let separator = (middle >> 16) & 0xFF  // offset 10: T, t or space
        var bad = (first | middle | last) & high
        bad |= nonDigits(first, firstDigits) | nonDigits(middle, middleDigits) | nonDigits(last, lastDigits)
        bad |= (first & ~firstDigits) ^ 0x2D00_002D_0000_0000  // '-' at 4 and 7
        bad |= (middle & 0x0000_FF00_0000_0000) ^ 0x0000_3A00_0000_0000  // ':' at 13
        bad |= (last & 0x0000_FF00_0000_0000) ^ 0x0000_3A00_0000_0000  // ':' at 16
        guard bad == 0, separator | 0x20 == 0x74 || separator == 0x20 else { return nil }
        // Per byte: the digit's value (0...9) where a digit is, 0 elsewhere; no borrows.
        let zeros: UInt64 = 0x3030_3030_3030_3030
        let d0 = (first & firstDigits) &- (zeros & firstDigits)
        let d1 = (middle & middleDigits) &- (zeros & middleDigits)
        let d2 = (last & lastDigits) &- (zeros & lastDigits)
        // Byte k of `pairs` is 10 × digit k + digit k+1 (at most 99, so no carries).
        @inline(__always) func pairs(_ d: UInt64) -> UInt64 { d &* 10 &+ (d >> 8) }
        @inline(__always) func byte(_ word: UInt64, _ k: UInt64) -> Int { Int(truncatingIfNeeded: (word >> (8 &* k)) & 0xFF) }
        let p0 = pairs(d0)
        let p1 = pairs(d1)
        let p2 = pairs(d2)
        return (byte(p0, 0) &* 100 &+ byte(p0, 2), byte(p0, 5), byte(p1, 0), byte(p1, 3), byte(p1, 6), byte(p2, 6))
    }

    @inline(never)
    static func invalid(_ b: UnsafeRawBufferPointer, _ range: Range<Int>, _ offset: Int?, _ attribute: Int?) -> ReceiptError {
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: b[range]).prefix(64), as: UTF8.self)
        return ReceiptError.make(.invalidDate, offset, attribute: attribute, "\"\(text)\" is not an RFC 3339 date")
    }

    // MARK: - Output formats

    /// `2020-07-14T19:36:40Z`, with `.SSS` when the milliseconds are not zero.
    public static func rfc3339(_ date: Date) -> String {
        let ms = milliseconds(date)
        let fraction = ((ms % 1000) + 1000) % 1000
        let text = CivilCalendar.iso8601(secondsSince1970: floorDiv(ms, 1000))
        guard fraction != 0 else { return text }
        return String(text.dropLast()) + "." + pad(Int(fraction), 3) + "Z"
    }

    /// Apple's verifyReceipt form in UTC: `2020-07-14 19:36:40 Etc/GMT`.
    public static func appleGMT(_ date: Date) -> String {
        wallClock(seconds: floorDiv(milliseconds(date), 1000)) + " Etc/GMT"
    }

    /// Apple's verifyReceipt form in Pacific time: `2020-07-14 12:36:40 America/Los_Angeles`.
    public static func applePacific(_ date: Date) -> String {
        let seconds = floorDiv(milliseconds(date), 1000)
        return wallClock(seconds: seconds + Int64(pacificOffset(utcSeconds: seconds))) + " America/Los_Angeles"
    }

    /// The offset of America/Los_Angeles from UTC at an instant: −8 h, or −7 h during daylight
    /// saving time. US rules since 2007 (second Sunday in March to first Sunday in November), 1987–2006
    /// (first Sunday in April to last Sunday in October) and 1967–1986 (last Sunday in April, with
    /// the 1974 and 1975 exceptions); no daylight saving time before 1967.
    public static func pacificOffset(utcSeconds: Int64) -> Int {
        let standard = -8 * 3600
        let days = floorDiv(utcSeconds, 86_400)
        let year = CivilCalendar.date(daysSince1970: days).year
        guard year >= 1967 else { return standard }
        let start: Int64
        let end: Int64
        if year >= 2007 {
            start = nthSunday(year, 3, 2)
            end = nthSunday(year, 11, 1)
        } else if year >= 1987 {
            start = nthSunday(year, 4, 1)
            end = lastSunday(year, 10)
        } else {
            switch year {
            case 1974: start = CivilCalendar.daysSince1970(year: 1974, month: 1, day: 6)
            case 1975: start = CivilCalendar.daysSince1970(year: 1975, month: 2, day: 23)
            default: start = lastSunday(year, 4)
            }
            end = lastSunday(year, 10)
        }
        // Changes happen at 02:00 local time: 10:00 UTC in winter, 09:00 UTC in summer.
        let startInstant = start * 86_400 + 10 * 3600
        let endInstant = end * 86_400 + 9 * 3600
        return utcSeconds >= startInstant && utcSeconds < endInstant ? standard + 3600 : standard
    }

    static func weekday(_ days: Int64) -> Int64 { ((days + 4) % 7 + 7) % 7 }  // 0 = Sunday

    static func nthSunday(_ year: Int, _ month: Int, _ n: Int64) -> Int64 {
        let first = CivilCalendar.daysSince1970(year: year, month: month, day: 1)
        return first + (7 - weekday(first)) % 7 + 7 * (n - 1)
    }

    static func lastSunday(_ year: Int, _ month: Int) -> Int64 {
        let last = CivilCalendar.daysSince1970(year: year, month: month, day: CivilCalendar.daysInMonth(year: year, month: month))
        return last - weekday(last)
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : (a - b + 1) / b }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    static func wallClock(seconds: Int64) -> String {
        let days = floorDiv(seconds, 86_400)
        let rest = Int(seconds - days * 86_400)
        let (y, m, d) = CivilCalendar.date(daysSince1970: days)
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2)) \(pad(rest / 3600, 2)):\(pad(rest / 60 % 60, 2)):\(pad(rest % 60, 2))"
    }
}
