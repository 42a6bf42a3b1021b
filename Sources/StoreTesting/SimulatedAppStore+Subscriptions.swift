// The simulated App Store's subscriptions: renewals, billing retry, grace periods, refunds,
// revocations, price increases, refund requests, and the server notifications that tell them.

public import Foundation
import Internals
public import JWS
import RMStore

extension SimulatedAppStore {
    // MARK: - Subscriptions

    /// Moves the simulated clock forward and delivers every renewal due by the new time (one
    /// purchased transaction per period, with the chain's original transaction id and a new web
    /// order line item id), then issues a new receipt.
    public func advanceClock(by interval: TimeInterval) {
        clock.advance(by: interval)
        renewDueSubscriptions()
        notificationSender?.deliverDueRetries()
    }

    /// Turns auto-renewal of a subscription chain (by any of its product's chains) off or on.
    public func setAutoRenew(_ autoRenews: Bool, productIdentifier: String) {
        var changed: [String] = []
        for (key, var state) in subscriptions where state.productIdentifier == productIdentifier {
            if state.autoRenews != autoRenews, state.expiryNotified == false { changed.append(key) }
            state.autoRenews = autoRenews
            subscriptions[key] = state
        }
        for key in changed.sorted() {
            notify(.didChangeRenewalStatus, autoRenews ? .autoRenewEnabled : .autoRenewDisabled, original: key, transaction: nil)
        }
    }

    /// Makes renewals of a product fail (a card that no longer pays) or succeed again. At its
    /// renewal date a failing subscription enters billing retry (`DID_FAIL_TO_RENEW`, subtype
    /// `GRACE_PERIOD` when `gracePeriod` is positive) and, with a grace period, stays entitled
    /// until it ends (`GRACE_PERIOD_EXPIRED` then); when renewals succeed again during billing
    /// retry it renews at once (`DID_RENEW`, `BILLING_RECOVERY`); after 60 days of billing retry it
    /// expires (`EXPIRED`, `BILLING_RETRY`).
    public func setBillingFailure(_ fails: Bool, productIdentifier: String, gracePeriod: TimeInterval = 0) {
        billingFailures[productIdentifier] = fails ? max(0, gracePeriod) : nil
        renewDueSubscriptions()
    }

    /// Raises the price of a subscription product for its current subscribers: each auto-renewing
    /// subscription's renewal info carries the new `renewalPrice` and `priceIncreaseStatus`, and
    /// `PRICE_INCREASE` is sent — subtype `PENDING` (status 0) when the customer must consent,
    /// `ACCEPTED` (status 1) when the increase needs no consent. Renewals after consent are billed
    /// at `price`.
    public func increasePrice(productIdentifier: String, to price: Decimal, consentRequired: Bool = true) {
        var changed: [String] = []
        for (key, var state) in subscriptions where state.productIdentifier == productIdentifier && state.autoRenews {
            state.increasedPrice = price
            state.priceIncreaseStatus = consentRequired ? .notResponded : .consentedOrNotified
            subscriptions[key] = state
            changed.append(key)
        }
        for key in changed.sorted() {
            notify(.priceIncrease, consentRequired ? .pending : .accepted, original: key, transaction: nil)
        }
    }

    /// The customer answers a pending price increase: consent gives `PRICE_INCREASE` (`ACCEPTED`);
    /// a refusal turns auto-renew off (`DID_CHANGE_RENEWAL_STATUS`, `AUTO_RENEW_DISABLED`), so the
    /// subscription ends with its period, at the old price.
    public func respondToPriceIncrease(originalTransactionIdentifier original: String, consents: Bool) {
        guard var state = subscriptions[original], state.priceIncreaseStatus == .notResponded else { return }
        if consents {
            state.priceIncreaseStatus = .consentedOrNotified
            subscriptions[original] = state
            notify(.priceIncrease, .accepted, original: original, transaction: nil)
        } else {
            state.increasedPrice = nil
            state.priceIncreaseStatus = nil
            state.autoRenews = false
            subscriptions[original] = state
            notify(.didChangeRenewalStatus, .autoRenewDisabled, original: original, transaction: nil)
        }
    }

    /// The customer asks Apple for a refund of a purchase: `CONSUMPTION_REQUEST` carries the
    /// transaction (re-signed now), so the app can send consumption information; Apple then
    /// refunds (``refund(transactionIdentifier:reason:)``, `REFUND`) or declines
    /// (``declineRefund(transactionIdentifier:)``, `REFUND_DECLINED`). Nothing changes meanwhile.
    public func requestRefund(transactionIdentifier: String) {
        guard let record = purchases.last(where: { $0.receiptEntry.transactionIdentifier == transactionIdentifier }) else { return }
        let original = record.receiptEntry.originalTransactionIdentifier
        notify(.consumptionRequest, nil, original: subscriptions[original] != nil ? original : nil, transaction: transactionIdentifier)
    }

    /// Apple declines a refund request: `REFUND_DECLINED` re-signs the (old) transaction now;
    /// the purchase stays as it was.
    public func declineRefund(transactionIdentifier: String) {
        guard let record = purchases.last(where: { $0.receiptEntry.transactionIdentifier == transactionIdentifier }) else { return }
        let original = record.receiptEntry.originalTransactionIdentifier
        notify(.refundDeclined, nil, original: subscriptions[original] != nil ? original : nil, transaction: transactionIdentifier)
    }

    /// How long the App Store retries billing before the subscription expires: 60 days.
    public static let billingRetryPeriod: TimeInterval = 60 * 86_400

    /// Refunds a purchase: its receipt entry gets a cancellation date (now), its signed
    /// transaction from then on `revocationDate` (the same date) and `revocationReason`, and a
    /// refunded subscription stops renewing. A new receipt is issued.
    public func refund(transactionIdentifier: String, reason: RevocationReason = .other) {
        revoke(transactionIdentifier: transactionIdentifier, reason: reason, notification: .refund)
    }

    /// Revokes a purchase shared through Family Sharing (the purchaser stopped sharing it): the same
    /// revocation fields as ``refund(transactionIdentifier:reason:)``, told as `REVOKE`.
    public func revokeFamilySharing(transactionIdentifier: String) {
        revoke(transactionIdentifier: transactionIdentifier, reason: .other, notification: .revoke)
    }

    func revoke(transactionIdentifier: String, reason: RevocationReason, notification: NotificationType) {
        guard let index = purchases.firstIndex(where: { $0.receiptEntry.transactionIdentifier == transactionIdentifier }) else { return }
        purchases[index].receiptEntry.cancellationDate = clock.now
        purchases[index].revocationReason = reason
        let original = purchases[index].receiptEntry.originalTransactionIdentifier
        if var state = subscriptions[original] {
            state.autoRenews = false
            subscriptions[original] = state
        }
        issueReceiptAfterPurchase()
        notify(notification, nil, original: subscriptions[original] != nil ? original : nil, transaction: transactionIdentifier)
    }

    func renewDueSubscriptions() {
        let now = clock.now
        var renewals: [PaymentTransaction] = []
        var events: [(NotificationType, NotificationSubtype?, String, String?)] = []
        for key in subscriptions.keys.sorted() {
            guard var state = subscriptions[key] else { continue }
            while state.autoRenews, !state.inBillingRetry, state.expirationDate <= now,
                let next = state.period.advance(state.expirationDate)
            {
                if let grace = billingFailures[state.productIdentifier] {
                    state.inBillingRetry = true
                    state.gracePeriodExpires = grace > 0 ? state.expirationDate.addingTimeInterval(grace) : nil
                    events.append((.didFailToRenew, grace > 0 ? .gracePeriod : nil, key, nil))
                    break
                }
                let transaction = renew(&state, purchaseDate: state.expirationDate, expirationDate: next)
                renewals.append(transaction)
                events.append((.didRenew, nil, key, transaction.identifier))
            }
            if state.inBillingRetry {
                if billingFailures[state.productIdentifier] == nil, state.autoRenews, let next = state.period.advance(now) {
                    state.inBillingRetry = false
                    state.gracePeriodExpires = nil
                    let transaction = renew(&state, purchaseDate: now, expirationDate: next)
                    renewals.append(transaction)
                    events.append((.didRenew, .billingRecovery, key, transaction.identifier))
                } else if state.expirationDate.addingTimeInterval(Self.billingRetryPeriod) <= now || !state.autoRenews {
                    state.inBillingRetry = false
                    state.gracePeriodExpires = nil
                    state.autoRenews = false
                    state.expiredByBilling = true
                    state.expiryNotified = true
                    events.append((.expired, .billingRetry, key, nil))
                } else if let grace = state.gracePeriodExpires, grace <= now, !state.gracePeriodNotified {
                    state.gracePeriodNotified = true
                    events.append((.gracePeriodExpired, nil, key, nil))
                }
            }
            if !state.autoRenews, !state.expiryNotified, state.expirationDate <= now {
                state.expiryNotified = true
                let revoked = purchases.contains {
                    $0.receiptEntry.originalTransactionIdentifier == key && $0.receiptEntry.cancellationDate != nil
                }
                if !revoked { events.append((.expired, .voluntary, key, nil)) }
            }
            subscriptions[key] = state
        }
        if !renewals.isEmpty {
            issueReceiptAfterPurchase()
            schedule { [weak self] in self?.deliver(transactions: renewals) }
        }
        for (type, subtype, original, transaction) in events {
            notify(type, subtype, original: original, transaction: transaction)
        }
    }

    /// Appends a renewal of `state`'s subscription (a purchased transaction with the chain's
    /// original id and a new web order line item id) and moves its expiration date.
    func renew(_ state: inout SubscriptionState, purchaseDate: Date, expirationDate next: Date) -> PaymentTransaction {
        let identifier = nextTransactionIdentifier()
        let webOrder = nextWebOrderLineItemID()
        let payment = Payment(productIdentifier: state.productIdentifier, applicationUsername: state.applicationUsername)
        var transaction = PaymentTransaction(
            identifier: identifier,
            state: .purchased,
            payment: payment,
            date: purchaseDate,
            original: OriginalTransaction(identifier: state.originalTransactionIdentifier, date: state.originalPurchaseDate),
            expirationDate: next,
            webOrderLineItemID: webOrder
        )
        let entry = ReceiptInAppPurchase(
            productIdentifier: state.productIdentifier,
            transactionIdentifier: identifier,
            originalTransactionIdentifier: state.originalTransactionIdentifier,
            purchaseDate: purchaseDate,
            originalPurchaseDate: state.originalPurchaseDate,
            expirationDate: next,
            webOrderLineItemID: webOrder,
            productType: .autoRenewableSubscription
        )
        var record = makeRecord(entry, applicationUsername: state.applicationUsername, reason: .renewal)
        if let price = state.increasedPrice { record.price = price }
        transaction.jwsRepresentation = signedTransaction(for: record)
        purchases.append(record)
        unfinishedTransactions.append(transaction)
        state.expirationDate = next
        return transaction
    }

    // MARK: - Server notifications

    /// Signs the transaction (`transaction`, else the latest of `original`) and the renewal info
    /// of `original` now, and hands the notification to ``notificationSender``.
    func notify(_ type: NotificationType, _ subtype: NotificationSubtype?, original: String?, transaction: String?) {
        guard let notificationSender, let jwsIssuer else { return }
        let record =
            transaction.flatMap { id in purchases.last { $0.receiptEntry.transactionIdentifier == id } }
            ?? original.flatMap { id in purchases.last { $0.receiptEntry.originalTransactionIdentifier == id } }
        do {
            let signedTransaction = try record.map { try jwsIssuer.issueTransaction(transactionContents(for: $0)) }
            let renewal = original.flatMap { renewalInfoContents(originalTransactionIdentifier: $0) }
            let signedRenewal = try renewal.map { try jwsIssuer.issueRenewalInfo($0) }
            try notificationSender.send(
                ServerNotificationEvent(
                    type: type, subtype: subtype, signedTransactionInfo: signedTransaction, signedRenewalInfo: signedRenewal,
                    status: original.flatMap { subscriptionStatus(originalTransactionIdentifier: $0) },
                    originalTransactionIdentifier: original ?? record?.receiptEntry.originalTransactionIdentifier))
            lastNotificationError = nil
        } catch {
            lastNotificationError = error
        }
    }

    /// The status of the subscription that started with `originalTransactionIdentifier` now:
    /// revoked, in its billing grace period, in billing retry, active or expired.
    public func subscriptionStatus(originalTransactionIdentifier original: String) -> SubscriptionStatus? {
        guard let state = subscriptions[original] else { return nil }
        let now = clock.now
        let revoked = purchases.contains {
            $0.receiptEntry.originalTransactionIdentifier == original && $0.receiptEntry.cancellationDate != nil
        }
        if revoked { return .revoked }
        if state.inBillingRetry { return state.gracePeriodExpires.map { $0 > now } == true ? .billingGracePeriod : .billingRetry }
        return state.expirationDate > now ? .active : .expired
    }
}
