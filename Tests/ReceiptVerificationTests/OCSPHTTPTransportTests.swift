import Foundation
import ReceiptVerification
import TestSupport
import Testing

/// ``OCSPHTTPTransport`` against scripted responders on 127.0.0.1: what it sends, the framings it
/// reads, which failures are retryable, the size cap over head and body, the deadline, the URLs
/// it refuses, and reasons that never quote the answer.
@Suite struct OCSPHTTPTransportTests {
    static let request: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x07]
    static let body: [UInt8] = Array("an OCSP response's bytes \u{0}\u{1}\u{FF}".utf8)

    static func answer(_ text: String, body: [UInt8] = []) -> ScriptedResponder.Reply { .bytes(Array(text.utf8) + body) }

    /// Posts ``request`` to `responder` (or `url`) off the cooperative pool.
    static func post(
        _ responder: ScriptedResponder?, url: String? = nil, transport: OCSPHTTPTransport = OCSPHTTPTransport()
    ) async throws -> Result<[UInt8], OCSPTransportFailure> {
        let target = url ?? responder?.url ?? ""
        return try await onThread { transport.post(request, to: target) }
    }

    static func failure(_ result: Result<[UInt8], OCSPTransportFailure>) -> OCSPTransportFailure? {
        if case .failure(let failure) = result { return failure }
        return nil
    }

    enum Framing: String, CaseIterable, Sendable {
        case contentLength, chunked, endOfConnection

        var reply: ScriptedResponder.Reply {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/ocsp-response\r\n"
            switch self {
            case .contentLength:
                return OCSPHTTPTransportTests.answer(head + "Content-Length: \(body.count)\r\n\r\n", body: body)
            case .chunked:
                let first = Array(body.prefix(7))
                let rest = Array(body.dropFirst(7))
                let chunks =
                    Array("\(String(first.count, radix: 16))\r\n".utf8) + first + Array("\r\n\(String(rest.count, radix: 16));x=y\r\n".utf8)
                    + rest + Array("\r\n0\r\n\r\n".utf8)
                return OCSPHTTPTransportTests.answer(head + "Transfer-Encoding: chunked\r\n\r\n", body: chunks)
            case .endOfConnection:
                return OCSPHTTPTransportTests.answer(head + "Connection: close\r\n\r\n", body: body)
            }
        }
    }

    @Test(arguments: Framing.allCases) func postsTheRequestAndReadsTheBodyHoweverItIsFramed(_ framing: Framing) async throws {
        let responder = try ScriptedResponder { _ in framing.reply }
        defer { responder.stop() }
        let result = try await Self.post(responder)
        #expect(try result.get() == Self.body, "\(framing)")
        let sent = try #require(responder.requests.first)
        let lines = sent.head.components(separatedBy: "\r\n")
        #expect(lines.first == "POST /ocsp HTTP/1.1")
        #expect(lines.contains("Content-Type: application/ocsp-request") && lines.contains("Accept: application/ocsp-response"))
        #expect(lines.contains("Host: 127.0.0.1:\(responder.port)"))
        #expect(sent.body == Self.request)
    }

    @Test func redirectsAndClientErrorsAreFinalServerErrorsRetryable() async throws {
        let statuses = [302, 404, 500, 503, 429, 204]
        let responder = try ScriptedResponder { index in
            let status = statuses[min(index, statuses.count - 1)]
            let location = status == 302 ? "Location: http://127.0.0.1:1/elsewhere\r\n" : ""
            return Self.answer("HTTP/1.1 \(status) Scripted\r\n\(location)Content-Length: 0\r\n\r\n")
        }
        defer { responder.stop() }
        var failures: [OCSPTransportFailure] = []
        for _ in statuses {
            if let failure = Self.failure(try await Self.post(responder)) { failures.append(failure) }
        }
        #expect(failures.map(\.isRetryable) == [false, false, true, true, true, false], "\(failures)")
        #expect(failures.first?.reason.contains("answered HTTP 302 (redirects are not followed)") == true, "\(failures)")
        #expect(failures.dropFirst().first?.reason == "\(responder.url) answered HTTP 404")
        // The redirect was not followed: one request per post, all to this responder.
        #expect(responder.requests.count == statuses.count)
    }

    @Test func theSizeCapCoversHeadAndBody() async throws {
        for framed in [true, false] {
            let head = "HTTP/1.1 200 OK\r\n" + (framed ? "Content-Length: \(Self.body.count)\r\n" : "Connection: close\r\n") + "\r\n"
            let total = head.utf8.count + Self.body.count
            let responder = try ScriptedResponder { _ in Self.answer(head, body: Self.body) }
            defer { responder.stop() }
            let fits = try await Self.post(responder, transport: OCSPHTTPTransport(maximumResponseSize: total))
            #expect(try fits.get() == Self.body)
            // One byte less: the body alone (far under the cap) would fit, head and body do not.
            let over = Self.failure(try await Self.post(responder, transport: OCSPHTTPTransport(maximumResponseSize: total - 1)))
            #expect(over?.isRetryable == false && over?.reason == "the answer exceeds \(total - 1) bytes", "\(String(describing: over))")
        }
        // A body that never ends is cut at the cap (the default 64 KiB).
        let endless = try ScriptedResponder { _ in Self.answer("HTTP/1.1 200 OK\r\n\r\n", body: [UInt8](repeating: 0x41, count: 1 << 20)) }
        defer { endless.stop() }
        let cut = Self.failure(try await Self.post(endless))
        #expect(cut?.isRetryable == false && cut?.reason == "the answer exceeds 65536 bytes", "\(String(describing: cut))")
    }

    @Test func aSilentResponderTimesOutRetryably() async throws {
        let responder = try ScriptedResponder { _ in .silence }
        defer { responder.stop() }
        let failure = Self.failure(try await Self.post(responder, transport: OCSPHTTPTransport(timeout: 0.3)))
        #expect(failure?.isRetryable == true, "\(String(describing: failure))")
        #expect(failure?.reason == "\(responder.url) did not answer in time", "\(String(describing: failure))")
    }

    @Test func aRefusedConnectionIsRetryable() async throws {
        let url = "http://127.0.0.1:\(try freeLoopbackPort())/ocsp"
        let failure = Self.failure(try await Self.post(nil, url: url))
        #expect(failure?.isRetryable == true, "\(String(describing: failure))")
        #expect(failure?.reason.hasPrefix("cannot connect to \(url): ") == true, "\(String(describing: failure))")
    }

    /// A timeout configured as infinity or a huge number is the client's to clamp: the post is
    /// answered, never a trap.
    @Test(arguments: [Double.infinity, 1e300])
    func anyConfiguredTimeoutIsSafe(timeout: Double) async throws {
        let responder = try ScriptedResponder { _ in Framing.contentLength.reply }
        defer { responder.stop() }
        #expect(try await Self.post(responder, transport: OCSPHTTPTransport(timeout: timeout)).get() == Self.body)
    }

    @Test func unusableURLsAreRefusedFinallyWithoutAConnection() async throws {
        let responder = try ScriptedResponder { _ in Framing.contentLength.reply }
        defer { responder.stop() }
        let port = responder.port
        let urls = [
            "https://127.0.0.1:\(port)/ocsp", "ftp://127.0.0.1:\(port)/", "http://user@127.0.0.1:\(port)/", "http://127.0.0.1:0/",
            "http://127.0.0.1:70000/", "http://[::1/", "http://127.0.0.1:\(port)/a b", "http:///ocsp", "127.0.0.1:\(port)/ocsp",
            "http://127.0.0.1\u{1B}[31m:\(port)/", "http://" + String(repeating: "a", count: 2_100),
        ]
        for url in urls {
            let failure = Self.failure(try await Self.post(nil, url: url))
            #expect(failure?.isRetryable == false, "\(url): \(String(describing: failure))")
            #expect(failure?.reason.hasPrefix("the OCSP URL ") == true, "\(url): \(String(describing: failure))")
            #expect(failure?.reason.contains("\u{1B}") == false)
        }
        #expect(responder.connections == 0)
    }

    @Test func reasonsNeverQuoteTheAnswer() async throws {
        let replies = [
            Self.answer("HTTP/1.1 2x0 SECRET-STATUS\r\n\r\n"),
            Self.answer("SECRET-NOT-HTTP\r\n\r\n"),
            Self.answer("HTTP/1.1 200 OK\r\nContent-Encoding: gzip-SECRET\r\nContent-Length: 3\r\n\r\n", body: [1, 2, 3]),
            Self.answer("HTTP/1.1 200 OK\r\nContent-Length: SECRET\r\n\r\n"),
            Self.answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nSECRET\r\n"),
            Self.answer("HTTP/1.1 503 SECRET-PHRASE\r\nContent-Length: 11\r\n\r\n", body: Array("SECRET-BODY".utf8)),
        ]
        let responder = try ScriptedResponder { index in replies[min(index, replies.count - 1)] }
        defer { responder.stop() }
        for index in replies.indices {
            let failure = Self.failure(try await Self.post(responder))
            #expect(failure != nil && failure?.reason.contains("SECRET") == false, "reply \(index): \(String(describing: failure))")
            // Malformed answers will not change; only the 503 is worth retrying.
            #expect(failure?.isRetryable == (index == replies.count - 1), "reply \(index): \(String(describing: failure))")
        }
    }
}
