public import Foundation
public import JSON

// The Advanced Commerce API's server calls and in-app requests: bodies built from typed values
// under Apple's field names, checked by one validator (before sending, and by the simulated App
// Store Server on receipt): `requestInfo.requestReferenceId` a UUID, `SKU` at most 128
// characters, `displayName` at most 30, `description` at most 45, `currency` and `storefront`
// three capital letters, prices and amounts in milliunits and not negative, `items` not empty,
// `effective` `IMMEDIATELY` or `NEXT_BILL_CYCLE`, `period` 1–12 where a period count is given.

/// Apple's `RequestInfo`: the reference every Advanced Commerce request carries.
public struct AdvancedCommerceRequestInfo: Sendable, Hashable {
    /// `requestReferenceId`: your UUID for the request.
    public var requestReferenceId: UUID
    /// `appAccountToken`, or nil.
    public var appAccountToken: UUID?
    /// `consistencyToken` from the last renewal info, or nil.
    public var consistencyToken: String?

    /// Creates request info.
    public init(requestReferenceId: UUID = UUID(), appAccountToken: UUID? = nil, consistencyToken: String? = nil) {
        self.requestReferenceId = requestReferenceId
        self.appAccountToken = appAccountToken
        self.consistencyToken = consistencyToken
    }

    /// The JSON object.
    public var jsonValue: JSONValue {
        var members: [(String, JSONValue)] = [("requestReferenceId", .string(requestReferenceId.uuidString.lowercased()))]
        if let appAccountToken { members.append(("appAccountToken", .string(appAccountToken.uuidString.lowercased()))) }
        if let consistencyToken { members.append(("consistencyToken", .string(consistencyToken))) }
        return .object(members)
    }
}

/// When a change takes effect (`effective`).
public enum AdvancedCommerceEffective: String, Sendable, Hashable, CaseIterable {
    /// `IMMEDIATELY`.
    case immediately = "IMMEDIATELY"
    /// `NEXT_BILL_CYCLE`.
    case nextBillCycle = "NEXT_BILL_CYCLE"
}

/// The body of one Advanced Commerce server call: which call (``operation``) and its JSON, built
/// by the typed constructors below (or read from JSON and validated with ``init(operation:json:)``).
public struct AdvancedCommerceRequest: Sendable, Equatable {
    /// The call this body is for.
    public let operation: AppStoreServerEndpoint
    /// The body, members in Apple's order.
    public let body: JSONValue

    init(_ operation: AppStoreServerEndpoint, _ members: [(String, JSONValue?)]) {
        self.operation = operation
        self.body = .object(members.compactMap { name, value in value.map { (name, $0) } })
    }

    /// A body read from JSON for `operation` (one of the six Advanced Commerce calls), validated.
    public init(operation: AppStoreServerEndpoint, json: [UInt8]) throws(RequestBodyError) {
        guard operation.isAdvancedCommerce else {
            throw RequestBodyError(field: "body", reason: "\(operation) is not an Advanced Commerce call")
        }
        self.operation = operation
        self.body = try BodyReader.parse(json)
        try validate()
    }

    /// The JSON bytes sent.
    public var jsonBody: [UInt8] { body.jsonBytes() }

    static func string(_ text: String?) -> JSONValue? { text.map { .string($0) } }
    static func descriptors(displayName: String?, description: String?, effective: AdvancedCommerceEffective?) -> JSONValue {
        .object(
            [("description", string(description)), ("displayName", string(displayName)), ("effective", string(effective?.rawValue))]
                .compactMap { name, value in value.map { (name, $0) } })
    }

    /// Change Subscription Price: new prices (milliunits) for SKUs at the next renewal.
    public static func changePrice(
        _ info: AdvancedCommerceRequestInfo, items: [(sku: String, price: Int64)], currency: String, storefront: String? = nil
    ) -> AdvancedCommerceRequest {
        AdvancedCommerceRequest(
            .advancedCommerceChangePrice,
            [
                ("requestInfo", info.jsonValue),
                ("items", .array(items.map { .object([("SKU", .string($0.sku)), ("price", .number(String($0.price)))]) })),
                ("currency", .string(currency)), ("storefront", string(storefront)),
            ])
    }

    /// Cancel a Subscription: turn off automatic renewal.
    public static func cancel(_ info: AdvancedCommerceRequestInfo, storefront: String? = nil) -> AdvancedCommerceRequest {
        AdvancedCommerceRequest(.advancedCommerceCancel, [("requestInfo", info.jsonValue), ("storefront", string(storefront))])
    }

    /// Change Subscription Metadata: new SKU, display name or description for items (or the
    /// subscription's descriptors), taking effect as `effective` says.
    public static func changeMetadata(
        _ info: AdvancedCommerceRequestInfo,
        items: [(currentSKU: String, sku: String?, displayName: String?, description: String?, effective: AdvancedCommerceEffective)] = [],
        descriptors: (displayName: String?, description: String?, effective: AdvancedCommerceEffective)? = nil, taxCode: String? = nil,
        storefront: String? = nil
    ) -> AdvancedCommerceRequest {
        let itemValues: [JSONValue] = items.map { item in
            .object(
                [
                    ("currentSKU", .string(item.currentSKU)), ("SKU", string(item.sku)), ("displayName", string(item.displayName)),
                    ("description", string(item.description)), ("effective", .string(item.effective.rawValue)),
                ].compactMap { name, value in value.map { (name, $0) } })
        }
        return AdvancedCommerceRequest(
            .advancedCommerceChangeMetadata,
            [
                ("requestInfo", info.jsonValue), ("items", items.isEmpty ? nil : .array(itemValues)),
                (
                    "descriptors",
                    descriptors.map { Self.descriptors(displayName: $0.displayName, description: $0.description, effective: $0.effective) }
                ),
                ("taxCode", string(taxCode)), ("storefront", string(storefront)),
            ])
    }

    /// Migrate a Subscription to Advanced Commerce API: the subscription continues as
    /// `targetProductId` with these descriptors and items.
    public static func migrate(
        _ info: AdvancedCommerceRequestInfo, displayName: String, description: String,
        items: [(sku: String, displayName: String, description: String)], targetProductId: String, taxCode: String,
        storefront: String? = nil
    ) -> AdvancedCommerceRequest {
        AdvancedCommerceRequest(
            .advancedCommerceMigrate,
            [
                ("requestInfo", info.jsonValue),
                ("descriptors", descriptors(displayName: displayName, description: description, effective: nil)),
                (
                    "items",
                    .array(
                        items.map {
                            .object([
                                ("SKU", .string($0.sku)), ("description", .string($0.description)),
                                ("displayName", .string($0.displayName)),
                            ])
                        })
                ),
                ("targetProductId", .string(targetProductId)), ("taxCode", .string(taxCode)), ("storefront", string(storefront)),
            ])
    }

    /// Revoke Subscription: end it now and request a refund (`refundType` `FULL` or `PRORATED`).
    public static func revoke(
        _ info: AdvancedCommerceRequestInfo, refundReason: String, refundType: String, refundRiskingPreference: Bool,
        storefront: String? = nil
    ) -> AdvancedCommerceRequest {
        AdvancedCommerceRequest(
            .advancedCommerceRevoke,
            [
                ("requestInfo", info.jsonValue), ("refundRiskingPreference", .bool(refundRiskingPreference)),
                ("refundReason", .string(refundReason)), ("refundType", .string(refundType)), ("storefront", string(storefront)),
            ])
    }

    /// Request Transaction Refund: refunds for items of a one-time charge or subscription
    /// transaction (`refundAmount` in milliunits for a custom amount).
    public static func requestRefund(
        _ info: AdvancedCommerceRequestInfo,
        items: [(sku: String, refundReason: String, refundType: String, revoke: Bool, refundAmount: Int64?)],
        refundRiskingPreference: Bool, currency: String? = nil, storefront: String? = nil
    ) -> AdvancedCommerceRequest {
        let values: [JSONValue] = items.map { item in
            .object(
                [
                    ("SKU", .string(item.sku)), ("refundAmount", item.refundAmount.map { .number(String($0)) }),
                    ("refundReason", .string(item.refundReason)), ("refundType", .string(item.refundType)), ("revoke", .bool(item.revoke)),
                ].compactMap { name, value in value.map { (name, $0) } })
        }
        return AdvancedCommerceRequest(
            .advancedCommerceRequestRefund,
            [
                ("items", .array(values)), ("refundRiskingPreference", .bool(refundRiskingPreference)), ("requestInfo", info.jsonValue),
                ("currency", string(currency)), ("storefront", string(storefront)),
            ])
    }

    /// The members each call requires.
    var requiredMembers: [String] {
        switch operation {
        case .advancedCommerceChangePrice: ["requestInfo", "items", "currency"]
        case .advancedCommerceMigrate: ["requestInfo", "descriptors", "items", "targetProductId", "taxCode"]
        case .advancedCommerceRevoke: ["requestInfo", "refundReason", "refundRiskingPreference", "refundType"]
        case .advancedCommerceRequestRefund: ["requestInfo", "items", "refundRiskingPreference"]
        default: ["requestInfo"]
        }
    }

    /// Refuses a body Apple would refuse (the rules at the top of this file).
    public func validate() throws(RequestBodyError) {
        guard case .object(let members) = body else { throw RequestBodyError(field: "body", reason: "not a JSON object") }
        for name in requiredMembers where body[name] == nil {
            throw RequestBodyError(field: name, reason: "is required")
        }
        var seen: Set<String> = []
        for (name, _) in members where !seen.insert(name).inserted {
            throw RequestBodyError(field: RequestBodyText.quoted(name), reason: "appears twice")
        }
        try AdvancedCommerceValidator.check(body, path: "")
    }
}

/// The value rules of Advanced Commerce bodies, applied to every member wherever it appears.
enum AdvancedCommerceValidator {
    static func isCode(_ text: String) -> Bool {
        text.utf8.count == 3 && text.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }

    static func check(_ value: JSONValue, path: String) throws(RequestBodyError) {
        switch value {
        case .object(let members):
            for (name, member) in members {
                let here = path.isEmpty ? name : "\(path).\(name)"
                try checkMember(name, member, here)
                try check(member, path: here)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() { try check(element, path: "\(path)[\(index)]") }
        default: break
        }
    }

    static func text(_ value: JSONValue, _ here: String) throws(RequestBodyError) -> String {
        guard case .string(let text) = value else { throw RequestBodyError(field: here, reason: "must be a string") }
        return text
    }

    static func length(_ value: JSONValue, _ here: String, _ maximum: Int) throws(RequestBodyError) {
        let count = try text(value, here).unicodeScalars.count
        guard (1...maximum).contains(count) else {
            throw RequestBodyError(field: here, reason: "must be 1 to \(maximum) characters, not \(count)")
        }
    }

    static func checkMember(_ name: String, _ value: JSONValue, _ here: String) throws(RequestBodyError) {
        switch name {
        case "requestReferenceId", "appAccountToken":
            let text = try text(value, here)
            _ = try BodyReader.uuid(text, field: here)
        case "SKU", "currentSKU": try length(value, here, 128)
        case "displayName": try length(value, here, 30)
        case "description": try length(value, here, 45)
        case "currency", "storefront":
            let text = try text(value, here)
            guard isCode(text) else {
                throw RequestBodyError(field: here, reason: "\(RequestBodyText.quoted(text)) is not three capital letters")
            }
        case "price", "refundAmount":
            guard case .number = value, let amount = value.int64Value, amount >= 0 else {
                throw RequestBodyError(field: here, reason: "must be a whole number of milliunits, 0 or more")
            }
        case "effective":
            let text = try text(value, here)
            guard AdvancedCommerceEffective(rawValue: text) != nil else {
                throw RequestBodyError(field: here, reason: "\(RequestBodyText.quoted(text)) is not IMMEDIATELY or NEXT_BILL_CYCLE")
            }
        case "refundReason", "refundType":
            let text = try text(value, here)
            let words = text.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || $0 == UInt8(ascii: "_") }
            guard !text.isEmpty, text.utf8.count <= 64, words else {
                throw RequestBodyError(
                    field: here, reason: "\(RequestBodyText.quoted(text)) is not one of Apple's values (capital letters and _)")
            }
        case "refundRiskingPreference", "revoke", "retainBillingCycle":
            guard case .bool = value else { throw RequestBodyError(field: here, reason: "must be true or false") }
        case "items":
            guard case .array(let elements) = value, !elements.isEmpty else {
                throw RequestBodyError(field: here, reason: "must be a non-empty array")
            }
        case "periodCount":
            guard let count = value.int64Value, (1...12).contains(count) else {
                throw RequestBodyError(field: here, reason: "must be 1 to 12")
            }
        default: break
        }
    }
}
