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
