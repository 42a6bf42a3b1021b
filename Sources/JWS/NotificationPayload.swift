public import JSON

/// An App Store Server Notification V2 (Apple's `ResponseBodyV2DecodedPayload`): the payload of the
/// `signedPayload` Apple POSTs. Exactly one of ``data``, ``summary``, ``externalPurchaseToken`` and
/// ``appData`` is usually present; the nested transaction and renewal info stay tokens
/// (``NestedJWS``) for the verifier.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct NotificationPayload: JWSPayload, Equatable {
    /// What happened. (`notificationType`)
    public let notificationType: NotificationType?
    /// Details of what happened. (`subtype`)
    public let subtype: NotificationSubtype?
    /// The notification's unique identifier (the same on Apple's retries). (`notificationUUID`)
    public let notificationUUID: String?
    /// The app, environment, and the signed transaction and renewal info. (`data`)
    public let data: NotificationData?
    /// The result of a renewal-date extension for all subscribers. (`summary`)
    public let summary: NotificationSummary?
    /// An external purchase token. (`externalPurchaseToken`)
    public let externalPurchaseToken: ExternalPurchaseToken?
    /// The app and its signed app transaction (`RESCIND_CONSENT`). (`appData`)
    public let appData: AppData?
    /// The notification format version (`2.0`). (`version`)
    public let version: String?
    /// When the App Store signed the notification (absent in early 2022 notifications). (`signedDate`)
    public let signedDate: JWSDate?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]
    /// The JSON text this value was decoded from, exactly.
    public let jsonPayload: [UInt8]

    enum Field: Int, PayloadField {
        case notificationType, subtype, notificationUUID, data, summary, externalPurchaseToken, appData, version, signedDate

        var name: String {
            switch self {
            case .notificationType: "notificationType"
            case .subtype: "subtype"
            case .notificationUUID: "notificationUUID"
            case .data: "data"
            case .summary: "summary"
            case .externalPurchaseToken: "externalPurchaseToken"
            case .appData: "appData"
            case .version: "version"
            case .signedDate: "signedDate"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 4:
                if key.equals("data") { return .data }
            case 7:
                if key.equals("subtype") { return .subtype }
                if key.equals("summary") { return .summary }
                if key.equals("appData") { return .appData }
                if key.equals("version") { return .version }
            case 10:
                if key.equals("signedDate") { return .signedDate }
            case 16:
                if key.equals("notificationType") { return .notificationType }
                if key.equals("notificationUUID") { return .notificationUUID }
            case 21:
                if key.equals("externalPurchaseToken") { return .externalPurchaseToken }
            default: break
            }
            return nil
        }
    }

    /// Decodes the JSON payload; verifies nothing.
    public init(jsonPayload: [UInt8], limits: JWSLimits) throws(JWSError) {
        self = try PayloadReader.decode(jsonPayload, limits: limits) { (reader) throws(JWSError) in
            try NotificationPayload(reading: &reader, context: "payload", jsonPayload: jsonPayload)
        }
    }

    init(reading reader: inout PayloadReader, context: String, jsonPayload: [UInt8]) throws(JWSError) {
        var notificationType: NotificationType?
        var subtype: NotificationSubtype?
        var notificationUUID: String?
        var data: NotificationData?
        var summary: NotificationSummary?
        var externalPurchaseToken: ExternalPurchaseToken?
        var appData: AppData?
        var version: String?
        var signedDate: JWSDate?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .notificationType: notificationType = NotificationType(rawValue: try reader.string(field))
            case .subtype: subtype = NotificationSubtype(rawValue: try reader.string(field))
            case .notificationUUID: notificationUUID = try reader.string(field)
            case .data: data = try NotificationData(reading: &reader, context: "data")
            case .summary: summary = try NotificationSummary(reading: &reader, context: "summary")
            case .externalPurchaseToken:
                externalPurchaseToken = try ExternalPurchaseToken(reading: &reader, context: "externalPurchaseToken")
            case .appData: appData = try AppData(reading: &reader, context: "appData")
            case .version: version = try reader.string(field)
            case .signedDate: signedDate = try reader.date(field)
            }
        }
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.data = data
        self.summary = summary
        self.externalPurchaseToken = externalPurchaseToken
        self.appData = appData
        self.version = version
        self.signedDate = signedDate
        self.unknownFields = state.unknown
        self.jsonPayload = jsonPayload
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.raw(.notificationType, notificationType)
        o.raw(.subtype, subtype)
        o.string(.notificationUUID, notificationUUID)
        o.object(.data, data?.jsonValue())
        o.object(.summary, summary?.jsonValue())
        o.object(.externalPurchaseToken, externalPurchaseToken?.jsonValue())
        o.object(.appData, appData?.jsonValue())
        o.string(.version, version)
        o.date(.signedDate, signedDate)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: NotificationPayload, rhs: NotificationPayload) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}

/// The `data` of a notification (Apple's `Data`): the app, the environment and the nested signed
/// transaction and renewal info.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct NotificationData: Sendable, Equatable {
    /// The app's Apple identifier (absent in sandbox and early notifications). (`appAppleId`)
    public let appAppleId: Int64?
    /// The app's bundle identifier. (`bundleId`)
    public let bundleId: String?
    /// The app's build version. (`bundleVersion`)
    public let bundleVersion: String?
    /// The environment of the notification. (`environment`)
    public let environment: Environment?
    /// The subscription's renewal info, as a token to verify. (`signedRenewalInfo`)
    public let signedRenewalInfo: NestedJWS<JWSRenewalInfo>?
    /// The transaction, as a token to verify. (`signedTransactionInfo`)
    public let signedTransactionInfo: NestedJWS<JWSTransaction>?
    /// The subscription's status. (`status`)
    public let status: SubscriptionStatus?
    /// Why the customer asked for a refund (`CONSUMPTION_REQUEST`). (`consumptionRequestReason`)
    public let consumptionRequestReason: ConsumptionRequestReason?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]

    enum Field: Int, PayloadField {
        case appAppleId, bundleId, bundleVersion, environment, signedRenewalInfo, signedTransactionInfo, status, consumptionRequestReason

        var name: String {
            switch self {
            case .appAppleId: "appAppleId"
            case .bundleId: "bundleId"
            case .bundleVersion: "bundleVersion"
            case .environment: "environment"
            case .signedRenewalInfo: "signedRenewalInfo"
            case .signedTransactionInfo: "signedTransactionInfo"
            case .status: "status"
            case .consumptionRequestReason: "consumptionRequestReason"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 6:
                if key.equals("status") { return .status }
            case 8:
                if key.equals("bundleId") { return .bundleId }
            case 10:
                if key.equals("appAppleId") { return .appAppleId }
            case 11:
                if key.equals("environment") { return .environment }
            case 13:
                if key.equals("bundleVersion") { return .bundleVersion }
            case 17:
                if key.equals("signedRenewalInfo") { return .signedRenewalInfo }
            case 21:
                if key.equals("signedTransactionInfo") { return .signedTransactionInfo }
            case 24:
                if key.equals("consumptionRequestReason") { return .consumptionRequestReason }
            default: break
            }
            return nil
        }
    }

    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try NotificationData(reading: &reader, context: "NotificationData")
        }
    }

    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        var appAppleId: Int64?
        var bundleId: String?
        var bundleVersion: String?
        var environment: Environment?
        var signedRenewalInfo: NestedJWS<JWSRenewalInfo>?
        var signedTransactionInfo: NestedJWS<JWSTransaction>?
        var status: SubscriptionStatus?
        var consumptionRequestReason: ConsumptionRequestReason?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .appAppleId: appAppleId = try reader.int64(field)
            case .bundleId: bundleId = try reader.string(field)
            case .bundleVersion: bundleVersion = try reader.string(field)
            case .environment: environment = Environment(rawValue: try reader.string(field))
            case .signedRenewalInfo: signedRenewalInfo = try reader.nested(field, JWSRenewalInfo.self)
            case .signedTransactionInfo: signedTransactionInfo = try reader.nested(field, JWSTransaction.self)
            case .status: status = SubscriptionStatus(rawValue: try reader.int64(field))
            case .consumptionRequestReason: consumptionRequestReason = ConsumptionRequestReason(rawValue: try reader.string(field))
            }
        }
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.environment = environment
        self.signedRenewalInfo = signedRenewalInfo
        self.signedTransactionInfo = signedTransactionInfo
        self.status = status
        self.consumptionRequestReason = consumptionRequestReason
        self.unknownFields = state.unknown
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.int(.appAppleId, appAppleId)
        o.string(.bundleId, bundleId)
        o.string(.bundleVersion, bundleVersion)
        o.raw(.environment, environment)
        o.nested(.signedRenewalInfo, signedRenewalInfo)
        o.nested(.signedTransactionInfo, signedTransactionInfo)
        o.code(.status, status)
        o.raw(.consumptionRequestReason, consumptionRequestReason)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: NotificationData, rhs: NotificationData) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}

/// The `summary` of a `RENEWAL_EXTENSION`/`SUMMARY` notification (Apple's `Summary`).
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct NotificationSummary: Sendable, Equatable {
    /// The environment of the extension request. (`environment`)
    public let environment: Environment?
    /// The app's Apple identifier. (`appAppleId`)
    public let appAppleId: Int64?
    /// The app's bundle identifier. (`bundleId`)
    public let bundleId: String?
    /// The subscription product that was extended. (`productId`)
    public let productId: String?
    /// The identifier of the extension request. (`requestIdentifier`)
    public let requestIdentifier: String?
    /// The storefronts the request covered. (`storefrontCountryCodes`)
    public let storefrontCountryCodes: [String]?
    /// Subscriptions extended. (`succeededCount`)
    public let succeededCount: Int64?
    /// Subscriptions that could not be extended. (`failedCount`)
    public let failedCount: Int64?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]

    enum Field: Int, PayloadField {
        case environment, appAppleId, bundleId, productId, requestIdentifier, storefrontCountryCodes, succeededCount, failedCount

        var name: String {
            switch self {
            case .environment: "environment"
            case .appAppleId: "appAppleId"
            case .bundleId: "bundleId"
            case .productId: "productId"
            case .requestIdentifier: "requestIdentifier"
            case .storefrontCountryCodes: "storefrontCountryCodes"
            case .succeededCount: "succeededCount"
            case .failedCount: "failedCount"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 8:
                if key.equals("bundleId") { return .bundleId }
            case 9:
                if key.equals("productId") { return .productId }
            case 10:
                if key.equals("appAppleId") { return .appAppleId }
            case 11:
                if key.equals("environment") { return .environment }
                if key.equals("failedCount") { return .failedCount }
            case 14:
                if key.equals("succeededCount") { return .succeededCount }
            case 17:
                if key.equals("requestIdentifier") { return .requestIdentifier }
            case 22:
                if key.equals("storefrontCountryCodes") { return .storefrontCountryCodes }
            default: break
            }
            return nil
        }
    }

    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try NotificationSummary(reading: &reader, context: "NotificationSummary")
        }
    }

    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        var environment: Environment?
        var appAppleId: Int64?
        var bundleId: String?
        var productId: String?
        var requestIdentifier: String?
        var storefrontCountryCodes: [String]?
        var succeededCount: Int64?
        var failedCount: Int64?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .environment: environment = Environment(rawValue: try reader.string(field))
            case .appAppleId: appAppleId = try reader.int64(field)
            case .bundleId: bundleId = try reader.string(field)
            case .productId: productId = try reader.string(field)
            case .requestIdentifier: requestIdentifier = try reader.string(field)
            case .storefrontCountryCodes: storefrontCountryCodes = try reader.strings(field)
            case .succeededCount: succeededCount = try reader.int64(field)
            case .failedCount: failedCount = try reader.int64(field)
            }
        }
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.productId = productId
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.succeededCount = succeededCount
        self.failedCount = failedCount
        self.unknownFields = state.unknown
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.raw(.environment, environment)
        o.int(.appAppleId, appAppleId)
        o.string(.bundleId, bundleId)
        o.string(.productId, productId)
        o.string(.requestIdentifier, requestIdentifier)
        o.strings(.storefrontCountryCodes, storefrontCountryCodes)
        o.int(.succeededCount, succeededCount)
        o.int(.failedCount, failedCount)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: NotificationSummary, rhs: NotificationSummary) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}

/// The `externalPurchaseToken` of an `EXTERNAL_PURCHASE_TOKEN` notification. A token whose id starts
/// with `SANDBOX` is a sandbox token (the notification has no `environment`).
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct ExternalPurchaseToken: Sendable, Equatable {
    /// The token's identifier. (`externalPurchaseId`)
    public let externalPurchaseId: String?
    /// When the token was created. (`tokenCreationDate`)
    public let tokenCreationDate: JWSDate?
    /// The app's Apple identifier. (`appAppleId`)
    public let appAppleId: Int64?
    /// The app's bundle identifier. (`bundleId`)
    public let bundleId: String?
    /// The type of a custom link token (`ACQUISITION`, `SERVICES`, …); custom link tokens only.
    /// (`tokenType`)
    public let tokenType: String?
    /// When the token expires. (`tokenExpirationDate`)
    public let tokenExpirationDate: JWSDate?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]

    enum Field: Int, PayloadField {
        case externalPurchaseId, tokenCreationDate, appAppleId, bundleId, tokenType, tokenExpirationDate

        var name: String {
            switch self {
            case .externalPurchaseId: "externalPurchaseId"
            case .tokenCreationDate: "tokenCreationDate"
            case .appAppleId: "appAppleId"
            case .bundleId: "bundleId"
            case .tokenType: "tokenType"
            case .tokenExpirationDate: "tokenExpirationDate"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 8:
                if key.equals("bundleId") { return .bundleId }
            case 9:
                if key.equals("tokenType") { return .tokenType }
            case 10:
                if key.equals("appAppleId") { return .appAppleId }
            case 17:
                if key.equals("tokenCreationDate") { return .tokenCreationDate }
            case 18:
                if key.equals("externalPurchaseId") { return .externalPurchaseId }
            case 19:
                if key.equals("tokenExpirationDate") { return .tokenExpirationDate }
            default: break
            }
            return nil
        }
    }

    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try ExternalPurchaseToken(reading: &reader, context: "ExternalPurchaseToken")
        }
    }

    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        var externalPurchaseId: String?
        var tokenCreationDate: JWSDate?
        var appAppleId: Int64?
        var bundleId: String?
        var tokenType: String?
        var tokenExpirationDate: JWSDate?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .externalPurchaseId: externalPurchaseId = try reader.string(field)
            case .tokenCreationDate: tokenCreationDate = try reader.date(field)
            case .appAppleId: appAppleId = try reader.int64(field)
            case .bundleId: bundleId = try reader.string(field)
            case .tokenType: tokenType = try reader.string(field)
            case .tokenExpirationDate: tokenExpirationDate = try reader.date(field)
            }
        }
        self.externalPurchaseId = externalPurchaseId
        self.tokenCreationDate = tokenCreationDate
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.tokenType = tokenType
        self.tokenExpirationDate = tokenExpirationDate
        self.unknownFields = state.unknown
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.string(.externalPurchaseId, externalPurchaseId)
        o.date(.tokenCreationDate, tokenCreationDate)
        o.int(.appAppleId, appAppleId)
        o.string(.bundleId, bundleId)
        o.string(.tokenType, tokenType)
        o.date(.tokenExpirationDate, tokenExpirationDate)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: ExternalPurchaseToken, rhs: ExternalPurchaseToken) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}

/// The `appData` of a notification (`RESCIND_CONSENT`): the app and its signed app transaction.
///
/// Decoding verifies nothing (see ``JWSPayload``). Every member of the JSON is kept: typed
/// fields below, everything else in ``unknownFields``.
public struct AppData: Sendable, Equatable {
    /// The app's Apple identifier. (`appAppleId`)
    public let appAppleId: Int64?
    /// The app's bundle identifier. (`bundleId`)
    public let bundleId: String?
    /// The environment of the notification. (`environment`)
    public let environment: Environment?
    /// The app transaction, as a token to verify. (`signedAppTransactionInfo`)
    public let signedAppTransactionInfo: NestedJWS<AppTransaction>?
    /// The members not typed above, in document order: names this version does not know, and
    /// known names whose value is `null`. Re-encoded as they were.
    public let unknownFields: [(String, JSONValue)]

    enum Field: Int, PayloadField {
        case appAppleId, bundleId, environment, signedAppTransactionInfo

        var name: String {
            switch self {
            case .appAppleId: "appAppleId"
            case .bundleId: "bundleId"
            case .environment: "environment"
            case .signedAppTransactionInfo: "signedAppTransactionInfo"
            }
        }

        static func lookup(_ key: JSONKey) -> Field? {
            switch key.count {
            case 8:
                if key.equals("bundleId") { return .bundleId }
            case 10:
                if key.equals("appAppleId") { return .appAppleId }
            case 11:
                if key.equals("environment") { return .environment }
            case 24:
                if key.equals("signedAppTransactionInfo") { return .signedAppTransactionInfo }
            default: break
            }
            return nil
        }
    }

    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) in
            try AppData(reading: &reader, context: "AppData")
        }
    }

    init(reading reader: inout PayloadReader, context: String) throws(JWSError) {
        var appAppleId: Int64?
        var bundleId: String?
        var environment: Environment?
        var signedAppTransactionInfo: NestedJWS<AppTransaction>?
        var state = try reader.beginObject(context, Field.self)
        while let field = try reader.nextField(&state) {
            switch field {
            case .appAppleId: appAppleId = try reader.int64(field)
            case .bundleId: bundleId = try reader.string(field)
            case .environment: environment = Environment(rawValue: try reader.string(field))
            case .signedAppTransactionInfo: signedAppTransactionInfo = try reader.nested(field, AppTransaction.self)
            }
        }
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.environment = environment
        self.signedAppTransactionInfo = signedAppTransactionInfo
        self.unknownFields = state.unknown
    }

    /// The value as JSON: typed fields under Apple's names in the order above, then
    /// ``unknownFields``.
    public func jsonValue() -> JSONValue {
        var o = ObjectBuilder<Field>()
        o.int(.appAppleId, appAppleId)
        o.string(.bundleId, bundleId)
        o.raw(.environment, environment)
        o.nested(.signedAppTransactionInfo, signedAppTransactionInfo)
        return o.finish(unknownFields)
    }

    /// Equal when the JSON values are (same typed fields, same unknown members in order).
    public static func == (lhs: AppData, rhs: AppData) -> Bool { lhs.jsonValue() == rhs.jsonValue() }
}
