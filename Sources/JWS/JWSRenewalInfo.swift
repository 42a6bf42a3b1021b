import JSON

/// A subscription's signed renewal information (Apple's `JWSRenewalInfoDecodedPayload`): the App
/// Store Server API's `signedRenewalInfo` and a notification's `data.signedRenewalInfo`. It has no
/// bundle identifier, by design.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below and those it shares with ``JWSTransaction`` (``PurchasePayload``), everything else in
/// ``JWSPayloadModel/unknownFields``.
public struct JWSRenewalInfo: PurchasePayload, Equatable, PurchaseFieldsPayload {
    /// Why the subscription expired. (`expirationIntent`)
    public var expirationIntent: ExpirationIntent? { fields.code(.expirationIntent) }
    /// The product that renews at the next billing date. (`autoRenewProductId`)
    public var autoRenewProductId: String? { fields.string(.autoRenewProductId) }
    /// Whether the subscription renews automatically. (`autoRenewStatus`)
    public var autoRenewStatus: AutoRenewStatus? { fields.code(.autoRenewStatus) }
    /// Whether the App Store is retrying a failed renewal. (`isInBillingRetryPeriod`)
    public var isInBillingRetryPeriod: Bool? { fields.bool(.isInBillingRetryPeriod) }
    /// Whether the customer answered a price increase. (`priceIncreaseStatus`)
    public var priceIncreaseStatus: PriceIncreaseStatus? { fields.code(.priceIncreaseStatus) }
    /// When the billing grace period ends. (`gracePeriodExpiresDate`)
    public var gracePeriodExpiresDate: JWSDate? { fields.date(.gracePeriodExpiresDate) }
    /// The start of the latest run of continuous subscription. (`recentSubscriptionStartDate`)
    public var recentSubscriptionStartDate: JWSDate? { fields.date(.recentSubscriptionStartDate) }
    /// When the subscription renews. (`renewalDate`)
    public var renewalDate: JWSDate? { fields.date(.renewalDate) }
    /// The renewal price in milliunits of the currency. (`renewalPrice`)
    public var renewalPrice: Int64? { fields.int64(.renewalPrice) }
    /// The win-back offers the customer may redeem. (`eligibleWinBackOfferIds`)
    public var eligibleWinBackOfferIds: [String]? { fields.strings(.eligibleWinBackOfferIds) }
    /// How the subscription is billed after renewal. (`renewalBillingPlanType`)
    public var renewalBillingPlanType: BillingPlanType? { fields.raw(.renewalBillingPlanType) }
    /// The JSON text this value was decoded from, exactly.
    public let jsonPayload: [UInt8]

    let fields: PayloadFields<Field>

    enum Field: Int, PurchaseField {
        case expirationIntent, originalTransactionId, autoRenewProductId, productId, autoRenewStatus, isInBillingRetryPeriod,
            priceIncreaseStatus, gracePeriodExpiresDate, offerType, offerIdentifier, signedDate, environment, recentSubscriptionStartDate,
            renewalDate, currency, renewalPrice, offerDiscountType, eligibleWinBackOfferIds, appAccountToken, appTransactionId, offerPeriod,
            advancedCommerceInfo, commitmentInfo, renewalBillingPlanType, deviceVerification, deviceVerificationNonce

        var kind: PayloadFieldKind {
            switch self {
            case .expirationIntent, .autoRenewStatus, .priceIncreaseStatus, .offerType, .renewalPrice: .int64
            case .originalTransactionId, .autoRenewProductId, .productId, .offerIdentifier, .environment, .currency, .offerDiscountType,
                .appAccountToken, .appTransactionId, .offerPeriod, .renewalBillingPlanType, .deviceVerification, .deviceVerificationNonce:
                .string
            case .isInBillingRetryPeriod: .bool
            case .gracePeriodExpiresDate, .signedDate, .recentSubscriptionStartDate, .renewalDate: .date
            case .eligibleWinBackOfferIds: .strings
            case .advancedCommerceInfo: .object(AdvancedCommerceInfo.self)
            case .commitmentInfo: .object(CommitmentInfo.self)
            }
        }

        var name: String {
            switch self {
            case .expirationIntent: "expirationIntent"
            case .originalTransactionId: "originalTransactionId"
            case .autoRenewProductId: "autoRenewProductId"
            case .productId: "productId"
            case .autoRenewStatus: "autoRenewStatus"
            case .isInBillingRetryPeriod: "isInBillingRetryPeriod"
            case .priceIncreaseStatus: "priceIncreaseStatus"
            case .gracePeriodExpiresDate: "gracePeriodExpiresDate"
            case .offerType: "offerType"
            case .offerIdentifier: "offerIdentifier"
            case .signedDate: "signedDate"
            case .environment: "environment"
            case .recentSubscriptionStartDate: "recentSubscriptionStartDate"
            case .renewalDate: "renewalDate"
            case .currency: "currency"
            case .renewalPrice: "renewalPrice"
            case .offerDiscountType: "offerDiscountType"
            case .eligibleWinBackOfferIds: "eligibleWinBackOfferIds"
            case .appAccountToken: "appAccountToken"
            case .appTransactionId: "appTransactionId"
            case .offerPeriod: "offerPeriod"
            case .advancedCommerceInfo: "advancedCommerceInfo"
            case .commitmentInfo: "commitmentInfo"
            case .renewalBillingPlanType: "renewalBillingPlanType"
            case .deviceVerification: "deviceVerification"
            case .deviceVerificationNonce: "deviceVerificationNonce"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 8:
                if key.equals("currency") { return .currency }
            case 9:
                if key.equals("productId") { return .productId }
                if key.equals("offerType") { return .offerType }
            case 10:
                if key.equals("signedDate") { return .signedDate }
            case 11:
                if key.equals("environment") { return .environment }
                if key.equals("renewalDate") { return .renewalDate }
                if key.equals("offerPeriod") { return .offerPeriod }
            case 12:
                if key.equals("renewalPrice") { return .renewalPrice }
            case 14:
                if key.equals("commitmentInfo") { return .commitmentInfo }
            case 15:
                if key.equals("autoRenewStatus") { return .autoRenewStatus }
                if key.equals("offerIdentifier") { return .offerIdentifier }
                if key.equals("appAccountToken") { return .appAccountToken }
            case 16:
                if key.equals("expirationIntent") { return .expirationIntent }
                if key.equals("appTransactionId") { return .appTransactionId }
            case 17:
                if key.equals("offerDiscountType") { return .offerDiscountType }
            case 18:
                if key.equals("autoRenewProductId") { return .autoRenewProductId }
                if key.equals("deviceVerification") { return .deviceVerification }
            case 19:
                if key.equals("priceIncreaseStatus") { return .priceIncreaseStatus }
            case 20:
                if key.equals("advancedCommerceInfo") { return .advancedCommerceInfo }
            case 21:
                if key.equals("originalTransactionId") { return .originalTransactionId }
            case 22:
                if key.equals("isInBillingRetryPeriod") { return .isInBillingRetryPeriod }
                if key.equals("gracePeriodExpiresDate") { return .gracePeriodExpiresDate }
                if key.equals("renewalBillingPlanType") { return .renewalBillingPlanType }
            case 23:
                if key.equals("eligibleWinBackOfferIds") { return .eligibleWinBackOfferIds }
                if key.equals("deviceVerificationNonce") { return .deviceVerificationNonce }
            case 27:
                if key.equals("recentSubscriptionStartDate") { return .recentSubscriptionStartDate }
            default: break
            }
            return nil
        }
    }
}
