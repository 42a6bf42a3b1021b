public import JSON

/// The payload of a Retention Messaging real-time request (Apple's `DecodedRealtimeRequestBody`).
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct RealtimeRequest: JWSPayload, Equatable {
    /// The transaction identifier of the original purchase. (`originalTransactionId`)
    public let originalTransactionId: String?
    /// The app's Apple identifier. (`appAppleId`)
    public let appAppleId: Int64?
    /// The product the customer is viewing. (`productId`)
    public let productId: String?
    /// The customer's locale (such as `en-US`). (`userLocale`)
    public let userLocale: String?
    /// The request's identifier. (`requestIdentifier`)
    public let requestIdentifier: String?
    /// The environment of the request. (`environment`)
    public let environment: Environment?
    /// When the App Store signed the request. (`signedDate`)
    public let signedDate: JWSDate?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]
    /// The JSON text this value was decoded from, exactly.
    public let jsonPayload: [UInt8]

    enum Field: Int, PayloadField {
        case originalTransactionId, appAppleId, productId, userLocale, requestIdentifier, environment, signedDate

        var name: String {
            switch self {
            case .originalTransactionId: "originalTransactionId"
            case .appAppleId: "appAppleId"
            case .productId: "productId"
            case .userLocale: "userLocale"
            case .requestIdentifier: "requestIdentifier"
            case .environment: "environment"
            case .signedDate: "signedDate"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 9:
                if key.equals("productId") { return .productId }
            case 10:
                if key.equals("appAppleId") { return .appAppleId }
                if key.equals("userLocale") { return .userLocale }
                if key.equals("signedDate") { return .signedDate }
            case 11:
                if key.equals("environment") { return .environment }
            case 17:
                if key.equals("requestIdentifier") { return .requestIdentifier }
            case 21:
                if key.equals("originalTransactionId") { return .originalTransactionId }
            default: break
            }
            return nil
        }
    }

    /// Decodes the JSON payload; verifies nothing.
    public init(jsonPayload: [UInt8], limits: JWSLimits) throws(JWSError) {
        self = try PayloadReader.decode(jsonPayload, limits: limits) { (reader) throws(JWSError) in
            try RealtimeRequest(reading: &reader, context: "payload", jsonPayload: jsonPayload)
        }
    }

    init(reading reader: inout PayloadReader, context: String, jsonPayload: [UInt8]) throws(JWSError) {
        var originalTransactionId: String?
        var appAppleId: Int64?
        var productId: String?
        var userLocale: String?
        var requestIdentifier: String?
        var environment: Environment?
        var signedDate: JWSDate?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .originalTransactionId: originalTransactionId = try reader.string(field)
            case .appAppleId: appAppleId = try reader.int64(field)
            case .productId: productId = try reader.string(field)
            case .userLocale: userLocale = try reader.string(field)
            case .requestIdentifier: requestIdentifier = try reader.string(field)
            case .environment: environment = Environment(rawValue: try reader.string(field))
            case .signedDate: signedDate = try reader.date(field)
            }
        }
        self.originalTransactionId = originalTransactionId
        self.appAppleId = appAppleId
        self.productId = productId
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.signedDate = signedDate
        self.unknownFields = state.unknown
        self.jsonPayload = jsonPayload
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.string(.originalTransactionId, originalTransactionId)
        o.int(.appAppleId, appAppleId)
        o.string(.productId, productId)
        o.string(.userLocale, userLocale)
        o.string(.requestIdentifier, requestIdentifier)
        o.raw(.environment, environment)
        o.date(.signedDate, signedDate)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: RealtimeRequest, rhs: RealtimeRequest) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}
