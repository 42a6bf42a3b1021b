public import Foundation
public import ReceiptVerification

/// The App Store Server API endpoints the client calls.
public enum AppStoreServerEndpoint: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `GET /inApps/v1/transactions/{transactionId}`.
    case transactionInfo
    /// `GET /inApps/v2/history/{transactionId}`.
    case transactionHistory
    /// `GET /inApps/v1/subscriptions/{transactionId}`.
    case subscriptionStatuses
    /// `GET /inApps/v1/lookup/{orderId}`.
    case orderLookup
    /// `GET /inApps/v2/refund/lookup/{transactionId}`.
    case refundHistory
    /// `POST /inApps/v1/notifications/history`.
    case notificationHistory
    /// `POST /inApps/v1/notifications/test`.
    case requestTestNotification
    /// `GET /inApps/v1/notifications/test/{testNotificationToken}`.
    case testNotificationStatus
    /// `PUT /inApps/v1/transactions/consumption/{transactionId}`.
    case sendConsumptionInformation
    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
    case extendSubscriptionRenewalDate
    /// `PUT /inApps/v2/transactions/consumption/{transactionId}` (Send Consumption Information).
    case sendConsumptionInformationV2
    /// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`.
    case setAppAccountToken
    /// `GET /inApps/v1/transactions/appTransactions/{transactionId}`.
    case appTransactionInfo
    /// `POST /inApps/v1/transactions/{transactionId}/finish`.
    case finishTransaction
    /// `POST /inApps/v1/subscriptions/extend/mass`.
    case extendRenewalDateForAllActiveSubscribers
    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
    case renewalDateExtensionStatus
    /// Retention Messaging: `PUT /inApps/v1/messaging/image/{imageIdentifier}` (Upload Image).
    case uploadRetentionImage
    /// Retention Messaging: `GET /inApps/v1/messaging/image/list` (Get Image List).
    case retentionImageList
    /// Retention Messaging: `DELETE /inApps/v1/messaging/image/{imageIdentifier}` (Delete Image).
    case deleteRetentionImage
    /// Retention Messaging: `PUT /inApps/v1/messaging/message/{messageIdentifier}` (Upload Message).
    case uploadRetentionMessage
    /// Retention Messaging: `GET /inApps/v1/messaging/message/list` (Get Message List).
    case retentionMessageList
    /// Retention Messaging: `DELETE /inApps/v1/messaging/message/{messageIdentifier}` (Delete Message).
    case deleteRetentionMessage
    /// Retention Messaging: `PUT /inApps/v1/messaging/default/{productId}/{locale}` (Configure
    /// Default Message).
    case configureDefaultRetentionMessage
    /// Retention Messaging: `GET /inApps/v1/messaging/default/{productId}/{locale}` (Get Default
    /// Message).
    case defaultRetentionMessage
    /// Retention Messaging: `DELETE /inApps/v1/messaging/default/{productId}/{locale}` (Delete
    /// Default Message).
    case deleteDefaultRetentionMessage
    /// Advanced Commerce: `POST /advancedCommerce/v1/subscription/changePrice/{transactionId}`.
    case advancedCommerceChangePrice
    /// Advanced Commerce: `POST /advancedCommerce/v1/subscription/cancel/{transactionId}`.
    case advancedCommerceCancel
    /// Advanced Commerce: `POST /advancedCommerce/v1/subscription/changeMetadata/{transactionId}`.
    case advancedCommerceChangeMetadata
    /// Advanced Commerce: `POST /advancedCommerce/v1/subscription/migrate/{transactionId}`.
    case advancedCommerceMigrate
    /// Advanced Commerce: `POST /advancedCommerce/v1/subscription/revoke/{transactionId}`.
    case advancedCommerceRevoke
    /// Advanced Commerce: `POST /advancedCommerce/v1/transaction/requestRefund/{transactionId}`.
    case advancedCommerceRequestRefund

    /// The name, for example `transactionHistory`.
    public var description: String { rawValue }
}

/// Why an App Store Server API call returned nothing. A call either returns everything it asked
/// for, every signed value verified, or throws this: there is no partial success.
public struct AppStoreServerAPIError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable value that can grow without breaking callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String

        /// Apple answered with an error body: see ``AppStoreServerAPIError/apiErrorCode`` and
        /// ``AppStoreServerAPIError/httpStatus``.
        public static let apiError = Code(name: "apiError")
        /// HTTP 401: Apple refused the bearer token (wrong key, issuer, key id or bundle id, or an
        /// expired token).
        public static let unauthorized = Code(name: "unauthorized")
        /// HTTP 429 on every attempt (the last `Retry-After` is in ``AppStoreServerAPIError/retryAfter``).
        public static let rateLimited = Code(name: "rateLimited")
        /// Another HTTP status without Apple's error body.
        public static let httpStatus = Code(name: "httpStatus")
        /// No response within the configured timeout.
        public static let timedOut = Code(name: "timedOut")
        /// The server could not be reached (refused, unreachable, DNS failure).
        public static let cannotConnect = Code(name: "cannotConnect")
        /// Another network failure (connection lost, TLS failure, …).
        public static let transport = Code(name: "transport")
        /// The calling task was cancelled.
        public static let cancelled = Code(name: "cancelled")
        /// The body is not the response the endpoint defines (not strict JSON, a member of the
        /// wrong type, too large), or it names another app or environment.
        public static let invalidResponse = Code(name: "invalidResponse")
        /// A signed value in the response failed verification (see
        /// ``AppStoreServerAPIError/failedCheck`` and ``AppStoreServerAPIError/location``).
        public static let verificationFailed = Code(name: "verificationFailed")
        /// The request could not be made from the arguments given (an identifier with characters a
        /// path cannot carry, a value out of Apple's range).
        public static let invalidRequest = Code(name: "invalidRequest")
        /// The client's configuration cannot work (a key that is not P-256, a token lifetime over
        /// 60 minutes), or the token could not be signed.
        public static let invalidConfiguration = Code(name: "invalidConfiguration")

        /// The code's name, for example `rateLimited`.
        public var description: String { name }
    }

    /// What went wrong.
    public let code: Code
    /// The endpoint called, when a call was made.
    public let endpoint: AppStoreServerEndpoint?
    /// The URL of the last request, when one was made.
    public let url: URL?
    /// The HTTP status of the last response, if one arrived.
    public let httpStatus: Int?
    /// Apple's `errorCode`, when the body carried one (unknown codes kept as they arrived).
    public let apiErrorCode: APIErrorCode?
    /// Apple's `errorMessage`, when the body carried one.
    public let apiErrorMessage: String?
    /// The wait the last response asked for (`Retry-After`), in seconds.
    public let retryAfter: TimeInterval?
    /// The HTTP attempts made for the request that failed (retries included).
    public let attempts: Int
    /// For ``Code/verificationFailed``: the first check the signed value failed.
    public let failedCheck: VerificationCheck?
    /// For ``Code/verificationFailed`` and ``Code/invalidResponse``: where in the response, for
    /// example `page 2: signedTransactions[1]`.
    public let location: String?
    /// A sentence for people.
    public let reason: String

    /// Creates an error.
    public init(
        code: Code, endpoint: AppStoreServerEndpoint? = nil, url: URL? = nil, httpStatus: Int? = nil, apiErrorCode: APIErrorCode? = nil,
        apiErrorMessage: String? = nil, retryAfter: TimeInterval? = nil, attempts: Int = 0, failedCheck: VerificationCheck? = nil,
        location: String? = nil, reason: String
    ) {
        self.code = code
        self.endpoint = endpoint
        self.url = url
        self.httpStatus = httpStatus
        self.apiErrorCode = apiErrorCode
        self.apiErrorMessage = apiErrorMessage
        self.retryAfter = retryAfter
        self.attempts = attempts
        self.failedCheck = failedCheck
        self.location = location
        self.reason = reason
    }

    /// Whether the same call may succeed later: timeouts, connection and transport failures, rate
    /// limits, HTTP 5xx and Apple's retryable error codes.
    public var isRetryable: Bool {
        switch code {
        case .timedOut, .cannotConnect, .transport, .rateLimited: return true
        case .apiError, .httpStatus:
            if let apiErrorCode, apiErrorCode.isRetryable { return true }
            return httpStatus.map { $0 == 429 || $0 >= 500 } ?? false
        default: return false
        }
    }

    /// `"<code> from <endpoint>: <reason>"`, with the HTTP status and Apple's error code when present.
    public var description: String {
        var text = "\(code)"
        if let endpoint { text += " from \(endpoint)" }
        var details: [String] = []
        if let httpStatus { details.append("HTTP \(httpStatus)") }
        if let apiErrorCode { details.append("errorCode \(apiErrorCode)") }
        if !details.isEmpty { text += " (\(details.joined(separator: ", ")))" }
        if let location { text += " at \(location)" }
        return text + ": " + reason
    }
}
