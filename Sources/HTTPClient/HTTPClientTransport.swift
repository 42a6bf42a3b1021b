// The one way the package's clients (VerifyReceiptClient, AppStoreServerAPIClient) talk HTTP:
// URLSession with a deadline of their own, a response body bounded while it arrives, the identity
// encoding only (an encoded body is refused), no redirects, no cookies or cache.

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

/// Sends requests through one `URLSession` with a delegate that bounds each body while it
/// arrives, refuses redirects (a bearer token, a shared secret or a receipt is never sent to
/// another URL; the redirect itself is the answer), and a deadline of the client's own (URLSession
/// on Linux truncates timeouts to whole seconds, so 0.5 s would mean "at once").
package final class HTTPClientTransport: Sendable {
    let session: URLSession
    let delegate: TransportDelegate
    /// The longest wait for a whole exchange, in seconds.
    package let timeout: TimeInterval
    /// The largest response body accepted; a longer one stops the transfer there.
    package let maximumResponseSize: Int

    /// Creates a transport with its own ephemeral session (no cookies, no cache).
    package init(timeout: TimeInterval, maximumResponseSize: Int) {
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
        let configuration = URLSessionConfiguration.ephemeral
        // A backstop only: ``send(_:)`` enforces ``timeout`` itself.
        configuration.timeoutIntervalForRequest = (timeout + 1).rounded(.up)
        configuration.timeoutIntervalForResource = (timeout + 1).rounded(.up)
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        delegate = TransportDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
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

    /// Starts the exchange; `completion` runs exactly once, on a URLSession or dispatch thread.
    private func start(
        _ spec: HTTPClientRequest, _ exchange: Exchange, timeout: TimeInterval, completion: @escaping @Sendable (HTTPClientOutcome) -> Void
    ) {
        var request = URLRequest(
            url: spec.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: (self.timeout + 1).rounded(.up))
        request.httpMethod = spec.method
        for (name, value) in spec.headers { request.setValue(value, forHTTPHeaderField: name) }
        // The body limit counts the bytes as they arrive: an encoded body (URLSession asks for
        // gzip, br and zstd by default) would be decoded first, so a 2 MB gzip answer could grow to
        // gigabytes. Only the identity encoding is asked for, and another one is refused.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if let body = spec.body { request.httpBody = Data(body) }
        exchange.begin(completion)
        let task = session.dataTask(with: request)
        delegate.register(exchange, for: task)
        exchange.attach(task)
        task.resume()
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { exchange.finish(.timedOut) }
    }
}

/// One exchange: collects the body up to its limit and calls its completion exactly once,
/// with the response, the failure, or the deadline or cancellation that came first.
final class Exchange: Sendable {
    struct State {
        var completion: (@Sendable (HTTPClientOutcome) -> Void)?
        var task: URLSessionDataTask?
        var outcome: HTTPClientOutcome?
        var status = 0
        var headers: [String: String] = [:]
        var body: [UInt8] = []
    }

    let limit: Int
    let state = Locked(State())

    init(limit: Int) { self.limit = limit }

    func begin(_ completion: @escaping @Sendable (HTTPClientOutcome) -> Void) {
        let decided = state.withLock { state -> HTTPClientOutcome? in
            if state.outcome == nil { state.completion = completion }
            return state.outcome
        }
        if let decided { completion(decided) }
    }

    func attach(_ task: URLSessionDataTask) {
        let decided = state.withLock { state -> Bool in
            state.task = task
            return state.outcome != nil
        }
        if decided { task.cancel() }
    }

    /// The head arrived: false when its declared length is already over the limit, or when the
    /// body is encoded (the client asked for `identity` only).
    func receive(status: Int, headers: [String: String]) -> Bool {
        let tooLarge = state.withLock { state -> Bool in
            state.status = status
            state.headers = headers
            if let length = headers["content-length"].flatMap({ Int($0) }), length > limit { return true }
            return false
        }
        if let encoding = Self.unrequestedEncoding(headers["content-encoding"]) {
            finish(
                .failure(
                    .cannotDecodeContentData,
                    "HTTP \(status) with Content-Encoding \(TerminalEscaping.escaped(String(encoding.prefix(64)))); the client asked for identity only"
                ))
            return false
        }
        if tooLarge { finish(.tooLarge(status: status, limit: limit)) }
        return !tooLarge
    }

    /// A `Content-Encoding` other than `identity` (which is the same as none), if the head has one.
    static func unrequestedEncoding(_ value: String?) -> String? {
        guard let value else { return nil }
        let codings = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        return codings.allSatisfy { $0 == "identity" } ? nil : value
    }

    /// Body bytes arrived: false when they take the body over the limit.
    func receive(_ data: Data) -> Bool {
        let over = state.withLock { state -> Int? in
            guard state.outcome == nil else { return nil }
            guard state.body.count + data.count <= limit else { return state.status }
            state.body.append(contentsOf: data)
            return nil
        }
        if let status = over {
            finish(.tooLarge(status: status, limit: limit))
            return false
        }
        return true
    }

    /// The transfer ended, with an error or not.
    func complete(_ error: (any Error)?) {
        if let error {
            let code = (error as? URLError)?.code ?? .unknown
            finish(.failure(code, "\(error)"))
            return
        }
        let response = state.withLock { state in HTTPClientOutcome.response(status: state.status, headers: state.headers, body: state.body)
        }
        finish(response)
    }

    /// Decides the outcome if nothing did yet; a deadline, cancellation or oversized body also
    /// cancels the HTTP task.
    func finish(_ outcome: HTTPClientOutcome) {
        let taken = state.withLock { state -> ((@Sendable (HTTPClientOutcome) -> Void)?, URLSessionDataTask?)? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.completion = nil }
            return (state.completion, state.task)
        }
        guard let (completion, task) = taken else { return }
        completion?(outcome)
        switch outcome {
        case .timedOut, .cancelled, .tooLarge, .failure: task?.cancel()
        case .response: break
        }
    }
}

/// Routes the session's callbacks to each task's exchange.
final class TransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    let exchanges = Locked<[Int: Exchange]>([:])

    func register(_ exchange: Exchange, for task: URLSessionTask) {
        exchanges.withLock { $0[task.taskIdentifier] = exchange }
    }

    func exchange(for task: URLSessionTask) -> Exchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let http = response as? HTTPURLResponse, let exchange = exchange(for: dataTask) else {
            completionHandler(.cancel)
            return
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        completionHandler(exchange.receive(status: http.statusCode, headers: headers) ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchange(for: dataTask) else { return }
        if !exchange.receive(data) { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let exchange = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        exchange?.complete(error)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // Never follow: the redirect response itself is the answer (an HTTP status error).
        completionHandler(nil)
    }
}
