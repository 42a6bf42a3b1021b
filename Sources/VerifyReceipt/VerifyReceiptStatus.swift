/// The `status` of a verifyReceipt response, with Apple's meaning.
///
/// Any integer is representable (Apple's endpoint could return codes this library does not name);
/// ``meaning`` describes every code Apple documented, and the 21100–21199 range of internal
/// data access errors.
public struct VerifyReceiptStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric status.
    public let rawValue: Int

    /// Wraps a status code.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 0: the receipt is valid.
    public static let valid = VerifyReceiptStatus(rawValue: 0)
    /// 21000: the request was not a readable JSON object (historically also: not an HTTP POST).
    public static let malformedRequest = VerifyReceiptStatus(rawValue: 21000)
    /// 21001: not used by Apple's endpoint (undocumented).
    public static let unused21001 = VerifyReceiptStatus(rawValue: 21001)
    /// 21002: `receipt-data` is missing or malformed.
    public static let malformedReceiptData = VerifyReceiptStatus(rawValue: 21002)
    /// 21003: the receipt could not be authenticated.
    public static let notAuthenticated = VerifyReceiptStatus(rawValue: 21003)
    /// 21004: the shared secret (`password`) does not match the account's.
    public static let sharedSecretMismatch = VerifyReceiptStatus(rawValue: 21004)
    /// 21005: the receipt server is temporarily unavailable.
    public static let serverUnavailable = VerifyReceiptStatus(rawValue: 21005)
    /// 21006: the receipt is valid but the subscription has expired (iOS 6 style responses, which
    /// still carry the receipt).
    public static let subscriptionExpired = VerifyReceiptStatus(rawValue: 21006)
    /// 21007: a sandbox receipt was sent to the production endpoint; send it to sandbox.
    public static let sandboxReceiptOnProduction = VerifyReceiptStatus(rawValue: 21007)
    /// 21008: a production receipt was sent to the sandbox endpoint; send it to production.
    public static let productionReceiptOnSandbox = VerifyReceiptStatus(rawValue: 21008)
    /// 21009: internal data access error; try again later.
    public static let internalDataAccessError = VerifyReceiptStatus(rawValue: 21009)
    /// 21010: the user account cannot be found or was deleted; treat as never purchased.
    public static let accountNotFound = VerifyReceiptStatus(rawValue: 21010)

    /// Whether this is 0.
    public var isValid: Bool { rawValue == 0 }

    /// Whether the status is in Apple's 21100–21199 range of internal data access errors.
    public var isInternalDataAccessRange: Bool { (21100...21199).contains(rawValue) }

    /// Whether Apple's documentation says the same request may succeed later (21005, 21009,
    /// 21100–21199). A response's own `is-retryable` flag, when present, takes precedence.
    public var isRetryable: Bool { rawValue == 21005 || rawValue == 21009 || isInternalDataAccessRange }

    /// Whether the response still describes the receipt (0 and 21006).
    public var carriesReceipt: Bool { rawValue == 0 || rawValue == 21006 }

    /// What the status means, in a sentence.
    public var meaning: String {
        switch rawValue {
        case 0: "The receipt is valid."
        case 21000: "The request was not a readable JSON object."
        case 21001: "Unused status (undocumented)."
        case 21002: "The receipt-data property was missing or malformed."
        case 21003: "The receipt could not be authenticated."
        case 21004: "The shared secret does not match the one on file for the account."
        case 21005: "The receipt server is temporarily unavailable."
        case 21006: "The receipt is valid but the subscription has expired."
        case 21007: "This receipt is from the sandbox environment but was sent to the production endpoint."
        case 21008: "This receipt is from the production environment but was sent to the sandbox endpoint."
        case 21009: "Internal data access error; try again later."
        case 21010: "The user account cannot be found or has been deleted."
        case 21100...21199: "Internal data access error (\(rawValue)); try again later."
        default: "Unknown status \(rawValue)."
        }
    }

    /// `"21007 (This receipt is from the sandbox …)"`.
    public var description: String { "\(rawValue) (\(meaning))" }
}
