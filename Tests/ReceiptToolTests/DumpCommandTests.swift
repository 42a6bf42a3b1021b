import Foundation
import TestSupport
import Testing

@Suite struct DumpCommandTests {
    @Test func dumpPrintsTheFields() throws {
        let result = try ReceiptTool.run(["dump", Fixtures.path("receipt-sandbox-g5.der")])
        #expect(result.status == 0)
        #expect(result.stdout.contains("dev.bonzer.weeka.app"))
        #expect(result.stdout.contains("2025-12-26T18:39:47Z"))
        #expect(result.stdout.contains("2000001092148094"))
        #expect(result.stderr.isEmpty)
    }

    @Test func dumpJSONIsTheVerifyReceiptShape() throws {
        let result = try ReceiptTool.run(["dump", "--json", Fixtures.path("base64encodedreceiptsample1.b64")])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(object?["bundle_id"] as? String == "com.revenuecat.sampleapp")
        #expect(object?["receipt_creation_date_ms"] as? String == "1595439548000")
        #expect((object?["in_app"] as? [Any])?.count == 9)
    }

    @Test func dumpReadsStandardInputAndJSONBodies() throws {
        let der = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("receipt-watch.der")))
        let body = Data("{\"receipt-data\":\"\(der.base64EncodedString())\"}".utf8)
        let result = try ReceiptTool.run(["dump", "-"], stdin: body)
        #expect(result.status == 0)
        #expect(result.stdout.contains("CYCLEMAPS_PREMIUM"))
    }

    @Test func asn1NamesAttributes() throws {
        let result = try ReceiptTool.run(["asn1", Fixtures.path("receipt-xcode.der")])
        #expect(result.status == 0)
        #expect(result.stdout.contains("pkcs7-signedData"))
        #expect(result.stdout.contains("l=  inf"))
        #expect(result.stdout.contains("attribute 2 bundle_id"))
        #expect(result.stdout.contains("value = UTF8String :\"net.zachariadis.cyclemaps\""))
        #expect(result.stdout.contains("attribute 1702 product_id"))
    }

    @Test(arguments: ["not_a_receipt", "certs/AppleIncRootCertificate.cer", "json/verifyReceiptSample1.json"])
    func badInputExitsOneWithAnError(_ name: String) throws {
        let result = try ReceiptTool.run(["dump", Fixtures.path(name)])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Error: "))
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test func truncatedAndRandomInputsExitOne() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("receipt-xcode.der")))
        let truncated = FileManager.default.temporaryDirectory.appendingPathComponent("truncated-\(UUID().uuidString).der")
        try bytes.prefix(bytes.count - 2).write(to: truncated)
        defer { try? FileManager.default.removeItem(at: truncated) }
        let result = try ReceiptTool.run(["dump", truncated.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("missing") || result.stderr.contains("end-of-contents"))
        #expect(result.stderr.contains("offset"))
        let empty = try ReceiptTool.run(["dump", "-"], stdin: Data())
        #expect(empty.status == 1)
        let random = try ReceiptTool.run(["asn1", "-"], stdin: Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }))
        #expect(random.status == 1)
        let missing = try ReceiptTool.run(["dump", "/nonexistent/receipt"])
        #expect(missing.status == 1)
    }

    @Test func usageErrorsExit64AndHelpExitsZero() throws {
        #expect(try ReceiptTool.run([]).status == 64)
        #expect(try ReceiptTool.run(["frobnicate"]).status == 64)
        #expect(try ReceiptTool.run(["dump"]).status == 64)
        #expect(try ReceiptTool.run(["dump", "--bogus", "x"]).status == 64)
        for arguments in [["--help"], ["dump", "--help"], ["asn1", "-h"], ["help", "dump"]] {
            let result = try ReceiptTool.run(arguments)
            #expect(result.status == 0)
            #expect(result.stdout.contains("USAGE"))
        }
    }
}
