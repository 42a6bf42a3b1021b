@_spi(RawParsing) import ASN1
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
    static func milliseconds(
        _ b: UnsafeRawBufferPointer, _ range: Range<Int>, offset: Int?, attribute: Int?
    ) throws(ReceiptError) -> Int64? {
        let n = range.count
        if n == 0 { return nil }
        let s = range.lowerBound
        @inline(__always) func digit(_ i: Int) -> Int {
            let v = Int(b[s &+ i]) &- 0x30
            return v >= 0 && v <= 9 ? v : -1000
        }
        guard n >= 20, b[s + 4] == 0x2D, b[s + 7] == 0x2D, b[s + 13] == 0x3A, b[s + 16] == 0x3A,
            b[s + 10] == 0x54 || b[s + 10] == 0x74 || b[s + 10] == 0x20
        else { throw invalid(b, range, offset, attribute) }
        let year = digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3)
        let month = digit(5) * 10 + digit(6)
        let day = digit(8) * 10 + digit(9)
        let hour = digit(11) * 10 + digit(12)
        let minute = digit(14) * 10 + digit(15)
        let second = digit(17) * 10 + digit(18)
        guard year >= 0, month >= 1, month <= 12, day >= 1, day <= CivilCalendar.daysInMonth(year: year, month: month),
            hour >= 0, hour <= 23, minute >= 0, minute <= 59, second >= 0, second <= 60
        else { throw invalid(b, range, offset, attribute) }
        var i = 19
        var millis = 0
        if b[s + i] == 0x2E {
            i += 1
            var digits = 0
            while i < n, digit(i) >= 0 {
                if digits < 3 { millis = millis * 10 + digit(i) }
                digits += 1
                i += 1
            }
            guard digits >= 1, digits <= 9 else { throw invalid(b, range, offset, attribute) }
            var scale = digits
            while scale < 3 {
                millis *= 10
                scale += 1
            }
        }
        guard i < n else { throw invalid(b, range, offset, attribute) }
        var zoneSeconds = 0
        let zone = b[s + i]
        if zone == 0x5A || zone == 0x7A {
            i += 1
        } else if zone == 0x2B || zone == 0x2D {
            let rest = n - i - 1
            let oh: Int
            let om: Int
            if rest == 5, b[s + i + 3] == 0x3A {
                oh = digit(i + 1) * 10 + digit(i + 2)
                om = digit(i + 4) * 10 + digit(i + 5)
            } else if rest == 4 {
                oh = digit(i + 1) * 10 + digit(i + 2)
                om = digit(i + 3) * 10 + digit(i + 4)
            } else {
                throw invalid(b, range, offset, attribute)
            }
            guard oh >= 0, oh <= 23, om >= 0, om <= 59 else { throw invalid(b, range, offset, attribute) }
            zoneSeconds = (oh * 3600 + om * 60) * (zone == 0x2D ? -1 : 1)
            i = n
        } else {
            throw invalid(b, range, offset, attribute)
        }
        guard i == n else { throw invalid(b, range, offset, attribute) }
        let days = CivilCalendar.daysSince1970(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second - zoneSeconds)
        return seconds * 1000 + Int64(millis)
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
