import Foundation
import JSON
import ReceiptCrypto
import ReceiptSigning
import TestSupport
import Testing

/// `receipt-tool serve --retention-path`: Retention Messaging's Get Retention Message endpoint as
/// the App Store calls it — real-time requests signed by the JWS test PKI, posted over HTTP to a
/// real `serve` on 127.0.0.1, answered with the configured message only after they verify.
@Suite struct RetentionServeTests {
    typealias F = NotificationFixtures

    static let monthlyMessage = "5b2b3c1e-6a64-4e0a-9c55-0d3c4f2c9a11"
    static let defaultMessage = "0e6c2a8f-1b7d-4f3e-8d21-7c9a4b5e6f30"

    /// A real-time request payload, as Apple's DecodedRealtimeRequestBody.
    static func payload(product: String = F.monthly, appAppleId: Int64 = F.appAppleId, environment: String = "Sandbox") -> [UInt8] {
        let signed = Int64(Date().timeIntervalSince1970 * 1000)
        return Array(
            """
            {"originalTransactionId":"2000000000000001","appAppleId":\(appAppleId),"productId":"\(product)",\
            "userLocale":"en-US","requestIdentifier":"\(UUID().uuidString.lowercased())","environment":"\(environment)",\
            "signedDate":\(signed)}
            """.utf8)
    }

    /// `{"signedPayload": JWS}` of `payload`, signed by `pki`.
    static func body(_ payload: [UInt8], pki: TestPKI) throws -> [UInt8] {
        let token = try pki.jwsSigner().sign(payload: payload)
        return Array(#"{"signedPayload":"\#(token)"}"#.utf8)
    }

    func configFile(_ json: String) throws -> String {
        let url = temporaryDirectory("retention").appendingPathComponent("retention.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    func serve(config: String, quiet: Bool = true) throws -> ServeProcess {
        try ServeProcess(
            [
                "--environment", "sandbox", "--anchor", try F.anchorFile(), "--retention-path", "/retention", "--retention-config", config,
                "--app-apple-id", String(F.appAppleId),
            ] + (quiet ? ["--quiet"] : []))
    }

    func json(_ bytes: [UInt8]) throws -> JSONValue { try JSONValue.parse(bytes) }

    @Test func genuineRequestsGetTheirMessageForgedOnesTheFailedCheck() throws {
        let config = try configFile(#"{"default":"\#(Self.defaultMessage)","products":{"\#(F.monthly)":"\#(Self.monthlyMessage)"}}"#)
        let server = try serve(config: config)
        defer { _ = server.stop() }
        try #require(server.port != 0, "\(server.firstLine)")
        let pki = try PKIs.jws.get()

        // The product's message, then the default for another product.
        let monthly = try #require(F.post(port: server.port, path: "/retention", try Self.body(Self.payload(), pki: pki)))
        #expect(monthly.status == 200, "\(monthly.bodyText)")
        #expect(try json(monthly.body) == (try JSONValue.parse(#"{"message":{"messageIdentifier":"\#(Self.monthlyMessage)"}}"#)))
        let yearly = try #require(F.post(port: server.port, path: "/retention", try Self.body(Self.payload(product: F.yearly), pki: pki)))
        #expect(yearly.status == 200 && yearly.bodyText.contains(Self.defaultMessage), "\(yearly.bodyText)")

        // Refused, each naming its check, never answered with a message.
        let other = try PKIs.otherJWS.get()
        let transaction = Array(
            #"{"transactionId":"1","bundleId":"\#(F.bundle)","environment":"Sandbox","signedDate":1700000000000}"#.utf8)
        let refusals: [(String, [UInt8], String)] = [
            ("another PKI", try Self.body(Self.payload(), pki: other), "chain"),
            ("another app", try Self.body(Self.payload(appAppleId: 999), pki: pki), "appAppleId"),
            ("production", try Self.body(Self.payload(environment: "Production"), pki: pki), "environment"),
            ("a transaction", try Self.body(transaction, pki: pki), "kind"),
            ("not JSON", Array("hello".utf8), "body"),
            ("no signedPayload", Array("{}".utf8), "body"),
        ]
        for (name, body, check) in refusals {
            let response = try #require(F.post(port: server.port, path: "/retention", body), "\(name)")
            #expect(response.status == 400, "\(name): \(response.bodyText)")
            let answer = try json(response.body)
            #expect(answer["status"]?.stringValue == "rejected" && answer["check"]?.stringValue == check, "\(name): \(response.bodyText)")
            #expect(!response.bodyText.contains("messageIdentifier"), "\(name)")
        }
        let stopped = server.stop()
        #expect(stopped.status == 0)
    }

    @Test func noMessageForAProductIs404SoTheAppStoreShowsItsDefault() throws {
        let server = try serve(config: try configFile(#"{"products":{"\#(F.monthly)":"\#(Self.monthlyMessage)"}}"#))
        defer { _ = server.stop() }
        try #require(server.port != 0, "\(server.firstLine)")
        let response = try #require(
            F.post(port: server.port, path: "/retention", try Self.body(Self.payload(product: F.level), pki: try PKIs.jws.get())))
        #expect(response.status == 404 && response.bodyText == #"{"status":"noMessage"}"#, "\(response.bodyText)")
    }

    /// The endpoint reports each answer through its outcome hook, which serve logs.
    @Test func answersAreLogged() throws {
        let server = try serve(config: try configFile(#"{"products":{"\#(F.monthly)":"\#(Self.monthlyMessage)"}}"#), quiet: false)
        try #require(server.port != 0, "\(server.firstLine)")
        let pki = try PKIs.jws.get()
        _ = try #require(F.post(port: server.port, path: "/retention", try Self.body(Self.payload(product: F.level), pki: pki)))
        _ = try #require(F.post(port: server.port, path: "/retention", Array("hello".utf8)))
        let stopped = server.stop()
        #expect(stopped.status == 0)
        #expect(stopped.stderr.contains("serve: POST /retention → 404 noMessage: no message for product \(F.level)"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("serve: POST /retention → 400 rejected: body: "), "\(stopped.stderr)")
    }

    @Test func malformedConfigurationsAreUsageErrors() throws {
        for (name, json) in [
            ("unknown member", #"{"default":"\#(Self.defaultMessage)","fallback":"x"}"#),
            ("not a UUID", #"{"default":"hello"}"#),
            ("no message", #"{}"#),
            ("not JSON", "default"),
        ] {
            let result = try ReceiptTool.run([
                "serve", "--port", "0", "--retention-path", "/retention", "--retention-config", try configFile(json), "--app-apple-id", "1",
            ])
            #expect(result.status == 64, "\(name): \(result.stderr)")
            #expect(result.stderr.contains("--retention-config"), "\(name): \(result.stderr)")
        }
        let noAppleId = try ReceiptTool.run([
            "serve", "--port", "0", "--retention-path", "/retention", "--retention-config",
            try configFile(#"{"default":"\#(Self.defaultMessage)"}"#),
        ])
        #expect(noAppleId.status == 64 && noAppleId.stderr.contains("--app-apple-id"), "\(noAppleId.stderr)")
    }
}
