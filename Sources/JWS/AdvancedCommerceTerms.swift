public import JSON

/// An offer on an Advanced Commerce item.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct AdvancedCommerceOffer: Sendable, Equatable {
    /// The offer's period (ISO 8601). (`period`)
    public let period: String?
    /// How many periods the offer lasts. (`periodCount`)
    public let periodCount: Int64?
    /// The offer price in milliunits. (`price`)
    public let price: Int64?
    /// Why the offer applies (such as `WIN_BACK`). (`reason`)
    public let reason: String?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]

    enum Field: Int, PayloadField {
        case period, periodCount, price, reason

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

    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try AdvancedCommerceOffer(reading: &reader, context: "AdvancedCommerceOffer")
        }
    }

    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        var period: String?
        var periodCount: Int64?
        var price: Int64?
        var reason: String?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .period: period = try reader.string(field)
            case .periodCount: periodCount = try reader.int64(field)
            case .price: price = try reader.int64(field)
            case .reason: reason = try reader.string(field)
            }
        }
        self.period = period
        self.periodCount = periodCount
        self.price = price
        self.reason = reason
        self.unknownFields = state.unknown
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.string(.period, period)
        o.int(.periodCount, periodCount)
        o.int(.price, price)
        o.string(.reason, reason)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: AdvancedCommerceOffer, rhs: AdvancedCommerceOffer) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}

/// A refund of an Advanced Commerce item.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct AdvancedCommerceRefund: Sendable, Equatable {
    /// The amount refunded in milliunits. (`refundAmount`)
    public let refundAmount: Int64?
    /// When the refund happened. (`refundDate`)
    public let refundDate: JWSDate?
    /// Why (such as `FULFILLMENT_ISSUE`). (`refundReason`)
    public let refundReason: String?
    /// How much (such as `FULL` or `PRORATED`). (`refundType`)
    public let refundType: String?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]

    enum Field: Int, PayloadField {
        case refundAmount, refundDate, refundReason, refundType

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

    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try AdvancedCommerceRefund(reading: &reader, context: "AdvancedCommerceRefund")
        }
    }

    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        var refundAmount: Int64?
        var refundDate: JWSDate?
        var refundReason: String?
        var refundType: String?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .refundAmount: refundAmount = try reader.int64(field)
            case .refundDate: refundDate = try reader.date(field)
            case .refundReason: refundReason = try reader.string(field)
            case .refundType: refundType = try reader.string(field)
            }
        }
        self.refundAmount = refundAmount
        self.refundDate = refundDate
        self.refundReason = refundReason
        self.refundType = refundType
        self.unknownFields = state.unknown
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.int(.refundAmount, refundAmount)
        o.date(.refundDate, refundDate)
        o.string(.refundReason, refundReason)
        o.string(.refundType, refundType)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: AdvancedCommerceRefund, rhs: AdvancedCommerceRefund) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}

/// A pending price increase of an Advanced Commerce item.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct AdvancedCommercePriceIncreaseInfo: Sendable, Equatable {
    /// The SKUs whose price changes with this one. (`dependentSKUs`)
    public let dependentSKUs: [String]?
    /// The new price in milliunits. (`price`)
    public let price: Int64?
    /// The increase's status (such as `PENDING`). (`status`)
    public let status: String?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]

    enum Field: Int, PayloadField {
        case dependentSKUs, price, status

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

    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try AdvancedCommercePriceIncreaseInfo(reading: &reader, context: "AdvancedCommercePriceIncreaseInfo")
        }
    }

    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        var dependentSKUs: [String]?
        var price: Int64?
        var status: String?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .dependentSKUs: dependentSKUs = try reader.strings(field)
            case .price: price = try reader.int64(field)
            case .status: status = try reader.string(field)
            }
        }
        self.dependentSKUs = dependentSKUs
        self.price = price
        self.status = status
        self.unknownFields = state.unknown
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.strings(.dependentSKUs, dependentSKUs)
        o.int(.price, price)
        o.string(.status, status)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: AdvancedCommercePriceIncreaseInfo, rhs: AdvancedCommercePriceIncreaseInfo) -> Bool {
        lhs.jsonValue() == rhs.jsonValue()
    }
}

/// The commitment of a subscription with one (a transaction's or a renewal's `commitmentInfo`, one
/// type: each field says where it appears).
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct CommitmentInfo: Sendable, Equatable {
    /// Transaction: which billing period of the commitment this is. (`billingPeriodNumber`)
    public let billingPeriodNumber: Int64?
    /// Transaction: when the commitment ends. (`commitmentExpiresDate`)
    public let commitmentExpiresDate: JWSDate?
    /// Transaction: the commitment's total price in milliunits. (`commitmentPrice`)
    public let commitmentPrice: Int64?
    /// Transaction: the number of billing periods of the commitment. (`totalBillingPeriods`)
    public let totalBillingPeriods: Int64?
    /// Renewal info: the product the commitment renews to. (`commitmentAutoRenewProductId`)
    public let commitmentAutoRenewProductId: String?
    /// Renewal info: whether the commitment renews. (`commitmentAutoRenewStatus`)
    public let commitmentAutoRenewStatus: AutoRenewStatus?
    /// Renewal info: how the renewed commitment is billed. (`commitmentRenewalBillingPlanType`)
    public let commitmentRenewalBillingPlanType: BillingPlanType?
    /// Renewal info: when the commitment renews. (`commitmentRenewalDate`)
    public let commitmentRenewalDate: JWSDate?
    /// Renewal info: the renewed commitment's price in milliunits. (`commitmentRenewalPrice`)
    public let commitmentRenewalPrice: Int64?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]

    enum Field: Int, PayloadField {
        case billingPeriodNumber, commitmentExpiresDate, commitmentPrice, totalBillingPeriods, commitmentAutoRenewProductId,
            commitmentAutoRenewStatus, commitmentRenewalBillingPlanType, commitmentRenewalDate, commitmentRenewalPrice

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

    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try CommitmentInfo(reading: &reader, context: "CommitmentInfo")
        }
    }

    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        var billingPeriodNumber: Int64?
        var commitmentExpiresDate: JWSDate?
        var commitmentPrice: Int64?
        var totalBillingPeriods: Int64?
        var commitmentAutoRenewProductId: String?
        var commitmentAutoRenewStatus: AutoRenewStatus?
        var commitmentRenewalBillingPlanType: BillingPlanType?
        var commitmentRenewalDate: JWSDate?
        var commitmentRenewalPrice: Int64?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .billingPeriodNumber: billingPeriodNumber = try reader.int64(field)
            case .commitmentExpiresDate: commitmentExpiresDate = try reader.date(field)
            case .commitmentPrice: commitmentPrice = try reader.int64(field)
            case .totalBillingPeriods: totalBillingPeriods = try reader.int64(field)
            case .commitmentAutoRenewProductId: commitmentAutoRenewProductId = try reader.string(field)
            case .commitmentAutoRenewStatus: commitmentAutoRenewStatus = AutoRenewStatus(rawValue: try reader.int64(field))
            case .commitmentRenewalBillingPlanType: commitmentRenewalBillingPlanType = BillingPlanType(rawValue: try reader.string(field))
            case .commitmentRenewalDate: commitmentRenewalDate = try reader.date(field)
            case .commitmentRenewalPrice: commitmentRenewalPrice = try reader.int64(field)
            }
        }
        self.billingPeriodNumber = billingPeriodNumber
        self.commitmentExpiresDate = commitmentExpiresDate
        self.commitmentPrice = commitmentPrice
        self.totalBillingPeriods = totalBillingPeriods
        self.commitmentAutoRenewProductId = commitmentAutoRenewProductId
        self.commitmentAutoRenewStatus = commitmentAutoRenewStatus
        self.commitmentRenewalBillingPlanType = commitmentRenewalBillingPlanType
        self.commitmentRenewalDate = commitmentRenewalDate
        self.commitmentRenewalPrice = commitmentRenewalPrice
        self.unknownFields = state.unknown
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.int(.billingPeriodNumber, billingPeriodNumber)
        o.date(.commitmentExpiresDate, commitmentExpiresDate)
        o.int(.commitmentPrice, commitmentPrice)
        o.int(.totalBillingPeriods, totalBillingPeriods)
        o.string(.commitmentAutoRenewProductId, commitmentAutoRenewProductId)
        o.code(.commitmentAutoRenewStatus, commitmentAutoRenewStatus)
        o.raw(.commitmentRenewalBillingPlanType, commitmentRenewalBillingPlanType)
        o.date(.commitmentRenewalDate, commitmentRenewalDate)
        o.int(.commitmentRenewalPrice, commitmentRenewalPrice)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: CommitmentInfo, rhs: CommitmentInfo) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}
