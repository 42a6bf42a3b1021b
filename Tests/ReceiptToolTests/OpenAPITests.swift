import Foundation
import Glibc
import TestSupport
import Testing

/// Where schemathesis (PyPI) is: `$SCHEMATHESIS`, the virtual environment `.ci/run` makes under
/// `.build/schemathesis-venv`, `~/.local/bin` (pip install --user), or the PATH.
enum Schemathesis {
    static let executable: String? = {
        var candidates: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["SCHEMATHESIS"] { candidates.append(explicit) }
        candidates.append(Fixtures.packageRoot.appendingPathComponent(".build/schemathesis-venv/bin/st").path)
        candidates.append(FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/bin/st").path)
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append(String(directory) + "/st")
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static let description = Fixtures.packageRoot.appendingPathComponent("Docs/openapi.yaml").path
}

/// Docs/openapi.yaml describes what `receipt-tool serve` does: schemathesis sends the examples
/// (real receipts: status 0 for an app receipt and a transaction receipt, 21006 for an expired
/// iOS 6 subscription; a real sandbox TEST notification from Apple, accepted then a duplicate),
/// then generated requests, to a live `serve` with a SQLite notification store on 127.0.0.1, and
/// checks every answer against the description (status codes, content types, headers, response
/// schemas, 405 with `Allow` for other methods, no 5xx).
///
/// Two checks are left out: `negative_data_rejection` expects a 4xx for a body that breaks the
/// request schema, but verifyReceipt answers every body with HTTP 200 and a JSON status (21000,
/// 21002), as Apple's endpoint did and as its clients expect; `positive_data_acceptance` expects
/// a 2xx for every body the schema allows, but a notification body is accepted only when its
/// `signedPayload` is a JWS signed under the pinned anchors for this app, which no generated
/// string is (they get 400 naming the failed check, as described).
@Suite struct OpenAPITests {
    @Test(
        .enabled(
            if: Schemathesis.executable != nil,
            "schemathesis is not installed: .ci/run installs it (python3 -m venv .build/schemathesis-venv; pip install schemathesis)"),
        .timeLimit(.minutes(5)))
    func theDescriptionHoldsForALiveServer() throws {
        let st = try #require(Schemathesis.executable)
        let database = temporaryDirectory().appendingPathComponent("notifications.db").path
        let server = try ServeProcess([
            "--environment", "sandbox", "--quiet", "--notifications-db", database, "--bundle-id", "com.Abilities",
        ])
        try #require(server.port != 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: st)
        process.arguments = [
            "run", Schemathesis.description, "--url", server.baseURL, "--checks", "all", "--exclude-checks",
            "negative_data_rejection,positive_data_acceptance",
            "--max-examples", "60", "--seed", "13", "--no-color", "--workers", "1",
            // Every warning but validation_mismatch, which says what the comment above explains:
            // generated notification bodies are (rightly) rejected.
            "--warnings",
            "missing_auth,missing_test_data,base_url_mismatch,missing_deserializer,unused_openapi_auth,unsupported_regex,method_not_allowed",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["SCHEMATHESIS_TELEMETRY"] = "false"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.currentDirectoryURL = FileManager.default.temporaryDirectory
        try process.runRetryingBadDescriptor()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let stopped = server.stop()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("No issues found"), "\(text)")
        // Every operation was tested, the examples included.
        #expect(text.contains("Operations:       4 selected / 4 total") || text.contains("Selected: 4/4"), "\(text)")
        // Apple's TEST notification was stored, once.
        let stored = try ReceiptTool.run(["notifications", "list", "--db", database, "--json"])
        #expect(stored.stdout.split(separator: "\n").count == 1)
        #expect(stored.stdout.contains(#""notificationUUID":"5e09dcfc-205e-4ea1-9883-96676f394992""#), "\(stored.stdout)")
        #expect(stopped.status == 0)
    }

    /// The description names every route serve has, and the shared answers of the HTTP layer.
    @Test func theDescriptionCoversEveryRoute() throws {
        let text = try String(contentsOfFile: Schemathesis.description, encoding: .utf8)
        for needle in [
            "openapi: 3.0.3", "  /verifyReceipt:\n    post:", "  /notifications:\n    post:", "  /health:\n    get:", "    head:",
            "MethodNotAllowed:", "ContentTooLarge:", "NotificationRejected:", "NotificationStoreHealth:",
            "ServiceUnavailable:", "enum: [0, 21000, 21002, 21003, 21004, 21006, 21007, 21008]",
        ] {
            #expect(text.contains(needle), "\(needle)")
        }
    }
}
