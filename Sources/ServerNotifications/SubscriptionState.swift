public import Foundation

/// What the notifications of one subscription (one original transaction id) say about it at a
/// date: the latest known transaction and renewal info, each chosen by its signed date (not by
/// arrival: Apple may deliver out of order, and retries arrive late), then read at the date.
///
/// Only notifications signed at or before the date count, so a date in the past gives the state
/// as the App Store had described it by then.
///
/// - The latest transaction is the one with the latest transaction `signedDate` (a notification's
///   own signed date when its transaction has none); it gives ``expiresDate``, ``productId`` and
///   the revocation.
/// - The latest renewal info, likewise by its `signedDate`, gives ``autoRenewStatus``, billing
///   retry and the grace period.
/// - ``isActive``: not revoked, and the latest transaction has not expired at the date (a
///   purchase without `expiresDate` does not expire), or the subscription is in its billing grace
///   period.
public struct SubscriptionState: Sendable, Hashable {
    /// The subscription's original transaction id.
    public var originalTransactionId: String
    /// The date the state is read at, in milliseconds since 1970.
    public var date: Int64
    /// The latest transaction's `transactionId`.
    public var latestTransactionId: String?
    /// The latest transaction's `productId`.
    public var productId: String?
    /// The latest transaction's `purchaseDate`.
    public var purchaseDate: Int64?
    /// The latest transaction's `expiresDate`.
    public var expiresDate: Int64?
    /// The latest transaction's `revocationDate`.
    public var revocationDate: Int64?
    /// Whether the subscription entitles the customer at the date.
    public var isActive: Bool
    /// The latest renewal info's `autoRenewStatus` (1 on, 0 off).
    public var autoRenewStatus: Int64?
    /// Whether the latest transaction was refunded or revoked by the date.
    public var isRevoked: Bool
    /// Whether the latest renewal info says the App Store is retrying to bill.
    public var isInBillingRetryPeriod: Bool
    /// The latest renewal info's `gracePeriodExpiresDate`.
    public var gracePeriodExpiresDate: Int64?
    /// Whether the date lies in the billing grace period (billing retry and before
    /// ``gracePeriodExpiresDate``).
    public var isInGracePeriod: Bool
    /// The type of the latest notification (by signed date).
    public var latestNotificationType: String?
    /// Its subtype.
    public var latestSubtype: String?
    /// The notifications that counted.
    public var notificationCount: Int

    /// Derives the state at `date` from `notifications` (those of other original transactions are
    /// ignored). `nil` when none counts.
    public init?(originalTransactionId: String, notifications: [StoredNotification], at date: Date) {
        self.init(
            originalTransactionId: originalTransactionId, notifications: notifications,
            atMilliseconds: StoredNotification.milliseconds(date))
    }

    /// Derives the state at `date` (milliseconds since 1970).
    public init?(originalTransactionId: String, notifications: [StoredNotification], atMilliseconds date: Int64) {
        let rows = notifications.filter { $0.originalTransactionId == originalTransactionId && $0.effectiveSignedDate <= date }
        guard !rows.isEmpty else { return nil }
        /// Later signed first, then later received, then the UUID for a stable answer.
        func isLater(_ a: (Int64, StoredNotification), than b: (Int64, StoredNotification)) -> Bool {
            if a.0 != b.0 { return a.0 > b.0 }
            if a.1.effectiveSignedDate != b.1.effectiveSignedDate { return a.1.effectiveSignedDate > b.1.effectiveSignedDate }
            if a.1.receivedDate != b.1.receivedDate { return a.1.receivedDate > b.1.receivedDate }
            return a.1.notificationUUID > b.1.notificationUUID
        }
        func latest(_ candidates: [(Int64, StoredNotification)]) -> StoredNotification? {
            var best: (Int64, StoredNotification)?
            for candidate in candidates where best.map({ isLater(candidate, than: $0) }) ?? true { best = candidate }
            return best?.1
        }
        let transaction = latest(
            rows.filter { $0.transactionId != nil }.map { ($0.transactionSignedDate ?? $0.effectiveSignedDate, $0) })
        let renewal = latest(
            rows.filter { $0.autoRenewStatus != nil || $0.renewalSignedDate != nil || $0.isInBillingRetryPeriod != nil }
                .map { ($0.renewalSignedDate ?? $0.effectiveSignedDate, $0) })
        let newest = latest(rows.map { ($0.effectiveSignedDate, $0) })

        self.originalTransactionId = originalTransactionId
        self.date = date
        latestTransactionId = transaction?.transactionId
        productId = transaction?.productId ?? renewal?.productId
        purchaseDate = transaction?.purchaseDate
        expiresDate = transaction?.expiresDate
        revocationDate = transaction?.revocationDate
        isRevoked = transaction?.revocationDate.map { $0 <= date } ?? false
        autoRenewStatus = renewal?.autoRenewStatus
        isInBillingRetryPeriod = renewal?.isInBillingRetryPeriod ?? false
        gracePeriodExpiresDate = renewal?.gracePeriodExpiresDate
        isInGracePeriod = isInBillingRetryPeriod && (gracePeriodExpiresDate.map { $0 > date } ?? false)
        let current = transaction.map { row in row.expiresDate.map { $0 > date } ?? true } ?? false
        isActive = !isRevoked && (current || isInGracePeriod)
        latestNotificationType = newest?.notificationType
        latestSubtype = newest?.subtype
        notificationCount = rows.count
    }
}
