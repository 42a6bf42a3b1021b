import ASN1
import Foundation
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import TestSupport
import Testing

/// The forgery suite (issue 7). Cases already covered elsewhere, each naming its failing check:
/// NegativeTests — a root named exactly like Apple's but self-made (`signedBySelfMadeRootCopyingApplesSubject`),
/// an intermediate without the marker OID (`chainWithoutMarkerOIDs`), the payload swapped after signing
/// (`payloadAlteredAfterSigning`), embedded certificates acting as anchors
/// (`embeddedCertificatePretendingToBeTheAnchor`), a receipt from another app
/// (`receiptForAnotherBundleIdentifier`), a replay with another device id (`wrongDeviceIdentifier`),
/// an expired chain at the validation time (`expiredLeafAtTheValidationTime`), MD5 and short RSA keys
/// (`md5DigestIsRefused`, `rsa1024LeafIsRefused`). This suite adds the rest.
@Suite struct ForgeryTests {
    let pki: TestPKI
    let verifier: AppReceiptVerifier

    init() throws {
        pki = try PKIs.apple.get()
        verifier = AppReceiptVerifier(anchors: [pki.root], cache: ChainCache())
    }

    /// Two payloads, one signed and one parsed: a second OCTET STRING inside the eContent, or a
    /// second ContentInfo after the first. The envelope reader refuses both, so the bytes verified
    /// are always the bytes parsed.
    @Test func twoPayloadsOneSignedOneParsed() throws {
        let genuine = try pki.signer().sign(sampleReceipt())
        var forged = sampleReceipt()
        forged.bundleIdentifier = "com.evil.app"
        forged.bundleIdentifierData = [0x0C, 12] + Array("com.evil.app".utf8)

        // (a) eContent [0] holding the signed OCTET STRING followed by a second, unsigned one,
        // with every enclosing length rebuilt so the bytes are well-formed ASN.1.
        var top = try ASN1Reader(genuine, rules: .der)
        var contentInfo = try top.readSequence()
        let contentType = try contentInfo.readElement()
        var explicit = try contentInfo.readConstructed(.contextSpecific(0, constructed: true))
        var signedData = try explicit.readSequence()
        let version = try signedData.readElement()
        let algorithms = try signedData.readElement()
        let encapsulated = try signedData.readElement()
        let certificates = try signedData.readElement()
        let signerInfos = try signedData.readElement()
        let signedPayload = try ReceiptEnvelope(genuine).payload
        #expect(encapsulated.identifier == .sequence)
        var writer = DERWriter()
        writer.appendSequence { ci in
            ci.appendEncoded(contentType.encodedBytes)
            ci.appendConstructed(.contextSpecific(0, constructed: true)) { e in
                e.appendSequence { sd in
                    sd.appendEncoded(version.encodedBytes)
                    sd.appendEncoded(algorithms.encodedBytes)
                    sd.appendSequence { encap in
                        encap.appendObjectIdentifier(ReceiptOID.data)
                        encap.appendConstructed(.contextSpecific(0, constructed: true)) {
                            $0.appendOctetString(signedPayload)
                            $0.appendOctetString(forged.encodedPayload())
                        }
                    }
                    sd.appendEncoded(certificates.encodedBytes)
                    sd.appendEncoded(signerInfos.encodedBytes)
                }
            }
        }
        let doubled = writer.bytes
        _ = try ASN1Tree.depthFirstNodes(doubled[...], rules: .der)  // well-formed DER
        #expect(throws: ReceiptError.self) { _ = try ReceiptEnvelope(doubled) }
        #expect(!verifier.verify(doubled).isValid)
        #expect(verifier.verify(doubled).firstFailure?.name == .parse)

        // (b) a second ContentInfo appended after the signed one.
        let appended = genuine + (try pki.signer().sign(forged))
        let verdict = verifier.verify(appended)
        #expect(!verdict.isValid)
        #expect(verdict.firstFailure?.name == .parse)
    }

    /// Duplicate bundle-id attributes in a receipt the test PKI really signed: never "last one wins".
    @Test func duplicateBundleIdentifierAttributesInASignedReceipt() throws {
        var receipt = sampleReceipt()
        receipt.unknownAttributes = [ReceiptAttribute(type: 2, version: 1, value: ([0x0C, 12] + Array("com.evil.app".utf8))[...])]
        let bytes = try pki.signer().sign(receipt)
        let verdict = verifier.verify(bytes, expecting: ReceiptExpectations(bundleIdentifier: "com.example.app"))
        #expect(!verdict.isValid)
        #expect(verdict.firstFailure?.name == .parse)
        #expect(verdict.firstFailure?.reason.contains("duplicateAttribute") == true)
    }

    /// Single-bit flips at every byte of a real Xcode receipt and of a test-PKI App Store receipt:
    /// whatever verifies must report exactly the genuine payload (flips in unsigned bytes, such as
    /// the SignedData version or the embedded root, may still verify, but can change nothing).
    @Test(arguments: ["xcode", "appStore"])
    func singleBitFlipsNeverChangeWhatVerifies(_ kind: String) throws {
        let bytes: [UInt8]
        let flipVerifier: AppReceiptVerifier
        if kind == "xcode" {
            bytes = try Fixtures.bytes("receipt-xcode-with-purchases.der")
            flipVerifier = AppReceiptVerifier(
                anchors: [try Fixtures.certificate("StoreKitTestCertificate.cer")], policy: .xcode, cache: ChainCache())
        } else {
            bytes = try pki.signer().sign(sampleReceipt())
            flipVerifier = verifier
        }
        let genuine = try AppReceipt(bytes)
        #expect(flipVerifier.verify(bytes).isValid)
        let envelope = try ReceiptEnvelope(bytes)
        // The signed payload (contiguous in the App Store layout; for the segmented Xcode payload,
        // its single segment) and the signer's certificate must never tolerate a flip.
        let payloadRange = bytes.firstRange(of: Array(envelope.payload))
        let leafRange = envelope.certificates.first.flatMap { leaf in bytes.firstRange(of: Array(leaf)) }
        var stillValid = 0
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= UInt8(1 << (index % 8))
            let verdict = flipVerifier.verify(flipped)
            if verdict.isValid {
                stillValid += 1
                #expect(verdict.receipt?.payload.elementsEqual(genuine.payload) == true, "flip at \(index) changed a valid receipt")
                #expect(verdict.receipt == genuine, "flip at \(index)")
                #expect(payloadRange?.contains(index) != true, "a flip inside the signed payload verified")
                #expect(leafRange?.contains(index) != true, "a flip inside the signer certificate verified")
            }
        }
        // Most flips must fail; those that verify touch only bytes no signature or anchor covers
        // (chiefly the embedded copy of the root, which is never what is trusted).
        #expect(stillValid < bytes.count / 2)
    }

}
