import Foundation
import Glibc
import TestSupport
import Testing

/// `receipt-tool serve` stopped by SIGTERM while 48 keep-alive clients keep sending: every request
/// completely sent before the signal is answered (issue 13).
@Suite(.serialized) struct ServeShutdownTests {
    /// State shared by the client threads.
    final class Tally: @unchecked Sendable {
        // @unchecked: every field is read and written under `lock`.
        private let lock = NSLock()
        private var signalledAt: ContinuousClock.Instant?
        private(set) var unanswered: [String] = []
        private(set) var answeredBeforeSignal = 0

        func signalled(at instant: ContinuousClock.Instant) { lock.withLock { signalledAt = instant } }

        /// Whether a request completely sent at `instant` was sent before the signal.
        func beforeSignal(_ instant: ContinuousClock.Instant) -> Bool { lock.withLock { signalledAt.map { instant < $0 } ?? true } }

        func record(answered: Bool, label: String) {
            lock.withLock {
                if answered { answeredBeforeSignal += 1 } else { unanswered.append(label) }
            }
        }
    }

    @Test func sigtermAnswersEveryRequestSentBeforeIt() throws {
        let base64 = try String(contentsOfFile: Fixtures.path("legacy/venice-legacy-transaction-receipt.b64"), encoding: .utf8)
            .filter { !$0.isWhitespace }
        let request = RawHTTPConnection.post("/verifyReceipt", body: Array("{\"receipt-data\":\"\(base64)\"}".utf8))
        for round in 0..<3 {
            let server = try ServeProcess(["--environment", "sandbox", "--quiet"] + ServeCommandTests.anchorArguments)
            try #require(server.port != 0)
            let port = server.port
            let clock = ContinuousClock()
            let tally = Tally()
            let group = DispatchGroup()
            for client in 0..<48 {
                group.enter()
                let thread = Thread {
                    defer { group.leave() }
                    // Four client addresses, twelve connections each (under the per-client cap of 32).
                    guard let connection = try? RawHTTPConnection(port: port, timeout: 15, source: "127.0.0.\(1 + client % 4)") else {
                        tally.record(answered: false, label: "client \(client): cannot connect")
                        return
                    }
                    for sequence in 0..<100_000 {
                        guard connection.send(request) else { return }
                        let sentBeforeSignal = tally.beforeSignal(clock.now)
                        guard let response = try? connection.readResponse(), response.status == 200 else {
                            if sentBeforeSignal { tally.record(answered: false, label: "client \(client) request \(sequence)") }
                            return
                        }
                        if sentBeforeSignal { tally.record(answered: true, label: "") }
                        if response.headers["connection"] == "close" { return }
                    }
                }
                thread.start()
            }
            usleep(UInt32(300_000 + round * 150_000))
            tally.signalled(at: clock.now)
            let stopped = server.stop(signal: SIGTERM, timeout: 20)
            group.wait()
            #expect(stopped.status == 0, "round \(round)")
            #expect(tally.unanswered.isEmpty, "round \(round): \(tally.unanswered.count) unanswered, e.g. \(tally.unanswered.prefix(3))")
            #expect(tally.answeredBeforeSignal > 48, "round \(round): the clients were busy before the signal")
        }
    }

    @Test func perClientOptions() throws {
        for arguments in [
            ["--max-connections-per-client", "-1"], ["--max-connections-per-client", "many"], ["--trusted-proxy", "proxy.local"],
        ] {
            let result = try ReceiptTool.run(["serve"] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix("Error: "))
        }
        let help = try ReceiptTool.run(["serve", "--help"])
        #expect(help.stdout.contains("--max-connections-per-client <n>"))
        #expect(help.stdout.contains("--trusted-proxy <address>"))
        let server = try ServeProcess(
            ["--max-connections-per-client", "1", "--trusted-proxy", "127.0.0.3", "--quiet"] + ServeCommandTests.anchorArguments)
        try #require(server.port != 0)
        let first = try RawHTTPConnection(port: server.port, timeout: 5, source: "127.0.0.2")
        let second = try RawHTTPConnection(port: server.port, timeout: 5, source: "127.0.0.2")
        let proxied = try (0..<3).map { _ in try RawHTTPConnection(port: server.port, timeout: 5, source: "127.0.0.3") }
        for connection in [first, second] + proxied { connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n") }
        #expect(try first.readResponse().status == 200)
        #expect(try second.readResponse().status == 503)
        for connection in proxied { #expect(try connection.readResponse().status == 200) }
        #expect(server.stop().status == 0)
    }
}
