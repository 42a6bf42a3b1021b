public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why an OCSP exchange gave no response bytes.
public struct OCSPTransportFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// A sentence for people (never holds response bytes).
    public let reason: String
    /// Whether trying again later could succeed (a refused connection, a timeout, a 5xx status);
    /// false for answers that will not change (a redirect, a 4xx status, an unusable URL).
    public let isRetryable: Bool

    /// Creates a failure.
    public init(_ reason: String, retryable: Bool) {
        self.reason = reason
        isRetryable = retryable
    }

    /// The reason.
    public var description: String { reason }
}

/// How OCSP requests reach a responder: one POST of `application/ocsp-request` bytes, answered by
/// the response body. Called synchronously from verification, possibly on many threads at once.
public protocol OCSPTransport: Sendable {
    /// POSTs `request` to `url` and returns the response body of a `200` answer.
    func post(_ request: [UInt8], to url: String) -> Result<[UInt8], OCSPTransportFailure>
}

/// A small blocking HTTP/1.0 client for OCSP over plain `http://` URLs (RFC 6960's transport,
/// which Apple's responders use): one connection per request, a deadline for the whole exchange
/// (connecting, sending, reading), a cap on the response size, redirects never followed (a 3xx is
/// a failure), nothing cached or kept alive. Host names are resolved with `getaddrinfo`, whose own
/// resolver timeouts apply.
public struct OCSPHTTPTransport: OCSPTransport {
    /// The longest a whole exchange may take, in seconds.
    public var timeout: TimeInterval
    /// The largest response (headers and body) read; a longer one is a failure.
    public var maximumResponseSize: Int

    /// Creates a transport (5 s, 64 KiB by default: an OCSP response for one certificate is a
    /// few kilobytes).
    public init(timeout: TimeInterval = 5, maximumResponseSize: Int = 65_536) {
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
    }

    /// POSTs `request` to `url`.
    public func post(_ request: [UInt8], to url: String) -> Result<[UInt8], OCSPTransportFailure> {
        let target: HTTPTarget
        switch HTTPTarget.parse(url) {
        case .success(let parsed): target = parsed
        case .failure(let failure): return .failure(failure)
        }
        let deadline = Date().addingTimeInterval(max(0.001, timeout))
        let socket: Int32
        switch connect(to: target, before: deadline) {
        case .success(let descriptor): socket = descriptor
        case .failure(let failure): return .failure(failure)
        }
        defer { close(socket) }
        var head = "POST \(target.path) HTTP/1.0\r\nHost: \(target.hostHeader)\r\n"
        head += "Content-Type: application/ocsp-request\r\nAccept: application/ocsp-response\r\n"
        head += "Content-Length: \(request.count)\r\nConnection: close\r\n\r\n"
        if let failure = send(Array(head.utf8) + request, on: socket, before: deadline) { return .failure(failure) }
        let received: [UInt8]
        switch receive(on: socket, before: deadline) {
        case .success(let bytes): received = bytes
        case .failure(let failure): return .failure(failure)
        }
        return HTTPTarget.body(of: received, from: target.display)
    }

    private func connect(to target: HTTPTarget, before deadline: Date) -> Result<Int32, OCSPTransportFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(target.host, String(target.port), &hints, &list)
        guard resolved == 0, let first = list else {
            return .failure(OCSPTransportFailure("cannot resolve \(target.display)", retryable: true))
        }
        defer { freeaddrinfo(list) }
        var lastReason = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            let descriptor = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            guard descriptor >= 0 else { continue }
            let flags = fcntl(descriptor, F_GETFL, 0)
            _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
            if Glibc.connect(descriptor, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return .success(descriptor) }
            guard errno == EINPROGRESS else {
                lastReason = String(cString: strerror(errno))
                close(descriptor)
                continue
            }
            guard wait(for: Int16(POLLOUT), on: descriptor, before: deadline) else {
                close(descriptor)
                return .failure(OCSPTransportFailure("connecting to \(target.display) timed out", retryable: true))
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 { return .success(descriptor) }
            lastReason = String(cString: strerror(error))
            close(descriptor)
        }
        return .failure(OCSPTransportFailure("cannot connect to \(target.display): \(lastReason)", retryable: true))
    }

    private func send(_ bytes: [UInt8], on socket: Int32, before deadline: Date) -> OCSPTransportFailure? {
        var offset = 0
        while offset < bytes.count {
            guard wait(for: Int16(POLLOUT), on: socket, before: deadline) else {
                return OCSPTransportFailure("sending the request timed out", retryable: true)
            }
            let sent = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.send(socket, base + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                return OCSPTransportFailure("sending the request failed: \(String(cString: strerror(errno)))", retryable: true)
            }
            offset += sent
        }
        return nil
    }

    private func receive(on socket: Int32, before deadline: Date) -> Result<[UInt8], OCSPTransportFailure> {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8_192)
        while true {
            guard wait(for: Int16(POLLIN), on: socket, before: deadline) else {
                return .failure(OCSPTransportFailure("the responder did not answer in time", retryable: true))
            }
            let count = chunk.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return recv(socket, base, buffer.count, 0)
            }
            if count == 0 { return .success(received) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                return .failure(OCSPTransportFailure("reading the answer failed: \(String(cString: strerror(errno)))", retryable: true))
            }
            guard received.count + count <= maximumResponseSize else {
                return .failure(OCSPTransportFailure("the answer exceeds \(maximumResponseSize) bytes", retryable: false))
            }
            received += chunk[0..<count]
        }
    }

    /// Waits until `socket` is ready for `events` or the deadline passes; false on timeout.
    private func wait(for events: Int16, on socket: Int32, before deadline: Date) -> Bool {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return false }
        }
    }
}

/// An `http://host[:port]/path` URL, as OCSP responders are named.
struct HTTPTarget {
    let host: String
    let port: UInt16
    let path: String
    /// `host:port`, for the Host header.
    let hostHeader: String
    /// The URL for messages.
    let display: String

    static func parse(_ url: String) -> Result<HTTPTarget, OCSPTransportFailure> {
        let display = VerificationText.escaped(url)
        guard url.utf8.count <= 2_048, url.lowercased().hasPrefix("http://") else {
            return .failure(OCSPTransportFailure("the OCSP URL \(display) is not an http:// URL", retryable: false))
        }
        let rest = url.dropFirst(7)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var path = String(rest.dropFirst(authority.count).prefix { $0 != "#" })
        if path.isEmpty { path = "/" } else if !path.hasPrefix("/") { path = "/" + path }
        guard !authority.contains("@"), !path.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" }) else {
            return .failure(OCSPTransportFailure("the OCSP URL \(display) is not usable", retryable: false))
        }
        var host = String(authority)
        var port: UInt16 = 80
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else {
                return .failure(OCSPTransportFailure("the OCSP URL \(display) has an unterminated IPv6 address", retryable: false))
            }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = UInt16(after.dropFirst()), value > 0 else {
                    return .failure(OCSPTransportFailure("the OCSP URL \(display) has an invalid port", retryable: false))
                }
                port = value
            } else if !after.isEmpty {
                return .failure(OCSPTransportFailure("the OCSP URL \(display) is not usable", retryable: false))
            }
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":") {
            guard let value = UInt16(host[host.index(after: colon)...]), value > 0 else {
                return .failure(OCSPTransportFailure("the OCSP URL \(display) has an invalid port", retryable: false))
            }
            port = value
            host = String(host[..<colon])
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:_".contains($0)) }) else {
            return .failure(OCSPTransportFailure("the OCSP URL \(display) has no usable host", retryable: false))
        }
        let hostHeader = (host.contains(":") ? "[\(host)]" : host) + (port == 80 ? "" : ":\(port)")
        return .success(HTTPTarget(host: host, port: port, path: path, hostHeader: hostHeader, display: display))
    }

    /// The body of an HTTP/1.x `200` answer (framed by Content-Length when given, else by the end
    /// of the connection).
    static func body(of bytes: [UInt8], from display: String) -> Result<[UInt8], OCSPTransportFailure> {
        guard let end = headerEnd(bytes) else {
            return .failure(OCSPTransportFailure("\(display) sent no complete HTTP answer", retryable: true))
        }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1."), statusLine.count >= 12,
            let status = Int(statusLine.dropFirst(9).prefix(3))
        else {
            return .failure(OCSPTransportFailure("\(display) did not answer HTTP", retryable: false))
        }
        guard status == 200 else {
            let kind = (300..<400).contains(status) ? " (redirects are not followed)" : ""
            return .failure(OCSPTransportFailure("\(display) answered HTTP \(status)\(kind)", retryable: status >= 500 || status == 429))
        }
        var body = Array(bytes[(end + 4)...])
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { continue }
            guard let length = Int(parts[1].trimmingCharacters(in: .whitespaces)), length >= 0, length <= body.count else {
                return .failure(OCSPTransportFailure("\(display) sent a truncated or inconsistent answer", retryable: true))
            }
            body = Array(body[0..<length])
        }
        return .success(body)
    }

    /// The index of the `\r\n\r\n` ending the header, if any.
    static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}
