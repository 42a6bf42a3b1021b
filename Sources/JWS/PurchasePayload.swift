/// The fields a signed transaction (``JWSTransaction``) and a subscription's signed renewal info
/// (``JWSRenewalInfo``) share: the same names, with the same types and meaning.
///
/// Decoding verifies nothing (see ``JWSPayload``).
public protocol PurchasePayload: JWSPayload, JWSPayloadModel {
    /// The transaction identifier of the original purchase. (`originalTransactionId`)
    var originalTransactionId: String? { get }
    /// The product identifier set in App Store Connect (the subscription's, in renewal info).
    /// (`productId`)
    var productId: String? { get }
    /// When the App Store signed the data. (`signedDate`)
    var signedDate: JWSDate? { get }
    /// The environment (absent in 2021 payloads). (`environment`)
    var environment: Environment? { get }
    /// The kind of offer applied (at the next renewal, in renewal info). (`offerType`)
    var offerType: OfferType? { get }
    /// The offer's identifier or offer code reference name. (`offerIdentifier`)
    var offerIdentifier: String? { get }
    /// The payment mode of the offer. (`offerDiscountType`)
    var offerDiscountType: OfferDiscountType? { get }
    /// The duration of the offer (ISO 8601, such as `P1Y`). (`offerPeriod`)
    var offerPeriod: String? { get }
    /// The ISO 4217 currency code of the price (``JWSTransaction/price``,
    /// ``JWSRenewalInfo/renewalPrice``). (`currency`)
    var currency: String? { get }
    /// The UUID the app attached to the purchase, as written. (`appAccountToken`)
    var appAccountToken: String? { get }
    /// The identifier of the app download transaction. (`appTransactionId`)
    var appTransactionId: String? { get }
    /// Advanced Commerce API details. (`advancedCommerceInfo`)
    var advancedCommerceInfo: AdvancedCommerceInfo? { get }
    /// The commitment of a subscription with one. (`commitmentInfo`)
    var commitmentInfo: CommitmentInfo? { get }
    /// Base64 of the device verification hash (Xcode; StoreKit 2 on device for transactions).
    /// (`deviceVerification`)
    var deviceVerification: String? { get }
    /// The nonce of the device verification hash. (`deviceVerificationNonce`)
    var deviceVerificationNonce: String? { get }
}

/// The field table of a ``PurchasePayload`` model: its cases of the shared fields are these.
protocol PurchaseField: TypedPayloadField {
    static var originalTransactionId: Self { get }
    static var productId: Self { get }
    static var signedDate: Self { get }
    static var environment: Self { get }
    static var offerType: Self { get }
    static var offerIdentifier: Self { get }
    static var offerDiscountType: Self { get }
    static var offerPeriod: Self { get }
    static var currency: Self { get }
    static var appAccountToken: Self { get }
    static var appTransactionId: Self { get }
    static var advancedCommerceInfo: Self { get }
    static var commitmentInfo: Self { get }
    static var deviceVerification: Self { get }
    static var deviceVerificationNonce: Self { get }
}

/// A ``PurchasePayload`` kept as ``PayloadFields``: the shared fields are read once here.
protocol PurchaseFieldsPayload: FieldsPayload, PurchasePayload where Field: PurchaseField {}

extension PurchaseFieldsPayload {
    /// `originalTransactionId` as read.
    public var originalTransactionId: String? { fields.string(.originalTransactionId) }
    /// `productId` as read.
    public var productId: String? { fields.string(.productId) }
    /// `signedDate` as read.
    public var signedDate: JWSDate? { fields.date(.signedDate) }
    /// `environment` as read.
    public var environment: Environment? { fields.raw(.environment) }
    /// `offerType` as read.
    public var offerType: OfferType? { fields.code(.offerType) }
    /// `offerIdentifier` as read.
    public var offerIdentifier: String? { fields.string(.offerIdentifier) }
    /// `offerDiscountType` as read.
    public var offerDiscountType: OfferDiscountType? { fields.raw(.offerDiscountType) }
    /// `offerPeriod` as read.
    public var offerPeriod: String? { fields.string(.offerPeriod) }
    /// `currency` as read.
    public var currency: String? { fields.string(.currency) }
    /// `appAccountToken` as read.
    public var appAccountToken: String? { fields.string(.appAccountToken) }
    /// `appTransactionId` as read.
    public var appTransactionId: String? { fields.string(.appTransactionId) }
    /// `advancedCommerceInfo` as read.
    public var advancedCommerceInfo: AdvancedCommerceInfo? { fields.object(.advancedCommerceInfo) }
    /// `commitmentInfo` as read.
    public var commitmentInfo: CommitmentInfo? { fields.object(.commitmentInfo) }
    /// `deviceVerification` as read.
    public var deviceVerification: String? { fields.string(.deviceVerification) }
    /// `deviceVerificationNonce` as read.
    public var deviceVerificationNonce: String? { fields.string(.deviceVerificationNonce) }
}
