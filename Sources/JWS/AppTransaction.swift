public import JSON

/// A signed app transaction's payload (Apple's `AppTransaction`): StoreKit 2's replacement of the app
/// receipt. It has no `signedDate`; ``receiptCreationDate`` is the date a verifier validates at.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct AppTransaction: JWSPayload, Equatable {
    /// The environment the app transaction was made in. (`receiptType`)
    public let receiptType: Environment?
    /// The app's Apple identifier (absent outside production). (`appAppleId`)
    public let appAppleId: Int64?
    /// The app's bundle identifier. (`bundleId`)
    public let bundleId: String?
    /// The app version (`CFBundleVersion`) the transaction is for. (`applicationVersion`)
    public let applicationVersion: String?
    /// The App Store's identifier of that version. (`versionExternalIdentifier`)
    public let versionExternalIdentifier: Int64?
    /// When the App Store created the app transaction. (`receiptCreationDate`)
    public let receiptCreationDate: JWSDate?
    /// When the customer first got the app (Xcode writes year 1). (`originalPurchaseDate`)
    public let originalPurchaseDate: JWSDate?
    /// The app version the customer first got. (`originalApplicationVersion`)
    public let originalApplicationVersion: String?
    /// Base64 of SHA-384(lowercased nonce ‖ lowercased device verification id). (`deviceVerification`)
    public let deviceVerification: String?
    /// The nonce of ``deviceVerification``. (`deviceVerificationNonce`)
    public let deviceVerificationNonce: String?
    /// When the customer pre-ordered the app. (`preorderDate`)
    public let preorderDate: JWSDate?
    /// The identifier of the app download transaction. (`appTransactionId`)
    public let appTransactionId: String?
    /// The platform of the original purchase. (`originalPlatform`)
    public let originalPlatform: PurchasePlatform?
    /// When the app transaction was requested (Xcode). (`requestDate`)
    public let requestDate: JWSDate?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]
    /// The JSON text this value was decoded from, exactly.
    public let jsonPayload: [UInt8]

    enum Field: Int, PayloadField {
        case receiptType, appAppleId, bundleId, applicationVersion, versionExternalIdentifier, receiptCreationDate, originalPurchaseDate,
            originalApplicationVersion, deviceVerification, deviceVerificationNonce, preorderDate, appTransactionId, originalPlatform,
            requestDate

        var name: String {
            switch self {
            case .receiptType: "receiptType"
            case .appAppleId: "appAppleId"
            case .bundleId: "bundleId"
            case .applicationVersion: "applicationVersion"
            case .versionExternalIdentifier: "versionExternalIdentifier"
            case .receiptCreationDate: "receiptCreationDate"
            case .originalPurchaseDate: "originalPurchaseDate"
            case .originalApplicationVersion: "originalApplicationVersion"
            case .deviceVerification: "deviceVerification"
            case .deviceVerificationNonce: "deviceVerificationNonce"
            case .preorderDate: "preorderDate"
            case .appTransactionId: "appTransactionId"
            case .originalPlatform: "originalPlatform"
            case .requestDate: "requestDate"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 8:
                if key.equals("bundleId") { return .bundleId }
            case 10:
                if key.equals("appAppleId") { return .appAppleId }
            case 11:
                if key.equals("receiptType") { return .receiptType }
                if key.equals("requestDate") { return .requestDate }
            case 12:
                if key.equals("preorderDate") { return .preorderDate }
            case 16:
                if key.equals("appTransactionId") { return .appTransactionId }
                if key.equals("originalPlatform") { return .originalPlatform }
            case 18:
                if key.equals("applicationVersion") { return .applicationVersion }
                if key.equals("deviceVerification") { return .deviceVerification }
            case 19:
                if key.equals("receiptCreationDate") { return .receiptCreationDate }
            case 20:
                if key.equals("originalPurchaseDate") { return .originalPurchaseDate }
            case 23:
                if key.equals("deviceVerificationNonce") { return .deviceVerificationNonce }
            case 25:
                if key.equals("versionExternalIdentifier") { return .versionExternalIdentifier }
            case 26:
                if key.equals("originalApplicationVersion") { return .originalApplicationVersion }
            default: break
            }
            return nil
        }
    }

    /// Decodes the JSON payload; verifies nothing.
    public init(jsonPayload: [UInt8], limits: JWSLimits) throws(JWSError) {
        self = try PayloadReader.decode(jsonPayload, limits: limits) { (reader) throws(JWSError) in
            try AppTransaction(reading: &reader, context: "payload", jsonPayload: jsonPayload)
        }
    }

    init(reading reader: inout PayloadReader, context: String, jsonPayload: [UInt8]) throws(JWSError) {
        var receiptType: Environment?
        var appAppleId: Int64?
        var bundleId: String?
        var applicationVersion: String?
        var versionExternalIdentifier: Int64?
        var receiptCreationDate: JWSDate?
        var originalPurchaseDate: JWSDate?
        var originalApplicationVersion: String?
        var deviceVerification: String?
        var deviceVerificationNonce: String?
        var preorderDate: JWSDate?
        var appTransactionId: String?
        var originalPlatform: PurchasePlatform?
        var requestDate: JWSDate?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .receiptType: receiptType = Environment(rawValue: try reader.string(field))
            case .appAppleId: appAppleId = try reader.int64(field)
            case .bundleId: bundleId = try reader.string(field)
            case .applicationVersion: applicationVersion = try reader.string(field)
            case .versionExternalIdentifier: versionExternalIdentifier = try reader.int64(field)
            case .receiptCreationDate: receiptCreationDate = try reader.date(field)
            case .originalPurchaseDate: originalPurchaseDate = try reader.date(field)
            case .originalApplicationVersion: originalApplicationVersion = try reader.string(field)
            case .deviceVerification: deviceVerification = try reader.string(field)
            case .deviceVerificationNonce: deviceVerificationNonce = try reader.string(field)
            case .preorderDate: preorderDate = try reader.date(field)
            case .appTransactionId: appTransactionId = try reader.string(field)
            case .originalPlatform: originalPlatform = PurchasePlatform(rawValue: try reader.string(field))
            case .requestDate: requestDate = try reader.date(field)
            }
        }
        self.receiptType = receiptType
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.versionExternalIdentifier = versionExternalIdentifier
        self.receiptCreationDate = receiptCreationDate
        self.originalPurchaseDate = originalPurchaseDate
        self.originalApplicationVersion = originalApplicationVersion
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.preorderDate = preorderDate
        self.appTransactionId = appTransactionId
        self.originalPlatform = originalPlatform
        self.requestDate = requestDate
        self.unknownFields = state.unknown
        self.jsonPayload = jsonPayload
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.raw(.receiptType, receiptType)
        o.int(.appAppleId, appAppleId)
        o.string(.bundleId, bundleId)
        o.string(.applicationVersion, applicationVersion)
        o.int(.versionExternalIdentifier, versionExternalIdentifier)
        o.date(.receiptCreationDate, receiptCreationDate)
        o.date(.originalPurchaseDate, originalPurchaseDate)
        o.string(.originalApplicationVersion, originalApplicationVersion)
        o.string(.deviceVerification, deviceVerification)
        o.string(.deviceVerificationNonce, deviceVerificationNonce)
        o.date(.preorderDate, preorderDate)
        o.string(.appTransactionId, appTransactionId)
        o.raw(.originalPlatform, originalPlatform)
        o.date(.requestDate, requestDate)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: AppTransaction, rhs: AppTransaction) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}
