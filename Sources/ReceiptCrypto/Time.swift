internal import COpenSSL
package import Foundation
internal import Internals

/// Conversions between Foundation `Date`, POSIX seconds and OpenSSL `ASN1_TIME`, written without
/// `timegm` or formatters so that they behave the same on every platform.
package enum TimeConversion {
    /// Seconds since 1970-01-01T00:00:00Z of `date`, rounded down, or nil if the date is not finite
    /// or lies outside the years 0001-9999 (the range an X.509 time can express).
    package static func posixSeconds(_ date: Date) -> Int? {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite else { return nil }
        let seconds = interval.rounded(.down)
        // 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
        guard seconds >= -62_135_596_800, seconds <= 253_402_300_799 else { return nil }
        return Int(seconds)
    }

    /// The instant an `ASN1_TIME` (UTCTime or GeneralizedTime) denotes, or nil if OpenSSL cannot
    /// parse it.
    static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var broken = tm()
        guard ASN1_TIME_to_tm(time, &broken) == 1 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        let year = Int(broken.tm_year) + 1900
        let month = Int(broken.tm_mon) + 1
        guard (1...12).contains(month), (1...31).contains(Int(broken.tm_mday)),
            (0...23).contains(Int(broken.tm_hour)), (0...59).contains(Int(broken.tm_min)),
            (0...60).contains(Int(broken.tm_sec))
        else { return nil }
        let days = Int(CivilCalendar.daysSince1970(year: year, month: month, day: Int(broken.tm_mday)))
        let seconds = days * 86_400 + Int(broken.tm_hour) * 3_600 + Int(broken.tm_min) * 60 + Int(broken.tm_sec)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// A new `ASN1_TIME` for `date` (UTCTime for 1950-2049, GeneralizedTime otherwise, as RFC 5280
    /// requires). The caller frees it with `ASN1_TIME_free`.
    static func asn1Time(_ date: Date) throws(CryptoError) -> UnsafeMutablePointer<ASN1_TIME> {
        guard let seconds = posixSeconds(date) else {
            throw .plain(.invalidArgument, "date \(date) cannot be expressed as an X.509 time")
        }
        guard let time = ASN1_TIME_set(nil, time_t(seconds)) else {
            throw .openSSL(.operationFailed, "ASN1_TIME_set failed for \(date)")
        }
        return time
    }
}
