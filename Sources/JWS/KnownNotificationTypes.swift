// The notification types Apple documents, as one list: what a tool can offer a person who typed
// one that does not exist.

extension NotificationType {
    /// Every `notificationType` Apple documents (the static members of this type), in the order
    /// they are declared. A value not listed may still arrive (a type Apple adds later).
    public static let known: [NotificationType] = [
        .subscribed, .didChangeRenewalPref, .didChangeRenewalStatus, .offerRedeemed, .didRenew, .expired, .didFailToRenew,
        .gracePeriodExpired, .priceIncrease, .refund, .refundDeclined, .consumptionRequest, .renewalExtended, .revoke, .test,
        .renewalExtension, .refundReversed, .externalPurchaseToken, .oneTimeCharge, .rescindConsent, .metadataUpdate, .migration,
        .priceChange,
    ]
}
