public import ReceiptVerification

// The checks a notification receiver adds to the verification of the signed payload.

extension VerificationCheck.Name {
    /// A notification request body is a JSON object whose `signedPayload` is a string (App Store
    /// Server Notifications V2, `{"signedPayload": "<JWS>"}`).
    public static let body = VerificationCheck.Name(rawValue: "body")
    /// A verified notification carries a `notificationUUID` (without one it cannot be stored
    /// once).
    public static let notificationUUID = VerificationCheck.Name(rawValue: "notificationUUID")
}
