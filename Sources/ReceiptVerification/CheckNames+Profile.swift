extension VerificationCheck.Name {
    // MARK: What a signed input is, and the certificate profile

    /// The payload is of the kind the verifier reads: it carries at least one of the kind's
    /// required members and none of another kind's distinguishing members (a transaction verifier
    /// given renewal info fails it, and its reason names the kind found).
    public static let kind = VerificationCheck.Name(rawValue: "kind", id: 56)
    /// The chain's leaf has a KeyUsage extension that includes digitalSignature (RFC 5280
    /// §4.2.1.3), and every CA certificate above it that has one includes keyCertSign.
    public static let keyUsage = VerificationCheck.Name(rawValue: "keyUsage", id: 57)
    /// The leaf is not a CA, every certificate above it is a CA (basicConstraints cA TRUE), and
    /// no CA's pathLenConstraint is exceeded by the CAs below it.
    public static let basicConstraints = VerificationCheck.Name(rawValue: "basicConstraints", id: 58)
    /// The JWS header has no `crit` parameter naming an extension the verifier does not implement
    /// (it implements none, so any `crit` fails), as RFC 7515 §4.1.11 requires.
    public static let crit = VerificationCheck.Name(rawValue: "crit", id: 59)
}
