public import FoundationEssentials

extension JWSDate {
    /// The nearest `Date` (Foundation keeps time as a `Double` of seconds, so a date far from
    /// 2001 loses sub-millisecond digits; ``text`` keeps them).
    public var date: Date { Date(timeIntervalSince1970: secondsSince1970) }
}
