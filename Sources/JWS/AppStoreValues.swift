// The App Store's enumerated values. Each is a struct around its raw value, so a value Apple adds
// later decodes, compares and round-trips like the known ones (it is kept, never dropped).

/// The server environment of a payload (`environment`, `receiptType`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct Environment: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `Sandbox`: The sandbox environment.
    public static let sandbox = Environment(rawValue: "Sandbox")

    /// `Production`: The production environment.
    public static let production = Environment(rawValue: "Production")

    /// `Xcode`: StoreKit testing in Xcode.
    public static let xcode = Environment(rawValue: "Xcode")

    /// `LocalTesting`: Apple's local testing environment (used in Apple's own test payloads).
    public static let localTesting = Environment(rawValue: "LocalTesting")

}

/// The `notificationType` of an App Store Server Notification V2.
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct NotificationType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `SUBSCRIBED`: A customer subscribed (see the subtype: initial buy or resubscribe).
    public static let subscribed = NotificationType(rawValue: "SUBSCRIBED")

    /// `DID_CHANGE_RENEWAL_PREF`: A customer changed the subscription plan (upgrade or downgrade).
    public static let didChangeRenewalPref = NotificationType(rawValue: "DID_CHANGE_RENEWAL_PREF")

    /// `DID_CHANGE_RENEWAL_STATUS`: A customer turned automatic renewal on or off.
    public static let didChangeRenewalStatus = NotificationType(rawValue: "DID_CHANGE_RENEWAL_STATUS")

    /// `OFFER_REDEEMED`: A customer redeemed a promotional offer or offer code.
    public static let offerRedeemed = NotificationType(rawValue: "OFFER_REDEEMED")

    /// `DID_RENEW`: A subscription renewed.
    public static let didRenew = NotificationType(rawValue: "DID_RENEW")

    /// `EXPIRED`: A subscription expired.
    public static let expired = NotificationType(rawValue: "EXPIRED")

    /// `DID_FAIL_TO_RENEW`: A subscription failed to renew because of a billing issue.
    public static let didFailToRenew = NotificationType(rawValue: "DID_FAIL_TO_RENEW")

    /// `GRACE_PERIOD_EXPIRED`: The billing grace period ended without a renewal.
    public static let gracePeriodExpired = NotificationType(rawValue: "GRACE_PERIOD_EXPIRED")

    /// `PRICE_INCREASE`: The system told a customer of a price increase.
    public static let priceIncrease = NotificationType(rawValue: "PRICE_INCREASE")

    /// `REFUND`: The App Store refunded a transaction.
    public static let refund = NotificationType(rawValue: "REFUND")

    /// `REFUND_DECLINED`: The App Store declined a refund request.
    public static let refundDeclined = NotificationType(rawValue: "REFUND_DECLINED")

    /// `CONSUMPTION_REQUEST`: A customer asked for a refund of a consumable; Apple asks for consumption data.
    public static let consumptionRequest = NotificationType(rawValue: "CONSUMPTION_REQUEST")

    /// `RENEWAL_EXTENDED`: The App Store extended a subscription's renewal date.
    public static let renewalExtended = NotificationType(rawValue: "RENEWAL_EXTENDED")

    /// `REVOKE`: An in-app purchase shared through Family Sharing is no longer available.
    public static let revoke = NotificationType(rawValue: "REVOKE")

    /// `TEST`: A test notification requested through the App Store Server API.
    public static let test = NotificationType(rawValue: "TEST")

    /// `RENEWAL_EXTENSION`: The status of a renewal-date extension for all subscribers.
    public static let renewalExtension = NotificationType(rawValue: "RENEWAL_EXTENSION")

    /// `REFUND_REVERSED`: The App Store reversed a refund.
    public static let refundReversed = NotificationType(rawValue: "REFUND_REVERSED")

    /// `EXTERNAL_PURCHASE_TOKEN`: An external purchase token was created but not reported.
    public static let externalPurchaseToken = NotificationType(rawValue: "EXTERNAL_PURCHASE_TOKEN")

    /// `ONE_TIME_CHARGE`: A customer bought a consumable, non-consumable or non-renewing subscription.
    public static let oneTimeCharge = NotificationType(rawValue: "ONE_TIME_CHARGE")

    /// `RESCIND_CONSENT`: A customer withdrew consent (the payload carries `appData`).
    public static let rescindConsent = NotificationType(rawValue: "RESCIND_CONSENT")

    /// `METADATA_UPDATE`: Advanced Commerce: subscription metadata changed.
    public static let metadataUpdate = NotificationType(rawValue: "METADATA_UPDATE")

    /// `MIGRATION`: Advanced Commerce: a subscription migrated.
    public static let migration = NotificationType(rawValue: "MIGRATION")

    /// `PRICE_CHANGE`: Advanced Commerce: a subscription price changed.
    public static let priceChange = NotificationType(rawValue: "PRICE_CHANGE")

}

/// The `subtype` of an App Store Server Notification V2.
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct NotificationSubtype: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `INITIAL_BUY`: First purchase of a subscription.
    public static let initialBuy = NotificationSubtype(rawValue: "INITIAL_BUY")

    /// `RESUBSCRIBE`: A resubscription to the same or another subscription of the group.
    public static let resubscribe = NotificationSubtype(rawValue: "RESUBSCRIBE")

    /// `DOWNGRADE`: A downgrade, effective at the next renewal.
    public static let downgrade = NotificationSubtype(rawValue: "DOWNGRADE")

    /// `UPGRADE`: An upgrade, effective immediately.
    public static let upgrade = NotificationSubtype(rawValue: "UPGRADE")

    /// `AUTO_RENEW_ENABLED`: Automatic renewal turned on.
    public static let autoRenewEnabled = NotificationSubtype(rawValue: "AUTO_RENEW_ENABLED")

    /// `AUTO_RENEW_DISABLED`: Automatic renewal turned off.
    public static let autoRenewDisabled = NotificationSubtype(rawValue: "AUTO_RENEW_DISABLED")

    /// `VOLUNTARY`: Expired after the customer turned renewal off.
    public static let voluntary = NotificationSubtype(rawValue: "VOLUNTARY")

    /// `BILLING_RETRY`: Expired after the billing retry period ended.
    public static let billingRetry = NotificationSubtype(rawValue: "BILLING_RETRY")

    /// `PRICE_INCREASE`: Expired because the customer did not consent to a price increase.
    public static let priceIncrease = NotificationSubtype(rawValue: "PRICE_INCREASE")

    /// `GRACE_PERIOD`: Failed to renew, in the billing grace period.
    public static let gracePeriod = NotificationSubtype(rawValue: "GRACE_PERIOD")

    /// `PENDING`: Price increase not yet answered by the customer.
    public static let pending = NotificationSubtype(rawValue: "PENDING")

    /// `ACCEPTED`: Price increase accepted.
    public static let accepted = NotificationSubtype(rawValue: "ACCEPTED")

    /// `BILLING_RECOVERY`: Renewed after an earlier billing failure.
    public static let billingRecovery = NotificationSubtype(rawValue: "BILLING_RECOVERY")

    /// `PRODUCT_NOT_FOR_SALE`: Expired because the product was not for sale at renewal.
    public static let productNotForSale = NotificationSubtype(rawValue: "PRODUCT_NOT_FOR_SALE")

    /// `SUMMARY`: A renewal-date extension request finished for all subscribers.
    public static let summary = NotificationSubtype(rawValue: "SUMMARY")

    /// `FAILURE`: A renewal-date extension failed for one subscription.
    public static let failure = NotificationSubtype(rawValue: "FAILURE")

    /// `UNREPORTED`: An external purchase token was not reported.
    public static let unreported = NotificationSubtype(rawValue: "UNREPORTED")

    /// `ACTIVE_TOKEN_REMINDER`: A reminder that an external purchase custom link token is still
    /// active and needs reporting.
    public static let activeTokenReminder = NotificationSubtype(rawValue: "ACTIVE_TOKEN_REMINDER")

}

/// The `type` of an in-app purchase.
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct ProductType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `Auto-Renewable Subscription`: An auto-renewable subscription.
    public static let autoRenewableSubscription = ProductType(rawValue: "Auto-Renewable Subscription")

    /// `Non-Consumable`: A non-consumable product.
    public static let nonConsumable = ProductType(rawValue: "Non-Consumable")

    /// `Consumable`: A consumable product.
    public static let consumable = ProductType(rawValue: "Consumable")

    /// `Non-Renewing Subscription`: A non-renewing subscription.
    public static let nonRenewingSubscription = ProductType(rawValue: "Non-Renewing Subscription")

}

/// Whether the customer bought the product or has it through Family Sharing (`inAppOwnershipType`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct InAppOwnershipType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `PURCHASED`: The customer bought it.
    public static let purchased = InAppOwnershipType(rawValue: "PURCHASED")

    /// `FAMILY_SHARED`: A family member shared it.
    public static let familyShared = InAppOwnershipType(rawValue: "FAMILY_SHARED")

}

/// Why a transaction happened (`transactionReason`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct TransactionReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `PURCHASE`: A customer's purchase (including an upgrade or a resubscription).
    public static let purchase = TransactionReason(rawValue: "PURCHASE")

    /// `RENEWAL`: An automatic renewal.
    public static let renewal = TransactionReason(rawValue: "RENEWAL")

}

/// The payment mode of an offer (`offerDiscountType`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct OfferDiscountType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `FREE_TRIAL`: A free trial.
    public static let freeTrial = OfferDiscountType(rawValue: "FREE_TRIAL")

    /// `PAY_AS_YOU_GO`: A discounted price for each period.
    public static let payAsYouGo = OfferDiscountType(rawValue: "PAY_AS_YOU_GO")

    /// `PAY_UP_FRONT`: One discounted payment for the offer's duration.
    public static let payUpFront = OfferDiscountType(rawValue: "PAY_UP_FRONT")

    /// `ONE_TIME`: A one-time discount (offer codes on consumables and non-consumables).
    public static let oneTime = OfferDiscountType(rawValue: "ONE_TIME")

}

/// How a transaction was revoked (`revocationType`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct RevocationType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `REFUND_FULL`: A full refund.
    public static let refundFull = RevocationType(rawValue: "REFUND_FULL")

    /// `REFUND_PRORATED`: A prorated refund (see `revocationPercentage`).
    public static let refundProrated = RevocationType(rawValue: "REFUND_PRORATED")

    /// `FAMILY_REVOKE`: Family Sharing access was revoked.
    public static let familyRevoke = RevocationType(rawValue: "FAMILY_REVOKE")

}

/// Why a customer asked for a refund (`consumptionRequestReason`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct ConsumptionRequestReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `UNINTENDED_PURCHASE`: The customer did not mean to buy.
    public static let unintendedPurchase = ConsumptionRequestReason(rawValue: "UNINTENDED_PURCHASE")

    /// `FULFILLMENT_ISSUE`: The product was not delivered or did not work.
    public static let fulfillmentIssue = ConsumptionRequestReason(rawValue: "FULFILLMENT_ISSUE")

    /// `UNSATISFIED_WITH_PURCHASE`: The customer was not satisfied.
    public static let unsatisfiedWithPurchase = ConsumptionRequestReason(rawValue: "UNSATISFIED_WITH_PURCHASE")

    /// `LEGAL`: A legal reason.
    public static let legal = ConsumptionRequestReason(rawValue: "LEGAL")

    /// `OTHER`: Another reason.
    public static let other = ConsumptionRequestReason(rawValue: "OTHER")

}

/// How an Advanced Commerce subscription with a commitment is billed (`billingPlanType`, `renewalBillingPlanType`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct BillingPlanType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `BILLED_UPFRONT`: The whole commitment is billed up front.
    public static let billedUpfront = BillingPlanType(rawValue: "BILLED_UPFRONT")

    /// `MONTHLY`: The commitment is billed monthly.
    public static let monthly = BillingPlanType(rawValue: "MONTHLY")

}

/// The platform of an app's original purchase (`originalPlatform`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct PurchasePlatform: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `iOS`: iOS or iPadOS.
    public static let iOS = PurchasePlatform(rawValue: "iOS")

    /// `macOS`: macOS.
    public static let macOS = PurchasePlatform(rawValue: "macOS")

    /// `tvOS`: tvOS.
    public static let tvOS = PurchasePlatform(rawValue: "tvOS")

    /// `visionOS`: visionOS.
    public static let visionOS = PurchasePlatform(rawValue: "visionOS")

}

/// The kind of offer of a transaction or renewal (`offerType`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct OfferType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: Int64

    /// A value from its raw number (known or not).
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { String(rawValue) }

    /// `1`: An introductory offer.
    public static let introductory = OfferType(rawValue: 1)

    /// `2`: A promotional offer.
    public static let promotional = OfferType(rawValue: 2)

    /// `3`: An offer code.
    public static let offerCode = OfferType(rawValue: 3)

    /// `4`: A win-back offer.
    public static let winBack = OfferType(rawValue: 4)

}

/// Why Apple refunded or revoked a transaction (`revocationReason`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct RevocationReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: Int64

    /// A value from its raw number (known or not).
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { String(rawValue) }

    /// `0`: Another reason, such as an accidental purchase.
    public static let other = RevocationReason(rawValue: 0)

    /// `1`: An actual or perceived issue in the app.
    public static let appIssue = RevocationReason(rawValue: 1)

}

/// Why a subscription expired (`expirationIntent`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct ExpirationIntent: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: Int64

    /// A value from its raw number (known or not).
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { String(rawValue) }

    /// `1`: The customer cancelled.
    public static let customerCancelled = ExpirationIntent(rawValue: 1)

    /// `2`: A billing error.
    public static let billingError = ExpirationIntent(rawValue: 2)

    /// `3`: The customer did not consent to a price increase.
    public static let didNotConsentToPriceIncrease = ExpirationIntent(rawValue: 3)

    /// `4`: The product was not available at renewal.
    public static let productNotAvailable = ExpirationIntent(rawValue: 4)

    /// `5`: Another reason.
    public static let other = ExpirationIntent(rawValue: 5)

}

/// Whether a subscription renews automatically (`autoRenewStatus`, `commitmentAutoRenewStatus`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct AutoRenewStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: Int64

    /// A value from its raw number (known or not).
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { String(rawValue) }

    /// `0`: Automatic renewal is off.
    public static let off = AutoRenewStatus(rawValue: 0)

    /// `1`: Automatic renewal is on.
    public static let on = AutoRenewStatus(rawValue: 1)

}

/// Whether the customer answered a price increase (`priceIncreaseStatus`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct PriceIncreaseStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: Int64

    /// A value from its raw number (known or not).
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { String(rawValue) }

    /// `0`: The customer has not responded to a price increase that needs consent.
    public static let notResponded = PriceIncreaseStatus(rawValue: 0)

    /// `1`: The customer consented, or was told of an increase that needs no consent.
    public static let consentedOrNotified = PriceIncreaseStatus(rawValue: 1)

}

/// The status of a subscription in a notification's `data` (`status`).
///
/// Unknown values are kept as they are: compare with the static members, and read
/// ``rawValue`` for anything else.
public struct SubscriptionStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as Apple writes it.
    public let rawValue: Int64

    /// A value from its raw number (known or not).
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { String(rawValue) }

    /// `1`: Active.
    public static let active = SubscriptionStatus(rawValue: 1)

    /// `2`: Expired.
    public static let expired = SubscriptionStatus(rawValue: 2)

    /// `3`: In the billing retry period.
    public static let billingRetry = SubscriptionStatus(rawValue: 3)

    /// `4`: In the billing grace period.
    public static let billingGracePeriod = SubscriptionStatus(rawValue: 4)

    /// `5`: Revoked.
    public static let revoked = SubscriptionStatus(rawValue: 5)

}
