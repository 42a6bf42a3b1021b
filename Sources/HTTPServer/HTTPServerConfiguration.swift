import Dispatch
import Foundation
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
