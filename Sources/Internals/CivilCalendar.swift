// Proleptic Gregorian calendar arithmetic (Howard Hinnant's days-from-civil algorithms), written
// without Foundation so the ASN.1 reader and the receipt date parser can use it.

/// Proleptic Gregorian calendar arithmetic on day numbers, shared by ASN.1 times, receipt
/// dates, JSON date triplets, HTTP dates and X.509 time conversion (one copy in the package).
///
/// `public`, not `package`, with `@inlinable` hot paths: Swift 6.3 does not inline `@inlinable
/// package` functions into other modules, and the receipt date parser calls these once per date.
/// `Internals` is not a product, so nothing outside the package can import it.
public enum CivilCalendar {
    /// Days from 1970-01-01 to the given date (negative before it). Exact for years within
    /// ±10^12 and months 1...12; the arithmetic wraps rather than traps outside that, so no input
    /// can crash it (callers validate their fields first). It runs for every receipt date, so
    /// the wrapping operators also keep it free of overflow checks.
    @inlinable
    public static func daysSince1970(year: Int, month: Int, day: Int) -> Int64 {
        // Shift the year to start in March so the leap day is last; count 400-year eras.
        let y = Int64(truncatingIfNeeded: month <= 2 ? year &- 1 : year)
        let era = (y >= 0 ? y : y &- 399) / 400
        let yearOfEra = y &- era &* 400
        let m = Int64(truncatingIfNeeded: month)
        let dayOfYear = (153 &* (m > 2 ? m &- 3 : m &+ 9) &+ 2) / 5 &+ Int64(truncatingIfNeeded: day) &- 1
        let dayOfEra = yearOfEra &* 365 &+ yearOfEra / 4 &- yearOfEra / 100 &+ dayOfYear
        return era &* 146_097 &+ dayOfEra &- 719_468
    }

    /// ``daysSince1970(year:month:day:)`` for a valid date of the years 0 to 9999 (`month` 1...12,
    /// `day` within the month), as the receipt date parser needs it once per date: the year is
    /// shifted by 400 (one Gregorian cycle, 146,097 days) so every quotient is non-negative and
    /// the divisions by constants compile to multiplications. Arithmetic wraps; a test compares it
    /// with the general function over the whole range.
    @inlinable @inline(__always)
    public static func daysSince1970(validYear year: Int, month: Int, day: Int) -> Int64 {
        let y = (month <= 2 ? year &- 1 : year) &+ 400  // 399...10399
        let era = y / 400
        let yearOfEra = y &- era &* 400
        let dayOfYear = (153 &* (month > 2 ? month &- 3 : month &+ 9) &+ 2) / 5 &+ day &- 1
        let dayOfEra = yearOfEra &* 365 &+ yearOfEra / 4 &- yearOfEra / 100 &+ dayOfYear
        return Int64(era &* 146_097 &+ dayOfEra &- 719_468 &- 146_097)
    }

    /// The calendar date of a day number (inverse of ``daysSince1970(year:month:day:)``).
    @inlinable
    public static func date(daysSince1970 days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    /// Days in a month of the proleptic Gregorian calendar.
    @inlinable
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` for whole seconds.
    package static func iso8601(secondsSince1970 seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = Int(seconds - days * 86_400)
        let (y, m, d) = date(daysSince1970: days)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let year = y >= 0 && y < 10_000 ? String(repeating: "0", count: max(0, 4 - String(y).count)) + String(y) : String(y)
        return "\(year)-\(two(m))-\(two(d))T\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60))Z"
    }
}
