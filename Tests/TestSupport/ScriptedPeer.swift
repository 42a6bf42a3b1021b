import Foundation
import Glibc
import Internals

/// A TCP server on 127.0.0.1 (a free port) that runs `serve` on a thread of its own for each
/// connection: the machinery of the tests' scripted peers (a hostile API server, a scripted OCSP
/// responder), which decide only what to answer. ``stop()`` (also run by `deinit`) closes the
/// listener and every open connection, whatever the test did.
package final class ScriptedPeer: @unchecked Sendable {
    // @unchecked: `listener` and `port` are set once in init; the rest is under `state`.
    private let serve: @Sendable (ScriptedPeerConnection) -> Void
    private let listener: Int32
    /// The port listened on.
    package private(set) var port: UInt16 = 0
    private let state = Locked((stopped: false, connections: [Int32](), accepted: 0))

    /// Starts listening; `serve` talks to each accepted connection, which is closed when it returns.
    package init(_ serve: @escaping @Sendable (ScriptedPeerConnection) -> Void) throws {
        self.serve = serve
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw RawHTTPError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            close(listener)
            throw RawHTTPError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { stop() }

    /// The connections accepted so far.
    package var acceptedConnections: Int { state.withLock { $0.accepted } }

    /// Closes the listener and every open connection (once).
    package func stop() {
        let open = state.withLock { state -> [Int32]? in
            guard !state.stopped else { return nil }
            state.stopped = true
            return state.connections
        }
        guard let open else { return }
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in open { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let kept = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connections.append(fd)
                state.accepted += 1
                return true
            }
            guard kept else {
                close(fd)
                return
            }
            Thread { [self] in
                serve(ScriptedPeerConnection(fd: fd))
                state.withLock { $0.connections.removeAll { $0 == fd } }
                close(fd)
            }.start()
        }
    }
}

/// One accepted connection of a ``ScriptedPeer``: blocking reads of requests and writes of bytes.
package struct ScriptedPeerConnection: Sendable {
    let fd: Int32

    /// One request as it arrived: the head (request line and header fields) as text, the body
    /// framed by `Content-Length`.
    package struct Request: Sendable {
        /// The request line and header fields, without the blank line.
        package let head: String
        /// The body (`Content-Length` bytes; none without the field).
        package let body: [UInt8]

        /// The request line.
        package var line: String { head.components(separatedBy: "\r\n").first ?? "" }

        /// The header fields, names lower-cased.
        package var headers: [String: String] {
            var fields: [String: String] = [:]
            for line in head.components(separatedBy: "\r\n").dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return fields
        }
    }

    /// Reads the next request, keeping in `buffer` what arrived after it (a pipelined request);
    /// nil when the connection ends first, or the head passes 1 MiB or the declared body 1 MiB.
    package func readRequest(_ buffer: inout [UInt8]) -> Request? {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if buffer.count >= 4 { headEnd = (0...(buffer.count - 4)).first { Array(buffer[$0..<($0 + 4)]) == separator } }
            if headEnd == nil { guard buffer.count < 1 << 20, receive(into: &buffer) else { return nil } }
        }
        guard let headEnd else { return nil }
        let request = Request(head: String(decoding: buffer[..<headEnd], as: UTF8.self), body: [])
        let length = request.headers["content-length"].flatMap { Int($0) } ?? 0
        guard (0...(1 << 20)).contains(length) else { return nil }
        while buffer.count < headEnd + 4 + length {
            guard receive(into: &buffer) else { return nil }
        }
        let body = Array(buffer[(headEnd + 4)..<(headEnd + 4 + length)])
        buffer.removeFirst(headEnd + 4 + length)
        return Request(head: request.head, body: body)
    }

    /// Writes all of `bytes`; false when the peer is gone.
    package func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                raw.baseAddress.map { Glibc.send(fd, $0 + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) } ?? -1
            }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Reads and drops everything until the peer closes the connection (or the server stops).
    package func drain() {
        var buffer: [UInt8] = []
        while receive(into: &buffer) { buffer.removeAll(keepingCapacity: true) }
    }

    private func receive(into buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }
}
