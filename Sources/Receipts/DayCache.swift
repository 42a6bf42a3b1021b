import FoundationEssentials
import Internals

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

    let entries: UnsafeMutablePointer<Entry>
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
