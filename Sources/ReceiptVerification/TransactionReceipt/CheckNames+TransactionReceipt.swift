// The checks of an iOS 6 transaction receipt's signature blob, and its own expectations.

extension VerificationCheck.Name {
    /// The transaction receipt has a `signature` whose blob decodes (version byte, signature,
    /// certificate length within bounds, certificate, nothing after it).
    public static let signatureBlob = VerificationCheck.Name(rawValue: "signatureBlob", id: 18)
    /// The blob's version is one the verifier has a policy for (2 or 3).
    public static let signatureVersion = VerificationCheck.Name(rawValue: "signatureVersion", id: 19)
    /// The blob's certificate is a DER X.509 certificate with an RSA key whose size matches the
    /// signature length.
    public static let leafCertificate = VerificationCheck.Name(rawValue: "leafCertificate", id: 20)
    /// `bvrs` equals the expected bundle version (transaction receipts).
    public static let bundleVersion = VerificationCheck.Name(rawValue: "bundleVersion", id: 23)
    /// `product-id` is one of the expected product identifiers (transaction receipts).
    public static let productIdentifier = VerificationCheck.Name(rawValue: "productIdentifier", id: 24)
}
