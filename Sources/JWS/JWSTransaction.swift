import JSON

/// A signed transaction's payload (Apple's `JWSTransactionDecodedPayload`): StoreKit 2's
/// `jwsRepresentation`, the App Store Server API's `signedTransactions`, a notification's
/// `signedTransactionInfo`.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below and those it shares with ``JWSRenewalInfo`` (``PurchasePayload``), everything else in
/// ``JWSPayloadModel/unknownFields``.
public struct JWSTransaction: PurchasePayload, Equatable, PurchaseFieldsPayload {
    /// The transaction's identifier (a decimal string; Xcode writes `0`). (`transactionId`)
    public var transactionId: String? { fields.string(.transactionId) }
    /// The identifier of subscription purchase events across devices, renewals included. (`webOrderLineItemId`)
    public var webOrderLineItemId: String? { fields.string(.webOrderLineItemId) }
    /// The app's bundle identifier. (`bundleId`)
    public var bundleId: String? { fields.string(.bundleId) }
    /// The subscription group of a subscription. (`subscriptionGroupIdentifier`)
    public var subscriptionGroupIdentifier: String? { fields.string(.subscriptionGroupIdentifier) }
    /// When the App Store charged the account (renewals included). (`purchaseDate`)
    public var purchaseDate: JWSDate? { fields.date(.purchaseDate) }
    /// The purchase date of the original transaction (Xcode can write year 1). (`originalPurchaseDate`)
    public var originalPurchaseDate: JWSDate? { fields.date(.originalPurchaseDate) }
    /// When a subscription expires or renews. (`expiresDate`)
    public var expiresDate: JWSDate? { fields.date(.expiresDate) }
    /// The number of consumables bought. (`quantity`)
    public var quantity: Int? { fields.int(.quantity) }
    /// The kind of product. (`type`)
    public var type: ProductType? { fields.raw(.type) }
    /// Bought, or shared through Family Sharing. (`inAppOwnershipType`)
    public var inAppOwnershipType: InAppOwnershipType? { fields.raw(.inAppOwnershipType) }
    /// Why Apple refunded or revoked the transaction. (`revocationReason`)
    public var revocationReason: RevocationReason? { fields.code(.revocationReason) }
    /// When Apple refunded or revoked the transaction. (`revocationDate`)
    public var revocationDate: JWSDate? { fields.date(.revocationDate) }
    /// Whether the customer upgraded to another subscription. (`isUpgraded`)
    public var isUpgraded: Bool? { fields.bool(.isUpgraded) }
    /// The three-letter code of the storefront's country or region. (`storefront`)
    public var storefront: String? { fields.string(.storefront) }
    /// Apple's identifier of the storefront. (`storefrontId`)
    public var storefrontId: String? { fields.string(.storefrontId) }
    /// A purchase or a renewal. (`transactionReason`)
    public var transactionReason: TransactionReason? { fields.raw(.transactionReason) }
    /// The price in milliunits of the currency. (`price`)
    public var price: Int64? { fields.int64(.price) }
    /// How the transaction was revoked. (`revocationType`)
    public var revocationType: RevocationType? { fields.raw(.revocationType) }
    /// The refunded share in thousandths of a percent (50000 is 50%). (`revocationPercentage`)
    public var revocationPercentage: Int64? { fields.int64(.revocationPercentage) }
    /// How a subscription with a commitment is billed. (`billingPlanType`)
    public var billingPlanType: BillingPlanType? { fields.raw(.billingPlanType) }
    /// The JSON text this value was decoded from, exactly.
    public let jsonPayload: [UInt8]

    let fields: PayloadFields<Field>

    enum Field: Int, PurchaseField {
        case originalTransactionId, transactionId, webOrderLineItemId, bundleId, productId, subscriptionGroupIdentifier, purchaseDate,
            originalPurchaseDate, expiresDate, quantity, type, appAccountToken, inAppOwnershipType, signedDate, revocationReason,
            revocationDate, isUpgraded, offerType, offerIdentifier, environment, storefront, storefrontId, transactionReason, currency,
            price, offerDiscountType, appTransactionId, offerPeriod, revocationType, revocationPercentage, advancedCommerceInfo,
            billingPlanType, commitmentInfo, deviceVerification, deviceVerificationNonce

        var kind: PayloadFieldKind {
            switch self {
            case .originalTransactionId, .transactionId, .webOrderLineItemId, .bundleId, .productId, .subscriptionGroupIdentifier, .type,
                .appAccountToken, .inAppOwnershipType, .offerIdentifier, .environment, .storefront, .storefrontId, .transactionReason,
                .currency, .offerDiscountType, .appTransactionId, .offerPeriod, .revocationType, .billingPlanType, .deviceVerification,
                .deviceVerificationNonce:
                .string
            case .purchaseDate, .originalPurchaseDate, .expiresDate, .signedDate, .revocationDate: .date
            case .quantity: .int
            case .revocationReason, .offerType, .price, .revocationPercentage: .int64
            case .isUpgraded: .bool
            case .advancedCommerceInfo: .object(AdvancedCommerceInfo.self)
            case .commitmentInfo: .object(CommitmentInfo.self)
            }
        }

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
}
