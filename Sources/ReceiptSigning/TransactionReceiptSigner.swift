public import ASN1
public import Foundation
public import ReceiptCrypto
public import Receipts

/// Signs legacy iOS 6 transaction receipts the way Apple did: an RSA PKCS#1 v1.5 signature over
/// `version byte ‖ purchase-info bytes`, packed with the leaf certificate into the signature blob,
/// inside the outer old-style property list.
///
/// For tests, the simulated store and `serve` fixtures. Both layouts Apple used are confirmed on
/// real receipts: version 2 (128-byte signature, RSA 1024) and version 3 (256-byte signature, RSA
/// 2048, seen from 2016), both SHA-1 over `version ‖ purchase-info` (see Docs/Formats.md §6.3 and §6.4).
public struct TransactionReceiptSigner: Sendable {
    /// The leaf's private key.
    public var key: PrivateKey
    /// The leaf certificate embedded in the blob.
    public var certificate: Certificate
    /// The blob version byte (2 or 3).
    public var version: UInt8
    /// The signature digest (SHA-1 for both versions; others only to test that they are refused).
    public var digest: DigestAlgorithm

    /// Creates a signer.
    public init(key: PrivateKey, certificate: Certificate, version: UInt8 = 2, digest: DigestAlgorithm = .sha1) {
        self.key = key
        self.certificate = certificate
        self.version = version
        self.digest = digest
    }

    /// Signs `purchaseInfo` (its exact `PurchaseInfo.data`) and wraps it in a receipt.
    /// - Throws: ``ReceiptSigningError`` when signing fails or the signature length does not match
    ///   the version's layout.
    public func sign(
        _ purchaseInfo: PurchaseInfo, environment: String? = "Sandbox", pod: String? = "100", signingStatus: String? = "0",
        compact: Bool = false
    ) throws(ReceiptSigningError) -> TransactionReceipt {
        let signature: [UInt8]
        do throws(CryptoError) {
            signature = try key.sign([version] + purchaseInfo.data, digest: digest)
        } catch {
            throw ReceiptSigningError("signing the purchase-info failed", underlying: error)
        }
        guard TransactionReceiptSignature.signatureLength(version: version) == signature.count else {
            throw ReceiptSigningError("a \(signature.count)-byte signature does not fit a version \(version) blob")
        }
        let blob = TransactionReceiptSignature.encode(version: version, signature: signature, certificate: certificate.derEncoded)
        do throws(ReceiptError) {
            return try TransactionReceipt(
                signatureBlob: blob, purchaseInfoData: purchaseInfo.data, environment: environment, pod: pod,
                signingStatus: signingStatus, compact: compact)
        } catch {
            throw ReceiptSigningError("the signed receipt does not parse", underlying: error)
        }
    }
}

extension TestPKI {
    /// Apple's marker on purchase-receipt (transaction receipt) signing leaves.
    public static let purchaseReceiptMarkerOID = ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 5, 1)

    /// A test PKI shaped like Apple's for transaction receipts, with a leaf key of `keyBits`:
    ///
    /// - 1024 (version-2 blobs): a root, an "iTunes Store CA"-like intermediate (no marker) and a
    ///   leaf marked 1.2.840.113635.100.6.5.1, as Apple's 2009-2016 chain;
    /// - 2048 (version-3 blobs): a root, a "WWDR"-like intermediate marked 1.2.840.113635.100.6.2.1
    ///   and a leaf marked 1.2.840.113635.100.6.11.1, as Apple's 2015-2023 chain.
    ///
    /// Certificates are signed with SHA-256. `leafMarker: false` leaves the leaf unmarked.
    public static func transactionReceiptPKI(
        keyBits: Int = 1024, notBefore: Date = Date(timeIntervalSince1970: 1_230_768_000),  // 2009-01-01
        notAfter: Date = Date(timeIntervalSince1970: 2_524_608_000), leafMarker: Bool = true
    ) throws(CryptoError) -> TestPKI {
        let rootKey = try PrivateKey.generateRSA(bits: 2048)
        var rootBuilder = CertificateBuilder(
            subject: [("C", "US"), ("O", "RMStore Test"), ("CN", "RMStore Test Legacy Root")], serialNumber: 1,
            notBefore: notBefore, notAfter: notAfter, publicKey: try rootKey.publicKey)
        rootBuilder.basicConstraints = .ca()
        rootBuilder.keyUsage = [.keyCertSign, .cRLSign]
        let root = try rootBuilder.selfSigned(with: rootKey)

        let intermediateKey = try PrivateKey.generateRSA(bits: 2048)
        var intermediateBuilder = CertificateBuilder(
            subject: [
                ("C", "US"), ("O", "RMStore Test"), ("CN", keyBits == 1024 ? "RMStore Test iTunes Store CA" : "RMStore Test WWDR CA"),
            ], serialNumber: 2, notBefore: notBefore, notAfter: notAfter, publicKey: try intermediateKey.publicKey)
        intermediateBuilder.basicConstraints = .ca(pathLength: 0)
        intermediateBuilder.keyUsage = [.keyCertSign, .cRLSign]
        if keyBits != 1024 { intermediateBuilder.customExtensions = [.marker(oid: intermediateMarkerOID)] }
        let intermediate = try intermediateBuilder.issued(by: root, signingKey: rootKey)

        let leafKey = try PrivateKey.generateRSA(bits: keyBits)
        var leafBuilder = CertificateBuilder(
            subject: [("C", "US"), ("O", "RMStore Test"), ("CN", "RMStore Test PurchaseReceiptCertificate")], serialNumber: 3,
            notBefore: notBefore, notAfter: notAfter, publicKey: try leafKey.publicKey)
        leafBuilder.basicConstraints = .endEntity
        leafBuilder.keyUsage = [.digitalSignature]
        if leafMarker {
            leafBuilder.customExtensions = [.marker(oid: keyBits == 1024 ? purchaseReceiptMarkerOID : leafMarkerOID)]
        }
        let leaf = try leafBuilder.issued(by: intermediate, signingKey: intermediateKey)
        return TestPKI(
            rootKey: rootKey, root: root, intermediateKey: intermediateKey, intermediate: intermediate, leafKey: leafKey, leaf: leaf)
    }

    /// A transaction-receipt signer with this PKI's leaf: version 2 for 1024-bit leaves, version 3
    /// for larger ones, SHA-1 (what both versions use) unless `digest` says otherwise.
    public func transactionReceiptSigner(digest: DigestAlgorithm = .sha1) throws(CryptoError) -> TransactionReceiptSigner {
        let bits = try leaf.publicKey.bits
        return TransactionReceiptSigner(key: leafKey, certificate: leaf, version: bits == 1024 ? 2 : 3, digest: digest)
    }
}
