/// A configured number of seconds as a duration that cannot trap: a timeout comes from a caller's
/// configuration, and converting NaN, an infinity or a huge value to a whole number of
/// milliseconds would stop the process.
package enum Deadline {
    /// The longest wait any timeout stands for: one year.
    package static let longestSeconds: Double = 86_400 * 365

    /// `seconds` within one millisecond and ``longestSeconds`` (NaN: one millisecond).
    package static func clampedSeconds(_ seconds: Double) -> Double {
        guard seconds >= 0.001 else { return 0.001 }  // NaN and anything shorter
        return Swift.min(seconds, longestSeconds)
    }

    /// ``clampedSeconds(_:)`` as a duration, rounded up to a whole millisecond.
    package static func duration(seconds: Double) -> Duration {
        .milliseconds(Int64((clampedSeconds(seconds) * 1000).rounded(.up)))
    }
}
