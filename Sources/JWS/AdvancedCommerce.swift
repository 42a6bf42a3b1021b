public import JSON

/// Advanced Commerce API details of a transaction or renewal (Apple's
/// `AdvancedCommerceTransactionInfo` and `AdvancedCommerceRenewalInfo`, one type: each field says
/// where it appears).
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct AdvancedCommerceInfo: Sendable, Equatable {
    /// Renewal info: the token for the next Advanced Commerce request. (`consistencyToken`)
    public let consistencyToken: String?
    /// The display name and description. (`descriptors`)
    public let descriptors: AdvancedCommerceDescriptors?
    /// Transaction: the estimated tax in milliunits. (`estimatedTax`)
    public let estimatedTax: Int64?
    /// The items (SKUs) of the purchase. (`items`)
    public let items: [AdvancedCommerceItem]?
    /// The billing period (ISO 8601). (`period`)
    public let period: String?
    /// The caller's reference of the request. (`requestReferenceId`)
    public let requestReferenceId: String?
    /// The tax code. (`taxCode`)
    public let taxCode: String?
    /// Transaction: the price without tax, in milliunits. (`taxExclusivePrice`)
    public let taxExclusivePrice: Int64?
    /// Transaction: the tax rate as a decimal string (such as `0.15`). (`taxRate`)
    public let taxRate: String?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]

    enum Field: Int, PayloadField {
        case consistencyToken, descriptors, estimatedTax, items, period, requestReferenceId, taxCode, taxExclusivePrice, taxRate

        var name: String {
            switch self {
            case .consistencyToken: "consistencyToken"
            case .descriptors: "descriptors"
            case .estimatedTax: "estimatedTax"
            case .items: "items"
            case .period: "period"
            case .requestReferenceId: "requestReferenceId"
            case .taxCode: "taxCode"
            case .taxExclusivePrice: "taxExclusivePrice"
            case .taxRate: "taxRate"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 5:
                if key.equals("items") { return .items }
            case 6:
                if key.equals("period") { return .period }
            case 7:
                if key.equals("taxCode") { return .taxCode }
                if key.equals("taxRate") { return .taxRate }
            case 11:
                if key.equals("descriptors") { return .descriptors }
            case 12:
                if key.equals("estimatedTax") { return .estimatedTax }
            case 16:
                if key.equals("consistencyToken") { return .consistencyToken }
            case 17:
                if key.equals("taxExclusivePrice") { return .taxExclusivePrice }
            case 18:
                if key.equals("requestReferenceId") { return .requestReferenceId }
            default: break
            }
            return nil
        }
    }

    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try AdvancedCommerceInfo(reading: &reader, context: "AdvancedCommerceInfo")
        }
    }

    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        var consistencyToken: String?
        var descriptors: AdvancedCommerceDescriptors?
        var estimatedTax: Int64?
        var items: [AdvancedCommerceItem]?
        var period: String?
        var requestReferenceId: String?
        var taxCode: String?
        var taxExclusivePrice: Int64?
        var taxRate: String?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .consistencyToken: consistencyToken = try reader.string(field)
            case .descriptors: descriptors = try AdvancedCommerceDescriptors(reading: &reader, context: "descriptors")
            case .estimatedTax: estimatedTax = try reader.int64(field)
            case .items:
                items = try reader.array(field) { (element) throws(JWSError) in
                    try AdvancedCommerceItem(reading: &element, context: "items")
                }
            case .period: period = try reader.string(field)
            case .requestReferenceId: requestReferenceId = try reader.string(field)
            case .taxCode: taxCode = try reader.string(field)
            case .taxExclusivePrice: taxExclusivePrice = try reader.int64(field)
            case .taxRate: taxRate = try reader.string(field)
            }
        }
        self.consistencyToken = consistencyToken
        self.descriptors = descriptors
        self.estimatedTax = estimatedTax
        self.items = items
        self.period = period
        self.requestReferenceId = requestReferenceId
        self.taxCode = taxCode
        self.taxExclusivePrice = taxExclusivePrice
        self.taxRate = taxRate
        self.unknownFields = state.unknown
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.string(.consistencyToken, consistencyToken)
        o.object(.descriptors, descriptors?.jsonValue())
        o.int(.estimatedTax, estimatedTax)
        o.object(.items, items.map { .array($0.map { $0.jsonValue() }) })
        o.string(.period, period)
        o.string(.requestReferenceId, requestReferenceId)
        o.string(.taxCode, taxCode)
        o.int(.taxExclusivePrice, taxExclusivePrice)
        o.string(.taxRate, taxRate)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: AdvancedCommerceInfo, rhs: AdvancedCommerceInfo) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}

/// The display name and description of an Advanced Commerce purchase or item.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct AdvancedCommerceDescriptors: Sendable, Equatable {
    /// The description. (`description`)
    public let description: String?
    /// The display name. (`displayName`)
    public let displayName: String?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]

    enum Field: Int, PayloadField {
        case description, displayName

        var name: String {
            switch self {
            case .description: "description"
            case .displayName: "displayName"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 11:
                if key.equals("description") { return .description }
                if key.equals("displayName") { return .displayName }
            default: break
            }
            return nil
        }
    }

    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try AdvancedCommerceDescriptors(reading: &reader, context: "AdvancedCommerceDescriptors")
        }
    }

    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        var description: String?
        var displayName: String?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .description: description = try reader.string(field)
            case .displayName: displayName = try reader.string(field)
            }
        }
        self.description = description
        self.displayName = displayName
        self.unknownFields = state.unknown
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.string(.description, description)
        o.string(.displayName, displayName)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: AdvancedCommerceDescriptors, rhs: AdvancedCommerceDescriptors) -> Bool {
        lhs.jsonValue() == rhs.jsonValue()
    }
}

/// One item (SKU) of an Advanced Commerce transaction or renewal.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct AdvancedCommerceItem: Sendable, Equatable {
    /// The item's SKU (`SKU`). (`SKU`)
    public let sku: String?
    /// The description. (`description`)
    public let description: String?
    /// The display name. (`displayName`)
    public let displayName: String?
    /// The offer applied to the item. (`offer`)
    public let offer: AdvancedCommerceOffer?
    /// The price in milliunits. (`price`)
    public let price: Int64?
    /// Transaction: refunds of the item. (`refunds`)
    public let refunds: [AdvancedCommerceRefund]?
    /// Transaction: when the item was revoked. (`revocationDate`)
    public let revocationDate: JWSDate?
    /// Renewal info: a pending price increase. (`priceIncreaseInfo`)
    public let priceIncreaseInfo: AdvancedCommercePriceIncreaseInfo?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]

    enum Field: Int, PayloadField {
        case sku, description, displayName, offer, price, refunds, revocationDate, priceIncreaseInfo

        var name: String {
            switch self {
            case .sku: "SKU"
            case .description: "description"
            case .displayName: "displayName"
            case .offer: "offer"
            case .price: "price"
            case .refunds: "refunds"
            case .revocationDate: "revocationDate"
            case .priceIncreaseInfo: "priceIncreaseInfo"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 3:
                if key.equals("SKU") { return .sku }
            case 5:
                if key.equals("offer") { return .offer }
                if key.equals("price") { return .price }
            case 7:
                if key.equals("refunds") { return .refunds }
            case 11:
                if key.equals("description") { return .description }
                if key.equals("displayName") { return .displayName }
            case 14:
                if key.equals("revocationDate") { return .revocationDate }
            case 17:
                if key.equals("priceIncreaseInfo") { return .priceIncreaseInfo }
            default: break
            }
            return nil
        }
    }

    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try AdvancedCommerceItem(reading: &reader, context: "AdvancedCommerceItem")
        }
    }

    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        var sku: String?
        var description: String?
        var displayName: String?
        var offer: AdvancedCommerceOffer?
        var price: Int64?
        var refunds: [AdvancedCommerceRefund]?
        var revocationDate: JWSDate?
        var priceIncreaseInfo: AdvancedCommercePriceIncreaseInfo?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .sku: sku = try reader.string(field)
            case .description: description = try reader.string(field)
            case .displayName: displayName = try reader.string(field)
            case .offer: offer = try AdvancedCommerceOffer(reading: &reader, context: "offer")
            case .price: price = try reader.int64(field)
            case .refunds:
                refunds = try reader.array(field) { (element) throws(JWSError) in
                    try AdvancedCommerceRefund(reading: &element, context: "refunds")
                }
            case .revocationDate: revocationDate = try reader.date(field)
            case .priceIncreaseInfo:
                priceIncreaseInfo = try AdvancedCommercePriceIncreaseInfo(reading: &reader, context: "priceIncreaseInfo")
            }
        }
        self.sku = sku
        self.description = description
        self.displayName = displayName
        self.offer = offer
        self.price = price
        self.refunds = refunds
        self.revocationDate = revocationDate
        self.priceIncreaseInfo = priceIncreaseInfo
        self.unknownFields = state.unknown
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.string(.sku, sku)
        o.string(.description, description)
        o.string(.displayName, displayName)
        o.object(.offer, offer?.jsonValue())
        o.int(.price, price)
        o.object(.refunds, refunds.map { .array($0.map { $0.jsonValue() }) })
        o.date(.revocationDate, revocationDate)
        o.object(.priceIncreaseInfo, priceIncreaseInfo?.jsonValue())
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: AdvancedCommerceItem, rhs: AdvancedCommerceItem) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}

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
