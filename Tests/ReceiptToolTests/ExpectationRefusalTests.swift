import Foundation
import JSON
import TestSupport
import Testing

/// `receipt-tool verify`: an expectation option that does not apply to an input's kind fails that
/// input with the check `notApplicable` naming the option (never a silent VALID), and `--max-age`
/// is measured against the clock whatever `--at` says.
@Suite struct ExpectationRefusalTests {
    static let transaction = Fixtures.path("jws/gopay/sandbox-transaction-2000000184445477.jws")
    static let renewal = Fixtures.path("jws/go-iap/sandbox-renewal-info-2000000335310644.jws")
    static let notification = Fixtures.path("jws/appstore-iap/sandbox-notification-TEST.jws")
    static let receipt = Fixtures.path("receipt-sandbox-g5.der")
    static let transactionReceipt = Fixtures.path("legacy/venice-legacy-transaction-receipt.b64")
    static let uuid = "3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CD"

    /// The input, the options, the option the refusal must name.
    static let refused: [(input: String, options: [String], option: String)] = [
        (transaction, ["--app-version", "1.0"], "--app-version"),
        (transaction, ["--device-id", uuid], "--device-id"),
        (transaction, ["--product-id", "pro"], "--product-id"),
        (transaction, ["--app-apple-id", "1"], "--app-apple-id"),
        (renewal, ["--bundle-id", "com.example"], "--bundle-id"),
        (notification, ["--app-account-token", uuid], "--app-account-token"),
        (notification, ["--device-verification-id", uuid], "--device-verification-id"),
        (receipt, ["--app-account-token", uuid], "--app-account-token"),
        (receipt, ["--max-age", "3600"], "--max-age"),
        (receipt, ["--product-id", "pro"], "--product-id"),
        (receipt, ["--app-apple-id", "1"], "--app-apple-id"),
        (transactionReceipt, ["--device-id", uuid], "--device-id"),
        (transactionReceipt, ["--device-verification-id", uuid], "--device-verification-id"),
    ]

    @Test(arguments: refused.indices)
    func anOptionThatDoesNotApplyFailsTheInput_namingIt(_ index: Int) throws {
        let entry = Self.refused[index]
        // Valid without the option (at its signed date, the default).
        #expect(try ReceiptTool.run(["verify", entry.input]).status == 0)

        let text = try ReceiptTool.run(["verify", entry.input] + entry.options)
        #expect(text.status == 1, "\(entry.options): \(text.stdout)")
        #expect(text.stdout.contains(": INVALID ("), "\(text.stdout)")
        let failed = text.stdout.split(separator: "\n").filter { $0.hasPrefix("  ✗ ") }
        #expect(failed.count == 1, "\(text.stdout)")
        #expect(failed.first?.hasPrefix("  ✗ notApplicable") == true && failed.first?.contains("\(entry.option) does not apply") == true)

        let json = try ReceiptTool.run(["verify", entry.input, "--json"] + entry.options)
        #expect(json.status == 1)
        let line = try #require(try JWSToolHelpers.jsonLines(json.stdout).first)
        #expect(line["status"] == .string("invalid") && line["valid"] == .bool(false) && line["assurance"] == nil)
        let failures = line["checks"]?.arrayValue?.filter { $0["passed"] == .bool(false) } ?? []
        #expect(failures.map { $0["name"] } == [.string("notApplicable")])
        #expect(failures.first?["reason"]?.stringValue?.hasPrefix("\(entry.option) does not apply to ") == true)
    }

    /// Options that apply are checked as before: no refusal.
    @Test func optionsThatApplyAreNotRefused() throws {
        for (input, options) in [
            (Self.receipt, ["--app-version", "1", "--environment", "sandbox"]),
            (Self.transaction, ["--app-account-token", "207262DA-1AC8-4E0A-A399-5AA62A82800F", "--environment", "sandbox"]),
            (Self.notification, ["--bundle-id", "com.example", "--app-apple-id", "1"]),
        ] {
            let result = try ReceiptTool.run(["verify", input] + options)
            #expect(!result.stdout.contains("notApplicable"), "\(options): \(result.stdout)")
        }
    }

    /// A real Apple JWS (signed in 2022) is more than an hour old now: `--max-age 3600` fails
    /// `maximumAge` with the default `--at signed`, and with an `--at` right after its signing.
    @Test func maxAgeIsMeasuredAgainstTheClock_whateverAtSays() throws {
        for at in [[], ["--at", "2022-11-04T11:01:26Z"]] {
            let result = try ReceiptTool.run(["verify", Self.transaction, "--max-age", "3600"] + at)
            #expect(result.status == 1, "\(at): \(result.stdout)")
            let failed = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  ✗ ") }
            #expect(failed.count == 1 && failed.first?.hasPrefix("  ✗ maximumAge") == true, "\(at): \(result.stdout)")
            #expect(failed.first?.contains("before the verifier's clock") == true)
            let json = try ReceiptTool.run(["verify", Self.transaction, "--max-age", "3600", "--json"] + at)
            let line = try #require(try JWSToolHelpers.jsonLines(json.stdout).first)
            #expect(line["checks"]?.arrayValue?.filter { $0["passed"] == .bool(false) }.map { $0["name"] } == [.string("maximumAge")])
        }
    }

    /// A token signed a minute ago passes `--max-age 3600` (and fails `--max-age 1`).
    @Test func aFreshTokenPassesMaxAge() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try JWSMakeCommandTests.PKI(in: directory)
        let signed = Int64((Date().timeIntervalSince1970 - 60) * 1000)
        let json =
            #"{"transactionId":"1001","originalTransactionId":"1000","bundleId":"com.example.app","productId":"pro","purchaseDate":\#(signed),"signedDate":\#(signed),"environment":"Sandbox","quantity":1}"#
        let token = try JWSMakeCommandTests.make(json, pki, in: directory)
        let fresh = try ReceiptTool.run(["verify", token, "--anchor", pki.root, "--max-age", "3600"])
        #expect(fresh.status == 0, "\(fresh.stdout)")
        #expect(fresh.stdout.contains("  ✓ maximumAge "))
        let stale = try ReceiptTool.run(["verify", token, "--anchor", pki.root, "--max-age", "1"])
        #expect(stale.status == 1)
        #expect(stale.stdout.contains("  ✗ maximumAge "))
    }
}
