public import JSON

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
