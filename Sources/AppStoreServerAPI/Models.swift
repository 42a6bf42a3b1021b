public import Foundation
import JSON
public import JWS
public import ReceiptVerification

// Requests and verified responses of the App Store Server API. Every signed value in a response
// type below came out of a valid verdict of the package's JWS verifier: the client builds these
// types only after verifying every token of the response.

// MARK: - Requests

/// A product type filter of Get Transaction History (`productType`).
public struct HistoryProductType: DocumentedStringValue {
    /// The value as Apple writes it.
    public let rawValue: String
    /// A value from its raw string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `AUTO_RENEWABLE`.
    public static let autoRenewable = HistoryProductType(rawValue: "AUTO_RENEWABLE")
    /// `NON_RENEWABLE`.
    public static let nonRenewable = HistoryProductType(rawValue: "NON_RENEWABLE")
    /// `CONSUMABLE`.
    public static let consumable = HistoryProductType(rawValue: "CONSUMABLE")
    /// `NON_CONSUMABLE`.
    public static let nonConsumable = HistoryProductType(rawValue: "NON_CONSUMABLE")
    /// Every value Apple documents.
    public static let known: [HistoryProductType] = [.autoRenewable, .nonRenewable, .consumable, .nonConsumable]
}

/// The query filters of Get Transaction History (v2). Every filter left empty is not sent.
public struct TransactionHistoryRequest: Sendable, Hashable {
    /// The order of the transactions (`sort`).
    public enum Order: String, Sendable, Hashable {
        /// `ASCENDING` (Apple's default).
        case ascending = "ASCENDING"
        /// `DESCENDING`.
        case descending = "DESCENDING"
    }

    /// `startDate`: transactions purchased at or after it.
    public var startDate: Date?
    /// `endDate`: transactions purchased before it.
    public var endDate: Date?
    /// `productId` (repeatable).
    public var productIDs: [String]
    /// `productType` (repeatable).
    public var productTypes: [HistoryProductType]
    /// `sort`.
    public var order: Order?
    /// `subscriptionGroupIdentifier` (repeatable).
    public var subscriptionGroupIdentifiers: [String]
    /// `inAppOwnershipType`.
    public var inAppOwnershipType: InAppOwnershipType?
    /// `revoked`: only refunded and revoked transactions (true) or none of them (false).
    public var revoked: Bool?

    /// Creates filters; by default none.
    public init(
        startDate: Date? = nil, endDate: Date? = nil, productIDs: [String] = [], productTypes: [HistoryProductType] = [],
        order: Order? = nil, subscriptionGroupIdentifiers: [String] = [], inAppOwnershipType: InAppOwnershipType? = nil,
        revoked: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.productIDs = productIDs
        self.productTypes = productTypes
        self.order = order
        self.subscriptionGroupIdentifiers = subscriptionGroupIdentifiers
        self.inAppOwnershipType = inAppOwnershipType
        self.revoked = revoked
    }

    /// The query items, in Apple's order.
    func queryItems() -> [(String, String)] {
        var items: [(String, String)] = []
        if let startDate { items.append(("startDate", APIDates.milliseconds(startDate))) }
        if let endDate { items.append(("endDate", APIDates.milliseconds(endDate))) }
        items += productIDs.map { ("productId", $0) }
        items += productTypes.map { ("productType", $0.rawValue) }
        if let order { items.append(("sort", order.rawValue)) }
        items += subscriptionGroupIdentifiers.map { ("subscriptionGroupIdentifier", $0) }
        if let inAppOwnershipType { items.append(("inAppOwnershipType", inAppOwnershipType.rawValue)) }
        if let revoked { items.append(("revoked", revoked ? "true" : "false")) }
        return items
    }
}

/// The body of Get Notification History.
public struct NotificationHistoryRequest: Sendable, Hashable {
    /// `startDate` (required): notifications from this date.
    public var startDate: Date
    /// `endDate` (required): notifications before this date.
    public var endDate: Date
    /// `notificationType`.
    public var notificationType: NotificationType?
    /// `notificationSubtype` (with a type).
    public var notificationSubtype: NotificationSubtype?
    /// `transactionId`: only notifications about this customer's transactions.
    public var transactionID: String?
    /// `onlyFailures`: only notifications that did not reach the server.
    public var onlyFailures: Bool?

    /// Creates a request.
    public init(
        startDate: Date, endDate: Date, notificationType: NotificationType? = nil, notificationSubtype: NotificationSubtype? = nil,
        transactionID: String? = nil, onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionID = transactionID
        self.onlyFailures = onlyFailures
    }

    /// The JSON body.
    var jsonBody: [UInt8] {
        var members: [(String, JSONValue)] = [
            ("startDate", .number(APIDates.milliseconds(startDate))), ("endDate", .number(APIDates.milliseconds(endDate))),
        ]
        if let notificationType { members.append(("notificationType", .string(notificationType.rawValue))) }
        if let notificationSubtype { members.append(("notificationSubtype", .string(notificationSubtype.rawValue))) }
        if let transactionID { members.append(("transactionId", .string(transactionID))) }
        if let onlyFailures { members.append(("onlyFailures", .bool(onlyFailures))) }
        return JSONValue.object(members).jsonBytes()
    }
}

/// The body of Send Consumption Information (`ConsumptionRequest`): what the app knows about a
/// consumable purchase whose refund the customer requested. The integer fields take Apple's
/// documented values (for example `consumptionStatus` 0 undeclared, 1 not consumed, 2 partially
/// consumed, 3 fully consumed).
public struct ConsumptionRequest: Sendable, Hashable {
    /// `customerConsented`: the customer consented to sharing the data (Apple requires true).
    public var customerConsented: Bool
    /// `consumptionStatus`, 0–3.
    public var consumptionStatus: Int
    /// `platform`, 0 undeclared, 1 Apple, 2 another platform.
    public var platform: Int
    /// `sampleContentProvided`.
    public var sampleContentProvided: Bool
    /// `deliveryStatus`, 0–5 (0: delivered and working).
    public var deliveryStatus: Int
    /// `appAccountToken` (written as an empty string when nil).
    public var appAccountToken: UUID?
    /// `accountTenure`, 0–7.
    public var accountTenure: Int
    /// `playTime`, 0–7.
    public var playTime: Int
    /// `lifetimeDollarsRefunded`, 0–7.
    public var lifetimeDollarsRefunded: Int
    /// `lifetimeDollarsPurchased`, 0–7.
    public var lifetimeDollarsPurchased: Int
    /// `userStatus`, 0–4.
    public var userStatus: Int
    /// `refundPreference`, 0–3 (optional).
    public var refundPreference: Int?

    /// Creates a request; every field Apple requires is a parameter.
    public init(
        customerConsented: Bool, consumptionStatus: Int, platform: Int, sampleContentProvided: Bool, deliveryStatus: Int,
        appAccountToken: UUID?, accountTenure: Int, playTime: Int, lifetimeDollarsRefunded: Int, lifetimeDollarsPurchased: Int,
        userStatus: Int, refundPreference: Int? = nil
    ) {
        self.customerConsented = customerConsented
        self.consumptionStatus = consumptionStatus
        self.platform = platform
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.appAccountToken = appAccountToken
        self.accountTenure = accountTenure
        self.playTime = playTime
        self.lifetimeDollarsRefunded = lifetimeDollarsRefunded
        self.lifetimeDollarsPurchased = lifetimeDollarsPurchased
        self.userStatus = userStatus
        self.refundPreference = refundPreference
    }

    /// The JSON body.
    var jsonBody: [UInt8] {
        var members: [(String, JSONValue)] = [
            ("customerConsented", .bool(customerConsented)), ("consumptionStatus", .number(String(consumptionStatus))),
            ("platform", .number(String(platform))), ("sampleContentProvided", .bool(sampleContentProvided)),
            ("deliveryStatus", .number(String(deliveryStatus))),
            ("appAccountToken", .string(appAccountToken?.uuidString.lowercased() ?? "")),
            ("accountTenure", .number(String(accountTenure))), ("playTime", .number(String(playTime))),
            ("lifetimeDollarsRefunded", .number(String(lifetimeDollarsRefunded))),
            ("lifetimeDollarsPurchased", .number(String(lifetimeDollarsPurchased))), ("userStatus", .number(String(userStatus))),
        ]
        if let refundPreference { members.append(("refundPreference", .number(String(refundPreference)))) }
        return JSONValue.object(members).jsonBytes()
    }
}

/// The body of Extend a Subscription Renewal Date.
public struct ExtendRenewalDateRequest: Sendable, Hashable {
    /// `extendByDays`, 1–90.
    public var extendByDays: Int
    /// `extendReasonCode`: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.
    public var extendReasonCode: Int
    /// `requestIdentifier`: a UUID you choose, so that a repeated request extends once.
    public var requestIdentifier: String

    /// Creates a request.
    public init(extendByDays: Int, extendReasonCode: Int, requestIdentifier: String = UUID().uuidString.lowercased()) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }

    /// The JSON body.
    var jsonBody: [UInt8] {
        JSONValue.object([
            ("extendByDays", .number(String(extendByDays))), ("extendReasonCode", .number(String(extendReasonCode))),
            ("requestIdentifier", .string(requestIdentifier)),
        ]).jsonBytes()
    }
}

// MARK: - Responses

/// One page of Get Transaction History.
public struct TransactionHistoryPage: Sendable {
    /// `revision`: pass it to get the next page (or, from the last page, later changes).
    public let revision: String
    /// `hasMore`.
    public let hasMore: Bool
    /// `bundleId`.
    public let bundleId: String?
    /// `appAppleId`.
    public let appAppleId: Int64?
    /// `environment`.
    public let environment: Environment?
    /// `signedTransactions`, each verified, in the page's order.
    public let transactions: [SignedJWS<JWSTransaction>]
}

/// Every page of Get Transaction History, in order.
public struct TransactionHistory: Sendable {
    /// Every transaction of every page, in page order.
    public let transactions: [SignedJWS<JWSTransaction>]
    /// The last page's `revision` (pass it later to get only what changed).
    public let revision: String
    /// How many pages were read.
    public let pageCount: Int
}

/// One subscription in Get All Subscription Statuses (`LastTransactionsItem`).
public struct LastTransaction: Sendable {
    /// `status`.
    public let status: SubscriptionStatus
    /// `originalTransactionId`.
    public let originalTransactionId: String
    /// `signedTransactionInfo`: the subscription's latest transaction, verified.
    public let transaction: SignedJWS<JWSTransaction>
    /// `signedRenewalInfo`: its renewal info, verified.
    public let renewalInfo: SignedJWS<JWSRenewalInfo>
}

/// One subscription group in Get All Subscription Statuses.
public struct SubscriptionGroupStatus: Sendable {
    /// `subscriptionGroupIdentifier`.
    public let subscriptionGroupIdentifier: String
    /// `lastTransactions`: one item per subscription.
    public let lastTransactions: [LastTransaction]
}

/// The answer of Get All Subscription Statuses (`StatusResponse`).
public struct SubscriptionStatuses: Sendable {
    /// `environment`.
    public let environment: Environment?
    /// `bundleId`.
    public let bundleId: String?
    /// `appAppleId`.
    public let appAppleId: Int64?
    /// `data`: the groups.
    public let groups: [SubscriptionGroupStatus]
}

/// Whether an order id is valid (`OrderLookupStatus`).
public struct OrderLookupStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: Int64
    /// A value from its number.
    public init(rawValue: Int64) { self.rawValue = rawValue }
    /// `0`: the order id is valid.
    public static let valid = OrderLookupStatus(rawValue: 0)
    /// `1`: the order id is invalid.
    public static let invalid = OrderLookupStatus(rawValue: 1)
    /// The raw value.
    public var description: String { String(rawValue) }
}

/// The answer of Look Up Order ID.
public struct OrderLookup: Sendable {
    /// `status`.
    public let status: OrderLookupStatus
    /// `signedTransactions`: the order's in-app purchases, verified.
    public let transactions: [SignedJWS<JWSTransaction>]
}

/// One page of Get Refund History.
public struct RefundHistoryPage: Sendable {
    /// `revision`.
    public let revision: String
    /// `hasMore`.
    public let hasMore: Bool
    /// `signedTransactions`: refunded and revoked transactions, verified.
    public let transactions: [SignedJWS<JWSTransaction>]
}

/// What happened to one attempt to send a notification (`sendAttemptResult`).
public struct SendAttemptResult: DocumentedStringValue {
    /// The value as Apple writes it.
    public let rawValue: String
    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `SUCCESS`.
    public static let success = SendAttemptResult(rawValue: "SUCCESS")
    /// `TIMED_OUT`.
    public static let timedOut = SendAttemptResult(rawValue: "TIMED_OUT")
    /// `TLS_ISSUE`.
    public static let tlsIssue = SendAttemptResult(rawValue: "TLS_ISSUE")
    /// `CIRCULAR_REDIRECT`.
    public static let circularRedirect = SendAttemptResult(rawValue: "CIRCULAR_REDIRECT")
    /// `NO_RESPONSE`.
    public static let noResponse = SendAttemptResult(rawValue: "NO_RESPONSE")
    /// `SOCKET_ISSUE`.
    public static let socketIssue = SendAttemptResult(rawValue: "SOCKET_ISSUE")
    /// `UNSUPPORTED_CHARSET`.
    public static let unsupportedCharset = SendAttemptResult(rawValue: "UNSUPPORTED_CHARSET")
    /// `INVALID_RESPONSE`.
    public static let invalidResponse = SendAttemptResult(rawValue: "INVALID_RESPONSE")
    /// `PREMATURE_CLOSE`.
    public static let prematureClose = SendAttemptResult(rawValue: "PREMATURE_CLOSE")
    /// `UNSUCCESSFUL_HTTP_RESPONSE_CODE`.
    public static let unsuccessfulHTTPResponseCode = SendAttemptResult(rawValue: "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
    /// `OTHER`.
    public static let other = SendAttemptResult(rawValue: "OTHER")
    /// Every value Apple documents.
    public static let known: [SendAttemptResult] = [
        .success, .timedOut, .tlsIssue, .circularRedirect, .noResponse, .socketIssue, .unsupportedCharset, .invalidResponse,
        .prematureClose, .unsuccessfulHTTPResponseCode, .other,
    ]
}

/// One attempt to send a notification (`SendAttemptItem`).
public struct SendAttempt: Sendable, Hashable {
    /// `attemptDate`.
    public let attemptDate: JWSDate
    /// `sendAttemptResult`.
    public let result: SendAttemptResult
}

/// One notification in Get Notification History (`NotificationHistoryResponseItem`).
public struct NotificationHistoryItem: Sendable {
    /// `signedPayload`: the notification, verified with its nested tokens.
    public let notification: SignedJWS<NotificationPayload>
    /// `sendAttempts`.
    public let sendAttempts: [SendAttempt]
}

/// One page of Get Notification History.
public struct NotificationHistoryPage: Sendable {
    /// `paginationToken`: pass it to get the next page.
    public let paginationToken: String?
    /// `hasMore`.
    public let hasMore: Bool
    /// `notificationHistory`.
    public let items: [NotificationHistoryItem]
}

/// The answer of Get Test Notification Status.
public struct TestNotificationStatus: Sendable {
    /// `signedPayload`: the TEST notification, verified.
    public let notification: SignedJWS<NotificationPayload>
    /// `sendAttempts`.
    public let sendAttempts: [SendAttempt]
}

/// The answer of Extend a Subscription Renewal Date.
public struct ExtendRenewalDateResponse: Sendable, Hashable {
    /// `originalTransactionId`.
    public let originalTransactionId: String?
    /// `webOrderLineItemId`.
    public let webOrderLineItemId: String?
    /// `success`.
    public let success: Bool
    /// `effectiveDate`: the new renewal date.
    public let effectiveDate: JWSDate?
}

// MARK: - Dates

enum APIDates {
    /// Whole milliseconds since 1970 as text (rounded to the nearest).
    static func milliseconds(_ date: Date) -> String {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard let integer = Int64(exactly: value) else { return value < 0 ? "0" : String(Int64.max) }
        return String(integer)
    }
}
