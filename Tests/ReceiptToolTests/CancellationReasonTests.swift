import Foundation
import TestSupport
import Testing

/// In-app attribute 1720, the cancellation reason, from `make` to `dump` and `dump --json`.
@Suite struct CancellationReasonTests {
    static let description = """
        {
          "receipt_type": "Production",
          "bundle_id": "com.example.tool",
          "application_version": "7",
          "receipt_creation_date": "2025-03-01 10:00:00 Etc/GMT",
          "in_app": [
            { "quantity": "1", "product_id": "com.example.tool.monthly", "transaction_id": "1000",
              "purchase_date": "2025-02-01 09:00:00 Etc/GMT", "expires_date": "2025-03-01 09:00:00 Etc/GMT",
              "cancellation_date": "2025-02-03 12:00:00 Etc/GMT", "cancellation_reason": "1" },
            { "quantity": "1", "product_id": "com.example.tool.pro", "transaction_id": "1001",
              "purchase_date": "2025-02-02 09:00:00 Etc/GMT" }
          ]
        }
        """

    @Test func makeWritesIt_dumpShowsIt_andTheJSONCarriesItAsAString() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = Fixtures.root.appendingPathComponent("generated/pki")
        let descriptionFile = directory.appendingPathComponent("receipt.json")
        try Data(Self.description.utf8).write(to: descriptionFile)
        let out = directory.appendingPathComponent("cancelled.der")
        let make = try ReceiptTool.run([
            "make", descriptionFile.path, "--key", pki.appendingPathComponent("leaf-key.pem").path,
            "--cert", pki.appendingPathComponent("leaf.pem").path, "--chain", pki.appendingPathComponent("intermediate.pem").path,
            "-o", out.path,
        ])
        #expect(make.status == 0, "\(make.stderr)")

        let json = try ReceiptTool.run(["dump", "--json", out.path])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let records = try #require(object["in_app"] as? [[String: Any]])
        #expect(records.count == 2)
        let cancelled = try #require(records.first { $0["transaction_id"] as? String == "1000" })
        let kept = try #require(records.first { $0["transaction_id"] as? String == "1001" })
        #expect(cancelled["cancellation_reason"] as? String == "1")
        #expect(cancelled["cancellation_date_ms"] as? String == "1738584000000")
        #expect(kept["cancellation_reason"] == nil)
        // It is decoded, so it is not among the unknown attributes.
        #expect(!json.stdout.contains("\"type\": 1720") && !json.stdout.contains("\"type\":1720"))

        let text = try ReceiptTool.run(["dump", out.path])
        #expect(text.stdout.contains("Cancellation reason"))
        #expect(text.stdout.contains("1 (issue in the app)"))
        let tree = try ReceiptTool.run(["asn1", out.path])
        #expect(tree.stdout.contains("cancellation_reason"))
    }
}
