// The expectations only app receipts carry.

extension VerificationCheck.Name {
    /// The app version equals the expected one (app receipt field 3).
    public static let appVersion = VerificationCheck.Name(rawValue: "appVersion", id: 22)
    /// Field 5 equals SHA-1(device identifier ‖ opaque value ‖ bundle identifier data).
    public static let deviceHash = VerificationCheck.Name(rawValue: "deviceHash", id: 25)
    /// The receipt type string is allowed (app receipts).
    public static let receiptType = VerificationCheck.Name(rawValue: "receiptType", id: 27)
    /// The receipt has not expired (field 21) at the validation time.
    public static let expirationDate = VerificationCheck.Name(rawValue: "expirationDate", id: 28)
}
