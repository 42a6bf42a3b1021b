import Foundation
import JSON
import ReceiptCrypto
import ReceiptSigning
import TestSupport
import Testing

/// `receipt-tool verify --revocation` against real `openssl ocsp` responders on 127.0.0.1
/// (``OCSPTestBed``), and `--ocsp-response` files with the responders stopped.
@Suite struct RevocationCommandTests {
    static let payload = Array(
        #"{"transactionId":"42","originalTransactionId":"41","bundleId":"com.example.app","productId":"pro","purchaseDate":1733000000000,"signedDate":1733000000000,"environment":"Production","quantity":1}"#
            .utf8)

    /// The token and the root of `bed` as files, in a folder of their own (stopping the bed
    /// removes its folder).
    func files(_ bed: OCSPTestBed) throws -> (token: String, anchor: String) {
        let folder = temporaryDirectory("revocation-cli")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let token = folder.appendingPathComponent("token.jws")
        try Data(try bed.pki.jwsSigner().sign(payload: Self.payload).utf8).write(to: token)
        let anchor = folder.appendingPathComponent("root.der")
        try Data(bed.pki.root.derEncoded).write(to: anchor)
        return (token.path, anchor.path)
    }

    /// The `revocation` check of a `--json` line.
    func revocationCheck(_ stdout: String) throws -> JSONValue {
        let line = try JSONValue.parse(String(try #require(stdout.split(separator: "\n").first)))
        let checks = try #require(line["checks"]?.arrayValue)
        return try #require(checks.first { $0["name"]?.stringValue == "revocation" })
    }

    @Test func goodAndRevokedLeavesAndNoRequestWhenOff() async throws {
        let good = try OCSPTestBed()
        let (token, anchor) = try files(good)
        let off = try await onThread { try ReceiptTool.run(["verify", token, "--anchor", anchor, "--json"]) }
        #expect(off.status == 0, "\(off.stdout)\(off.stderr)")
        #expect(!off.stdout.contains("\"revocation\""))
        #expect(good.leafProxy.connections == 0 && good.intermediateProxy.connections == 0)
        let checked = try await onThread {
            try ReceiptTool.run(["verify", token, "--anchor", anchor, "--json", "--revocation", "ocsp", "--at", "now"])
        }
        await good.stop()
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        let check = try revocationCheck(checked.stdout)
        #expect(check["passed"]?.boolValue == true)
        let statuses = check["revocation"]?["certificates"]?.arrayValue?.compactMap { $0["status"]?.stringValue }
        #expect(statuses == ["good", "good"], "\(checked.stdout)")

        let revoked = try OCSPTestBed(revoked: ["leaf"])
        let (revokedToken, revokedAnchor) = try files(revoked)
        let refused = try await onThread {
            try ReceiptTool.run(["verify", revokedToken, "--anchor", revokedAnchor, "--json", "--revocation", "ocsp-soft", "--at", "now"])
        }
        await revoked.stop()
        #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
        let failed = try revocationCheck(refused.stdout)
        #expect(failed["passed"]?.boolValue == false)
        #expect(failed["revocation"]?["certificates"]?.arrayValue?.first?["status"]?.stringValue == "revoked", "\(refused.stdout)")
        #expect(failed["revocation"]?["retryable"]?.boolValue == false)
    }

    @Test func responderDownIsRetryableUnderOcspAndListedUnderOcspSoft() async throws {
        let bed = try OCSPTestBed()
        let (token, anchor) = try files(bed)
        await bed.stop()
        let hard = try ReceiptTool.run(["verify", token, "--anchor", anchor, "--json", "--revocation", "ocsp", "--at", "now"])
        #expect(hard.status == 1, "\(hard.stdout)")
        #expect(try revocationCheck(hard.stdout)["revocation"]?["retryable"]?.boolValue == true, "\(hard.stdout)")
        let soft = try ReceiptTool.run(["verify", token, "--anchor", anchor, "--json", "--revocation", "ocsp-soft", "--at", "now"])
        #expect(soft.status == 0, "\(soft.stdout)")
        let statuses = try revocationCheck(soft.stdout)["revocation"]?["certificates"]?.arrayValue?.compactMap { $0["status"]?.stringValue }
        #expect(statuses == ["unavailable", "unavailable"], "\(soft.stdout)")
    }

    @Test func ocspResponseFilesVerifyWithTheNetworkGone() async throws {
        let bed = try OCSPTestBed()
        let (token, anchor) = try files(bed)
        try bed.openssl([
            "ocsp", "-index", "index.txt", "-CA", "intermediate.pem", "-rsigner", "intermediate.pem", "-rkey", "intermediate-key.pem",
            "-issuer", "intermediate.pem", "-cert", "leaf.pem", "-respout", "leaf-ocsp.der", "-ndays", "1",
        ])
        try bed.openssl([
            "ocsp", "-index", "index.txt", "-CA", "root.pem", "-rsigner", "root.pem", "-rkey", "root-key.pem", "-issuer", "root.pem",
            "-cert", "intermediate.pem", "-respout", "intermediate-ocsp.der", "-ndays", "1",
        ])
        let kept = temporaryDirectory("revocation-responses")
        try FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true)
        var responses: [String] = []
        for name in ["leaf-ocsp.der", "intermediate-ocsp.der"] {
            try FileManager.default.copyItem(at: bed.directory.appendingPathComponent(name), to: kept.appendingPathComponent(name))
            responses += ["--ocsp-response", kept.appendingPathComponent(name).path]
        }
        await bed.stop()
        let result = try ReceiptTool.run(
            ["verify", token, "--anchor", anchor, "--json", "--revocation", "ocsp", "--at", "now"] + responses)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let sources = try revocationCheck(result.stdout)["revocation"]?["certificates"]?.arrayValue?.compactMap {
            $0["source"]?.stringValue
        }
        #expect(sources == ["offline", "offline"], "\(result.stdout)")
        let misuse = try ReceiptTool.run(["verify", token, "--anchor", anchor] + responses)
        #expect(misuse.status == 64 && misuse.stderr.contains("--revocation"))
    }

    /// A TEST notification body for com.example.app signed by `pki`.
    func notificationBody(_ pki: TestPKI) throws -> [UInt8] {
        let signed = Int64(Date().timeIntervalSince1970 * 1000)
        let uuid = UUID().uuidString.lowercased()
        let payload = Array(
            (#"{"notificationType":"TEST","notificationUUID":"\#(uuid)","data":{"bundleId":"com.example.app","appAppleId":531412,"#
                + #""environment":"Production"},"version":"2.0","signedDate":\#(signed)}"#).utf8)
        return Array(#"{"signedPayload":"\#(try pki.jwsSigner().sign(payload: payload))"}"#.utf8)
    }

    /// `serve` receiving notifications that chain to `anchor`, checking revocation by OCSP.
    func serve(anchor: String) throws -> ServeProcess {
        let database = temporaryDirectory("revocation-serve").appendingPathComponent("n.db").path
        return try ServeProcess([
            "--notifications-db", database, "--anchor", anchor, "--bundle-id", "com.example.app", "--app-apple-id", "531412",
            "--environment", "production", "--revocation", "ocsp", "--quiet",
        ])
    }

    /// `serve --revocation ocsp`: a notification whose leaf is revoked is refused 400 naming
    /// `revocation`; with the responders down it is refused 500, so that Apple sends it again.
    @Test func serveRefusesRevokedAndRetriesUnreachable() async throws {
        let revokedBed = try OCSPTestBed(revoked: ["leaf"])
        let server = try serve(anchor: try files(revokedBed).anchor)
        defer { _ = server.stop() }
        try #require(server.port != 0, "\(server.firstLine)")
        let revoked = try #require(NotificationFixtures.post(port: server.port, try notificationBody(revokedBed.pki)))
        await revokedBed.stop()
        #expect(revoked.status == 400 && revoked.bodyText.contains(#""check":"revocation""#), "\(revoked.bodyText)")

        let downBed = try OCSPTestBed()
        let downServer = try serve(anchor: try files(downBed).anchor)
        defer { _ = downServer.stop() }
        try #require(downServer.port != 0, "\(downServer.firstLine)")
        let body = try notificationBody(downBed.pki)
        await downBed.stop()
        let unreachable = try #require(NotificationFixtures.post(port: downServer.port, body))
        #expect(unreachable.status == 500 && unreachable.bodyText.contains(#""check":"revocation""#), "\(unreachable.bodyText)")
    }
}

/// The offline flow a user follows with nothing but the tool and OpenSSL: `pki --ocsp-url` makes a
/// PKI naming responders and its CA index, `make --jws` signs a token, `openssl ocsp -respout`
/// answers for its certificates from that index, and `verify --ocsp-response` checks revocation
/// with no network.
@Suite struct PKIOCSPCommandTests {
    func openssl(_ arguments: [String], in directory: URL) throws -> Int32 {
        try spawnAndWait(
            "/usr/bin/openssl", arguments, directory: directory, environment: ProcessInfo.processInfo.environment,
            output: directory.appendingPathComponent("openssl.log"))
    }

    @Test func pkiWithResponders_thenCapturedResponsesVerifyOffline() throws {
        let directory = temporaryDirectory("pki-ocsp")
        let made = try ReceiptTool.run([
            "pki", directory.path, "--jws", "--ocsp-url", "http://127.0.0.1:9/leaf", "--intermediate-ocsp-url", "http://127.0.0.1:9/ca",
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let index = try String(contentsOf: directory.appendingPathComponent("index.txt"), encoding: .utf8)
        #expect(index.split(separator: "\n").count == 2 && index.split(separator: "\n").allSatisfy { $0.hasPrefix("V\t") }, "\(index)")
        let leaf = try Certificate.load(Array(try Data(contentsOf: directory.appendingPathComponent("leaf.pem"))))
        #expect(leaf.first?.ocspURLs == ["http://127.0.0.1:9/leaf"])

        let payload = directory.appendingPathComponent("payload.json")
        try Data(RevocationCommandTests.payload).write(to: payload)
        let token = directory.appendingPathComponent("token.jws").path
        let signed = try ReceiptTool.run([
            "make", payload.path, "--jws", "--key", directory.appendingPathComponent("leaf-key.pem").path, "--cert",
            directory.appendingPathComponent("leaf.pem").path, "--chain", directory.appendingPathComponent("intermediate.pem").path,
            "--chain", directory.appendingPathComponent("root.pem").path, "-o", token,
        ])
        #expect(signed.status == 0, "\(signed.stderr)")
        for (issuer, subject, output) in [("intermediate", "leaf", "leaf.der"), ("root", "intermediate", "intermediate.der")] {
            let status = try openssl(
                [
                    "ocsp", "-index", "index.txt", "-CA", "\(issuer).pem", "-rsigner", "\(issuer).pem", "-rkey", "\(issuer)-key.pem",
                    "-issuer", "\(issuer).pem", "-cert", "\(subject).pem", "-respout", output, "-ndays", "1",
                ], in: directory)
            #expect(status == 0, "openssl ocsp for \(subject)")
        }
        let anchor = directory.appendingPathComponent("root.pem").path
        let offline = try ReceiptTool.run([
            "verify", token, "--anchor", anchor, "--revocation", "ocsp", "--at", "now", "--json", "--ocsp-response",
            directory.appendingPathComponent("leaf.der").path, "--ocsp-response", directory.appendingPathComponent("intermediate.der").path,
        ])
        #expect(offline.status == 0, "\(offline.stdout)\(offline.stderr)")
        #expect(offline.stdout.contains(#""status":"good""#) && offline.stdout.contains(#""source":"offline""#), "\(offline.stdout)")
        // Asked without the files, the responders the certificates name are not there: a retryable failure.
        let online = try ReceiptTool.run(["verify", token, "--anchor", anchor, "--revocation", "ocsp", "--at", "now", "--json"])
        #expect(online.status == 1 && online.stdout.contains(#""retryable":true"#), "\(online.stdout)")
        let bad = try ReceiptTool.run(["pki", directory.path, "--jws", "--ocsp-url", "https://example.com/ocsp"])
        #expect(bad.status == 64)
    }
}
