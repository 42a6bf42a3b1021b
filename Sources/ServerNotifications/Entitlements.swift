public import Foundation

/// Why an entitlement is active or not at a date.
public enum EntitlementReason: String, Sendable, Hashable, CaseIterable {
    /// An auto-renewable subscription in its paid period (`active`).
    case subscribed
    /// A non-consumable (or a non-renewing purchase without an expiry) bought and kept (`active`).
    case purchased
    /// Renewal failed and the billing grace period still entitles (`active`, until its end).
    case gracePeriod
    /// Shared by a family member through Family Sharing (`inAppOwnershipType` `FAMILY_SHARED`),
    /// and still shared (`active`).
    case familyShared
    /// Renewal failed and the App Store is retrying to bill, outside any grace period (inactive).
    case billingRetry
    /// Refunded (`REFUND`; the transaction's `revocationDate` has passed) (inactive).
    case refunded
    /// Revoked (`REVOKE`: a family-shared purchase no longer shared) (inactive).
    case revoked
    /// A consumable: bought once and used up, never an ongoing entitlement (inactive).
    case consumed
    /// The subscription's period ended and it did not renew (inactive).
    case expired
    /// The subscription moved to another product of its subscription group that does not grant
    /// this entitlement (an upgrade, downgrade or crossgrade) (inactive).
    case replaced
    /// No stored notification tells of a product granting it (inactive).
    case none
}

/// What one configured entitlement is for one customer at a date, and why.
public struct EntitlementAnswer: Sendable, Hashable {
    /// The entitlement's name.
    public var entitlement: String
    /// Whether it entitles the customer at the date.
    public var isActive: Bool
    /// Until when it entitles, or when it stopped (milliseconds since 1970): the period's
    /// `expiresDate`, the grace period's end while in it, the `revocationDate` when refunded or
    /// revoked, the replacing transaction's purchase date when replaced; `nil` for a purchase
    /// that does not expire, a consumable, and ``EntitlementReason/none``.
    public var expiresDate: Int64?
    /// Why.
    public var reason: EntitlementReason
    /// The product of the purchase the answer comes from.
    public var productId: String?
    /// Its original transaction id.
    public var originalTransactionId: String?
    /// Its transaction id (the latest transaction of that product in the chain).
    public var transactionId: String?

    /// Creates an answer.
    public init(
        entitlement: String, isActive: Bool, expiresDate: Int64? = nil, reason: EntitlementReason, productId: String? = nil,
        originalTransactionId: String? = nil, transactionId: String? = nil
    ) {
        self.entitlement = entitlement
        self.isActive = isActive
        self.expiresDate = expiresDate
        self.reason = reason
        self.productId = productId
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
    }
}

extension EntitlementMap {
    /// Every configured entitlement, in configured order, answered from `notifications` (one
    /// customer's: those of one `appAccountToken` or one original transaction) signed at or before
    /// `date`.
    ///
    /// Each original transaction is read as ``SubscriptionState`` reads it (by what the payloads
    /// mean, never by arrival). Its current transaction answers for the entitlements its product
    /// grants: a consumable as ``EntitlementReason/consumed`` (or refunded), a revoked transaction
    /// as refunded (revoked when a `REVOKE` told it), then grace period, active (family shared,
    /// subscribed or purchased), billing retry, expired. An entitlement that only an earlier
    /// product of the chain granted is ``EntitlementReason/replaced``.
    ///
    /// When several purchases answer for one entitlement, the active one that lasts longest wins
    /// (no expiry first; on a tie, bought before family shared before grace period), else the
    /// inactive one that ended or was bought last; the larger original transaction id breaks a
    /// tie. So a consumable bought many times is reported once, by its latest purchase.
    public func answers(notifications: [StoredNotification], at date: Date) -> [EntitlementAnswer] {
        answers(notifications: notifications, atMilliseconds: StoredNotification.milliseconds(date))
    }

    /// ``answers(notifications:at:)`` at `date` in milliseconds since 1970.
    public func answers(notifications: [StoredNotification], atMilliseconds date: Int64) -> [EntitlementAnswer] {
        var chains: [String: [StoredNotification]] = [:]
        for row in notifications where row.effectiveSignedDate <= date {
            if let original = row.originalTransactionId { chains[original, default: []].append(row) }
        }
        var candidates: [String: [Candidate]] = [:]
        for (original, rows) in chains {
            guard let state = SubscriptionState(originalTransactionId: original, notifications: rows, atMilliseconds: date) else {
                continue
            }
            for entitlement in entitlements {
                guard let candidate = Candidate(entitlement: entitlement, state: state, rows: rows) else { continue }
                candidates[entitlement.name, default: []].append(candidate)
            }
        }
        return entitlements.map { entitlement in
            let best = candidates[entitlement.name]?.max { $1.isPreferred(over: $0) }
            return best?.answer(entitlement.name) ?? EntitlementAnswer(entitlement: entitlement.name, isActive: false, reason: .none)
        }
    }
}

/// One purchase's answer for one entitlement, before the best of several is chosen.
private struct Candidate {
    var isActive: Bool
    var reason: EntitlementReason
    var expiresDate: Int64?
    /// The date the choice orders by: an active answer's end (none: last), an inactive answer's
    /// end or purchase.
    var order: Int64
    var productId: String?
    var originalTransactionId: String
    var transactionId: String?

    init?(entitlement: EntitlementMap.Entitlement, state: SubscriptionState, rows: [StoredNotification]) {
        let products = Set(entitlement.productIds)
        originalTransactionId = state.originalTransactionId
        guard let product = state.productId, products.contains(product) else {
            // An earlier transaction of the chain (before an upgrade or downgrade) granted it.
            let earlier = SubscriptionState.latest(rows.filter { $0.transactionId != nil && $0.productId.map(products.contains) == true }) {
                SubscriptionState.chainPosition($0, $1)
            }
            guard let earlier else { return nil }
            isActive = false
            reason = .replaced
            let replacedAt = state.purchaseDate
            expiresDate = [earlier.expiresDate, replacedAt].compactMap { $0 }.min()
            order = expiresDate ?? earlier.purchaseDate ?? earlier.effectiveSignedDate
            productId = earlier.productId
            transactionId = earlier.transactionId
            return
        }
        productId = product
        transactionId = state.latestTransactionId
        let bought = state.purchaseDate ?? Int64.min
        if state.productType == "Consumable" {
            isActive = false
            reason = state.isRevoked ? .refunded : .consumed
            expiresDate = state.isRevoked ? state.revocationDate : nil
            order = bought
        } else if state.isRevoked {
            isActive = false
            let revokedByFamily = rows.contains { $0.notificationType == "REVOKE" && $0.transactionId == state.latestTransactionId }
            reason = revokedByFamily ? .revoked : .refunded
            expiresDate = state.revocationDate
            order = state.revocationDate ?? bought
        } else if state.isInGracePeriod {
            isActive = true
            reason = .gracePeriod
            expiresDate = state.gracePeriodExpiresDate
            order = expiresDate ?? Int64.max
        } else if state.isActive {
            isActive = true
            if state.inAppOwnershipType == "FAMILY_SHARED" {
                reason = .familyShared
            } else {
                reason = state.expiresDate != nil || state.productType == "Auto-Renewable Subscription" ? .subscribed : .purchased
            }
            expiresDate = state.expiresDate
            order = expiresDate ?? Int64.max
        } else {
            isActive = false
            reason = state.isInBillingRetryPeriod ? .billingRetry : .expired
            expiresDate = state.expiresDate
            order = expiresDate ?? bought
        }
    }

    /// Whether this answer is chosen over `other` for the same entitlement.
    func isPreferred(over other: Candidate) -> Bool {
        if isActive != other.isActive { return isActive }
        if order != other.order { return order > other.order }
        let rank = { (reason: EntitlementReason) in
            [EntitlementReason.purchased, .subscribed, .familyShared, .gracePeriod].firstIndex(of: reason) ?? 4
        }
        if rank(reason) != rank(other.reason) { return rank(reason) < rank(other.reason) }
        return SubscriptionState.compareIdentifiers(originalTransactionId, other.originalTransactionId) > 0
    }

    func answer(_ name: String) -> EntitlementAnswer {
        EntitlementAnswer(
            entitlement: name, isActive: isActive, expiresDate: expiresDate, reason: reason, productId: productId,
            originalTransactionId: originalTransactionId, transactionId: transactionId)
    }
}

extension NotificationStore {
    /// The entitlements of the customer the app knows by `appAccountToken` at `date`, from every
    /// stored notification of each original transaction one of whose notifications carries the
    /// token (two indexed lookups; see ``NotificationQuery/appAccountToken``), and the customer
    /// history a rebuild stored (``CustomerHistoryStore``) for those original transactions and
    /// that token.
    public func entitlements(appAccountToken: String, map: EntitlementMap, at date: Date) throws(NotificationStoreError)
        -> [EntitlementAnswer]
    {
        let rows = try notifications(NotificationQuery(appAccountToken: appAccountToken, includesSignedPayload: false))
        let history = try customerHistoryRows(
            originalTransactionIds: rows.compactMap(\.originalTransactionId), appAccountToken: appAccountToken)
        return map.answers(notifications: rows + history, at: date)
    }

    /// The entitlements one original transaction (one subscription group's chain, or one
    /// purchase) gives at `date`, from its notifications and its stored customer history.
    public func entitlements(originalTransactionId: String, map: EntitlementMap, at date: Date) throws(NotificationStoreError)
        -> [EntitlementAnswer]
    {
        let rows = try notifications(NotificationQuery(originalTransactionId: originalTransactionId, includesSignedPayload: false))
        let history = try customerHistoryRows(originalTransactionIds: [originalTransactionId], appAccountToken: nil)
        return map.answers(notifications: rows + history, at: date)
    }
}
