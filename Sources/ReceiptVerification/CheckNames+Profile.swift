extension VerificationCheck.Name {
    // MARK: The certificate profile

    /// The chain's leaf has a KeyUsage extension that includes digitalSignature (RFC 5280
    /// §4.2.1.3), and every CA certificate above it that has one includes keyCertSign.
    public static let keyUsage = VerificationCheck.Name(rawValue: "keyUsage", id: 57)
    /// The leaf is not a CA, every certificate above it is a CA (basicConstraints cA TRUE), and
    /// no CA's pathLenConstraint is exceeded by the CAs below it.
    public static let basicConstraints = VerificationCheck.Name(rawValue: "basicConstraints", id: 58)
}
