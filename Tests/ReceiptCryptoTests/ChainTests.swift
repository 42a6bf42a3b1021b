import ASN1
import Foundation
import ReceiptCrypto
import TestSupport
import Testing

@Suite("Certificate builder and chain validation")
struct ChainTests {
    @Test("The builder writes the requested fields and extensions")
    func builtFields() throws {
        let pki = try FixedTestPKI.shared()
        #expect(pki.root.isSelfSigned)
        #expect(pki.root.isCA)
        #expect(pki.root.pathLengthConstraint == nil)
        #expect(pki.root.keyUsage == [.keyCertSign, .cRLSign])
        #expect(pki.root.isExtensionCritical(oid: oid("2.5.29.15")) == true)
        #expect(pki.root.subject.rfc2253String == "CN=RMStore Test Root CA,OU=Test Certification Authority,O=RMStore Test,C=US")
        #expect(pki.root.serialNumber == [0x01])
        #expect(pki.root.version == 3)
        #expect(pki.root.notBefore == utc(2020, 1, 1))
        #expect(pki.root.notAfter == utc(2040, 1, 1))
        #expect(pki.intermediate.issuer == pki.root.subject)
        #expect(pki.intermediate.pathLengthConstraint == 0)
        #expect(pki.intermediate.extensionValue(oid: AppleOID.wwdrIntermediate) == [0x05, 0x00])
        #expect(pki.intermediate.isExtensionCritical(oid: AppleOID.wwdrIntermediate) == false)
        #expect(pki.leaf.extensionValue(oid: AppleOID.receiptSigningLeaf) == [0x05, 0x00])
        #expect(!pki.leaf.isCA)
        #expect(pki.leaf.isExtensionCritical(oid: oid("2.5.29.19")) == true)
        #expect(pki.leaf.keyUsage == [.digitalSignature])
        #expect(pki.leaf.signatureAlgorithmOID == oid("1.2.840.113549.1.1.11"))
        #expect(try pki.leaf.publicKey == pki.leafKey.publicKey)
        // subjectKeyIdentifier of the issuer = authorityKeyIdentifier of the subject.
        let rootSKI = try #require(pki.root.extensionValue(oid: oid("2.5.29.14")))
        let intermediateAKI = try #require(pki.intermediate.extensionValue(oid: oid("2.5.29.35")))
        #expect(rootSKI.count == 22 && Array(rootSKI.dropFirst(2)) == Array(intermediateAKI.dropFirst(4)))
        #expect(
            pki.leaf.extensionOIDs == ["2.5.29.19", "2.5.29.15", "2.5.29.14", "2.5.29.35"].map { oid($0) } + [AppleOID.receiptSigningLeaf])
    }

    @Test("SHA-1 signed certificates, EKU, P-256 issuers and integer serials")
    func builderVariants() throws {
        let pki = try FixedTestPKI.shared()
        let ecKey = try PrivateKey.generateP256()
        var builder = CertificateBuilder(
            subject: [("CN", "EC leaf"), ("emailAddress", "test@example.com")], serialNumber: 0x0123_4567_89AB_CDEF,
            notBefore: utc(2024, 1, 1), notAfter: utc(2026, 1, 1), publicKey: try ecKey.publicKey)
        builder.digest = .sha1
        builder.extendedKeyUsageOIDs = [oid("1.3.6.1.5.5.7.3.4")]
        builder.customExtensions = [CertificateExtension(oid: oid("1.2.3.4.5"), critical: false, value: [0x04, 0x01, 0x7F])]
        let leaf = try builder.issued(by: pki.intermediate, signingKey: pki.intermediateKey)
        #expect(leaf.signatureAlgorithm == .rsaPKCS1v15(.sha1))
        #expect(leaf.serialNumber == [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF])
        #expect(leaf.serialNumberHex == "0123456789ABCDEF")
        #expect(leaf.extensionValue(oid: oid("2.5.29.37")) == [0x30, 0x0A, 0x06, 0x08, 0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x04])
        #expect(leaf.extensionValue(oid: oid("1.2.3.4.5")) == [0x04, 0x01, 0x7F])
        #expect(leaf.subject.value(for: "emailAddress") == "test@example.com")
        #expect(try leaf.publicKey.kind == .ec(curve: "prime256v1"))

        // An EC self-signed root signs with ECDSA.
        var rootBuilder = CertificateBuilder(
            subject: [("CN", "EC root")], serialNumber: 7, notBefore: utc(2024, 1, 1), notAfter: utc(2030, 1, 1),
            publicKey: try ecKey.publicKey)
        rootBuilder.basicConstraints = .ca()
        let ecRoot = try rootBuilder.selfSigned(with: ecKey)
        #expect(ecRoot.signatureAlgorithm == .ecdsa(.sha256))
        #expect(ecRoot.isSelfSigned)
        #expect(TrustStore(anchors: [ecRoot]).validate(leaf: ecRoot, intermediates: [], at: utc(2025, 1, 1)).isValid)
    }

    @Test("The builder refuses bad arguments and mismatched keys")
    func builderErrors() throws {
        let pki = try FixedTestPKI.shared()
        let publicKey = try pki.leafKey.publicKey
        func builder() -> CertificateBuilder {
            CertificateBuilder(
                subject: [("CN", "x")], serialNumber: 1, notBefore: utc(2024, 1, 1),
                notAfter: utc(2025, 1, 1), publicKey: publicKey)
        }
        #expect((#expect(throws: CryptoError.self) { try builder().selfSigned(with: pki.rootKey) })?.code == .keyMismatch)
        #expect(
            (#expect(throws: CryptoError.self) {
                try builder().issued(by: pki.root, signingKey: pki.intermediateKey)
            })?.code == .keyMismatch)
        var reversed = builder()
        reversed.notAfter = utc(2023, 1, 1)
        #expect((#expect(throws: CryptoError.self) { try reversed.selfSigned(with: pki.leafKey) })?.code == .invalidArgument)
        var badOID = builder()
        // An identifier with no content octets: OpenSSL refuses it.
        badOID.customExtensions = [CertificateExtension(oid: ASN1ObjectIdentifier(components: []), critical: false, value: [0x05, 0x00])]
        #expect((#expect(throws: CryptoError.self) { try badOID.selfSigned(with: pki.leafKey) })?.code == .invalidArgument)
        var duplicate = builder()
        duplicate.basicConstraints = .endEntity
        duplicate.customExtensions = [CertificateExtension(oid: oid("2.5.29.19"), critical: false, value: [0x30, 0x00])]
        #expect((#expect(throws: CryptoError.self) { try duplicate.selfSigned(with: pki.leafKey) })?.code == .invalidArgument)
        var zeroSerial = builder()
        zeroSerial.serialNumber = [0, 0]
        #expect((#expect(throws: CryptoError.self) { try zeroSerial.selfSigned(with: pki.leafKey) })?.code == .invalidArgument)
        var badName = builder()
        badName.subject = [("NotAnAttribute", "x")]
        #expect((#expect(throws: CryptoError.self) { try badName.selfSigned(with: pki.leafKey) })?.code == .invalidArgument)
        var md5 = builder()
        md5.digest = .md5
        #expect((#expect(throws: CryptoError.self) { try md5.selfSigned(with: pki.leafKey) })?.code == .unsupportedAlgorithm)
    }

    @Test("A generated 3-level chain validates inside its validity and returns leaf → anchor")
    func validChain() throws {
        let pki = try FixedTestPKI.shared()
        let result = TrustStore(anchors: [pki.root]).validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: FixedTestPKI.inside)
        let chain = try #require(result.chain)
        #expect(chain == [pki.leaf, pki.intermediate, pki.root])
        #expect(result.failure == nil)
        // Extra, unrelated intermediates and a copy of the anchor among them change nothing.
        let other = try PrivateKey.generateRSA(bits: 2048)
        let stranger = try FixedTestPKI.makeRoot(key: other, subject: [("CN", "Stranger")])
        let noisy = TrustStore(anchors: [pki.root, pki.root]).validate(
            leaf: pki.leaf, intermediates: [stranger, pki.root, pki.intermediate], at: FixedTestPKI.inside)
        #expect(noisy.chain == [pki.leaf, pki.intermediate, pki.root])
        // The intermediate limit is enforced: one intermediate is too many when the limit is 0.
        var strict = TrustStore(anchors: [pki.root])
        strict.maximumIntermediates = 0
        #expect(strict.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: FixedTestPKI.inside).failure?.reason == .pathLength)
        strict.maximumIntermediates = 1
        #expect(strict.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: FixedTestPKI.inside).isValid)
    }

    @Test("Before notBefore the leaf is not yet valid; after notAfter it has expired")
    func validityWindow() throws {
        let pki = try FixedTestPKI.shared()
        let store = TrustStore(anchors: [pki.root])
        let early = try #require(store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: utc(2023, 6, 1)).failure)
        #expect(early.reason == .notYetValid)
        #expect(early.depth == 0)
        #expect(early.certificate == pki.leaf)
        #expect(early.subject?.commonName == "RMStore Test Receipt Signing")
        let late = try #require(store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: utc(2028, 1, 1)).failure)
        #expect(late.reason == .expired)
        #expect(late.depth == 0)
        // After the intermediate expired too, the first failure OpenSSL reports is still an expiry.
        let muchLater = try #require(store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: utc(2036, 1, 1)).failure)
        #expect(muchLater.reason == .expired)
    }

    @Test("Validity boundaries: notBefore is inclusive; OpenSSL counts the notAfter second as expired")
    func validityBoundaries() throws {
        let pki = try FixedTestPKI.shared()
        let store = TrustStore(anchors: [pki.root])
        let notAfter = pki.leaf.notAfter
        #expect(store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: notAfter.addingTimeInterval(-1)).isValid)
        #expect(store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: notAfter).failure?.reason == .expired)
        #expect(
            store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: notAfter.addingTimeInterval(1)).failure?.reason
                == .expired)
        #expect(store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: pki.leaf.notBefore).isValid)
        #expect(
            store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: pki.leaf.notBefore.addingTimeInterval(-1)).failure?.reason
                == .notYetValid)
        // Sub-second times round down to the second.
        #expect(store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: notAfter.addingTimeInterval(-0.5)).isValid)
        // Certificate.isWithinValidityPeriod follows RFC 5280 (inclusive notAfter).
        #expect(pki.leaf.isWithinValidityPeriod(at: notAfter))
    }

    @Test("A different anchor, no anchors, or a missing intermediate do not validate")
    func wrongAnchor() throws {
        let pki = try FixedTestPKI.shared()
        let otherKey = try PrivateKey.generateRSA(bits: 2048)
        let otherRoot = try FixedTestPKI.makeRoot(key: otherKey, subject: [("CN", "Some Other Root")])
        let wrong = try #require(
            TrustStore(anchors: [otherRoot]).validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: FixedTestPKI.inside).failure)
        #expect(wrong.reason == .untrustedIssuer)
        #expect(wrong.depth == 1)
        let none = try #require(
            TrustStore(anchors: []).validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: FixedTestPKI.inside).failure)
        #expect(none.reason == .noTrustAnchors)
        let missing = try #require(
            TrustStore(anchors: [pki.root]).validate(leaf: pki.leaf, intermediates: [], at: FixedTestPKI.inside).failure)
        #expect(missing.reason == .untrustedIssuer)
        #expect(missing.depth == 0)
        // The intermediate itself as anchor is not the root: a partial chain is never accepted...
        let partial = TrustStore(anchors: [pki.intermediate]).validate(leaf: pki.leaf, intermediates: [], at: FixedTestPKI.inside)
        #expect(!partial.isValid)
        // ...and a time that cannot be an X.509 time fails closed.
        let badTime = TrustStore(anchors: [pki.root]).validate(
            leaf: pki.leaf, intermediates: [pki.intermediate], at: Date(timeIntervalSince1970: .infinity))
        #expect(badTime.failure?.reason == .invalidTime)
    }

    @Test("A self-made root with the anchor's subject but another key does not validate")
    func impostorRoot() throws {
        let pki = try FixedTestPKI.shared()
        let impostorKey = try PrivateKey.generateRSA(bits: 2048)
        let impostorRoot = try FixedTestPKI.makeRoot(key: impostorKey)  // same subject and serial as the real root
        #expect(impostorRoot.subject == pki.root.subject)
        #expect(impostorRoot != pki.root)
        let intermediateKey = try PrivateKey.generateRSA(bits: 2048)
        let impostorIntermediate = try FixedTestPKI.makeIntermediate(key: intermediateKey, issuer: impostorRoot, issuerKey: impostorKey)
        let leafKey = try PrivateKey.generateRSA(bits: 2048)
        let impostorLeaf = try FixedTestPKI.makeLeaf(key: leafKey, issuer: impostorIntermediate, issuerKey: intermediateKey)

        let store = TrustStore(anchors: [pki.root])
        // The message carries its own root: still invalid.
        let carried = store.validate(leaf: impostorLeaf, intermediates: [impostorIntermediate, impostorRoot], at: FixedTestPKI.inside)
        let carriedFailure = try #require(carried.failure)
        #expect(carriedFailure.reason == .selfSignedInChain)
        #expect(carriedFailure.depth == 2)
        #expect(carriedFailure.certificate == impostorRoot)
        // Without the impostor root in the message, the anchor is not accepted as the intermediate's
        // issuer (its key identifier does not match), so no issuer is found.
        let bare = try #require(store.validate(leaf: impostorLeaf, intermediates: [impostorIntermediate], at: FixedTestPKI.inside).failure)
        #expect(bare.reason == .untrustedIssuer)
        #expect(bare.depth == 1)
        // The impostor root trusted explicitly does validate its own chain (the test PKI is sound).
        #expect(
            TrustStore(anchors: [impostorRoot]).validate(
                leaf: impostorLeaf, intermediates: [impostorIntermediate], at: FixedTestPKI.inside
            ).isValid)
    }

    @Test("A leaf signed by a different intermediate with the same name does not validate")
    func wrongIntermediate() throws {
        let pki = try FixedTestPKI.shared()
        let twinKey = try PrivateKey.generateRSA(bits: 2048)
        let twin = try FixedTestPKI.makeIntermediate(key: twinKey, issuer: pki.root, issuerKey: pki.rootKey, serial: 99)
        #expect(twin.subject == pki.intermediate.subject)
        let leafKey = try PrivateKey.generateRSA(bits: 2048)
        let twinLeaf = try FixedTestPKI.makeLeaf(key: leafKey, issuer: twin, issuerKey: twinKey)
        let store = TrustStore(anchors: [pki.root])
        let failure = try #require(store.validate(leaf: twinLeaf, intermediates: [pki.intermediate], at: FixedTestPKI.inside).failure)
        #expect(failure.reason == .untrustedIssuer)  // key identifiers differ: the namesake is not a candidate
        #expect(failure.depth == 0)
        // With its real issuer present, the same leaf validates.
        #expect(
            store.validate(leaf: twinLeaf, intermediates: [pki.intermediate, twin], at: FixedTestPKI.inside).chain == [
                twinLeaf, twin, pki.root,
            ])
        // Without key identifiers the name match leads OpenSSL to the wrong intermediate: a signature failure.
        var builder = CertificateBuilder(
            subject: FixedTestPKI.leafSubject, serialNumber: 5, notBefore: utc(2024, 1, 1), notAfter: utc(2027, 1, 1),
            publicKey: try leafKey.publicKey)
        builder.includeKeyIdentifiers = false
        let anonymousLeaf = try builder.issued(by: twin, signingKey: twinKey)
        let signature = try #require(
            store.validate(leaf: anonymousLeaf, intermediates: [pki.intermediate], at: FixedTestPKI.inside).failure)
        #expect(signature.reason == .signatureFailure)
    }

    @Test("A non-CA issuer, an exceeded path length and a self-signed leaf are rejected with their reasons")
    func structuralFailures() throws {
        let pki = try FixedTestPKI.shared()
        let store = TrustStore(anchors: [pki.root])
        // Issued by the (non-CA) leaf.
        let childKey = try PrivateKey.generateRSA(bits: 2048)
        let child = try FixedTestPKI.makeLeaf(key: childKey, issuer: pki.leaf, issuerKey: pki.leafKey)
        let notCA = try #require(store.validate(leaf: child, intermediates: [pki.leaf, pki.intermediate], at: FixedTestPKI.inside).failure)
        #expect(notCA.reason == .invalidCA)
        #expect(notCA.depth == 1)
        // A sub-CA under the pathlen-0 intermediate.
        let subKey = try PrivateKey.generateRSA(bits: 2048)
        let sub = try FixedTestPKI.makeIntermediate(
            key: subKey, issuer: pki.intermediate, issuerKey: pki.intermediateKey, serial: 10,
            subject: [("CN", "Sub CA")])
        let subLeaf = try FixedTestPKI.makeLeaf(key: childKey, issuer: sub, issuerKey: subKey)
        let tooLong = try #require(store.validate(leaf: subLeaf, intermediates: [sub, pki.intermediate], at: FixedTestPKI.inside).failure)
        #expect(tooLong.reason == .pathLength)
        // A self-signed certificate that is not an anchor.
        let selfSigned = try FixedTestPKI.makeRoot(key: childKey, subject: [("CN", "Lonely")])
        let lonely = try #require(store.validate(leaf: selfSigned, intermediates: [], at: FixedTestPKI.inside).failure)
        #expect(lonely.reason == .selfSignedInChain)
    }

    @Test("Apple's real chain validates at the receipt's creation date and has expired by 2026-11-29")
    func appleChain() throws {
        let root = try Fixtures.appleRoot()
        let intermediate = try Fixtures.appleWWDRG5()
        let leaf = try Fixtures.appleLeaf2024()
        let store = TrustStore(anchors: [root])
        let valid = store.validate(leaf: leaf, intermediates: [intermediate], at: Fixtures.receiptCreationDate)
        #expect(valid.chain == [leaf, intermediate, root])
        let expired = try #require(store.validate(leaf: leaf, intermediates: [intermediate], at: utc(2026, 11, 29)).failure)
        #expect(expired.reason == .expired)
        #expect(expired.depth == 0)
        #expect(expired.certificate == leaf)
        // The intermediate used as the anchor is not Apple's root: no partial chains.
        #expect(!TrustStore(anchors: [intermediate]).validate(leaf: leaf, intermediates: [], at: Fixtures.receiptCreationDate).isValid)
        // The test PKI's root does not anchor Apple's chain.
        let testRoot = try FixedTestPKI.shared().root
        #expect(
            TrustStore(anchors: [testRoot]).validate(leaf: leaf, intermediates: [intermediate], at: Fixtures.receiptCreationDate).failure?
                .reason == .untrustedIssuer)
    }

    @Test("One trust store validates concurrently from many tasks")
    func concurrentValidation() async throws {
        let pki = try FixedTestPKI.shared()
        let store = TrustStore(anchors: [pki.root])
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    (0..<25).allSatisfy { _ in
                        let good = store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: FixedTestPKI.inside).isValid
                        let bad = store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: utc(2030 + index % 3, 1, 1)).isValid
                        return good && !bad
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }
}
