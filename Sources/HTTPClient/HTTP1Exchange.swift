// One HTTP/1.1 request and its response over a connection of its own (`Connection: close`), the
// body counted while it arrives: the identity encoding only, so the bytes counted are the bytes
// the response holds, and the transfer stops at the limit.

import Foundation
import Internals

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Runs one exchange; the outcome is what ``HTTPClientTransport`` reports.
struct HTTP1Exchange {
    let request: HTTPClientRequest
    let limit: Int
    /// When set, the most bytes read off the connection in all (every head, chunk framing and
    /// body); one more fails the exchange with `.dataLengthExceedsMaximum`.
    let readLimit: Int?
    let deadline: ContinuousClock.Instant
    let stop: @Sendable () -> Bool

    /// The largest response head (status line and header fields) read.
    static let maximumHeadSize = 64 << 10

    func run() -> HTTPClientOutcome {
        do throws(HTTPConnectionError) {
            return try exchange()
        } catch {
            switch error.code {
            case .timedOut: return .timedOut
            case .cancelled: return .cancelled
            default: return .failure(error.code, error.reason)
            }
        }
    }

    private func exchange() throws(HTTPConnectionError) -> HTTPClientOutcome {
        let url = request.url
        let scheme = url.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            throw HTTPConnectionError(.unsupportedURL, "\(Redaction.redacted(url.absoluteString)) is not an http or https URL")
        }
        let tls = scheme == "https"
        let port = url.port ?? (tls ? 443 : 80)
        let connection = try HTTPConnection(host: host, port: port, tls: tls, deadline: deadline, stop: stop)
        defer { connection.close() }
        try connection.write(try requestBytes(host: host, port: port, tls: tls))
        var reader = ResponseReader(connection: connection, readLimit: readLimit)
        var head = try reader.head()
        // 1xx answers (100 Continue, 103 Early Hints) come before the response.
        while (100..<200).contains(head.status) { head = try reader.head() }
        if let encoding = HTTPClientTransport.unrequestedEncoding(head.headers["content-encoding"]) {
            return .failure(
                .cannotDecodeContentData,
                "HTTP \(head.status) with Content-Encoding \(TerminalEscaping.escaped(String(encoding.prefix(64)))); the client asked for identity only"
            )
        }
        if request.method == "HEAD" || head.status == 204 || head.status == 304 {
            return .response(status: head.status, headers: head.headers, body: [])
        }
        if let coding = head.headers["transfer-encoding"] {
            let codings = coding.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard codings == ["chunked"] else {
                return .failure(
                    .cannotDecodeContentData,
                    "HTTP \(head.status) with Transfer-Encoding \(TerminalEscaping.escaped(String(coding.prefix(64)))); only chunked is read"
                )
            }
            guard let body = try reader.chunkedBody(limit: limit) else { return .tooLarge(status: head.status, limit: limit) }
            return .response(status: head.status, headers: head.headers, body: body)
        }
        if let text = head.headers["content-length"] {
            guard let length = Int(text.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                throw HTTPConnectionError(
                    .badServerResponse, "Content-Length \(TerminalEscaping.escaped(String(text.prefix(64)))) is not a length")
            }
            guard length <= limit else { return .tooLarge(status: head.status, limit: limit) }
            return .response(status: head.status, headers: head.headers, body: try reader.body(length: length))
        }
        guard let body = try reader.bodyToEnd(limit: limit) else { return .tooLarge(status: head.status, limit: limit) }
        return .response(status: head.status, headers: head.headers, body: body)
    }

    /// The request's bytes: request line, `Host`, the caller's header fields, `Accept-Encoding:
    /// identity`, `Connection: close`, `Content-Length` and the body.
    private func requestBytes(host: String, port: Int, tls: Bool) throws(HTTPConnectionError) -> [UInt8] {
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        let hostField = host.contains(":") ? "[\(host)]" : host
        let defaultPort = tls ? 443 : 80
        var fields: [(String, String)] = [("Host", port == defaultPort ? hostField : "\(hostField):\(port)")]
        let reserved: Set<String> = ["host", "accept-encoding", "connection", "content-length", "transfer-encoding"]
        fields += request.headers.filter { !reserved.contains($0.0.lowercased()) }
        fields.append(("Accept-Encoding", "identity"))
        fields.append(("Connection", "close"))
        if let body = request.body {
            fields.append(("Content-Length", String(body.count)))
        } else if ["POST", "PUT", "PATCH"].contains(request.method) {
            fields.append(("Content-Length", "0"))
        }
        var text = "\(request.method) \(target) HTTP/1.1\r\n"
        for (name, value) in fields {
            let unsafe = (name + value).unicodeScalars.contains { $0 == "\r" || $0 == "\n" || $0 == "\0" }
            guard !unsafe, !name.isEmpty, !name.contains(":") else {
                throw HTTPConnectionError(.badURL, "the header field \(TerminalEscaping.escaped(name)) cannot be sent")
            }
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8) + (request.body ?? [])
    }
}

/// Reads a response off a connection: its head, then its body by the framing the head says.
struct ResponseReader {
    let connection: HTTPConnection
    /// The most bytes read in all, if bounded.
    let readLimit: Int?
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    /// The bytes read so far.
    private var received = 0

    init(connection: HTTPConnection, readLimit: Int? = nil) {
        self.connection = connection
        self.readLimit = readLimit
    }

    /// Reads more bytes; false at the end of the stream.
    private mutating func fill() throws(HTTPConnectionError) -> Bool {
        let count = try connection.read(into: &chunk)
        guard count > 0 else { return false }
        received += count
        if let readLimit, received > readLimit {
            throw HTTPConnectionError(.dataLengthExceedsMaximum, "the response is larger than \(readLimit) bytes")
        }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }

    /// The index of the first CRLF at or after `start`, reading more as needed; at most `limit`
    /// bytes are looked at.
    private mutating func lineEnd(from start: Int, limit: Int) throws(HTTPConnectionError) -> Int {
        var searched = start
        while true {
            while searched + 1 < buffer.count {
                if buffer[searched] == 13, buffer[searched + 1] == 10 { return searched }
                searched += 1
            }
            guard buffer.count - start <= limit else { throw HTTPConnectionError(.badServerResponse, "a response line is too long") }
            guard try fill() else { throw HTTPConnectionError(.networkConnectionLost, "the connection closed inside the response head") }
        }
    }

    /// The status and header fields (names lower-cased; repeated fields joined with ", ").
    mutating func head() throws(HTTPConnectionError) -> (status: Int, headers: [String: String]) {
        var lines: [String] = []
        var consumed = 0
        while true {
            let end = try lineEnd(from: consumed, limit: HTTP1Exchange.maximumHeadSize - consumed)
            let line = String(decoding: buffer[consumed..<end], as: UTF8.self)
            consumed = end + 2
            guard consumed <= HTTP1Exchange.maximumHeadSize else {
                throw HTTPConnectionError(.badServerResponse, "the response head is too large")
            }
            if line.isEmpty { break }
            lines.append(line)
        }
        buffer.removeFirst(consumed)
        let statusLine = lines.first ?? ""
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]), (100...599).contains(status)
        else {
            throw HTTPConnectionError(
                .badServerResponse, "not an HTTP/1.1 status line: \(TerminalEscaping.escaped(String(statusLine.prefix(80))))")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else {
                throw HTTPConnectionError(.badServerResponse, "a header line without a colon")
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        return (status, headers)
    }

    /// Exactly `length` bytes.
    mutating func body(length: Int) throws(HTTPConnectionError) -> [UInt8] {
        while buffer.count < length {
            guard try fill() else { throw HTTPConnectionError(.networkConnectionLost, "the connection closed inside the body") }
        }
        return Array(buffer.prefix(length))
    }

    /// Every byte up to the end of the stream; nil when there are more than `limit`.
    mutating func bodyToEnd(limit: Int) throws(HTTPConnectionError) -> [UInt8]? {
        while try fill() {
            if buffer.count > limit { return nil }
        }
        return buffer.count > limit ? nil : buffer
    }

    /// A chunked body, decoded; nil when it holds more than `limit` bytes (reading stops there).
    mutating func chunkedBody(limit: Int) throws(HTTPConnectionError) -> [UInt8]? {
        var body: [UInt8] = []
        while true {
            let end = try lineEnd(from: 0, limit: 4096)
            let line = String(decoding: buffer[..<end], as: UTF8.self)
            buffer.removeFirst(end + 2)
            let sizeText = line.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !sizeText.isEmpty, sizeText.count <= 15, let size = Int(sizeText, radix: 16), size >= 0 else {
                throw HTTPConnectionError(.badServerResponse, "a chunk size that is not hexadecimal")
            }
            if size == 0 { break }
            guard body.count + size <= limit else { return nil }
            while buffer.count < size + 2 {
                guard try fill() else { throw HTTPConnectionError(.networkConnectionLost, "the connection closed inside a chunk") }
            }
            guard buffer[size] == 13, buffer[size + 1] == 10 else {
                throw HTTPConnectionError(.badServerResponse, "a chunk does not end with CRLF")
            }
            body.append(contentsOf: buffer[..<size])
            buffer.removeFirst(size + 2)
        }
        // Trailer fields, up to the empty line.
        var trailers = 0
        while true {
            let end = try lineEnd(from: 0, limit: 4096)
            buffer.removeFirst(end + 2)
            if end == 0 { return body }
            trailers += 1
            guard trailers <= 100 else { throw HTTPConnectionError(.badServerResponse, "too many trailer fields") }
        }
    }
}
