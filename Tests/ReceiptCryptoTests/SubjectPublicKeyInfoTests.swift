import ASN1
import Foundation
import ReceiptCrypto
import TestSupport
import Testing

/// `Certificate.publicKey` keeps the certificate's own SubjectPublicKeyInfo (read from the parsed
/// structure, not re-encoded through OpenSSL's key encoders): these tests hold it to the bytes the
/// certificate carries, found with the package's DER reader.
@Suite("Certificate public keys")
struct SubjectPublicKeyInfoTests {
    /// Every real certificate the tests carry: Apple's RSA roots, intermediates and leaves, the
    /// P-384 Root CA - G3 and WWDR G6, the P-256 JWS leaves, and a non-Apple CA.
    static let files: [String] =
        [
            "AppleIncRootCertificate.cer", "AppleRootCA-G2.cer", "AppleRootCA-G3.cer", "AppleWWDRCA-G5.der",
            "AppleWWDRCA-2013-serial01DEBCC4396DA010.der", "AppleiTunesStoreCertificationAuthority.der", "StoreKitTestCertificate.cer",
            "frank4dd-cacert.der", "leaf-MacAppStoreAndiTunesStoreReceiptSigning-2024-2026.der",
        ].map { "certs/\($0)" }
        + [
            "AppleWWDRCA-G6.der", "Prod-ECC-Mac-App-Store-and-iTunes-Store-Receipt-Signing.der", "testCA.der", "leaf-cert.der",
            "intermediate-ca.der",
        ].map { "jws/certs/\($0)" }

    /// The SubjectPublicKeyInfo element of a DER certificate: the seventh field of the
    /// TBSCertificate when it starts with the explicit version, the sixth otherwise.
    static func subjectPublicKeyInfo(of der: [UInt8]) throws -> [UInt8] {
        var top = try ASN1Reader(der)
        var certificate = try top.readConstructed(.sequence)
        var tbs = try certificate.readConstructed(.sequence)
        if try tbs.peekIdentifier() == ASN1Identifier(tagClass: .contextSpecific, tagNumber: 0, constructed: true) {
            try tbs.skipElement()
        }
        for _ in 0..<5 { try tbs.skipElement() }
        return Array(try tbs.readElement(.sequence).encodedBytes)
    }

    @Test("The key's SubjectPublicKeyInfo is the certificate's own, byte for byte", arguments: files)
    func keyBytesAreTheCertificates(_ file: String) throws {
        let certificate = try Certificate(derEncoded: Fixtures.bytes(file))
        let key = try certificate.publicKey
        let carried = try Self.subjectPublicKeyInfo(of: certificate.derEncoded)
        #expect(key.derEncoded == carried)
        // The same key, decoded from those bytes on their own.
        let decoded = try PublicKey(subjectPublicKeyInfoDER: carried)
        #expect(decoded == key)
        #expect(decoded.kind == key.kind)
    }

    @Test("A key taken from a certificate verifies what its private key signed, and nothing else")
    func keyFromCertificateVerifies() throws {
        let pki = try FixedTestPKI.shared()
        let message = Array("cold verification".utf8)
        let signature = try pki.leafKey.sign(message, digest: .sha256)
        let key = try pki.leaf.publicKey
        #expect(key == (try pki.leafKey.publicKey))
        #expect(key.verify(signature: signature, over: message, digest: .sha256))
        #expect(!key.verify(signature: signature, over: message + [0], digest: .sha256))
    }
}
