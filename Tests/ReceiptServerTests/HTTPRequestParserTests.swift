import HTTPServer
import Testing

/// HTTPServer's request parser without sockets: the state machine the connection feeds.
@Suite struct HTTPRequestParserTests {
    static let defaults = HTTPRequestLimits(HTTPServerConfiguration())
    static let small = HTTPRequestLimits(maximumHeaderSize: 128, maximumHeaderCount: 3, maximumBodySize: 16)

    /// A request as the tests compare it.
    struct Summary: Equatable {
        let method: String
        let target: String
        let minorVersion: Int
        let headers: [HTTPHeader]
        let body: [UInt8]
        let consumed: Int
    }

    /// What a stream of bytes gave: the requests, the failure that ended it if any, the bytes left
    /// unconsumed when it ran out, and how many `100 Continue` were asked for.
    struct Run: Equatable {
        var requests: [Summary] = []
        var failure: HTTPRequestError?
        var leftover = 0
        var continues = 0
    }

    /// Feeds `bytes` in pieces ending at `cuts` (the whole input when nil), as a connection does.
    static func run(_ bytes: [UInt8], cuts: [Int]? = nil, limits: HTTPRequestLimits = defaults) -> Run {
        var result = Run()
        var pieces = (cuts ?? [bytes.count])[...]
        var fed = 0
        var buffer: [UInt8] = []
        var parser = HTTPRequestParser(limits: limits)
        var between = true
        func feedMore() -> Bool {
            guard let cut = pieces.popFirst() else { return false }
            buffer += bytes[fed..<cut]
            fed = cut
            return true
        }
        while true {
            if between {
                if HTTPRequestParser.dropEmptyLines(&buffer) {
                    between = false
                } else if feedMore() {
                    continue
                } else {
                    return result
                }
            }
            switch parser.parse(&buffer) {
            case .needMoreBytes:
                if !feedMore() {
                    result.leftover = buffer.count
                    return result
                }
            case .sendContinue:
                result.continues += 1
            case .request(let request, let consumed):
                result.requests.append(
                    Summary(
                        method: request.method, target: request.target, minorVersion: request.minorVersion, headers: request.headers,
                        body: request.body, consumed: consumed))
                between = true
            case .failed(let error):
                result.failure = error
                return result
            }
        }
    }

    static let valid: [(String, String)] = [
        ("GET", "GET /health?x=1 HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n"),
        ("HTTP/1.0 with LF line ends", "GET / HTTP/1.0\nUser-Agent: t\n\n"),
        ("POST with Content-Length", "POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n{\"a\":\"bcd\"}"),
        (
            "chunked with extensions and a trailer",
            "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4;a=1 ; b=\"q;\\\"x\" ;c\r\nabcd\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n"
        ),
        (
            "pipelined with empty lines",
            "\r\n\nPOST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nHEAD /c HTTP/1.1\r\nHost: x\r\n\r\n"
        ),
        ("100-continue", "PUT /p HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc"),
        ("identical Content-Length list", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\n{}"),
    ]

    @Test(arguments: valid.map(\.0))
    func splittingAnywhereGivesTheSameRequests(_ name: String) throws {
        let text = try #require(Self.valid.first { $0.0 == name }?.1)
        let bytes = Array(text.utf8)
        let whole = Self.run(bytes)
        #expect(whole.failure == nil)
        #expect(whole.leftover == 0)
        #expect(!whole.requests.isEmpty)
        #expect(whole.continues == 0)
        for cut in 1..<bytes.count {
            var pieces = Self.run(bytes, cuts: [cut, bytes.count])
            pieces.continues = 0
            #expect(pieces == whole, "split at \(cut)")
        }
        var byteByByte = Self.run(bytes, cuts: Array(1...bytes.count))
        byteByByte.continues = 0
        #expect(byteByByte == whole)
    }

    @Test func requestsAreParsedAsSent() {
        let chunked = Self.run(Array(Self.valid[3].1.utf8))
        #expect(chunked.requests.first?.body == Array("abcd0123456789".utf8))
        #expect(chunked.requests.first?.consumed == Self.valid[3].1.utf8.count)
        let pipelined = Self.run(Array(Self.valid[4].1.utf8))
        #expect(pipelined.requests.map(\.method) == ["POST", "GET", "HEAD"])
        #expect(pipelined.requests.map(\.target) == ["/a", "/b", "/c"])
        #expect(pipelined.requests.first?.body == Array("{}".utf8))
        let old = Self.run(Array(Self.valid[1].1.utf8))
        #expect(old.requests.first?.minorVersion == 0)
        #expect(old.requests.first?.headers == [HTTPHeader("User-Agent", "t")])
    }

    /// `100 Continue` is asked for only when the head is complete and none of the body is there.
    @Test func continueIsAskedForOnlyBeforeTheBody() {
        let head = Array("POST /v HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8)
        var parser = HTTPRequestParser(limits: Self.defaults)
        var buffer = head
        guard case .sendContinue = parser.parse(&buffer) else {
            Issue.record("no 100 Continue")
            return
        }
        guard case .needMoreBytes = parser.parse(&buffer) else {
            Issue.record("100 Continue twice")
            return
        }
        #expect(parser.isReadingBody)
        buffer += Array("abcGET".utf8)
        guard case .request(let request, let consumed) = parser.parse(&buffer) else {
            Issue.record("no request")
            return
        }
        #expect(request.body == Array("abc".utf8))
        #expect(consumed == head.count + 3)
        #expect(buffer == Array("GET".utf8))
        // With a byte of the body already there: no interim response.
        #expect(Self.run(head + [0x61]).continues == 0)
        // Not for HTTP/1.0, nor without a body.
        #expect(Self.run(Array("POST /v HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n".utf8)).continues == 0)
        #expect(Self.run(Array("POST /v HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8)).continues == 0)
    }

    static let malformed: [(String, String, Int)] = [
        ("garbage request line", "GARBAGE\r\n\r\n", 400),
        ("binary junk", "\u{0}\u{1}\u{2}\r\n\r\n", 400),
        ("no Host in HTTP/1.1", "GET / HTTP/1.1\r\n\r\n", 400),
        ("two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("HTTP/2.0", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("bad protocol name", "GET / HTTQ/1.1\r\nHost: x\r\n\r\n", 400),
        ("double space", "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("relative target", "GET health HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("line folding", "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n", 400),
        ("header without colon", "GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400),
        ("space in header name", "GET / HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n", 400),
        ("control character in a value", "GET / HTTP/1.1\r\nHost: x\r\nX: a\u{1}b\r\n\r\n", 400),
        ("POST without length", "POST /v HTTP/1.1\r\nHost: x\r\n\r\n", 411),
        ("non-numeric length", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: 12a\r\n\r\n", 400),
        ("conflicting lengths", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400),
        ("length with an empty element", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: 4,\r\n\r\nbody", 400),
        ("empty length", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n", 400),
        ("empty coding with a length", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\nContent-Length: 2\r\n\r\n{}", 400),
        ("empty coding", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\n\r\n", 501),
        ("length and chunked", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}", 400),
        ("chunked in HTTP/1.0", "POST /v HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        ("unknown coding", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        ("unknown expectation", "POST /v HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}", 417),
        ("declared body too large", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n", 413),
        ("huge declared length", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413),
        ("too many headers", "GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", 431),
        ("head too large", "GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "b", count: 150) + "\r\n\r\n", 431),
        ("head never ends", "GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "b", count: 150), 431),
        ("chunk size with a sign", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n+1\r\na\r\n0\r\n\r\n", 400),
        ("chunk size 0x", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0x1\r\na\r\n0\r\n\r\n", 400),
        ("inner space in a chunk size", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1 0\r\n", 400),
        ("space after a chunk size", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1 \r\na\r\n0\r\n\r\n", 400),
        ("bad chunk extension", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;=x\r\na\r\n0\r\n\r\n", 400),
        (
            "unterminated quoted extension", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;a=\"x\r\na\r\n0\r\n\r\n",
            400
        ),
        ("bare LF after a chunk size", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\na\r\n0\r\n\r\n", 400),
        ("CR inside a chunk line", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;a\rb\r\na\r\n0\r\n\r\n", 400),
        ("chunk data without CRLF", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n", 400),
        (
            "chunk line too long",
            "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "a", count: 1100)
                + "\r\n", 400
        ),
        ("chunked body too large", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n1\r\n", 413),
        ("huge chunk size", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffffff\r\n", 413),
        ("malformed trailer", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n", 400),
        (
            "trailers too large",
            "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA: " + String(repeating: "t", count: 70)
                + "\r\nB: " + String(repeating: "t", count: 70) + "\r\n\r\n", 431
        ),
    ]

    @Test(arguments: malformed.map(\.0))
    func malformedRequestsFailWithTheirStatus(_ name: String) throws {
        let (_, text, status) = try #require(Self.malformed.first { $0.0 == name })
        let bytes = Array(text.utf8)
        let whole = Self.run(bytes, limits: Self.small)
        #expect(whole.requests.isEmpty)
        #expect(whole.failure?.status == status, "\(whole.failure?.reason ?? "no failure")")
        // The same answer, with the same reason, however the bytes arrive.
        let byteByByte = Self.run(bytes, cuts: Array(1...bytes.count), limits: Self.small)
        #expect(byteByByte.failure == whole.failure)
        // A failed parser stays failed.
        var parser = HTTPRequestParser(limits: Self.small)
        var buffer = bytes
        _ = parser.parse(&buffer)
        guard case .failed(let again) = parser.parse(&buffer) else {
            Issue.record("the parser did not stay failed")
            return
        }
        #expect(again == whole.failure)
    }

    /// The head limit counts the head's bytes up to its last line's LF, whether or not the
    /// empty line after it has arrived (it used to depend on where a read ended).
    @Test func theHeadLimitDoesNotDependOnHowBytesArrive() {
        let limits = HTTPRequestLimits(maximumHeaderSize: 40, maximumHeaderCount: 10, maximumBodySize: 10)
        let prefix = "GET / HTTP/1.1\r\nHost: x\r\nX: "
        for size in 38...42 {
            let value = String(repeating: "v", count: size - prefix.utf8.count - 1)
            let bytes = Array((prefix + value + "\r\n\r\n").utf8)
            let whole = Self.run(bytes, limits: limits)
            #expect((whole.failure?.status == 431) == (size > 40), "head of \(size) bytes")
            for cut in 1..<bytes.count {
                #expect(Self.run(bytes, cuts: [cut, bytes.count], limits: limits) == whole, "head of \(size) bytes, split at \(cut)")
            }
        }
    }

    /// A body of many small chunks: linear work, the bytes read dropped from the buffer on the way,
    /// and the right body and count at the end.
    @Test func manySmallChunks() {
        var bytes = Array("POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        var expected: [UInt8] = []
        for index in 0..<30_000 {
            let byte = UInt8(0x41 + index % 26)
            bytes += Array("1;n=v\r\n".utf8) + [byte, 0x0D, 0x0A]
            expected.append(byte)
        }
        bytes += Array("0\r\n\r\nGET".utf8)
        var cuts = Array(stride(from: 1000, to: bytes.count, by: 1000))
        cuts.append(bytes.count)
        for schedule in [nil, cuts] {
            let result = Self.run(bytes, cuts: schedule)
            #expect(result.requests.first?.body == expected)
            #expect(result.requests.first?.consumed == bytes.count - 3)
            #expect(result.leftover == 3)
        }
    }

    @Test func chunkSizes() throws {
        func size(_ text: String, maximum: Int = 1 << 20) -> Int? {
            try? HTTPChunk.size(Array(text.utf8)[...], maximum: maximum)
        }
        #expect(size("0") == 0)
        #expect(size("00ff") == 255)
        #expect(size("Ab;x") == 0xAB)
        #expect(size("1 ; x = \"a b\" ;y=z") == 1)
        #expect(size("1;x=\"\\\"\"") == 1)
        for bad in ["", " 1", "-1", "+1", "1 2", "1 ", "1;", "1;x=", "1;x=\"", "1x", "0x10", "1;x y", "1;x=\"a\"b"] {
            #expect(size(bad) == nil, "\(bad)")
        }
        #expect(throws: HTTPRequestError(413, "the body is larger than the limit")) {
            try HTTPChunk.size(Array("11".utf8)[...], maximum: 16)
        }
        #expect(size("10", maximum: 16) == 16)
    }
}
