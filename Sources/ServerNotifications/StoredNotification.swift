public import Foundation
public import JWS
public import ReceiptVerification

/// One App Store Server Notification V2 as a store keeps it: the raw `signedPayload` and the
/// decoded columns a backend queries, taken from the verified notification and its nested signed
/// transaction and renewal info.
///
/// Dates are integer milliseconds since 1970, as Apple writes them (a fractional Xcode date is
/// rounded to the nearest millisecond); identifiers are the strings of the JWS, unchanged.
public struct StoredNotification: Sendable, Hashable {
    /// `notificationUUID`: the same on Apple's retries, unique in a store.
    public var notificationUUID: String
    /// `notificationType` (`SUBSCRIBED`, `DID_RENEW`, …).
    public var notificationType: String?
    /// `subtype` (`INITIAL_BUY`, `GRACE_PERIOD`, …).
    public var subtype: String?
    /// The notification's `signedDate`.
    public var signedDate: Int64?
    /// When the receiver accepted it (its clock).
    public var receivedDate: Int64
    /// `data.bundleId` (or `summary`, `externalPurchaseToken`, `appData`).
    public var bundleId: String?
    /// `data.environment`.
    public var environment: String?
    /// `data.appAppleId`.
    public var appAppleId: Int64?
    /// The signed transaction's `transactionId`.
    public var transactionId: String?
    /// The signed transaction's `originalTransactionId` (or the renewal info's, without a transaction).
    public var originalTransactionId: String?
    /// The signed transaction's `productId` (or the renewal info's).
    public var productId: String?
    /// The signed transaction's `purchaseDate`.
    public var purchaseDate: Int64?
    /// The signed transaction's `expiresDate`.
    public var expiresDate: Int64?
    /// The signed transaction's `revocationDate`.
    public var revocationDate: Int64?
    /// The signed transaction's `signedDate`.
    public var transactionSignedDate: Int64?
    /// The renewal info's `autoRenewStatus` (1 on, 0 off).
    public var autoRenewStatus: Int64?
    /// The renewal info's `isInBillingRetryPeriod`.
    public var isInBillingRetryPeriod: Bool?
    /// The renewal info's `gracePeriodExpiresDate`.
    public var gracePeriodExpiresDate: Int64?
    /// The renewal info's `signedDate`.
    public var renewalSignedDate: Int64?
    /// The `signedPayload` exactly as it arrived (the outer JWS, nested tokens inside).
    public var signedPayload: String
    /// The signed transaction's `appAccountToken` (or the renewal info's, without one in the
    /// transaction): the app's id of the customer, written lower-cased when it is a UUID (as Apple
    /// writes it), as written otherwise.
    public var appAccountToken: String?
    /// The signed transaction's `type` (`Auto-Renewable Subscription`, `Consumable`, …).
    public var productType: String?
    /// The signed transaction's `inAppOwnershipType` (`PURCHASED`, `FAMILY_SHARED`).
    public var inAppOwnershipType: String?

    /// Creates a row.
    public init(
        notificationUUID: String, notificationType: String? = nil, subtype: String? = nil, signedDate: Int64? = nil, receivedDate: Int64,
        bundleId: String? = nil, environment: String? = nil, appAppleId: Int64? = nil, transactionId: String? = nil,
        originalTransactionId: String? = nil, productId: String? = nil, purchaseDate: Int64? = nil, expiresDate: Int64? = nil,
        revocationDate: Int64? = nil, transactionSignedDate: Int64? = nil, autoRenewStatus: Int64? = nil,
        isInBillingRetryPeriod: Bool? = nil, gracePeriodExpiresDate: Int64? = nil, renewalSignedDate: Int64? = nil,
        appAccountToken: String? = nil, productType: String? = nil, inAppOwnershipType: String? = nil, signedPayload: String
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.signedDate = signedDate
        self.receivedDate = receivedDate
        self.bundleId = bundleId
        self.environment = environment
        self.appAppleId = appAppleId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.transactionSignedDate = transactionSignedDate
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.renewalSignedDate = renewalSignedDate
        self.signedPayload = signedPayload
        self.appAccountToken = appAccountToken
        self.productType = productType
        self.inAppOwnershipType = inAppOwnershipType
    }

    /// The row for a verified notification: the payload and its nested transaction and renewal
    /// info, all from one valid verdict (the nested values as the verifier verified them, never
    /// decoded again), the token it came in, and the time it was received.
    /// - Returns: `nil` when the verdict is not valid, or when the payload has no
    ///   `notificationUUID` (it could not be deduplicated).
    public init?(verified verdict: Verdict<SignedJWS<NotificationPayload>>, signedPayload: String, receivedDate: Date) {
        guard verdict.isValid, let payload = verdict.payload?.value else { return nil }
        self.init(
            payload: payload, transaction: verdict.nested.transaction?.value, renewalInfo: verdict.nested.renewalInfo?.value,
            signedPayload: signedPayload, receivedDate: receivedDate)
    }

    /// The row for a notification payload and the nested transaction and renewal info verified
    /// with it, the token it came in, and the time it was received.
    ///
    /// Verifies nothing: pass values from a valid verdict (``init(verified:signedPayload:receivedDate:)``
    /// does), as ``NotificationReceiver`` does.
    /// - Returns: `nil` when the payload has no `notificationUUID` (it could not be deduplicated).
    public init?(
        payload: NotificationPayload, transaction: JWSTransaction?, renewalInfo renewal: JWSRenewalInfo?, signedPayload: String,
        receivedDate: Date
    ) {
        guard let uuid = payload.notificationUUID else { return nil }
        let claims = payload.claims
        self.init(
            notificationUUID: uuid, notificationType: payload.notificationType?.rawValue, subtype: payload.subtype?.rawValue,
            signedDate: Self.milliseconds(payload.signedDate), receivedDate: Self.milliseconds(receivedDate),
            bundleId: claims.bundleIdentifier, environment: claims.environment?.rawValue, appAppleId: claims.appAppleId,
            transactionId: transaction?.transactionId,
            originalTransactionId: transaction?.originalTransactionId ?? renewal?.originalTransactionId,
            productId: transaction?.productId ?? renewal?.productId, purchaseDate: Self.milliseconds(transaction?.purchaseDate),
            expiresDate: Self.milliseconds(transaction?.expiresDate), revocationDate: Self.milliseconds(transaction?.revocationDate),
            transactionSignedDate: Self.milliseconds(transaction?.signedDate), autoRenewStatus: renewal?.autoRenewStatus?.rawValue,
            isInBillingRetryPeriod: renewal?.isInBillingRetryPeriod,
            gracePeriodExpiresDate: Self.milliseconds(renewal?.gracePeriodExpiresDate),
            renewalSignedDate: Self.milliseconds(renewal?.signedDate),
            appAccountToken: Self.accountToken(transaction?.appAccountToken ?? renewal?.appAccountToken),
            productType: transaction?.type?.rawValue, inAppOwnershipType: transaction?.inAppOwnershipType?.rawValue,
            signedPayload: signedPayload)
    }

    /// An `appAccountToken` as stored and queried: lower-cased when it is a UUID (Apple writes it
    /// so; a token given in capitals finds the same rows), unchanged otherwise.
    public static func accountToken(_ token: String?) -> String? {
        guard let token else { return nil }
        guard let uuid = UUID(uuidString: token) else { return token }
        return uuid.uuidString.lowercased()
    }

    /// Whole milliseconds of a JWS date: the exact integer, or the value rounded (within
    /// `JWSDate.maximumMagnitude`, so it always fits).
    public static func milliseconds(_ date: JWSDate?) -> Int64? {
        guard let date else { return nil }
        if let exact = date.milliseconds { return exact }
        return Int64(exactly: date.millisecondsSince1970.rounded())
    }

    /// Whole milliseconds of a `Date`, clamped to ±`JWSDate.maximumMagnitude`.
    public static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return 0 }
        return Int64(min(max(value, -JWSDate.maximumMagnitude), JWSDate.maximumMagnitude))
    }

    /// The date a row is ordered by when it has no `signedDate` (early-2022 notifications): its
    /// transaction's or renewal info's signed date, else its received date.
    public var effectiveSignedDate: Int64 { signedDate ?? transactionSignedDate ?? renewalSignedDate ?? receivedDate }
}
