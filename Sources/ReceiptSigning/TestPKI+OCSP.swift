public import Foundation
public import ReceiptCrypto

extension TestPKI {
    /// One certificate's line of an OpenSSL CA index.
    public struct IndexEntry: Sendable {
        /// The certificate.
        public var certificate: Certificate
        /// When it was revoked, or nil when it is valid.
        public var revokedAt: Date?

        /// Creates an entry.
        public init(_ certificate: Certificate, revokedAt: Date? = nil) {
            self.certificate = certificate
            self.revokedAt = revokedAt
        }
    }

    /// The text of an OpenSSL CA index (`index.txt`, as `openssl ca` keeps it) listing `entries`:
    /// `V` (valid) or `R` (revoked, with its date), the expiry, the serial number in hex and the
    /// subject, tab-separated, so that `openssl ocsp -index index.txt -CA … -rsigner … -rkey …
    /// -port N` can answer for them.
    public static func opensslIndex(_ entries: [IndexEntry]) -> String {
        var text = ""
        for entry in entries {
            let expiry = opensslTime(entry.certificate.notAfter, utc: false)
            let serial = entry.certificate.serialNumberHex
            let padded = serial.count % 2 == 0 ? serial : "0" + serial
            let subject = "\(entry.certificate.subject)".map { $0 == "\t" || $0 == "\n" ? " " : $0 }
            if let revoked = entry.revokedAt {
                text += "R\t\(expiry)\t\(opensslTime(revoked, utc: true))\t\(padded)\tunknown\t\(String(subject))\n"
            } else {
                text += "V\t\(expiry)\t\t\(padded)\tunknown\t\(String(subject))\n"
            }
        }
        return text
    }

    /// The index of this PKI's intermediate and leaf (the certificates an OCSP responder answers
    /// for), with the ones in `revoked` marked revoked at `revokedAt`.
    public func opensslIndex(revoked: Set<Certificate> = [], revokedAt: Date = Date()) -> String {
        Self.opensslIndex(
            [intermediate, leaf].map { IndexEntry($0, revokedAt: revoked.contains($0) ? revokedAt : nil) })
    }

    /// `YYMMDDHHMMSSZ` (UTCTime, which OpenSSL's index needs for revocation dates) or
    /// `YYYYMMDDHHMMSSZ` when `utc` is false and the year is outside 1950-2049.
    static func opensslTime(_ date: Date, utc: Bool) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let year = parts.year ?? 1970
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        let rest = two(parts.month) + two(parts.day) + two(parts.hour) + two(parts.minute) + two(parts.second) + "Z"
        if utc || (1950...2049).contains(year) { return two(year % 100) + rest }
        return String(format: "%04d", year) + rest
    }
}
