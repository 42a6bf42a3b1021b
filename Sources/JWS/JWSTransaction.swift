public import JSON

/// A signed transaction's payload (Apple's `JWSTransactionDecodedPayload`): StoreKit 2's
/// `jwsRepresentation`, the App Store Server API's `signedTransactions`, a notification's
/// `signedTransactionInfo`.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct JWSTransaction: JWSPayload, Equatable {
    /// The transaction identifier of the original purchase. (`originalTransactionId`)
    public let originalTransactionId: String?
    /// The transaction's identifier (a decimal string; Xcode writes `0`). (`transactionId`)
    public let transactionId: String?
    /// The identifier of subscription purchase events across devices, renewals included. (`webOrderLineItemId`)
    public let webOrderLineItemId: String?
    /// The app's bundle identifier. (`bundleId`)
    public let bundleId: String?
    /// The product identifier set in App Store Connect. (`productId`)
    public let productId: String?
    /// The subscription group of a subscription. (`subscriptionGroupIdentifier`)
    public let subscriptionGroupIdentifier: String?
    /// When the App Store charged the account (renewals included). (`purchaseDate`)
    public let purchaseDate: JWSDate?
    /// The purchase date of the original transaction (Xcode can write year 1). (`originalPurchaseDate`)
    public let originalPurchaseDate: JWSDate?
    /// When a subscription expires or renews. (`expiresDate`)
    public let expiresDate: JWSDate?
    /// The number of consumables bought. (`quantity`)
    public let quantity: Int?
    /// The kind of product. (`type`)
    public let type: ProductType?
    /// The UUID the app attached to the purchase, as written. (`appAccountToken`)
    public let appAccountToken: String?
    /// Bought, or shared through Family Sharing. (`inAppOwnershipType`)
    public let inAppOwnershipType: InAppOwnershipType?
    /// When the App Store signed the data. (`signedDate`)
    public let signedDate: JWSDate?
    /// Why Apple refunded or revoked the transaction. (`revocationReason`)
    public let revocationReason: RevocationReason?
    /// When Apple refunded or revoked the transaction. (`revocationDate`)
    public let revocationDate: JWSDate?
    /// Whether the customer upgraded to another subscription. (`isUpgraded`)
    public let isUpgraded: Bool?
    /// The kind of offer applied. (`offerType`)
    public let offerType: OfferType?
    /// The offer's identifier or offer code reference name. (`offerIdentifier`)
    public let offerIdentifier: String?
    /// The environment (absent in 2021 payloads). (`environment`)
    public let environment: Environment?
    /// The three-letter code of the storefront's country or region. (`storefront`)
    public let storefront: String?
    /// Apple's identifier of the storefront. (`storefrontId`)
    public let storefrontId: String?
    /// A purchase or a renewal. (`transactionReason`)
    public let transactionReason: TransactionReason?
    /// The ISO 4217 currency code of the price. (`currency`)
    public let currency: String?
    /// The price in milliunits of the currency. (`price`)
    public let price: Int64?
    /// The payment mode of the offer. (`offerDiscountType`)
    public let offerDiscountType: OfferDiscountType?
    /// The identifier of the app download transaction. (`appTransactionId`)
    public let appTransactionId: String?
    /// The duration of the offer (ISO 8601, such as `P1Y`). (`offerPeriod`)
    public let offerPeriod: String?
    /// How the transaction was revoked. (`revocationType`)
    public let revocationType: RevocationType?
    /// The refunded share in thousandths of a percent (50000 is 50%). (`revocationPercentage`)
    public let revocationPercentage: Int64?
    /// Advanced Commerce API details. (`advancedCommerceInfo`)
    public let advancedCommerceInfo: AdvancedCommerceInfo?
    /// How a subscription with a commitment is billed. (`billingPlanType`)
    public let billingPlanType: BillingPlanType?
    /// The commitment of a subscription with one. (`commitmentInfo`)
    public let commitmentInfo: CommitmentInfo?
    /// Base64 of the device verification hash (Xcode and StoreKit 2 on device). (`deviceVerification`)
    public let deviceVerification: String?
    /// The nonce of the device verification hash. (`deviceVerificationNonce`)
    public let deviceVerificationNonce: String?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]
    /// The JSON text this value was decoded from, exactly.
    public let jsonPayload: [UInt8]

    enum Field: Int, PayloadField {
        case originalTransactionId, transactionId, webOrderLineItemId, bundleId, productId, subscriptionGroupIdentifier, purchaseDate,
            originalPurchaseDate, expiresDate, quantity, type, appAccountToken, inAppOwnershipType, signedDate, revocationReason,
            revocationDate, isUpgraded, offerType, offerIdentifier, environment, storefront, storefrontId, transactionReason, currency,
            price, offerDiscountType, appTransactionId, offerPeriod, revocationType, revocationPercentage, advancedCommerceInfo,
            billingPlanType, commitmentInfo, deviceVerification, deviceVerificationNonce

        var name: String {
            switch self {
            case .originalTransactionId: "originalTransactionId"
            case .transactionId: "transactionId"
            case .webOrderLineItemId: "webOrderLineItemId"
            case .bundleId: "bundleId"
            case .productId: "productId"
            case .subscriptionGroupIdentifier: "subscriptionGroupIdentifier"
            case .purchaseDate: "purchaseDate"
            case .originalPurchaseDate: "originalPurchaseDate"
            case .expiresDate: "expiresDate"
            case .quantity: "quantity"
            case .type: "type"
            case .appAccountToken: "appAccountToken"
            case .inAppOwnershipType: "inAppOwnershipType"
            case .signedDate: "signedDate"
            case .revocationReason: "revocationReason"
            case .revocationDate: "revocationDate"
            case .isUpgraded: "isUpgraded"
            case .offerType: "offerType"
            case .offerIdentifier: "offerIdentifier"
            case .environment: "environment"
            case .storefront: "storefront"
            case .storefrontId: "storefrontId"
            case .transactionReason: "transactionReason"
            case .currency: "currency"
            case .price: "price"
            case .offerDiscountType: "offerDiscountType"
            case .appTransactionId: "appTransactionId"
            case .offerPeriod: "offerPeriod"
            case .revocationType: "revocationType"
            case .revocationPercentage: "revocationPercentage"
            case .advancedCommerceInfo: "advancedCommerceInfo"
            case .billingPlanType: "billingPlanType"
            case .commitmentInfo: "commitmentInfo"
            case .deviceVerification: "deviceVerification"
            case .deviceVerificationNonce: "deviceVerificationNonce"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 4:
                if key.equals("type") { return .type }
            case 5:
                if key.equals("price") { return .price }
            case 8:
                if key.equals("bundleId") { return .bundleId }
                if key.equals("quantity") { return .quantity }
                if key.equals("currency") { return .currency }
            case 9:
                if key.equals("productId") { return .productId }
                if key.equals("offerType") { return .offerType }
            case 10:
                if key.equals("signedDate") { return .signedDate }
                if key.equals("isUpgraded") { return .isUpgraded }
                if key.equals("storefront") { return .storefront }
            case 11:
                if key.equals("expiresDate") { return .expiresDate }
                if key.equals("environment") { return .environment }
                if key.equals("offerPeriod") { return .offerPeriod }
            case 12:
                if key.equals("purchaseDate") { return .purchaseDate }
                if key.equals("storefrontId") { return .storefrontId }
            case 13:
                if key.equals("transactionId") { return .transactionId }
            case 14:
                if key.equals("revocationDate") { return .revocationDate }
                if key.equals("revocationType") { return .revocationType }
                if key.equals("commitmentInfo") { return .commitmentInfo }
            case 15:
                if key.equals("appAccountToken") { return .appAccountToken }
                if key.equals("offerIdentifier") { return .offerIdentifier }
                if key.equals("billingPlanType") { return .billingPlanType }
            case 16:
                if key.equals("revocationReason") { return .revocationReason }
                if key.equals("appTransactionId") { return .appTransactionId }
            case 17:
                if key.equals("transactionReason") { return .transactionReason }
                if key.equals("offerDiscountType") { return .offerDiscountType }
            case 18:
                if key.equals("webOrderLineItemId") { return .webOrderLineItemId }
                if key.equals("inAppOwnershipType") { return .inAppOwnershipType }
                if key.equals("deviceVerification") { return .deviceVerification }
            case 20:
                if key.equals("originalPurchaseDate") { return .originalPurchaseDate }
                if key.equals("revocationPercentage") { return .revocationPercentage }
                if key.equals("advancedCommerceInfo") { return .advancedCommerceInfo }
            case 21:
                if key.equals("originalTransactionId") { return .originalTransactionId }
            case 23:
                if key.equals("deviceVerificationNonce") { return .deviceVerificationNonce }
            case 27:
                if key.equals("subscriptionGroupIdentifier") { return .subscriptionGroupIdentifier }
            default: break
            }
            return nil
        }
    }

    /// Decodes the JSON payload; verifies nothing.
    public init(jsonPayload: [UInt8], limits: JWSLimits) throws(JWSError) {
        self = try PayloadReader.decode(jsonPayload, limits: limits) { (reader) throws(JWSError) in
            try JWSTransaction(reading: &reader, context: "payload", jsonPayload: jsonPayload)
        }
    }

    init(reading reader: inout PayloadReader, context: String, jsonPayload: [UInt8]) throws(JWSError) {
        var originalTransactionId: String?
        var transactionId: String?
        var webOrderLineItemId: String?
        var bundleId: String?
        var productId: String?
        var subscriptionGroupIdentifier: String?
        var purchaseDate: JWSDate?
        var originalPurchaseDate: JWSDate?
        var expiresDate: JWSDate?
        var quantity: Int?
        var type: ProductType?
        var appAccountToken: String?
        var inAppOwnershipType: InAppOwnershipType?
        var signedDate: JWSDate?
        var revocationReason: RevocationReason?
        var revocationDate: JWSDate?
        var isUpgraded: Bool?
        var offerType: OfferType?
        var offerIdentifier: String?
        var environment: Environment?
        var storefront: String?
        var storefrontId: String?
        var transactionReason: TransactionReason?
        var currency: String?
        var price: Int64?
        var offerDiscountType: OfferDiscountType?
        var appTransactionId: String?
        var offerPeriod: String?
        var revocationType: RevocationType?
        var revocationPercentage: Int64?
        var advancedCommerceInfo: AdvancedCommerceInfo?
        var billingPlanType: BillingPlanType?
        var commitmentInfo: CommitmentInfo?
        var deviceVerification: String?
        var deviceVerificationNonce: String?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .originalTransactionId: originalTransactionId = try reader.string(field)
            case .transactionId: transactionId = try reader.string(field)
            case .webOrderLineItemId: webOrderLineItemId = try reader.string(field)
            case .bundleId: bundleId = try reader.string(field)
            case .productId: productId = try reader.string(field)
            case .subscriptionGroupIdentifier: subscriptionGroupIdentifier = try reader.string(field)
            case .purchaseDate: purchaseDate = try reader.date(field)
            case .originalPurchaseDate: originalPurchaseDate = try reader.date(field)
            case .expiresDate: expiresDate = try reader.date(field)
            case .quantity: quantity = try reader.int(field)
            case .type: type = ProductType(rawValue: try reader.string(field))
            case .appAccountToken: appAccountToken = try reader.string(field)
            case .inAppOwnershipType: inAppOwnershipType = InAppOwnershipType(rawValue: try reader.string(field))
            case .signedDate: signedDate = try reader.date(field)
            case .revocationReason: revocationReason = RevocationReason(rawValue: try reader.int64(field))
            case .revocationDate: revocationDate = try reader.date(field)
            case .isUpgraded: isUpgraded = try reader.bool(field)
            case .offerType: offerType = OfferType(rawValue: try reader.int64(field))
            case .offerIdentifier: offerIdentifier = try reader.string(field)
            case .environment: environment = Environment(rawValue: try reader.string(field))
            case .storefront: storefront = try reader.string(field)
            case .storefrontId: storefrontId = try reader.string(field)
            case .transactionReason: transactionReason = TransactionReason(rawValue: try reader.string(field))
            case .currency: currency = try reader.string(field)
            case .price: price = try reader.int64(field)
            case .offerDiscountType: offerDiscountType = OfferDiscountType(rawValue: try reader.string(field))
            case .appTransactionId: appTransactionId = try reader.string(field)
            case .offerPeriod: offerPeriod = try reader.string(field)
            case .revocationType: revocationType = RevocationType(rawValue: try reader.string(field))
            case .revocationPercentage: revocationPercentage = try reader.int64(field)
            case .advancedCommerceInfo: advancedCommerceInfo = try AdvancedCommerceInfo(reading: &reader, context: "advancedCommerceInfo")
            case .billingPlanType: billingPlanType = BillingPlanType(rawValue: try reader.string(field))
            case .commitmentInfo: commitmentInfo = try CommitmentInfo(reading: &reader, context: "commitmentInfo")
            case .deviceVerification: deviceVerification = try reader.string(field)
            case .deviceVerificationNonce: deviceVerificationNonce = try reader.string(field)
            }
        }
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.appAccountToken = appAccountToken
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.revocationReason = revocationReason
        self.revocationDate = revocationDate
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.environment = environment
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.transactionReason = transactionReason
        self.currency = currency
        self.price = price
        self.offerDiscountType = offerDiscountType
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.advancedCommerceInfo = advancedCommerceInfo
        self.billingPlanType = billingPlanType
        self.commitmentInfo = commitmentInfo
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.unknownFields = state.unknown
        self.jsonPayload = jsonPayload
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.string(.originalTransactionId, originalTransactionId)
        o.string(.transactionId, transactionId)
        o.string(.webOrderLineItemId, webOrderLineItemId)
        o.string(.bundleId, bundleId)
        o.string(.productId, productId)
        o.string(.subscriptionGroupIdentifier, subscriptionGroupIdentifier)
        o.date(.purchaseDate, purchaseDate)
        o.date(.originalPurchaseDate, originalPurchaseDate)
        o.date(.expiresDate, expiresDate)
        o.int(.quantity, quantity)
        o.raw(.type, type)
        o.string(.appAccountToken, appAccountToken)
        o.raw(.inAppOwnershipType, inAppOwnershipType)
        o.date(.signedDate, signedDate)
        o.code(.revocationReason, revocationReason)
        o.date(.revocationDate, revocationDate)
        o.bool(.isUpgraded, isUpgraded)
        o.code(.offerType, offerType)
        o.string(.offerIdentifier, offerIdentifier)
        o.raw(.environment, environment)
        o.string(.storefront, storefront)
        o.string(.storefrontId, storefrontId)
        o.raw(.transactionReason, transactionReason)
        o.string(.currency, currency)
        o.int(.price, price)
        o.raw(.offerDiscountType, offerDiscountType)
        o.string(.appTransactionId, appTransactionId)
        o.string(.offerPeriod, offerPeriod)
        o.raw(.revocationType, revocationType)
        o.int(.revocationPercentage, revocationPercentage)
        o.object(.advancedCommerceInfo, advancedCommerceInfo?.jsonValue())
        o.raw(.billingPlanType, billingPlanType)
        o.object(.commitmentInfo, commitmentInfo?.jsonValue())
        o.string(.deviceVerification, deviceVerification)
        o.string(.deviceVerificationNonce, deviceVerificationNonce)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: JWSTransaction, rhs: JWSTransaction) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}
