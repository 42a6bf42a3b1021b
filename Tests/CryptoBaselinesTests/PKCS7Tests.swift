import CryptoBaselines
import Foundation
import Internals
import ReceiptCrypto
import TestSupport
import Testing

@Suite("PKCS#7 through OpenSSL")
struct PKCS7Tests {
    @Test("The real sandbox receipt verifies against Apple's root at its creation date")
    func realReceipt() throws {
        let receipt = try Fixtures.sandboxReceipt()
        let root = try Fixtures.appleRoot()
        let outcome = OpenSSLPKCS7Verifier.verify(pkcs7: receipt, anchors: [root], at: Fixtures.receiptCreationDate)
        #expect(outcome.isValid, "\(outcome.failureReason ?? "")")
        let content = try #require(outcome.content)
        #expect(content.count == 1344)
        #expect(content.prefix(4) == [0x31, 0x82, 0x05, 0x3C])
        #expect(outcome.failureReason == nil)

        // Later, the leaf has expired: PKCS7_verify must say so.
        let late = OpenSSLPKCS7Verifier.verify(pkcs7: receipt, anchors: [root], at: utc(2026, 11, 29))
        #expect(!late.isValid)
        #expect(late.content == nil)
        #expect(late.failureReason?.contains("expired") == true)

        // Another anchor: invalid.
        let testRoot = try FixedTestPKI.shared().root
        #expect(!OpenSSLPKCS7Verifier.verify(pkcs7: receipt, anchors: [testRoot], at: Fixtures.receiptCreationDate).isValid)
        // No anchors: invalid.
        #expect(!OpenSSLPKCS7Verifier.verify(pkcs7: receipt, anchors: [], at: Fixtures.receiptCreationDate).isValid)
        // The WWDR intermediate as anchor: invalid (no partial chains).
        let intermediate = try Fixtures.appleWWDRG5()
        #expect(!OpenSSLPKCS7Verifier.verify(pkcs7: receipt, anchors: [intermediate], at: Fixtures.receiptCreationDate).isValid)
    }

    @Test("A modified receipt payload no longer verifies")
    func tamperedReceipt() throws {
        var receipt = try Fixtures.sandboxReceipt()
        let root = try Fixtures.appleRoot()
        // Byte 200 lies inside the payload OCTET STRING (offsets 66..<1410).
        receipt[200] ^= 0x01
        let outcome = OpenSSLPKCS7Verifier.verify(pkcs7: receipt, anchors: [root], at: Fixtures.receiptCreationDate)
        #expect(!outcome.isValid)
        #expect(outcome.failureReason?.isEmpty == false)
    }

    @Test("RMStore-style parse counts the sandbox receipt's 2 in-app purchases, and verifies first when asked")
    func rmstoreStyleOnRealReceipt() throws {
        let receipt = try Fixtures.sandboxReceipt()
        let root = try Fixtures.appleRoot()
        #expect(OpenSSLBaselines.rmstoreStyleParse(receipt) == 2)
        #expect(OpenSSLBaselines.rmstoreStyleVerifyAndParse(receipt, anchor: root, at: Fixtures.receiptCreationDate) == 2)
        #expect(OpenSSLBaselines.rmstoreStyleVerifyAndParse(receipt, anchor: root, at: utc(2026, 11, 29)) == nil)
        #expect(
            OpenSSLBaselines.rmstoreStyleVerifyAndParse(receipt, anchor: try FixedTestPKI.shared().root, at: Fixtures.receiptCreationDate)
                == nil
        )

        // The fields the walk materialises match the receipt.
        let payload = try #require(
            OpenSSLPKCS7Verifier.verify(pkcs7: receipt, anchors: [root], at: Fixtures.receiptCreationDate).content)
        let parsed = try #require(payload.withUnsafeBufferPointer { OpenSSLBaselines.parseReceipt($0) })
        #expect(parsed.bundleIdentifier == "dev.bonzer.weeka.app")
        #expect(parsed.appVersion == "2")
        #expect(parsed.originalAppVersion == "1.0")
        #expect(parsed.creationDate == "2025-12-26T18:39:47Z")
        #expect(parsed.receiptHash?.count == 20)
        #expect(parsed.inAppPurchases.map(\.transactionIdentifier) == ["2000001092134138", "2000001092148094"])
        #expect(parsed.inAppPurchases.allSatisfy { $0.productIdentifier == "dev.bonzer.weeka.app.subscription.pro.annual" })
        #expect(parsed.inAppPurchases.allSatisfy { $0.quantity == 1 })
        #expect(parsed.inAppPurchases.map(\.webOrderLineItemID) == [2_000_000_123_357_229, 2_000_000_123_357_230])
    }

    @Test(
        "CMSSigner output verifies with OpenSSL against its root and not against another",
        arguments: [
            (DigestAlgorithm.sha1, false), (.sha256, false), (.sha1, true), (.sha256, true),
        ])
    func signerRoundTrip(digest: DigestAlgorithm, signedAttributes: Bool) throws {
        let pki = try FixedTestPKI.shared()
        let content = Array("payload bytes \u{0}\r\n kept verbatim".utf8)
        let signed = try CMSSigner.sign(
            content: content, signer: pki.leaf, key: pki.leafKey, extraCertificates: [pki.intermediate, pki.root],
            digest: digest, signedAttributes: signedAttributes)
        #expect(signed.first == 0x30)
        let outcome = OpenSSLPKCS7Verifier.verify(pkcs7: signed, anchors: [pki.root], at: FixedTestPKI.inside)
        #expect(outcome.isValid, "\(outcome.failureReason ?? "")")
        #expect(outcome.content == content)
        // The digest algorithm OID is in the message; signed attributes add the messageDigest OID.
        #expect(contains(signed, try oidBytes(digest)))
        #expect(contains(signed, [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x04]) == signedAttributes)

        let otherKey = try PrivateKey.generateRSA(bits: 2048)
        let otherRoot = try FixedTestPKI.makeRoot(key: otherKey, subject: [("CN", "Other Root")])
        let wrong = OpenSSLPKCS7Verifier.verify(pkcs7: signed, anchors: [otherRoot], at: FixedTestPKI.inside)
        #expect(!wrong.isValid)
        #expect(wrong.content == nil)
        // The leaf is outside its validity in 2030.
        #expect(!OpenSSLPKCS7Verifier.verify(pkcs7: signed, anchors: [pki.root], at: utc(2030, 1, 1)).isValid)
    }

    @Test("CMSSigner signs with P-256 keys, and refuses MD5 and foreign keys")
    func signerVariants() throws {
        let pki = try FixedTestPKI.shared()
        let ecKey = try PrivateKey.generateP256()
        var builder = CertificateBuilder(
            subject: [("CN", "EC signer")], serialNumber: 77, notBefore: utc(2024, 1, 1), notAfter: utc(2027, 1, 1),
            publicKey: try ecKey.publicKey)
        builder.basicConstraints = .endEntity
        let ecLeaf = try builder.issued(by: pki.intermediate, signingKey: pki.intermediateKey)
        let signed = try CMSSigner.sign(
            content: [1, 2, 3], signer: ecLeaf, key: ecKey, extraCertificates: [pki.intermediate],
            digest: .sha256, signedAttributes: true)
        let outcome = OpenSSLPKCS7Verifier.verify(pkcs7: signed, anchors: [pki.root], at: FixedTestPKI.inside)
        #expect(outcome.isValid, "\(outcome.failureReason ?? "")")
        #expect(outcome.content == [1, 2, 3])
        // Missing intermediate: the chain cannot be built.
        let lonely = try CMSSigner.sign(
            content: [1, 2, 3], signer: ecLeaf, key: ecKey, extraCertificates: [], digest: .sha256, signedAttributes: false)
        #expect(!OpenSSLPKCS7Verifier.verify(pkcs7: lonely, anchors: [pki.root], at: FixedTestPKI.inside).isValid)

        let md5 = #expect(throws: CryptoError.self) {
            try CMSSigner.sign(content: [1], signer: pki.leaf, key: pki.leafKey, digest: .md5, signedAttributes: false)
        }
        #expect(md5?.code == .unsupportedAlgorithm)
        let mismatch = #expect(throws: CryptoError.self) {
            try CMSSigner.sign(content: [1], signer: pki.leaf, key: ecKey, digest: .sha256, signedAttributes: false)
        }
        #expect(mismatch?.code == .keyMismatch)
    }

    @Test("Purpose any: a signer whose extended key usage is not S/MIME still verifies")
    func purposeAny() throws {
        let pki = try FixedTestPKI.shared()
        let key = try PrivateKey.generateRSA(bits: 2048)
        var builder = CertificateBuilder(
            subject: [("CN", "TLS-only signer")], serialNumber: 31, notBefore: utc(2024, 1, 1), notAfter: utc(2027, 1, 1),
            publicKey: try key.publicKey)
        builder.basicConstraints = .endEntity
        builder.extendedKeyUsageOIDs = [oid("1.3.6.1.5.5.7.3.1")]  // serverAuth only: fails OpenSSL's smime_sign purpose
        let signer = try builder.issued(by: pki.intermediate, signingKey: pki.intermediateKey)
        let signed = try CMSSigner.sign(
            content: [9, 9], signer: signer, key: key, extraCertificates: [pki.intermediate],
            digest: .sha256, signedAttributes: true)
        let outcome = OpenSSLPKCS7Verifier.verify(pkcs7: signed, anchors: [pki.root], at: FixedTestPKI.inside)
        #expect(outcome.isValid, "\(outcome.failureReason ?? "")")
        #expect(TrustStore(anchors: [pki.root]).validate(leaf: signer, intermediates: [pki.intermediate], at: FixedTestPKI.inside).isValid)
    }

    @Test("The real receipt payload re-signed by the test PKI parses and verifies RMStore-style")
    func resignedReceipt() throws {
        let pki = try FixedTestPKI.shared()
        let receipt = try Fixtures.sandboxReceipt()
        let payload = try #require(
            OpenSSLPKCS7Verifier.verify(
                pkcs7: receipt, anchors: [try Fixtures.appleRoot()], at: Fixtures.receiptCreationDate
            ).content)
        for digest in [DigestAlgorithm.sha1, .sha256] {
            let signed = try CMSSigner.sign(
                content: payload, signer: pki.leaf, key: pki.leafKey,
                extraCertificates: [pki.intermediate, pki.root], digest: digest, signedAttributes: false)
            #expect(OpenSSLBaselines.rmstoreStyleParse(signed) == 2)
            #expect(OpenSSLBaselines.rmstoreStyleVerifyAndParse(signed, anchor: pki.root, at: FixedTestPKI.inside) == 2)
            #expect(OpenSSLBaselines.rmstoreStyleVerifyAndParse(signed, anchor: try Fixtures.appleRoot(), at: FixedTestPKI.inside) == nil)
        }
    }

    /// Offsets of the payload OCTET STRING (header and contents) in receipt-sandbox-g5.der.
    static let payloadRange = 58..<1410
    /// Offsets of the embedded copy of Apple's root certificate.
    static let embeddedRootRange = 4009..<5224

    @Test("OpenSSL quirk: PKCS7_verify does not bind the unsigned parts of a receipt")
    func unsignedFields() throws {
        let receipt = try Fixtures.sandboxReceipt()
        let root = try Fixtures.appleRoot()
        let date = Fixtures.receiptCreationDate
        func verifies(flipping offset: Int) -> Bool {
            var mutated = receipt
            mutated[offset] ^= 0x01
            return OpenSSLPKCS7Verifier.verify(pkcs7: mutated, anchors: [root], at: date).isValid
        }
        // Every byte of the payload is covered by the signature.
        #expect(Self.payloadRange.filter { $0 >= 62 }.allSatisfy { !verifies(flipping: $0) })
        // The signature value itself (offset 5409...) and the signer's serial number are bound.
        #expect(!verifies(flipping: 5409))
        #expect(!verifies(flipping: 5370))
        // Not bound, because the receipt has no signed attributes or because the anchor replaces it:
        // the SignedData version (offset 25), the eContentType OID (49...57), and the embedded root
        // certificate's serial number (offset 4024).
        #expect(verifies(flipping: 25))
        #expect(verifies(flipping: 53))
        #expect(verifies(flipping: 4024))
        // OpenSSL 3.0 also accepts an unknown SignerInfo digestAlgorithm OID (offset 5387, last arc of
        // sha256): the unknown OID's NID_undef matches a "broken client" workaround in
        // PKCS7_signatureVerify. The digest actually used is still SHA-256 from the outer set, so the
        // content stays authenticated, but a Swift verifier must not copy this leniency.
        #expect(verifies(flipping: 5387))
    }

    @Test("Garbage, empty and truncated inputs fail without crashing")
    func hostileInput() throws {
        let receipt = try Fixtures.sandboxReceipt()
        let root = try Fixtures.appleRoot()
        let date = Fixtures.receiptCreationDate
        #expect(!OpenSSLPKCS7Verifier.verify(pkcs7: [], anchors: [root], at: date).isValid)
        #expect(OpenSSLBaselines.rmstoreStyleParse([]) == nil)
        #expect(OpenSSLBaselines.rmstoreStyleVerifyAndParse([], anchor: root, at: date) == nil)
        let trailing = OpenSSLPKCS7Verifier.verify(pkcs7: receipt + [0], anchors: [root], at: date)
        #expect(!trailing.isValid)
        #expect(trailing.failureReason?.contains("trailingBytes") == true)

        for length in stride(from: 1, to: receipt.count, by: 17) {
            let prefix = Array(receipt.prefix(length))
            #expect(!OpenSSLPKCS7Verifier.verify(pkcs7: prefix, anchors: [root], at: date).isValid)
            #expect(OpenSSLBaselines.rmstoreStyleParse(prefix) == nil)
        }
        var random = SplitMix64(seed: 7)
        for _ in 0..<300 {
            let garbage = random.bytes(Int.random(in: 1...400, using: &random))
            #expect(!OpenSSLPKCS7Verifier.verify(pkcs7: garbage, anchors: [root], at: date).isValid)
            #expect(OpenSSLBaselines.rmstoreStyleParse(garbage) == nil)
        }
        // Flipped bytes anywhere in the real receipt never crash. Some unsigned bytes may change
        // without invalidating the signature (see `unsignedFields`), but a valid outcome always
        // carries the original content, and a flip inside the payload never verifies.
        let original = try #require(OpenSSLPKCS7Verifier.verify(pkcs7: receipt, anchors: [root], at: date).content)
        for _ in 0..<200 {
            var mutated = receipt
            let offset = Int.random(in: 0..<mutated.count, using: &random)
            mutated[offset] ^= UInt8.random(in: 1...255, using: &random)
            let outcome = OpenSSLPKCS7Verifier.verify(pkcs7: mutated, anchors: [root], at: date)
            if outcome.isValid { #expect(outcome.content == original) }
            if Self.payloadRange.contains(offset) { #expect(!outcome.isValid) }
            if let count = OpenSSLBaselines.rmstoreStyleParse(mutated) { #expect((0...3).contains(count)) }
        }
    }

    @Test("The attribute walk survives hostile payloads inside a validly signed envelope")
    func hostilePayloads() throws {
        let pki = try FixedTestPKI.shared()
        let payload = try #require(
            OpenSSLPKCS7Verifier.verify(
                pkcs7: try Fixtures.sandboxReceipt(), anchors: [try Fixtures.appleRoot()], at: Fixtures.receiptCreationDate
            ).content)
        func parse(_ bytes: [UInt8]) -> Int? { bytes.withUnsafeBufferPointer { OpenSSLBaselines.parseReceipt($0)?.inAppPurchases.count } }
        #expect(parse(payload) == 2)
        // Truncations of the payload: nil or a smaller count, never a crash.
        for length in 0..<payload.count {
            if let count = parse(Array(payload.prefix(length))) { #expect(count <= 2) }
        }
        var random = SplitMix64(seed: 99)
        for _ in 0..<2000 {
            var mutated = payload
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                mutated[Int.random(in: 0..<mutated.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            if let count = parse(mutated) { #expect(count <= 3) }
        }
        // A few specific shapes: empty SET, a SET with an attribute whose value is not an OCTET STRING,
        // an in-app attribute holding garbage, an indefinite-length SET, a length running past the end.
        #expect(parse([0x31, 0x00]) == 0)
        #expect(parse([0x31, 0x09, 0x30, 0x07, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01, 0x05]) == nil)
        #expect(parse([0x31, 0x0B, 0x30, 0x09, 0x02, 0x01, 0x11, 0x02, 0x01, 0x01, 0x04, 0x01, 0xFF]) == nil)
        #expect(parse([0x31, 0x80, 0x00, 0x00]) == nil)
        #expect(parse([0x31, 0x84, 0x7F, 0xFF, 0xFF, 0xFF, 0x30]) == nil)
        // Signed by the test PKI, the garbage payload goes through the whole path.
        let signed = try CMSSigner.sign(
            content: random.bytes(64), signer: pki.leaf, key: pki.leafKey, digest: .sha256, signedAttributes: false)
        #expect(OpenSSLBaselines.rmstoreStyleParse(signed) == nil)
        #expect(OpenSSLBaselines.rmstoreStyleVerifyAndParse(signed, anchor: pki.root, at: FixedTestPKI.inside) == nil)
    }
}

private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
}

private func oidBytes(_ digest: DigestAlgorithm) throws -> [UInt8] {
    switch digest {
    case .sha1: [0x06, 0x05, 0x2B, 0x0E, 0x03, 0x02, 0x1A]
    case .sha256: [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
    default: throw CryptoError(code: .invalidArgument, reason: "no fixture for \(digest)")
    }
}
