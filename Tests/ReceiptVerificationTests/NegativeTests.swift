import ASN1
import Foundation
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import TestSupport
import Testing

/// Every way a receipt must fail, each naming the check that fails. Receipts are signed with the
/// project's own test PKI (real RSA signatures, real OpenSSL chain validation).
@Suite struct NegativeTests {
    let pki: TestPKI
    let verifier: AppReceiptVerifier
    let expectations = ReceiptExpectations(
        bundleIdentifier: "com.example.app", appVersion: "1.2.3", deviceIdentifier: sampleDevice)

    init() throws {
        pki = try PKIs.apple.get()
        verifier = AppReceiptVerifier(anchors: [pki.root], cache: ChainCache())
    }

    func signed(_ receipt: AppReceipt = sampleReceipt(), layout: ReceiptLayout = .appStore) throws -> [UInt8] {
        try pki.signer().sign(receipt, layout: layout)
    }

    /// The baseline every negative case departs from is valid.
    @Test(arguments: [ReceiptLayout.appStore, .xcode])
    func baselineIsValid(layout: ReceiptLayout) throws {
        let verdict = verifier.verify(try signed(layout: layout), expecting: expectations)
        #expect(verdict.isValid, "\(verdict.summary)")
        #expect(verdict.unchecked == [.environment, .receiptType])
        #expect(
            verdict.checks.map(\.name) == [
                .parse, .trustAnchors, .contentType, .signerCount, .digestAlgorithm, .signerCertificate,
                .signatureAlgorithm, .signerKey, .signedAttributes, .signature, .validationTime, .chain, .pinnedAnchor, .chainLength,
                .leafMarker, .intermediateMarker, .keyUsage, .basicConstraints, .bundleIdentifier, .appVersion, .deviceHash,
                .expirationDate,
            ])
    }

    @Test func payloadAlteredAfterSigning() throws {
        var bytes = try signed()
        let needle = Array("com.example.app".utf8)
        let offset = try #require(bytes.firstRange(of: needle)?.lowerBound)
        bytes[offset + needle.count - 1] = UInt8(ascii: "q")  // com.example.apq, same length
        let verdict = verifier.verify(bytes)
        #expect(verdict.firstFailure?.name == .signature, "\(verdict.summary)")
        #expect(verdict.receipt?.bundleIdentifier == "com.example.apq", "the altered payload is what was parsed")
        #expect(verdict.isValid == false)
    }

    @Test func signatureBitFlipped() throws {
        var bytes = try signed()
        let original = try ReceiptEnvelope(bytes).signers[0].signature
        bytes[bytes.count - 1] ^= 0x01  // the signature is the last element of a DER receipt
        #expect(try ReceiptEnvelope(bytes).signers[0].signature != original)
        let verdict = verifier.verify(bytes)
        #expect(verdict.firstFailure?.name == .signature, "\(verdict.summary)")
        #expect(verdict.failures.map(\.name) == [.signature])
    }

    @Test func signedBySelfMadeRootCopyingApplesSubject() throws {
        let copycat = try Chain.derived(from: try PKIs.other.get(), rootSubject: appleRootSubject)
        #expect(copycat.root.subject == (try BundledAnchors.appleIncRoot).subject)
        let apple = AppReceiptVerifier(anchors: [try BundledAnchors.appleIncRoot], cache: ChainCache())
        let bytes = try copycat.signer().sign(sampleReceipt())
        let verdict = apple.verify(bytes)
        #expect(verdict.firstFailure?.name == .chain, "\(verdict.summary)")
        #expect(verdict.passed(.signature))
        // Embedding Apple's genuine root as well changes nothing.
        var signer = copycat.signer()
        signer.chain = [copycat.intermediate, try BundledAnchors.appleIncRoot]
        let withGenuineRoot = apple.verify(try signer.sign(sampleReceipt()))
        #expect(withGenuineRoot.firstFailure?.name == .chain, "\(withGenuineRoot.summary)")
    }

    @Test func chainWithoutMarkerOIDs() throws {
        let unmarked = try Chain.derived(from: pki, intermediateMarker: false, leafMarker: false)
        let verifier = AppReceiptVerifier(anchors: [unmarked.root], cache: ChainCache())
        let verdict = verifier.verify(try unmarked.signer().sign(sampleReceipt()))
        #expect(verdict.firstFailure?.name == .leafMarker, "\(verdict.summary)")
        #expect(verdict.passed(.chain) && verdict.passed(.chainLength))
        #expect(verdict.check(.intermediateMarker) == nil, "policies stop at the first failure")

        let leafOnly = try Chain.derived(from: pki, intermediateMarker: false, leafMarker: true)
        let second = AppReceiptVerifier(anchors: [leafOnly.root], cache: ChainCache()).verify(try leafOnly.signer().sign(sampleReceipt()))
        #expect(second.firstFailure?.name == .intermediateMarker, "\(second.summary)")
        #expect(second.check(.intermediateMarker)?.reason.contains("1.2.840.113635.100.6.2.1") == true)
    }

    @Test func expiredLeafAtTheValidationTime() throws {
        let shortLived = try Chain.derived(from: pki, leafNotBefore: utc(2021, 1, 1), leafNotAfter: utc(2022, 1, 1))
        let verifier = AppReceiptVerifier(anchors: [shortLived.root], cache: ChainCache())
        let bytes = try shortLived.signer().sign(sampleReceipt(creationDate: utc(2024, 8, 6)))
        let verdict = verifier.verify(bytes)
        #expect(verdict.firstFailure?.name == .chain, "\(verdict.summary)")
        let reason = try #require(verdict.check(.chain)?.reason)
        #expect(reason.contains("RMStore Test Receipt Signing") && reason.contains("2022-01-01"), "\(reason)")
        #expect(reason.contains("[expired]"))
        // Inside the leaf's validity the same receipt verifies.
        #expect(verifier.verify(bytes, at: .fixed(utc(2021, 6, 1))).isValid)
        // And before it, the leaf is not yet valid.
        let early = verifier.verify(bytes, at: .fixed(utc(2020, 6, 1)))
        #expect(early.check(.chain)?.reason.contains("[notYetValid]") == true, "\(early.summary)")
    }

    @Test func leafNotIssuedByTheIntermediate() throws {
        var signer = pki.signer()
        signer.chain = [try PKIs.other.get().intermediate, pki.root]
        let verdict = verifier.verify(try signer.sign(sampleReceipt()))
        #expect(verdict.firstFailure?.name == .chain, "\(verdict.summary)")
        #expect(verdict.check(.chain)?.reason.contains("[untrustedIssuer]") == true)
    }

    @Test func receiptForAnotherBundleIdentifier() throws {
        var receipt = sampleReceipt()
        receipt.bundleIdentifier = "com.example.other"
        receipt.bundleIdentifierData = [0x0C, 17] + Array("com.example.other".utf8)
        let verdict = verifier.verify(try signed(receipt), expecting: ReceiptExpectations(bundleIdentifier: "com.example.app"))
        #expect(verdict.failures.map(\.name) == [.bundleIdentifier], "\(verdict.summary)")
        #expect(verdict.check(.bundleIdentifier)?.reason.contains("com.example.other") == true)
    }

    @Test func wrongAppVersion() throws {
        let verdict = verifier.verify(try signed(), expecting: ReceiptExpectations(appVersion: "1.2.4"))
        #expect(verdict.failures.map(\.name) == [.appVersion], "\(verdict.summary)")
    }

    @Test func wrongDeviceIdentifier() throws {
        let other = try #require(DeviceIdentifier("11223344-5566-7788-99AA-BBCCDDEEFF01"))
        let verdict = verifier.verify(try signed(), expecting: ReceiptExpectations(deviceIdentifier: other))
        #expect(verdict.failures.map(\.name) == [.deviceHash], "\(verdict.summary)")
        let mac = try #require(DeviceIdentifier("f8:ff:c2:1e:91:82"))
        #expect(verifier.verify(try signed(), expecting: ReceiptExpectations(deviceIdentifier: mac)).failed(.deviceHash))
    }

    @Test func anchorFileMissing() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-anchor-\(UUID()).cer").path
        #expect(throws: TrustAnchorError(code: .missing, source: missing, reason: "")) {
            try TrustAnchors(contentsOfFile: missing)
        }
        // A verifier left without anchors fails every receipt at the trustAnchors check.
        let empty = AppReceiptVerifier(anchors: TrustAnchors([]))
        let verdict = empty.verify(try signed())
        #expect(verdict.firstFailure?.name == .trustAnchors, "\(verdict.summary)")
        #expect(verdict.failed(.chain))
        #expect(verdict.isValid == false)
    }

    @Test func unreadableOrMalformedAnchorFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anchors-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(throws: TrustAnchorError(code: .unreadable, source: directory.path, reason: "")) {
            try TrustAnchors(contentsOfFile: directory.path)
        }
        let garbage = directory.appendingPathComponent("garbage.pem")
        try Data("not a certificate".utf8).write(to: garbage)
        #expect(throws: TrustAnchorError(code: .malformed, source: garbage.path, reason: "")) {
            try TrustAnchors(contentsOfFile: garbage.path)
        }
        // A bundled anchor whose bytes differ from the pinned fingerprint is refused.
        let fake = directory.appendingPathComponent(BundledAnchor.appleIncRoot.fileName)
        try Data(pki.root.derEncoded).write(to: fake)
        #expect(throws: TrustAnchorError(code: .fingerprintMismatch, source: fake.path, reason: "")) {
            try BundledAnchors.certificate(.appleIncRoot, in: directory)
        }
        #expect(
            throws: TrustAnchorError(
                code: .missing, source: directory.appendingPathComponent(BundledAnchor.appleRootCAG2.fileName).path, reason: "")
        ) {
            try BundledAnchors.certificate(.appleRootCAG2, in: directory)
        }
        // PEM anchors load too.
        let pem = directory.appendingPathComponent("root.pem")
        try Data(pki.root.pemEncoded.utf8).write(to: pem)
        #expect(try TrustAnchors(contentsOfFile: pem.path).certificates == [pki.root])
    }

    @Test func twoSignerInfos() throws {
        let payload = sampleReceipt().encodedPayload()
        let signature = try pki.leafKey.sign(payload, digest: .sha256)
        let one = EnvelopeBuilder.Signer(identifier: .issuerAndSerial(pki.leaf), digestOID: EnvelopeBuilder.sha256, signature: signature)
        let builder = EnvelopeBuilder(
            digestAlgorithms: [EnvelopeBuilder.sha256], payload: payload, certificates: [pki.leaf, pki.intermediate, pki.root],
            signers: [one, one])
        let verdict = verifier.verify(try builder.build())
        #expect(verdict.firstFailure?.name == .signerCount, "\(verdict.summary)")
        #expect(verdict.check(.signature) == nil)
        #expect(verdict.isValid == false)
        // The same builder with one signer is valid, so the builder itself is sound.
        var single = builder
        single.signers = [one]
        #expect(verifier.verify(try single.build()).isValid)
    }

    @Test func contentOtherThanIdData() throws {
        let payload = sampleReceipt().encodedPayload()
        let signature = try pki.leafKey.sign(payload, digest: .sha256)
        var builder = EnvelopeBuilder(
            digestAlgorithms: [EnvelopeBuilder.sha256], payload: payload, certificates: [pki.leaf, pki.intermediate, pki.root],
            signers: [.init(identifier: .issuerAndSerial(pki.leaf), digestOID: EnvelopeBuilder.sha256, signature: signature)])
        builder.contentType = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 7, 5)  // id-digestedData
        let verdict = verifier.verify(try builder.build())
        #expect(verdict.failures.map(\.name) == [.contentType], "\(verdict.summary)")
        #expect(verdict.check(.contentType)?.reason.contains("1.2.840.113549.1.7.5") == true)
    }

    @Test func embeddedCertificatePretendingToBeTheAnchor() throws {
        // A self-signed certificate that copies the StoreKit test certificate's subject and serial,
        // signing an Xcode-layout receipt: against the genuine StoreKit certificate it must fail.
        let genuine = try BundledAnchors.storeKitTest
        let key = pki.leafKey
        var builder = CertificateBuilder(
            subject: [("CN", "StoreKit"), ("O", "StoreKit"), ("OU", "StoreKit"), ("C", "US"), ("emailAddress", "StoreKit")],
            serialNumber: 1, notBefore: genuine.notBefore, notAfter: genuine.notAfter, publicKey: try key.publicKey)
        builder.basicConstraints = .ca()
        builder.keyUsage = [.digitalSignature, .keyCertSign]
        let impostor = try builder.selfSigned(with: key)
        #expect(impostor.subject == genuine.subject && impostor.serialNumber == genuine.serialNumber)
        var receipt = sampleReceipt()
        receipt.receiptType = "Xcode"
        let bytes = try ReceiptSigner(key: key, certificate: impostor).sign(receipt, layout: .xcode)
        let verdict = try AppReceiptVerifier.xcode(cache: ChainCache()).verify(bytes)
        #expect(verdict.firstFailure?.name == .chain, "\(verdict.summary)")
        #expect(verdict.passed(.signature))
        #expect(verdict.check(.pinnedAnchor) == nil)

        // The same trick one level up: the receipt embeds a root named like the anchor (here the
        // test PKI's root) with another key, and an intermediate signed by it.
        let forged = try Chain.derived(from: try PKIs.other.get(), rootSubject: TestPKI.Options().rootSubject)
        #expect(forged.root.subject == pki.root.subject && forged.root != pki.root)
        let second = verifier.verify(try forged.signer().sign(sampleReceipt()))
        #expect(second.firstFailure?.name == .chain, "\(second.summary)")
    }

    @Test func md5DigestIsRefused() throws {
        let payload = sampleReceipt().encodedPayload()
        let signature = try pki.leafKey.sign(payload, digest: .sha256)
        let builder = EnvelopeBuilder(
            digestAlgorithms: [EnvelopeBuilder.md5], payload: payload, certificates: [pki.leaf, pki.intermediate, pki.root],
            signers: [.init(identifier: .issuerAndSerial(pki.leaf), digestOID: EnvelopeBuilder.md5, signature: signature)])
        let verdict = verifier.verify(try builder.build())
        #expect(verdict.firstFailure?.name == .digestAlgorithm, "\(verdict.summary)")
        #expect(verdict.check(.digestAlgorithm)?.reason.contains("MD5") == true)
        #expect(verdict.check(.signature) == nil, "no signature is checked with a refused digest")
        #expect(verdict.isValid == false)
    }

    @Test func rsa1024LeafIsRefused() throws {
        let weak = try PKIs.weak.get()
        let verifier = AppReceiptVerifier(anchors: [weak.root], cache: ChainCache())
        let verdict = verifier.verify(try weak.signer().sign(sampleReceipt()))
        #expect(verdict.failures.map(\.name) == [.signerKey], "\(verdict.summary)")
        #expect(verdict.check(.signerKey)?.reason.contains("1024") == true)
        #expect(verdict.passed(.signature) && verdict.passed(.chain), "everything else about it is fine")
    }

    @Test func signedAttributesWithAWrongMessageDigest() throws {
        let payload = sampleReceipt().encodedPayload()
        let attributes = EnvelopeBuilder.signedAttributes(messageDigest: try Digest.hash(.sha256, payload + [0]))
        let signature = try pki.leafKey.sign(attributes, digest: .sha256)
        var signer = EnvelopeBuilder.Signer(
            identifier: .issuerAndSerial(pki.leaf), digestOID: EnvelopeBuilder.sha256, signedAttributes: attributes,
            signature: signature)
        var builder = EnvelopeBuilder(
            digestAlgorithms: [EnvelopeBuilder.sha256], payload: payload, certificates: [pki.leaf, pki.intermediate, pki.root],
            signers: [signer])
        let verdict = verifier.verify(try builder.build())
        #expect(verdict.firstFailure?.name == .signedAttributes, "\(verdict.summary)")
        #expect(verdict.check(.signedAttributes)?.reason.contains("messageDigest") == true)
        #expect(verdict.isValid == false)

        // With the right digest the same construction is valid (the signature covers the attributes).
        let good = EnvelopeBuilder.signedAttributes(messageDigest: try Digest.hash(.sha256, payload))
        signer.signedAttributes = good
        signer.signature = try pki.leafKey.sign(good, digest: .sha256)
        builder.signers = [signer]
        let valid = verifier.verify(try builder.build())
        #expect(valid.isValid, "\(valid.summary)")
        #expect(valid.check(.signature)?.reason.contains("signed attributes") == true)

        // A signed contentType other than the content's is refused too.
        let wrongType = EnvelopeBuilder.signedAttributes(
            contentType: ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 7, 5), messageDigest: try Digest.hash(.sha256, payload))
        signer.signedAttributes = wrongType
        signer.signature = try pki.leafKey.sign(wrongType, digest: .sha256)
        builder.signers = [signer]
        #expect(verifier.verify(try builder.build()).firstFailure?.name == .signedAttributes)
    }

    @Test func digestNotListedInSignedData() throws {
        let payload = sampleReceipt().encodedPayload()
        let signature = try pki.leafKey.sign(payload, digest: .sha256)
        let builder = EnvelopeBuilder(
            digestAlgorithms: [EnvelopeBuilder.sha1], payload: payload, certificates: [pki.leaf, pki.intermediate, pki.root],
            signers: [.init(identifier: .issuerAndSerial(pki.leaf), digestOID: EnvelopeBuilder.sha256, signature: signature)])
        let verdict = verifier.verify(try builder.build())
        #expect(verdict.failures.map(\.name) == [.digestAlgorithm], "\(verdict.summary)")
        #expect(verdict.check(.digestAlgorithm)?.reason.contains("not listed") == true)
    }

    @Test func signatureAlgorithmInconsistentWithDigestOrKey() throws {
        let payload = sampleReceipt().encodedPayload()
        let signature = try pki.leafKey.sign(payload, digest: .sha256)
        var signer = EnvelopeBuilder.Signer(
            identifier: .issuerAndSerial(pki.leaf), digestOID: EnvelopeBuilder.sha256,
            signatureOID: ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 1, 5), signature: signature)  // sha1WithRSA
        var builder = EnvelopeBuilder(
            digestAlgorithms: [EnvelopeBuilder.sha256], payload: payload, certificates: [pki.leaf, pki.intermediate, pki.root],
            signers: [signer])
        #expect(verifier.verify(try builder.build()).failures.map(\.name) == [.signatureAlgorithm])
        signer.signatureOID = ASN1ObjectIdentifier(1, 2, 840, 10045, 4, 3, 2)  // ecdsa-with-SHA256 on an RSA key
        builder.signers = [signer]
        #expect(verifier.verify(try builder.build()).failures.map(\.name) == [.signatureAlgorithm])
        signer.signatureOID = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 1, 11)  // sha256WithRSA: consistent
        builder.signers = [signer]
        #expect(verifier.verify(try builder.build()).isValid)
    }

    @Test func signerFoundBySubjectKeyIdentifierOrNotAtAll() throws {
        let payload = sampleReceipt().encodedPayload()
        let signature = try pki.leafKey.sign(payload, digest: .sha256)
        let keyIdentifier = try #require(pki.leaf.extensionValue(oid: ASN1ObjectIdentifier(2, 5, 29, 14))).dropFirst(2)
        var builder = EnvelopeBuilder(
            digestAlgorithms: [EnvelopeBuilder.sha256], payload: payload, certificates: [pki.root, pki.intermediate, pki.leaf],
            signers: [
                .init(identifier: .subjectKeyIdentifier(Array(keyIdentifier)), digestOID: EnvelopeBuilder.sha256, signature: signature)
            ])
        let verdict = verifier.verify(try builder.build())
        #expect(verdict.isValid, "\(verdict.summary)")
        #expect(verdict.check(.signerCertificate)?.reason.contains("#2") == true)

        // Test PKIs reuse names and serials, so name a certificate from elsewhere: Apple's 2024 leaf.
        let stranger = try Fixtures.certificate("leaf-MacAppStoreAndiTunesStoreReceiptSigning-2024-2026.der")
        builder.signers = [.init(identifier: .issuerAndSerial(stranger), digestOID: EnvelopeBuilder.sha256, signature: signature)]
        let missing = verifier.verify(try builder.build())
        #expect(missing.firstFailure?.name == .signerCertificate, "\(missing.summary)")
        #expect(missing.check(.signature) == nil && missing.check(.chain) == nil)
        #expect(missing.isValid == false)
    }

    @Test func twoDifferentCertificatesMatchingTheSignerAreRefused() throws {
        // A second certificate with the leaf's issuer and serial number but another key (test
        // PKIs draw random serials, so it is made on purpose): the signer is ambiguous.
        let options = TestPKI.Options()
        let twin = try CertificateBuilder(
            subject: options.leafSubject, serialNumber: pki.leaf.serialNumber, notBefore: options.notBefore,
            notAfter: options.notAfter, publicKey: try PKIs.other.get().leafKey.publicKey
        ).issued(by: pki.intermediate, signingKey: pki.intermediateKey)
        #expect(twin.issuer == pki.leaf.issuer && twin.serialNumber == pki.leaf.serialNumber && twin != pki.leaf)
        var signer = pki.signer()
        signer.chain = [pki.intermediate, pki.root, twin]
        let verdict = verifier.verify(try signer.sign(sampleReceipt()))
        #expect(verdict.firstFailure?.name == .signerCertificate, "\(verdict)")
        #expect(verdict.check(.signature) == nil)
        // A byte-identical duplicate of the signer is harmless.
        signer.chain = [pki.intermediate, pki.root, pki.leaf]
        #expect(verifier.verify(try signer.sign(sampleReceipt())).isValid)
    }

    @Test func unreadableInputsFailTheParseCheck() throws {
        var inputs: [[UInt8]] = [[], [0x30], Array("hello".utf8), try Fixtures.bytes("not_a_receipt")]
        inputs.append(try signed() + [0, 0, 0, 0])
        inputs.append(Array(try signed().prefix(200)))
        for input in inputs {
            let verdict = verifier.verify(input)
            #expect(verdict.checks.map(\.name) == [.parse])
            #expect(verdict.isValid == false)
            #expect(verdict.receipt == nil)
        }
    }

    @Test func verifyingAParsedReceiptUsesItsSignedPayload() throws {
        let receipt = try AppReceipt(try signed())
        #expect(verifier.verify(receipt, expecting: expectations).isValid)
        var changed = receipt
        changed.bundleIdentifier = "com.example.other"
        let verdict = verifier.verify(changed, expecting: ReceiptExpectations(bundleIdentifier: "com.example.other"))
        #expect(verdict.failures.map(\.name) == [.parse], "\(verdict.summary)")
        let built = verifier.verify(sampleReceipt())
        #expect(built.failures.map(\.name) == [.parse])
    }

    @Test func receiptWithoutCreationDateHasNoDefaultValidationTime() throws {
        var receipt = sampleReceipt()
        receipt.creationDate = nil
        let bytes = try signed(receipt)
        let verdict = verifier.verify(bytes)
        #expect(verdict.firstFailure?.name == .validationTime, "\(verdict.summary)")
        #expect(verdict.check(.chain) == nil)
        #expect(verdict.isValid == false)
        #expect(verifier.verify(bytes, at: .fixed(utc(2024, 8, 6))).isValid)
    }

    @Test func expiredReceiptFailsAtTheSameClockAsTheChain() throws {
        var receipt = sampleReceipt()
        receipt.expirationDate = utc(2025, 1, 1)
        let bytes = try signed(receipt)
        #expect(verifier.verify(bytes).isValid, "at the creation date (2024-08-06) it has not expired")
        let later = verifier.verify(bytes, at: .fixed(utc(2025, 6, 1)))
        #expect(later.failures.map(\.name) == [.expirationDate], "\(later.summary)")
        let ignored = verifier.verify(bytes, expecting: ReceiptExpectations(requireNotExpired: false), at: .fixed(utc(2025, 6, 1)))
        #expect(ignored.isValid && ignored.unchecked.contains(.expirationDate))
    }

    @Test(arguments: [Double.nan, .infinity, -1e300, 1e300])
    func unrepresentableFixedTimesFailTheValidationTimeCheck(seconds: Double) throws {
        let verdict = verifier.verify(try signed(), at: .fixed(Date(timeIntervalSince1970: seconds)))
        #expect(verdict.firstFailure?.name == .validationTime, "\(verdict)")
        #expect(verdict.check(.chain) == nil)
        #expect(verdict.isValid == false)
    }

    @Test func ecdsaSignerKeysAreAcceptedWhenConsistent() throws {
        let key = try PrivateKey.generateP256()
        var builder = CertificateBuilder(
            subject: [("CN", "EC Receipt Signing")], serialNumber: 99, notBefore: utc(2020, 1, 1), notAfter: utc(2030, 1, 1),
            publicKey: try key.publicKey)
        builder.basicConstraints = .endEntity
        builder.customExtensions = [.marker(oid: TestPKI.leafMarkerOID)]
        let leaf = try builder.issued(by: pki.intermediate, signingKey: pki.intermediateKey)
        let bytes = try ReceiptSigner(key: key, certificate: leaf, chain: [pki.intermediate, pki.root]).sign(sampleReceipt())
        let verdict = verifier.verify(bytes)
        #expect(verdict.isValid, "\(verdict)")
        #expect(verdict.check(.signatureAlgorithm)?.reason == "ecdsa-with-SHA256")
        #expect(verdict.check(.signerKey)?.reason.hasPrefix("EC") == true)
    }

    @Test func nowIsReadAtValidationTime() throws {
        let verdict = verifier.verify(try signed(), at: .now)
        #expect(verdict.isValid, "\(verdict.summary)")
        let time = try #require(verdict.validationTime)
        #expect(abs(time.timeIntervalSinceNow) < 60)
    }

    @Test func environmentAndReceiptTypeExpectations() throws {
        let bytes = try signed()
        let sandboxOnly = verifier.verify(bytes, expecting: ReceiptExpectations(allowedEnvironments: [.sandbox]))
        #expect(sandboxOnly.isValid)
        let productionOnly = verifier.verify(
            bytes, expecting: ReceiptExpectations(allowedEnvironments: [.production], allowedReceiptTypes: ["Production"]))
        #expect(productionOnly.failures.map(\.name) == [.environment, .receiptType], "\(productionOnly.summary)")
    }
}

/// Custom policies: small values, AND-composed in order, stopping at the first failure.
@Suite struct PolicyTests {
    struct SubjectContains: ChainPolicy {
        let text: String
        var name: VerificationCheck.Name { VerificationCheck.Name(rawValue: "subjectContains") }
        func evaluate(chain: [Certificate]) -> PolicyResult {
            chain.first?.subject.description.contains(text) == true ? .meets : .fails("leaf subject lacks \(text)")
        }
    }

    struct AnchorNamed: ChainPolicy {
        let commonName: String
        var name: VerificationCheck.Name { VerificationCheck.Name(rawValue: "anchorNamed") }
        func evaluate(chain: [Certificate]) -> PolicyResult {
            chain.last?.subject.commonName == commonName ? .meets : .fails("the anchor is not \(commonName)")
        }
    }

    @Test func customPoliciesRunInOrderAndStopAtTheFirstFailure() throws {
        let pki = try PKIs.apple.get()
        let bytes = try pki.signer().sign(sampleReceipt())
        let passing = AppReceiptVerifier(
            anchors: [pki.root], policy: .custom([ChainLengthPolicy(exactly: 3), SubjectContains(text: "Receipt Signing")]))
        let verdict = passing.verify(bytes)
        #expect(verdict.isValid, "\(verdict.summary)")
        #expect(verdict.passed(VerificationCheck.Name(rawValue: "subjectContains")))

        let failing = AppReceiptVerifier(
            anchors: [pki.root],
            policy: .custom([
                SubjectContains(text: "Receipt Signing"), AnchorNamed(commonName: "Another Root"), ChainLengthPolicy(exactly: 3),
            ]))
        let failed = failing.verify(bytes)
        #expect(failed.failures.map(\.name) == [VerificationCheck.Name(rawValue: "anchorNamed")], "\(failed.summary)")
        #expect(failed.check(.chainLength) == nil)

        let combined = AllOfPolicies(
            name: VerificationCheck.Name(rawValue: "combined"), [ChainLengthPolicy(exactly: 3), AnchorNamed(commonName: "Another Root")])
        let result = combined.evaluate(chain: try #require(verdict.chain))
        #expect(result == .fails("anchorNamed: the anchor is not Another Root"))
    }

    @Test func xcodePolicyRejectsAnAppStoreShapedChain() throws {
        let pki = try PKIs.apple.get()
        let verdict = AppReceiptVerifier(anchors: [pki.root], policy: .xcode).verify(try pki.signer().sign(sampleReceipt()))
        #expect(verdict.failures.map(\.name) == [.chainLength], "\(verdict.summary)")
        let storeKit = try PKIs.storeKit.get()
        var receipt = sampleReceipt()
        receipt.receiptType = "Xcode"
        let xcode = try ReceiptSigner(key: storeKit.key, certificate: storeKit.certificate).sign(receipt, layout: .xcode)
        #expect(AppReceiptVerifier(anchors: [storeKit.certificate], policy: .xcode).verify(xcode).isValid)
        #expect(AppReceiptVerifier(anchors: [storeKit.certificate], policy: .appStore).verify(xcode).failed(.chainLength))
    }

    @Test func signatureMinimumsCannotBeLowered() {
        var format = AppReceiptFormat()
        format.minimumRSAKeyBits = 1024
        #expect(format.minimumRSAKeyBits == 2048)
        format.minimumRSAKeyBits = 3072
        #expect(format.minimumRSAKeyBits == 3072)
        let md5 = AppReceiptFormat(allowedDigests: [.md5, .sha256])
        #expect(md5.allowedDigests == [.sha256])
        format.allowedDigests = [.md5]
        #expect(format.allowedDigests.isEmpty)
    }
}
