import Foundation
import Glibc
import JSON
import ReceiptSigning
import TestSupport
import Testing

/// `verify --kind` and `dump --kind`, and `serve` refusing notifications whose nested tokens are
/// of the wrong kind or lack a bundle id.
@Suite struct KindOptionTests {
    static let renewal = "jws/go-iap/sandbox-renewal-info-2000000335310644.jws"
    static let transaction = "jws/gopay/sandbox-transaction-2000000184445477.jws"

    /// The failed checks of a `--json` verdict line.
    func failedChecks(_ stdout: String) throws -> [String] {
        let line = try #require(stdout.split(separator: "\n").first)
        let object = try JSONValue.parse(Array(line.utf8))
        guard case .array(let checks)? = object["checks"] else { return [] }
        return checks.compactMap { check in
            guard case .bool(false)? = check["passed"], case .string(let name)? = check["name"] else { return nil }
            return name
        }
    }

    @Test func verifyWithTheWrongKindFailsTheKindCheck() throws {
        let asTransaction = try ReceiptTool.run(["verify", Fixtures.path(Self.renewal), "--kind", "transaction", "--json"])
        #expect(asTransaction.status == 1)
        #expect(try failedChecks(asTransaction.stdout) == ["kind"], "\(asTransaction.stdout)")
        let asRenewal = try ReceiptTool.run(["verify", Fixtures.path(Self.transaction), "--kind", "renewal", "--json"])
        #expect(asRenewal.status == 1)
        #expect(try failedChecks(asRenewal.stdout) == ["kind"], "\(asRenewal.stdout)")
        // The right kind, forced or detected, is valid.
        #expect(try ReceiptTool.run(["verify", Fixtures.path(Self.renewal), "--kind", "renewal"]).status == 0)
        #expect(try ReceiptTool.run(["verify", Fixtures.path(Self.renewal)]).status == 0)
        // A receipt is not signed data, and signed data is not a receipt.
        let receipt = try ReceiptTool.run(["verify", Fixtures.path("receipt-sandbox-g5.der"), "--kind", "notification", "--json"])
        #expect(receipt.status == 1)
        #expect(try failedChecks(receipt.stdout) == ["kind"])
        #expect(receipt.stdout.contains("the input is an app receipt, not a notification"))
        let token = try ReceiptTool.run(["verify", Fixtures.path(Self.transaction), "--kind", "receipt"])
        #expect(token.status == 1)
        #expect(token.stdout.contains("✗ kind"), "\(token.stdout)")
        // A bad value is a usage error.
        #expect(try ReceiptTool.run(["verify", Fixtures.path(Self.transaction), "--kind", "coupon"]).status == 64)
    }

    /// Apple's minimal mock renewal info: no kind without --kind (the message names it), valid
    /// under Apple's test CA with --kind renewal.
    @Test func applesMockRenewalInfoVerifiesWithKindRenewal() throws {
        let mock = Fixtures.path("jws/apple/mock_signed_data/renewalInfo.jws")
        let testCA = Fixtures.path("jws/certs/testCA.der")
        let detected = try ReceiptTool.run(["verify", mock, "--anchor", testCA])
        #expect(detected.status == 1)
        #expect(detected.stdout.contains("--kind"), "\(detected.stdout)")
        let forced = try ReceiptTool.run(["verify", mock, "--anchor", testCA, "--kind", "renewal"])
        #expect(forced.status == 0, "\(forced.stdout)")
        #expect(forced.stdout.contains(": VALID (JWS renewal info)"))
        #expect(try ReceiptTool.run(["verify", mock, "--anchor", testCA, "--kind", "transaction"]).status == 1)
    }

    @Test func dumpWithKind() throws {
        let mock = Fixtures.path("jws/apple/mock_signed_data/renewalInfo.jws")
        let asRenewal = try ReceiptTool.run(["dump", mock, "--kind", "renewal"])
        #expect(asRenewal.status == 0, "\(asRenewal.stderr)")
        #expect(asRenewal.stdout.contains("Payload (renewalInfo"), "\(asRenewal.stdout)")
        let wrong = try ReceiptTool.run(["dump", Fixtures.path(Self.renewal), "--kind", "transaction"])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("kind: the payload is a renewal info, not a transaction"), "\(wrong.stderr)")
        let receipt = try ReceiptTool.run(["dump", Fixtures.path(Self.renewal), "--kind", "receipt"])
        #expect(receipt.status == 1)
        #expect(receipt.stderr.contains("kind:"))
    }

    /// `serve`: a notification whose signedTransactionInfo is a renewal info, a notification, or a
    /// transaction without bundleId gets 400 naming the check, and is not stored.
    @Test(.timeLimit(.minutes(2))) func serveRefusesNestedTokensOfTheWrongKind() throws {
        typealias F = NotificationFixtures
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kind-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("n.db").path
        let server = try ServeProcess(try F.serveArguments(database: database))
        defer { _ = server.stop(signal: SIGTERM) }
        try #require(server.port != 0, "\(server.firstLine)")
        let signer = try PKIs.jws.get().jwsSigner()
        func sign(_ json: String) throws -> String { try signer.sign(payload: Array(json.utf8)) }
        let date = "1733000000000"
        func notification(_ nested: String, uuid: String) throws -> String {
            try sign(
                #"{"notificationType":"DID_RENEW","notificationUUID":"\#(uuid)","data":{"appAppleId":\#(F.appAppleId),"bundleId":"\#(F.bundle)","environment":"Production","signedTransactionInfo":"\#(nested)"},"version":"2.0","signedDate":\#(date)}"#
            )
        }
        let transaction =
            #"{"transactionId":"7","originalTransactionId":"7","bundleId":"\#(F.bundle)","productId":"p","purchaseDate":\#(date),"signedDate":\#(date),"environment":"Production","quantity":1}"#
        let renewal = #"{"originalTransactionId":"7","autoRenewStatus":1,"environment":"Production","signedDate":\#(date)}"#
        let bundleless = transaction.replacingOccurrences(of: #""bundleId":"\#(F.bundle)","#, with: "")
        let cases: [(String, String, String)] = [
            ("renewal info", try sign(renewal), "kind: the payload is a renewal info"),
            (
                "notification", try notification(try sign(transaction), uuid: UUID().uuidString.lowercased()),
                "kind: the payload is a notification"
            ),
            ("no bundleId", try sign(bundleless), "has no bundleId"),
        ]
        for (name, nested, reason) in cases {
            let body = Array(#"{"signedPayload":"\#(try notification(nested, uuid: UUID().uuidString.lowercased()))"}"#.utf8)
            let response = try #require(F.post(port: server.port, body), "\(name)")
            // Genuinely signed, wrong content: retrying cannot cure it, so 400 (kept as a dead letter).
            #expect(response.status == 400, "\(name): \(response.bodyText)")
            #expect(response.bodyText.contains(#""check":"signedTransactionInfo""#), "\(name): \(response.bodyText)")
            #expect(response.bodyText.contains(reason), "\(name): \(response.bodyText)")
        }
        #expect(try F.list(database).isEmpty)
        // The genuine shape is accepted and stored.
        let genuine = Array(#"{"signedPayload":"\#(try notification(try sign(transaction), uuid: UUID().uuidString.lowercased()))"}"#.utf8)
        #expect(F.post(port: server.port, genuine)?.status == 200)
        #expect(try F.list(database).map { $0["transactionId"] as? String } == ["7"])
    }
}
