public import FoundationEssentials

extension AppReceipt {
    /// The records of `productIdentifier`, in receipt order (cancelled ones included).
    public func inAppPurchases(ofProduct productIdentifier: String) -> [InAppPurchase] {
        inAppPurchases.filter { $0.productIdentifier == productIdentifier }
    }

    /// Whether the receipt holds a purchase of `productIdentifier` that Apple has not cancelled
    /// (refunded). Unlike RMStore, a refunded purchase does not count.
    public func containsInAppPurchase(ofProduct productIdentifier: String) -> Bool {
        inAppPurchases.contains { $0.productIdentifier == productIdentifier && $0.cancellationDate == nil }
    }

    /// The record of the transaction `transactionIdentifier`, if the receipt holds it.
    public func inAppPurchase(transactionIdentifier: String) -> InAppPurchase? {
        inAppPurchases.first { $0.transactionIdentifier == transactionIdentifier }
    }

    /// Whether an auto-renewable subscription to `productIdentifier` is active at `date`.
    ///
    /// Every record counts: the subscription is active if **any** record of the product covers the
    /// date (purchase date ≤ date < expiration date) and was not cancelled. This fixes RMStore's
    /// check, which looked only at the record with the latest expiration date, so a future-dated
    /// renewal or a cancelled latest record hid the period that covers the date. Pass `date`
    /// explicitly (for example from a trusted server clock), and allow for short lapses between
    /// renewals with `gracePeriod`, which extends each expiration date.
    public func containsActiveAutoRenewableSubscription(
        ofProduct productIdentifier: String, at date: Date, gracePeriod: TimeInterval = 0
    ) -> Bool {
        inAppPurchases.contains { purchase in
            guard purchase.productIdentifier == productIdentifier, purchase.cancellationDate == nil,
                let expires = purchase.subscriptionExpirationDate
            else { return false }
            if let start = purchase.purchaseDate, date < start { return false }
            return date < expires.addingTimeInterval(gracePeriod)
        }
    }

    /// For each original transaction id (one per subscription), the non-cancelled record with the
    /// latest expiration date. Records without an expiration date or original transaction id are
    /// skipped.
    public func latestSubscriptionRecords() -> [String: InAppPurchase] {
        var latest: [String: InAppPurchase] = [:]
        for purchase in inAppPurchases where purchase.cancellationDate == nil {
            guard let original = purchase.originalTransactionIdentifier,
                let expires = purchase.subscriptionExpirationDate
            else { continue }
            if let current = latest[original]?.subscriptionExpirationDate, current >= expires { continue }
            latest[original] = purchase
        }
        return latest
    }
}
