import CryptoBaselines
import ReceiptCrypto

/// The `certificate` and `public-key` targets: ReceiptCrypto's own certificate reader
/// (`CertificateFields`, behind `Certificate(deferringOpenSSL:)`) and key import
/// (`PublicKeyImport`, `EVP_PKEY_fromdata`) differentially against OpenSSL's parsers.
///
/// Oracles: whatever the own reader accepts, `d2i_X509` accepts, all of it, and reads the same
/// fields (``OwnReaderDifferential/certificateDisagreement(_:)``); a certificate made by the own
/// reader answers every public accessor as the one OpenSSL parsed at once; whatever the key
/// import accepts, `d2i_PUBKEY` decodes to an equal key written the same way
/// (``OwnReaderDifferential/publicKeyDisagreement(_:)``).
enum CertificateReaderFuzz {
    static func certificate(_ bytes: [UInt8]) {
        if let disagreement = OwnReaderDifferential.certificateDisagreement(bytes) {
            FuzzTargets.violated("the own certificate reader and d2i_X509 disagree: \(disagreement)")
        }
        guard let deferred = try? Certificate(deferringOpenSSL: bytes), deferred.fields != nil else { return }
        guard let parsed = try? Certificate(derEncoded: bytes) else {
            FuzzTargets.violated("Certificate(derEncoded:) refuses what the own reader accepts")
        }
        if let accessor = differingAccessor(deferred, parsed) {
            FuzzTargets.violated("the own reader's certificate and OpenSSL's differ in \(accessor)")
        }
    }

    /// The first public accessor in which `deferred` (own reader) and `parsed` (OpenSSL) differ.
    static func differingAccessor(_ deferred: Certificate, _ parsed: Certificate) -> String? {
        if deferred.subject != parsed.subject { return "subject" }
        if deferred.issuer != parsed.issuer { return "issuer" }
        if deferred.serialNumber != parsed.serialNumber { return "serialNumber" }
        if deferred.version != parsed.version { return "version" }
        if deferred.signatureAlgorithmOID != parsed.signatureAlgorithmOID { return "signatureAlgorithmOID" }
        if deferred.notBefore != parsed.notBefore || deferred.notAfter != parsed.notAfter { return "validity" }
        if deferred.extensionOIDs != parsed.extensionOIDs { return "extensionOIDs" }
        for oid in parsed.extensionOIDs
        where deferred.extensionValue(oid: oid) != parsed.extensionValue(oid: oid)
            || deferred.isExtensionCritical(oid: oid) != parsed.isExtensionCritical(oid: oid)
        {
            return "extension \(oid)"
        }
        let deferredKey = try? deferred.publicKey
        let parsedKey = try? parsed.publicKey
        if deferredKey?.derEncoded != parsedKey?.derEncoded || deferredKey?.kind != parsedKey?.kind { return "publicKey" }
        // OpenSSL's path reports no basicConstraints or keyUsage for extensions it finds invalid;
        // the chain fast path leaves such certificates to OpenSSL.
        if deferred.hasInvalidExtensions != parsed.hasInvalidExtensions { return "hasInvalidExtensions" }
        if !parsed.hasInvalidExtensions {
            if deferred.isCA != parsed.isCA { return "isCA" }
            if deferred.pathLengthConstraint != parsed.pathLengthConstraint { return "pathLengthConstraint" }
            if deferred.keyUsage != parsed.keyUsage { return "keyUsage" }
        }
        if deferred.isSelfSigned != parsed.isSelfSigned { return "isSelfSigned" }
        return nil
    }

    static func publicKey(_ bytes: [UInt8]) {
        if let disagreement = OwnReaderDifferential.publicKeyDisagreement(bytes) {
            FuzzTargets.violated("EVP_PKEY_fromdata and d2i_PUBKEY disagree: \(disagreement)")
        }
    }
}
