import Foundation
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import TestSupport
import Testing

@Suite struct LegacyReceiptVerifierTests {
    func appleVerifier() throws -> TransactionReceiptVerifier {
        TransactionReceiptVerifier(intermediate: try Fixtures.iTunesStoreCA(), anchors: [try Fixtures.appleRoot()])
    }

    /// A receipt with the same signature blob but different purchase-info bytes.
    func replacingPurchaseInfo(_ receipt: TransactionReceipt, with data: [UInt8]) throws -> TransactionReceipt {
        try TransactionReceipt(signatureBlob: receipt.signatureBlob, purchaseInfoData: data, environment: receipt.environment)
    }

    @Test(arguments: Fixtures.legacyFiles)
    func realReceiptVerifiesAtItsPurchaseDate(_ file: String) throws {
        let entry = try #require(Fixtures.legacyReceipts.first { $0.file == file })
        let verifier = try appleVerifier()
        let expectations = TransactionReceiptExpectations(
            bundleIdentifier: entry.bid, bundleVersion: entry.bvrs, productIdentifiers: [entry.product],
            allowedEnvironments: [.sandbox])
        let verdict = verifier.verify(try Fixtures.bytes(file), expecting: expectations)
        #expect(verdict.isValid, "\(verdict.failures)")
        #expect(verdict.failures.isEmpty)
        #expect(verdict.unchecked.isEmpty)
        #expect(verdict.assurance == .apple)
        #expect(verdict.signature == SignatureSummary(algorithm: .rsaPKCS1v15(.sha1), layoutVersion: 2))
        let receipt = try #require(verdict.receipt)
        #expect(verdict.validationTime == receipt.purchaseInfo.purchaseDate)
        let chain = try #require(verdict.chain)
        #expect(chain.count == 3)
        #expect(chain[0].subject.commonName == "PurchaseReceiptCertificate")
        #expect(chain[1] == (try Fixtures.iTunesStoreCA()))
        #expect(chain[2] == (try Fixtures.appleRoot()))
        #expect(
            verdict.checks.map(\.name) == [
                .parse, .trustAnchors, .signatureBlob, .signatureVersion, .leafCertificate, .signature, .validationTime, .chain,
                .pinnedAnchor, .chainLength, .pinnedIntermediate, .leafMarker, .keyUsage, .basicConstraints, .bundleIdentifier,
                .bundleVersion, .productIdentifier, .environment,
            ])
        // Without expectations it is still valid; the expectations are listed as unchecked.
        let plain = verifier.verify(receipt)
        #expect(plain.isValid)
        #expect(Set(plain.unchecked) == [.bundleIdentifier, .bundleVersion, .productIdentifier, .environment])
    }

    /// One changed byte of purchase-info breaks the signature, wherever it is.
    @Test(arguments: Fixtures.legacyFiles)
    func oneChangedPurchaseInfoByteFails(_ file: String) throws {
        let verifier = try appleVerifier()
        let receipt = try TransactionReceipt(Fixtures.bytes(file))
        // A change that keeps the purchase-info well-formed: the quantity "1" becomes "2".
        let quantity = Array("\"quantity\" = \"1\"".utf8)
        let data = receipt.purchaseInfoData
        let start = try #require((0...(data.count - quantity.count)).first { Array(data[$0..<($0 + quantity.count)]) == quantity })
        var changed = data
        changed[start + quantity.count - 2] = UInt8(ascii: "2")
        let tampered = try replacingPurchaseInfo(receipt, with: changed)
        #expect(tampered.purchaseInfo.quantity == 2)
        let verdict = verifier.verify(tampered)
        #expect(!verdict.isValid)
        #expect(verdict.firstFailure?.name == .signature)
        // Every single-byte change anywhere is rejected (by the parser or by the signature).
        var signatureFailures = 0
        for index in data.indices {
            var mutated = data
            mutated[index] ^= 0x01
            guard let candidate = try? replacingPurchaseInfo(receipt, with: mutated) else { continue }
            let result = verifier.verify(candidate)
            #expect(!result.isValid, "byte \(index) changed and the receipt still verified")
            if result.firstFailure?.name == .signature { signatureFailures += 1 }
        }
        #expect(signatureFailures > data.count / 2)
        // The untouched receipt rebuilt the same way still verifies (the rebuild itself is sound).
        #expect(verifier.verify(try replacingPurchaseInfo(receipt, with: data)).isValid)
    }

    @Test(arguments: Fixtures.legacyFiles)
    func truncatedSignatureBlobFails(_ file: String) throws {
        let verifier = try appleVerifier()
        let receipt = try TransactionReceipt(Fixtures.bytes(file))
        let blob = try #require(receipt.signatureBlob)
        for length in [0, 1, 100, 129, 132, 133, 500, blob.count - 1] {
            let truncated = try TransactionReceipt(
                signatureBlob: Array(blob.prefix(length)), purchaseInfoData: receipt.purchaseInfoData)
            let verdict = verifier.verify(truncated)
            #expect(!verdict.isValid)
            #expect(verdict.firstFailure?.name == .signatureBlob, "length \(length)")
        }
        // A truncated base64 text of the blob in the receipt text itself also fails.
        let text = receipt.textString
        let signatureValue = try #require(receipt.entries.first { $0.key == "signature" }?.value.stringValue)
        let shortened = text.replacingOccurrences(of: signatureValue, with: String(signatureValue.dropLast(8)))
        #expect(!verifier.verify(Array(shortened.utf8)).isValid)
    }

    @Test(arguments: Fixtures.legacyFiles)
    func wrongAnchorsFail(_ file: String) throws {
        let bytes = try Fixtures.bytes(file)
        let wrongRoot = TransactionReceiptVerifier(intermediate: try Fixtures.iTunesStoreCA(), anchors: [try Fixtures.wrongAnchor()])
        let verdict = wrongRoot.verify(bytes)
        #expect(!verdict.isValid)
        #expect(verdict.firstFailure?.name == .chain)
        #expect(verdict.check(.signature)?.passed == true)
        // The wrong certificate pinned as the intermediate (an Apple WWDR CA).
        let wrongIntermediate = TransactionReceiptVerifier(
            intermediate: try Fixtures.certificate("AppleWWDRCA-2008-serial19.der"), anchors: [try Fixtures.appleRoot()])
        #expect(wrongIntermediate.verify(bytes).firstFailure?.name == .chain)
        // The root pinned as the intermediate and the intermediate as the only anchor.
        let swapped = TransactionReceiptVerifier(intermediate: try Fixtures.appleRoot(), anchors: [try Fixtures.iTunesStoreCA()])
        #expect(!swapped.verify(bytes).isValid)
        // No anchors at all.
        let empty = TransactionReceiptVerifier(intermediate: try Fixtures.iTunesStoreCA(), anchors: [])
        #expect(empty.verify(bytes).firstFailure?.name == .trustAnchors)
    }

    @Test func validationTimeIsExplicit() throws {
        let verifier = try appleVerifier()
        let bytes = try Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64")
        // Today the leaf (2009-2014) and the iTunes Store CA (to 2016) have expired.
        let today = verifier.verify(bytes, at: .fixed(Date(timeIntervalSince1970: 1_780_000_000)))
        #expect(today.firstFailure?.name == .chain)
        #expect(verifier.verify(bytes, at: .now).firstFailure?.name == .chain)
        // Before the leaf existed.
        #expect(verifier.verify(bytes, at: .fixed(Date(timeIntervalSince1970: 1_200_000_000))).firstFailure?.name == .chain)
        // Any instant inside every certificate's validity works.
        let inside = verifier.verify(bytes, at: .fixed(Date(timeIntervalSince1970: 1_300_000_000)))
        #expect(inside.isValid)
        #expect(inside.validationTime == Date(timeIntervalSince1970: 1_300_000_000))
        // A receipt without a purchase date cannot be validated "at its creation date".
        let pki = try TestPKI.transactionReceiptPKI()
        let undated = try pki.transactionReceiptSigner().sign(PurchaseInfo(entries: [.init(key: "transaction-id", value: .string("1"))]))
        let test = TransactionReceiptVerifier(intermediate: pki.intermediate, anchors: [pki.root])
        #expect(test.verify(undated).firstFailure?.name == .validationTime)
        #expect(test.verify(undated, at: .fixed(Date(timeIntervalSince1970: 1_700_000_000))).isValid)
    }

    @Test func expectationsAreChecked() throws {
        let verifier = try appleVerifier()
        let bytes = try Fixtures.bytes("legacy/itunes-iap-legacy-transaction-receipt.b64")
        func failed(_ expectations: TransactionReceiptExpectations) -> [VerificationCheck.Name] {
            verifier.verify(bytes, expecting: expectations).failures.map(\.name)
        }
        #expect(failed(TransactionReceiptExpectations(bundleIdentifier: "com.vanillabreeze.other")) == [.bundleIdentifier])
        #expect(failed(TransactionReceiptExpectations(bundleVersion: "1.1")) == [.bundleVersion])
        #expect(failed(TransactionReceiptExpectations(productIdentifiers: ["BattleGold100"])) == [.productIdentifier])
        #expect(failed(TransactionReceiptExpectations(allowedEnvironments: [.production])) == [.environment])
        #expect(
            failed(
                TransactionReceiptExpectations(
                    bundleIdentifier: "x", bundleVersion: "y", productIdentifiers: [], allowedEnvironments: [])
            ).count == 4)
        #expect(failed(TransactionReceiptExpectations(productIdentifiers: ["BattleGold50", "BattleGold100"])).isEmpty)
    }

    /// `environment` sits outside the signature: rewriting it keeps the signature valid. The
    /// environment check exists, but it cannot detect forgery; the verdict says so.
    @Test func environmentIsNotSigned() throws {
        let verifier = try appleVerifier()
        let receipt = try TransactionReceipt(Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64"))
        let relabelled = try TransactionReceipt(
            signatureBlob: receipt.signatureBlob, purchaseInfoData: receipt.purchaseInfoData, environment: "Production")
        let verdict = verifier.verify(relabelled, expecting: TransactionReceiptExpectations(allowedEnvironments: [.production]))
        #expect(verdict.isValid)
        #expect(verdict.check(.environment)?.reason.contains("not covered by the signature") == true)
    }

    @Test func unsignedMockFails() throws {
        let verifier = try appleVerifier()
        let verdict = verifier.verify(try Fixtures.bytes(Fixtures.mockLegacyReceipt))
        #expect(!verdict.isValid)
        #expect(verdict.receipt?.purchaseInfo.transactionIdentifier == "33993399")
        #expect(verdict.firstFailure?.name == .signatureBlob)
        #expect(verdict.firstFailure?.reason.contains("no \"signature\"") == true)
    }

    @Test func garbageIsAParseFailure() throws {
        let verifier = try appleVerifier()
        for input in [[], Array("not a receipt".utf8), try Fixtures.bytes("base64encodedreceiptsample1.der")] {
            let verdict = verifier.verify(input)
            #expect(!verdict.isValid)
            #expect(verdict.checks.map(\.name) == [.parse])
        }
    }

    /// Receipts signed by a test PKI shaped like Apple's: version 2 verifies; a leaf without the
    /// marker, a certificate that does not match the signature, and a wrong-size key fail.
    @Test func testPKIVersion2() throws {
        let pki = try TestPKI.transactionReceiptPKI()
        let verifier = TransactionReceiptVerifier(intermediate: pki.intermediate, anchors: [pki.root])
        let info = try PurchaseInfo(entries: [
            .init(key: "transaction-id", value: .string("42")), .init(key: "purchase-date-ms", value: .string("1700000000000")),
            .init(key: "bid", value: .string("com.example.app")),
        ])
        let signed = try pki.transactionReceiptSigner().sign(info, environment: nil)
        let verdict = verifier.verify(signed)
        #expect(verdict.isValid, "\(verdict.failures)")
        #expect(verdict.assurance == .configuredAnchor)
        #expect(signed.environmentKind == .production)

        let unmarked = try TestPKI.transactionReceiptPKI(leafMarker: false)
        let unmarkedVerdict = TransactionReceiptVerifier(intermediate: unmarked.intermediate, anchors: [unmarked.root])
            .verify(try unmarked.transactionReceiptSigner().sign(info))
        #expect(unmarkedVerdict.firstFailure?.name == .leafMarker)

        // The blob's certificate belongs to another key: the signature fails.
        let other = try TestPKI.transactionReceiptPKI()
        var mismatched = try pki.transactionReceiptSigner()
        mismatched.certificate = other.leaf
        #expect(verifier.verify(try mismatched.sign(info)).firstFailure?.name == .signature)

        // A 2048-bit leaf cannot produce a version 2 blob, and a blob claiming so is rejected.
        let big = try TestPKI.transactionReceiptPKI(keyBits: 2048)
        var wrongSize = try big.transactionReceiptSigner()
        wrongSize.version = 2
        #expect(throws: ReceiptSigningError.self) { _ = try wrongSize.sign(info) }
        let forged = TransactionReceiptSignature.encode(
            version: 2, signature: [UInt8](repeating: 1, count: 128), certificate: big.leaf.derEncoded)
        let forgedReceipt = try TransactionReceipt(signatureBlob: forged, purchaseInfoData: info.data)
        #expect(
            TransactionReceiptVerifier(intermediate: big.intermediate, anchors: [big.root]).verify(forgedReceipt).firstFailure?.name
                == .leafCertificate)
        // A blob whose certificate bytes are garbage.
        let garbage = TransactionReceiptSignature.encode(
            version: 2, signature: [UInt8](repeating: 1, count: 128), certificate: [0x30, 0x03, 1, 2, 3])
        #expect(
            verifier.verify(try TransactionReceipt(signatureBlob: garbage, purchaseInfoData: info.data)).firstFailure?.name
                == .leafCertificate)
    }

    /// Version 3 (256-byte signature, RSA 2048): SHA-1 over version ‖ purchase-info, leaf marked
    /// 1.2.840.113635.100.6.11.1, chained through its own pinned intermediate (Apple's WWDR CA 2013
    /// for real receipts). It verifies under the version-3 policy and nowhere else.
    @Test func version3VerifiesUnderItsOwnPolicy() throws {
        let pki = try TestPKI.transactionReceiptPKI(keyBits: 2048)
        let info = try PurchaseInfo(entries: [
            .init(key: "transaction-id", value: .string("43")), .init(key: "purchase-date-ms", value: .string("1513000000000")),
        ])
        let receipt = try pki.transactionReceiptSigner().sign(info)
        #expect(try receipt.signature().version == 3)
        #expect(try receipt.signature().signature.count == 256)

        let verifier = TransactionReceiptVerifier(
            intermediate: pki.intermediate, version3Intermediate: pki.intermediate, anchors: [pki.root])
        let verdict = verifier.verify(receipt)
        #expect(verdict.isValid, "\(verdict.failures)")
        #expect(verdict.signature == SignatureSummary(algorithm: .rsaPKCS1v15(.sha1), layoutVersion: 3))
        #expect(verdict.check(.leafMarker)?.passed == true)
        #expect(verdict.chain?.count == 3)

        // A flipped byte of purchase-info.
        var changed = receipt.purchaseInfoData
        changed[changed.count / 2] ^= 0x01
        let flipped = try TransactionReceipt(signatureBlob: receipt.signatureBlob, purchaseInfoData: changed)
        #expect(verifier.verify(flipped).firstFailure?.name == .signature)
        // SHA-256 is not what Apple used.
        let sha256 = try pki.transactionReceiptSigner(digest: .sha256).sign(info)
        #expect(verifier.verify(sha256).firstFailure?.name == .signature)
        // No version-3 policy: refused at the version.
        let version2Only = TransactionReceiptVerifier(intermediate: pki.intermediate, anchors: [pki.root])
        #expect(version2Only.verify(receipt).firstFailure?.name == .signatureVersion)
        // The version-2 chain (an iTunes-Store-CA-shaped PKI) pinned for version 3: the chain does not build.
        let version2PKI = try TestPKI.transactionReceiptPKI()
        let wrongChain = TransactionReceiptVerifier(
            intermediate: version2PKI.intermediate, version3Intermediate: version2PKI.intermediate, anchors: [pki.root])
        #expect(wrongChain.verify(receipt).firstFailure?.name == .chain)
        // Another anchor.
        let other = try TestPKI.transactionReceiptPKI(keyBits: 2048)
        let wrongAnchor = TransactionReceiptVerifier(
            intermediate: pki.intermediate, version3Intermediate: pki.intermediate, anchors: [other.root])
        #expect(wrongAnchor.verify(receipt).firstFailure?.name == .chain)
        // A date outside the leaf's validity.
        let late = verifier.verify(receipt, at: .fixed(pki.leaf.notAfter.addingTimeInterval(1)))
        #expect(late.firstFailure?.name == .chain)
        #expect(late.check(.chain)?.reason.contains("expired") == true)
        // A version-3 leaf marked like a version-2 one fails the version-3 marker policy.
        let unmarked = try TestPKI.transactionReceiptPKI(keyBits: 2048, leafMarker: false)
        let unmarkedVerdict = TransactionReceiptVerifier(
            intermediate: unmarked.intermediate, version3Intermediate: unmarked.intermediate, anchors: [unmarked.root]
        ).verify(try unmarked.transactionReceiptSigner().sign(info))
        #expect(unmarkedVerdict.firstFailure?.name == .leafMarker)
    }
}
