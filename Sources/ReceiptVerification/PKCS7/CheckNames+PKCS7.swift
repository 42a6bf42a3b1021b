// The checks of a PKCS#7 (CMS) SignedData with one signer, as app receipts are signed.

extension VerificationCheck.Name {
    /// The encapsulated content type is id-data (1.2.840.113549.1.7.1).
    public static let contentType = VerificationCheck.Name(rawValue: "contentType", id: 11)
    /// The SignedData has exactly one SignerInfo.
    public static let signerCount = VerificationCheck.Name(rawValue: "signerCount", id: 12)
    /// The SignerInfo's digest is known, not refused (MD5) and listed in SignedData.digestAlgorithms.
    public static let digestAlgorithm = VerificationCheck.Name(rawValue: "digestAlgorithm", id: 13)
    /// The signature algorithm is known and agrees with the key type and the digest.
    public static let signatureAlgorithm = VerificationCheck.Name(rawValue: "signatureAlgorithm", id: 15)
    /// Signed attributes, when present, carry content type id-data and messageDigest = H(payload).
    public static let signedAttributes = VerificationCheck.Name(rawValue: "signedAttributes", id: 17)
}
