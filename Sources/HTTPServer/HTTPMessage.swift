import Internals

/// One header field of an HTTP message.
public struct HTTPHeader: Sendable, Hashable {
    /// The field name as received (compare case-insensitively).
    public var name: String
    /// The field value, without surrounding whitespace.
    public var value: String

    /// Creates a header field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// An HTTP/1.x request as ``HTTPServer`` hands it to a handler: the head parsed and checked, the
/// body complete (Content-Length or chunked, within the size limit).
public struct HTTPRequest: Sendable {
    /// The method, for example `POST` (case-sensitive, as HTTP defines it).
    public let method: String
    /// The request target as sent, for example `/verifyReceipt?x=1`.
    public let target: String
    /// The path of the target, without the query (`/verifyReceipt`).
    public let path: String
    /// The query after `?`, if any.
    public let query: String?
    /// The minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    public let minorVersion: Int
    /// The header fields in order.
    public let headers: [HTTPHeader]
    /// The body (empty when there is none).
    public let body: [UInt8]
    /// The address of the connection's peer (`127.0.0.1`, `::1`), set by ``HTTPServer``; nil for
    /// requests made otherwise. Behind a proxy it is the proxy's.
    public var remoteAddress: String?

    /// Creates a request (for handlers under test).
    public init(
        method: String, target: String, minorVersion: Int = 1, headers: [HTTPHeader] = [], body: [UInt8] = []
    ) {
        self.method = method
        self.target = target
        if let question = target.firstIndex(of: "?") {
            path = String(target[..<question])
            query = String(target[target.index(after: question)...])
        } else {
            path = target
            query = nil
        }
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
    }

    /// The value of the first header named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }

    /// Every value of the headers named `name`, split at commas and trimmed (for list headers such
    /// as `Connection`).
    public func headerTokens(_ name: String) -> [String] {
        let lower = name.lowercased()
        return headers.filter { $0.name.lowercased() == lower }.flatMap {
            $0.value.split(separator: ",").map { $0.trimmingSpaces().lowercased() }
        }
    }
}

/// A response a handler returns to ``HTTPServer``.
public struct HTTPResponse: Sendable {
    /// The status code, for example 200.
    public var status: Int
    /// Header fields to send. The server adds `Content-Length`, `Date` and `Connection`.
    public var headers: [HTTPHeader]
    /// The body.
    public var body: [UInt8]
    /// Close the connection after this response even if keep-alive was possible.
    public var closesConnection: Bool

    /// Creates a response.
    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = [], closesConnection: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.closesConnection = closesConnection
    }

    /// A JSON response (`Content-Type: application/json`).
    public static func json(_ body: [UInt8], status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", "application/json")], body: body)
    }

    /// A plain-text response whose body is `message` and a newline.
    public static func text(_ message: String, status: Int, headers: [HTTPHeader] = []) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8")] + headers,
            body: Array((message + "\n").utf8))
    }

    /// Whether the server writes this header itself (`Content-Length`, `Connection`, `Date`,
    /// `Transfer-Encoding`), so a handler's copy is dropped.
    static func isReserved(_ name: String) -> Bool {
        switch name.utf8.count {
        case 4: name.lowercased() == "date"
        case 10: name.lowercased() == "connection"
        case 14: name.lowercased() == "content-length"
        case 17: name.lowercased() == "transfer-encoding"
        default: false
        }
    }

    /// The standard reason phrase of `status`.
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 417: "Expectation Failed"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}

/// Why a request cannot be served; becomes a 4xx/5xx response and closes the connection.
package struct HTTPRequestError: Error, Sendable, Hashable {
    /// The status to answer with (0: close without answering).
    package let status: Int
    /// A sentence for the response body and the log.
    package let reason: String

    /// Creates an error.
    package init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }
}

/// How the body of a request is framed.
enum HTTPBodyFraming: Sendable, Equatable {
    case none
    case contentLength(Int)
    case chunked
}

/// The parsed head of a request (request line and header fields).
struct HTTPRequestHead: Sendable {
    var method: String
    var target: String
    var minorVersion: Int
    var headers: [HTTPHeader]
    var framing: HTTPBodyFraming
    var expectsContinue: Bool

    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// Parses the bytes of a head: everything before the empty line, with lines ending in CRLF or
    /// LF. Limits: `maximumHeaders` fields, `maximumBody` bytes of declared body.
    static func parse(_ bytes: ArraySlice<UInt8>, maximumHeaders: Int, maximumBody: Int) throws(HTTPRequestError) -> HTTPRequestHead {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 0x0A {
                var end = index
                if end > start, bytes[end - 1] == 0x0D { end -= 1 }
                lines.append(bytes[start..<end])
                start = index + 1
            }
            index += 1
        }
        if start < bytes.endIndex {
            var end = bytes.endIndex
            if bytes[end - 1] == 0x0D { end -= 1 }
            lines.append(bytes[start..<end])
        }
        guard let requestLine = lines.first else { throw HTTPRequestError(400, "empty request") }
        guard lines.count - 1 <= maximumHeaders else {
            throw HTTPRequestError(431, "more than \(maximumHeaders) header fields")
        }

        // Request line: method SP target SP HTTP/1.x
        let parts = requestLine.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw HTTPRequestError(400, "malformed request line") }
        let methodBytes = parts[0]
        guard !methodBytes.isEmpty, methodBytes.count <= 32, methodBytes.allSatisfy(isTokenCharacter) else {
            throw HTTPRequestError(400, "malformed method")
        }
        let targetBytes = parts[1]
        guard !targetBytes.isEmpty, targetBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw HTTPRequestError(400, "malformed request target")
        }
        var target = String(decoding: targetBytes, as: UTF8.self)
        if target.hasPrefix("http://") || target.hasPrefix("https://") {
            // Absolute form: keep the path and query.
            let afterScheme = target.drop { $0 != ":" }.dropFirst(3)
            target = afterScheme.firstIndex(of: "/").map { String(afterScheme[$0...]) } ?? "/"
        }
        guard target.hasPrefix("/") || target == "*" else { throw HTTPRequestError(400, "malformed request target") }
        let version = Array(parts[2])
        let minor: Int
        switch version {
        case Array("HTTP/1.1".utf8): minor = 1
        case Array("HTTP/1.0".utf8): minor = 0
        default:
            if version.count == 8, version.starts(with: Array("HTTP/".utf8)), version[6] == UInt8(ascii: "."),
                (0x30...0x39).contains(version[5]), (0x30...0x39).contains(version[7])
            {
                throw HTTPRequestError(505, "only HTTP/1.0 and HTTP/1.1 are supported")
            }
            throw HTTPRequestError(400, "malformed HTTP version")
        }

        // Header fields.
        var headers: [HTTPHeader] = []
        for line in lines.dropFirst() {
            guard let first = line.first else { throw HTTPRequestError(400, "empty line inside the header") }
            guard first != 0x20, first != 0x09 else { throw HTTPRequestError(400, "obsolete line folding") }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw HTTPRequestError(400, "header line without ':'") }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else { throw HTTPRequestError(400, "malformed header name") }
            let rawValue = line[(colon + 1)...]
            guard rawValue.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw HTTPRequestError(400, "control character in a header value")
            }
            // Bytes above 0x7F are kept as ISO-8859-1 characters: lossless, never replaced.
            let value = String(String.UnicodeScalarView(rawValue.map { Unicode.Scalar($0) }))
            headers.append(HTTPHeader(String(decoding: name, as: UTF8.self), Substring(value).trimmingSpaces()))
        }
        func values(_ name: String) -> [String] {
            headers.filter { $0.name.lowercased() == name }.map(\.value)
        }

        let hosts = values("host")
        if minor == 1, hosts.count != 1 { throw HTTPRequestError(400, hosts.isEmpty ? "missing Host" : "more than one Host") }
        if minor == 0, hosts.count > 1 { throw HTTPRequestError(400, "more than one Host") }

        // Content-Length is 1*DIGIT, at most repeated as an identical list ("42, 42"): an empty
        // element ("4,", "", ",") is malformed, not ignored, so that no reading of it frames the
        // body differently. A Transfer-Encoding field counts as soon as it is present, even empty.
        let lengths = values("content-length").flatMap {
            $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
        }
        let encodingFields = values("transfer-encoding")
        let encodings = encodingFields.flatMap { $0.split(separator: ",").map { $0.trimmingSpaces().lowercased() } }
        var framing = HTTPBodyFraming.none
        if !encodingFields.isEmpty {
            guard lengths.isEmpty else { throw HTTPRequestError(400, "both Transfer-Encoding and Content-Length") }
            guard minor == 1 else { throw HTTPRequestError(400, "Transfer-Encoding in an HTTP/1.0 request") }
            guard encodings == ["chunked"] else { throw HTTPRequestError(501, "only the chunked transfer coding is supported") }
            framing = .chunked
        } else if let first = lengths.first {
            guard !lengths.contains("") else { throw HTTPRequestError(400, "malformed Content-Length") }
            guard lengths.allSatisfy({ $0 == first }) else { throw HTTPRequestError(400, "conflicting Content-Length values") }
            guard first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw HTTPRequestError(400, "malformed Content-Length")
            }
            guard first.utf8.count <= 15, let length = Int(first), length <= maximumBody else {
                throw HTTPRequestError(413, "the body is larger than \(maximumBody) bytes")
            }
            framing = length > 0 ? .contentLength(length) : .none
        } else if ["POST", "PUT", "PATCH"].contains(String(decoding: methodBytes, as: UTF8.self)) {
            throw HTTPRequestError(411, "a Content-Length is required")
        }

        var expectsContinue = false
        let expectations = values("expect")
        if !expectations.isEmpty {
            guard expectations.allSatisfy({ $0.lowercased() == "100-continue" }) else {
                throw HTTPRequestError(417, "only Expect: 100-continue is supported")
            }
            expectsContinue = minor == 1 && framing != .none
        }
        return HTTPRequestHead(
            method: String(decoding: methodBytes, as: UTF8.self), target: target, minorVersion: minor, headers: headers,
            framing: framing, expectsContinue: expectsContinue)
    }
}

/// Formats HTTP dates (IMF-fixdate, RFC 9110): `Sun, 06 Nov 1994 08:49:37 GMT`.
enum HTTPDate {
    static func format(secondsSince1970 seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = Int(seconds - days * 86_400)
        let (year, month, day) = CivilCalendar.date(daysSince1970: days)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60)) GMT"
    }
}
