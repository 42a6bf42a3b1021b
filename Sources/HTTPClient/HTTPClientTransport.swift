// The one way the package's clients (VerifyReceiptClient, AppStoreServerAPIClient) talk HTTP:
// HTTP/1.1 over connections of its own (TLS by OpenSSL), a deadline of their own, a response body
// bounded while it arrives, the identity encoding only (an encoded body is refused), no redirects,
// no cookies or cache.

import Dispatch
package import Foundation
import Internals

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP request a client sends.
package struct HTTPClientRequest: Sendable {
    /// `GET`, `POST`, …
    package var method: String
    /// Where it goes.
    package var url: URL
    /// Header fields, in order.
    package var headers: [(String, String)]
    /// The body, if any.
    package var body: [UInt8]?

    /// Creates a request.
    package init(method: String, url: URL, headers: [(String, String)], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// What one HTTP exchange ended with.
package enum HTTPClientOutcome: Sendable {
    /// A complete response: status, header fields (names lower-cased), body.
    case response(status: Int, headers: [String: String], body: [UInt8])
    /// The body grew past the limit (the transfer was stopped there).
    case tooLarge(status: Int, limit: Int)
    /// A transport failure.
    case failure(URLError.Code, String)
    /// No response within the deadline.
    case timedOut
    /// The calling task was cancelled.
    case cancelled
}

/// Sends requests over HTTP/1.1 connections of its own (plain, or TLS with OpenSSL against the
/// system's trusted roots and the URL's host), one connection per request. It asks for the
/// identity encoding and refuses any other, counts the body while it arrives and stops the transfer
/// at the limit (so the limit bounds memory whatever the server sends), refuses redirects (a bearer
/// token, a shared secret or a receipt is never sent to another URL; the redirect itself is the
/// answer), and keeps a deadline of its own. URLSession is not used: on Linux it always decodes
/// gzip, br and zstd and hands the decoded bytes on faster than a delegate can refuse them. No
/// proxy is used.
package final class HTTPClientTransport: Sendable {
    /// The longest wait for a whole exchange, in seconds.
    package let timeout: TimeInterval
    /// The largest response body accepted; a longer one stops the transfer there.
    package let maximumResponseSize: Int
    /// Whether ``maximumResponseSize`` also bounds every byte read before and around the body
    /// (status lines, header fields, chunk framing): past it the outcome is
    /// `.failure(.dataLengthExceedsMaximum, …)`. False by default: the head then has a bound of
    /// its own (64 KiB).
    package let limitIncludesHead: Bool

    /// Creates a transport.
    package init(timeout: TimeInterval, maximumResponseSize: Int, limitIncludesHead: Bool = false) {
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
        self.limitIncludesHead = limitIncludesHead
    }

    /// Sends one request and waits for its outcome (never longer than ``timeout``, or than
    /// `timeout` when given: a paging call's remaining time). `limit`, when given, lowers the
    /// body limit for this exchange (a paging call's remaining byte budget).
    package func send(_ spec: HTTPClientRequest, limit: Int? = nil, timeout: TimeInterval? = nil) async -> HTTPClientOutcome {
        if Task.isCancelled { return .cancelled }
        let exchange = Exchange(limit: min(maximumResponseSize, max(0, limit ?? maximumResponseSize)))
        let wait = min(self.timeout, max(0, timeout ?? self.timeout))
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<HTTPClientOutcome, Never>) in
                start(spec, exchange, timeout: wait) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            exchange.finish(.cancelled)
        }
    }

    /// Sends one request and blocks the calling thread until its outcome (never longer than
    /// ``timeout``). Uses no Swift concurrency, so it is safe on a thread that must not wait for
    /// the cooperative pool (a server's connection thread, a dispatch queue); never call it from
    /// an async context.
    package func sendBlocking(_ spec: HTTPClientRequest) -> HTTPClientOutcome {
        let result = Locked<HTTPClientOutcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        start(spec, Exchange(limit: maximumResponseSize), timeout: timeout) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .cancelled
    }

    /// Starts the exchange on a thread of its own; `completion` runs exactly once.
    private func start(
        _ spec: HTTPClientRequest, _ exchange: Exchange, timeout: TimeInterval, completion: @escaping @Sendable (HTTPClientOutcome) -> Void
    ) {
        exchange.begin(completion)
        let deadline = ContinuousClock.now.advanced(by: Deadline.duration(seconds: timeout))
        let protocolExchange = HTTP1Exchange(
            request: spec, limit: exchange.limit, readLimit: limitIncludesHead ? exchange.limit : nil, deadline: deadline
        ) { exchange.isDecided }
        let thread = Thread { exchange.finish(protocolExchange.run()) }
        thread.stackSize = 1 << 20
        thread.start()
        DispatchQueue.global().asyncAfter(deadline: .now() + Deadline.clampedSeconds(timeout)) { exchange.finish(.timedOut) }
    }
}

/// One exchange: calls its completion exactly once, with the response, the failure, or the
/// deadline or cancellation that came first.
final class Exchange: Sendable {
    struct State {
        var completion: (@Sendable (HTTPClientOutcome) -> Void)?
        var outcome: HTTPClientOutcome?
    }

    let limit: Int
    let state = Locked(State())

    init(limit: Int) { self.limit = limit }

    /// Whether the outcome is decided (the connection's I/O stops then).
    var isDecided: Bool { state.withLock { $0.outcome != nil } }

    func begin(_ completion: @escaping @Sendable (HTTPClientOutcome) -> Void) {
        let decided = state.withLock { state -> HTTPClientOutcome? in
            if state.outcome == nil { state.completion = completion }
            return state.outcome
        }
        if let decided { completion(decided) }
    }

    /// Decides the outcome if nothing did yet.
    func finish(_ outcome: HTTPClientOutcome) {
        let completion = state.withLock { state -> (@Sendable (HTTPClientOutcome) -> Void)?? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.completion = nil }
            return .some(state.completion)
        }
        guard let completion else { return }
        completion?(outcome)
    }
}

extension HTTPClientTransport {
    /// A `Content-Encoding` other than `identity` (which is the same as none), if the head has one.
    static func unrequestedEncoding(_ value: String?) -> String? {
        guard let value else { return nil }
        let codings = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        return codings.allSatisfy { $0 == "identity" } ? nil : value
    }
}
