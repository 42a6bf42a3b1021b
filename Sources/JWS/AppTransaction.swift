import JSON

/// A signed app transaction's payload (Apple's `AppTransaction`): StoreKit 2's replacement of the app
/// receipt. It has no `signedDate`; ``receiptCreationDate`` is the date a verifier validates at.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``JWSPayloadModel/unknownFields``.
public struct AppTransaction: JWSPayload, JWSPayloadModel, Equatable, FieldsPayload {
    /// The environment the app transaction was made in. (`receiptType`)
    public var receiptType: Environment? { fields.raw(.receiptType) }
    /// The app's Apple identifier (absent outside production). (`appAppleId`)
    public var appAppleId: Int64? { fields.int64(.appAppleId) }
    /// The app's bundle identifier. (`bundleId`)
    public var bundleId: String? { fields.string(.bundleId) }
    /// The app version (`CFBundleVersion`) the transaction is for. (`applicationVersion`)
    public var applicationVersion: String? { fields.string(.applicationVersion) }
    /// The App Store's identifier of that version. (`versionExternalIdentifier`)
    public var versionExternalIdentifier: Int64? { fields.int64(.versionExternalIdentifier) }
    /// When the App Store created the app transaction. (`receiptCreationDate`)
    public var receiptCreationDate: JWSDate? { fields.date(.receiptCreationDate) }
    /// When the customer first got the app (Xcode writes year 1). (`originalPurchaseDate`)
    public var originalPurchaseDate: JWSDate? { fields.date(.originalPurchaseDate) }
    /// The app version the customer first got. (`originalApplicationVersion`)
    public var originalApplicationVersion: String? { fields.string(.originalApplicationVersion) }
    /// Base64 of SHA-384(lowercased nonce ‖ lowercased device verification id). (`deviceVerification`)
    public var deviceVerification: String? { fields.string(.deviceVerification) }
    /// The nonce of ``deviceVerification``. (`deviceVerificationNonce`)
    public var deviceVerificationNonce: String? { fields.string(.deviceVerificationNonce) }
    /// When the customer pre-ordered the app. (`preorderDate`)
    public var preorderDate: JWSDate? { fields.date(.preorderDate) }
    /// The identifier of the app download transaction. (`appTransactionId`)
    public var appTransactionId: String? { fields.string(.appTransactionId) }
    /// The platform of the original purchase. (`originalPlatform`)
    public var originalPlatform: PurchasePlatform? { fields.raw(.originalPlatform) }
    /// When the app transaction was requested (Xcode). (`requestDate`)
    public var requestDate: JWSDate? { fields.date(.requestDate) }
    /// The JSON text this value was decoded from, exactly.
    public let jsonPayload: [UInt8]

    let fields: PayloadFields<Field>

    enum Field: Int, TypedPayloadField {
        case receiptType, appAppleId, bundleId, applicationVersion, versionExternalIdentifier, receiptCreationDate, originalPurchaseDate,
            originalApplicationVersion, deviceVerification, deviceVerificationNonce, preorderDate, appTransactionId, originalPlatform,
            requestDate

        var kind: PayloadFieldKind {
            switch self {
            case .receiptType, .bundleId, .applicationVersion, .originalApplicationVersion, .deviceVerification, .deviceVerificationNonce,
                .appTransactionId, .originalPlatform:
                .string
            case .appAppleId, .versionExternalIdentifier: .int64
            case .receiptCreationDate, .originalPurchaseDate, .preorderDate, .requestDate: .date
            }
        }

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
}
