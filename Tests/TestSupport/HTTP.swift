package import Foundation
import Glibc
package import HTTPServer
import Internals

/// A response read off a socket by ``RawHTTPConnection``.
package struct RawHTTPResponse {
    package let status: Int
    package let headers: [String: String]
    package let body: [UInt8]

    package var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// A failure of ``RawHTTPConnection``, described.
package struct RawHTTPError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// A deliberately low-level HTTP/1.1 client over a blocking socket, able to send any bytes
/// (malformed requests included) and read responses framed by Content-Length.
///
/// `@unchecked Sendable`: a test may send from one thread while reading on another; ``send(_:)``
/// touches only the socket, reading only the buffer, and each is used from one thread at a time.
package final class RawHTTPConnection: @unchecked Sendable {
    package let fd: Int32
    package var buffer: [UInt8] = []

    /// Connects to `port` on 127.0.0.1, from `source` (another loopback address such as
    /// `127.0.0.2`, to act as a different client) when given.
    package init(port: UInt16, timeout: TimeInterval = 10, source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError("socket failed") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            // No close(fd) before throwing: the object is fully initialised, so deinit runs and
            // closes it; a second close could close a descriptor another thread just opened.
            guard bound == 0 else { throw RawHTTPError("bind to \(source) failed: errno \(errno)") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RawHTTPError("connect failed: errno \(errno)") }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Closes the socket, exactly once (also when the initialiser threw after creating it).
    deinit { close(fd) }

    /// Sends bytes; false if the peer has gone.
    @discardableResult
    package func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                raw.baseAddress.map { Glibc.send(fd, $0 + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) } ?? -1
            }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    @discardableResult
    package func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads more bytes into the buffer; false on EOF, error or timeout.
    package func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// Reads one response (skipping any `100 Continue`); `bodyless` for the answer to HEAD.
    package func readResponse(bodyless: Bool = false) throws -> RawHTTPResponse {
        while true {
            guard let headEnd = findHeadEnd() else {
                guard fill() else { throw RawHTTPError("connection closed before a complete response head") }
                continue
            }
            let head = String(decoding: buffer[0..<headEnd], as: UTF8.self)
            var lines = head.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst().split(separator: " ")
            guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw RawHTTPError("bad status line \(head)") }
            var headers: [String: String] = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            buffer.removeSubrange(0..<(headEnd + 4))
            if status == 100 { continue }
            let length = bodyless ? 0 : Int(headers["content-length"] ?? "0") ?? 0
            while buffer.count < length {
                guard fill() else { throw RawHTTPError("connection closed inside a body") }
            }
            let body = Array(buffer[0..<length])
            buffer.removeSubrange(0..<length)
            return RawHTTPResponse(status: status, headers: headers, body: body)
        }
    }

    package func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// Whether the server closed the connection (EOF) within the socket timeout.
    package func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, 0)
        return count == 0
    }

    /// One request with a body, as a well-behaved client sends it.
    package static func post(_ path: String, body: [UInt8], keepAlive: Bool = true) -> [UInt8] {
        Array(
            "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\(keepAlive ? "" : "Connection: close\r\n")\r\n"
                .utf8)
            + body
    }
}

/// A handler that answers with a closure and records what it was asked.
package final class ScriptedHandler: HTTPHandler {
    package let script: @Sendable (HTTPRequest) -> HTTPResponse
    private let recorded = Locked<[HTTPRequest]>([])

    package init(_ script: @escaping @Sendable (HTTPRequest) -> HTTPResponse) { self.script = script }

    package func respond(to request: HTTPRequest) -> HTTPResponse {
        recorded.withLock { $0.append(request) }
        return script(request)
    }

    package var requests: [HTTPRequest] { recorded.withLock { $0 } }
}

/// Runs blocking work (sockets, sleeps, waits) on a thread of its own and awaits it, so tests that
/// block never hold a thread of Swift's cooperative pool, which the async tests running in parallel
/// (and the client's continuations) need.
package func onThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do {
                continuation.resume(returning: try body())
            } catch {
                continuation.resume(throwing: error)
            }
        }
        thread.start()
    }
}

/// Starts a server on an ephemeral loopback port and stops it (off the cooperative pool) when the
/// body returns.
package func withServer<Result>(
    _ handler: some HTTPHandler, configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
    _ body: (HTTPServer) async throws -> Result
) async throws -> Result {
    var configuration = configuration
    configuration.host = "127.0.0.1"
    configuration.port = 0
    let server = HTTPServer(configuration: configuration, handler: handler)
    try server.start()
    do {
        let result = try await body(server)
        try await onThread { server.shutdown() }
        return result
    } catch {
        try await onThread { server.shutdown() }
        throw error
    }
}

/// `http://127.0.0.1:<port><path>` for a started `server`.
package func url(_ server: HTTPServer, _ path: String = "/verifyReceipt") -> URL {
    URL(string: "http://127.0.0.1:\(server.port)\(path)") ?? URL(fileURLWithPath: "/")
}

/// A local HTTP server on 127.0.0.1 (a free port) for tests that keep it across several steps,
/// stopped on a thread of its own (stopping waits for connections to close, which must not block
/// the cooperative pool).
package final class LocalServer: Sendable {
    /// The running server.
    package let server: HTTPServer

    /// Starts a server answering with `handler`.
    package init(_ handler: some HTTPHandler) throws {
        server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), handler: handler)
        try server.start()
    }

    /// `http://127.0.0.1:<port>/verifyReceipt`.
    package var url: URL { URL(string: "http://127.0.0.1:\(server.port)/verifyReceipt") ?? URL(fileURLWithPath: "/") }
    /// How many requests the server has answered.
    package var requests: Int { server.statistics.requests }

    /// Stops the server and waits for it, off the cooperative pool.
    package func shutdown() async {
        let server = self.server
        _ = try? await onThread { server.shutdown() }
    }
}
