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

    enum Field: String, PurchaseField {
        case originalTransactionId, transactionId, webOrderLineItemId, bundleId, productId, subscriptionGroupIdentifier, purchaseDate,
            originalPurchaseDate, expiresDate, quantity, type, appAccountToken, inAppOwnershipType, signedDate, revocationReason,
            revocationDate, isUpgraded, offerType, offerIdentifier, environment, storefront, storefrontId, transactionReason, currency,
            price, offerDiscountType, appTransactionId, offerPeriod, revocationType, revocationPercentage, advancedCommerceInfo,
            billingPlanType, commitmentInfo, deviceVerification, deviceVerificationNonce

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

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
    }
}
