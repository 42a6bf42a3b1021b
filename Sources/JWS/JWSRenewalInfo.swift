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

    enum Field: String, PurchaseField {
        case expirationIntent, originalTransactionId, autoRenewProductId, productId, autoRenewStatus, isInBillingRetryPeriod,
            priceIncreaseStatus, gracePeriodExpiresDate, offerType, offerIdentifier, signedDate, environment, recentSubscriptionStartDate,
            renewalDate, currency, renewalPrice, offerDiscountType, eligibleWinBackOfferIds, appAccountToken, appTransactionId, offerPeriod,
            advancedCommerceInfo, commitmentInfo, renewalBillingPlanType, deviceVerification, deviceVerificationNonce

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

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
    }
}
