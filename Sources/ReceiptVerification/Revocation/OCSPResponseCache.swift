public import Foundation
import Internals
import ReceiptCrypto

/// A verified OCSP answer about one certificate, as the cache keeps it.
struct OCSPCachedAnswer: Sendable {
    let status: OCSPCertificateStatus
    let thisUpdate: Date
    let nextUpdate: Date?
    let signer: String
    let responderURL: String?
    let source: RevocationSource
}

/// What a lookup (or the fetch behind it) ended with.
enum OCSPLookup: Sendable {
    case answer(OCSPCachedAnswer)
    case unavailable(reason: String, retryable: Bool, responderURL: String?)
}

/// A bounded, thread-safe cache of verified OCSP answers, shared by every verifier whose
/// ``OCSPChecker`` uses it (``shared`` by default), so that a server asks about each certificate
/// about once per response lifetime, not once per token.
///
/// - **Key**: the certificate and its issuer, byte for byte (what an OCSP certificate id names:
///   the issuer's name and key, and the serial number).
/// - **Entry**: the verified answer (status, `thisUpdate`, `nextUpdate`, signer, responder URL).
///   Only answers that verified and were fresh when fetched are stored, and only those with a
///   `nextUpdate`.
/// - **Hit**: an entry serves a validation time `t` when `thisUpdate ≤ t ≤ nextUpdate` and it was
///   stored less than ``maximumAge`` ago (a bound of its own, whatever `nextUpdate` says).
/// - **One request**: while one verification fetches the answer about a certificate, others that
///   need it wait for that fetch instead of sending their own.
/// - **Size**: at most ``capacity`` entries; inserting into a full cache evicts the least recently
///   used one.
public final class OCSPResponseCache: Sendable {
    /// Counters for tests and monitoring.
    public struct Statistics: Sendable, Hashable {
        /// Lookups answered by a stored entry.
        public var hits = 0
        /// Fetches made (network requests, or evaluations of given responses).
        public var fetches = 0
        /// Lookups that waited for another verification's fetch.
        public var joined = 0
        /// Entries evicted because the cache was full.
        public var evictions = 0
        /// Entries held.
        public var count = 0
    }

    /// The cache checkers use unless given another one.
    public static let shared = OCSPResponseCache()

    /// The most entries held.
    public let capacity: Int
    /// The longest an entry is used after it was stored, in seconds, whatever its `nextUpdate`.
    public let maximumAge: TimeInterval

    struct Key: Hashable, Sendable {
        let certificate: [UInt8]
        let issuer: [UInt8]

        /// Hashes the lengths and the last bytes (signature bits) of both encodings; equality
        /// compares them whole.
        func hash(into hasher: inout Hasher) {
            hasher.combine(certificate.count)
            hasher.combine(issuer.count)
            for byte in certificate.suffix(16) { hasher.combine(byte) }
            for byte in issuer.suffix(8) { hasher.combine(byte) }
        }
    }

    final class Flight: @unchecked Sendable {
        // @unchecked: `outcome` is only touched while `condition` is locked.
        private let condition = NSCondition()
        private var outcome: OCSPLookup?

        func finish(_ value: OCSPLookup) {
            condition.lock()
            outcome = value
            condition.broadcast()
            condition.unlock()
        }

        /// The fetch's outcome, or nil when it did not end before `deadline`.
        func wait(until deadline: Date) -> OCSPLookup? {
            condition.lock()
            defer { condition.unlock() }
            while outcome == nil {
                if !condition.wait(until: deadline) { break }
            }
            return outcome
        }
    }

    struct Entry {
        let answer: OCSPCachedAnswer
        let storedAt: Date
        var lastUse: UInt64
    }

    struct State {
        var entries: [Key: Entry] = [:]
        var flights: [Key: Flight] = [:]
        var clock: UInt64 = 0
        var statistics = Statistics()
    }

    private let state = Locked(State())

    /// Creates an empty cache of at most `capacity` entries (at least 1), each used for at most
    /// `maximumAge` seconds.
    public init(capacity: Int = 1_024, maximumAge: TimeInterval = 86_400) {
        self.capacity = max(1, capacity)
        self.maximumAge = max(0, maximumAge)
    }

    /// The counters so far.
    public var statistics: Statistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.count = state.entries.count
            return statistics
        }
    }

    /// Forgets every entry.
    public func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }

    /// How far a response's `thisUpdate` may lie after the validation time (5 minutes, as
    /// OpenSSL's `OCSP_check_validity` allows): a responder writes whole seconds, so an answer made
    /// during a request can be dated a fraction of a second after the time read before it, and
    /// clocks drift. `nextUpdate` has no tolerance.
    public static let thisUpdateTolerance: TimeInterval = 300

    /// Whether `answer` may serve validation time `time`.
    static func isFresh(_ answer: OCSPCachedAnswer, at time: Date) -> Bool {
        guard let next = answer.nextUpdate else { return false }
        return answer.thisUpdate <= time.addingTimeInterval(thisUpdateTolerance) && time <= next
    }

    /// The answer for `key` at `time`: a fresh stored entry, else the outcome of the fetch in
    /// flight for it (waited for until `deadline`), else the outcome of `fetch`, stored when it is
    /// a fresh answer.
    func lookup(_ key: Key, at time: Date, waitingUntil deadline: Date, fetch: () -> OCSPLookup) -> OCSPLookup {
        enum Step {
            case hit(OCSPCachedAnswer)
            case join(Flight)
            case lead(Flight)
        }
        let now = Date()
        let step: Step = state.withLock { state in
            state.clock &+= 1
            if let entry = state.entries[key] {
                if now.timeIntervalSince(entry.storedAt) <= maximumAge, Self.isFresh(entry.answer, at: time) {
                    state.entries[key]?.lastUse = state.clock
                    state.statistics.hits += 1
                    return .hit(entry.answer)
                }
                if now.timeIntervalSince(entry.storedAt) > maximumAge { state.entries[key] = nil }
            }
            if let flight = state.flights[key] {
                state.statistics.joined += 1
                return .join(flight)
            }
            let flight = Flight()
            state.flights[key] = flight
            state.statistics.fetches += 1
            return .lead(flight)
        }
        switch step {
        case .hit(let answer):
            return .answer(answer.with(source: answer.source == .network ? .cache : answer.source))
        case .join(let flight):
            guard let outcome = flight.wait(until: deadline) else {
                return .unavailable(reason: "another verification's request for it did not end in time", retryable: true, responderURL: nil)
            }
            if case .answer(let answer) = outcome, !Self.isFresh(answer, at: time) {
                return .unavailable(
                    reason: "the answer fetched is not fresh at this validation time", retryable: false, responderURL: answer.responderURL)
            }
            if case .answer(let answer) = outcome {
                return .answer(answer.with(source: answer.source == .network ? .cache : answer.source))
            }
            return outcome
        case .lead(let flight):
            let outcome = fetch()
            state.withLock { state in
                state.flights[key] = nil
                guard case .answer(let answer) = outcome, answer.nextUpdate != nil else { return }
                if state.entries[key] == nil, state.entries.count >= capacity,
                    let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
                {
                    state.entries[oldest] = nil
                    state.statistics.evictions += 1
                }
                state.entries[key] = Entry(answer: answer, storedAt: now, lastUse: state.clock)
            }
            flight.finish(outcome)
            return outcome
        }
    }
}

extension OCSPCachedAnswer {
    func with(source: RevocationSource) -> OCSPCachedAnswer {
        OCSPCachedAnswer(
            status: status, thisUpdate: thisUpdate, nextUpdate: nextUpdate, signer: signer, responderURL: responderURL, source: source)
    }
}
