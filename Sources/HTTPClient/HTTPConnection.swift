// One TCP connection, plain or TLS (OpenSSL), read and written without blocking past a deadline
// or an exchange that has already been decided.

import COpenSSL
import Foundation
import Glibc
import Internals

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Why a connection failed: the URLError code the clients map, and a sentence.
struct HTTPConnectionError: Error {
    let code: URLError.Code
    let reason: String

    init(_ code: URLError.Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}

/// A connected socket with optional TLS. Every wait is a `poll` of at most 50 ms, after which the
/// deadline and ``stop`` are looked at again, so a decided exchange (deadline, cancellation) ends
/// its I/O within 50 ms.
final class HTTPConnection {
    let fd: Int32
    private var ssl: OpaquePointer?
    private var context: OpaquePointer?
    let deadline: ContinuousClock.Instant
    let stop: @Sendable () -> Bool

    /// Connects to `host`:`port` (every address it resolves to, in turn), then runs the TLS
    /// handshake when `tls` (certificate chain to the system's roots, `host` checked against the
    /// certificate, TLS 1.2 or later).
    init(host: String, port: Int, tls: Bool, deadline: ContinuousClock.Instant, stop: @escaping @Sendable () -> Bool)
        throws(HTTPConnectionError)
    {
        self.deadline = deadline
        self.stop = stop
        fd = try Self.connect(host: host, port: port, deadline: deadline, stop: stop)
        guard tls else { return }
        do {
            try startTLS(host: host)
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    private var closed = false

    /// Frees the TLS state and closes the socket (once).
    func close() {
        guard !closed else { return }
        closed = true
        if let ssl { SSL_free(ssl) }
        if let context { SSL_CTX_free(context) }
        ssl = nil
        context = nil
        _ = Glibc.close(fd)
    }

    // MARK: - Waiting

    /// Waits until `fd` is ready for `events`; throws at the deadline or when stopped.
    private static func wait(_ fd: Int32, _ events: Int16, deadline: ContinuousClock.Instant, stop: () -> Bool) throws(HTTPConnectionError)
    {
        while true {
            if stop() { throw HTTPConnectionError(.cancelled, "the exchange ended") }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { throw HTTPConnectionError(.timedOut, "no response within the deadline") }
            // At most 50 ms per poll (to notice `stop`); the sum is taken before it is narrowed, so a
            // deadline a year away cannot overflow Int32.
            let leftMilliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            let milliseconds = Int32(min(50, max(1, leftMilliseconds)))
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw HTTPConnectionError(.networkConnectionLost, "poll: \(String(cString: strerror(errno)))") }
        }
    }

    private func wait(_ events: Int16) throws(HTTPConnectionError) {
        try Self.wait(fd, events, deadline: deadline, stop: stop)
    }

    // MARK: - Connecting

    private static func connect(
        host: String, port: Int, deadline: ContinuousClock.Instant, stop: () -> Bool
    ) throws(HTTPConnectionError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw HTTPConnectionError(
                .cannotFindHost, "cannot resolve \(TerminalEscaping.escaped(host)): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(
                address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastError = String(cString: strerror(errno))
                continue
            }
            if Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                lastError = String(cString: strerror(errno))
                _ = Glibc.close(fd)
                continue
            }
            do throws(HTTPConnectionError) {
                try wait(fd, Int16(POLLOUT), deadline: deadline, stop: stop)
            } catch {
                _ = Glibc.close(fd)
                throw error
            }
            var status: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            if getsockopt(fd, SOL_SOCKET, SO_ERROR, &status, &length) == 0, status == 0 { return fd }
            lastError = String(cString: strerror(status))
            _ = Glibc.close(fd)
        }
        throw HTTPConnectionError(.cannotConnectToHost, "cannot connect to \(TerminalEscaping.escaped(host)):\(port): \(lastError)")
    }

    private func startTLS(host: String) throws(HTTPConnectionError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw Self.tlsError("cannot create a TLS context") }
        self.context = context
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        rmshim_SSL_CTX_ignore_unexpected_eof(context)
        guard SSL_CTX_set_default_verify_paths(context) == 1, rmshim_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw Self.tlsError("cannot load the system's trusted roots")
        }
        guard let ssl = SSL_new(context) else { throw Self.tlsError("cannot create a TLS connection") }
        self.ssl = ssl
        guard SSL_set_fd(ssl, fd) == 1 else { throw Self.tlsError("cannot attach TLS to the socket") }
        let isAddress = host.contains(":") || host.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }
        if isAddress {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else { throw Self.tlsError("bad IP address") }
        } else {
            guard rmshim_SSL_set_tlsext_host_name(ssl, host) == 1, SSL_set1_host(ssl, host) == 1 else {
                throw Self.tlsError("cannot set the host name")
            }
        }
        while true {
            ERR_clear_error()
            let result = SSL_connect(ssl)
            if result == 1 { break }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ: try wait(Int16(POLLIN))
            case SSL_ERROR_WANT_WRITE: try wait(Int16(POLLOUT))
            default:
                let verify = SSL_get_verify_result(ssl)
                if verify != Int(X509_V_OK) {
                    let text = X509_verify_cert_error_string(verify).map { String(cString: $0) } ?? "error \(verify)"
                    throw HTTPConnectionError(.serverCertificateUntrusted, "the server's certificate did not verify: \(text)")
                }
                throw Self.tlsError("the TLS handshake failed")
            }
        }
    }

    private static func tlsError(_ what: String) -> HTTPConnectionError {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return HTTPConnectionError(.secureConnectionFailed, what) }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return HTTPConnectionError(
            .secureConnectionFailed, "\(what): \(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
    }

    // MARK: - Reading and writing

    /// Writes every byte.
    func write(_ bytes: [UInt8]) throws(HTTPConnectionError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.count - offset
            if let ssl {
                ERR_clear_error()
                let written = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress.map { $0 + offset }, Int32(min(count, 1 << 30))) }
                if written > 0 {
                    offset += Int(written)
                    continue
                }
                switch SSL_get_error(ssl, written) {
                case SSL_ERROR_WANT_READ: try wait(Int16(POLLIN))
                case SSL_ERROR_WANT_WRITE: try wait(Int16(POLLOUT))
                default: throw Self.tlsError("the connection was lost while sending")
                }
            } else {
                let written = bytes.withUnsafeBytes { raw in
                    raw.baseAddress.map { Glibc.send(fd, $0 + offset, count, Int32(MSG_NOSIGNAL)) } ?? -1
                }
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                    try wait(Int16(POLLOUT))
                } else {
                    throw HTTPConnectionError(.networkConnectionLost, "send: \(String(cString: strerror(errno)))")
                }
            }
        }
    }

    /// Reads what is there (at most `buffer.count` bytes) into `buffer`; 0 at the end of the
    /// stream.
    func read(into buffer: inout [UInt8]) throws(HTTPConnectionError) -> Int {
        while true {
            if stop() { throw HTTPConnectionError(.cancelled, "the exchange ended") }
            if let ssl {
                ERR_clear_error()
                let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
                if count > 0 { return Int(count) }
                switch SSL_get_error(ssl, count) {
                case SSL_ERROR_WANT_READ: try wait(Int16(POLLIN))
                case SSL_ERROR_WANT_WRITE: try wait(Int16(POLLOUT))
                case SSL_ERROR_ZERO_RETURN: return 0
                default: throw Self.tlsError("the connection was lost while receiving")
                }
            } else {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count >= 0 { return count }
                guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                    throw HTTPConnectionError(.networkConnectionLost, "recv: \(String(cString: strerror(errno)))")
                }
                try wait(Int16(POLLIN))
            }
        }
    }
}
