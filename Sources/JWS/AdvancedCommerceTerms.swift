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

    enum Field: String, TypedPayloadField {
        case period, periodCount, price, reason

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .period, .reason: .string
            case .periodCount, .price: .int64
            }
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

    enum Field: String, TypedPayloadField {
        case refundAmount, refundDate, refundReason, refundType

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .refundAmount: .int64
            case .refundDate: .date
            case .refundReason, .refundType: .string
            }
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

    enum Field: String, TypedPayloadField {
        case dependentSKUs, price, status

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .dependentSKUs: .strings
            case .price: .int64
            case .status: .string
            }
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

    enum Field: String, TypedPayloadField {
        case billingPeriodNumber, commitmentExpiresDate, commitmentPrice, totalBillingPeriods, commitmentAutoRenewProductId,
            commitmentAutoRenewStatus, commitmentRenewalBillingPlanType, commitmentRenewalDate, commitmentRenewalPrice

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .billingPeriodNumber, .commitmentPrice, .totalBillingPeriods, .commitmentAutoRenewStatus, .commitmentRenewalPrice: .int64
            case .commitmentExpiresDate, .commitmentRenewalDate: .date
            case .commitmentAutoRenewProductId, .commitmentRenewalBillingPlanType: .string
            }
        }
    }
}
