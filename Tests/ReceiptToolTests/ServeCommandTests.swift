import Foundation
import Glibc
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `receipt-tool serve` process on an ephemeral port of 127.0.0.1.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    let output = Pipe()
    let errors = Pipe()
    private(set) var port: UInt16 = 0
    private(set) var firstLine = ""

    /// Starts `receipt-tool serve --port 0 <arguments>` and waits for its "listening" line.
    init(_ arguments: [String]) throws {
        let executable = try #require(ReceiptTool.executable, "receipt-tool was not built next to the tests")
        process.executableURL = executable
        process.arguments = ["serve", "--port", "0"] + arguments
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.runRetryingBadDescriptor()
        var line: [UInt8] = []
        let handle = output.fileHandleForReading
        while !line.contains(0x0A) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        firstLine = String(decoding: line, as: UTF8.self)
        if let colon = firstLine.range(of: "127.0.0.1:"),
            let port = UInt16(firstLine[colon.upperBound...].prefix { $0.isNumber })
        {
            self.port = port
        }
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Sends `signal` and waits (up to `timeout`, a guard against a hang, not a measure of speed:
    /// a loaded machine running the whole suite has taken over 10 s to let a draining serve
    /// finish) for the exit status.
    func stop(signal: Int32 = SIGTERM, timeout: TimeInterval = 60) -> (status: Int32?, stderr: String) {
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        guard !process.isRunning else {
            process.terminate()
            return (nil, "")
        }
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, stderr)
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

@Suite struct ServeCommandTests {
    static let anchorArguments = [
        "--anchor", Fixtures.path("certs/AppleIncRootCertificate.cer"),
        "--itunes-ca", Fixtures.path("certs/AppleiTunesStoreCertificationAuthority.der"),
    ]

    static func post(_ url: String, body: Data) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: try #require(URL(string: url)), timeoutInterval: 10)
        request.httpMethod = "POST"
        request.httpBody = body
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:])
    }

    static func receiptBody(_ fixture: String) throws -> Data {
        let base64 = try String(contentsOfFile: Fixtures.path(fixture), encoding: .utf8).filter { !$0.isWhitespace }
        return Data("{\"receipt-data\":\"\(base64)\"}".utf8)
    }

    /// Serves verifyReceipt like Apple: 0 on the sandbox endpoint, 21007 on production, 21002 on
    /// junk; health route; SIGTERM stops it with exit status 0.
    @Test func servesAndStopsOnSIGTERM() async throws {
        let sandbox = try ServeProcess(["--environment", "sandbox"] + Self.anchorArguments)
        #expect(sandbox.firstLine.hasPrefix("receipt-tool serve: listening on http://127.0.0.1:"))
        #expect(sandbox.firstLine.contains("(sandbox)"))
        try #require(sandbox.port != 0)
        let production = try ServeProcess(Self.anchorArguments)
        try #require(production.port != 0)

        let body = try Self.receiptBody("legacy/venice-legacy-transaction-receipt.b64")
        let (httpStatus, json) = try await Self.post(sandbox.baseURL + "/verifyReceipt", body: body)
        #expect(httpStatus == 200)
        #expect(json["status"] as? Int == 0)
        #expect(json["environment"] as? String == "Sandbox")
        #expect((json["receipt"] as? [String: Any])?["transaction_id"] as? String == "1000000046178817")

        let (_, misrouted) = try await Self.post(production.baseURL + "/verifyReceipt", body: body)
        #expect(misrouted["status"] as? Int == 21007)
        let (_, junk) = try await Self.post(sandbox.baseURL + "/verifyReceipt", body: Data("{\"receipt-data\":\"nope\"}".utf8))
        #expect(junk["status"] as? Int == 21002)
        let (_, notJSON) = try await Self.post(sandbox.baseURL + "/verifyReceipt", body: Data("receipt".utf8))
        #expect(notJSON["status"] as? Int == 21000)

        let (health, _) = try await URLSession.shared.data(from: try #require(URL(string: sandbox.baseURL + "/health")))
        #expect(String(decoding: health, as: UTF8.self) == #"{"status":"ok","environment":"Sandbox"}"#)

        let stopped = sandbox.stop(signal: SIGTERM)
        #expect(stopped.status == 0)
        #expect(stopped.stderr.contains("POST /verifyReceipt → 0: transaction 1000000046178817 verified"))
        #expect(stopped.stderr.contains("signal \(SIGTERM): shutting down"))
        #expect(stopped.stderr.contains("serve: stopped"))
        let interrupted = production.stop(signal: SIGINT)
        #expect(interrupted.status == 0)
        #expect(interrupted.stderr.contains("signal \(SIGINT): shutting down"))
    }

    /// Without --anchor, serve trusts the bundled Apple certificates: an app receipt verifies at its
    /// creation date and a transaction receipt at its purchase date.
    @Test func defaultsTrustTheBundledAppleCertificates() async throws {
        let server = try ServeProcess(["--environment", "sandbox", "--quiet"])
        try #require(server.port != 0)
        let der = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("base64encodedreceiptsample1.der")))
        let (_, app) = try await Self.post(
            server.baseURL + "/verifyReceipt", body: Data("{\"receipt-data\":\"\(der.base64EncodedString())\"}".utf8))
        #expect(app["status"] as? Int == 0)
        #expect((app["receipt"] as? [String: Any])?["bundle_id"] as? String == "com.revenuecat.sampleapp")
        #expect((app["latest_receipt_info"] as? [Any])?.count == 9)
        let (_, legacy) = try await Self.post(
            server.baseURL + "/verifyReceipt", body: try Self.receiptBody("legacy/base64encoded_unsupportedReceipt2.b64"))
        #expect(legacy["status"] as? Int == 0)
        let xcode = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("receipt-xcode.der")))
        let (_, untrusted) = try await Self.post(
            server.baseURL + "/verifyReceipt", body: Data("{\"receipt-data\":\"\(xcode.base64EncodedString())\"}".utf8))
        #expect(untrusted["status"] as? Int == 21003)
        let stopped = server.stop()
        #expect(stopped.status == 0)
        #expect(!stopped.stderr.contains("POST"))
    }

    @Test func usageErrorsExit64() throws {
        for arguments in [
            ["--port", "http"], ["--environment", "staging"], ["--at", "yesterday"], ["--max-connections", "0"], ["extra"],
        ] {
            let result = try ReceiptTool.run(["serve"] + arguments + Self.anchorArguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix("Error: "))
        }
        let help = try ReceiptTool.run(["serve", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("POST /verifyReceipt"))
        #expect(help.stdout.contains("load balancer"))
    }

    @Test func busyPortAndBadAnchorsExitOne() throws {
        let first = try ServeProcess(Self.anchorArguments)
        try #require(first.port != 0)
        let second = try ReceiptTool.run(["serve", "--port", String(first.port)] + Self.anchorArguments)
        #expect(second.status == 1)
        #expect(second.stderr.contains("bind"))
        #expect(first.stop().status == 0)
        let badAnchor = try ReceiptTool.run([
            "serve", "--anchor", Fixtures.path("not_a_receipt"),
            "--itunes-ca", Fixtures.path("certs/AppleiTunesStoreCertificationAuthority.der"),
        ])
        #expect(badAnchor.status == 1)
        #expect(badAnchor.stderr.contains("cannot load the anchor"))
    }
}
