public import Foundation
import Internals
public import JWS

/// The request rates a client keeps to, per endpoint, in requests per second. An endpoint
/// without a rate is not throttled.
public struct APIRateLimits: Sendable, Hashable {
    /// The rate of each throttled endpoint, in requests per second (positive and finite).
    public var requestsPerSecond: [AppStoreServerEndpoint: Double]

    /// Creates limits.
    public init(requestsPerSecond: [AppStoreServerEndpoint: Double]) {
        self.requestsPerSecond = requestsPerSecond
    }

    /// Apple's published production limits (``AppStoreServerEndpoint/productionRequestsPerSecond``).
    public static let production = APIRateLimits(
        requestsPerSecond: Dictionary(uniqueKeysWithValues: AppStoreServerEndpoint.allCases.map { ($0, $0.productionRequestsPerSecond) }))

    /// Apple's sandbox limits: 10 % of production's.
    public static let sandbox = APIRateLimits(
        requestsPerSecond: Dictionary(uniqueKeysWithValues: AppStoreServerEndpoint.allCases.map { ($0, $0.sandboxRequestsPerSecond) }))

    /// No throttling.
    public static let unlimited = APIRateLimits(requestsPerSecond: [:])

    /// Apple's limits for payloads in `environment`: the sandbox's for `Sandbox`, production's
    /// for every other.
    public static func apple(for environment: Environment) -> APIRateLimits {
        environment == .sandbox ? .sandbox : .production
    }

    /// The seconds between two requests to `endpoint`, or nil when it is not throttled.
    func interval(_ endpoint: AppStoreServerEndpoint) -> Double? {
        guard let rate = requestsPerSecond[endpoint], rate.isFinite, rate > 0 else { return nil }
        return 1 / rate
    }
}

/// Spaces the requests of one client so that no endpoint is sent more than its rate allows:
/// each request takes the next free slot of its endpoint (slots `1 / rate` seconds apart) and
/// waits for it. Every call of a client shares one throttle, so a batch (200 ids in one run) is
/// spread over the time the limit allows instead of earning HTTP 429. A `Retry-After` the server
/// sends moves the endpoint's next slot to the time it names.
public final class RequestThrottle: Sendable {
    /// The rates kept.
    public let limits: APIRateLimits
    let nextSlot = Locked<[AppStoreServerEndpoint: ContinuousClock.Instant]>([:])

    /// Creates a throttle with no request sent yet.
    public init(limits: APIRateLimits) {
        self.limits = limits
    }

    /// Takes the next slot of `endpoint`: how long from `now` until it starts (zero when the
    /// endpoint is idle or not throttled).
    func reserve(_ endpoint: AppStoreServerEndpoint, now: ContinuousClock.Instant) -> Duration {
        guard let interval = limits.interval(endpoint) else { return .zero }
        let step = Duration.nanoseconds(Int64((min(interval, 86_400) * 1e9).rounded()))
        return nextSlot.withLock { slots in
            let slot = max(now, slots[endpoint] ?? now)
            slots[endpoint] = slot + step
            return slot - now
        }
    }

    /// Waits for the next slot of `endpoint`.
    /// - Throws: `CancellationError` when the task is cancelled while waiting.
    public func acquire(_ endpoint: AppStoreServerEndpoint) async throws(CancellationError) {
        let wait = reserve(endpoint, now: .now)
        guard wait > .zero else { return }
        do {
            try await Task.sleep(for: wait)
        } catch {
            throw CancellationError()
        }
    }

    /// No request to `endpoint` starts within `seconds` from now (a `Retry-After`): every later
    /// slot moves past it.
    public func holdOff(_ endpoint: AppStoreServerEndpoint, seconds: TimeInterval) {
        guard seconds.isFinite, seconds > 0 else { return }
        let until = ContinuousClock.now + .nanoseconds(Int64(min(seconds, 86_400) * 1e9))
        nextSlot.withLock { slots in slots[endpoint] = max(slots[endpoint] ?? until, until) }
    }
}
