import Foundation
import Internals
import JWS
import ReceiptVerification
import ServerNotifications

/// The counters, histograms and gauges `GET /metrics` exposes in Prometheus' text format
/// (version 0.0.4). Endpoints report to it (``NotificationsEndpoint``, ``MeasuredHandler``, the
/// store wrapper ``MeasuredNotificationStore``); it is safe to use from every connection thread.
///
/// | metric | type | labels |
/// |---|---|---|
/// | `rmstore_http_requests_total` | counter | `route` (a configured route, else `other`), `status` |
/// | `rmstore_notifications_total` | counter | `bundle_id`, `type`, `outcome` (`accepted`, `duplicate`, `rejected`: answered 400, `dead_lettered`: answered 500 for Apple to retry, `unavailable`: 503) |
/// | `rmstore_verification_failures_total` | counter | `check` (the failed check) |
/// | `rmstore_notification_lag_seconds` | histogram | from `signedDate` to receipt, for accepted and duplicate notifications |
/// | `rmstore_store_commit_seconds` | histogram | `operation` (`notification`, `dead_letter`) |
/// | `rmstore_store_up` | gauge | 1 when the store's write round trip succeeds at scrape time |
///
/// Label values that come from requests are bounded: a bundle id is used as a label only when
/// configured or among the first ``maximumOtherBundleIds`` others seen (and at most 128 bytes);
/// later ones count as `other`. A notification type Apple does not document counts as `other`.
/// Values are escaped as the format asks (backslash, double quote, line feed).
public final class ServerMetrics: @unchecked Sendable {
    // @unchecked: every mutable field is used only under `lock`.
    private let lock = NSLock()
    private var counters: [String: [[String]: Double]] = [:]
    private var histograms: [String: [[String]: Histogram]] = [:]
    private var admittedBundleIds: Set<String>
    private var otherBundleIds = 0
    /// How many bundle ids besides the configured ones get a label of their own.
    public let maximumOtherBundleIds: Int

    /// Upper bounds of the lag histogram, in seconds.
    static let lagBuckets: [Double] = [1, 5, 15, 60, 300, 900, 3600, 21_600, 86_400, 259_200]
    /// Upper bounds of the commit histogram, in seconds.
    static let commitBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// The families, in exposition order: name, type, help, label names.
    static let families: [(name: String, type: String, help: String, labels: [String])] = [
        ("rmstore_http_requests_total", "counter", "HTTP requests answered, by route and status.", ["route", "status"]),
        (
            "rmstore_notifications_total", "counter", "Notification bodies received, by app, type and outcome.",
            ["bundle_id", "type", "outcome"]
        ),
        ("rmstore_verification_failures_total", "counter", "Notification bodies refused, by the check that failed.", ["check"]),
        ("rmstore_notification_lag_seconds", "histogram", "Seconds from a notification's signedDate to its receipt.", []),
        ("rmstore_store_commit_seconds", "histogram", "Seconds a store commit took, by what was committed.", ["operation"]),
    ]

    /// Creates an empty registry; `bundleIds` (the configured apps) always get their own label.
    public init(bundleIds: [String] = [], maximumOtherBundleIds: Int = 16) {
        admittedBundleIds = Set(bundleIds)
        self.maximumOtherBundleIds = max(0, maximumOtherBundleIds)
    }

    /// Counts one answered request.
    public func recordRequest(route: String, status: Int) {
        increment("rmstore_http_requests_total", [route, String(status)])
    }

    /// The hook endpoints report to (``NotificationsEndpoint`` counts notifications through it).
    public var hook: OutcomeHook { OutcomeHook { [self] outcome in record(outcome) } }

    /// Counts one notification body by its reported outcome: `accepted` and `duplicate` by the
    /// verified bundle id and type (and their lag), `rejected` as `rejected` (answered 4xx) or
    /// `dead_lettered` (5xx, for Apple to retry) with the failed check, `unavailable`, the last
    /// three by the bundle id and type read unverified from the body. Other routes' outcomes are
    /// counted by ``MeasuredHandler`` only.
    public func record(_ outcome: EndpointOutcome) {
        guard outcome.route == .notifications else { return }
        let name = outcome.outcome == "rejected" && outcome.status >= 500 ? "dead_lettered" : outcome.outcome
        lock.withLock {
            let labels = [bundleLabel(outcome.bundleId), typeLabel(outcome.notificationType), name]
            counters["rmstore_notifications_total", default: [:]][labels, default: 0] += 1
            if outcome.outcome == "rejected", let check = outcome.failedCheck {
                counters["rmstore_verification_failures_total", default: [:]][[check.rawValue], default: 0] += 1
            }
            if let lag = outcome.lagSeconds { observe("rmstore_notification_lag_seconds", [], lag, Self.lagBuckets) }
        }
    }

    /// Records one store commit of `seconds` (`operation`: `notification` or `dead_letter`).
    public func recordCommit(_ operation: String, seconds: Double) {
        lock.withLock { observe("rmstore_store_commit_seconds", [operation], seconds, Self.commitBuckets) }
    }

    /// The value of a counter series (0 when it was never incremented), for tests and reports.
    public func counter(_ name: String, _ labels: [String]) -> Double {
        lock.withLock { counters[name]?[labels] ?? 0 }
    }

    /// The exposition text; `storeUp` adds the gauge `rmstore_store_up` (nil: no store).
    public func exposition(storeUp: Bool?) -> String {
        lock.lock()
        let counters = self.counters
        let histograms = self.histograms
        lock.unlock()
        var text = ""
        for family in Self.families {
            text += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.type)\n"
            if family.type == "counter" {
                for (labels, value) in (counters[family.name] ?? [:]).sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                    text += "\(family.name)\(Self.labelText(family.labels, labels)) \(Self.number(value))\n"
                }
            } else {
                for (labels, histogram) in (histograms[family.name] ?? [:]).sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                    var cumulative = 0
                    for (bound, count) in zip(histogram.bounds, histogram.counts) {
                        cumulative += count
                        let le = Self.labelText(family.labels + ["le"], labels + [Self.number(bound)])
                        text += "\(family.name)_bucket\(le) \(cumulative)\n"
                    }
                    text += "\(family.name)_bucket\(Self.labelText(family.labels + ["le"], labels + ["+Inf"])) \(histogram.count)\n"
                    text += "\(family.name)_sum\(Self.labelText(family.labels, labels)) \(Self.number(histogram.sum))\n"
                    text += "\(family.name)_count\(Self.labelText(family.labels, labels)) \(histogram.count)\n"
                }
            }
        }
        if let storeUp {
            text += "# HELP rmstore_store_up Whether the notification store committed a write at scrape time.\n"
            text += "# TYPE rmstore_store_up gauge\nrmstore_store_up \(storeUp ? 1 : 0)\n"
        }
        return text
    }

    /// `{a="x",b="y"}` with each value escaped (empty when there are no labels).
    static func labelText(_ names: [String], _ values: [String]) -> String {
        guard !names.isEmpty else { return "" }
        return "{" + zip(names, values).map { "\($0)=\"\(escaped($1))\"" }.joined(separator: ",") + "}"
    }

    /// A label value escaped for the text format: `\` → `\\`, `"` → `\"`, line feed → `\n`.
    public static func escaped(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for character in value.unicodeScalars {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }

    /// A sample value: integers without a fraction, others as Swift prints a `Double`.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    private func increment(_ name: String, _ labels: [String]) {
        lock.withLock { counters[name, default: [:]][labels, default: 0] += 1 }
    }

    /// Under `lock`.
    private func observe(_ name: String, _ labels: [String], _ value: Double, _ bounds: [Double]) {
        var histogram = histograms[name]?[labels] ?? Histogram(bounds: bounds)
        histogram.observe(value)
        histograms[name, default: [:]][labels] = histogram
    }

    /// Under `lock`: the bundle id's label (`none` when unreadable, `other` beyond the bound).
    private func bundleLabel(_ bundleId: String?) -> String {
        guard let bundleId else { return "none" }
        if admittedBundleIds.contains(bundleId) { return bundleId }
        guard otherBundleIds < maximumOtherBundleIds, bundleId.utf8.count <= 128 else { return "other" }
        otherBundleIds += 1
        admittedBundleIds.insert(bundleId)
        return bundleId
    }

    /// A documented notification type, `none` when unreadable, else `other`.
    private func typeLabel(_ type: String?) -> String {
        guard let type else { return "none" }
        return NotificationType.known.contains(NotificationType(rawValue: type)) ? type : "other"
    }
}

/// Counts of observations at or below each bound (not cumulative), their sum and count.
struct Histogram {
    let bounds: [Double]
    var counts: [Int]
    var sum = 0.0
    var count = 0

    init(bounds: [Double]) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count)
    }

    mutating func observe(_ value: Double) {
        if let index = bounds.firstIndex(where: { value <= $0 }) { counts[index] += 1 }
        sum += value
        count += 1
    }
}
