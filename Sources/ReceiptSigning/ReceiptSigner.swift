import ASN1
import Foundation
public import ReceiptCrypto
public import Receipts

/// The error `ReceiptSigning` throws.
public struct ReceiptSigningError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let reason: String
    /// The underlying error, if any.
    public let underlying: (any Error & Sendable)?

    init(_ reason: String, underlying: (any Error & Sendable)? = nil) {
        self.reason = reason
        self.underlying = underlying
    }

    /// The reason, followed by the underlying error if there is one.
    public var description: String {
        underlying.map { "\(reason): \($0)" } ?? reason
    }
}

/// How a signed receipt is laid out.
public enum ReceiptLayout: Sendable, Hashable {
    /// As the App Store writes receipts: definite-length DER throughout, sorted attribute SETs,
    /// UTC dates, certificates embedded leaf first.
    case appStore
    /// As Xcode's StoreKit testing writes them: BER indefinite lengths for the envelope, the payload
    /// in a segmented OCTET STRING, attribute SETs in model order and dates with a `+hhmm` offset.
    case xcode
}

/// Builds and signs app receipts: a PKCS#7 SignedData around the receipt payload, written by this
/// package's own DER writer and signed with RSA (PKCS#1 v1.5) or ECDSA through `ReceiptCrypto`.
///
/// Used by `receipt-tool make`, the simulated App Store, the test fixtures and the benchmarks.
public struct ReceiptSigner: Sendable {
    /// The signing key (the private half of ``certificate``).
    public var key: PrivateKey
    /// The signer certificate.
    public var certificate: Certificate
    /// Certificates embedded after the signer's (intermediates and, as Apple does, the root).
    public var chain: [Certificate]
    /// The digest signed (Apple: SHA-1 until 2023, SHA-256 since, and in Xcode receipts).
    public var digest: DigestAlgorithm
    /// Whether to add signed attributes (contentType and messageDigest). Apple's receipts have none.
    public var signedAttributes: Bool

    /// Creates a signer.
    public init(
        key: PrivateKey, certificate: Certificate, chain: [Certificate] = [], digest: DigestAlgorithm = .sha256,
        signedAttributes: Bool = false
    ) {
        self.key = key
        self.certificate = certificate
        self.chain = chain
        self.digest = digest
        self.signedAttributes = signedAttributes
    }

    /// Encodes `receipt` in `layout` and signs it. Returns the PKCS#7 bytes.
    public func sign(_ receipt: AppReceipt, layout: ReceiptLayout = .appStore) throws(ReceiptSigningError) -> [UInt8] {
        let options: ReceiptEncodingOptions = layout == .appStore ? .appStore : .xcode
        return try sign(payload: receipt.encodedPayload(options: options), layout: layout)
    }

    /// Signs an already-encoded payload. Returns the PKCS#7 bytes.
    public func sign(payload: [UInt8], layout: ReceiptLayout = .appStore) throws(ReceiptSigningError) -> [UInt8] {
        guard !digest.isRefusedForSignatures else { throw ReceiptSigningError("\(digest) is refused for signatures") }
        let (issuer, serial) = try ReceiptSigner.issuerAndSerial(of: certificate)
        let digestOID = digest.oid

        // Signed attributes (optional): SET { contentType data, messageDigest H(payload) }. The
        // signature covers the SET's DER; the SignerInfo carries its content under [0] IMPLICIT.
        var attributesDER: [UInt8]?
        var attributesContent: ArraySlice<UInt8> = []
        if signedAttributes {
            let messageDigest: [UInt8]
            do {
                messageDigest = try Digest.hash(digest, payload)
            } catch {
                throw ReceiptSigningError("cannot digest the payload", underlying: error)
            }
            var attributes = DERWriter()
            attributes.appendSetOf { set in
                set.appendSequence {
                    $0.appendObjectIdentifier(ReceiptOID.contentTypeAttribute)
                    $0.appendSetOf { $0.appendObjectIdentifier(ReceiptOID.data) }
                }
                set.appendSequence {
                    $0.appendObjectIdentifier(ReceiptOID.messageDigestAttribute)
                    $0.appendSetOf { $0.appendOctetString(messageDigest) }
                }
            }
            attributesDER = attributes.bytes
            do {
                var reader = try ASN1Reader(attributes.bytes)
                attributesContent = try reader.readElement(.set).content
            } catch {
                throw ReceiptSigningError("cannot read back the signed attributes", underlying: error)
            }
        }

        let signature: [UInt8]
        do {
            signature = try key.sign(attributesDER ?? payload, digest: digest)
        } catch {
            throw ReceiptSigningError("signing failed", underlying: error)
        }
        // PKCS#7 SignerInfos name RSA as bare rsaEncryption (the digest is named apart).
        let signatureAlgorithm: SignatureAlgorithm
        switch key.kind {
        case .rsa: signatureAlgorithm = .rsaPKCS1v15(nil)
        case .ec: signatureAlgorithm = .ecdsa(digest)
        default: throw ReceiptSigningError("unsupported key type \(key.kind)")
        }
        guard let signatureOID = signatureAlgorithm.oid else {
            throw ReceiptSigningError("no algorithm identifier for \(signatureAlgorithm)")
        }

        let ber = layout == .xcode
        var w = BERWriter(capacity: payload.count + 4096)
        func constructed(_ id: ASN1Identifier, _ body: (inout BERWriter) -> Void) {
            if ber { w.appendIndefinite(id, body) } else { w.appendConstructed(id, body) }
        }
        func algorithm(_ oid: ASN1ObjectIdentifier, into writer: inout BERWriter) {
            writer.appendSequence {
                $0.appendObjectIdentifier(oid)
                $0.appendNull()
            }
        }
        let certificates = [certificate] + chain
        // Nested closures over `w` are not allowed, so each level writes into its own writer.
        var signedData = BERWriter(capacity: payload.count + 4096)
        signedData.appendInteger(1)
        signedData.appendSetOf { algorithm(digestOID, into: &$0) }
        var encapsulated = BERWriter(capacity: payload.count + 32)
        encapsulated.appendObjectIdentifier(ReceiptOID.data)
        var eContent = BERWriter(capacity: payload.count + 16)
        if ber {
            eContent.appendSegmentedOctetString(payload, segmentSize: 4096)
        } else {
            eContent.appendOctetString(payload)
        }
        encapsulated.wrap(.contextSpecific(0, constructed: true), eContent.bytes, indefinite: ber)
        signedData.wrap(.sequence, encapsulated.bytes, indefinite: ber)
        var certificateSet = BERWriter()
        for certificate in certificates { certificateSet.appendEncoded(certificate.derEncoded) }
        signedData.append(.contextSpecific(0, constructed: true), content: certificateSet.bytes)
        var signerInfo = BERWriter()
        signerInfo.appendSequence { s in
            s.appendInteger(1)
            s.appendSequence {
                $0.appendEncoded(issuer)
                $0.appendUnsignedInteger(bytes: serial)
            }
            algorithm(digestOID, into: &s)
            if attributesDER != nil {
                s.append(.contextSpecific(0, constructed: true), content: attributesContent)
            }
            algorithm(signatureOID, into: &s)
            s.appendOctetString(signature)
        }
        signedData.append(.set, content: signerInfo.bytes)
        var explicit = BERWriter(capacity: signedData.bytes.count + 16)
        explicit.wrap(.sequence, signedData.bytes, indefinite: ber)
        constructed(.sequence) { ci in
            ci.appendObjectIdentifier(ReceiptOID.signedData)
            ci.wrap(.contextSpecific(0, constructed: true), explicit.bytes, indefinite: ber)
        }
        return w.bytes
    }

    /// The issuer Name (encoded) and serial number (content octets) of a certificate.
    static func issuerAndSerial(of certificate: Certificate) throws(ReceiptSigningError) -> ([UInt8], [UInt8]) {
        do {
            var reader = try ASN1Reader(certificate.derEncoded, rules: .der)
            var certificateSequence = try reader.readSequence()
            var tbs = try certificateSequence.readSequence()
            _ = try tbs.readOptionalElement(.contextSpecific(0, constructed: true))
            let serial = try tbs.readElement(.integer).integerBytes()
            try tbs.skipElement()  // signature algorithm
            let issuer = try tbs.readElement(.sequence).encodedBytes
            return (Array(issuer), Array(serial.drop { $0 == 0 }))
        } catch {
            throw ReceiptSigningError("cannot read the signer certificate", underlying: error)
        }
    }
}

extension BERWriter {
    /// Appends `content` (already-encoded children) under `identifier`, definite or indefinite.
    mutating func wrap(_ identifier: ASN1Identifier, _ content: [UInt8], indefinite: Bool) {
        if indefinite {
            appendIndefinite(identifier) { $0.appendEncoded(content) }
        } else {
            append(identifier.asConstructed, content: content)
        }
    }
}
