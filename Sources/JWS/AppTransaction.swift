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

    enum Field: String, TypedPayloadField {
        case receiptType, appAppleId, bundleId, applicationVersion, versionExternalIdentifier, receiptCreationDate, originalPurchaseDate,
            originalApplicationVersion, deviceVerification, deviceVerificationNonce, preorderDate, appTransactionId, originalPlatform,
            requestDate

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .receiptType, .bundleId, .applicationVersion, .originalApplicationVersion, .deviceVerification, .deviceVerificationNonce,
                .appTransactionId, .originalPlatform:
                .string
            case .appAppleId, .versionExternalIdentifier: .int64
            case .receiptCreationDate, .originalPurchaseDate, .preorderDate, .requestDate: .date
            }
        }
    }
}
