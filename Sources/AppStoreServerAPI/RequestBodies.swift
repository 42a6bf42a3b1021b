public import Foundation
import JSON
public import JWS

// The JSON bodies of the endpoints Apple added since 2023, written once with Apple's field names
// and value ranges. The client validates a body before it sends it; the simulated App Store
// Server decodes and validates what it receives with the same code, so both refuse exactly the
// same values.

/// A request body that breaks Apple's rules: which field, and why. The client reports it as
/// ``AppStoreServerAPIError/Code/invalidRequest`` before any request is sent.
public struct RequestBodyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Apple's name of the field (`consumptionPercentage`), or `body` for the body as a whole.
    public let field: String
    /// What is wrong.
    public let reason: String

    /// Creates an error.
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    /// `consumptionPercentage: …`.
    public var description: String { "\(field): \(reason)" }
}

/// Reads the members of a JSON request body, refusing wrong types and unknown members.
struct BodyReader {
    let members: [(String, JSONValue)]

    init(_ bytes: [UInt8], known: Set<String>) throws(RequestBodyError) {
        guard case .object(let members) = try Self.parse(bytes) else { throw RequestBodyError(field: "body", reason: "not a JSON object") }
        var seen: Set<String> = []
        for (name, _) in members {
            guard known.contains(name) else {
                throw RequestBodyError(field: RequestBodyText.quoted(name), reason: "is not a member of this body")
            }
            guard seen.insert(name).inserted else { throw RequestBodyError(field: RequestBodyText.quoted(name), reason: "appears twice") }
        }
        self.members = members
    }

    /// A request body's JSON: at most 64 KiB of strict JSON.
    static func parse(_ bytes: [UInt8]) throws(RequestBodyError) -> JSONValue {
        guard bytes.count <= 64 << 10 else { throw RequestBodyError(field: "body", reason: "larger than 64 KiB") }
        do throws(JSONError) {
            return try JSONValue.parse(bytes)
        } catch {
            throw RequestBodyError(field: "body", reason: "not strict JSON: \(error)")
        }
    }

    func value(_ name: String) -> JSONValue? {
        guard let value = members.first(where: { $0.0 == name })?.1 else { return nil }
        if case .null = value { return nil }
        return value
    }

    /// The member `name` as `read` takes it (nil when absent), refused with `must be <expected>`.
    func member<Value>(_ name: String, expected: String, _ read: (JSONValue) -> Value?) throws(RequestBodyError) -> Value? {
        guard let value = value(name) else { return nil }
        guard let typed = read(value) else { throw RequestBodyError(field: name, reason: "must be \(expected)") }
        return typed
    }

    func bool(_ name: String) throws(RequestBodyError) -> Bool? { try member(name, expected: "true or false", \.boolValue) }

    func integer(_ name: String) throws(RequestBodyError) -> Int64? { try member(name, expected: "an integer", \.int64Value) }

    func string(_ name: String) throws(RequestBodyError) -> String? { try member(name, expected: "a string", \.stringValue) }

    func strings(_ name: String) throws(RequestBodyError) -> [String]? {
        guard let value = value(name) else { return nil }
        guard case .array(let elements) = value else { throw RequestBodyError(field: name, reason: "must be an array of strings") }
        var result: [String] = []
        for element in elements {
            guard case .string(let text) = element else { throw RequestBodyError(field: name, reason: "must be an array of strings") }
            result.append(text)
        }
        return result
    }

    /// The required UUID member `name`; `field` names it in errors (default: `name`).
    func uuid(_ name: String, field: String? = nil) throws(RequestBodyError) -> UUID {
        let field = field ?? name
        return try Self.uuid(try Self.required(try string(name), field), field: field)
    }

    /// The UUID `text` spells, or `"<text>" is not a UUID` for `field`.
    static func uuid(_ text: String, field: String) throws(RequestBodyError) -> UUID {
        guard let value = UUIDText.parse(text) else {
            throw RequestBodyError(field: field, reason: "\(RequestBodyText.quoted(text)) is not a UUID")
        }
        return value
    }

    static func required<T>(_ value: T?, _ name: String) throws(RequestBodyError) -> T {
        guard let value else { throw RequestBodyError(field: name, reason: "is required") }
        return value
    }
}

enum RequestBodyText {
    static func quoted(_ text: String) -> String { VerificationTextQuote.quoted(text) }
}

// MARK: - Send Consumption Information (v2)

/// Whether the app delivered a working In-App Purchase (`deliveryStatus`, a string in v2).
public struct DeliveryStatus: DocumentedStringValue {
    /// The value as Apple writes it.
    public let rawValue: String
    /// A value from its raw string (``isKnown`` says whether Apple documents it).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `DELIVERED`: delivered and working properly.
    public static let delivered = DeliveryStatus(rawValue: "DELIVERED")
    /// `UNDELIVERED_QUALITY_ISSUE`: not delivered because of a quality issue.
    public static let undeliveredQualityIssue = DeliveryStatus(rawValue: "UNDELIVERED_QUALITY_ISSUE")
    /// `UNDELIVERED_WRONG_ITEM`: the wrong item was delivered.
    public static let undeliveredWrongItem = DeliveryStatus(rawValue: "UNDELIVERED_WRONG_ITEM")
    /// `UNDELIVERED_SERVER_OUTAGE`: not delivered because of a server outage.
    public static let undeliveredServerOutage = DeliveryStatus(rawValue: "UNDELIVERED_SERVER_OUTAGE")
    /// `UNDELIVERED_OTHER`: not delivered for another reason.
    public static let undeliveredOther = DeliveryStatus(rawValue: "UNDELIVERED_OTHER")
    /// Every value Apple documents.
    public static let known: [DeliveryStatus] = [
        .delivered, .undeliveredQualityIssue, .undeliveredWrongItem, .undeliveredServerOutage, .undeliveredOther,
    ]
}

/// The outcome the developer prefers for a refund request (`refundPreference`, a string in v2).
public struct RefundPreference: DocumentedStringValue {
    /// The value as Apple writes it.
    public let rawValue: String
    /// A value from its raw string (``isKnown`` says whether Apple documents it).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `DECLINE`: the App Store should decline the refund.
    public static let decline = RefundPreference(rawValue: "DECLINE")
    /// `GRANT_FULL`: the App Store should grant a full refund.
    public static let grantFull = RefundPreference(rawValue: "GRANT_FULL")
    /// `GRANT_PRORATED`: the App Store should grant a prorated refund.
    public static let grantProrated = RefundPreference(rawValue: "GRANT_PRORATED")
    /// Every value Apple documents.
    public static let known: [RefundPreference] = [.decline, .grantFull, .grantProrated]
}

/// The body of Send Consumption Information (v2, Apple's `ConsumptionRequest` since API 1.19; the
/// v1 body is ``ConsumptionRequest``).
///
/// Rules (checked by ``validate()`` before sending, and by the simulated server on receipt):
/// `customerConsented` must be true; `consumptionPercentage`, when present, is 0–100,000
/// (milliunits: 50,000 is 50 %); `deliveryStatus` and `refundPreference` are values Apple
/// documents.
public struct ConsumptionRequestV2: Sendable, Hashable {
    /// `customerConsented`: the customer consented to sharing the data (Apple requires true).
    public var customerConsented: Bool
    /// `consumptionPercentage`: the share consumed, in milliunits (0–100,000), or nil.
    public var consumptionPercentage: Int?
    /// `deliveryStatus`.
    public var deliveryStatus: DeliveryStatus
    /// `refundPreference`, or nil.
    public var refundPreference: RefundPreference?
    /// `sampleContentProvided`: a free sample, trial or description of the content was offered.
    public var sampleContentProvided: Bool

    /// The member names, in Apple's order.
    static let fields: [String] = [
        "customerConsented", "consumptionPercentage", "deliveryStatus", "refundPreference", "sampleContentProvided",
    ]

    /// Creates a body.
    public init(
        customerConsented: Bool, consumptionPercentage: Int? = nil, deliveryStatus: DeliveryStatus,
        refundPreference: RefundPreference? = nil, sampleContentProvided: Bool
    ) {
        self.customerConsented = customerConsented
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
    }

    /// Decodes and validates a JSON body (every required member present, no unknown member).
    public init(json bytes: [UInt8]) throws(RequestBodyError) {
        let reader = try BodyReader(bytes, known: Set(Self.fields))
        let consented = try BodyReader.required(try reader.bool("customerConsented"), "customerConsented")
        let percentage = try reader.integer("consumptionPercentage")
        let delivery = try BodyReader.required(try reader.string("deliveryStatus"), "deliveryStatus")
        let preference = try reader.string("refundPreference")
        let sample = try BodyReader.required(try reader.bool("sampleContentProvided"), "sampleContentProvided")
        if let percentage, !(0...100_000).contains(percentage) {
            throw RequestBodyError(field: "consumptionPercentage", reason: "must be 0 to 100000 (milliunits), not \(percentage)")
        }
        self.init(
            customerConsented: consented, consumptionPercentage: percentage.map { Int($0) },
            deliveryStatus: DeliveryStatus(rawValue: delivery),
            refundPreference: preference.map(RefundPreference.init(rawValue:)), sampleContentProvided: sample)
        try validate()
    }

    /// Refuses a body Apple would refuse.
    public func validate() throws(RequestBodyError) {
        guard customerConsented else {
            throw RequestBodyError(field: "customerConsented", reason: "must be true (Apple refuses data shared without consent)")
        }
        if let consumptionPercentage, !(0...100_000).contains(consumptionPercentage) {
            throw RequestBodyError(
                field: "consumptionPercentage", reason: "must be 0 to 100000 (milliunits), not \(consumptionPercentage)")
        }
        try deliveryStatus.requireKnown(field: "deliveryStatus")
        try refundPreference?.requireKnown(field: "refundPreference")
    }

    /// The JSON body, members in Apple's order, absent optionals left out.
    public var jsonBody: [UInt8] {
        var members: [(String, JSONValue)] = [("customerConsented", .bool(customerConsented))]
        if let consumptionPercentage { members.append(("consumptionPercentage", .number(String(consumptionPercentage)))) }
        members.append(("deliveryStatus", .string(deliveryStatus.rawValue)))
        if let refundPreference { members.append(("refundPreference", .string(refundPreference.rawValue))) }
        members.append(("sampleContentProvided", .bool(sampleContentProvided)))
        return JSONValue.object(members).jsonBytes()
    }
}

// MARK: - Set App Account Token

/// The body of Set App Account Token (Apple's `UpdateAppAccountTokenRequest`).
public struct UpdateAppAccountTokenRequest: Sendable, Hashable {
    /// `appAccountToken`: the UUID that links the customer's account in your system to the
    /// transaction, written lower-cased.
    public var appAccountToken: UUID

    /// Creates a body.
    public init(appAccountToken: UUID) { self.appAccountToken = appAccountToken }

    /// Decodes a JSON body; `appAccountToken` must be a UUID.
    public init(json bytes: [UInt8]) throws(RequestBodyError) {
        self.init(appAccountToken: try BodyReader(bytes, known: ["appAccountToken"]).uuid("appAccountToken"))
    }

    /// The JSON body.
    public var jsonBody: [UInt8] {
        JSONValue.object([("appAccountToken", .string(appAccountToken.uuidString.lowercased()))]).jsonBytes()
    }
}

/// UUIDs as Apple writes them: 8-4-4-4-12 hexadecimal digits.
public enum UUIDText {
    /// The UUID `text` spells (either case), or nil for anything else.
    public static func parse(_ text: String) -> UUID? {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return nil }
        for (index, byte) in bytes.enumerated() {
            let isDash = [8, 13, 18, 23].contains(index)
            let isHex =
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
            guard isDash ? byte == UInt8(ascii: "-") : isHex else { return nil }
        }
        return UUID(uuidString: text)
    }
}

// MARK: - Extend Subscription Renewal Dates for All Active Subscribers

/// The body of Extend Subscription Renewal Dates for All Active Subscribers (Apple's
/// `MassExtendRenewalDateRequest`).
///
/// Rules: `extendByDays` 1–90; `extendReasonCode` 0 (undeclared), 1 (customer satisfaction), 2
/// (other) or 3 (service issue or outage); `requestIdentifier` 1–128 characters (Apple suggests a
/// UUID); `productId` the subscription's product id; `storefrontCountryCodes`, when present, a
/// non-empty list of three-letter ISO 3166-1 alpha-3 codes.
public struct MassExtendRenewalDateRequest: Sendable, Hashable {
    /// `extendByDays`, 1–90.
    public var extendByDays: Int
    /// `extendReasonCode`, 0–3.
    public var extendReasonCode: Int
    /// `requestIdentifier`: your identifier of this request, for Get Status of Subscription
    /// Renewal Date Extensions and the `RENEWAL_EXTENSION` notification's `summary`.
    public var requestIdentifier: String
    /// `storefrontCountryCodes`: only these storefronts (nil: every storefront).
    public var storefrontCountryCodes: [String]?
    /// `productId`: the auto-renewable subscription to extend.
    public var productId: String

    static let fields: [String] = ["extendByDays", "extendReasonCode", "requestIdentifier", "storefrontCountryCodes", "productId"]

    /// Creates a body.
    public init(
        extendByDays: Int, extendReasonCode: Int, requestIdentifier: String = UUID().uuidString.lowercased(),
        storefrontCountryCodes: [String]? = nil, productId: String
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.productId = productId
    }

    /// Decodes and validates a JSON body.
    public init(json bytes: [UInt8]) throws(RequestBodyError) {
        let reader = try BodyReader(bytes, known: Set(Self.fields))
        let days = try BodyReader.required(try reader.integer("extendByDays"), "extendByDays")
        let reason = try BodyReader.required(try reader.integer("extendReasonCode"), "extendReasonCode")
        let identifier = try BodyReader.required(try reader.string("requestIdentifier"), "requestIdentifier")
        let storefronts = try reader.strings("storefrontCountryCodes")
        let product = try BodyReader.required(try reader.string("productId"), "productId")
        guard (1...90).contains(days) else { throw RequestBodyError(field: "extendByDays", reason: "must be 1 to 90, not \(days)") }
        guard (0...3).contains(reason) else { throw RequestBodyError(field: "extendReasonCode", reason: "must be 0 to 3, not \(reason)") }
        self.init(
            extendByDays: Int(days), extendReasonCode: Int(reason), requestIdentifier: identifier, storefrontCountryCodes: storefronts,
            productId: product)
        try validate()
    }

    /// Refuses a body Apple would refuse.
    public func validate() throws(RequestBodyError) {
        guard (1...90).contains(extendByDays) else {
            throw RequestBodyError(field: "extendByDays", reason: "must be 1 to 90, not \(extendByDays)")
        }
        guard (0...3).contains(extendReasonCode) else {
            throw RequestBodyError(field: "extendReasonCode", reason: "must be 0 to 3, not \(extendReasonCode)")
        }
        guard !requestIdentifier.isEmpty, requestIdentifier.count <= 128 else {
            throw RequestBodyError(field: "requestIdentifier", reason: "must be 1 to 128 characters")
        }
        guard !productId.isEmpty, productId.utf8.count <= 256 else {
            throw RequestBodyError(field: "productId", reason: "must be 1 to 256 characters")
        }
        if let storefrontCountryCodes {
            guard !storefrontCountryCodes.isEmpty else {
                throw RequestBodyError(field: "storefrontCountryCodes", reason: "must not be empty (leave it out for every storefront)")
            }
            for code in storefrontCountryCodes
            where code.utf8.count != 3 || !code.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) {
                throw RequestBodyError(
                    field: "storefrontCountryCodes", reason: "\(RequestBodyText.quoted(code)) is not a three-letter country code")
            }
        }
    }

    /// The JSON body, members in Apple's order.
    public var jsonBody: [UInt8] {
        var members: [(String, JSONValue)] = [
            ("extendByDays", .number(String(extendByDays))), ("extendReasonCode", .number(String(extendReasonCode))),
            ("requestIdentifier", .string(requestIdentifier)),
        ]
        if let storefrontCountryCodes { members.append(("storefrontCountryCodes", .array(storefrontCountryCodes.map { .string($0) }))) }
        members.append(("productId", .string(productId)))
        return JSONValue.object(members).jsonBytes()
    }
}

/// The answer of Extend Subscription Renewal Dates for All Active Subscribers: Apple took the
/// request (the extensions happen later).
public struct MassExtendRenewalDateResponse: Sendable, Hashable {
    /// `requestIdentifier`: the request's identifier, as sent.
    public let requestIdentifier: String
}

/// The answer of Get Status of Subscription Renewal Date Extensions
/// (`MassExtendRenewalDateStatusResponse`).
public struct MassExtendRenewalDateStatus: Sendable, Hashable {
    /// `requestIdentifier`.
    public let requestIdentifier: String
    /// `complete`: whether the App Store finished extending.
    public let complete: Bool
    /// `completeDate`: when it finished.
    public let completeDate: JWSDate?
    /// `succeededCount`: subscriptions extended.
    public let succeededCount: Int64?
    /// `failedCount`: subscriptions that could not be extended.
    public let failedCount: Int64?
}
