import Foundation
import ReceiptCrypto
import ReceiptSigning
import Receipts
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `verify` and `serve` accept iOS 6 transaction receipts of both signature layouts: version 2
/// through the pinned iTunes Store CA, version 3 through the pinned WWDR CA.
@Suite struct TransactionReceiptVersionTests {
    /// Two receipts signed by the project's signer (one per layout), their PKIs' files, and the
    /// directory holding them.
    struct Files {
        let directory: URL
        let version2: String
        let version3: String
        let root2: String
        let intermediate2: String
        let root3: String
        let intermediate3: String
    }

    static func files() throws -> Files {
        let directory = temporaryDirectory()
        let info = try PurchaseInfo(entries: [
            .init(key: "transaction-id", value: .string("777")), .init(key: "purchase-date-ms", value: .string("1513000000000")),
            .init(key: "bid", value: .string("com.example.app")), .init(key: "product-id", value: .string("gold")),
        ])
        let pki2 = try TestPKI.transactionReceiptPKI()
        let pki3 = try TestPKI.transactionReceiptPKI(keyBits: 2048)
        func write(_ text: String, _ name: String) throws -> String {
            let url = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
        return Files(
            directory: directory,
            version2: try write(try pki2.transactionReceiptSigner().sign(info).base64Encoded, "v2.b64"),
            version3: try write(try pki3.transactionReceiptSigner().sign(info).base64Encoded, "v3.b64"),
            root2: try write(pki2.root.pemEncoded, "root2.pem"), intermediate2: try write(pki2.intermediate.pemEncoded, "itunes.pem"),
            root3: try write(pki3.root.pemEncoded, "root3.pem"), intermediate3: try write(pki3.intermediate.pemEncoded, "wwdr.pem"))
    }

    @Test func verifyAcceptsBothLayouts() throws {
        let f = try Self.files()
        defer { try? FileManager.default.removeItem(at: f.directory) }
        let both = try ReceiptTool.run([
            "verify", f.version2, f.version3, "--anchor", f.root2, "--anchor", f.root3, "--itunes-ca", f.intermediate2, "--wwdr-ca",
            f.intermediate3, "--bundle-id", "com.example.app", "--product-id", "gold",
        ])
        #expect(both.status == 0, "\(both.stdout)\(both.stderr)")
        #expect(both.stdout.contains("VALID (transaction receipt, signature version 2)"))
        #expect(both.stdout.contains("VALID (transaction receipt, signature version 3)"))
        #expect(both.stdout.contains("met (transactionReceiptV3 policy)"))
        #expect(both.stdout.contains("2 receipts: 2 valid, 0 invalid, 0 unreadable"))
        // Without the test WWDR CA, version 3 chains through Apple's bundled one and fails.
        let bundled = try ReceiptTool.run(["verify", f.version3, "--anchor", f.root3])
        #expect(bundled.status == 1)
        #expect(bundled.stdout.contains("✗ chain"))
        // Pinning the version-2 intermediate for version 3 fails too.
        let swapped = try ReceiptTool.run(["verify", f.version3, "--anchor", f.root3, "--wwdr-ca", f.intermediate2])
        #expect(swapped.status == 1)
    }

    @Test func serveAcceptsBothLayouts() async throws {
        let f = try Self.files()
        defer { try? FileManager.default.removeItem(at: f.directory) }
        let server = try ServeProcess([
            "--environment", "sandbox", "--anchor", f.root2, "--anchor", f.root3, "--itunes-ca", f.intermediate2, "--wwdr-ca",
            f.intermediate3,
        ])
        try #require(server.port != 0)
        defer { _ = server.stop() }
        for path in [f.version2, f.version3] {
            let base64 = try String(contentsOfFile: path, encoding: .utf8)
            let (status, json) = try await ServeCommandTests.post(
                server.baseURL + "/verifyReceipt", body: Data("{\"receipt-data\":\"\(base64)\"}".utf8))
            #expect(status == 200)
            #expect(json["status"] as? Int == 0, "\(path): \(json)")
            #expect((json["receipt"] as? [String: Any])?["transaction_id"] as? String == "777")
        }
    }
}
