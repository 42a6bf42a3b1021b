import Foundation
import TestSupport
import Testing

/// `serve` reads anchors, `--policy` and `--at` as `verify` does (one settings value): `--at
/// signed`, `creation` and a bare date are accepted, and `--policy` applies to receipts too.
@Suite struct ServeSettingsTests {
    static func verifyReceipt(_ server: ServeProcess, _ fixture: String) async throws -> Int? {
        let der = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(fixture)))
        let (_, json) = try await ServeCommandTests.post(
            server.baseURL + "/verifyReceipt", body: Data("{\"receipt-data\":\"\(der.base64EncodedString())\"}".utf8))
        return json["status"] as? Int
    }

    /// `--at signed` (and its synonym `creation`) verify at the receipt's creation date, as the
    /// default does; a bare date before the chain was issued fails the chain (21003).
    @Test func atSignedWorksInServe() async throws {
        for at in ["signed", "creation", "SIGNED"] {
            let server = try ServeProcess(["--environment", "sandbox", "--quiet", "--at", at])
            try #require(server.port != 0, "--at \(at): \(server.firstLine)")
            #expect(try await Self.verifyReceipt(server, "base64encodedreceiptsample1.der") == 0, "--at \(at)")
            #expect(server.stop().status == 0)
        }
        let early = try ServeProcess(["--environment", "sandbox", "--quiet", "--at", "2001-01-01"])
        try #require(early.port != 0, "\(early.firstLine)")
        #expect(try await Self.verifyReceipt(early, "base64encodedreceiptsample1.der") == 21003)
        #expect(early.stop().status == 0)
    }

    /// The default policy follows the anchors (xcode when every anchor is xcode), and `--policy`
    /// overrides it for receipts as in `verify`.
    @Test func policyAppliesToReceipts() async throws {
        let xcode = try ServeProcess(["--environment", "sandbox", "--quiet", "--anchor", "xcode"])
        try #require(xcode.port != 0, "\(xcode.firstLine)")
        #expect(try await Self.verifyReceipt(xcode, "receipt-xcode.der") == 0)
        #expect(xcode.stop().status == 0)
        let appStore = try ServeProcess(["--environment", "sandbox", "--quiet", "--anchor", "xcode", "--policy", "appstore"])
        try #require(appStore.port != 0, "\(appStore.firstLine)")
        #expect(try await Self.verifyReceipt(appStore, "receipt-xcode.der") == 21003)
        #expect(appStore.stop().status == 0)
        let verify = try ReceiptTool.run(["verify", Fixtures.path("receipt-xcode.der"), "--anchor", "xcode", "--policy", "appstore"])
        #expect(verify.status == 1)
    }

    /// `serve`, `dead-letters retry`, `api` and `notifications backfill` read `--environment`
    /// alike: any case, and the same refusal.
    @Test func environmentOption_sameRefusal_inEveryCommandThatNamesAnAppleEnvironment() throws {
        let database = temporaryDirectory().appendingPathComponent("letters.sqlite").path
        let key = temporaryDirectory().appendingPathComponent("missing.p8").path
        let api = ["--issuer-id", "i", "--key-id", "k", "--private-key", key, "--bundle-id", "com.example.app"]
        let serve = try ReceiptTool.run(["serve", "--environment", "staging"])
        let retry = try ReceiptTool.run(["notifications", "dead-letters", "retry", "--db", database, "--environment", "staging"])
        let history = try ReceiptTool.run(["api", "history", "1"] + api + ["--environment", "staging"])
        let backfill = try ReceiptTool.run(
            ["notifications", "backfill", "--since", "2026-01-01", "--db", database] + api + ["--environment", "staging"])
        for result in [serve, retry, history, backfill] {
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.contains("--environment must be production or sandbox, found staging"), "\(result.stderr)")
        }
        // Any case: `Sandbox` is read as sandbox, so `api` goes on to the missing key (exit 1), not a usage error.
        let mixedCase = try ReceiptTool.run(["api", "history", "1"] + api + ["--environment", "Sandbox"])
        #expect(mixedCase.status == 1, "\(mixedCase.stderr)")
        #expect(!mixedCase.stderr.contains("--environment"), "\(mixedCase.stderr)")
    }

    /// A bad `--at` or `--policy` is the same usage error in both commands.
    @Test func sameUsageErrors() throws {
        for option in [["--at", "yesterday"], ["--policy", "apple"]] {
            let serve = try ReceiptTool.run(["serve"] + option)
            let verify = try ReceiptTool.run(["verify", Fixtures.path("receipt-xcode.der")] + option)
            #expect(serve.status == 64, "\(option)")
            #expect(verify.status == 64, "\(option)")
            let firstLine = { (text: String) in text.split(separator: "\n").first.map(String.init) ?? "" }
            #expect(firstLine(serve.stderr) == firstLine(verify.stderr), "\(option)")
        }
    }
}
