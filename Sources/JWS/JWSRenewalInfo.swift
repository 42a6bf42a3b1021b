public import JSON

/// A subscription's signed renewal information (Apple's `JWSRenewalInfoDecodedPayload`): the App
/// Store Server API's `signedRenewalInfo` and a notification's `data.signedRenewalInfo`. It has no
/// bundle identifier, by design.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct JWSRenewalInfo: JWSPayload, Equatable {
    /// Why the subscription expired. (`expirationIntent`)
    public let expirationIntent: ExpirationIntent?
    /// The transaction identifier of the original purchase. (`originalTransactionId`)
    public let originalTransactionId: String?
    /// The product that renews at the next billing date. (`autoRenewProductId`)
    public let autoRenewProductId: String?
    /// The product identifier of the subscription. (`productId`)
    public let productId: String?
    /// Whether the subscription renews automatically. (`autoRenewStatus`)
    public let autoRenewStatus: AutoRenewStatus?
    /// Whether the App Store is retrying a failed renewal. (`isInBillingRetryPeriod`)
    public let isInBillingRetryPeriod: Bool?
    /// Whether the customer answered a price increase. (`priceIncreaseStatus`)
    public let priceIncreaseStatus: PriceIncreaseStatus?
    /// When the billing grace period ends. (`gracePeriodExpiresDate`)
    public let gracePeriodExpiresDate: JWSDate?
    /// The kind of offer at the next renewal. (`offerType`)
    public let offerType: OfferType?
    /// The offer's identifier. (`offerIdentifier`)
    public let offerIdentifier: String?
    /// When the App Store signed the data. (`signedDate`)
    public let signedDate: JWSDate?
    /// The environment (absent in 2021 payloads). (`environment`)
    public let environment: Environment?
    /// The start of the latest run of continuous subscription. (`recentSubscriptionStartDate`)
    public let recentSubscriptionStartDate: JWSDate?
    /// When the subscription renews. (`renewalDate`)
    public let renewalDate: JWSDate?
    /// The ISO 4217 currency code of the renewal price. (`currency`)
    public let currency: String?
    /// The renewal price in milliunits of the currency. (`renewalPrice`)
    public let renewalPrice: Int64?
    /// The payment mode of the offer at renewal. (`offerDiscountType`)
    public let offerDiscountType: OfferDiscountType?
    /// The win-back offers the customer may redeem. (`eligibleWinBackOfferIds`)
    public let eligibleWinBackOfferIds: [String]?
    /// The UUID the app attached to the purchase, as written. (`appAccountToken`)
    public let appAccountToken: String?
    /// The identifier of the app download transaction. (`appTransactionId`)
    public let appTransactionId: String?
    /// The duration of the offer (ISO 8601). (`offerPeriod`)
    public let offerPeriod: String?
    /// Advanced Commerce API details. (`advancedCommerceInfo`)
    public let advancedCommerceInfo: AdvancedCommerceInfo?
    /// The commitment of a subscription with one. (`commitmentInfo`)
    public let commitmentInfo: CommitmentInfo?
    /// How the subscription is billed after renewal. (`renewalBillingPlanType`)
    public let renewalBillingPlanType: BillingPlanType?
    /// Base64 of the device verification hash (Xcode). (`deviceVerification`)
    public let deviceVerification: String?
    /// The nonce of the device verification hash. (`deviceVerificationNonce`)
    public let deviceVerificationNonce: String?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]
    /// The JSON text this value was decoded from, exactly.
    public let jsonPayload: [UInt8]

    enum Field: Int, PayloadField {
        case expirationIntent, originalTransactionId, autoRenewProductId, productId, autoRenewStatus, isInBillingRetryPeriod,
            priceIncreaseStatus, gracePeriodExpiresDate, offerType, offerIdentifier, signedDate, environment, recentSubscriptionStartDate,
            renewalDate, currency, renewalPrice, offerDiscountType, eligibleWinBackOfferIds, appAccountToken, appTransactionId, offerPeriod,
            advancedCommerceInfo, commitmentInfo, renewalBillingPlanType, deviceVerification, deviceVerificationNonce

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

    /// Decodes the JSON payload; verifies nothing.
    public init(jsonPayload: [UInt8], limits: JWSLimits) throws(JWSError) {
        self = try PayloadReader.decode(jsonPayload, limits: limits) { (reader) throws(JWSError) in
            try JWSRenewalInfo(reading: &reader, context: "payload", jsonPayload: jsonPayload)
        }
    }

    init(reading reader: inout PayloadReader, context: String, jsonPayload: [UInt8]) throws(JWSError) {
        var expirationIntent: ExpirationIntent?
        var originalTransactionId: String?
        var autoRenewProductId: String?
        var productId: String?
        var autoRenewStatus: AutoRenewStatus?
        var isInBillingRetryPeriod: Bool?
        var priceIncreaseStatus: PriceIncreaseStatus?
        var gracePeriodExpiresDate: JWSDate?
        var offerType: OfferType?
        var offerIdentifier: String?
        var signedDate: JWSDate?
        var environment: Environment?
        var recentSubscriptionStartDate: JWSDate?
        var renewalDate: JWSDate?
        var currency: String?
        var renewalPrice: Int64?
        var offerDiscountType: OfferDiscountType?
        var eligibleWinBackOfferIds: [String]?
        var appAccountToken: String?
        var appTransactionId: String?
        var offerPeriod: String?
        var advancedCommerceInfo: AdvancedCommerceInfo?
        var commitmentInfo: CommitmentInfo?
        var renewalBillingPlanType: BillingPlanType?
        var deviceVerification: String?
        var deviceVerificationNonce: String?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .expirationIntent: expirationIntent = ExpirationIntent(rawValue: try reader.int64(field))
            case .originalTransactionId: originalTransactionId = try reader.string(field)
            case .autoRenewProductId: autoRenewProductId = try reader.string(field)
            case .productId: productId = try reader.string(field)
            case .autoRenewStatus: autoRenewStatus = AutoRenewStatus(rawValue: try reader.int64(field))
            case .isInBillingRetryPeriod: isInBillingRetryPeriod = try reader.bool(field)
            case .priceIncreaseStatus: priceIncreaseStatus = PriceIncreaseStatus(rawValue: try reader.int64(field))
            case .gracePeriodExpiresDate: gracePeriodExpiresDate = try reader.date(field)
            case .offerType: offerType = OfferType(rawValue: try reader.int64(field))
            case .offerIdentifier: offerIdentifier = try reader.string(field)
            case .signedDate: signedDate = try reader.date(field)
            case .environment: environment = Environment(rawValue: try reader.string(field))
            case .recentSubscriptionStartDate: recentSubscriptionStartDate = try reader.date(field)
            case .renewalDate: renewalDate = try reader.date(field)
            case .currency: currency = try reader.string(field)
            case .renewalPrice: renewalPrice = try reader.int64(field)
            case .offerDiscountType: offerDiscountType = OfferDiscountType(rawValue: try reader.string(field))
            case .eligibleWinBackOfferIds: eligibleWinBackOfferIds = try reader.strings(field)
            case .appAccountToken: appAccountToken = try reader.string(field)
            case .appTransactionId: appTransactionId = try reader.string(field)
            case .offerPeriod: offerPeriod = try reader.string(field)
            case .advancedCommerceInfo: advancedCommerceInfo = try AdvancedCommerceInfo(reading: &reader, context: "advancedCommerceInfo")
            case .commitmentInfo: commitmentInfo = try CommitmentInfo(reading: &reader, context: "commitmentInfo")
            case .renewalBillingPlanType: renewalBillingPlanType = BillingPlanType(rawValue: try reader.string(field))
            case .deviceVerification: deviceVerification = try reader.string(field)
            case .deviceVerificationNonce: deviceVerificationNonce = try reader.string(field)
            }
        }
        self.expirationIntent = expirationIntent
        self.originalTransactionId = originalTransactionId
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.priceIncreaseStatus = priceIncreaseStatus
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.signedDate = signedDate
        self.environment = environment
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        self.renewalDate = renewalDate
        self.currency = currency
        self.renewalPrice = renewalPrice
        self.offerDiscountType = offerDiscountType
        self.eligibleWinBackOfferIds = eligibleWinBackOfferIds
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
        self.advancedCommerceInfo = advancedCommerceInfo
        self.commitmentInfo = commitmentInfo
        self.renewalBillingPlanType = renewalBillingPlanType
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.unknownFields = state.unknown
        self.jsonPayload = jsonPayload
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.code(.expirationIntent, expirationIntent)
        o.string(.originalTransactionId, originalTransactionId)
        o.string(.autoRenewProductId, autoRenewProductId)
        o.string(.productId, productId)
        o.code(.autoRenewStatus, autoRenewStatus)
        o.bool(.isInBillingRetryPeriod, isInBillingRetryPeriod)
        o.code(.priceIncreaseStatus, priceIncreaseStatus)
        o.date(.gracePeriodExpiresDate, gracePeriodExpiresDate)
        o.code(.offerType, offerType)
        o.string(.offerIdentifier, offerIdentifier)
        o.date(.signedDate, signedDate)
        o.raw(.environment, environment)
        o.date(.recentSubscriptionStartDate, recentSubscriptionStartDate)
        o.date(.renewalDate, renewalDate)
        o.string(.currency, currency)
        o.int(.renewalPrice, renewalPrice)
        o.raw(.offerDiscountType, offerDiscountType)
        o.strings(.eligibleWinBackOfferIds, eligibleWinBackOfferIds)
        o.string(.appAccountToken, appAccountToken)
        o.string(.appTransactionId, appTransactionId)
        o.string(.offerPeriod, offerPeriod)
        o.object(.advancedCommerceInfo, advancedCommerceInfo?.jsonValue())
        o.object(.commitmentInfo, commitmentInfo?.jsonValue())
        o.raw(.renewalBillingPlanType, renewalBillingPlanType)
        o.string(.deviceVerification, deviceVerification)
        o.string(.deviceVerificationNonce, deviceVerificationNonce)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: JWSRenewalInfo, rhs: JWSRenewalInfo) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}
