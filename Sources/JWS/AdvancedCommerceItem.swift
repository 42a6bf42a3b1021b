import JSON

/// One item (SKU) of an Advanced Commerce transaction or renewal.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``JWSPayloadModel/unknownFields``.
public struct AdvancedCommerceItem: JWSPayloadObject, Equatable, FieldsObject {
    /// The item's SKU (`SKU`). (`SKU`)
    public var sku: String? { fields.string(.sku) }
    /// The description. (`description`)
    public var description: String? { fields.string(.description) }
    /// The display name. (`displayName`)
    public var displayName: String? { fields.string(.displayName) }
    /// The offer applied to the item. (`offer`)
    public var offer: AdvancedCommerceOffer? { fields.object(.offer) }
    /// The price in milliunits. (`price`)
    public var price: Int64? { fields.int64(.price) }
    /// Transaction: refunds of the item. (`refunds`)
    public var refunds: [AdvancedCommerceRefund]? { fields.objects(.refunds) }
    /// Transaction: when the item was revoked. (`revocationDate`)
    public var revocationDate: JWSDate? { fields.date(.revocationDate) }
    /// Renewal info: a pending price increase. (`priceIncreaseInfo`)
    public var priceIncreaseInfo: AdvancedCommercePriceIncreaseInfo? { fields.object(.priceIncreaseInfo) }

    let fields: PayloadFields<Field>

    enum Field: Int, TypedPayloadField {
        case sku, description, displayName, offer, price, refunds, revocationDate, priceIncreaseInfo

        var kind: PayloadFieldKind {
            switch self {
            case .sku, .description, .displayName: .string
            case .offer: .object(AdvancedCommerceOffer.self)
            case .refunds: .objects(AdvancedCommerceRefund.self)
            case .priceIncreaseInfo: .object(AdvancedCommercePriceIncreaseInfo.self)
            case .price: .int64
            case .revocationDate: .date
            }
        }

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
}
