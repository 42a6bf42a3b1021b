// `receipt-tool api` over TLS: the package's HTTP client (OpenSSL) against `openssl s_server`
// on 127.0.0.1 with a certificate for `localhost` from a test CA.

import Foundation
import Glibc
import JSON
import TestSupport
import Testing

@Suite("receipt-tool api over TLS", .serialized)
@MainActor
struct APITLSTests {
    /// `/bin/sh -c command` in `directory`; its exit status.
    nonisolated static func sh(_ command: String, in directory: URL) throws -> Int32 {
        try spawnAndWait("/bin/sh", ["-c", command], directory: directory, output: directory.appendingPathComponent("sh.log"))
    }

    /// Whether something accepts connections on `port` of 127.0.0.1.
    nonisolated static func accepts(_ port: UInt16) -> Bool {
        (try? RawHTTPConnection(port: port, timeout: 1)) != nil
    }

    @Test(
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "needs the openssl command"), .timeLimit(.minutes(2))
    )
    func theChainAndTheHostNameAreVerified_andTheAnswerIsRead() async throws {
        let world = try APIToolWorld()
        let token = try await APIHostileResponseTests.signedTransaction(world)
        let id = try #require(world.ids.first)
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A CA, and a certificate for localhost (not for 127.0.0.1) it issued.
        let made = try Self.sh(
            """
            set -e
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 -subj '/CN=Test CA'
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout leaf.key -out leaf.csr -subj '/CN=localhost'
            printf 'subjectAltName=DNS:localhost\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > leaf.ext
            openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out leaf.pem -days 2 -extfile leaf.ext
            """, in: directory)
        try #require(
            made == 0, "\(String(decoding: (try? Data(contentsOf: directory.appendingPathComponent("sh.log"))) ?? Data(), as: UTF8.self))")
        // s_server -WWW answers `GET /path` with the file at that path under its directory.
        let answer = directory.appendingPathComponent("inApps/v1/transactions")
        try FileManager.default.createDirectory(at: answer, withIntermediateDirectories: true)
        try Data("{\"signedTransactionInfo\":\"\(token)\"}".utf8).write(to: answer.appendingPathComponent(id))
        let port = freePort()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        server.arguments = ["s_server", "-quiet", "-accept", "127.0.0.1:\(port)", "-cert", "leaf.pem", "-key", "leaf.key", "-WWW"]
        server.currentDirectoryURL = directory
        server.standardInput = Pipe()
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            // s_server does not stop on SIGTERM while it waits for a connection.
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        var waited = 0
        while !Self.accepts(port), waited < 100 {
            try await Task.sleep(nanoseconds: 50_000_000)
            waited += 1
        }
        try #require(Self.accepts(port), "openssl s_server did not start")
        let common = [
            "--issuer-id", APIToolWorld.issuerID, "--key-id", APIToolWorld.keyID, "--private-key", world.keyFile.path, "--bundle-id",
            APIToolWorld.bundleID, "--environment", "sandbox", "--anchor", world.anchorFile.path, "--timeout", "5", "--max-attempts", "1",
            "--json",
        ]
        let trusting = ["SSL_CERT_FILE": directory.appendingPathComponent("ca.pem").path]
        let verified = try await onThread {
            try ReceiptTool.run(["api", "transaction", id, "--base-url", "https://localhost:\(port)"] + common, environment: trusting)
        }
        // The system's roots do not include the test CA; 127.0.0.1 is not the certificate's name.
        let untrusted = try await onThread {
            try ReceiptTool.run(
                ["api", "transaction", id, "--base-url", "https://localhost:\(port)"] + common,
                environment: [
                    "SSL_CERT_FILE": "/nonexistent"
                ])
        }
        let otherName = try await onThread {
            try ReceiptTool.run(["api", "transaction", id, "--base-url", "https://127.0.0.1:\(port)"] + common, environment: trusting)
        }
        await world.finish()
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(try APIToolWorld.lines(verified.stdout).first?["transactionId"]?.stringValue == id)
        #expect(untrusted.status == 1)
        #expect(untrusted.stderr.contains("the server's certificate did not verify"), "\(untrusted.stderr)")
        #expect(otherName.status == 1)
        #expect(otherName.stderr.contains("the server's certificate did not verify"), "\(otherName.stderr)")
        #expect(verified.stdout.isEmpty == false)
    }
}
