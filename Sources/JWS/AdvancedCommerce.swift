import JSON

/// Advanced Commerce API details of a transaction or renewal (Apple's
/// `AdvancedCommerceTransactionInfo` and `AdvancedCommerceRenewalInfo`, one type: each field says
/// where it appears).
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``JWSPayloadModel/unknownFields``.
public struct AdvancedCommerceInfo: JWSPayloadObject, Equatable, FieldsObject {
    /// Renewal info: the token for the next Advanced Commerce request. (`consistencyToken`)
    public var consistencyToken: String? { fields.string(.consistencyToken) }
    /// The display name and description. (`descriptors`)
    public var descriptors: AdvancedCommerceDescriptors? { fields.object(.descriptors) }
    /// Transaction: the estimated tax in milliunits. (`estimatedTax`)
    public var estimatedTax: Int64? { fields.int64(.estimatedTax) }
    /// The items (SKUs) of the purchase. (`items`)
    public var items: [AdvancedCommerceItem]? { fields.objects(.items) }
    /// The billing period (ISO 8601). (`period`)
    public var period: String? { fields.string(.period) }
    /// The caller's reference of the request. (`requestReferenceId`)
    public var requestReferenceId: String? { fields.string(.requestReferenceId) }
    /// The tax code. (`taxCode`)
    public var taxCode: String? { fields.string(.taxCode) }
    /// Transaction: the price without tax, in milliunits. (`taxExclusivePrice`)
    public var taxExclusivePrice: Int64? { fields.int64(.taxExclusivePrice) }
    /// Transaction: the tax rate as a decimal string (such as `0.15`). (`taxRate`)
    public var taxRate: String? { fields.string(.taxRate) }

    let fields: PayloadFields<Field>

    enum Field: Int, TypedPayloadField {
        case consistencyToken, descriptors, estimatedTax, items, period, requestReferenceId, taxCode, taxExclusivePrice, taxRate

        var kind: PayloadFieldKind {
            switch self {
            case .consistencyToken, .period, .requestReferenceId, .taxCode, .taxRate: .string
            case .descriptors: .object(AdvancedCommerceDescriptors.self)
            case .items: .objects(AdvancedCommerceItem.self)
            case .estimatedTax, .taxExclusivePrice: .int64
            }
        }

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
}

/// The display name and description of an Advanced Commerce purchase or item.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``JWSPayloadModel/unknownFields``.
public struct AdvancedCommerceDescriptors: JWSPayloadObject, Equatable, FieldsObject {
    /// The description. (`description`)
    public var description: String? { fields.string(.description) }
    /// The display name. (`displayName`)
    public var displayName: String? { fields.string(.displayName) }

    let fields: PayloadFields<Field>

    enum Field: Int, TypedPayloadField {
        case description, displayName

        var kind: PayloadFieldKind {
            switch self {
            case .description, .displayName: .string
            }
        }

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
}
