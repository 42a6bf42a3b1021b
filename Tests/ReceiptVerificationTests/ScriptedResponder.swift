import Foundation
import Glibc
import Internals
import TestSupport

/// A TCP server on 127.0.0.1 that answers each request with bytes a test scripts, verbatim (any
/// framing, malformed heads, a body without length), or not at all; then closes the connection.
/// Each connection has a thread of its own; ``stop()`` (also run by `deinit`) closes the listener
/// and every connection, whatever the test did.
final class ScriptedResponder: @unchecked Sendable {
    /// One answer.
    enum Reply: Sendable {
        /// These bytes, then the connection is closed.
        case bytes([UInt8])
        /// Nothing: the connection stays open until the client closes it or ``stop()``.
        case silence
    }

    /// One request as it arrived.
    struct Request: Sendable {
        /// The request line and header fields, as text.
        let head: String
        let body: [UInt8]
    }

    private let script: @Sendable (Int) -> Reply
    private let listener: Int32
    private(set) var port: UInt16 = 0
    private let state = Locked((stopped: false, connections: [Int32](), accepted: 0, requests: [Request]()))

    /// Starts listening; `script` answers the n-th request (0-based).
    init(_ script: @escaping @Sendable (Int) -> Reply) throws {
        self.script = script
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

    /// `http://127.0.0.1:<port>/ocsp`.
    var url: String { "http://127.0.0.1:\(port)/ocsp" }
    /// The requests read so far.
    var requests: [Request] { state.withLock { $0.requests } }
    /// The connections accepted so far.
    var connections: Int { state.withLock { $0.accepted } }

    /// Closes the listener and every connection (once).
    func stop() {
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
                serve(fd)
                state.withLock { $0.connections.removeAll { $0 == fd } }
                close(fd)
            }.start()
        }
    }

    private func serve(_ fd: Int32) {
        guard let request = readRequest(fd) else { return }
        let index = state.withLock { state -> Int in
            state.requests.append(request)
            return state.requests.count - 1
        }
        switch script(index) {
        case .bytes(let bytes):
            var offset = 0
            while offset < bytes.count {
                let sent = bytes.withUnsafeBytes { raw in
                    raw.baseAddress.map { Glibc.send(fd, $0 + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) } ?? -1
                }
                if sent < 0, errno == EINTR { continue }
                guard sent > 0 else { return }
                offset += sent
            }
        case .silence:
            var buffer: [UInt8] = []
            while receive(fd, into: &buffer) {}
        }
    }

    /// Reads one request head and its body (by `Content-Length`); nil when the connection ends.
    private func readRequest(_ fd: Int32) -> Request? {
        var buffer: [UInt8] = []
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            guard buffer.count < 1 << 20, receive(fd, into: &buffer) else { return nil }
            if buffer.count >= 4 { headEnd = (0...(buffer.count - 4)).first { Array(buffer[$0..<($0 + 4)]) == separator } }
        }
        guard let headEnd else { return nil }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        let lengthLine = head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
        let length = lengthLine.flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
        guard (0...(1 << 20)).contains(length) else { return nil }
        while buffer.count < headEnd + 4 + length {
            guard receive(fd, into: &buffer) else { return nil }
        }
        return Request(head: head, body: Array(buffer[(headEnd + 4)..<(headEnd + 4 + length)]))
    }

    private func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }
}
