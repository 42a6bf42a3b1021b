import Foundation
import TestSupport
import Testing

extension ReceiptTool {
    static func run(_ arguments: [String], stdin text: String) throws -> Result {
        try run(arguments, stdin: Data(text.utf8))
    }
}

@Suite struct VerifyCommandTests {
    let g5 = Fixtures.path("receipt-sandbox-g5.der")

    @Test func validReceiptExitsZeroAndPrintsEveryCheck() throws {
        let result = try ReceiptTool.run([
            "verify", g5, "--bundle-id", "dev.bonzer.weeka.app", "--device-id", "956328D9-CC6A-47F4-BE40-6953FB0AB6C7",
        ])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("receipt-sandbox-g5.der: VALID"))
        for name in ["signature", "chain", "pinnedAnchor", "leafMarker", "intermediateMarker", "bundleIdentifier", "deviceHash"] {
            #expect(result.stdout.contains("✓ \(name)"), "\(name)")
        }
        #expect(result.stdout.contains("1 receipt: 1 valid, 0 invalid, 0 unreadable"))
    }

    @Test func expiredChainTodayExitsOne() throws {
        let result = try ReceiptTool.run(["verify", g5, "--at", "2026-11-29"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("✗ chain"))
        #expect(result.stdout.contains("certificate has expired"))
        #expect(result.stdout.contains("Mac App Store and iTunes Store Receipt Signing"))
    }

    @Test func wrongExpectationExitsOne() throws {
        let result = try ReceiptTool.run(["verify", g5, "--bundle-id", "com.example.other"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("✗ bundleIdentifier"))
    }

    @Test func xcodeReceiptNeedsTheXcodeAnchor() throws {
        let xcode = Fixtures.path("receipt-xcode.der")
        #expect(try ReceiptTool.run(["verify", xcode, "--anchor", "xcode"]).status == 0)
        #expect(try ReceiptTool.run(["verify", xcode]).status == 1)
        #expect(
            try ReceiptTool.run([
                "verify", xcode, "--anchor", Fixtures.path("certs/StoreKitTestCertificate.cer"), "--policy", "xcode",
            ]).status == 0)
    }

    @Test func unreadableAnchorExitsOne() throws {
        let missing = try ReceiptTool.run(["verify", g5, "--anchor", "/no/such/anchor.pem"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no such file"), "\(missing.stderr)")
        #expect(missing.stdout.isEmpty, "nothing is verified without the anchor")
        let garbage = try ReceiptTool.run(["verify", g5, "--anchor", Fixtures.path("README.md")])
        #expect(garbage.status == 1)
        #expect(garbage.stderr.contains("not a DER or PEM certificate"), "\(garbage.stderr)")
        let wrong = try ReceiptTool.run(["verify", g5, "--anchor", Fixtures.path("certs/frank4dd-cacert.der")])
        #expect(wrong.status == 1)
        #expect(wrong.stdout.contains("✗ chain"))
    }

    @Test(arguments: [
        ["verify"], ["verify", "x", "--bogus"], ["verify", "x", "--at", "yesterday"], ["verify", "x", "--device-id", "12"],
        ["verify", "x", "--policy", "lax"], ["verify", "x", "--environment", "moon"], ["verify", "-", "-"], ["verify", "x", "--jobs", "0"],
    ])
    func usageErrorsExit64(arguments: [String]) throws {
        let result = try ReceiptTool.run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("Error:"))
        #expect(result.stderr.contains("see 'receipt-tool verify --help'"), "\(result.stderr)")
        #expect(!result.stderr.contains("USAGE:"), "a usage error names the help, it does not print it")
    }

    @Test func usageErrorIsOneLineAndWhereTheHelpIs() throws {
        let result = try ReceiptTool.run(["verify", "--no-such-option"])
        #expect(result.status == 64)
        let lines = (result.stdout + result.stderr).split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
        #expect(lines.count <= 3, "\(lines)")
        #expect(lines.first == "Error: unknown option \"--no-such-option\"")
        #expect(lines.last == "see 'receipt-tool verify --help'")
        let unknown = try ReceiptTool.run(["frobnicate\u{1B}[2J"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr == "Error: unknown subcommand \"frobnicate\\u{1B}[2J\"\nsee 'receipt-tool --help'\n", "\(unknown.stderr)")
    }

    @Test func helpExitsZero() throws {
        let result = try ReceiptTool.run(["verify", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: receipt-tool verify"))
    }

    @Test func unreadableInputIsCountedAndFails() throws {
        let result = try ReceiptTool.run(["verify", g5, "/no/such/receipt.der", Fixtures.path("not_a_receipt")])
        #expect(result.status == 1)
        #expect(result.stdout.contains("/no/such/receipt.der: UNREADABLE"))
        #expect(result.stdout.contains("3 receipts: 1 valid, 0 invalid, 2 unreadable"))
    }

    @Test func batchOverADirectoryWritesOneJSONLinePerReceiptInOrder() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let copies = [
            ("a-valid.der", "receipt-sandbox-g5.der"), ("b-xcode.der", "receipt-xcode.der"), ("c-garbage.der", "not_a_receipt"),
            ("d-valid.der", "receipt-watch.der"),
        ]
        for (name, source) in copies {
            try FileManager.default.copyItem(
                at: Fixtures.root.appendingPathComponent(source), to: directory.appendingPathComponent(name))
        }
        let result = try ReceiptTool.run(["verify", directory.path, "--json", "--jobs", "3"])
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        var statuses: [String] = []
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            statuses.append(try #require(object["status"] as? String))
            #expect((object["input"] as? String)?.hasPrefix(directory.path) == true)
        }
        #expect(statuses == ["valid", "invalid", "unreadable", "valid"])
        #expect(result.stderr.contains("4 receipts: 2 valid, 1 invalid, 1 unreadable"))
        #expect(!result.stderr.contains("["), "no progress bar when standard error is not a terminal")
    }

    @Test func jsonLinesOnStandardInput() throws {
        let receipts = ["receipt-sandbox-g5.der", "receipt-watch.der"].map {
            (try? Data(contentsOf: Fixtures.root.appendingPathComponent($0)).base64EncodedString()) ?? ""
        }
        let input = receipts.map { "{\"receipt-data\": \"\($0)\"}" }.joined(separator: "\n") + "\n{\"nothing\": true}\n\n"
        let result = try ReceiptTool.run(["verify", "-", "--json"], stdin: input)
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.first?.contains("\"input\":\"stdin:1\"") == true)
        #expect(lines.first?.contains("\"status\":\"valid\"") == true)
        #expect(lines.last?.contains("\"status\":\"unreadable\"") == true)
        #expect(result.stderr.contains("3 receipts: 2 valid, 0 invalid, 1 unreadable"))
    }
}

@Suite struct MakeAndPKICommandTests {
    static let description = """
        {
          "receipt_type": "ProductionSandbox",
          "bundle_id": "com.example.tool",
          "application_version": "7",
          "receipt_creation_date": "2025-03-01 10:00:00 Etc/GMT",
          "opaque_value": "AAECAwQFBgcICQoLDA0ODw==",
          "in_app": [ { "quantity": "1", "product_id": "com.example.tool.pro", "transaction_id": "1000",
                        "purchase_date": "2025-03-01 09:00:00 Etc/GMT" } ]
        }
        """

    @Test(arguments: ["sha1", "sha256"])
    func pkiThenMakeThenVerifyRoundTrip(digest: String) throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try ReceiptTool.run(["pki", directory.path, "--digest", digest])
        #expect(pki.status == 0, "\(pki.stderr)")
        for name in ["root.pem", "root-key.pem", "intermediate.pem", "intermediate-key.pem", "leaf.pem", "leaf-key.pem"] {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path), "\(name)")
        }
        let descriptionFile = directory.appendingPathComponent("receipt.json")
        try Data(Self.description.utf8).write(to: descriptionFile)
        let out = directory.appendingPathComponent("receipt.der")
        let device = "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE"
        let make = try ReceiptTool.run([
            "make", descriptionFile.path, "--key", directory.appendingPathComponent("leaf-key.pem").path,
            "--cert", directory.appendingPathComponent("leaf.pem").path,
            "--chain", directory.appendingPathComponent("intermediate.pem").path,
            "--chain", directory.appendingPathComponent("root.pem").path, "--digest", digest, "--device-id", device, "-o", out.path,
        ])
        #expect(make.status == 0, "\(make.stderr)")
        #expect(make.stdout.contains("DER (App Store), \(digest), 3 certificates, 1 in-app purchase"))
        let root = directory.appendingPathComponent("root.pem").path
        let verify = try ReceiptTool.run([
            "verify", out.path, "--anchor", root, "--bundle-id", "com.example.tool", "--app-version", "7", "--device-id", device,
        ])
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(verify.stdout.contains("✓ digestAlgorithm      \(digest)"))
        // Bound to that device only, and trusted by that root only.
        #expect(
            try ReceiptTool.run(["verify", out.path, "--anchor", root, "--device-id", "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEF"]).status == 1)
        #expect(try ReceiptTool.run(["verify", out.path]).status == 1)
        // What dump prints, make rebuilds into the same receipt.
        let dump = try ReceiptTool.run(["dump", "--json", out.path])
        #expect(dump.status == 0)
        let dumped = directory.appendingPathComponent("dumped.json")
        try Data(dump.stdout.utf8).write(to: dumped)
        let again = directory.appendingPathComponent("again.der")
        let remake = try ReceiptTool.run([
            "make", dumped.path, "--key", directory.appendingPathComponent("leaf-key.pem").path,
            "--cert", directory.appendingPathComponent("leaf.pem").path, "--chain",
            directory.appendingPathComponent("intermediate.pem").path,
            "--chain", root, "--digest", digest, "-o", again.path,
        ])
        #expect(remake.status == 0, "\(remake.stderr)")
        #expect(try ReceiptTool.run(["dump", "--json", again.path]).stdout == dump.stdout)
        // The intermediate's key with the leaf's certificate: refused, nothing written.
        let mismatched = directory.appendingPathComponent("mismatched.der")
        let wrongKey = try ReceiptTool.run([
            "make", dumped.path, "--key", directory.appendingPathComponent("intermediate-key.pem").path,
            "--cert", directory.appendingPathComponent("leaf.pem").path, "-o", mismatched.path,
        ])
        #expect(wrongKey.status == 64)
        #expect(wrongKey.stderr.contains("intermediate-key.pem\" is not the key of --cert"), "\(wrongKey.stderr)")
        #expect(!FileManager.default.fileExists(atPath: mismatched.path))
    }

    @Test func xcodePKIAndBERLayout() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try ReceiptTool.run(["pki", directory.path, "--xcode"]).status == 0)
        let descriptionFile = directory.appendingPathComponent("receipt.json")
        try Data(Self.description.replacingOccurrences(of: "ProductionSandbox", with: "Xcode").utf8).write(to: descriptionFile)
        let out = directory.appendingPathComponent("xcode.der")
        let make = try ReceiptTool.run([
            "make", descriptionFile.path, "--key", directory.appendingPathComponent("storekit-key.pem").path,
            "--cert", directory.appendingPathComponent("storekit.pem").path, "--ber", "-o", out.path,
        ])
        #expect(make.status == 0, "\(make.stderr)")
        #expect(make.stdout.contains("BER (Xcode)"))
        let anchor = directory.appendingPathComponent("storekit.pem").path
        #expect(try ReceiptTool.run(["verify", out.path, "--anchor", anchor, "--policy", "xcode"]).status == 0)
        let appStorePolicy = try ReceiptTool.run(["verify", out.path, "--anchor", anchor])
        #expect(appStorePolicy.status == 1)
        #expect(appStorePolicy.stdout.contains("✗ chainLength"))
        #expect(try ReceiptTool.run(["dump", out.path]).stdout.contains("BER"))
    }

    @Test func makeAndPKIUsageAndFailures() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let descriptionFile = directory.appendingPathComponent("receipt.json")
        try Data(Self.description.utf8).write(to: descriptionFile)
        #expect(try ReceiptTool.run(["make", descriptionFile.path, "--cert", "x.pem", "-o", "out.der"]).status == 64, "missing --key")
        #expect(
            try ReceiptTool.run(["make", descriptionFile.path, "--key", "k", "--cert", "c", "--digest", "md5", "-o", "o"]).status == 64)
        let missingKey = try ReceiptTool.run([
            "make", descriptionFile.path, "--key", "/no/key.pem", "--cert", "/no/cert.pem", "-o", "o.der",
        ])
        #expect(missingKey.status == 1)
        #expect(missingKey.stderr.contains("no such file"))
        let badJSON = directory.appendingPathComponent("bad.json")
        try Data("{ not json".utf8).write(to: badJSON)
        #expect(try ReceiptTool.run(["make", badJSON.path, "--key", "k", "--cert", "c", "-o", "o"]).status == 1)
        #expect(try ReceiptTool.run(["pki"]).status == 64)
        #expect(try ReceiptTool.run(["pki", directory.path, "--digest", "md5"]).status == 64)
    }
}
