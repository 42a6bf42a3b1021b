public import Foundation

/// What the notifications of one subscription (one original transaction id) say about it at a
/// date, derived from what each payload means, never from when it was signed alone or when it
/// arrived: Apple re-signs an old transaction when it sends `REFUND_DECLINED` or
/// `CONSUMPTION_REQUEST`, may deliver out of order, and retries arrive late.
///
/// Only notifications signed at or before the date count, so a date in the past gives the state
/// as the App Store had described it by then.
///
/// - The current transaction is the last of the renewal chain: the transaction with the latest
///   `purchaseDate`, then the latest `expiresDate`, then the larger `transactionId` (a
///   transaction without a purchase date is placed by its signed date). Of the notifications that
///   carry that transaction, the one with its latest transaction `signedDate` says what it is now
///   (a refund re-signs it with a `revocationDate`); it gives ``expiresDate``, ``productId`` and
///   the revocation.
/// - The latest renewal info, by its `signedDate` (renewal info always describes the subscription
///   as it is when signed), gives ``autoRenewStatus``, billing retry and the grace period.
/// - Ties are broken by the notification's own signed date (the later notification knows more),
///   then by the notification type (a type that only re-sends what was known, such as
///   `CONSUMPTION_REQUEST`, `REFUND_DECLINED`, `PRICE_INCREASE` or `TEST`, yields to any other;
///   `REFUND` and `REVOKE` follow the notification that delivered the transaction they revoke,
///   and `REFUND_REVERSED` follows them),
///   then by the larger `notificationUUID` in byte order: the same answer whatever the arrival
///   order, in every store.
/// - ``isActive``: not revoked, and the current transaction has not expired at the date (a
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
    /// The latest transaction's `type` (`Auto-Renewable Subscription`, `Consumable`, …).
    public var productType: String?
    /// The latest transaction's `inAppOwnershipType` (`PURCHASED`, `FAMILY_SHARED`).
    public var inAppOwnershipType: String?

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
        let transactionRows = rows.filter { $0.transactionId != nil }
        let chainEnd = Self.latest(transactionRows) { a, b in Self.chainPosition(a, b) }
        let transaction = Self.latest(transactionRows.filter { $0.transactionId == chainEnd?.transactionId }) { a, b in
            Self.compare(a.transactionSignedDate ?? a.effectiveSignedDate, b.transactionSignedDate ?? b.effectiveSignedDate)
        }
        let renewal = Self.latest(
            rows.filter { $0.autoRenewStatus != nil || $0.renewalSignedDate != nil || $0.isInBillingRetryPeriod != nil }
        ) {
            a, b in Self.compare(a.renewalSignedDate ?? a.effectiveSignedDate, b.renewalSignedDate ?? b.effectiveSignedDate)
        }
        let newest = Self.latest(rows) { a, b in Self.compare(a.effectiveSignedDate, b.effectiveSignedDate) }

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
        productType = transaction?.productType
        inAppOwnershipType = transaction?.inAppOwnershipType
    }
}

extension SubscriptionState {
    /// Types whose payload only re-sends what was already known (an old transaction re-signed):
    /// they yield to any other type on a tie.
    static let informationalTypes: Set<String> = ["CONSUMPTION_REQUEST", "REFUND_DECLINED", "PRICE_INCREASE", "TEST"]

    /// Types that report an event about a transaction already delivered (its refund or revocation),
    /// so they follow the notification that delivered it when both are signed at the same instant.
    static let revokingTypes: Set<String> = ["REFUND", "REVOKE"]

    /// The order of notification types signed at the same instant: informational types first (they
    /// only re-send what was known), then those that deliver or renew a transaction, then refunds
    /// and revocations of it, then `REFUND_REVERSED`, which can only undo a refund that came before.
    static func tieRank(_ type: String?) -> Int {
        guard let type else { return 1 }
        if informationalTypes.contains(type) { return 0 }
        if revokingTypes.contains(type) { return 2 }
        return type == "REFUND_REVERSED" ? 3 : 1
    }

    /// -1, 0 or 1.
    static func compare<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a > b ? 1 : 0) }

    /// Where two transactions stand in their renewal chain (positive: `a` is later).
    static func chainPosition(_ a: StoredNotification, _ b: StoredNotification) -> Int {
        let purchase = compare(
            a.purchaseDate ?? a.transactionSignedDate ?? a.effectiveSignedDate,
            b.purchaseDate ?? b.transactionSignedDate ?? b.effectiveSignedDate)
        if purchase != 0 { return purchase }
        let expires = compare(a.expiresDate ?? Int64.min, b.expiresDate ?? Int64.min)
        if expires != 0 { return expires }
        return compareIdentifiers(a.transactionId ?? "", b.transactionId ?? "")
    }

    /// Transaction ids compared as numbers when both are digits, otherwise by their bytes.
    static func compareIdentifiers(_ a: String, _ b: String) -> Int {
        let digits = { (text: String) in !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        if digits(a), digits(b) {
            let x = a.drop { $0 == "0" }
            let y = b.drop { $0 == "0" }
            if x.utf8.count != y.utf8.count { return compare(x.utf8.count, y.utf8.count) }
        }
        return compareBytes(a, b)
    }

    /// Byte order of two strings (-1, 0, 1).
    static func compareBytes(_ a: String, _ b: String) -> Int {
        if a.utf8.lexicographicallyPrecedes(b.utf8) { return -1 }
        return b.utf8.lexicographicallyPrecedes(a.utf8) ? 1 : 0
    }

    /// The last row by `order` (positive: the first is later), ties broken by the notification's
    /// signed date, then by type (``tieRank(_:)``), then by the larger `notificationUUID` in byte
    /// order.
    static func latest(_ rows: [StoredNotification], by order: (StoredNotification, StoredNotification) -> Int) -> StoredNotification? {
        func isLater(_ a: StoredNotification, than b: StoredNotification) -> Bool {
            let primary = order(a, b)
            if primary != 0 { return primary > 0 }
            if a.effectiveSignedDate != b.effectiveSignedDate { return a.effectiveSignedDate > b.effectiveSignedDate }
            let rankA = tieRank(a.notificationType)
            let rankB = tieRank(b.notificationType)
            if rankA != rankB { return rankA > rankB }
            return compareBytes(a.notificationUUID, b.notificationUUID) > 0
        }
        var best: StoredNotification?
        for row in rows where best.map({ isLater(row, than: $0) }) ?? true { best = row }
        return best
    }
}
