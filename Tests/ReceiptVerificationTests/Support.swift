import ASN1
import Foundation
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import TestSupport
import Testing

/// "Today" for the tests: every real App Store receipt's chain has expired by then.
let today = utc(2026, 11, 29)

extension Verdict {
    /// "✓ name: reason" lines, for failure messages.
    var summary: String { checks.map(\.description).joined(separator: "\n") }

    /// The check `name` ran and failed.
    func failed(_ name: VerificationCheck.Name) -> Bool { check(name).map { !$0.passed } ?? false }

    /// The check `name` ran and passed.
    func passed(_ name: VerificationCheck.Name) -> Bool { check(name)?.passed ?? false }
}

/// A three-certificate chain made from existing keys (no key generation), for variations of a PKI.
struct Chain {
    var root: Certificate
    var intermediate: Certificate
    var leaf: Certificate
    var leafKey: PrivateKey

    /// A signer embedding leaf, intermediate and root, as Apple does.
    func signer(digest: DigestAlgorithm = .sha256) -> ReceiptSigner {
        ReceiptSigner(key: leafKey, certificate: leaf, chain: [intermediate, root], digest: digest)
    }

    /// Re-issues `pki`'s certificates with its keys: optionally another root subject, without
    /// markers, or with another leaf validity.
    static func derived(
        from pki: TestPKI, rootSubject: [(String, String)]? = nil, intermediateMarker: Bool = true, leafMarker: Bool = true,
        leafNotBefore: Date? = nil, leafNotAfter: Date? = nil
    ) throws -> Chain {
        let defaults = TestPKI.Options()
        var rootBuilder = CertificateBuilder(
            subject: rootSubject ?? defaults.rootSubject, serialNumber: 11, notBefore: defaults.notBefore,
            notAfter: defaults.notAfter, publicKey: try pki.rootKey.publicKey)
        rootBuilder.basicConstraints = .ca()
        rootBuilder.keyUsage = [.keyCertSign, .cRLSign]
        let root = try rootBuilder.selfSigned(with: pki.rootKey)
        var intermediateBuilder = CertificateBuilder(
            subject: defaults.intermediateSubject, serialNumber: 12, notBefore: defaults.notBefore,
            notAfter: defaults.notAfter, publicKey: try pki.intermediateKey.publicKey)
        intermediateBuilder.basicConstraints = .ca(pathLength: 0)
        intermediateBuilder.keyUsage = [.keyCertSign, .cRLSign]
        if intermediateMarker { intermediateBuilder.customExtensions = [.marker(oid: TestPKI.intermediateMarkerOID)] }
        let intermediate = try intermediateBuilder.issued(by: root, signingKey: pki.rootKey)
        var leafBuilder = CertificateBuilder(
            subject: defaults.leafSubject, serialNumber: 13, notBefore: leafNotBefore ?? defaults.notBefore,
            notAfter: leafNotAfter ?? defaults.notAfter, publicKey: try pki.leafKey.publicKey)
        leafBuilder.basicConstraints = .endEntity
        leafBuilder.keyUsage = [.digitalSignature]
        if leafMarker { leafBuilder.customExtensions = [.marker(oid: TestPKI.leafMarkerOID)] }
        let leaf = try leafBuilder.issued(by: intermediate, signingKey: pki.intermediateKey)
        return Chain(root: root, intermediate: intermediate, leaf: leaf, leafKey: pki.leafKey)
    }
}

/// Apple Inc. Root's subject, copied by a self-made root in the tests.
let appleRootSubject = [("C", "US"), ("O", "Apple Inc."), ("OU", "Apple Certification Authority"), ("CN", "Apple Root CA")]

/// A sample receipt for signing: bundle com.example.app 1.2.3, created 2024-08-06T12:00:00Z,
/// bound to device 11223344-5566-7788-99AA-BBCCDDEEFF00.
func sampleReceipt(creationDate: Date = utc(2024, 8, 6, 12)) -> AppReceipt {
    var receipt = AppReceipt()
    receipt.receiptType = "ProductionSandbox"
    receipt.bundleIdentifier = "com.example.app"
    receipt.bundleIdentifierData = [0x0C, 15] + Array("com.example.app".utf8)
    receipt.appVersion = "1.2.3"
    receipt.originalAppVersion = "1.0"
    receipt.creationDate = creationDate
    receipt.opaqueValue = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
    if let device = sampleDevice, let hash = receipt.expectedHash(for: device) { receipt.sha1Hash = hash }
    var purchase = InAppPurchase()
    purchase.quantity = 1
    purchase.productIdentifier = "com.example.app.pro"
    purchase.transactionIdentifier = "2000000000000001"
    purchase.purchaseDate = utc(2024, 8, 6, 11)
    receipt.inAppPurchases = [purchase]
    return receipt
}

let sampleDevice = DeviceIdentifier("11223344-5566-7788-99AA-BBCCDDEEFF00")

/// Builds PKCS#7 SignedData from parts with the package's DER writer, so tests can make envelopes
/// the receipt signer never would (two signers, another content type, MD5, wrong messageDigest…).
/// The signatures themselves are real (`PrivateKey.sign`).
struct EnvelopeBuilder {
    struct Signer {
        var identifier: SignerIdentifier
        var digestOID: ASN1ObjectIdentifier
        var signatureOID = ASN1ObjectIdentifier(1, 2, 840, 113_549, 1, 1, 1)
        var signedAttributes: [UInt8]?  // the DER SET OF; written with tag [0]
        var signature: [UInt8]
    }

    enum SignerIdentifier {
        case issuerAndSerial(Certificate)
        case subjectKeyIdentifier([UInt8])
    }

    var digestAlgorithms: [ASN1ObjectIdentifier]
    var contentType = ReceiptOID.data
    var payload: [UInt8]
    var certificates: [Certificate]
    var signers: [Signer]

    static let sha256 = ASN1ObjectIdentifier(2, 16, 840, 1, 101, 3, 4, 2, 1)
    static let sha1 = ASN1ObjectIdentifier(1, 3, 14, 3, 2, 26)
    static let md5 = ASN1ObjectIdentifier(1, 2, 840, 113_549, 2, 5)

    /// The signed attributes SET (content type, message digest) as DER.
    static func signedAttributes(contentType: ASN1ObjectIdentifier = ReceiptOID.data, messageDigest: [UInt8]) -> [UInt8] {
        var writer = DERWriter()
        writer.appendSetOf { set in
            set.appendSequence {
                $0.appendObjectIdentifier(ReceiptOID.contentTypeAttribute)
                $0.appendSetOf { $0.appendObjectIdentifier(contentType) }
            }
            set.appendSequence {
                $0.appendObjectIdentifier(ReceiptOID.messageDigestAttribute)
                $0.appendSetOf { $0.appendOctetString(messageDigest) }
            }
        }
        return writer.bytes
    }

    func build() throws -> [UInt8] {
        var signedData = DERWriter()
        signedData.appendInteger(1)
        signedData.appendSetOf { set in
            for oid in digestAlgorithms {
                set.appendSequence {
                    $0.appendObjectIdentifier(oid)
                    $0.appendNull()
                }
            }
        }
        signedData.appendSequence { encapsulated in
            encapsulated.appendObjectIdentifier(contentType)
            encapsulated.appendConstructed(.contextSpecific(0, constructed: true)) { $0.appendOctetString(payload) }
        }
        signedData.appendConstructed(.contextSpecific(0, constructed: true)) { set in
            for certificate in certificates { set.appendEncoded(certificate.derEncoded) }
        }
        var signerInfos: [[UInt8]] = []
        for signer in signers {
            var info = DERWriter()
            let identifier = try Self.identifierDER(signer.identifier)
            let attributesContent = try signer.signedAttributes.map { try Self.content(of: $0) }
            info.appendSequence { s in
                if case .subjectKeyIdentifier = signer.identifier { s.appendInteger(3) } else { s.appendInteger(1) }
                s.appendEncoded(identifier)
                s.appendSequence {
                    $0.appendObjectIdentifier(signer.digestOID)
                    $0.appendNull()
                }
                if let attributesContent {
                    s.append(.contextSpecific(0, constructed: true), content: attributesContent)
                }
                s.appendSequence {
                    $0.appendObjectIdentifier(signer.signatureOID)
                    $0.appendNull()
                }
                s.appendOctetString(signer.signature)
            }
            signerInfos.append(info.bytes)
        }
        // SignerInfos in the order the test gives them (a SET the test may leave unsorted).
        signedData.append(.set, content: signerInfos.joined())
        var contentInfo = DERWriter()
        contentInfo.appendSequence { ci in
            ci.appendObjectIdentifier(ReceiptOID.signedData)
            ci.appendConstructed(.contextSpecific(0, constructed: true)) { $0.append(.sequence, content: signedData.bytes) }
        }
        return contentInfo.bytes
    }

    static func content(of der: [UInt8]) throws -> ArraySlice<UInt8> {
        var reader = try ASN1Reader(der, rules: .der)
        return try reader.readElement().content
    }

    static func identifierDER(_ identifier: SignerIdentifier) throws -> [UInt8] {
        var writer = DERWriter()
        switch identifier {
        case .issuerAndSerial(let certificate):
            var reader = try ASN1Reader(certificate.derEncoded, rules: .der)
            var certificateSequence = try reader.readSequence()
            var tbs = try certificateSequence.readSequence()
            _ = try tbs.readOptionalElement(.contextSpecific(0, constructed: true))
            let serial = try tbs.readElement(.integer).encodedBytes
            try tbs.skipElement()
            let issuer = try tbs.readElement(.sequence).encodedBytes
            writer.appendSequence {
                $0.appendEncoded(issuer)
                $0.appendEncoded(serial)
            }
        case .subjectKeyIdentifier(let keyIdentifier):
            writer.append(.contextSpecific(0, constructed: false), content: keyIdentifier)
        }
        return writer.bytes
    }
}
