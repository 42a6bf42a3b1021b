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

    enum Field: String, TypedPayloadField {
        case consistencyToken, descriptors, estimatedTax, items, period, requestReferenceId, taxCode, taxExclusivePrice, taxRate

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .consistencyToken, .period, .requestReferenceId, .taxCode, .taxRate: .string
            case .descriptors: .object(AdvancedCommerceDescriptors.self)
            case .items: .objects(AdvancedCommerceItem.self)
            case .estimatedTax, .taxExclusivePrice: .int64
            }
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

    enum Field: String, TypedPayloadField {
        case description, displayName

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .description, .displayName: .string
            }
        }
    }
}
