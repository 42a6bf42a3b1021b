import Dispatch
public import Foundation
import Glibc
import Internals

/// A small HTTP/1.1 server on POSIX sockets, one thread per connection.
///
/// - **Threads**: one accept thread; each accepted connection gets its own thread, up to
///   ``HTTPServerConfiguration/maximumConnections`` at once, and at most
///   ``HTTPServerConfiguration/maximumConnectionsPerClient`` from one client address (more are
///   answered `503` and closed). The handler runs on the connection thread.
/// - **Parsing**: request line and header fields are checked (tokens, one Host for HTTP/1.1, no line
///   folding, no control characters); bodies are framed by Content-Length or chunked coding, never
///   both; chunk sizes are hex digits only, followed by nothing but RFC 9112 chunk extensions,
///   and every line of a chunked body ends in CRLF; `Expect: 100-continue` is honoured. Errors are
///   answered with 400, 405 (by handlers), 408, 411, 413, 417, 431, 501 or 505, and the connection
///   is closed. The byte-level parsing is ``HTTPRequestParser``, a state machine with no socket
///   (fuzzed by the `http` target); the connection feeds it the bytes as they arrive.
/// - **Limits and timeouts**: head size and field count, body size, a deadline per request, an idle
///   timeout between kept-alive requests, a write deadline (see ``HTTPServerConfiguration``).
/// - **Shutdown**: ``stop()`` answers every request whose bytes arrived before it: connections
///   waiting in the listen queue are accepted one last time, and each connection reads what is
///   already in its socket before it honours the stop. Then the listening socket closes, requests
///   in progress finish within the grace period (their responses say `Connection: close`), idle
///   connections close at once, and what remains is shut down. Hook it to SIGINT/SIGTERM with
///   ``stopOnSignals(_:)``.
///
/// Stateless between requests: several instances can run behind any load balancer.
public final class HTTPServer: Sendable {
    /// The configuration the server was created with.
    public let configuration: HTTPServerConfiguration
    let handler: any HTTPHandler

    struct State: ~Copyable {
        var started = false
        var stopping = false
        var stopped = false
        var listenFD: Int32 = -1
        var wakeRead: Int32 = -1
        var wakeWrite: Int32 = -1
        var port: UInt16 = 0
        var connectionFDs = Set<Int32>()
        var connectionsPerClient: [ClientAddress: Int] = [:]
        var statistics = HTTPServerStatistics()
    }

    let state = Locked(State())
    let connectionGroup = DispatchGroup()
    let lifetime = DispatchGroup()

    /// Creates a server; nothing happens until ``start()``.
    public init(configuration: HTTPServerConfiguration = HTTPServerConfiguration(), handler: some HTTPHandler) {
        self.configuration = configuration
        self.handler = handler
    }

    /// The bound port (useful with port 0); 0 before ``start()``.
    public var port: UInt16 { state.withLock { $0.port } }

    /// The counters so far.
    public var statistics: HTTPServerStatistics { state.withLock { $0.statistics } }

    /// Binds, listens and starts accepting on a background thread; returns once the socket listens.
    /// - Throws: ``HTTPServerError`` when the address cannot be resolved or bound, or the server was
    ///   already started.
    public func start() throws(HTTPServerError) {
        let alreadyStarted = state.withLock { state in
            defer { state.started = true }
            return state.started
        }
        guard !alreadyStarted else {
            throw HTTPServerError(operation: "start", errorNumber: nil, reason: "the server was already started")
        }
        for proxy in configuration.trustedProxies where ClientAddress(literal: proxy) == nil {
            state.withLock { $0.started = false }
            throw HTTPServerError(operation: "configuration", errorNumber: nil, reason: "trusted proxy '\(proxy)' is not an IP address")
        }
        let listenFD: Int32
        let port: UInt16
        do throws(HTTPServerError) {
            (listenFD, port) = try Self.listen(host: configuration.host, port: configuration.port, backlog: configuration.backlog)
        } catch {
            state.withLock { $0.started = false }
            throw error
        }
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            let error = errno
            close(listenFD)
            state.withLock { $0.started = false }
            throw HTTPServerError(operation: "pipe", errorNumber: error, reason: String(cString: strerror(error)))
        }
        for fd in pipeFDs { Self.setFlags(fd, nonBlocking: true) }
        state.withLock { state in
            state.listenFD = listenFD
            state.wakeRead = pipeFDs[0]
            state.wakeWrite = pipeFDs[1]
            state.port = port
        }
        lifetime.enter()
        let wakeRead = pipeFDs[0]
        let thread = Thread { [self] in
            acceptLoop(listenFD: listenFD, wakeFD: wakeRead)
        }
        thread.name = "HTTPServer accept"
        thread.start()
        configuration.logLine("listening on \(configuration.host):\(port)")
    }

    /// Starts a graceful shutdown and returns at once: no new connections; idle connections close;
    /// requests in progress finish within the grace period. Safe to call more than once, from any
    /// thread (for example a signal handler's dispatch queue).
    public func stop() {
        let wakeFD: Int32? = state.withLock { state in
            guard state.started, !state.stopping, state.wakeWrite >= 0 else { return nil }
            state.stopping = true
            return state.wakeWrite
        }
        guard let wakeFD else { return }
        // The byte stays unread: the pipe remains readable and wakes every poll that watches it.
        var byte: UInt8 = 1
        _ = write(wakeFD, &byte, 1)
    }

    /// Blocks until the server has stopped (returns at once if it never started).
    public func waitUntilStopped() {
        lifetime.wait()
    }

    /// Stops and waits until every connection is closed.
    public func shutdown() {
        stop()
        waitUntilStopped()
    }

    /// Whether ``stop()`` has been called.
    public var isStopping: Bool { state.withLock { $0.stopping } }

    /// Calls ``stop()`` when the process receives one of `signals` (default SIGINT and SIGTERM),
    /// whose default action is disabled. Keep the returned value alive for as long as the handling
    /// should last.
    public func stopOnSignals(_ signals: [Int32] = [SIGINT, SIGTERM]) -> SignalHandling {
        let queue = DispatchQueue(label: "HTTPServer signals")
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in
                configuration.logLine("signal \(number): shutting down")
                stop()
            }
            source.resume()
            sources.append(source)
        }
        return SignalHandling(sources: sources)
    }

    /// Keeps signal sources alive; cancels them when released.
    public final class SignalHandling {
        let sources: [any DispatchSourceSignal]

        init(sources: [any DispatchSourceSignal]) { self.sources = sources }

        deinit { for source in sources { source.cancel() } }
    }

    // MARK: - Listening and accepting

    static func setFlags(_ fd: Int32, nonBlocking: Bool) {
        let descriptorFlags = fcntl(fd, F_GETFD)
        if descriptorFlags >= 0 { _ = fcntl(fd, F_SETFD, descriptorFlags | FD_CLOEXEC) }
        if nonBlocking {
            let statusFlags = fcntl(fd, F_GETFL)
            if statusFlags >= 0 { _ = fcntl(fd, F_SETFL, statusFlags | O_NONBLOCK) }
        }
    }

    static func listen(host: String, port: UInt16, backlog: Int32) throws(HTTPServerError) -> (Int32, UInt16) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw HTTPServerError(
                operation: "resolve", errorNumber: nil, reason: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else {
            let error = errno
            throw HTTPServerError(operation: "socket", errorNumber: error, reason: String(cString: strerror(error)))
        }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let error = errno
            close(fd)
            throw HTTPServerError(operation: "bind", errorNumber: error, reason: "\(host):\(port): \(String(cString: strerror(error)))")
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = errno
            close(fd)
            throw HTTPServerError(operation: "listen", errorNumber: error, reason: String(cString: strerror(error)))
        }
        setFlags(fd, nonBlocking: true)
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let bound = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        var boundPort = port
        if bound == 0 {
            if Int32(storage.ss_family) == AF_INET {
                boundPort = withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
                }
            } else if Int32(storage.ss_family) == AF_INET6 {
                boundPort = withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
                }
            }
        }
        return (fd, boundPort)
    }

    func acceptLoop(listenFD: Int32, wakeFD: Int32) {
        let exempt = Set(configuration.trustedProxies.compactMap { ClientAddress(literal: $0) })
        while true {
            var fds = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                configuration.logLine("poll failed: \(String(cString: strerror(errno)))")
                break
            }
            if fds[1].revents != 0 {
                // Stopping: connections already in the listen queue may hold requests sent before
                // the stop; accept them one last time so those requests are answered.
                while acceptOne(listenFD: listenFD, wakeFD: wakeFD, exempt: exempt, draining: true) {}
                break
            }
            guard fds[0].revents & Int16(POLLIN) != 0 else { continue }
            _ = acceptOne(listenFD: listenFD, wakeFD: wakeFD, exempt: exempt, draining: false)
        }
        close(listenFD)
        // Graceful part: idle connections saw the wake pipe and are closing; busy ones may finish.
        if connectionGroup.wait(timeout: .now() + configuration.shutdownGracePeriod.dispatchInterval) == .timedOut {
            let remaining = state.withLock { state in
                for fd in state.connectionFDs { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
                return state.connectionFDs.count
            }
            configuration.logLine("grace period over: shut down \(remaining) connection(s)")
            connectionGroup.wait()
        }
        let pipes = state.withLock { state in
            state.stopped = true
            return (state.wakeRead, state.wakeWrite)
        }
        close(pipes.0)
        close(pipes.1)
        configuration.logLine("stopped")
        lifetime.leave()
    }

    /// Accepts one connection and starts its thread, or answers it `503`. Returns false when the
    /// listen queue is empty (or accepting failed).
    func acceptOne(listenFD: Int32, wakeFD: Int32, exempt: Set<ClientAddress>, draining: Bool) -> Bool {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listenFD, $0, &length) }
        }
        if fd < 0 {
            switch errno {
            case EINTR, ECONNABORTED, EPROTO: return true
            case EAGAIN, EWOULDBLOCK: return false
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                configuration.logLine("accept: \(String(cString: strerror(errno))); backing off")
                if !draining { usleep(10_000) }
                return false
            default:
                configuration.logLine("accept failed: \(String(cString: strerror(errno)))")
                return false
            }
        }
        Self.setFlags(fd, nonBlocking: true)
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let client = ClientAddress(storage)
        let peer = ClientAddress.text(of: storage)
        let perClient = configuration.maximumConnectionsPerClient
        let capped = perClient > 0 && !(client.map { exempt.contains($0) } ?? false)
        enum Admission { case admitted, full, clientFull }
        let admission = state.withLock { state -> Admission in
            guard state.statistics.activeConnections < configuration.maximumConnections, !state.stopping || draining else {
                state.statistics.rejectedConnections += 1
                return .full
            }
            if capped, let client, state.connectionsPerClient[client, default: 0] >= perClient {
                state.statistics.rejectedConnections += 1
                state.statistics.rejectedConnectionsPerClient += 1
                return .clientFull
            }
            if let client { state.connectionsPerClient[client, default: 0] += 1 }
            state.statistics.activeConnections += 1
            state.statistics.connections += 1
            state.connectionFDs.insert(fd)
            return .admitted
        }
        guard admission == .admitted else {
            if admission == .clientFull {
                configuration.logLine("503: \(client?.description ?? "a client") holds \(perClient) connections")
            }
            let busy = Array(
                "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n".utf8)
            _ = busy.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(fd)
            return true
        }
        connectionGroup.enter()
        let thread = Thread { [self] in
            var connection = HTTPConnection(fd: fd, wakeFD: wakeFD, server: self, peer: peer)
            connection.run()
            state.withLock { state in
                state.connectionFDs.remove(fd)
                state.statistics.activeConnections -= 1
                if let client {
                    let remaining = state.connectionsPerClient[client, default: 1] - 1
                    state.connectionsPerClient[client] = remaining > 0 ? remaining : nil
                }
            }
            close(fd)
            connectionGroup.leave()
        }
        thread.stackSize = 1 << 20
        thread.name = "HTTPServer connection"
        thread.start()
        return true
    }

    func countProtocolError() { state.withLock { $0.statistics.protocolErrors += 1 } }
    func countRequest() { state.withLock { $0.statistics.requests += 1 } }
}
