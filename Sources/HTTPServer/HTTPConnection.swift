import Dispatch
import Foundation
import Glibc
import Internals

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
