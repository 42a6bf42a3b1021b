import Dispatch
import Foundation
import Glibc
import HTTPServer
import Internals
import ReceiptServer
import ReceiptVerification
import Receipts
import TestSupport
import Testing
import VerifyReceipt

/// `serve`'s HTTP server under hostile and heavy use, on real sockets on 127.0.0.1.
@Suite(.serialized) struct HTTPServerTests {
    static func endpoint(_ environment: VerifyReceiptEnvironment = .sandbox) throws -> VerifyReceiptEndpoint {
        try VerifyReceiptEndpointTests.endpoint(environment)
    }

    static let strictLimits = HTTPServerConfiguration(
        maximumBodySize: 64 << 10, maximumHeaderSize: 4 << 10, maximumHeaderCount: 20, requestTimeout: .seconds(1),
        idleTimeout: .seconds(1), shutdownGracePeriod: .seconds(2))

    /// One request on a fresh connection; the response and, when `checkClosed` is set, whether the
    /// server closed the connection afterwards (waiting up to the socket timeout).
    static func exchange(_ port: UInt16, _ bytes: [UInt8], checkClosed: Bool = false) throws -> (RawHTTPResponse, closed: Bool) {
        let connection = try RawHTTPConnection(port: port, timeout: 5)
        connection.send(bytes)
        let response = try connection.readResponse()
        return (response, checkClosed && connection.isClosedByPeer())
    }

    @Test func malformedRequestsGetClean4xxAndTheServerCarriesOn() async throws {
        let chunkedTooLarge =
            "POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            + String(repeating: "8000\r\n" + String(repeating: "a", count: 0x8000) + "\r\n", count: 3) + "0\r\n\r\n"
        let cases: [(String, [UInt8], Int)] = [
            ("garbage request line", Array("GARBAGE\r\n\r\n".utf8), 400),
            ("binary junk", [0, 1, 2, 0xFF, 0xFE] + Array("\r\n\r\n".utf8), 400),
            ("no Host in HTTP/1.1", Array("GET /health HTTP/1.1\r\n\r\n".utf8), 400),
            ("two Hosts", Array("GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n".utf8), 400),
            ("HTTP/2.0", Array("GET /health HTTP/2.0\r\nHost: x\r\n\r\n".utf8), 505),
            ("bad protocol name", Array("GET /health HTTQ/1.1\r\nHost: x\r\n\r\n".utf8), 400),
            ("double space", Array("GET  /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 400),
            ("relative target", Array("GET health HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 400),
            ("line folding", Array("GET /health HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n".utf8), 400),
            ("header without colon", Array("GET /health HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n".utf8), 400),
            ("space in header name", Array("GET /health HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n".utf8), 400),
            ("control character in a value", Array("GET /health HTTP/1.1\r\nHost: x\r\nX: a\u{1}b\r\n\r\n".utf8), 400),
            ("POST without length", Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 411),
            ("non-numeric length", Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 12a\r\n\r\n".utf8), 400),
            (
                "conflicting lengths",
                Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}".utf8), 400
            ),
            (
                "length and chunked",
                Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}".utf8), 400
            ),
            ("unknown coding", Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n".utf8), 501),
            ("bad chunk size", Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8), 400),
            ("declared body too large", Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n".utf8), 413),
            (
                "huge declared length",
                Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n".utf8), 413
            ),
            ("chunked body too large", Array(chunkedTooLarge.utf8), 413),
            (
                "unknown expectation",
                Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}".utf8), 417
            ),
            (
                "too many headers",
                Array(("GET /health HTTP/1.1\r\nHost: x\r\n" + (0..<25).map { "X-\($0): v\r\n" }.joined() + "\r\n").utf8), 431
            ),
            (
                "head too large",
                Array(("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 5000) + "\r\n\r\n").utf8), 431
            ),
            ("head never ends", Array(("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 9000)).utf8), 431),
            ("wrong method", Array("DELETE /verifyReceipt HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 405),
            ("unknown path", Array("GET /admin HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 404),
        ]
        try await withServer(try Self.endpoint(), configuration: Self.strictLimits) { server in
            try await onThread {
                for (name, bytes, expected) in cases {
                    let keepsConnection = expected == 404 || expected == 405
                    let (response, closed) = try Self.exchange(server.port, bytes, checkClosed: !keepsConnection)
                    #expect(response.status == expected, "\(name): \(response.status) \(response.bodyText)")
                    #expect(closed == !keepsConnection, "\(name): the connection stays open after a protocol error")
                }
                // Still healthy, and it counted the protocol errors.
                let (health, _) = try Self.exchange(server.port, Array("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
                #expect(health.status == 200)
                #expect(server.statistics.protocolErrors == cases.count - 2)
            }
        }
    }

    @Test func wellFormedVariantsAreServed() async throws {
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64"))
        let body = VerifyReceiptRequest(receipt: receipt.text).jsonBody
        try await withServer(try Self.endpoint(), configuration: Self.strictLimits) { server in
            try await onThread {
                // Chunked body with an extension and a trailer.
                let half = body.count / 2
                var chunked = Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                chunked += Array((String(half, radix: 16) + ";ext=1\r\n").utf8) + body[..<half] + Array("\r\n".utf8)
                chunked +=
                    Array((String(body.count - half, radix: 16) + "\r\n").utf8) + body[half...]
                    + Array("\r\n0\r\nX-Trailer: t\r\n\r\n".utf8)
                let (chunkedResponse, _) = try Self.exchange(server.port, chunked)
                #expect(chunkedResponse.status == 200)
                #expect(chunkedResponse.verifyReceiptStatus == 0)

                // Expect: 100-continue gets the interim response, then the answer.
                let connection = try RawHTTPConnection(port: server.port)
                connection.send("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: \(body.count)\r\n\r\n")
                #expect(connection.fill())
                #expect(String(decoding: connection.buffer, as: UTF8.self).hasPrefix("HTTP/1.1 100 Continue\r\n\r\n"))
                connection.send(body)
                #expect(try connection.readResponse().verifyReceiptStatus == 0)

                // Pipelined requests in one write, with leading empty lines; answered in order.
                let pipelined = try RawHTTPConnection(port: server.port)
                pipelined.send(
                    Array("\r\n".utf8) + RawHTTPConnection.post("/verifyReceipt", body: Array("{}".utf8))
                        + RawHTTPConnection.post("/verifyReceipt", body: body) + Array("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                #expect(try pipelined.readResponse().verifyReceiptStatus == 21002)
                #expect(try pipelined.readResponse().verifyReceiptStatus == 0)
                let head = try pipelined.readResponse(bodyless: true)
                #expect(head.status == 200)
                #expect(head.body.isEmpty)
                #expect(head.headers["content-length"] != "0")

                // HTTP/1.0 without Host: served, then closed.
                let (old, closed) = try Self.exchange(server.port, Array("GET /health HTTP/1.0\r\n\r\n".utf8), checkClosed: true)
                #expect(old.status == 200)
                #expect(closed)
                // Absolute-form target.
                let (absolute, _) = try Self.exchange(server.port, Array("GET http://127.0.0.1/health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                #expect(absolute.status == 200)
            }
        }
    }

    @Test func oversizedBodiesAreRefusedWhileTheClientIsStillSending() async throws {
        try await withServer(try Self.endpoint(), configuration: Self.strictLimits) { server in
            try await onThread {
                let connection = try RawHTTPConnection(port: server.port)
                connection.send("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
                _ = connection.send([UInt8](repeating: 0x41, count: 128 << 10))
                let response = try connection.readResponse()
                #expect(response.status == 413)
                #expect(response.bodyText.contains("larger than 65536"))
                // Exactly at the limit is fine (and not a receipt: 21000).
                let atLimit = [UInt8](repeating: 0x20, count: 64 << 10)
                let (ok, _) = try Self.exchange(server.port, RawHTTPConnection.post("/verifyReceipt", body: atLimit, keepAlive: false))
                #expect(ok.status == 200)
                #expect(ok.verifyReceiptStatus == 21000)
            }
        }
    }

    /// A client that stalls mid-request gets 408 after the request timeout; one that dribbles bytes
    /// gets it too (the deadline covers the whole request); others are served meanwhile.
    @Test func slowClientsTimeOutWithoutBlockingOthers() async throws {
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/itunes-iap-legacy-transaction-receipt.b64"))
        let body = VerifyReceiptRequest(receipt: receipt.text).jsonBody
        var configuration = Self.strictLimits
        configuration.requestTimeout = .seconds(2)
        try await withServer(try Self.endpoint(), configuration: configuration) { server in
            try await onThread {
                let clock = ContinuousClock()
                let start = clock.now
                let stalled = try RawHTTPConnection(port: server.port)
                stalled.send("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"recei")
                let dribbler = try RawHTTPConnection(port: server.port)
                let dribbleThread = Thread {
                    for byte in Array("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8) + [UInt8](repeating: 0x61, count: 40) {
                        guard dribbler.send([byte]) else { return }
                        usleep(100_000)
                    }
                }
                dribbleThread.start()
                let silent = try RawHTTPConnection(port: server.port)

                // Meanwhile other clients are answered at once.
                for _ in 0..<20 {
                    let (response, _) = try Self.exchange(
                        server.port, RawHTTPConnection.post("/verifyReceipt", body: body, keepAlive: false))
                    #expect(response.verifyReceiptStatus == 0)
                }
                let fastDone = clock.now - start

                let timedOut = try stalled.readResponse()
                let stalledAnswered = clock.now - start
                #expect(timedOut.status == 408)
                #expect(stalled.isClosedByPeer())
                let dribbled = try dribbler.readResponse()
                #expect(dribbled.status == 408)
                let elapsed = clock.now - start
                // The fast clients were all answered before the stalled ones timed out.
                #expect(fastDone < stalledAnswered)
                #expect(stalledAnswered >= .milliseconds(1900))
                #expect(elapsed >= .milliseconds(1900) && elapsed < .seconds(6))
                // A connection that never sends anything is closed without a response.
                #expect(silent.isClosedByPeer())
            }
        }
    }

    /// 1,000 requests from 8 concurrent clients (keep-alive and fresh connections, valid receipts,
    /// a tampered one and bad bodies), each answered correctly.
    @Test func thousandRequestsFromConcurrentClients() async throws {
        struct Case: Sendable {
            let body: [UInt8]
            let status: Int
            let transaction: String?
        }
        var cases: [Case] = []
        for file in Fixtures.legacyFiles {
            let receipt = try TransactionReceipt(Fixtures.bytes(file))
            let status = receipt.purchaseInfo.expiresDate != nil ? 21006 : 0
            cases.append(
                Case(
                    body: VerifyReceiptRequest(receipt: receipt.text).jsonBody, status: status,
                    transaction: receipt.purchaseInfo.transactionIdentifier))
        }
        let venice = try TransactionReceipt(Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64"))
        cases.append(
            Case(body: VerifyReceiptRequest(receipt: try Fixtures.withQuantityTwo(venice).text).jsonBody, status: 21003, transaction: nil))
        cases.append(Case(body: Array("{}".utf8), status: 21002, transaction: nil))
        cases.append(Case(body: Array("[".utf8), status: 21000, transaction: nil))
        let allCases = cases

        try await withServer(try Self.endpoint(), configuration: HTTPServerConfiguration(maximumConnections: 64)) { server in
            try await onThread {
                let port = server.port
                let failures = Locked<[String]>([])
                let answered = Locked(0)
                let group = DispatchGroup()
                for client in 0..<8 {
                    group.enter()
                    let thread = Thread {
                        defer { group.leave() }
                        var connection: RawHTTPConnection?
                        for index in 0..<125 {
                            let item = allCases[(client * 125 + index) % allCases.count]
                            // Clients 0-3 keep one connection; 4-7 reconnect every 10 requests.
                            if connection == nil || (client >= 4 && index % 10 == 0) { connection = try? RawHTTPConnection(port: port) }
                            guard let current = connection, current.send(RawHTTPConnection.post("/verifyReceipt", body: item.body)),
                                let response = try? current.readResponse()
                            else {
                                failures.withLock { $0.append("client \(client) request \(index): no response") }
                                connection = nil
                                continue
                            }
                            let parsed = try? VerifyReceiptResponse(body: response.body)
                            var transaction: String?
                            if let parsed, let info = try? parsed.purchaseInfo() { transaction = info.transactionIdentifier }
                            if response.status != 200 || parsed?.status.rawValue != item.status || transaction != item.transaction {
                                failures.withLock {
                                    $0.append("client \(client) request \(index): \(response.status) \(response.bodyText.prefix(80))")
                                }
                            }
                            answered.withLock { $0 += 1 }
                        }
                    }
                    thread.start()
                }
                group.wait()
                #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(5))")
                #expect(answered.withLock { $0 } == 1000)
                #expect(server.statistics.requests == 1000)
                #expect(server.statistics.rejectedConnections == 0)
                #expect(server.statistics.connections >= 4 + 4 * 13)
            }
        }
    }

    @Test func connectionLimitAnswers503() async throws {
        var configuration = Self.strictLimits
        configuration.maximumConnections = 2
        try await withServer(try Self.endpoint(), configuration: configuration) { server in
            try await onThread {
                let first = try RawHTTPConnection(port: server.port)
                let second = try RawHTTPConnection(port: server.port)
                first.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                second.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try first.readResponse().status == 200)
                #expect(try second.readResponse().status == 200)
                let third = try RawHTTPConnection(port: server.port)
                let busy = try third.readResponse()
                #expect(busy.status == 503)
                #expect(busy.headers["retry-after"] == "1")
                #expect(server.statistics.rejectedConnections == 1)
                // When a slot frees up, new connections are served again.
                first.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                #expect(try first.readResponse().status == 200)
                #expect(first.isClosedByPeer())
                var served = false
                for _ in 0..<50 where !served {
                    let (response, _) = try Self.exchange(server.port, Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                    served = response.status == 200
                    if !served { usleep(20_000) }
                }
                #expect(served)
            }
        }
    }

    /// stop(): the listening socket closes, idle keep-alive connections close, a request in progress
    /// still gets its answer (with `Connection: close`).
    @Test func gracefulShutdown() async throws {
        try await onThread {
            let handler = ScriptedHandler { request in
                if request.path == "/slow" { usleep(400_000) }
                return .text("done \(request.path)", status: 200)
            }
            let server = HTTPServer(configuration: HTTPServerConfiguration(shutdownGracePeriod: .seconds(3)), handler: handler)
            try server.start()
            let port = server.port
            let idle = try RawHTTPConnection(port: port)
            idle.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try idle.readResponse().status == 200)

            let busy = try RawHTTPConnection(port: port)
            busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            usleep(100_000)
            let clock = ContinuousClock()
            let start = clock.now
            server.stop()
            server.stop()  // idempotent
            let answer = try busy.readResponse()
            #expect(answer.status == 200)
            #expect(answer.bodyText == "done /slow\n")
            #expect(answer.headers["connection"] == "close")
            #expect(idle.isClosedByPeer())
            server.waitUntilStopped()
            #expect(clock.now - start < .seconds(2))
            #expect(server.isStopping)
            #expect((try? RawHTTPConnection(port: port)) == nil, "the listening socket is still open")
            // Starting twice is an error.
            #expect(throws: HTTPServerError.self) { try server.start() }
        }
    }

    @Test func bindFailuresAreTypedErrors() async throws {
        try await onThread {
            let first = HTTPServer(handler: ScriptedHandler { _ in .text("x", status: 200) })
            try first.start()
            defer { first.shutdown() }
            let second = HTTPServer(
                configuration: HTTPServerConfiguration(port: first.port), handler: ScriptedHandler { _ in .text("x", status: 200) })
            let error = #expect(throws: HTTPServerError.self) { try second.start() }
            #expect(error?.operation == "bind")
            #expect(error?.errorNumber == EADDRINUSE)
            let unresolvable = HTTPServer(
                configuration: HTTPServerConfiguration(host: "no such host.invalid"),
                handler: ScriptedHandler { _ in .text("x", status: 200) })
            #expect(throws: HTTPServerError.self) { try unresolvable.start() }
            // A stopped-before-started server does not hang.
            unresolvable.shutdown()
        }
    }
}
