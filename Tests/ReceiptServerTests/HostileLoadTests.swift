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

/// Issue 13, the server: strict chunk sizes, no request lost at a stop, one client address cannot
/// take every connection slot. Real sockets on loopback, the real verifyReceipt endpoint.
@Suite(.serialized) struct HostileLoadTests {
    static func chunked(_ lines: String) -> [UInt8] {
        Array(("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + lines).utf8)
    }

    /// Answers with the length of the body it got.
    static let echo = ScriptedHandler { request in .text("\(request.body.count)", status: 200) }

    /// Chunk sizes are hex digits only, then nothing but RFC 9112 chunk extensions; every line of
    /// a chunked body ends in CRLF.
    @Test func chunkSizesFollowTheGrammarStrictly() async throws {
        let refused: [(String, String)] = [
            ("plus sign", "+3\r\nabc\r\n0\r\n\r\n"),
            ("minus zero", "-0\r\n\r\n"),
            ("inner space", "1 0\r\n" + String(repeating: "a", count: 16) + "\r\n0\r\n\r\n"),
            ("0x prefix", "0x3\r\nabc\r\n0\r\n\r\n"),
            ("trailing space without extension", "3 \r\nabc\r\n0\r\n\r\n"),
            ("leading space", " 3\r\nabc\r\n0\r\n\r\n"),
            ("empty size", "\r\nabc\r\n0\r\n\r\n"),
            ("empty extension name", "3;\r\nabc\r\n0\r\n\r\n"),
            ("extension without value", "3;a=\r\nabc\r\n0\r\n\r\n"),
            ("unterminated quoted value", "3;a=\"x\r\nabc\r\n0\r\n\r\n"),
            ("control character in an extension", "3;a=\u{1}\r\nabc\r\n0\r\n\r\n"),
            ("bare LF after the size", "3\nabc\r\n0\r\n\r\n"),
            ("bare LF after the data", "3\r\nabc\n0\r\n\r\n"),
            ("bare CR inside the line", "3\r;a\r\nabc\r\n0\r\n\r\n"),
            ("data longer than the size", "3\r\nabcd\r\n0\r\n\r\n"),
            ("malformed trailer", "3\r\nabc\r\n0\r\nno colon\r\n\r\n"),
        ]
        let accepted: [(String, String, Int)] = [
            ("plain", "3\r\nabc\r\n0\r\n\r\n", 3),
            ("leading zeros and upper case", "000A\r\n0123456789\r\n0\r\n\r\n", 10),
            ("extensions with whitespace", "3 ; name ; a = b ;q=\"x \\\" y\"\r\nabc\r\n0;last\r\n\r\n", 3),
            ("two chunks and a trailer", "2\r\nab\r\n1\r\nc\r\n0\r\nX-Checksum: 1\r\n\r\n", 3),
        ]
        try await withServer(Self.echo, configuration: HTTPServerConfiguration(requestTimeout: .seconds(2))) { server in
            try await onThread {
                for (name, lines) in refused {
                    let connection = try RawHTTPConnection(port: server.port, timeout: 5)
                    connection.send(Self.chunked(lines))
                    let response = try connection.readResponse()
                    #expect(response.status == 400, "\(name): \(response.status) \(response.bodyText)")
                    #expect(connection.isClosedByPeer(), "\(name)")
                }
                for (name, lines, length) in accepted {
                    let connection = try RawHTTPConnection(port: server.port, timeout: 5)
                    connection.send(Self.chunked(lines))
                    let response = try connection.readResponse()
                    #expect(response.status == 200, "\(name): \(response.status) \(response.bodyText)")
                    #expect(response.bodyText == "\(length)\n", "\(name)")
                }
                #expect(server.statistics.protocolErrors == refused.count)
            }
        }
    }

    /// Chunk sizes beyond the body limit, however many digits, are 413 without overflow.
    @Test func hugeChunkSizesAre413() async throws {
        try await withServer(Self.echo, configuration: HTTPServerConfiguration(maximumBodySize: 1000)) { server in
            try await onThread {
                for size in ["3E9", "FFFFFFFFFFFFFFFFFFFFFFFF", "00000000000000000000000000000000000001000"] {
                    let connection = try RawHTTPConnection(port: server.port, timeout: 5)
                    connection.send(Self.chunked(size + "\r\n"))
                    #expect(try connection.readResponse().status == 413, "\(size)")
                }
                let connection = try RawHTTPConnection(port: server.port, timeout: 5)
                connection.send(
                    Self.chunked("00000000000000000000000000000000000003E8\r\n" + String(repeating: "z", count: 1000) + "\r\n0\r\n\r\n"))
                #expect(try connection.readResponse().bodyText == "1000\n", "exactly the limit, after many leading zeros")
            }
        }
    }

    /// 48 clients on keep-alive connections (from four loopback addresses) send verifyReceipt
    /// requests in a loop; the server stops at a random moment. Every request that was completely
    /// sent before stop() was called gets its answer; five rounds.
    @Test func aStopAnswersEveryRequestSentBeforeIt() async throws {
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64"))
        let request = RawHTTPConnection.post("/verifyReceipt", body: VerifyReceiptRequest(receipt: receipt.text).jsonBody)
        let endpoint = try VerifyReceiptEndpointTests.endpoint(.sandbox)
        var generator = SplitMix64(seed: 13)
        for round in 0..<5 {
            let delay = UInt32.random(in: 150_000...400_000, using: &generator)
            let outcome = try await onThread {
                try Self.stopUnderLoad(endpoint: endpoint, request: request, clients: 48, stopAfterMicroseconds: delay)
            }
            #expect(outcome.unanswered.isEmpty, "round \(round): \(outcome.unanswered.count) unanswered: \(outcome.unanswered.prefix(3))")
            #expect(outcome.answeredBeforeStop > 48, "round \(round): the clients were busy before the stop")
        }
    }

    struct StopOutcome: Sendable {
        /// Requests sent before the stop that got no answer (client, sequence number, how).
        var unanswered: [String] = []
        var answeredBeforeStop = 0
    }

    static func stopUnderLoad(endpoint: some HTTPHandler, request: [UInt8], clients: Int, stopAfterMicroseconds: UInt32) throws
        -> StopOutcome
    {
        let server = HTTPServer(configuration: HTTPServerConfiguration(shutdownGracePeriod: .seconds(10)), handler: endpoint)
        try server.start()
        let port = server.port
        let clock = ContinuousClock()
        let stopAt = Locked<ContinuousClock.Instant?>(nil)
        let outcome = Locked(StopOutcome())
        let group = DispatchGroup()
        for client in 0..<clients {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                let connectAt = clock.now
                guard let connection = try? RawHTTPConnection(port: port, timeout: 15, source: "127.0.0.\(1 + client % 4)") else {
                    // Refused while the server was running is a failure; a thread that only got to
                    // connect after the stop (slow thread start under sanitizers) sent nothing.
                    let beforeStop = stopAt.withLock { stop in stop.map { connectAt < $0 } ?? true }
                    if beforeStop { outcome.withLock { $0.unanswered.append("client \(client): cannot connect") } }
                    return
                }
                for sequence in 0..<100_000 {
                    guard connection.send(request) else { return }
                    let sentAt = clock.now
                    let sentBeforeStop = stopAt.withLock { stop in stop.map { sentAt < $0 } ?? true }
                    guard let response = try? connection.readResponse(), response.status == 200 else {
                        if sentBeforeStop { outcome.withLock { $0.unanswered.append("client \(client) request \(sequence)") } }
                        return
                    }
                    if sentBeforeStop { outcome.withLock { $0.answeredBeforeStop += 1 } }
                    if response.headers["connection"] == "close" { return }
                }
            }
            thread.start()
        }
        usleep(stopAfterMicroseconds)
        // The instant is taken before stop() is called: a request sent before it was sent before the stop.
        stopAt.withLock { $0 = clock.now }
        server.stop()
        group.wait()
        server.waitUntilStopped()
        return outcome.withLock { $0 }
    }

    /// 130 slow connections from 127.0.0.2 (each sends half a request head and waits) cannot
    /// starve other clients: with default settings 127.0.0.2 holds at most 32 slots, and every
    /// request from 127.0.0.1 is answered.
    @Test func oneAddressCannotTakeEverySlot() async throws {
        let endpoint = try VerifyReceiptEndpointTests.endpoint(.sandbox)
        try await withServer(endpoint) { server in
            try await onThread {
                #expect(server.configuration.maximumConnections == 128)
                #expect(server.configuration.maximumConnectionsPerClient == 32)
                var slow: [RawHTTPConnection] = []
                for _ in 0..<130 {
                    let connection = try RawHTTPConnection(port: server.port, timeout: 5, source: "127.0.0.2")
                    connection.send("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"recei")
                    slow.append(connection)
                }
                // The slow clients beyond their share were told 503.
                var refused = 0
                for connection in slow.suffix(98) where (try? connection.readResponse())?.status == 503 { refused += 1 }
                #expect(refused == 98)

                let answered = Locked(0)
                let group = DispatchGroup()
                for client in 0..<25 {
                    group.enter()
                    let thread = Thread {
                        defer { group.leave() }
                        guard let connection = try? RawHTTPConnection(port: server.port, timeout: 5, source: "127.0.0.1") else { return }
                        connection.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Client: \(client)\r\n\r\n")
                        if (try? connection.readResponse())?.status == 200 { answered.withLock { $0 += 1 } }
                    }
                    thread.start()
                }
                group.wait()
                #expect(answered.withLock { $0 } == 25)
                let statistics = server.statistics
                #expect(statistics.rejectedConnectionsPerClient == 98)
                #expect(statistics.rejectedConnections == 98)
                withExtendedLifetime(slow) {}
            }
        }
    }

    /// Behind a proxy: listed addresses are exempt from the per-client cap (still within the
    /// total); 0 turns the cap off; an address that is not one is a configuration error.
    @Test func trustedProxiesAndAnOffSwitch() async throws {
        var configuration = HTTPServerConfiguration(maximumConnectionsPerClient: 2, trustedProxies: ["127.0.0.3", "::ffff:127.0.0.4"])
        try await withServer(Self.echo, configuration: configuration) { server in
            try await onThread {
                func served(_ source: String, _ count: Int) throws -> [Int] {
                    let connections = try (0..<count).map { _ in try RawHTTPConnection(port: server.port, timeout: 5, source: source) }
                    for connection in connections { connection.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n") }
                    return connections.map { (try? $0.readResponse())?.status ?? 0 }
                }
                let capped = try served("127.0.0.2", 4)
                let proxy = try served("127.0.0.3", 6)
                let mappedProxy = try served("127.0.0.4", 5)
                #expect(capped == [200, 200, 503, 503])
                #expect(proxy == [200, 200, 200, 200, 200, 200])
                #expect(mappedProxy == [200, 200, 200, 200, 200], "an IPv4-mapped literal names the IPv4 client")
            }
        }
        configuration.maximumConnectionsPerClient = 0
        configuration.trustedProxies = []
        try await withServer(Self.echo, configuration: configuration) { server in
            try await onThread {
                let connections = try (0..<40).map { _ in try RawHTTPConnection(port: server.port, timeout: 5, source: "127.0.0.2") }
                for connection in connections { connection.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n") }
                #expect(connections.allSatisfy { (try? $0.readResponse())?.status == 200 })
            }
        }
        let misconfigured = HTTPServer(configuration: HTTPServerConfiguration(trustedProxies: ["proxy.example"]), handler: Self.echo)
        let error = #expect(throws: HTTPServerError.self) { try misconfigured.start() }
        #expect(error?.operation == "configuration")
        misconfigured.shutdown()
    }
}
