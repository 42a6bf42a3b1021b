// `receipt-tool simulate` as a newcomer meets it: started as a process, then `receipt-tool api`
// called with nothing but what it wrote to simulate.json.

import Foundation
import Glibc
import JSON
import TestSupport
import Testing

/// A `receipt-tool simulate` process, stopped when the value goes away.
final class SimulateProcess: @unchecked Sendable {
    let process = Process()
    let output = Pipe()
    let errors = Pipe()
    /// Standard output up to the line saying it serves.
    private(set) var banner = ""

    /// Starts `receipt-tool simulate <arguments>` and waits for its "Serving until" line.
    init(_ arguments: [String]) throws {
        let executable = try #require(ReceiptTool.executable, "receipt-tool was not built next to the tests")
        process.executableURL = executable
        process.arguments = ["simulate"] + arguments
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.runRetryingBadDescriptor()
        var bytes: [UInt8] = []
        let handle = output.fileHandleForReading
        while !String(decoding: bytes, as: UTF8.self).contains("Serving until") {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            bytes += chunk
        }
        banner = String(decoding: bytes, as: UTF8.self)
    }

    /// Sends `signal` and waits (up to `timeout`) for the exit status.
    func stop(signal: Int32 = SIGINT, timeout: TimeInterval = 10) -> (status: Int32?, stderr: String) {
        guard process.isRunning else { return (process.terminationStatus, "") }
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        guard !process.isRunning else {
            process.terminate()
            return (nil, "")
        }
        return (process.terminationStatus, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

@Suite("receipt-tool simulate")
struct SimulateCommandTests {
    /// The JSON objects of the output, one a line.
    static func lines(_ output: String) throws -> [JSONValue] {
        try output.split(separator: "\n").map { try JSONValue.parse(String($0)) }
    }

    @Test(.timeLimit(.minutes(2))) func apiWorksWithWhatSimulateWrites() async throws {
        let directory = temporaryDirectory().appendingPathComponent("simulate folder")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let simulator = try SimulateProcess(["--dir", directory.path])
        defer { _ = simulator.stop() }
        #expect(simulator.banner.hasPrefix("receipt-tool simulate: App Store Server API on http://127.0.0.1:"), "\(simulator.banner)")
        let settings = try JSONValue.parse(Array(try Data(contentsOf: directory.appendingPathComponent("simulate.json"))))

        // Everything api needs, each option named.
        let baseURL = try #require(settings["baseURL"]?.stringValue)
        #expect(baseURL.hasPrefix("http://127.0.0.1:"))
        #expect(settings["environment"]?.stringValue == "sandbox")
        let privateKey = try #require(settings["privateKey"]?.stringValue)
        let anchor = try #require(settings["anchor"]?.stringValue)
        #expect(
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: privateKey)), as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----")
        )
        let permissions = try FileManager.default.attributesOfItem(atPath: privateKey)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        let options = [
            "--issuer-id", try #require(settings["issuerId"]?.stringValue), "--key-id", try #require(settings["keyId"]?.stringValue),
            "--private-key", privateKey, "--bundle-id", try #require(settings["bundleId"]?.stringValue), "--environment", "sandbox",
            "--base-url", baseURL, "--anchor", anchor,
        ]
        #expect((settings["apiOptions"]?.arrayValue ?? []).compactMap(\.stringValue) == options)
        // The line to paste names the same options (the folder's space quoted for the shell).
        #expect(simulator.banner.contains("receipt-tool api history "))
        #expect(simulator.banner.contains("--private-key '\(privateKey)'"), "\(simulator.banner)")

        let customers = try #require(settings["customers"]?.arrayValue)
        #expect(customers.count >= 2)
        let alice = (customers.first?["transactionIds"]?.arrayValue ?? []).compactMap(\.stringValue)
        let bob = (customers.last?["transactionIds"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(alice.count == 4 && bob.count == 4, "\(alice) \(bob)")
        #expect(Set(alice).isDisjoint(with: bob))
        // The same ids every run: the documentation's `api history 2000000500822478` works as written.
        #expect(alice.first == "2000000500822478" && bob.first == "2000000356348199", "\(alice) \(bob)")
        #expect(customers.last?["transactions"]?.arrayValue?.filter { $0["refunded"] == .bool(true) }.count == 1)

        // History of one customer: every transaction verified, the renewals included, none of bob's.
        let history = try await tool(["api", "history", alice[0], "--json"] + options)
        #expect(history.status == 0, "\(history.stderr)")
        let lines = try Self.lines(history.stdout)
        #expect(lines.compactMap { $0["transactionId"]?.stringValue } == alice)
        #expect(lines.filter { $0["productId"] == .string("com.example.monthly") }.count == 3, "a purchase and two renewals")
        let text = try await tool(["api", "history", alice[0]] + options)
        #expect(text.status == 0 && text.stdout.components(separatedBy: "(verified)").count == alice.count + 1, "\(text.stdout)")

        // Another customer's transaction: only that customer's data.
        let transaction = try await tool(["api", "transaction", bob[0], "--json"] + options)
        #expect(transaction.status == 0, "\(transaction.stderr)")
        let info = try Self.lines(transaction.stdout)
        #expect(info.compactMap { $0["transactionId"]?.stringValue } == [bob[0]])
        let bobsHistory = try await tool(["api", "history", bob[1], "--json"] + options)
        #expect(try Self.lines(bobsHistory.stdout).compactMap { $0["transactionId"]?.stringValue } == bob)
        let refunds = try await tool(["api", "refunds", bob[0], "--json"] + options)
        #expect(try Self.lines(refunds.stdout).compactMap { $0["transactionId"]?.stringValue } == [bob[2]])

        let stopped = simulator.stop(signal: SIGINT)
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }

    @Test func defaultsToANewTemporaryFolder_andRefusesUsageErrors() async throws {
        let simulator = try SimulateProcess([])
        let folder = try #require(
            simulator.banner.split(separator: "\n").first { $0.hasPrefix("  settings") }.map {
                String($0.dropFirst("  settings".count)).trimmingCharacters(in: .whitespaces)
            })
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: folder).deletingLastPathComponent()) }
        #expect(folder.hasSuffix("/simulate.json") && folder.contains("receipt-tool-simulate-"), "\(simulator.banner)")
        #expect(FileManager.default.fileExists(atPath: folder))
        #expect(simulator.stop(signal: SIGTERM).status == 0)

        for arguments in [["simulate", "extra"], ["simulate", "--port", "70000"], ["simulate", "--dir", "a\u{1B}b"]] {
            let result = try await tool(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.hasSuffix("see 'receipt-tool simulate --help'\n"), "\(result.stderr)")
        }
    }
}
