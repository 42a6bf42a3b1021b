import JSON

/// An offer on an Advanced Commerce item.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``JWSPayloadModel/unknownFields``.
public struct AdvancedCommerceOffer: JWSPayloadObject, Equatable, FieldsObject {
    /// The offer's period (ISO 8601). (`period`)
    public var period: String? { fields.string(.period) }
    /// How many periods the offer lasts. (`periodCount`)
    public var periodCount: Int64? { fields.int64(.periodCount) }
    /// The offer price in milliunits. (`price`)
    public var price: Int64? { fields.int64(.price) }
    /// Why the offer applies (such as `WIN_BACK`). (`reason`)
    public var reason: String? { fields.string(.reason) }

    let fields: PayloadFields<Field>

    enum Field: Int, TypedPayloadField {
        case period, periodCount, price, reason

        var kind: PayloadFieldKind {
            switch self {
            case .period, .reason: .string
            case .periodCount, .price: .int64
            }
        }

        var name: String {
            switch self {
            case .period: "period"
            case .periodCount: "periodCount"
            case .price: "price"
            case .reason: "reason"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 5:
                if key.equals("price") { return .price }
            case 6:
                if key.equals("period") { return .period }
                if key.equals("reason") { return .reason }
            case 11:
                if key.equals("periodCount") { return .periodCount }
            default: break
            }
            return nil
        }
    }
}

/// A refund of an Advanced Commerce item.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``JWSPayloadModel/unknownFields``.
public struct AdvancedCommerceRefund: JWSPayloadObject, Equatable, FieldsObject {
    /// The amount refunded in milliunits. (`refundAmount`)
    public var refundAmount: Int64? { fields.int64(.refundAmount) }
    /// When the refund happened. (`refundDate`)
    public var refundDate: JWSDate? { fields.date(.refundDate) }
    /// Why (such as `FULFILLMENT_ISSUE`). (`refundReason`)
    public var refundReason: String? { fields.string(.refundReason) }
    /// How much (such as `FULL` or `PRORATED`). (`refundType`)
    public var refundType: String? { fields.string(.refundType) }

    let fields: PayloadFields<Field>

    enum Field: Int, TypedPayloadField {
        case refundAmount, refundDate, refundReason, refundType

        var kind: PayloadFieldKind {
            switch self {
            case .refundAmount: .int64
            case .refundDate: .date
            case .refundReason, .refundType: .string
            }
        }

        var name: String {
            switch self {
            case .refundAmount: "refundAmount"
            case .refundDate: "refundDate"
            case .refundReason: "refundReason"
            case .refundType: "refundType"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 10:
                if key.equals("refundDate") { return .refundDate }
                if key.equals("refundType") { return .refundType }
            case 12:
                if key.equals("refundAmount") { return .refundAmount }
                if key.equals("refundReason") { return .refundReason }
            default: break
            }
            return nil
        }
    }
}

/// A pending price increase of an Advanced Commerce item.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``JWSPayloadModel/unknownFields``.
public struct AdvancedCommercePriceIncreaseInfo: JWSPayloadObject, Equatable, FieldsObject {
    /// The SKUs whose price changes with this one. (`dependentSKUs`)
    public var dependentSKUs: [String]? { fields.strings(.dependentSKUs) }
    /// The new price in milliunits. (`price`)
    public var price: Int64? { fields.int64(.price) }
    /// The increase's status (such as `PENDING`). (`status`)
    public var status: String? { fields.string(.status) }

    let fields: PayloadFields<Field>

    enum Field: Int, TypedPayloadField {
        case dependentSKUs, price, status

        var kind: PayloadFieldKind {
            switch self {
            case .dependentSKUs: .strings
            case .price: .int64
            case .status: .string
            }
        }

        var name: String {
            switch self {
            case .dependentSKUs: "dependentSKUs"
            case .price: "price"
            case .status: "status"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 5:
                if key.equals("price") { return .price }
            case 6:
                if key.equals("status") { return .status }
            case 13:
                if key.equals("dependentSKUs") { return .dependentSKUs }
            default: break
            }
            return nil
        }
    }
}

/// The commitment of a subscription with one (a transaction's or a renewal's `commitmentInfo`, one
/// type: each field says where it appears).
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``JWSPayloadModel/unknownFields``.
public struct CommitmentInfo: JWSPayloadObject, Equatable, FieldsObject {
    /// Transaction: which billing period of the commitment this is. (`billingPeriodNumber`)
    public var billingPeriodNumber: Int64? { fields.int64(.billingPeriodNumber) }
    /// Transaction: when the commitment ends. (`commitmentExpiresDate`)
    public var commitmentExpiresDate: JWSDate? { fields.date(.commitmentExpiresDate) }
    /// Transaction: the commitment's total price in milliunits. (`commitmentPrice`)
    public var commitmentPrice: Int64? { fields.int64(.commitmentPrice) }
    /// Transaction: the number of billing periods of the commitment. (`totalBillingPeriods`)
    public var totalBillingPeriods: Int64? { fields.int64(.totalBillingPeriods) }
    /// Renewal info: the product the commitment renews to. (`commitmentAutoRenewProductId`)
    public var commitmentAutoRenewProductId: String? { fields.string(.commitmentAutoRenewProductId) }
    /// Renewal info: whether the commitment renews. (`commitmentAutoRenewStatus`)
    public var commitmentAutoRenewStatus: AutoRenewStatus? { fields.code(.commitmentAutoRenewStatus) }
    /// Renewal info: how the renewed commitment is billed. (`commitmentRenewalBillingPlanType`)
    public var commitmentRenewalBillingPlanType: BillingPlanType? { fields.raw(.commitmentRenewalBillingPlanType) }
    /// Renewal info: when the commitment renews. (`commitmentRenewalDate`)
    public var commitmentRenewalDate: JWSDate? { fields.date(.commitmentRenewalDate) }
    /// Renewal info: the renewed commitment's price in milliunits. (`commitmentRenewalPrice`)
    public var commitmentRenewalPrice: Int64? { fields.int64(.commitmentRenewalPrice) }

    let fields: PayloadFields<Field>

    enum Field: Int, TypedPayloadField {
        case billingPeriodNumber, commitmentExpiresDate, commitmentPrice, totalBillingPeriods, commitmentAutoRenewProductId,
            commitmentAutoRenewStatus, commitmentRenewalBillingPlanType, commitmentRenewalDate, commitmentRenewalPrice

        var kind: PayloadFieldKind {
            switch self {
            case .billingPeriodNumber, .commitmentPrice, .totalBillingPeriods, .commitmentAutoRenewStatus, .commitmentRenewalPrice: .int64
            case .commitmentExpiresDate, .commitmentRenewalDate: .date
            case .commitmentAutoRenewProductId, .commitmentRenewalBillingPlanType: .string
            }
        }

        var name: String {
            switch self {
            case .billingPeriodNumber: "billingPeriodNumber"
            case .commitmentExpiresDate: "commitmentExpiresDate"
            case .commitmentPrice: "commitmentPrice"
            case .totalBillingPeriods: "totalBillingPeriods"
            case .commitmentAutoRenewProductId: "commitmentAutoRenewProductId"
            case .commitmentAutoRenewStatus: "commitmentAutoRenewStatus"
            case .commitmentRenewalBillingPlanType: "commitmentRenewalBillingPlanType"
            case .commitmentRenewalDate: "commitmentRenewalDate"
            case .commitmentRenewalPrice: "commitmentRenewalPrice"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 15:
                if key.equals("commitmentPrice") { return .commitmentPrice }
            case 19:
                if key.equals("billingPeriodNumber") { return .billingPeriodNumber }
                if key.equals("totalBillingPeriods") { return .totalBillingPeriods }
            case 21:
                if key.equals("commitmentExpiresDate") { return .commitmentExpiresDate }
                if key.equals("commitmentRenewalDate") { return .commitmentRenewalDate }
            case 22:
                if key.equals("commitmentRenewalPrice") { return .commitmentRenewalPrice }
            case 25:
                if key.equals("commitmentAutoRenewStatus") { return .commitmentAutoRenewStatus }
            case 28:
                if key.equals("commitmentAutoRenewProductId") { return .commitmentAutoRenewProductId }
            case 32:
                if key.equals("commitmentRenewalBillingPlanType") { return .commitmentRenewalBillingPlanType }
            default: break
            }
            return nil
        }
    }
}
