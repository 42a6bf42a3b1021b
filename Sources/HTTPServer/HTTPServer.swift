import Dispatch
public import Foundation
import Glibc
import Internals

/// Answers requests for ``HTTPServer``. Called on the connection's own thread, possibly on many
/// threads at once, so implementations must be thread-safe (they are `Sendable`).
public protocol HTTPHandler: Sendable {
    /// The response to `request`.
    func respond(to request: HTTPRequest) -> HTTPResponse
}

/// Limits and timeouts of an ``HTTPServer``. Every limit bounds what one client can make the
/// server hold or wait for.
public struct HTTPServerConfiguration: Sendable {
    /// The address to bind: an IPv4 or IPv6 literal, or a host name. Default `127.0.0.1`.
    public var host: String
    /// The port; 0 picks a free one (read it from ``HTTPServer/port`` after starting).
    public var port: UInt16
    /// The listen backlog.
    public var backlog: Int32
    /// At most this many connections are served at once, each on its own thread; further
    /// connections get `503 Service Unavailable` and are closed.
    public var maximumConnections: Int
    /// At most this many of those connections from one client address (an IPv4 address, or the
    /// /64 prefix of an IPv6 address); further ones from that address get `503` while other
    /// clients are still served. 0 turns the cap off. Default 32 (a quarter of the default
    /// ``maximumConnections``), so one source can never hold every slot.
    ///
    /// Behind a reverse proxy every connection comes from the proxy's address: list it in
    /// ``trustedProxies`` (or set 0) and let the proxy limit its own clients.
    public var maximumConnectionsPerClient: Int
    /// Addresses (IPv4 or IPv6 literals) exempt from ``maximumConnectionsPerClient``: reverse
    /// proxies or load balancers that carry many clients' connections. They still count toward
    /// ``maximumConnections``. Forwarded-address headers are not used for the cap: it is applied
    /// when a connection is accepted, before any request on it is read.
    public var trustedProxies: [String]
    /// Largest accepted body; a larger declared or chunked body gets `413`.
    public var maximumBodySize: Int
    /// Largest request head (request line and header fields); beyond it, `431`.
    public var maximumHeaderSize: Int
    /// Most header fields; beyond it, `431`.
    public var maximumHeaderCount: Int
    /// Time allowed for a whole request (head and body) once its first byte arrived, and for the
    /// first byte of a new connection's first request. A slower client gets `408` and is closed.
    public var requestTimeout: Duration
    /// Time a kept-alive connection may wait for its next request before it is closed quietly.
    public var idleTimeout: Duration
    /// Time allowed for writing one response.
    public var writeTimeout: Duration
    /// Whether connections may be kept alive between requests (HTTP/1.1 default, or HTTP/1.0 with
    /// `Connection: keep-alive`).
    public var keepAlive: Bool
    /// Requests served on one connection before it is closed.
    public var maximumRequestsPerConnection: Int
    /// On ``HTTPServer/stop()``, how long requests in progress may take before their connections are
    /// shut down.
    public var shutdownGracePeriod: Duration
    /// Receives one line per notable event (start, stop, rejected connections, 4xx on bad HTTP),
    /// with every character of Internals' terminal escaping rule escaped (a line holds no line
    /// break or escape sequence from a request).
    public var log: (@Sendable (String) -> Void)?

    /// Creates a configuration; the defaults suit a small JSON service on loopback.
    public init(
        host: String = "127.0.0.1", port: UInt16 = 0, backlog: Int32 = 128, maximumConnections: Int = 128,
        maximumConnectionsPerClient: Int = 32, trustedProxies: [String] = [], maximumBodySize: Int = 4 << 20,
        maximumHeaderSize: Int = 16 << 10, maximumHeaderCount: Int = 100,
        requestTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(5), writeTimeout: Duration = .seconds(10),
        keepAlive: Bool = true, maximumRequestsPerConnection: Int = 1000, shutdownGracePeriod: Duration = .seconds(5),
        log: (@Sendable (String) -> Void)? = nil
    ) {
        self.host = host
        self.port = port
        self.backlog = backlog
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerClient = maximumConnectionsPerClient
        self.trustedProxies = trustedProxies
        self.maximumBodySize = maximumBodySize
        self.maximumHeaderSize = maximumHeaderSize
        self.maximumHeaderCount = maximumHeaderCount
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.writeTimeout = writeTimeout
        self.keepAlive = keepAlive
        self.maximumRequestsPerConnection = maximumRequestsPerConnection
        self.shutdownGracePeriod = shutdownGracePeriod
        self.log = log
    }
}

extension HTTPServerConfiguration {
    /// Hands `text` to ``log`` as one escaped line.
    func logLine(_ text: String) {
        log?(TerminalEscaping.escaped(text))
    }
}

/// Why the server could not start.
public struct HTTPServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failing step, for example `bind`.
    public let operation: String
    /// The `errno` value, when a system call failed.
    public let errorNumber: Int32?
    /// A sentence for people.
    public let reason: String

    /// `"<operation>: <reason>"`.
    public var description: String { "\(operation): \(reason)" }
}

/// Counters of an ``HTTPServer``, for monitoring and tests.
public struct HTTPServerStatistics: Sendable, Hashable {
    /// Connections accepted and served.
    public var connections = 0
    /// Connections turned away with 503: every slot of ``HTTPServerConfiguration/maximumConnections``
    /// was busy, or their client already held ``HTTPServerConfiguration/maximumConnectionsPerClient``.
    public var rejectedConnections = 0
    /// Of ``rejectedConnections``, those turned away because their client held its share.
    public var rejectedConnectionsPerClient = 0
    /// Requests handed to the handler.
    public var requests = 0
    /// Requests answered with a 4xx/5xx by the server itself (malformed HTTP, limits, timeouts).
    public var protocolErrors = 0
    /// Connections open now.
    public var activeConnections = 0
}

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

/// A client as ``HTTPServerConfiguration/maximumConnectionsPerClient`` counts it: an IPv4
/// address, or the /64 prefix of an IPv6 address (one host or subscriber usually holds a whole
/// /64). IPv4-mapped IPv6 addresses count as the IPv4 address.
package struct ClientAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 or 6.
    let family: UInt8
    /// IPv4: the address; IPv6: the first 64 bits.
    let bits: UInt64

    init(family: UInt8, bits: UInt64) {
        self.family = family
        self.bits = bits
    }

    /// The client of an accepted connection; `nil` for a family other than IPv4 and IPv6.
    init?(_ storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
            }
            self.init(family: 4, bits: UInt64(address))
        case AF_INET6:
            let bytes = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
            }
            self.init(ipv6: bytes)
        default:
            return nil
        }
    }

    /// The whole address of an accepted connection as text (`127.0.0.1`, `2001:db8::1`); nil for
    /// another family.
    static func text(of storage: sockaddr_storage) -> String? {
        var storage = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written: UnsafePointer<CChar>? = withUnsafePointer(to: &storage) { pointer in
            switch Int32(pointer.pointee.ss_family) {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    withUnsafePointer(to: address.pointee.sin_addr) { inet_ntop(AF_INET, $0, &buffer, socklen_t(buffer.count)) }
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    withUnsafePointer(to: address.pointee.sin6_addr) { inet_ntop(AF_INET6, $0, &buffer, socklen_t(buffer.count)) }
                }
            default:
                return nil
            }
        }
        guard written != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An IPv4 or IPv6 literal (`127.0.0.1`, `::1`, `::ffff:10.0.0.1`).
    package init?(literal: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            self.init(family: 4, bits: UInt64(UInt32(bigEndian: v4.s_addr)))
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, literal, &v6) == 1 else { return nil }
        self.init(ipv6: withUnsafeBytes(of: v6) { Array($0) })
    }

    init(ipv6 bytes: [UInt8]) {
        let mapped = bytes.count == 16 && bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        if mapped {
            self.init(family: 4, bits: bytes[12..<16].reduce(0) { $0 << 8 | UInt64($1) })
        } else {
            self.init(family: 6, bits: bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
        }
    }

    /// `127.0.0.2`, or `2001:db8:0:1::/64`.
    package var description: String {
        if family == 4 { return (0..<4).map { String(bits >> (24 - 8 * $0) & 0xFF) }.joined(separator: ".") }
        return (0..<4).map { String(bits >> (48 - 16 * $0) & 0xFFFF, radix: 16) }.joined(separator: ":") + "::/64"
    }
}

extension Duration {
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        return .nanoseconds(Int(clamping: seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
    }

    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}

/// One connection: reads requests, calls the handler, writes responses, until the peer closes,
/// a limit or timeout is hit, or the server stops (after answering what had already arrived).
struct HTTPConnection {
    let fd: Int32
    /// The peer's address as text (``HTTPRequest/remoteAddress``).
    let peer: String?
    let wakeFD: Int32
    let server: HTTPServer
    let config: HTTPServerConfiguration
    /// Received bytes not consumed yet.
    var buffer: [UInt8] = []
    /// The one receive buffer of the connection (not one per read).
    var scratch = [UInt8](repeating: 0, count: 16 << 10)
    /// The `Date` header value and the second it was made for (formatted once a second).
    var date: (second: Int, text: String) = (-1, "")

    init(fd: Int32, wakeFD: Int32, server: HTTPServer, peer: String?) {
        self.fd = fd
        self.peer = peer
        self.wakeFD = wakeFD
        self.server = server
        self.config = server.configuration
        buffer.reserveCapacity(16 << 10)
    }

    enum ReadOutcome {
        case data
        case closed
        case timedOut
        case stopping
    }

    enum ReceiveOutcome {
        case data
        case closed
        case empty
    }

    /// One `recv` of what the socket holds now, appended to the buffer.
    mutating func receive() -> ReceiveOutcome {
        while true {
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: scratch[0..<count])
                return .data
            }
            if count == 0 { return .closed }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? .empty : .closed
        }
    }

    /// Waits until the socket is readable (or the deadline passes, or — when `watchStop` is set — the
    /// server stops), then appends what can be read to the buffer. Bytes that have arrived always
    /// win over a stop: the stop is reported only when the socket has nothing to read.
    mutating func fill(until deadline: ContinuousClock.Instant, watchStop: Bool) -> ReadOutcome {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero { return .timedOut }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            if watchStop { fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(clamping: max(1, remaining.milliseconds)))
            if ready < 0 {
                if errno == EINTR { continue }
                return .closed
            }
            if ready == 0 { continue }
            if fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                switch receive() {
                case .data: return .data
                case .closed: return .closed
                case .empty: break
                }
            }
            if watchStop, fds[1].revents != 0 { return .stopping }
        }
    }

    /// Reads, without waiting, everything the socket already holds (up to the most one request
    /// may take): what a client sent before a stop is answered.
    mutating func drainArrived() {
        // The sum saturates at Int.max (limits come from the configuration, which may be huge).
        let limit = [config.maximumHeaderSize, config.maximumBodySize, 64 << 10].reduce(0) { total, part in
            total.addingReportingOverflow(part).overflow ? Int.max : total + part
        }
        while buffer.count < limit, case .data = receive() {}
    }

    /// Whether the buffer holds the start of another request (anything but empty lines).
    var hasRequestBytes: Bool { buffer.contains { $0 != 0x0D && $0 != 0x0A } }

    /// After a stop: whether a request had arrived (or was arriving) on this connection. Reads
    /// what the socket holds, and if that is nothing, waits a moment (25 ms) for bytes a client
    /// sent just before the stop that are still on their way through the network stack.
    mutating func requestArrivedBeforeStop() -> Bool {
        drainArrived()
        if hasRequestBytes { return true }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, 25) < 0, errno == EINTR {}
        drainArrived()
        return hasRequestBytes
    }

    /// Writes all of `bytes` before the deadline; false if the peer is gone or too slow.
    func send(_ bytes: [UInt8]) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: config.writeTimeout)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                offset += written
                continue
            }
            if written < 0, errno == EINTR { continue }
            guard written < 0, errno == EAGAIN || errno == EWOULDBLOCK else { return false }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            var fds = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
            if poll(&fds, 1, Int32(clamping: max(1, remaining.milliseconds))) < 0, errno != EINTR { return false }
        }
        return true
    }

    mutating func run() {
        var served = 0
        var first = true
        while true {
            // Honour a stop only after reading what has already arrived.
            if server.isStopping, !requestArrivedBeforeStop() { return }
            // Wait for the next request's first byte (idle), then read it within the request deadline.
            let waitDeadline = ContinuousClock.now.advanced(by: first ? config.requestTimeout : config.idleTimeout)
            first = false
            while true {
                // Empty lines before a request line are ignored (RFC 9112 section 2.2).
                if HTTPRequestParser.dropEmptyLines(&buffer) { break }
                switch fill(until: waitDeadline, watchStop: true) {
                case .data: continue
                case .stopping: if !requestArrivedBeforeStop() { return }
                case .closed, .timedOut: return
                }
            }
            let deadline = ContinuousClock.now.advanced(by: config.requestTimeout)
            var request: HTTPRequest
            do throws(HTTPRequestError) {
                request = try readRequest(deadline: deadline)
                request.remoteAddress = peer
            } catch {
                server.countProtocolError()
                if error.status != 0 {
                    config.logLine("\(error.status): \(error.reason)")
                    _ = send(encode(.text(error.reason, status: error.status), keepAlive: false, headOnly: false, minor: 1))
                }
                lingeringClose()
                return
            }
            server.countRequest()
            var response = server.handler.respond(to: request)
            let connectionTokens = request.headerTokens("connection")
            var keepAlive = config.keepAlive && !response.closesConnection
            if request.minorVersion == 0 {
                keepAlive = keepAlive && connectionTokens.contains("keep-alive")
            } else {
                keepAlive = keepAlive && !connectionTokens.contains("close")
            }
            served += 1
            if served >= config.maximumRequestsPerConnection { keepAlive = false }
            var closingForStop = false
            if keepAlive, server.isStopping, !requestArrivedBeforeStop() {
                // Stopping: the connection stays only for requests that have already arrived.
                keepAlive = false
                closingForStop = true
            }
            if request.method == "HEAD" { response.closesConnection = !keepAlive }
            let sent = send(encode(response, keepAlive: keepAlive, headOnly: request.method == "HEAD", minor: request.minorVersion))
            guard sent, keepAlive else {
                // A client that sends another request after the stop gets a clean end of stream,
                // not a reset that could discard this response before it reads it.
                if sent, closingForStop { lingeringClose() }
                return
            }
        }
    }

    /// Reads one request from the buffer and the socket: the parser takes the bytes as they
    /// arrive. Errors carry the status to answer with (0 means: close without answering).
    mutating func readRequest(deadline: ContinuousClock.Instant) throws(HTTPRequestError) -> HTTPRequest {
        var parser = HTTPRequestParser(limits: HTTPRequestLimits(config))
        while true {
            switch parser.parse(&buffer) {
            case .request(let request, _):
                return request
            case .failed(let error):
                throw error
            case .sendContinue:
                _ = send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
            case .needMoreBytes:
                switch fill(until: deadline, watchStop: false) {
                case .data: continue
                case .timedOut:
                    throw HTTPRequestError(
                        408, parser.isReadingBody ? "the request body was not received in time" : "the request was not received in time")
                case .closed, .stopping: throw HTTPRequestError(0, "closed")
                }
            }
        }
    }

    mutating func encode(_ response: HTTPResponse, keepAlive: Bool, headOnly: Bool, minor: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + (headOnly ? 0 : response.body.count))
        func append(_ text: String) { bytes.append(contentsOf: text.utf8) }
        append("HTTP/1.1 \(response.status) \(HTTPResponse.reasonPhrase(response.status))\r\n")
        for header in response.headers where !HTTPResponse.isReserved(header.name) {
            append(header.name)
            append(": ")
            append(header.value)
            append("\r\n")
        }
        append("Content-Length: \(response.body.count)\r\nDate: ")
        let now = Int(time(nil))
        if date.second != now { date = (now, HTTPDate.format(secondsSince1970: Int64(now))) }
        append(date.text)
        append("\r\n")
        if !keepAlive {
            append("Connection: close\r\n")
        } else if minor == 0 {
            append("Connection: keep-alive\r\n")
        }
        append("\r\n")
        if !headOnly { bytes += response.body }
        return bytes
    }

    /// After an error response: stop sending, read and discard what the client still sends for a
    /// short while (so it sees the response instead of a reset), then close.
    func lingeringClose() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(500))
        var discarded = 0
        var scratch = [UInt8](repeating: 0, count: 16 << 10)
        while discarded < 1 << 20 {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 1, Int32(clamping: max(1, remaining.milliseconds)))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return }
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                discarded += count
            } else if count < 0, errno == EAGAIN || errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
