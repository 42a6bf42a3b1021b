import JSON

/// An App Store Server Notification V2 (Apple's `ResponseBodyV2DecodedPayload`): the payload of the
/// `signedPayload` Apple POSTs. Exactly one of ``data``, ``summary``, ``externalPurchaseToken`` and
/// ``appData`` is usually present; the nested transaction and renewal info stay tokens
/// (``NestedJWS``) for the verifier.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``JWSPayloadModel/unknownFields``.
public struct NotificationPayload: JWSPayload, JWSPayloadModel, Equatable, FieldsPayload {
    /// What happened. (`notificationType`)
    public var notificationType: NotificationType? { fields.raw(.notificationType) }
    /// Details of what happened. (`subtype`)
    public var subtype: NotificationSubtype? { fields.raw(.subtype) }
    /// The notification's unique identifier (the same on Apple's retries). (`notificationUUID`)
    public var notificationUUID: String? { fields.string(.notificationUUID) }
    /// The app, environment, and the signed transaction and renewal info. (`data`)
    public var data: NotificationData? { fields.object(.data) }
    /// The result of a renewal-date extension for all subscribers. (`summary`)
    public var summary: NotificationSummary? { fields.object(.summary) }
    /// An external purchase token. (`externalPurchaseToken`)
    public var externalPurchaseToken: ExternalPurchaseToken? { fields.object(.externalPurchaseToken) }
    /// The app and its signed app transaction (`RESCIND_CONSENT`). (`appData`)
    public var appData: AppData? { fields.object(.appData) }
    /// The notification format version (`2.0`). (`version`)
    public var version: String? { fields.string(.version) }
    /// When the App Store signed the notification (absent in early 2022 notifications). (`signedDate`)
    public var signedDate: JWSDate? { fields.date(.signedDate) }
    /// The JSON text this value was decoded from, exactly.
    public let jsonPayload: [UInt8]

    let fields: PayloadFields<Field>

    enum Field: String, TypedPayloadField {
        case notificationType, subtype, notificationUUID, data, summary, externalPurchaseToken, appData, version, signedDate

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .notificationType, .subtype, .notificationUUID, .version: .string
            case .data: .object(NotificationData.self)
            case .summary: .object(NotificationSummary.self)
            case .externalPurchaseToken: .object(ExternalPurchaseToken.self)
            case .appData: .object(AppData.self)
            case .signedDate: .date
            }
        }
    }
}

/// The `data` of a notification (Apple's `Data`): the app, the environment and the nested signed
/// transaction and renewal info.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below and ``NotificationApp``'s, everything else in ``JWSPayloadModel/unknownFields``.
public struct NotificationData: NotificationApp, Equatable, NotificationAppObject {
    /// The app's build version. (`bundleVersion`)
    public var bundleVersion: String? { fields.string(.bundleVersion) }
    /// The subscription's renewal info, as a token to verify. (`signedRenewalInfo`)
    public var signedRenewalInfo: NestedJWS<JWSRenewalInfo>? { fields.nested(.signedRenewalInfo) }
    /// The transaction, as a token to verify. (`signedTransactionInfo`)
    public var signedTransactionInfo: NestedJWS<JWSTransaction>? { fields.nested(.signedTransactionInfo) }
    /// The subscription's status. (`status`)
    public var status: SubscriptionStatus? { fields.code(.status) }
    /// Why the customer asked for a refund (`CONSUMPTION_REQUEST`). (`consumptionRequestReason`)
    public var consumptionRequestReason: ConsumptionRequestReason? { fields.raw(.consumptionRequestReason) }

    let fields: PayloadFields<Field>

    enum Field: String, NotificationAppField {
        case appAppleId, bundleId, bundleVersion, environment, signedRenewalInfo, signedTransactionInfo, status, consumptionRequestReason

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .appAppleId, .status: .int64
            case .bundleId, .bundleVersion, .environment, .signedRenewalInfo, .signedTransactionInfo, .consumptionRequestReason: .string
            }
        }
    }
}

/// The `summary` of a `RENEWAL_EXTENSION`/`SUMMARY` notification (Apple's `Summary`).
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below and ``NotificationApp``'s, everything else in ``JWSPayloadModel/unknownFields``.
public struct NotificationSummary: NotificationApp, Equatable, NotificationAppObject {
    /// The subscription product that was extended. (`productId`)
    public var productId: String? { fields.string(.productId) }
    /// The identifier of the extension request. (`requestIdentifier`)
    public var requestIdentifier: String? { fields.string(.requestIdentifier) }
    /// The storefronts the request covered. (`storefrontCountryCodes`)
    public var storefrontCountryCodes: [String]? { fields.strings(.storefrontCountryCodes) }
    /// Subscriptions extended. (`succeededCount`)
    public var succeededCount: Int64? { fields.int64(.succeededCount) }
    /// Subscriptions that could not be extended. (`failedCount`)
    public var failedCount: Int64? { fields.int64(.failedCount) }

    let fields: PayloadFields<Field>

    enum Field: String, NotificationAppField {
        case environment, appAppleId, bundleId, productId, requestIdentifier, storefrontCountryCodes, succeededCount, failedCount

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .environment, .bundleId, .productId, .requestIdentifier: .string
            case .appAppleId, .succeededCount, .failedCount: .int64
            case .storefrontCountryCodes: .strings
            }
        }
    }
}

/// The `externalPurchaseToken` of an `EXTERNAL_PURCHASE_TOKEN` notification. A token whose id starts
/// with `SANDBOX` is a sandbox token (the notification has no `environment`).
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``JWSPayloadModel/unknownFields``.
public struct ExternalPurchaseToken: JWSPayloadObject, Equatable, FieldsObject {
    /// The token's identifier. (`externalPurchaseId`)
    public var externalPurchaseId: String? { fields.string(.externalPurchaseId) }
    /// When the token was created. (`tokenCreationDate`)
    public var tokenCreationDate: JWSDate? { fields.date(.tokenCreationDate) }
    /// The app's Apple identifier. (`appAppleId`)
    public var appAppleId: Int64? { fields.int64(.appAppleId) }
    /// The app's bundle identifier. (`bundleId`)
    public var bundleId: String? { fields.string(.bundleId) }
    /// The type of a custom link token (`ACQUISITION`, `SERVICES`, …); custom link tokens only.
    /// (`tokenType`)
    public var tokenType: String? { fields.string(.tokenType) }
    /// When the token expires. (`tokenExpirationDate`)
    public var tokenExpirationDate: JWSDate? { fields.date(.tokenExpirationDate) }

    let fields: PayloadFields<Field>

    enum Field: String, TypedPayloadField {
        case externalPurchaseId, tokenCreationDate, appAppleId, bundleId, tokenType, tokenExpirationDate

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .externalPurchaseId, .bundleId, .tokenType: .string
            case .tokenCreationDate, .tokenExpirationDate: .date
            case .appAppleId: .int64
            }
        }
    }
}

/// The `appData` of a notification (`RESCIND_CONSENT`): the app and its signed app transaction.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below and ``NotificationApp``'s, everything else in ``JWSPayloadModel/unknownFields``.
public struct AppData: NotificationApp, Equatable, NotificationAppObject {
    /// The app transaction, as a token to verify. (`signedAppTransactionInfo`)
    public var signedAppTransactionInfo: NestedJWS<AppTransaction>? { fields.nested(.signedAppTransactionInfo) }

    let fields: PayloadFields<Field>

    enum Field: String, NotificationAppField {
        case appAppleId, bundleId, environment, signedAppTransactionInfo

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()

        var kind: PayloadFieldKind {
            switch self {
            case .appAppleId: .int64
            case .bundleId, .environment, .signedAppTransactionInfo: .string
            }
        }
    }
}
