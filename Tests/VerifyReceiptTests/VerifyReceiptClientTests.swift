import Dispatch
import Foundation
import HTTPServer
import Internals
import ReceiptServer
import ReceiptVerification
import Receipts
import TestSupport
import Testing
import VerifyReceipt

/// The client against real servers on 127.0.0.1: the project's own endpoint (production and
/// sandbox instances) and scripted servers for routing, HTTP errors and timeouts.
@Suite struct VerifyReceiptClientTests {
    static func configuration(production: HTTPServer, sandbox: HTTPServer, timeout: TimeInterval = 5) -> VerifyReceiptClient.Configuration {
        VerifyReceiptClient.Configuration(productionURL: url(production), sandboxURL: url(sandbox), timeout: timeout)
    }

    /// The project's own endpoint, trusting Apple's bundled roots, at a fixed request time.
    static func endpoint(_ environment: VerifyReceiptEnvironment) throws -> VerifyReceiptEndpoint {
        try VerifyReceiptEndpoint.apple(
            configuration: .init(environment: environment, clock: { Date(timeIntervalSince1970: 1_780_000_000) }))
    }

    static func statusBody(_ status: Int) -> HTTPResponse {
        .json(VerifyReceiptResponseWriter.status(VerifyReceiptStatus(rawValue: status)))
    }

    /// A timeout the caller configures as NaN, an infinity or a huge number does not stop the
    /// process (its conversion to milliseconds used to trap): the call is answered as usual.
    @Test(arguments: [Double.infinity, .nan, 1e300, -1])
    func anyConfiguredTimeoutIsSafe(timeout: Double) async throws {
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64"))
        try await withServer(try Self.endpoint(.sandbox)) { sandbox in
            var configuration = Self.configuration(production: sandbox, sandbox: sandbox, timeout: timeout)
            configuration.initialEnvironment = .sandbox
            if timeout < 0 || timeout.isNaN {
                // Clamped to a millisecond: answered in time or timed out, never a crash.
                _ = try? await VerifyReceiptClient(configuration: configuration).verify(receipt: receipt.text)
            } else {
                let result = try await VerifyReceiptClient(configuration: configuration).verify(receipt: receipt.text)
                #expect(result.response.status == .valid)
            }
        }
    }

    /// A sandbox receipt: production says 21007, the client asks the sandbox, which verifies it.
    @Test func sandboxReceiptIsRoutedToTheSandbox() async throws {
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64"))
        try await withServer(try Self.endpoint(.production)) { production in
            try await withServer(try Self.endpoint(.sandbox)) { sandbox in
                let client = VerifyReceiptClient(configuration: Self.configuration(production: production, sandbox: sandbox))
                let result = try await client.verify(receipt: receipt.text)
                #expect(result.attempts == [.production, .sandbox])
                #expect(result.environment == .sandbox)
                #expect(result.response.status == .valid)
                #expect(result.response.environment == "Sandbox")
                #expect(try result.response.purchaseInfo()?.transactionIdentifier == "1000000046178817")
                #expect(production.statistics.requests == 1)
                #expect(sandbox.statistics.requests == 1)

                // Starting at the sandbox needs one call.
                var sandboxFirst = Self.configuration(production: production, sandbox: sandbox)
                sandboxFirst.initialEnvironment = .sandbox
                let direct = try await VerifyReceiptClient(configuration: sandboxFirst).verify(receipt: receipt.text)
                #expect(direct.attempts == [.sandbox])

                // A production-labelled receipt sent to the sandbox first: 21008, then production.
                let relabelled = try TransactionReceipt(
                    signatureBlob: receipt.signatureBlob, purchaseInfoData: receipt.purchaseInfoData, environment: "Production")
                let back = try await VerifyReceiptClient(configuration: sandboxFirst).verify(receipt: relabelled.text)
                #expect(back.attempts == [.sandbox, .production])
                #expect(back.response.status == .valid)
                #expect(back.response.environment == "Production")

                // A tampered receipt is answered, not thrown: the production endpoint verifies before it
                // routes, so it answers 21003 itself and there is nothing to follow.
                let tampered = try await client.verify(receipt: try Fixtures.withQuantityTwo(receipt).text)
                #expect(tampered.response.status == .notAuthenticated)
                #expect(tampered.attempts == [.production])
            }
        }
    }

    /// Scripted endpoints that bounce the receipt back and forth: each is called once, no loop.
    @Test func routingNeverLoops() async throws {
        let production = ScriptedHandler { _ in Self.statusBody(21007) }
        let sandbox = ScriptedHandler { _ in Self.statusBody(21008) }
        try await withServer(production) { productionServer in
            try await withServer(sandbox) { sandboxServer in
                let configuration = Self.configuration(production: productionServer, sandbox: sandboxServer)
                let result = try await VerifyReceiptClient(configuration: configuration).verify(receipt: [1, 2, 3])
                #expect(result.attempts == [.production, .sandbox])
                #expect(result.response.status == .productionReceiptOnSandbox)
                var sandboxFirst = configuration
                sandboxFirst.initialEnvironment = .sandbox
                let reverse = try await VerifyReceiptClient(configuration: sandboxFirst).verify(receipt: [1, 2, 3])
                #expect(reverse.attempts == [.sandbox, .production])
                #expect(reverse.response.status == .sandboxReceiptOnProduction)
                var noRedirects = configuration
                noRedirects.followsEnvironmentRedirects = false
                let single = try await VerifyReceiptClient(configuration: noRedirects).verify(receipt: [1, 2, 3])
                #expect(single.attempts == [.production])
                #expect(single.response.status == .sandboxReceiptOnProduction)
                #expect(production.requests.count == 3)
                #expect(sandbox.requests.count == 2)
            }
        }
    }

    /// What goes over the wire: POST, JSON, `receipt-data` base64, `password` and
    /// `exclude-old-transactions` only when configured.
    @Test func requestBodies() async throws {
        let handler = ScriptedHandler { _ in Self.statusBody(0) }
        try await withServer(handler) { server in
            var configuration = Self.configuration(production: server, sandbox: server)
            _ = try await VerifyReceiptClient(configuration: configuration).verify(receipt: [0xDE, 0xAD])
            configuration.sharedSecret = "s3cret"
            configuration.excludeOldTransactions = true
            _ = try await VerifyReceiptClient(configuration: configuration).verify(receipt: [0xDE, 0xAD])
            let requests = handler.requests
            #expect(requests.count == 2)
            #expect(requests.allSatisfy { $0.method == "POST" && $0.path == "/verifyReceipt" })
            #expect(requests.first?.header("content-type") == "application/json")
            #expect(requests.first.map { String(decoding: $0.body, as: UTF8.self) } == #"{"receipt-data":"3q0="}"#)
            #expect(
                requests.last.map { String(decoding: $0.body, as: UTF8.self) }
                    == #"{"receipt-data":"3q0=","password":"s3cret","exclude-old-transactions":true}"#)
        }
    }

    @Test func serverErrorsAndBadBodiesAreTypedErrors() async throws {
        let handler = ScriptedHandler { request in
            switch request.query {
            case "503": .text("down", status: 503)
            case "html": .text("<html>maintenance</html>", status: 200)
            case "21005": Self.statusBody(21005)
            // A valid answer padded past the client's 64 KiB limit below.
            case "huge": .json(Array(#"{"status":0,"pad":""#.utf8) + [UInt8](repeating: 0x61, count: 1 << 20) + Array(#""}"#.utf8))
            case "redirect": HTTPResponse(status: 307, headers: [HTTPHeader("Location", "/verifyReceipt?21005")])
            default: .text("not found", status: 404)
            }
        }
        try await withServer(handler) { server in
            func client(_ query: String) -> VerifyReceiptClient {
                let target = url(server, "/verifyReceipt?\(query)")
                return VerifyReceiptClient(configuration: .init(productionURL: target, sandboxURL: target, timeout: 5))
            }
            do throws(VerifyReceiptClientError) {
                _ = try await client("503").verify(receipt: [1])
                Issue.record("HTTP 503 did not throw")
            } catch {
                #expect(error.code == .httpStatus)
                #expect(error.httpStatus == 503)
                #expect(error.isRetryable)
                #expect(error.isUnableToComplete)
                #expect(error.environment == .production)
            }
            do throws(VerifyReceiptClientError) {
                _ = try await client("html").verify(receipt: [1])
                Issue.record("an HTML body did not throw")
            } catch {
                #expect(error.code == .invalidResponse)
                #expect(!error.isRetryable)
            }
            // The response is bounded while it arrives, not after.
            do throws(VerifyReceiptClientError) {
                let target = url(server, "/verifyReceipt?huge")
                _ = try await VerifyReceiptClient(
                    configuration: .init(productionURL: target, sandboxURL: target, timeout: 5, maximumResponseSize: 64 << 10)
                ).verify(receipt: [1])
                Issue.record("a 1 MiB body passed a 64 KiB limit")
            } catch {
                #expect(error.code == .invalidResponse)
                #expect(error.reason.contains("larger than 65536 bytes"))
            }
            // A redirect is the answer, never followed: the receipt and the secret go nowhere else.
            do throws(VerifyReceiptClientError) {
                _ = try await client("redirect").verify(receipt: [1])
                Issue.record("a redirect was followed")
            } catch {
                #expect(error.code == .httpStatus)
                #expect(error.httpStatus == 307)
            }
            #expect(!handler.requests.contains { $0.query == "21005" })
            // Apple's own "server unavailable" status is an answer, not a transport failure.
            let unavailable = try await client("21005").verify(receipt: [1])
            #expect(unavailable.response.status == .serverUnavailable)
            #expect(unavailable.response.status.isRetryable)
        }
    }

    @Test func timeoutsAndRefusedConnections() async throws {
        // The handler answers only when the test releases it (or after 30 s), so a client that
        // returns before that returned on its own deadline or cancellation, however busy the machine.
        let gates = Locked<[String: DispatchSemaphore]>(["timeout": DispatchSemaphore(value: 0), "cancel": DispatchSemaphore(value: 0)])
        let slow = ScriptedHandler { request in
            if let gate = gates.withLock({ $0[request.query ?? ""] }) { _ = gate.wait(timeout: .now() + 30) }
            return Self.statusBody(0)
        }
        try await withServer(slow) { server in
            let timeoutURL = url(server, "/verifyReceipt?timeout")
            let configuration = VerifyReceiptClient.Configuration(productionURL: timeoutURL, sandboxURL: timeoutURL, timeout: 0.5)
            let clock = ContinuousClock()
            let start = clock.now
            do throws(VerifyReceiptClientError) {
                _ = try await VerifyReceiptClient(configuration: configuration).verify(receipt: [1])
                Issue.record("a held answer did not time out at 0.5 s")
            } catch {
                #expect(error.code == .timedOut)
                #expect(error.isRetryable)
            }
            // Not at once: the deadline is the configured 0.5 s, not URLSession's whole seconds
            // (which make 0.5 s zero on Linux).
            #expect(clock.now - start >= .milliseconds(450))
            gates.withLock { $0["timeout"] }?.signal()

            // Cancelling the calling task ends the call with `cancelled`.
            let cancelURL = url(server, "/verifyReceipt?cancel")
            let patient = VerifyReceiptClient(configuration: .init(productionURL: cancelURL, sandboxURL: cancelURL, timeout: 60))
            let task = Task { try await patient.verify(receipt: [1]) }
            try await Task.sleep(for: .milliseconds(100))
            task.cancel()
            switch await task.result {
            case .success: Issue.record("a cancelled call succeeded")
            case .failure(let error): #expect((error as? VerifyReceiptClientError)?.code == .cancelled)
            }
            gates.withLock { $0["cancel"] }?.signal()
        }

        // A port nobody listens on any more.
        let closed = HTTPServer(handler: ScriptedHandler { _ in Self.statusBody(0) })
        try closed.start()
        let port = closed.port
        closed.shutdown()
        let target = try #require(URL(string: "http://127.0.0.1:\(port)/verifyReceipt"))
        do throws(VerifyReceiptClientError) {
            _ = try await VerifyReceiptClient(configuration: .init(productionURL: target, sandboxURL: target, timeout: 5)).verify(receipt: [
                1
            ])
            Issue.record("a closed port did not fail")
        } catch {
            #expect(error.code == .cannotConnect)
            #expect(error.url == target)
        }
    }

    @Test func appleEndpointsAreTheDefaults() throws {
        let apple = try #require(VerifyReceiptClient.Configuration.apple)
        #expect(apple.productionURL.absoluteString == "https://buy.itunes.apple.com/verifyReceipt")
        #expect(apple.sandboxURL.absoluteString == "https://sandbox.itunes.apple.com/verifyReceipt")
        #expect(apple.initialEnvironment == .production)
        #expect(apple.followsEnvironmentRedirects)
    }
}
