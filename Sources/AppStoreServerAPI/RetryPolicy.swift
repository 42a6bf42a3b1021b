public import Foundation
import Internals

/// When and how long the client waits before sending a request again. Only HTTP 429 (rate
/// limited) and 5xx (server errors) are retried; every other answer, a timeout and a transport
/// failure end the call at once.
public struct RetryPolicy: Sendable, Hashable {
    /// The most HTTP attempts per request, the first included (1: never retry).
    public var maximumAttempts: Int
    /// The wait before the first retry when the response has no `Retry-After`, in seconds.
    public var initialBackoff: TimeInterval
    /// Each further retry waits this many times longer.
    public var multiplier: Double
    /// The longest wait computed from the backoff, in seconds.
    public var maximumBackoff: TimeInterval
    /// Up to this fraction of the backoff is added at random, so that clients do not retry in step.
    public var jitter: Double
    /// The longest `Retry-After` the client honours, in seconds: a response that asks for a
    /// longer wait ends the call (``AppStoreServerAPIError/retryAfter`` says how long).
    public var maximumRetryAfter: TimeInterval

    /// Creates a policy.
    public init(
        maximumAttempts: Int = 3, initialBackoff: TimeInterval = 0.5, multiplier: Double = 2, maximumBackoff: TimeInterval = 8,
        jitter: Double = 0.2, maximumRetryAfter: TimeInterval = 60
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialBackoff = initialBackoff
        self.multiplier = multiplier
        self.maximumBackoff = maximumBackoff
        self.jitter = jitter
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// Three attempts, 0.5 s then 1 s (plus up to 20 %), `Retry-After` up to a minute.
    public static let `default` = RetryPolicy()
    /// One attempt: never retry.
    public static let never = RetryPolicy(maximumAttempts: 1)

    /// The attempts allowed, at least 1 and at most 100.
    var attempts: Int { min(max(1, maximumAttempts), 100) }

    /// The wait after failed attempt `attempt` (1-based) without `Retry-After`.
    func backoff(after attempt: Int) -> TimeInterval {
        let exponent = Double(max(0, attempt - 1))
        let initial = initialBackoff.isFinite ? max(0, initialBackoff) : maximumBackoff
        let growth = multiplier.isFinite ? max(1, multiplier) : 1
        let base = initial * pow(growth, min(exponent, 60))
        let ceiling = maximumBackoff.isFinite ? max(0, maximumBackoff) : 60
        let capped = min(base.isFinite ? base : ceiling, ceiling)
        let spread = jitter.isFinite ? max(0, min(jitter, 1)) : 0
        return capped * (1 + (spread > 0 ? Double.random(in: 0..<spread) : 0))
    }
}

/// `Retry-After` in the three forms a server may send, told apart by their shape and magnitude:
///
/// - **Apple's form**, a UNIX time in milliseconds (App Store Server API, "Identifying rate
///   limits"): a number of at least ``unixMillisecondsThreshold`` (10^11, that is March 1973 as a
///   time in milliseconds; as a delay in seconds it would be 3,170 years, which no server means).
///   The wait is that time minus now, never negative.
/// - **Delay seconds** (RFC 9110 §10.2.3): a smaller number, the wait itself.
/// - **An HTTP date** (IMF-fixdate): the wait is that date minus now, never negative.
///
/// A number of more than 19 digits (past any 64-bit time) is a wait too long for any policy.
/// Anything else (a sign, a fraction, another date format) is no `Retry-After` at all.
enum RetryAfter {
    /// Numbers from here on are UNIX times in milliseconds; below, delay seconds.
    static let unixMillisecondsThreshold: UInt64 = 100_000_000_000
    /// What a number too long for any time means: a wait longer than any policy allows, in seconds.
    static let beyondAnyTime: TimeInterval = 1e12

    /// The wait the header asks for, in seconds from `now` (never negative); nil when the value is
    /// none of the forms.
    static func seconds(_ value: String, now: Date) -> TimeInterval? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard text.utf8.count <= 19, let number = UInt64(text) else { return beyondAnyTime }
            guard number >= unixMillisecondsThreshold else { return Double(number) }
            let milliseconds = Double(number) - now.timeIntervalSince1970 * 1000
            return max(0, milliseconds / 1000)
        }
        guard let date = httpDate(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form HTTP/1.1 senders must use.
    static func httpDate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT" else { return nil }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let day = Int(parts[1]), let monthIndex = months.firstIndex(of: String(parts[2])), let year = Int(parts[3]),
            (1...31).contains(day), (1970...9999).contains(year)
        else { return nil }
        let time = parts[4].split(separator: ":")
        guard time.count == 3, let hour = Int(time[0]), let minute = Int(time[1]), let second = Int(time[2]), (0...23).contains(hour),
            (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        guard day <= CivilCalendar.daysInMonth(year: year, month: monthIndex + 1) else { return nil }
        let days = CivilCalendar.daysSince1970(year: year, month: monthIndex + 1, day: day)
        return Date(timeIntervalSince1970: Double(days) * 86_400 + Double(hour * 3600 + minute * 60 + second))
    }
}
