import Foundation
import Glibc
import Internals

/// An HTTP/1.1 server on 127.0.0.1 that answers what a test scripts, the way a hostile or broken
/// App Store Server API might: an encoded body the client did not ask for, a body that never
/// ends, page after page. Each connection has a thread of its own; ``stop()`` closes the
/// listening socket and every connection (also when a test ends early: `deinit` stops it).
final class HostileAPIServer: @unchecked Sendable {
    /// One answer.
    enum Reply: Sendable {
        /// This head (status line and header fields, no blank line) and body; `Content-Length`
        /// is added.
        case fixed(status: Int, headers: [(String, String)], body: [UInt8])
        /// This head, then zeros until the client goes away (no length: the body ends with the
        /// connection).
        case endless(status: Int, headers: [(String, String)])
        /// Waits, then answers.
        indirect case delayed(TimeInterval, Reply)
    }

    /// One request as it arrived: the request line and the header fields (names lower-cased).
    struct Request: Sendable {
        let line: String
        let headers: [String: String]
    }

    let script: @Sendable (Request, Int) -> Reply
    private let listener: Int32
    private(set) var port: UInt16 = 0
    private let state = Locked((stopped: false, connections: [Int32](), requests: [Request]()))

    /// Starts listening on a free port of 127.0.0.1; `script` answers the n-th request (0-based).
    init(_ script: @escaping @Sendable (Request, Int) -> Reply) throws {
        self.script = script
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else { throw TestFailure("bind/listen: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The requests received so far.
    var requests: [Request] { state.withLock { $0.requests } }

    /// Closes the listener and every connection.
    func stop() {
        let connections = state.withLock { state -> [Int32]? in
            guard !state.stopped else { return nil }
            state.stopped = true
            return state.connections
        }
        guard let connections else { return }
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in connections { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connections.append(fd)
                return true
            }
            guard accepted else {
                close(fd)
                return
            }
            let thread = Thread { [self] in
                serve(fd)
                state.withLock { $0.connections.removeAll { $0 == fd } }
                close(fd)
            }
            thread.start()
        }
    }

    /// Answers requests on one connection until it closes or an answer ends it.
    private func serve(_ fd: Int32) {
        var buffer: [UInt8] = []
        while let request = readRequest(fd, &buffer) {
            let index = state.withLock { state -> Int in
                state.requests.append(request)
                return state.requests.count - 1
            }
            guard answer(script(request, index), on: fd) else { return }
        }
    }

    /// Writes `reply`; false when the connection is done.
    private func answer(_ reply: Reply, on fd: Int32) -> Bool {
        switch reply {
        case .delayed(let seconds, let next):
            Thread.sleep(forTimeInterval: seconds)
            return answer(next, on: fd)
        case .fixed(let status, let headers, let body):
            let head = Self.head(status, headers + [("Content-Length", String(body.count))])
            return write(fd, head) && write(fd, body)
        case .endless(let status, let headers):
            guard write(fd, Self.head(status, headers + [("Connection", "close")])) else { return false }
            let zeros = [UInt8](repeating: 0x30, count: 64 << 10)
            while write(fd, zeros) {}
            return false
        }
    }

    private static func head(_ status: Int, _ headers: [(String, String)]) -> [UInt8] {
        Array(("HTTP/1.1 \(status) Scripted\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n").utf8)
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
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

    /// Reads one request head and its body (by `Content-Length`); nil when the connection ends.
    private func readRequest(_ fd: Int32, _ buffer: inout [UInt8]) -> Request? {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while true {
            if buffer.count >= 4, let end = (0...(buffer.count - 4)).first(where: { Array(buffer[$0..<($0 + 4)]) == separator }) {
                headEnd = end
                break
            }
            guard buffer.count < 1 << 20, fill(fd, &buffer) else { return nil }
        }
        guard let headEnd else { return nil }
        let lines = String(decoding: buffer[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = headers["content-length"].flatMap { Int($0) } ?? 0
        while buffer.count < headEnd + 4 + length {
            guard fill(fd, &buffer) else { return nil }
        }
        buffer.removeFirst(headEnd + 4 + length)
        return Request(line: lines.first ?? "", headers: headers)
    }

    private func fill(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }
}
