import Foundation
import Internals

/// What one paging call (every page of a history) may still spend: response bytes, summed over
/// its pages, and time, up to one deadline for the whole call. A server that answers page after
/// page (replayed pages, pages that never say `hasMore: false`) ends the call with an error
/// instead of growing it without end; the page tokens seen are kept so that a token that comes
/// back ends it too.
final class PagingBudget: Sendable {
    struct State {
        var remainingBytes: Int
        var tokens: Set<String> = []
    }

    let totalBytes: Int
    let seconds: TimeInterval
    let deadline: ContinuousClock.Instant
    let state: Locked<State>

    init(totalBytes: Int, seconds: TimeInterval) {
        self.totalBytes = totalBytes
        self.seconds = seconds
        deadline = ContinuousClock.now.advanced(by: Deadline.duration(seconds: seconds))
        state = Locked(State(remainingBytes: totalBytes))
    }

    /// The configuration's limits, from now.
    convenience init(_ configuration: AppStoreServerAPIClient.Configuration) {
        self.init(totalBytes: configuration.maximumTotalResponseSize, seconds: configuration.pagingDeadline)
    }

    /// Seconds left before the deadline (never negative).
    var remainingSeconds: TimeInterval {
        let left = ContinuousClock.now.duration(to: deadline)
        let (seconds, attoseconds) = left.components
        return max(0, Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Response bytes the call may still receive.
    var remainingBytes: Int { state.withLock { $0.remainingBytes } }

    /// Counts a page's body.
    func spend(_ bytes: Int) {
        state.withLock { $0.remainingBytes -= bytes }
    }

    /// Records a page token; false when an earlier page of this call already named it.
    func recordToken(_ token: String) -> Bool {
        state.withLock { $0.tokens.insert(token).inserted }
    }

    /// Why the call must end now, if it must: the deadline has passed or the bytes are spent.
    func exhausted() -> String? {
        if remainingSeconds <= 0 { return deadlineReason }
        if remainingBytes <= 0 { return sizeReason }
        return nil
    }

    var deadlineReason: String { "the pages took longer than the paging deadline of \(seconds) s" }
    var sizeReason: String { "the pages together are larger than \(totalBytes) bytes (the paging size limit)" }
}
