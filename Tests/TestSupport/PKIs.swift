package import ASN1
package import Foundation
package import ReceiptCrypto
package import ReceiptSigning

/// Test PKIs generated once per test process and shared by every test target (RSA key generation
/// costs about 100 ms per key). Each is a `Result`, so a test that needs one says `try PKIs.x.get()`.
package enum PKIs {
    private static func make(_ configure: (inout TestPKI.Options) -> Void = { _ in }) -> Result<TestPKI, CryptoError> {
        var options = TestPKI.Options()
        configure(&options)
        do throws(CryptoError) {
            return .success(try TestPKI.generate(options))
        } catch {
            return .failure(error)
        }
    }

    /// An Apple-shaped PKI (root, WWDR-like intermediate, marked leaf), valid 2020-2050. The
    /// simulated App Store of the store tests signs with it too.
    package static let apple = make()
    /// A second, unrelated Apple-shaped PKI: its root is the "wrong anchor".
    package static let other = make()
    /// A PKI with 1024-bit RSA keys.
    package static let weak = make { $0.keyBits = 1024 }
    /// An Apple-shaped PKI whose receipt-signing leaf expired at the end of 2023.
    package static let expiringLeaf = make { $0.leafNotAfter = Date(timeIntervalSince1970: 1_704_067_200) }  // 2024-01-01

    /// A self-signed StoreKit-like certificate and its key.
    package static let storeKit: Result<(key: PrivateKey, certificate: Certificate), CryptoError> = {
        do throws(CryptoError) {
            return .success(try TestPKI.storeKitTestCertificate())
        } catch {
            return .failure(error)
        }
    }()

    /// A PKI shaped like Apple's JWS PKI (P-384 root and intermediate, P-256 leaf, Apple's
    /// markers), valid 2020-2050.
    package static let jws = Result { () throws(CryptoError) in try TestPKI.jws() }
    /// A second, unrelated JWS PKI (a forger's).
    package static let otherJWS = Result { () throws(CryptoError) in try TestPKI.jws() }
    /// A forger's JWS PKI whose root copies Apple Root CA - G3's name.
    package static let rogueJWS = Result { () throws(CryptoError) in
        try TestPKI.jws {
            $0.rootSubject = [("CN", "Apple Root CA - G3"), ("OU", "Apple Certification Authority"), ("O", "Apple Inc."), ("C", "US")]
        }
    }

    /// A PKI shaped like the one that signed iOS 6 transaction receipts.
    package static let transactionReceipts = Result { () throws(CryptoError) in try TestPKI.transactionReceiptPKI() }
    /// A second, unrelated transaction-receipt PKI (a forger's).
    package static let otherTransactionReceipts = Result { () throws(CryptoError) in try TestPKI.transactionReceiptPKI() }
}

/// Apple's receipt marker OIDs.
package enum AppleOID {
    /// On receipt-signing leaves.
    package static let receiptSigningLeaf = ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 11, 1)
    /// On WWDR intermediates.
    package static let wwdrIntermediate = ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 2, 1)
}

/// A three-level RSA-2048 PKI shaped like Apple's receipt chain, built with ReceiptCrypto's
/// `CertificateBuilder` alone and with fixed serial numbers and validity, so that the crypto tests
/// can assert them: root (2020-2040, serial 1) → intermediate with 6.2.1 (2021-2035, pathlen 0,
/// serial 2) → leaf with 6.11.1 (2024-2027, serial 3).
package struct FixedTestPKI: Sendable {
    /// The root's key.
    package let rootKey: PrivateKey
    /// The self-signed root.
    package let root: Certificate
    /// The intermediate's key.
    package let intermediateKey: PrivateKey
    /// The WWDR-like intermediate.
    package let intermediate: Certificate
    /// The leaf's key.
    package let leafKey: PrivateKey
    /// The receipt-signing leaf.
    package let leaf: Certificate

    /// The root's subject.
    package static let rootSubject = [
        ("C", "US"), ("O", "RMStore Test"), ("OU", "Test Certification Authority"), ("CN", "RMStore Test Root CA"),
    ]
    /// The intermediate's subject.
    package static let intermediateSubject = [("C", "US"), ("O", "RMStore Test"), ("OU", "G1"), ("CN", "RMStore Test WWDR CA")]
    /// The leaf's subject.
    package static let leafSubject = [("C", "US"), ("O", "RMStore Test"), ("CN", "RMStore Test Receipt Signing")]

    /// An instant at which every certificate of the PKI is valid.
    package static let inside = utc(2025, 6, 1)

    /// A self-signed CA root valid 2020-2040.
    package static func makeRoot(
        key: PrivateKey, subject: [(String, String)] = rootSubject, serial: UInt64 = 1
    ) throws(CryptoError) -> Certificate {
        var builder = CertificateBuilder(
            subject: subject, serialNumber: serial,
            notBefore: utc(2020, 1, 1), notAfter: utc(2040, 1, 1), publicKey: try key.publicKey)
        builder.basicConstraints = .ca()
        builder.keyUsage = [.keyCertSign, .cRLSign]
        return try builder.selfSigned(with: key)
    }

    /// A WWDR-like intermediate (marker 6.2.1, path length 0) valid 2021-2035.
    package static func makeIntermediate(
        key: PrivateKey, issuer: Certificate, issuerKey: PrivateKey, serial: UInt64 = 2,
        subject: [(String, String)] = intermediateSubject
    ) throws(CryptoError) -> Certificate {
        var builder = CertificateBuilder(
            subject: subject, serialNumber: serial,
            notBefore: utc(2021, 1, 1), notAfter: utc(2035, 1, 1), publicKey: try key.publicKey)
        builder.basicConstraints = .ca(pathLength: 0)
        builder.keyUsage = [.keyCertSign, .cRLSign]
        builder.customExtensions = [.marker(oid: AppleOID.wwdrIntermediate)]
        return try builder.issued(by: issuer, signingKey: issuerKey)
    }

    /// A receipt-signing leaf (marker 6.11.1) valid 2024-2027.
    package static func makeLeaf(
        key: PrivateKey, issuer: Certificate, issuerKey: PrivateKey, serial: UInt64 = 3,
        digest: DigestAlgorithm = .sha256
    ) throws(CryptoError) -> Certificate {
        var builder = CertificateBuilder(
            subject: leafSubject, serialNumber: serial,
            notBefore: utc(2024, 1, 1), notAfter: utc(2027, 1, 1), publicKey: try key.publicKey)
        builder.basicConstraints = .endEntity
        builder.keyUsage = [.digitalSignature]
        builder.digest = digest
        builder.customExtensions = [.marker(oid: AppleOID.receiptSigningLeaf)]
        return try builder.issued(by: issuer, signingKey: issuerKey)
    }

    /// A fresh PKI with new keys.
    package static func make() throws(CryptoError) -> FixedTestPKI {
        let rootKey = try PrivateKey.generateRSA(bits: 2048)
        let root = try makeRoot(key: rootKey)
        let intermediateKey = try PrivateKey.generateRSA(bits: 2048)
        let intermediate = try makeIntermediate(key: intermediateKey, issuer: root, issuerKey: rootKey)
        let leafKey = try PrivateKey.generateRSA(bits: 2048)
        let leaf = try makeLeaf(key: leafKey, issuer: intermediate, issuerKey: intermediateKey)
        return FixedTestPKI(
            rootKey: rootKey, root: root, intermediateKey: intermediateKey, intermediate: intermediate,
            leafKey: leafKey, leaf: leaf)
    }

    private static let cached = Result { () throws(CryptoError) -> FixedTestPKI in try make() }

    /// One PKI shared by every test in the process (RSA key generation is the slow part).
    package static func shared() throws -> FixedTestPKI { try cached.get() }
}

/// An OID written as dotted text in a test. A malformed literal gives 0.0, which matches no
/// real OID, so the test that used it fails.
package func oid(_ dotted: String) -> ASN1ObjectIdentifier {
    ASN1ObjectIdentifier(dotted: dotted) ?? ASN1ObjectIdentifier(0, 0)
}
