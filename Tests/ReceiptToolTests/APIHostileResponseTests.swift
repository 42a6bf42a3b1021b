// `receipt-tool api` against a hostile server on 127.0.0.1: an encoded body it did not ask for,
// history pages without end, a page token that comes back, an errorMessage with escape codes.

import AppStoreServerAPI
import Foundation
import JWS
import ReceiptSigning
import ReceiptVerification
import StoreTesting
import TestSupport
import Testing

@Suite("receipt-tool api against a hostile server", .serialized)
@MainActor
struct APIHostileResponseTests {
    /// The options of every run: the world's key and JWS root, the hostile server's URL, one
    /// attempt of at most 5 s.
    static func arguments(_ world: APIToolWorld, _ server: HostileAPIServer) -> [String] {
        [
            "--issuer-id", APIToolWorld.issuerID, "--key-id", APIToolWorld.keyID, "--private-key", world.keyFile.path, "--bundle-id",
            APIToolWorld.bundleID, "--environment", "sandbox", "--base-url", server.baseURL, "--anchor", world.anchorFile.path,
            "--timeout", "5", "--max-attempts", "1",
        ]
    }

    /// A transaction the simulated App Store signed (valid for the world's JWS root).
    static func signedTransaction(_ world: APIToolWorld) async throws -> String {
        world.buy("com.example.coins")
        let pem = try String(contentsOf: world.keyFile, encoding: .utf8)
        let client = try AppStoreServerAPIClient(
            configuration: .init(
                key: try AppStoreConnectKey(issuerID: APIToolWorld.issuerID, keyID: APIToolWorld.keyID, p8: pem),
                bundleID: APIToolWorld.bundleID, environment: AppStoreServerEnvironment.sandbox.at(world.server.baseURL),
                anchors: TrustAnchors([try PKIs.jws.get().root]), rateLimits: .unlimited))
        let id = try #require(world.ids.first)
        let signed = try await client.transactionInfo(transactionID: id)
        return String(decoding: signed.jws.token, as: UTF8.self)
    }

    /// A Get Transaction History page with `hasMore: true`, 20 copies of `token` and, when
    /// `size` is given, padding up to `size` bytes.
    nonisolated static func historyPage(revision: String, token: String, size: Int? = nil) -> [UInt8] {
        let tokens = Array(repeating: "\"\(token)\"", count: 20).joined(separator: ",")
        let head =
            "{\"revision\":\"\(revision)\",\"hasMore\":true,\"bundleId\":\"\(APIToolWorld.bundleID)\",\"environment\":\"Sandbox\",\"signedTransactions\":[\(tokens)]"
        guard let size else { return Array((head + "}").utf8) }
        let padding = max(0, size - head.utf8.count - 16)
        return Array((head + ",\"padding\":\"" + String(repeating: "x", count: padding) + "\"}").utf8)
    }

    nonisolated static let json = [("Content-Type", "application/json")]

    @Test(.timeLimit(.minutes(3)))
    func sixtyReplayedEightMiBHistoryPages_endAtTheTotalSizeLimit_inBoundedMemory() async throws {
        let world = try APIToolWorld()
        let token = try await Self.signedTransaction(world)
        let id = try #require(world.ids.first)
        // The same page replayed with a new revision each time, each just under the 8 MiB body
        // limit, 60 of them and the last still says hasMore.
        let size = (8 << 20) - 4096
        let server = try HostileAPIServer { _, index in
            guard index < 60 else { return .fixed(status: 404, headers: [], body: []) }
            return .fixed(status: 200, headers: Self.json, body: Self.historyPage(revision: "r\(index)", token: token, size: size))
        }
        defer { server.stop() }  // however the test ends
        let arguments = ["api", "history", id, "--json"] + Self.arguments(world, server)
        let run = try await onThread { try MeasuredRun.run(arguments) }
        server.stop()
        await world.finish()
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("the pages together are larger than 16777216 bytes"), "\(run.stderr)")
        #expect(run.stdout.isEmpty, "nothing is printed from a call that failed")
        #expect(server.requests.count <= 3, "\(server.requests.count) pages were asked for")
        #expect(run.seconds < 60, "correctness bound, not a speed test: \(run.seconds) s")
        #expect(run.maximumResidentKiB < 100 << 10, "peak RSS \(run.maximumResidentKiB) KiB")
    }

    @Test(.timeLimit(.minutes(3)))
    func historyPagesWithoutEnd_endAtThePagingDeadline() async throws {
        let world = try APIToolWorld()
        let token = try await Self.signedTransaction(world)
        let id = try #require(world.ids.first)
        let server = try HostileAPIServer { _, index in
            .delayed(0.4, .fixed(status: 200, headers: Self.json, body: Self.historyPage(revision: "r\(index)", token: token)))
        }
        defer { server.stop() }  // however the test ends
        let arguments =
            ["api", "history", id, "--json", "--paging-deadline", "2", "--max-total-bytes", "1000000000"] + Self.arguments(world, server)
        let run = try await onThread { try MeasuredRun.run(arguments) }
        server.stop()
        await world.finish()
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("timedOut"), "\(run.stderr)")
        #expect(run.stderr.contains("the pages took longer than the paging deadline of 2.0 s"), "\(run.stderr)")
        #expect(server.requests.count < 20, "\(server.requests.count) pages were asked for")
        #expect(run.seconds < 60, "correctness bound, not a speed test: \(run.seconds) s")
    }

    @Test(.timeLimit(.minutes(3)))
    func aPageTokenThatComesBack_endsTheCall() async throws {
        let world = try APIToolWorld()
        let token = try await Self.signedTransaction(world)
        let id = try #require(world.ids.first)
        // r0, r1, r0, r1, …: never the same token twice in a row, so only a set of every token
        // seen notices.
        let server = try HostileAPIServer { _, index in
            .fixed(status: 200, headers: Self.json, body: Self.historyPage(revision: "r\(index % 2)", token: token))
        }
        defer { server.stop() }  // however the test ends
        let arguments = ["api", "history", id, "--json"] + Self.arguments(world, server)
        let run = try await onThread { try MeasuredRun.run(arguments) }
        server.stop()
        await world.finish()
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("the revision repeats one an earlier page gave"), "\(run.stderr)")
        #expect(server.requests.count == 3)
    }

    @Test(.timeLimit(.minutes(3)))
    func aGzipBomb_isRefusedAtItsHead_inBoundedMemory() async throws {
        let world = try APIToolWorld()
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // 600 MiB of zeros in 2.6 MiB of gzip (URLSession, asking for gzip, decoded all of it).
        let bombFile = directory.appendingPathComponent("bomb.gz")
        let status = try spawnAndWait(
            "/bin/sh", ["-c", "head -c 629145600 /dev/zero | gzip -1 > '\(bombFile.path)'"], output: directory.appendingPathComponent("log")
        )
        try #require(status == 0)
        let bomb = try [UInt8](Data(contentsOf: bombFile))
        let server = try HostileAPIServer { _, _ in
            .fixed(status: 200, headers: Self.json + [("Content-Encoding", "gzip")], body: bomb)
        }
        defer { server.stop() }  // however the test ends
        let arguments = ["api", "transaction", "1000000001"] + Self.arguments(world, server)
        let run = try await onThread { try MeasuredRun.run(arguments) }
        server.stop()
        await world.finish()
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("Content-Encoding gzip; the client asked for identity only"), "\(run.stderr)")
        #expect(server.requests.first?.headers["accept-encoding"] == "identity")
        #expect(run.seconds < 10, "correctness bound, not a speed test: \(run.seconds) s")
        #expect(run.maximumResidentKiB < 100 << 10, "peak RSS \(run.maximumResidentKiB) KiB")
    }

    @Test(.timeLimit(.minutes(3)))
    func anEndlessBody_stopsAtTheBodyLimit_inBoundedMemory() async throws {
        let world = try APIToolWorld()
        let server = try HostileAPIServer { _, _ in .endless(status: 200, headers: Self.json) }
        defer { server.stop() }  // however the test ends
        let arguments = ["api", "transaction", "1000000001"] + Self.arguments(world, server)
        let run = try await onThread { try MeasuredRun.run(arguments) }
        server.stop()
        await world.finish()
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("the response body is larger than 8388608 bytes"), "\(run.stderr)")
        #expect(run.seconds < 10, "correctness bound, not a speed test: \(run.seconds) s")
        #expect(run.maximumResidentKiB < 100 << 10, "peak RSS \(run.maximumResidentKiB) KiB")
    }

    @Test(.timeLimit(.minutes(3)))
    func anErrorMessageWithEscapeCodesAndLineBreaks_isShownEscaped() async throws {
        let world = try APIToolWorld()
        // ESC [2J clears the screen, ESC [31m turns it red; the newline would start a line of the
        // server's choosing.
        let body = Array(#"{"errorCode":4000006,"errorMessage":"\u001b[2J\u001b[31mInvalid transaction id.\nError: none, all good"}"#.utf8)
        let server = try HostileAPIServer { _, _ in .fixed(status: 400, headers: Self.json, body: body) }
        defer { server.stop() }  // however the test ends
        let arguments = ["api", "transaction", "1000000001"] + Self.arguments(world, server)
        let run = try await onThread { try MeasuredRun.run(arguments) }
        server.stop()
        await world.finish()
        #expect(run.status == 1, "\(run.stderr)")
        #expect(!run.stderr.utf8.contains(0x1B), "a raw ESC reached the terminal: \(run.stderr.debugDescription)")
        #expect(!run.stderr.split(separator: "\n").contains { $0.hasPrefix("Error: none") }, "\(run.stderr.debugDescription)")
        #expect(
            run.stderr.contains(#"\u{1B}[2J\u{1B}[31mInvalid transaction id.\nError: none, all good"#), "\(run.stderr.debugDescription)")
    }
}
