// The simulated App Store's value types: subscription statuses, purchase records, subscription
// state, and the App Store Server API's view of them.

public import Foundation
import Internals
public import JWS
import RMStore

// MARK: - Subscription statuses

/// One subscription group's subscriptions (the App Store Server API's
/// `SubscriptionGroupIdentifierItem`), each signed (``SimulatedSubscriptionGroupStatus``) or not
/// yet (``SimulatedSubscriptionGroupContents``).
public struct SimulatedSubscriptionGroup<Subscription: Sendable>: Sendable {
    /// `subscriptionGroupIdentifier`.
    public var subscriptionGroupIdentifier: String
    /// `lastTransactions`: one entry per subscription (original transaction) in the group.
    public var lastTransactions: [Subscription]

    /// Creates a value.
    public init(subscriptionGroupIdentifier: String, lastTransactions: [Subscription]) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}

/// One subscription group's subscriptions, signed: what Get All Subscription Statuses answers.
public typealias SimulatedSubscriptionGroupStatus = SimulatedSubscriptionGroup<SimulatedSubscriptionStatus>

/// One subscription group's subscriptions, unsigned (see
/// ``SimulatedAppStore/subscriptionStatusContents()``).
public typealias SimulatedSubscriptionGroupContents = SimulatedSubscriptionGroup<SimulatedSubscriptionContents>

/// One subscription's status and latest signed data (the App Store Server API's
/// `LastTransactionsItem`).
public struct SimulatedSubscriptionStatus: Sendable {
    /// `status`: active, expired, in billing retry, in the billing grace period, or revoked.
    public var status: SubscriptionStatus
    /// `originalTransactionId`.
    public var originalTransactionIdentifier: String
    /// `signedTransactionInfo`: the latest transaction of the subscription, signed.
    public var signedTransactionInfo: String
    /// `signedRenewalInfo`: its renewal info, signed.
    public var signedRenewalInfo: String

    /// Creates a value.
    public init(status: SubscriptionStatus, originalTransactionIdentifier: String, signedTransactionInfo: String, signedRenewalInfo: String)
    {
        self.status = status
        self.originalTransactionIdentifier = originalTransactionIdentifier
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}

// MARK: - Private types

struct WeakQueueObserver {
    weak var value: (any PaymentQueueObserver)?
}

struct PendingPayment {
    let payment: Payment
    let identifier: String
}

struct PurchaseRecord {
    var receiptEntry: ReceiptInAppPurchase
    let applicationUsername: String?
    var finished = false
    /// What the signed transaction says besides the receipt entry (fixed at purchase time).
    var transactionReason: TransactionReason = .purchase
    var price: Decimal?
    var currency: String?
    var subscriptionGroupIdentifier: String?
    var revocationReason: RevocationReason?
    /// Bought by this customer, or shared with them through Family Sharing.
    var ownershipType: InAppOwnershipType = .purchased
}

struct SubscriptionState {
    /// The product of the current period (an upgrade changes it).
    var productIdentifier: String
    let originalTransactionIdentifier: String
    let originalPurchaseDate: Date
    var expirationDate: Date
    var period: SubscriptionPeriod
    var autoRenews: Bool
    let applicationUsername: String?
    /// Renewal failed and the App Store is retrying to bill.
    var inBillingRetry = false
    /// The end of the billing grace period, while in one.
    var gracePeriodExpires: Date?
    /// `GRACE_PERIOD_EXPIRED` was told.
    var gracePeriodNotified = false
    /// `EXPIRED` was told.
    var expiryNotified = false
    /// It expired because billing never recovered.
    var expiredByBilling = false
    /// The price of the next renewals after a price increase.
    var increasedPrice: Decimal?
    /// Whether the customer has consented to (or was notified of) that increase.
    var priceIncreaseStatus: PriceIncreaseStatus?
    /// Bought by this customer, or shared through Family Sharing (its renewals too).
    var ownershipType: InAppOwnershipType = .purchased
}

struct DownloadRecord {
    var download: Download
    let content: SimulatedDownloadContent
    var nextStep = 0
    var started = false
    /// Bumped by pause, resume and cancel, so that steps scheduled before are dropped.
    var generation = 0
}

// MARK: - App Store Server API state

extension SimulatedAppStore {
    /// Every purchase of the app (renewals included), in order, with its current state (revocation
    /// fields after a refund) and `signedDate` now: what the App Store Server API's Get Transaction
    /// History signs.
    public func transactionHistoryContents() -> [TransactionContents] {
        purchases.map { transactionContents(for: $0) }
    }

    /// Every auto-renewable subscription of the app, by subscription group (in order of first
    /// purchase), each with its status now and the contents of its latest transaction and renewal
    /// info: what Get All Subscription Statuses signs (``subscriptionGroupStatuses()`` signs it).
    public func subscriptionStatusContents() -> [SimulatedSubscriptionGroupContents] {
        let now = clock.now
        var groups: [SimulatedSubscriptionGroupContents] = []
        var started: [String] = []
        for record in purchases where record.receiptEntry.productType == .autoRenewableSubscription {
            let original = record.receiptEntry.originalTransactionIdentifier
            if !started.contains(original) { started.append(original) }
        }
        for original in started {
            guard let state = subscriptions[original],
                let latest = purchases.last(where: { $0.receiptEntry.originalTransactionIdentifier == original }),
                let renewal = renewalInfoContents(originalTransactionIdentifier: original)
            else { continue }
            let status = subscriptionStatus(originalTransactionIdentifier: original) ?? (state.expirationDate > now ? .active : .expired)
            let item = SimulatedSubscriptionContents(
                status: status, originalTransactionIdentifier: original, transaction: transactionContents(for: latest), renewalInfo: renewal
            )
            let group = latest.subscriptionGroupIdentifier ?? ""
            if let index = groups.firstIndex(where: { $0.subscriptionGroupIdentifier == group }) {
                groups[index].lastTransactions.append(item)
            } else {
                groups.append(SimulatedSubscriptionGroupContents(subscriptionGroupIdentifier: group, lastTransactions: [item]))
            }
        }
        return groups
    }

    /// Extends an active subscription's renewal date by `days` (the App Store Server API's Extend
    /// a Subscription Renewal Date): the current period, its record in the receipt and the signed
    /// transaction end later, the subscription renews then, and a new receipt is issued. Returns
    /// the new renewal date, or nil when no subscription started with that transaction or it is
    /// not active.
    @discardableResult
    public func extendRenewalDate(originalTransactionIdentifier: String, byDays days: Int) -> Date? {
        guard days > 0, days <= 90, var state = subscriptions[originalTransactionIdentifier], state.expirationDate > clock.now,
            let index = purchases.lastIndex(where: { $0.receiptEntry.originalTransactionIdentifier == originalTransactionIdentifier })
        else { return nil }
        state.expirationDate = state.expirationDate.addingTimeInterval(TimeInterval(days) * 86_400)
        subscriptions[originalTransactionIdentifier] = state
        purchases[index].receiptEntry.expirationDate = state.expirationDate
        issueReceiptAfterPurchase()
        return state.expirationDate
    }
}

/// One subscription's status and what its latest signed data says, unsigned.
public struct SimulatedSubscriptionContents: Sendable {
    /// Active, expired or revoked.
    public var status: SubscriptionStatus
    /// The subscription's original transaction id.
    public var originalTransactionIdentifier: String
    /// Its latest transaction.
    public var transaction: TransactionContents
    /// Its renewal info.
    public var renewalInfo: RenewalInfoContents

    /// Creates a value.
    public init(
        status: SubscriptionStatus, originalTransactionIdentifier: String, transaction: TransactionContents,
        renewalInfo: RenewalInfoContents
    ) {
        self.status = status
        self.originalTransactionIdentifier = originalTransactionIdentifier
        self.transaction = transaction
        self.renewalInfo = renewalInfo
    }
}
