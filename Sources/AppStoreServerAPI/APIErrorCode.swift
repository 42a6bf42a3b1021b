/// An App Store Server API error code: the numeric `errorCode` Apple's error responses carry
/// (`{"errorCode": 4040010, "errorMessage": "Transaction id not found."}`).
///
/// The codes Apple documents are named below; any other code is kept as it arrived (``name`` is
/// then nil), so a code Apple adds later is still reported exactly.
public struct APIErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The number as Apple sent it.
    public let rawValue: Int64

    /// A code from its number (known or not).
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// `4000000`: an invalid request.
    public static let generalBadRequest = APIErrorCode(rawValue: 4_000_000)
    /// `4000002`: an invalid app identifier.
    public static let invalidAppIdentifier = APIErrorCode(rawValue: 4_000_002)
    /// `4000005`: an invalid request revision.
    public static let invalidRequestRevision = APIErrorCode(rawValue: 4_000_005)
    /// `4000006`: an invalid transaction identifier.
    public static let invalidTransactionId = APIErrorCode(rawValue: 4_000_006)
    /// `4000008`: an invalid original transaction identifier.
    public static let invalidOriginalTransactionId = APIErrorCode(rawValue: 4_000_008)
    /// `4000009`: an invalid extend-by-days value.
    public static let invalidExtendByDays = APIErrorCode(rawValue: 4_000_009)
    /// `4000010`: an invalid extension reason code.
    public static let invalidExtendReasonCode = APIErrorCode(rawValue: 4_000_010)
    /// `4000011`: an invalid request identifier.
    public static let invalidRequestIdentifier = APIErrorCode(rawValue: 4_000_011)
    /// `4000012`: the start date is earlier than the earliest allowed date.
    public static let startDateTooFarInPast = APIErrorCode(rawValue: 4_000_012)
    /// `4000013`: the end date precedes the start date, or the two are equal.
    public static let startDateAfterEndDate = APIErrorCode(rawValue: 4_000_013)
    /// `4000014`: an invalid pagination token.
    public static let invalidPaginationToken = APIErrorCode(rawValue: 4_000_014)
    /// `4000015`: an invalid start date.
    public static let invalidStartDate = APIErrorCode(rawValue: 4_000_015)
    /// `4000016`: an invalid end date.
    public static let invalidEndDate = APIErrorCode(rawValue: 4_000_016)
    /// `4000017`: the pagination token expired.
    public static let paginationTokenExpired = APIErrorCode(rawValue: 4_000_017)
    /// `4000018`: an invalid notification type or subtype.
    public static let invalidNotificationType = APIErrorCode(rawValue: 4_000_018)
    /// `4000019`: too many filters in one request.
    public static let multipleFiltersSupplied = APIErrorCode(rawValue: 4_000_019)
    /// `4000020`: an invalid test notification token.
    public static let invalidTestNotificationToken = APIErrorCode(rawValue: 4_000_020)
    /// `4000021`: an invalid sort parameter.
    public static let invalidSort = APIErrorCode(rawValue: 4_000_021)
    /// `4000022`: an invalid product type parameter.
    public static let invalidProductType = APIErrorCode(rawValue: 4_000_022)
    /// `4000023`: an invalid product identifier parameter.
    public static let invalidProductId = APIErrorCode(rawValue: 4_000_023)
    /// `4000024`: an invalid subscription group identifier.
    public static let invalidSubscriptionGroupIdentifier = APIErrorCode(rawValue: 4_000_024)
    /// `4000025`: an invalid `exclude-revoked` parameter (deprecated by Apple).
    public static let invalidExcludeRevoked = APIErrorCode(rawValue: 4_000_025)
    /// `4000026`: an invalid in-app ownership type parameter.
    public static let invalidInAppOwnershipType = APIErrorCode(rawValue: 4_000_026)
    /// `4000027`: a required storefront country code list is empty.
    public static let invalidEmptyStorefrontCountryCodeList = APIErrorCode(rawValue: 4_000_027)
    /// `4000028`: an invalid storefront country code.
    public static let invalidStorefrontCountryCode = APIErrorCode(rawValue: 4_000_028)
    /// `4000030`: an invalid `revoked` parameter.
    public static let invalidRevoked = APIErrorCode(rawValue: 4_000_030)
    /// `4000031`: an invalid `status` parameter.
    public static let invalidStatus = APIErrorCode(rawValue: 4_000_031)
    /// `4000032`: an invalid account tenure.
    public static let invalidAccountTenure = APIErrorCode(rawValue: 4_000_032)
    /// `4000033`: an invalid app account token.
    public static let invalidAppAccountToken = APIErrorCode(rawValue: 4_000_033)
    /// `4000034`: an invalid consumption status.
    public static let invalidConsumptionStatus = APIErrorCode(rawValue: 4_000_034)
    /// `4000035`: the customer-consented field is invalid or false.
    public static let invalidCustomerConsented = APIErrorCode(rawValue: 4_000_035)
    /// `4000036`: an invalid delivery status.
    public static let invalidDeliveryStatus = APIErrorCode(rawValue: 4_000_036)
    /// `4000037`: an invalid lifetime-dollars-purchased value.
    public static let invalidLifetimeDollarsPurchased = APIErrorCode(rawValue: 4_000_037)
    /// `4000038`: an invalid lifetime-dollars-refunded value.
    public static let invalidLifetimeDollarsRefunded = APIErrorCode(rawValue: 4_000_038)
    /// `4000039`: an invalid platform.
    public static let invalidPlatform = APIErrorCode(rawValue: 4_000_039)
    /// `4000040`: an invalid play time.
    public static let invalidPlayTime = APIErrorCode(rawValue: 4_000_040)
    /// `4000041`: an invalid sample-content-provided value.
    public static let invalidSampleContentProvided = APIErrorCode(rawValue: 4_000_041)
    /// `4000042`: an invalid user status.
    public static let invalidUserStatus = APIErrorCode(rawValue: 4_000_042)
    /// `4000043`: the transaction is not a consumable (deprecated by Apple).
    public static let invalidTransactionNotConsumable = APIErrorCode(rawValue: 4_000_043)
    /// `4000047`: the transaction is of an in-app purchase type the endpoint does not support.
    public static let invalidTransactionTypeNotSupported = APIErrorCode(rawValue: 4_000_047)
    /// `4000048`: the endpoint does not take an app transaction identifier.
    public static let appTransactionIdNotSupported = APIErrorCode(rawValue: 4_000_048)
    /// `4000183`: the app account token is not a valid UUID.
    public static let invalidAppAccountTokenUUID = APIErrorCode(rawValue: 4_000_183)
    /// `4000185`: the endpoint does not support Family Sharing transactions.
    public static let familyTransactionNotSupported = APIErrorCode(rawValue: 4_000_185)
    /// `4000187`: the endpoint expects an original transaction identifier.
    public static let transactionIdIsNotOriginalTransactionId = APIErrorCode(rawValue: 4_000_187)
    /// `4030004`: the subscription's state does not allow a renewal-date extension.
    public static let subscriptionExtensionIneligible = APIErrorCode(rawValue: 4_030_004)
    /// `4030005`: the subscription already had the most extensions allowed.
    public static let subscriptionMaxExtension = APIErrorCode(rawValue: 4_030_005)
    /// `4030007`: a Family Sharing subscription cannot be extended directly.
    public static let familySharedSubscriptionExtensionIneligible = APIErrorCode(rawValue: 4_030_007)
    /// `4040001`: the App Store account was not found.
    public static let accountNotFound = APIErrorCode(rawValue: 4_040_001)
    /// `4040002`: the account was not found; try again.
    public static let accountNotFoundRetryable = APIErrorCode(rawValue: 4_040_002)
    /// `4040003`: the app was not found.
    public static let appNotFound = APIErrorCode(rawValue: 4_040_003)
    /// `4040004`: the app was not found; try again.
    public static let appNotFoundRetryable = APIErrorCode(rawValue: 4_040_004)
    /// `4040005`: the original transaction identifier was not found.
    public static let originalTransactionIdNotFound = APIErrorCode(rawValue: 4_040_005)
    /// `4040006`: the original transaction identifier was not found; try again.
    public static let originalTransactionIdNotFoundRetryable = APIErrorCode(rawValue: 4_040_006)
    /// `4040007`: no App Store Server Notifications URL is set for the app in this environment.
    public static let serverNotificationUrlNotFound = APIErrorCode(rawValue: 4_040_007)
    /// `4040008`: the test notification token expired or its status is not available.
    public static let testNotificationNotFound = APIErrorCode(rawValue: 4_040_008)
    /// `4040009`: no renewal-date extension request matches.
    public static let statusRequestNotFound = APIErrorCode(rawValue: 4_040_009)
    /// `4040010`: the transaction identifier was not found.
    public static let transactionIdNotFound = APIErrorCode(rawValue: 4_040_010)
    /// `4040019`: no app transaction exists for the customer.
    public static let appTransactionDoesNotExist = APIErrorCode(rawValue: 4_040_019)
    /// `4290000`: the request exceeded the rate limit.
    public static let rateLimitExceeded = APIErrorCode(rawValue: 4_290_000)
    /// `5000000`: a general internal error.
    public static let generalInternal = APIErrorCode(rawValue: 5_000_000)
    /// `5000001`: an internal error; try again.
    public static let generalInternalRetryable = APIErrorCode(rawValue: 5_000_001)

    /// Every code named above, by number.
    static let names: [Int64: String] = [
        4_000_000: "generalBadRequest", 4_000_002: "invalidAppIdentifier", 4_000_005: "invalidRequestRevision",
        4_000_006: "invalidTransactionId", 4_000_008: "invalidOriginalTransactionId", 4_000_009: "invalidExtendByDays",
        4_000_010: "invalidExtendReasonCode", 4_000_011: "invalidRequestIdentifier", 4_000_012: "startDateTooFarInPast",
        4_000_013: "startDateAfterEndDate", 4_000_014: "invalidPaginationToken", 4_000_015: "invalidStartDate",
        4_000_016: "invalidEndDate", 4_000_017: "paginationTokenExpired", 4_000_018: "invalidNotificationType",
        4_000_019: "multipleFiltersSupplied", 4_000_020: "invalidTestNotificationToken", 4_000_021: "invalidSort",
        4_000_022: "invalidProductType", 4_000_023: "invalidProductId", 4_000_024: "invalidSubscriptionGroupIdentifier",
        4_000_025: "invalidExcludeRevoked", 4_000_026: "invalidInAppOwnershipType", 4_000_027: "invalidEmptyStorefrontCountryCodeList",
        4_000_028: "invalidStorefrontCountryCode", 4_000_030: "invalidRevoked", 4_000_031: "invalidStatus",
        4_000_032: "invalidAccountTenure", 4_000_033: "invalidAppAccountToken", 4_000_034: "invalidConsumptionStatus",
        4_000_035: "invalidCustomerConsented", 4_000_036: "invalidDeliveryStatus", 4_000_037: "invalidLifetimeDollarsPurchased",
        4_000_038: "invalidLifetimeDollarsRefunded", 4_000_039: "invalidPlatform", 4_000_040: "invalidPlayTime",
        4_000_041: "invalidSampleContentProvided", 4_000_042: "invalidUserStatus", 4_000_043: "invalidTransactionNotConsumable",
        4_000_047: "invalidTransactionTypeNotSupported", 4_000_048: "appTransactionIdNotSupported",
        4_000_183: "invalidAppAccountTokenUUID", 4_000_185: "familyTransactionNotSupported",
        4_000_187: "transactionIdIsNotOriginalTransactionId", 4_030_004: "subscriptionExtensionIneligible",
        4_030_005: "subscriptionMaxExtension", 4_030_007: "familySharedSubscriptionExtensionIneligible", 4_040_001: "accountNotFound",
        4_040_002: "accountNotFoundRetryable", 4_040_003: "appNotFound", 4_040_004: "appNotFoundRetryable",
        4_040_005: "originalTransactionIdNotFound", 4_040_006: "originalTransactionIdNotFoundRetryable",
        4_040_007: "serverNotificationUrlNotFound", 4_040_008: "testNotificationNotFound", 4_040_009: "statusRequestNotFound",
        4_040_010: "transactionIdNotFound", 4_040_019: "appTransactionDoesNotExist", 4_290_000: "rateLimitExceeded",
        5_000_000: "generalInternal",
        5_000_001: "generalInternalRetryable",
    ]

    /// The name of a code Apple documents (`transactionIdNotFound`); nil for any other code.
    public var name: String? { Self.names[rawValue] }

    /// Whether Apple documents the code.
    public var isKnown: Bool { name != nil }

    /// Whether Apple says the same request may succeed later: the `…Retryable` codes, the rate
    /// limit and the general internal errors.
    public var isRetryable: Bool {
        switch self {
        case .accountNotFoundRetryable, .appNotFoundRetryable, .originalTransactionIdNotFoundRetryable, .rateLimitExceeded,
            .generalInternal, .generalInternalRetryable:
            true
        default: false
        }
    }

    /// `transactionIdNotFound (4040010)`, or the number alone for a code Apple does not document.
    public var description: String { name.map { "\($0) (\(rawValue))" } ?? String(rawValue) }
}
