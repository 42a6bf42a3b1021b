import JSON

/// The payload of a Retention Messaging real-time request (Apple's `DecodedRealtimeRequestBody`).
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``JWSPayloadModel/unknownFields``.
public struct RealtimeRequest: JWSPayload, JWSPayloadModel, Equatable, FieldsPayload {
    /// The transaction identifier of the original purchase. (`originalTransactionId`)
    public var originalTransactionId: String? { fields.string(.originalTransactionId) }
    /// The app's Apple identifier. (`appAppleId`)
    public var appAppleId: Int64? { fields.int64(.appAppleId) }
    /// The product the customer is viewing. (`productId`)
    public var productId: String? { fields.string(.productId) }
    /// The customer's locale (such as `en-US`). (`userLocale`)
    public var userLocale: String? { fields.string(.userLocale) }
    /// The request's identifier. (`requestIdentifier`)
    public var requestIdentifier: String? { fields.string(.requestIdentifier) }
    /// The environment of the request. (`environment`)
    public var environment: Environment? { fields.raw(.environment) }
    /// When the App Store signed the request. (`signedDate`)
    public var signedDate: JWSDate? { fields.date(.signedDate) }
    /// The JSON text this value was decoded from, exactly.
    public let jsonPayload: [UInt8]

    let fields: PayloadFields<Field>

    enum Field: String, TypedPayloadField {
        case originalTransactionId, appAppleId, productId, userLocale, requestIdentifier, environment, signedDate

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .originalTransactionId, .productId, .userLocale, .requestIdentifier, .environment: .string
            case .appAppleId: .int64
            case .signedDate: .date
            }
        }
    }
}
