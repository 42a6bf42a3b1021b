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

    enum Field: String, TypedPayloadField {
        case sku = "SKU"
        case description, displayName, offer, price, refunds, revocationDate, priceIncreaseInfo

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

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
    }
}
