import Foundation
import JSON
import TestSupport
import Testing

/// Helpers the JWS CLI tests share: temporary directories, JSON lines, and the certificate a
/// token carries.
enum JWSToolHelpers {
    static func temporaryDirectory() throws -> URL {
        TestSupport.temporaryDirectory("jwstool")
    }

    /// Each line of `text` parsed as a JSON object.
    static func jsonLines(_ text: String) throws -> [JSONValue] {
        try text.split(separator: "\n").map { try JSONValue.parse(String($0)) }
    }

    static func base64URLDecode(_ text: Substring) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }

    /// The DER of `x5c[index]` of the token in `file`, written to a `.der` file in `directory`.
    static func carriedCertificate(_ file: String, index: Int = 0, into directory: URL) throws -> String {
        let token = String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self)
        let segments = token.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".", omittingEmptySubsequences: false)
        let first = try #require(segments.first)
        let header = try #require(base64URLDecode(first))
        let x5c = try #require(try JSONValue.parse([UInt8](header))["x5c"]?.arrayValue)
        guard case .string(let text) = try #require(x5c.dropFirst(index).first) else {
            Issue.record("x5c[\(index)] is not a string")
            return ""
        }
        let der = try #require(Data(base64Encoded: text))
        let url = directory.appendingPathComponent("x5c-\(index)-\(UUID().uuidString).der")
        try der.write(to: url)
        return url.path
    }
}

/// `receipt-tool verify` on StoreKit 2 signed data: real Apple tokens, Xcode tokens, mixed runs
/// with receipts, directories, JSON lines, and every JWS expectation option.
@Suite struct JWSVerifyCommandTests {
    /// Real Apple-signed inputs, the heading detail `verify` prints, and the signed date it
    /// validates at (a notification without a signedDate: its signed transaction's).
    static let real: [(file: String, detail: String, time: String)] = [
        ("jws/gopay/sandbox-transaction-2000000184445477.jws", "JWS transaction", "2022-11-04T11:01:25.499Z"),
        ("jws/go-iap/sandbox-renewal-info-2000000335310644.jws", "JWS renewal info", "2023-05-23T06:19:38.492Z"),
        ("jws/gopay/sandbox-notification-DID_RENEW.jws", "notification DID_RENEW", "2022-03-04T09:43:28.254Z"),
        ("jws/gopay/production-notification-CONSUMPTION_REQUEST.jws", "notification CONSUMPTION_REQUEST", "2023-06-28T08:38:32.560Z"),
        ("jws/appstore-iap/test-notification-signed-payload.json", "notification body, notification TEST", "2022-09-02T12:41:32.884Z"),
        ("jws/omnimind/noenv-renewal-1000000906235058.jws", "JWS renewal info", "2021-11-09T13:25:23.732Z"),
        ("jws/mimo/sandbox-notification-TEST-original-reconstructed.jws", "notification TEST", "2024-02-02T15:28:49.389Z"),
    ]

    @Test(arguments: real.map(\.file))
    func realAppleTokensAreValidAtTheirSignedDate_andNotNow(_ file: String) throws {
        let entry = try #require(Self.real.first { $0.file == file })
        let path = Fixtures.path(file)
        for at in [[], ["--at", "signed"], ["--at", "creation"]] {
            let result = try ReceiptTool.run(["verify", path] + at)
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.hasPrefix("\(path): VALID (\(entry.detail)) (validated at \(entry.time))"), "\(result.stdout)")
            for check in ["algorithm", "certificateCount", "signature", "chain", "pinnedAnchor", "leafMarker", "intermediateMarker"] {
                #expect(result.stdout.contains("  ✓ \(check) "), "\(check)")
            }
            #expect(result.stdout.contains("1 input: 1 valid, 0 invalid, 0 unreadable"))
        }
        let now = try ReceiptTool.run(["verify", path, "--at", "now"])
        #expect(now.status == 1)
        #expect(now.stdout.hasPrefix("\(path): INVALID"))
        let chain = try #require(now.stdout.split(separator: "\n").first { $0.hasPrefix("  ✗ chain ") })
        #expect(chain.contains("CN=Prod ECC Mac App Store and iTunes Store Receipt Signing expired at"), "\(chain)")
        #expect(now.stdout.contains("1 input: 0 valid, 1 invalid, 0 unreadable"))
    }

    /// Nested tokens are verified and named: their checks are longer than the 20-column name
    /// field and are printed whole.
    @Test func notificationsNameTheirNestedChecks() throws {
        let result = try ReceiptTool.run(["verify", Fixtures.path("jws/gopay/sandbox-notification-DID_RENEW.jws")])
        #expect(result.status == 0)
        #expect(result.stdout.contains("  ✓ signedTransactionInfo verified ("))
        #expect(result.stdout.contains("  ✓ signedRenewalInfo    verified ("))
        #expect(result.stdout.contains("  ✓ nestedAgreement      2 nested tokens agree"))
    }

    static let xcode = ["xcode-signed-transaction.jws", "xcode-signed-renewal-info.jws", "xcode-signed-app-transaction.jws"]

    /// Xcode tokens verify under the xcode policy against the certificate they carry, passed as
    /// an anchor, and only so.
    @Test(arguments: xcode)
    func xcodeTokensNeedTheirCertificateAsAnchor(_ name: String) throws {
        let path = Fixtures.path("jws/apple/xcode/" + name)
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try JWSToolHelpers.carriedCertificate(path, into: directory)

        let valid = try ReceiptTool.run(["verify", path, "--policy", "xcode", "--anchor", certificate, "--environment", "xcode", "--json"])
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")
        let line = try #require(try JSONToolLines.single(valid.stdout))
        #expect(line["valid"] == .bool(true))
        #expect(line["assurance"] == .string("storeKitTesting"))
        #expect(line["chain"]?.arrayValue == [.string("O=StoreKit Testing in Xcode,CN=StoreKit Testing in Xcode")])

        // Never trusted unless passed: the bundled anchors do not end its chain.
        let apple = try ReceiptTool.run(["verify", path, "--policy", "xcode"])
        #expect(apple.status == 1)
        #expect(apple.stdout.contains("  ✗ chain "), "\(apple.stdout)")
        let bundledXcode = try ReceiptTool.run(["verify", path, "--anchor", "xcode"])
        #expect(bundledXcode.status == 1)
        #expect(bundledXcode.stdout.contains("  ✗ chain "), "\(bundledXcode.stdout)")
        // The App Store policy needs three certificates in x5c.
        let appStore = try ReceiptTool.run(["verify", path, "--anchor", certificate])
        #expect(appStore.status == 1)
        #expect(appStore.stdout.contains("  ✗ certificateCount     x5c holds 1 certificate; the appStore policy needs exactly 3"))
    }

    /// Receipts, a legacy transaction receipt, a JWS and a notification body in one run, as text
    /// and as JSON lines.
    @Test func receiptsAndSignedDataMixInOneRun() throws {
        let inputs = [
            Fixtures.path("receipt-sandbox-g5.der"), Fixtures.path("legacy/venice-legacy-transaction-receipt.b64"),
            Fixtures.path("jws/gopay/sandbox-transaction-2000000184445477.jws"),
            Fixtures.path("jws/appstore-iap/test-notification-signed-payload.json"),
        ]
        let text = try ReceiptTool.run(["verify"] + inputs)
        #expect(text.status == 0, "\(text.stdout)\(text.stderr)")
        #expect(text.stdout.contains("4 inputs: 4 valid, 0 invalid, 0 unreadable"))
        #expect(text.stdout.contains("receipt-sandbox-g5.der: VALID (validated at"))
        #expect(text.stdout.contains("venice-legacy-transaction-receipt.b64: VALID (transaction receipt"))

        let json = try ReceiptTool.run(["verify", "--json"] + inputs)
        #expect(json.status == 0)
        #expect(json.stderr.contains("4 inputs: 4 valid, 0 invalid, 0 unreadable"))
        let lines = try JWSToolHelpers.jsonLines(json.stdout)
        #expect(lines.count == 4)
        #expect(
            lines.map { $0["kind"] } == ["app_receipt", "transaction_receipt", "jws_transaction", "jws_notification"].map(JSONValue.string))
        #expect(lines.allSatisfy { $0["assurance"] == .string("apple") && $0["status"] == .string("valid") })
        let transaction = lines[2]
        #expect(transaction["input"] == .string(inputs[2]))
        #expect(transaction["transactionId"] == .string("2000000184445477"))
        #expect(transaction["originalTransactionId"] == .string("2000000184445477"))
        #expect(transaction["bundleId"] == .string("Com.VoiceRecording.Telephone"))
        #expect(transaction["environment"] == .string("Sandbox"))
        #expect(transaction["signedDate"] == .number("1667559685499"))
        #expect(transaction["validation_time"] == .string("2022-11-04T11:01:25.499Z"))
        #expect(transaction["chain"]?.arrayValue?.count == 3)
        let names = transaction["checks"]?.arrayValue?.compactMap { $0["name"] } ?? []
        #expect(Array(names.prefix(4)) == ["parse", "trustAnchors", "kind", "algorithm"].map(JSONValue.string))
        #expect(transaction["checks"]?.arrayValue?.allSatisfy { $0["passed"] == .bool(true) && $0["reason"]?.stringValue != nil } == true)
        #expect(transaction["unchecked"]?.arrayValue?.contains(.string("bundleIdentifier")) == true)
        let notification = lines[3]
        #expect(notification["notificationType"] == .string("TEST"))
        #expect(notification["notificationUUID"] == .string("5e09dcfc-205e-4ea1-9883-96676f394992"))
        #expect(notification["bundleId"] == .string("com.Abilities"))
    }

    @Test func directoriesOfSignedData() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (file, name) in [
            ("jws/gopay/sandbox-transaction-2000000191896422.jws", "a.jws"), ("jws/gopay/sandbox-renewal-2000000184445477.jws", "b.jws"),
            ("receipt-sandbox-g5.der", "c.der"),
        ] {
            try FileManager.default.copyItem(atPath: Fixtures.path(file), toPath: directory.appendingPathComponent(name).path)
        }
        let result = try ReceiptTool.run(["verify", directory.path])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("a.jws: VALID (JWS transaction)"))
        #expect(result.stdout.contains("b.jws: VALID (JWS renewal info)"))
        #expect(result.stdout.contains("3 inputs: 3 valid, 0 invalid, 0 unreadable"))
    }

    /// Standard input: a bare token, a notification body and a receipt-data body, one a line.
    @Test func jsonLinesOnStandardInput() throws {
        let token = String(decoding: try Fixtures.bytes("jws/gopay/sandbox-transaction-2000000184445477.jws"), as: UTF8.self)
        let body = String(decoding: try Fixtures.bytes("jws/appstore-iap/test-notification-signed-payload.json"), as: UTF8.self)
        let receipt = Data(try Fixtures.bytes("receipt-sandbox-g5.der")).base64EncodedString()
        let lines = [
            token.trimmingCharacters(in: .whitespacesAndNewlines), body.replacingOccurrences(of: "\n", with: " "), "",
            #"{"receipt-data": "\#(receipt)"}"#,
        ]
        let result = try ReceiptTool.run(["verify", "--json", "-"], stdin: lines.joined(separator: "\n") + "\n")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let objects = try JWSToolHelpers.jsonLines(result.stdout)
        #expect(objects.map { $0["input"] } == ["stdin:1", "stdin:2", "stdin:4"].map(JSONValue.string))
        #expect(objects.map { $0["kind"] } == ["jws_transaction", "jws_notification", "app_receipt"].map(JSONValue.string))
        #expect(result.stderr.contains("3 inputs: 3 valid"))
    }

    /// Each expectation option: met, then not met (naming its check).
    @Test func everyExpectationFailsWhenWrong() throws {
        let transaction = Fixtures.path("jws/gopay/sandbox-transaction-2000000184445477.jws")
        let production = Fixtures.path("jws/gopay/production-notification-CONSUMPTION_REQUEST.jws")
        let cases: [(file: String, good: [String], bad: [String], check: String)] = [
            (
                transaction, ["--bundle-id", "Com.VoiceRecording.Telephone"], ["--bundle-id", "com.voicerecording.telephone"],
                "bundleIdentifier"
            ),
            (production, ["--app-apple-id", "1601830814"], ["--app-apple-id", "1601830815"], "appAppleId"),
            (transaction, ["--environment", "SANDBOX"], ["--environment", "production"], "environment"),
            (production, ["--environment", "production", "--environment", "sandbox"], ["--environment", "xcode"], "environment"),
            (
                transaction, ["--app-account-token", "207262DA-1AC8-4E0A-A399-5AA62A82800F"],
                ["--app-account-token", "207262da-1ac8-4e0a-a399-5aa62a82800e"], "appAccountToken"
            ),
            // --max-age is measured against the clock, whatever --at says: see
            // ExpectationRefusalTests (a token signed in 2022 is always more than a day old now).
        ]
        for entry in cases {
            let good = try ReceiptTool.run(["verify", entry.file] + entry.good)
            #expect(good.status == 0, "\(entry.good): \(good.stdout)")
            #expect(good.stdout.contains("  ✓ \(entry.check) "), "\(entry.good)")
            #expect(!good.stdout.contains("not checked: \(entry.check)"))
            let bad = try ReceiptTool.run(["verify", entry.file] + entry.bad)
            #expect(bad.status == 1, "\(entry.bad)")
            let failed = bad.stdout.split(separator: "\n").filter { $0.hasPrefix("  ✗ ") }
            #expect(failed.count == 1 && failed.first?.hasPrefix("  ✗ \(entry.check) ") == true, "\(entry.bad): \(bad.stdout)")
        }
        // The app Apple id is checked on production payloads only, as Apple does.
        let sandbox = try ReceiptTool.run([
            "verify", Fixtures.path("jws/appstore-iap/sandbox-notification-TEST.jws"), "--app-apple-id", "1",
        ])
        #expect(sandbox.status == 0)
        #expect(sandbox.stdout.contains("not checked: appAccountToken, appAppleId"))
    }

    @Test func badOptionValuesAreUsageErrors() throws {
        let transaction = Fixtures.path("jws/gopay/sandbox-transaction-2000000184445477.jws")
        for options in [
            ["--app-apple-id", "twelve"], ["--app-apple-id", "-3"], ["--max-age", "-1"], ["--max-age", "soon"],
            ["--device-verification-id", "not-a-uuid"], ["--app-account-token", "207262da1ac84e0aa3995aa62a82800f"],
            ["--environment", "staging"], ["--at", "yesterday"], ["--policy", "apple"],
        ] {
            let result = try ReceiptTool.run(["verify", transaction] + options)
            #expect(result.status == 64, "\(options)")
            #expect(result.stderr.hasPrefix("Error: "), "\(options)")
            #expect(result.stdout.isEmpty)
        }
    }

    /// Shaped like signed data but broken: unreadable, with the parse check saying why.
    @Test func malformedSignedDataIsUnreadable() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = String(decoding: try Fixtures.bytes("jws/gopay/sandbox-transaction-2000000184445477.jws"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let padded = directory.appendingPathComponent("padded.jws")
        try Data((token + "==").utf8).write(to: padded)
        let twoParts = directory.appendingPathComponent("two.jws")
        try Data(token.split(separator: ".").prefix(2).joined(separator: ".").utf8).write(to: twoParts)
        let result = try ReceiptTool.run(["verify", "--json", padded.path, twoParts.path])
        #expect(result.status == 1)
        let lines = try JWSToolHelpers.jsonLines(result.stdout)
        #expect(lines.count == 2)
        for line in lines {
            #expect(line["status"] == .string("unreadable"))
            #expect(line["kind"] == .string("jws"))
            #expect(line["checks"]?.arrayValue?.first?["name"] == .string("parse"))
            #expect(line["checks"]?.arrayValue?.first?["reason"]?.stringValue?.hasPrefix("not a JWS: ") == true)
        }
        #expect(result.stderr.contains("2 inputs: 0 valid, 0 invalid, 2 unreadable"))
    }
}

/// One JSON line.
enum JSONToolLines {
    static func single(_ text: String) throws -> JSONValue? {
        let lines = try JWSToolHelpers.jsonLines(text)
        return lines.count == 1 ? lines.first : nil
    }
}
