// An injectable clock for the simulated App Store: time moves only when told to.

public import Foundation

/// A clock whose time moves only when `advance(by:)` or `set(_:)` is called, so that
/// subscription renewals can be tested without real waiting.
///
/// Thread-safe (a lock guards the time), so verifiers on any thread may read it.
public final class SimulatedClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    /// Creates a clock showing `now` (default: 2023-11-14T22:13:20Z, a fixed instant so that
    /// tests are reproducible).
    public init(now: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        current = now
    }

    /// The current simulated time.
    public var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Moves the time forward (or backward, for a negative interval).
    public func advance(by interval: TimeInterval) {
        lock.lock()
        current = current.addingTimeInterval(interval)
        lock.unlock()
    }

    /// Sets the time.
    public func set(_ date: Date) {
        lock.lock()
        current = date
        lock.unlock()
    }
}
