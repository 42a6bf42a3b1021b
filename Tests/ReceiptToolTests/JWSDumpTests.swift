import Foundation
import JSON
import TestSupport
import Testing

/// `receipt-tool dump` on StoreKit 2 signed data: compact JWS and notification bodies.
@Suite struct JWSDumpTests {
    static func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(name)))) }

    @Test func textShowsTheHeaderCertificatesAndPayload() throws {
        let result = try ReceiptTool.run(["dump", Fixtures.path("jws/gopay/sandbox-transaction-2000000184445477.jws")])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Signed data (compact JWS, 5230 bytes; not verified") == true)
        #expect(lines.contains("  Algorithm                   ES256"))
        #expect(lines.contains("  Certificates (x5c)          3 (untrusted until verified)"))
        #expect(lines.contains { $0.hasPrefix("  #1 ") && $0.hasSuffix("CN=Prod ECC Mac App Store and iTunes Store Receipt Signing") })
        #expect(lines.contains("     Valid                       2021-08-25T02:50:34Z → 2023-09-24T02:50:33Z"))
        #expect(lines.contains("     Serial                      68FA0F95DBE94A8107D2506B8C33EFF6"))
        #expect(lines.contains { $0.hasPrefix("  #3 ") && $0.hasSuffix("CN=Apple Root CA - G3") })
        #expect(lines.contains("  Signature                   64 bytes"))
        #expect(lines.contains("Payload (transaction, 548 bytes)"))
        #expect(lines.contains("  transactionId               2000000184445477"))
        #expect(lines.contains("  signedDate                  1667559685499 (2022-11-04T11:01:25.499Z)"))
        #expect(lines.contains("  appAccountToken             207262da-1ac8-4e0a-a399-5aa62a82800f"))
    }

    @Test func xcodeTokensShowKidAndExactFractions() throws {
        let text = try ReceiptTool.run(["dump", Fixtures.path("jws/apple/xcode/xcode-signed-transaction.jws")])
        #expect(text.status == 0)
        #expect(text.stdout.contains("  Key id                      Apple_Xcode_Key\n"))
        #expect(text.stdout.contains("  Type                        JWT\n"))
        #expect(text.stdout.contains("O=StoreKit Testing in Xcode,CN=StoreKit Testing in Xcode"))
        #expect(text.stdout.contains("  purchaseDate                1697679936049.7297 (2023-10-19T01:45:36.049Z)\n"))

        let json = try ReceiptTool.run(["dump", "--json", "--compact", Fixtures.path("jws/apple/xcode/xcode-signed-transaction.jws")])
        #expect(json.status == 0)
        #expect(json.stdout.contains(#""purchaseDate":1697679936049.7297,"#))
        #expect(json.stdout.contains(#""isUpgraded":false,"#))
        #expect(json.stdout.split(separator: "\n").count == 1)
    }

    /// `--json` is the payload object itself, member for member, types and number text unchanged.
    @Test(arguments: [
        "jws/gopay/sandbox-transaction-2000000184445477", "jws/go-iap/sandbox-renewal-info-2000000335310644",
        "jws/omnimind/noenv-transaction-1000000906235058", "jws/appstore-iap/sandbox-notification-TEST",
    ])
    func jsonIsThePayload(_ name: String) throws {
        let result = try ReceiptTool.run(["dump", "--json", Fixtures.path(name + ".jws")])
        #expect(result.status == 0)
        let expected = try JSONValue.parse(try Self.bytes(name + ".expected.json"))
        #expect(try JSONValue.parse(result.stdout) == expected["payload"])
    }

    /// In a notification, the nested tokens become their decoded payloads.
    @Test func notificationJSONExpandsTheNestedTokens() throws {
        for name in ["jws/gopay/sandbox-notification-DID_RENEW", "jws/gopay/production-notification-CONSUMPTION_REQUEST"] {
            let result = try ReceiptTool.run(["dump", "--json", Fixtures.path(name + ".jws")])
            #expect(result.status == 0)
            let output = try JSONValue.parse(result.stdout)
            let expected = try #require(try JSONValue.parse(try Self.bytes(name + ".expected.json"))["payload"])
            guard case .object(let members) = expected, case .object(let data)? = expected["data"] else {
                Issue.record("\(name): unexpected shape")
                continue
            }
            #expect(output.objectValue?.map(\.0) == members.map(\.0))
            #expect(output["notificationUUID"] == expected["notificationUUID"])
            #expect(output["data"]?.objectValue?.map(\.0) == data.map(\.0))
            #expect(output["data"]?["appAppleId"] == expected["data"]?["appAppleId"])
            let transaction = try #require(output["data"]?["signedTransactionInfo"])
            #expect(transaction.objectValue != nil)
            #expect(transaction["signedDate"].map { if case .number = $0 { true } else { false } } == true)
            #expect(transaction["quantity"] == .number("1"))
            if name.contains("DID_RENEW") {
                let nested = try JSONValue.parse(try Self.bytes("jws/gopay/sandbox-transaction-2000000004047119.expected.json"))
                #expect(transaction == nested["payload"])
                let renewal = try JSONValue.parse(try Self.bytes("jws/gopay/sandbox-renewal-2000000000842607.expected.json"))
                #expect(output["data"]?["signedRenewalInfo"] == renewal["payload"])
            } else {
                let nested = try JSONValue.parse(try Self.bytes("jws/gopay/production-transaction-510001261072921-nested.expected.json"))
                #expect(transaction == nested["payload"])
            }
        }
    }

    /// A notification body, a token with whitespace around it on standard input, and the token
    /// file give the same JSON.
    @Test func bodiesAndStandardInput() throws {
        let token = try Self.bytes("jws/appstore-iap/sandbox-notification-TEST.jws")
        let fromToken = try ReceiptTool.run(["dump", "--json", Fixtures.path("jws/appstore-iap/sandbox-notification-TEST.jws")])
        let fromBody = try ReceiptTool.run([
            "dump", "--json", Fixtures.path("jws/appstore-iap/test-notification-signed-payload.json"),
        ])
        let fromStdin = try ReceiptTool.run(["dump", "--json", "-"], stdin: Data(Array("\n  ".utf8) + token + Array(" \r\n".utf8)))
        #expect(fromToken.status == 0 && fromBody.status == 0 && fromStdin.status == 0)
        #expect(fromBody.stdout == fromToken.stdout)
        #expect(fromStdin.stdout == fromToken.stdout)
        let text = try ReceiptTool.run(["dump", Fixtures.path("jws/appstore-iap/test-notification-signed-payload.json")])
        #expect(text.stdout.hasPrefix("Signed data (App Store Server Notification body"))
        #expect(text.stdout.contains("  notificationType            TEST\n"))
    }

    @Test func payloadWritesTheDecodedPayloadBytes() throws {
        let result = try ReceiptTool.run(["dump", "--payload", Fixtures.path("jws/go-iap/sandbox-renewal-info-2000000335310644.jws")])
        #expect(result.status == 0)
        #expect(
            result.stdout
                == #"{"originalTransactionId":"2000000335310644","autoRenewProductId":"co.ringalarm.swtich.quarterly2","productId":"co.ringalarm.swtich.quarterly2","autoRenewStatus":1,"signedDate":1684822778492,"environment":"Sandbox","recentSubscriptionStartDate":1684822738000}"#
        )
    }

    @Test func malformedSignedDataExitsOne() throws {
        let token = String(decoding: try Self.bytes("jws/gopay/sandbox-transaction-2000000184445477.jws"), as: UTF8.self)
        for (input, code) in [
            (token + ".AAAA", "wrongSegmentCount"), (token.replacingOccurrences(of: "_", with: "/"), "invalidBase64URL"),
            (#"{"signedPayload": 1}"#, "notAJWS"), (#"{"signedPayload": "eyJh.b"}"#, "wrongSegmentCount"),
        ] {
            let result = try ReceiptTool.run(["dump", "-"], stdin: Data(input.utf8))
            #expect(result.status == 1, "\(code)")
            #expect(result.stderr.contains(code), "\(result.stderr)")
        }
        // A notification whose nested token is broken names the field.
        let broken = #"{"notificationType":"TEST","data":{"signedTransactionInfo":"a.b"}}"#
        let segment = Data(broken.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let jws = "eyJhbGciOiJFUzI1NiJ9." + segment + "."
        let result = try ReceiptTool.run(["dump", "-"], stdin: Data(jws.utf8))
        #expect(result.status == 1)
        #expect(result.stderr.contains("data.signedTransactionInfo"))
    }
}
