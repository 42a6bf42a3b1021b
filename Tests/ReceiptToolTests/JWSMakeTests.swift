import ASN1
import Foundation
import JSON
import ReceiptCrypto
import TestSupport
import Testing

/// `receipt-tool pki --jws` and `receipt-tool make --jws`, checked by `verify` and `dump`.
@Suite struct JWSMakeCommandTests {
    /// A JWS PKI made by the tool, in a fresh directory.
    struct PKI {
        let directory: URL
        var root: String { directory.appendingPathComponent("root.pem").path }
        /// The signing arguments of `make --jws`.
        var signing: [String] {
            [
                "--key", directory.appendingPathComponent("leaf-key.pem").path, "--cert", directory.appendingPathComponent("leaf.pem").path,
                "--chain", directory.appendingPathComponent("intermediate.pem").path, "--chain", root,
            ]
        }

        init(in parent: URL, name: String = "pki") throws {
            directory = parent.appendingPathComponent(name)
            let result = try ReceiptTool.run(["pki", directory.path, "--jws"])
            #expect(result.status == 0, "\(result.stderr)")
        }
    }

    static let signedDate = "1764547200123"  // 2025-12-01T00:00:00.123Z

    static func transaction(bundle: String = "com.example.app", environment: String = "Sandbox", extra: String = "") -> String {
        #"{"transactionId":"1001","originalTransactionId":"1000","bundleId":"\#(bundle)","productId":"pro.monthly","purchaseDate":1764547200000.25,"signedDate":\#(signedDate),"environment":"\#(environment)","quantity":1\#(extra)}"#
    }

    static func write(_ text: String, _ name: String, in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// Signs `json` with `make --jws`, returning the path of the token.
    static func make(_ json: String, _ pki: PKI, in directory: URL, name: String = UUID().uuidString) throws -> String {
        let description = try write(json, name + ".json", in: directory)
        let result = try ReceiptTool.run(["make", description, "--jws"] + pki.signing)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("eyJ") && result.stdout.hasSuffix("\n") && result.stdout.split(separator: ".").count == 3)
        return try write(result.stdout, name + ".jws", in: directory)
    }

    @Test func pkiJWSIsShapedLikeApples() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try PKI(in: directory)
        func certificate(_ name: String) throws -> Certificate {
            try Certificate(pemEncoded: String(contentsOf: pki.directory.appendingPathComponent(name), encoding: .utf8))
        }
        let root = try certificate("root.pem")
        let intermediate = try certificate("intermediate.pem")
        let leaf = try certificate("leaf.pem")
        let wwdr = try #require(ASN1ObjectIdentifier(dotted: "1.2.840.113635.100.6.2.1"))
        let signing = try #require(ASN1ObjectIdentifier(dotted: "1.2.840.113635.100.6.11.1"))
        #expect(try root.publicKey.bits == 384)
        #expect(root.isSelfSigned && root.isCA)
        #expect(try intermediate.publicKey.bits == 384)
        #expect(intermediate.isCA && intermediate.pathLengthConstraint == 0 && intermediate.hasExtension(oid: wwdr))
        #expect(intermediate.issuer == root.subject)
        #expect(try leaf.publicKey.bits == 256)
        #expect(!leaf.isCA && leaf.hasExtension(oid: signing) && !leaf.hasExtension(oid: wwdr))
        #expect(leaf.issuer == intermediate.subject)
        for name in ["root-key.pem", "intermediate-key.pem", "leaf-key.pem"] {
            #expect(FileManager.default.fileExists(atPath: pki.directory.appendingPathComponent(name).path))
        }
        #expect(try ReceiptTool.run(["pki", directory.appendingPathComponent("x").path, "--jws", "--bits", "2048"]).status == 64)
        #expect(try ReceiptTool.run(["pki", directory.appendingPathComponent("x").path, "--jws", "--digest", "sha1"]).status == 64)
    }

    /// make --jws → verify: valid against the PKI's root with every expectation met, the payload
    /// signed exactly as written, and not trusted by the default anchors.
    @Test func makeThenVerifyRoundTrip() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try PKI(in: directory)
        let json = Self.transaction(extra: #","appAccountToken":"7c1e3a52-4b1f-4a8e-9d3c-2f5b6a7e8d90""#)
        let token = try Self.make(json, pki, in: directory)

        let payload = try ReceiptTool.run(["dump", "--payload", token])
        #expect(payload.stdout == json, "the payload is signed member for member, number text kept")
        let result = try ReceiptTool.run([
            "verify", token, "--anchor", pki.root, "--bundle-id", "com.example.app", "--environment", "sandbox", "--max-age", "315360000",
            "--app-account-token", "7C1E3A52-4B1F-4A8E-9D3C-2F5B6A7E8D90", "--json",
        ])
        #expect(result.status == 0, "\(result.stdout)")
        let line = try #require(try JSONToolLines.single(result.stdout))
        #expect(line["assurance"] == .string("configuredAnchor"))
        #expect(line["validation_time"] == .string("2025-12-01T00:00:00.123Z"))
        #expect(line["purchaseDate"] == .number("1764547200000.25"))
        #expect(line["unchecked"]?.arrayValue == [.string("appAppleId"), .string("deviceVerification")])

        let untrusted = try ReceiptTool.run(["verify", token])
        #expect(untrusted.status == 1)
        #expect(untrusted.stdout.contains("  ✗ chain "))
        // Another PKI's root does not vouch for this one's leaf.
        let other = try PKI(in: directory, name: "other")
        #expect(try ReceiptTool.run(["verify", token, "--anchor", other.root]).stdout.contains("  ✗ chain "))
        // Both roots together (anchors add up): valid.
        #expect(try ReceiptTool.run(["verify", token, "--anchor", other.root, "--anchor", pki.root, "--anchor", "apple"]).status == 0)
    }

    /// A notification whose nested transaction and renewal info are given as objects: signed as
    /// nested JWS, verified in the same call, and decoded back to the objects given.
    @Test func notificationsSignTheirNestedTokens() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try PKI(in: directory)
        let transaction = Self.transaction()
        let renewal =
            #"{"originalTransactionId":"1000","autoRenewProductId":"pro.monthly","autoRenewStatus":1,"signedDate":1764547200500,"environment":"Sandbox"}"#
        let notification = """
            {"notificationType":"DID_RENEW","subtype":"BILLING_RECOVERY","notificationUUID":"0b2cf5f8-1f0e-4d4f-9a43-5b0e1c3a7d11",\
            "data":{"appAppleId":0,"bundleId":"com.example.app","environment":"Sandbox","signedTransactionInfo":\(transaction),\
            "signedRenewalInfo":\(renewal),"status":1},"version":"2.0","signedDate":1764547201000}
            """
        let token = try Self.make(notification, pki, in: directory)
        let result = try ReceiptTool.run(["verify", token, "--anchor", pki.root, "--bundle-id", "com.example.app"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains(": VALID (notification DID_RENEW (BILLING_RECOVERY))"))
        #expect(result.stdout.contains("  ✓ signedTransactionInfo verified ("))
        #expect(result.stdout.contains("  ✓ signedRenewalInfo    verified ("))
        #expect(result.stdout.contains("  ✓ nestedAgreement      2 nested tokens agree"))

        let dump = try ReceiptTool.run(["dump", "--json", token])
        let decoded = try JSONValue.parse(dump.stdout)
        #expect(decoded["data"]?["signedTransactionInfo"] == (try JSONValue.parse(transaction)))
        #expect(decoded["data"]?["signedRenewalInfo"] == (try JSONValue.parse(renewal)))

        // dump --json of signed data is a description make --jws accepts: the same payload again.
        let again = try Self.make(dump.stdout, pki, in: directory)
        #expect(try ReceiptTool.run(["dump", "--json", again]).stdout == dump.stdout)
    }

    /// A genuine notification carrying a transaction signed by another key, or one for another
    /// app: invalid, naming the nested check.
    @Test func forgedOrDisagreeingNestedTokensAreInvalid() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try PKI(in: directory)
        let forger = try PKI(in: directory, name: "forger")
        let forged = try String(contentsOfFile: Self.make(Self.transaction(), forger, in: directory), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        func notification(_ nested: String) -> String {
            #"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"5c1bb2a4-9d0e-4f61-8a52-0d3f4e5a6b7c","data":{"bundleId":"com.example.app","environment":"Sandbox","signedTransactionInfo":\#(nested)},"version":"2.0","signedDate":1764547201000}"#
        }
        let withForgery = try Self.make(notification("\"\(forged)\""), pki, in: directory)
        let result = try ReceiptTool.run(["verify", withForgery, "--anchor", pki.root])
        #expect(result.status == 1)
        let failed = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  ✗ ") }
        #expect(failed.count == 1 && failed.first?.hasPrefix("  ✗ signedTransactionInfo chain: ") == true, "\(result.stdout)")
        #expect(result.stdout.contains("  ✓ signature "), "the outer signature is genuine")

        let otherApp = try Self.make(notification(Self.transaction(bundle: "com.example.other")), pki, in: directory)
        let disagreeing = try ReceiptTool.run(["verify", otherApp, "--anchor", pki.root])
        #expect(disagreeing.status == 1)
        #expect(
            disagreeing.stdout.contains("  ✗ nestedAgreement      the signed transaction is for com.example.other"), "\(disagreeing.stdout)"
        )
        let otherEnvironment = try Self.make(notification(Self.transaction(environment: "Production")), pki, in: directory)
        #expect(try ReceiptTool.run(["verify", otherEnvironment, "--anchor", pki.root]).stdout.contains("  ✗ nestedAgreement "))
    }

    /// An app transaction bound to a device: --device-verification-id (any case) must match
    /// base64(SHA-384(nonce ‖ id)), as Apple documents.
    @Test func deviceVerification() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try PKI(in: directory)
        let nonce = "48c8b92d-ce0d-4229-bedf-e61b4f9cfc92"
        let device = "3b76a7bd-8f5b-46a4-bcb1-cce8dbd1b3cd"
        let digest = try Digest.hash(.sha384, Array((nonce + device).utf8))
        let binding = Data(digest).base64EncodedString()
        let app =
            #"{"receiptType":"Production","appAppleId":531412,"bundleId":"com.example.app","applicationVersion":"7","receiptCreationDate":1764547200000,"originalApplicationVersion":"1","originalPurchaseDate":1700000000000,"deviceVerification":"\#(binding)","deviceVerificationNonce":"\#(nonce)"}"#
        let token = try Self.make(app, pki, in: directory)
        let good = try ReceiptTool.run([
            "verify", token, "--anchor", pki.root, "--device-verification-id", device.uppercased(), "--app-apple-id", "531412",
            "--environment", "production",
        ])
        #expect(good.status == 0, "\(good.stdout)")
        #expect(good.stdout.contains(": VALID (JWS app transaction) (validated at 2025-12-01T00:00:00Z)"))
        #expect(good.stdout.contains("  ✓ deviceVerification   bound to device \(device)"))
        #expect(good.stdout.contains("  ✓ appAppleId           531412"))
        let bad = try ReceiptTool.run([
            "verify", token, "--anchor", pki.root, "--device-verification-id", "3b76a7bd-8f5b-46a4-bcb1-cce8dbd1b3ce",
        ])
        #expect(bad.status == 1)
        #expect(bad.stdout.contains("  ✗ deviceVerification   deviceVerification does not match the device"))
        let json = try ReceiptTool.run(["verify", "--json", token, "--anchor", pki.root])
        let line = try #require(try JSONToolLines.single(json.stdout))
        #expect(line["kind"] == .string("jws_app_transaction"))
        #expect(line["appAppleId"] == .number("531412"))
        #expect(line["receiptCreationDate"] == .number("1764547200000"))
    }

    /// pki --jws --xcode: a self-signed "StoreKit Testing in Xcode" certificate; what it signs
    /// verifies under --policy xcode with it as the anchor, and not under the App Store policy.
    @Test func xcodeStyleSigning() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try ReceiptTool.run(["pki", directory.path, "--jws", "--xcode"])
        #expect(made.status == 0)
        #expect(made.stdout.contains("xcode-jws.pem: CN=StoreKit Testing in Xcode"))
        let certificate = directory.appendingPathComponent("xcode-jws.pem").path
        let signedDate = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        let json =
            #"{"transactionId":"0","originalTransactionId":"0","bundleId":"com.example.app","productId":"pass.premium","signedDate":\#(signedDate),"environment":"Xcode"}"#
        let description = try Self.write(json, "xcode.json", in: directory)
        let result = try ReceiptTool.run([
            "make", description, "--jws", "--key", directory.appendingPathComponent("xcode-jws-key.pem").path, "--cert", certificate,
            "-o", directory.appendingPathComponent("xcode.jws").path,
        ])
        #expect(result.status == 0)
        #expect(result.stdout.contains("1 certificate in x5c"))
        let token = directory.appendingPathComponent("xcode.jws").path
        let xcode = try ReceiptTool.run(["verify", token, "--policy", "xcode", "--anchor", certificate, "--environment", "xcode"])
        #expect(xcode.status == 0, "\(xcode.stdout)")
        let appStore = try ReceiptTool.run(["verify", token, "--anchor", certificate])
        #expect(appStore.stdout.contains("  ✗ certificateCount "))
    }

    @Test func makeRefusesWhatItCannotSign() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try PKI(in: directory)
        let array = try Self.write("[1, 2]", "array.json", in: directory)
        let notObject = try ReceiptTool.run(["make", array, "--jws"] + pki.signing)
        #expect(notObject.status == 1)
        #expect(notObject.stderr.contains("the payload must be a JSON object"))
        let duplicate = try Self.write(#"{"bundleId":"a","bundleId":"b"}"#, "duplicate.json", in: directory)
        #expect(try ReceiptTool.run(["make", duplicate, "--jws"] + pki.signing).status == 1)
        let transaction = try Self.write(Self.transaction(), "t.json", in: directory)
        let receiptOnly = try ReceiptTool.run(["make", transaction, "--jws", "--ber"] + pki.signing)
        #expect(receiptOnly.status == 64)
        // An RSA key (a receipt PKI) cannot sign ES256.
        let rsa = directory.appendingPathComponent("rsa")
        #expect(try ReceiptTool.run(["pki", rsa.path, "--bits", "1024"]).status == 0)
        let wrongKey = try ReceiptTool.run([
            "make", transaction, "--jws", "--key", rsa.appendingPathComponent("leaf-key.pem").path, "--cert",
            rsa.appendingPathComponent("leaf.pem").path,
        ])
        #expect(wrongKey.status == 64)
        #expect(wrongKey.stderr.contains("--jws signs ES256, which needs an EC P-256 key"), "\(wrongKey.stderr)")
        #expect(wrongKey.stderr.contains("is RSA-1024"), "\(wrongKey.stderr)")
        #expect(!wrongKey.stderr.contains(".swift"), "no source path: \(wrongKey.stderr)")
        #expect(wrongKey.stdout.isEmpty)
        // A P-256 key that is not the certificate's: what it signed would not verify.
        let other = try PKI(in: directory, name: "other")
        let mismatched = try ReceiptTool.run([
            "make", transaction, "--jws", "--key", other.directory.appendingPathComponent("leaf-key.pem").path, "--cert",
            pki.directory.appendingPathComponent("leaf.pem").path,
        ])
        #expect(mismatched.status == 64)
        #expect(mismatched.stderr.contains("leaf-key.pem\" is not the key of --cert"), "\(mismatched.stderr)")
        #expect(mismatched.stdout.isEmpty)
        // Not a key at all: the reason, without a source path.
        let notKey = try ReceiptTool.run(["make", transaction, "--jws", "--key", transaction, "--cert", pki.root])
        #expect(notKey.status == 1 && notKey.stderr.contains("not a PEM private key"), "\(notKey.stderr)")
        #expect(!notKey.stderr.contains(".swift"), "no source path: \(notKey.stderr)")
    }

    /// A JWS pasted in double or single quotes, or after `Bearer `, is read by verify and dump;
    /// what is not a receipt says what signed data looks like.
    @Test func pastedTokensAreRead() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try PKI(in: directory)
        let path = try Self.make(Self.transaction(), pki, in: directory)
        let token = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        for (index, pasted) in ["\"\(token)\"\n", "'\(token)'", "Bearer \(token)\n", "  \"Bearer \(token)\"  "].enumerated() {
            let file = try Self.write(pasted, "pasted-\(index).jws", in: directory)
            let verified = try ReceiptTool.run(["verify", file, "--anchor", pki.root])
            #expect(verified.status == 0, "\(pasted.prefix(12)): \(verified.stdout)")
            #expect(verified.stdout.contains("VALID (JWS transaction)"))
            let dumped = try ReceiptTool.run(["dump", file])
            #expect(dumped.status == 0 && dumped.stdout.hasPrefix("Signed data (compact JWS"), "\(dumped.stdout)\(dumped.stderr)")
        }
        let line = try ReceiptTool.run(["verify", "-", "--anchor", pki.root], stdin: "\"\(token)\"\n")
        #expect(line.status == 0, "\(line.stdout)")
        // Quotes around something else are not taken off, and the message names signed data.
        let quoted = try Self.write("\"hello\"", "quoted.txt", in: directory)
        let unreadable = try ReceiptTool.run(["verify", quoted])
        #expect(unreadable.status == 1)
        #expect(unreadable.stdout.contains("App Store signed data is a JWS, text starting eyJ"), "\(unreadable.stdout)")
    }

    /// Signed data whose payload is of no kind `verify` checks: unreadable, saying so.
    @Test func unknownPayloadKindsAreUnreadable() throws {
        let directory = try JWSToolHelpers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try PKI(in: directory)
        let token = try Self.make(#"{"hello":"world"}"#, pki, in: directory)
        let result = try ReceiptTool.run(["verify", token, "--anchor", pki.root])
        #expect(result.status == 1)
        #expect(result.stdout.contains(": UNREADABLE (signed data whose payload is JSON of no App Store payload kind"))
    }
}
