public import JSON

/// A subscription's signed renewal information (Apple's `JWSRenewalInfoDecodedPayload`): the App
/// Store Server API's `signedRenewalInfo` and a notification's `data.signedRenewalInfo`. It has no
/// bundle identifier, by design.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct JWSRenewalInfo: JWSPayload, Equatable, FieldsPayload {
    /// Why the subscription expired. (`expirationIntent`)
    public var expirationIntent: ExpirationIntent? { fields.code(.expirationIntent) }
    /// The transaction identifier of the original purchase. (`originalTransactionId`)
    public var originalTransactionId: String? { fields.string(.originalTransactionId) }
    /// The product that renews at the next billing date. (`autoRenewProductId`)
    public var autoRenewProductId: String? { fields.string(.autoRenewProductId) }
    /// The product identifier of the subscription. (`productId`)
    public var productId: String? { fields.string(.productId) }
    /// Whether the subscription renews automatically. (`autoRenewStatus`)
    public var autoRenewStatus: AutoRenewStatus? { fields.code(.autoRenewStatus) }
    /// Whether the App Store is retrying a failed renewal. (`isInBillingRetryPeriod`)
    public var isInBillingRetryPeriod: Bool? { fields.bool(.isInBillingRetryPeriod) }
    /// Whether the customer answered a price increase. (`priceIncreaseStatus`)
    public var priceIncreaseStatus: PriceIncreaseStatus? { fields.code(.priceIncreaseStatus) }
    /// When the billing grace period ends. (`gracePeriodExpiresDate`)
    public var gracePeriodExpiresDate: JWSDate? { fields.date(.gracePeriodExpiresDate) }
    /// The kind of offer at the next renewal. (`offerType`)
    public var offerType: OfferType? { fields.code(.offerType) }
    /// The offer's identifier. (`offerIdentifier`)
    public var offerIdentifier: String? { fields.string(.offerIdentifier) }
    /// When the App Store signed the data. (`signedDate`)
    public var signedDate: JWSDate? { fields.date(.signedDate) }
    /// The environment (absent in 2021 payloads). (`environment`)
    public var environment: Environment? { fields.raw(.environment) }
    /// The start of the latest run of continuous subscription. (`recentSubscriptionStartDate`)
    public var recentSubscriptionStartDate: JWSDate? { fields.date(.recentSubscriptionStartDate) }
    /// When the subscription renews. (`renewalDate`)
    public var renewalDate: JWSDate? { fields.date(.renewalDate) }
    /// The ISO 4217 currency code of the renewal price. (`currency`)
    public var currency: String? { fields.string(.currency) }
    /// The renewal price in milliunits of the currency. (`renewalPrice`)
    public var renewalPrice: Int64? { fields.int64(.renewalPrice) }
    /// The payment mode of the offer at renewal. (`offerDiscountType`)
    public var offerDiscountType: OfferDiscountType? { fields.raw(.offerDiscountType) }
    /// The win-back offers the customer may redeem. (`eligibleWinBackOfferIds`)
    public var eligibleWinBackOfferIds: [String]? { fields.strings(.eligibleWinBackOfferIds) }
    /// The UUID the app attached to the purchase, as written. (`appAccountToken`)
    public var appAccountToken: String? { fields.string(.appAccountToken) }
    /// The identifier of the app download transaction. (`appTransactionId`)
    public var appTransactionId: String? { fields.string(.appTransactionId) }
    /// The duration of the offer (ISO 8601). (`offerPeriod`)
    public var offerPeriod: String? { fields.string(.offerPeriod) }
    /// Advanced Commerce API details. (`advancedCommerceInfo`)
    public var advancedCommerceInfo: AdvancedCommerceInfo? { fields.object(.advancedCommerceInfo) }
    /// The commitment of a subscription with one. (`commitmentInfo`)
    public var commitmentInfo: CommitmentInfo? { fields.object(.commitmentInfo) }
    /// How the subscription is billed after renewal. (`renewalBillingPlanType`)
    public var renewalBillingPlanType: BillingPlanType? { fields.raw(.renewalBillingPlanType) }
    /// Base64 of the device verification hash (Xcode). (`deviceVerification`)
    public var deviceVerification: String? { fields.string(.deviceVerification) }
    /// The nonce of the device verification hash. (`deviceVerificationNonce`)
    public var deviceVerificationNonce: String? { fields.string(.deviceVerificationNonce) }
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public var unknownFields: [(String, JSONValue)] { fields.unknown }
    /// The JSON text this value was decoded from, exactly.
    public let jsonPayload: [UInt8]

    /// The typed fields as read; the properties above read them.
    let fields: PayloadFields<Field>

    enum Field: Int, TypedPayloadField {
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

    init(fields: PayloadFields<Field>, jsonPayload: [UInt8]) {
        self.fields = fields
        self.jsonPayload = jsonPayload
    }
}
