// The checks of an App Store JWS: its header, its claims and the tokens nested in it.

extension VerificationCheck.Name {
    /// The JWS header's `alg` is `ES256`.
    public static let algorithm = VerificationCheck.Name(rawValue: "algorithm", id: 29)
    /// The JWS header's `x5c` holds the number of certificates the policy's chain has (3 for the
    /// App Store, 1 for Xcode).
    public static let certificateCount = VerificationCheck.Name(rawValue: "certificateCount", id: 30)
    /// The payload's `appAppleId` equals the expected one (production payloads).
    public static let appAppleId = VerificationCheck.Name(rawValue: "appAppleId", id: 31)
    /// The signed date lies within the allowed age before, and skew after, the validation time.
    public static let signedDate = VerificationCheck.Name(rawValue: "signedDate", id: 32)
    /// `deviceVerification` binds the payload to the expected device.
    public static let deviceVerification = VerificationCheck.Name(rawValue: "deviceVerification", id: 33)
    /// `appAccountToken` equals the expected one.
    public static let appAccountToken = VerificationCheck.Name(rawValue: "appAccountToken", id: 34)
    /// A notification's `data.signedTransactionInfo` verifies (same anchors, policy and time).
    public static let signedTransactionInfo = VerificationCheck.Name(rawValue: "signedTransactionInfo", id: 35)
    /// A notification's `data.signedRenewalInfo` verifies.
    public static let signedRenewalInfo = VerificationCheck.Name(rawValue: "signedRenewalInfo", id: 36)
    /// A notification's `appData.signedAppTransactionInfo` verifies.
    public static let signedAppTransactionInfo = VerificationCheck.Name(rawValue: "signedAppTransactionInfo", id: 37)
    /// The nested tokens agree with the payload that carries them (bundle id, environment) and
    /// with each other (the renewal info's `originalTransactionId` is the transaction's).
    public static let nestedAgreement = VerificationCheck.Name(rawValue: "nestedAgreement", id: 38)
    /// The payload is of the kind the verifier reads: it carries at least one of the kind's
    /// required members and none of another kind's distinguishing members (a transaction verifier
    /// given renewal info fails it, and its reason names the kind found).
    public static let kind = VerificationCheck.Name(rawValue: "kind", id: 56)
    /// The JWS header has no `crit` parameter naming an extension the verifier does not implement
    /// (it implements none, so any `crit` fails), as RFC 7515 §4.1.11 requires.
    public static let crit = VerificationCheck.Name(rawValue: "crit", id: 59)
    /// The signed date lies no more than ``JWSExpectations/maximumAge`` before the verifier's clock
    /// (never the validation time, which may be the input's own signed date).
    public static let maximumAge = VerificationCheck.Name(rawValue: "maximumAge", id: 53)
}
