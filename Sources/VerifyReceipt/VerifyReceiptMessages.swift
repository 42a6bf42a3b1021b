public import FoundationEssentials
import Internals
public import JSON
public import Receipts

/// Which verifyReceipt endpoint: Apple's production or sandbox service (or a local stand-in).
public enum VerifyReceiptEnvironment: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `https://buy.itunes.apple.com/verifyReceipt`; responses say `"environment": "Production"`.
    case production = "Production"
    /// `https://sandbox.itunes.apple.com/verifyReceipt`; responses say `"environment": "Sandbox"`.
    case sandbox = "Sandbox"

    /// `Production` or `Sandbox`.
    public var description: String { rawValue }

    /// The environment a receipt belongs to for routing: production only for production receipts
    /// (`Production`, `ProductionVPP`, or a transaction receipt marked or defaulting to production);
    /// every other kind (sandbox, Xcode, unknown or absent type) counts as sandbox, as Apple's endpoint
    /// did for receipts without a type.
    public init(_ environment: ReceiptEnvironment) {
        self = environment == .production ? .production : .sandbox
    }
}

/// A verifyReceipt request body: `{"receipt-data": "<base64>", "password": "…",
/// "exclude-old-transactions": true}`.
public struct VerifyReceiptRequest: Sendable, Hashable {
    /// The receipt, base64-encoded (app receipt DER, or a transaction receipt's property-list text).
    public var receiptData: String
    /// The app's shared secret, for auto-renewable subscriptions.
    public var password: String?
    /// Ask for only the latest renewal of each subscription in `latest_receipt_info`.
    public var excludeOldTransactions: Bool?

    /// Creates a request.
    public init(receiptData: String, password: String? = nil, excludeOldTransactions: Bool? = nil) {
        self.receiptData = receiptData
        self.password = password
        self.excludeOldTransactions = excludeOldTransactions
    }

    /// A request for receipt bytes (base64-encoded here).
    public init(receipt: [UInt8], password: String? = nil, excludeOldTransactions: Bool? = nil) {
        self.init(receiptData: Base64.encode(receipt), password: password, excludeOldTransactions: excludeOldTransactions)
    }

    /// The JSON body, compact, keys in the order above; absent options are omitted (so a request
    /// without options is exactly `{"receipt-data":"…"}`).
    public var jsonBody: [UInt8] {
        var json = JSONWriter(indent: 0)
        json.beginObject()
        json.string("receipt-data", receiptData)
        if let password { json.string("password", password) }
        if let excludeOldTransactions { json.bool("exclude-old-transactions", excludeOldTransactions) }
        json.endObject()
        return json.output
    }

    /// Why a body is not a usable request: the status Apple's endpoint answered with, and a reason.
    public struct Rejection: Error, Sendable, Hashable, CustomStringConvertible {
        /// 21000 (not a JSON object, or an option of the wrong type) or 21002 (`receipt-data`
        /// missing, not a string, or empty).
        public let status: VerifyReceiptStatus
        /// A sentence for people.
        public let reason: String

        /// `"<status>: <reason>"`.
        public var description: String { "\(status.rawValue): \(reason)" }
    }

    /// Reads a request body.
    /// - Throws: ``Rejection`` with status 21000 or 21002.
    public init(body: [UInt8]) throws(Rejection) {
        let json: JSONValue
        do throws(JSONError) {
            json = try JSONValue.parse(body, maximumDepth: 16)
        } catch {
            throw Rejection(status: .malformedRequest, reason: "the body is not JSON: \(error)")
        }
        guard case .object = json else {
            throw Rejection(status: .malformedRequest, reason: "the body is not a JSON object")
        }
        guard let data = json["receipt-data"] else {
            throw Rejection(status: .malformedReceiptData, reason: "the body has no \"receipt-data\"")
        }
        guard case .string(let text) = data, !text.isEmpty else {
            throw Rejection(status: .malformedReceiptData, reason: "\"receipt-data\" is not a non-empty string")
        }
        var password: String?
        switch json["password"] {
        case nil, .null?: break
        case .string(let secret)?: password = secret
        default: throw Rejection(status: .malformedRequest, reason: "\"password\" is not a string")
        }
        var exclude: Bool?
        switch json["exclude-old-transactions"] {
        case nil, .null?: break
        case .bool(let flag)?: exclude = flag
        case .string("true")?: exclude = true
        case .string("false")?: exclude = false
        default: throw Rejection(status: .malformedRequest, reason: "\"exclude-old-transactions\" is not a boolean")
        }
        self.init(receiptData: text, password: password, excludeOldTransactions: exclude)
    }
}

/// Writes verifyReceipt response bodies the way Apple's endpoint shaped them.
///
/// Only what the receipt itself proves is written: `pending_renewal_info`, renewals newer than the
/// receipt and `subscription_group_identifier` need Apple's servers and are never invented.
public enum VerifyReceiptResponseWriter {
    /// `{"status": <status>}`, with `environment` and `is-retryable` when given (error responses).
    public static func status(
        _ status: VerifyReceiptStatus, environment: VerifyReceiptEnvironment? = nil, isRetryable: Bool? = nil, indent: Int = 0
    ) -> [UInt8] {
        var json = JSONWriter(indent: indent)
        json.beginObject()
        json.number("status", String(status.rawValue))
        if let environment { json.string("environment", environment.rawValue) }
        if let isRetryable { json.bool("is-retryable", isRetryable) }
        json.endObject()
        return json.output
    }

    /// What an app-receipt response includes.
    public struct AppReceiptOptions: Sendable {
        /// The server time written as `request_date` (+`_ms`, `_pst`) in `receipt`.
        public var requestDate: Date?
        /// Write only the newest transaction of each subscription in `latest_receipt_info`.
        public var excludeOldTransactions: Bool
        /// The base64 receipt written as `latest_receipt` (the receipt that was sent, offline).
        public var latestReceipt: String?

        /// Creates options.
        public init(requestDate: Date? = nil, excludeOldTransactions: Bool = false, latestReceipt: String? = nil) {
            self.requestDate = requestDate
            self.excludeOldTransactions = excludeOldTransactions
            self.latestReceipt = latestReceipt
        }
    }

    /// An app receipt's response: `status`, `environment`, `receipt` (with `in_app`), and, when the
    /// receipt holds auto-renewable subscriptions, `latest_receipt_info` and `latest_receipt`.
    ///
    /// `latest_receipt_info` is derived from the receipt: every record except consumables, oldest
    /// purchase first (the order of Apple's paired sample), or with `excludeOldTransactions` only
    /// the newest record of each original transaction id.
    public static func appReceipt(
        _ receipt: AppReceipt, status: VerifyReceiptStatus = .valid, environment: VerifyReceiptEnvironment,
        options: AppReceiptOptions = AppReceiptOptions(), indent: Int = 0
    ) -> [UInt8] {
        var json = JSONWriter(indent: indent)
        json.beginObject()
        json.number("status", String(status.rawValue))
        json.string("environment", environment.rawValue)
        receipt.writeJSON(
            to: &json, key: "receipt", options: ReceiptJSONOptions(requestDate: options.requestDate, includeReceiptOnlyFields: false))
        let latest = latestReceiptInfo(receipt.inAppPurchases, excludeOldTransactions: options.excludeOldTransactions)
        if let latest {
            InAppPurchase.writeJSON(
                latest, key: "latest_receipt_info", to: &json, options: ReceiptJSONOptions(includeReceiptOnlyFields: false))
            if let latestReceipt = options.latestReceipt { json.string("latest_receipt", latestReceipt) }
        }
        json.endObject()
        return json.output
    }

    /// The records `latest_receipt_info` holds, or `nil` when the receipt has no auto-renewable
    /// subscription (Apple then omitted the key).
    public static func latestReceiptInfo(_ purchases: [InAppPurchase], excludeOldTransactions: Bool) -> [InAppPurchase]? {
        let isSubscription: (InAppPurchase) -> Bool = {
            $0.productType == .autoRenewableSubscription || ($0.productType == nil && $0.subscriptionExpirationDate != nil)
        }
        guard purchases.contains(where: isSubscription) else { return nil }
        let kept = purchases.filter { $0.productType != .consumable }
        // Stable sort by purchase date, records without a date first.
        let ordered = kept.enumerated().sorted { a, b in
            let da = a.element.purchaseDate.map(ReceiptDate.milliseconds) ?? .min
            let db = b.element.purchaseDate.map(ReceiptDate.milliseconds) ?? .min
            return da != db ? da < db : a.offset < b.offset
        }.map(\.element)
        guard excludeOldTransactions else { return ordered }
        var newest: [String: Int] = [:]
        for (index, purchase) in ordered.enumerated() {
            let key = purchase.originalTransactionIdentifier ?? purchase.transactionIdentifier ?? "#\(index)"
            newest[key] = index
        }
        return ordered.enumerated().filter { index, purchase in
            newest[purchase.originalTransactionIdentifier ?? purchase.transactionIdentifier ?? "#\(index)"] == index
        }.map(\.element)
    }

    /// A transaction receipt's response in the iOS 6 shape: `status`, `environment`, `receipt`
    /// (see `PurchaseInfo.writeJSON(to:key:)`), and for auto-renewable subscriptions (receipts with
    /// `expires-date`) the same object as `latest_receipt_info` — or, with status 21006, as
    /// `latest_expired_receipt_info` — plus `latest_receipt`.
    public static func transactionReceipt(
        _ receipt: TransactionReceipt, status: VerifyReceiptStatus = .valid, environment: VerifyReceiptEnvironment,
        latestReceipt: String? = nil, indent: Int = 0
    ) -> [UInt8] {
        var json = JSONWriter(indent: indent)
        json.beginObject()
        json.number("status", String(status.rawValue))
        json.string("environment", environment.rawValue)
        receipt.purchaseInfo.writeJSON(to: &json, key: "receipt")
        if receipt.purchaseInfo.expiresDate != nil {
            receipt.purchaseInfo.writeJSON(
                to: &json, key: status == .subscriptionExpired ? "latest_expired_receipt_info" : "latest_receipt_info")
            if let latestReceipt { json.string("latest_receipt", latestReceipt) }
        }
        json.endObject()
        return json.output
    }
}

/// A verifyReceipt response body, read leniently (Apple wrote numbers both as strings and as
/// numbers over the years) but never guessed: `status` must be an integer.
public struct VerifyReceiptResponse: Sendable {
    /// Why a body is not a verifyReceipt response.
    public struct Malformed: Error, Sendable, Hashable, CustomStringConvertible {
        /// A sentence for people.
        public let reason: String
        /// The reason.
        public var description: String { reason }
    }

    /// The kind of receipt a response describes.
    public enum ReceiptKind: Sendable, Hashable {
        /// An app receipt (`receipt` has `bundle_id`, `receipt_type` or `in_app`).
        case appReceipt
        /// An iOS 6 transaction receipt (`receipt` has `bid` or `transaction_id` at top level).
        case transactionReceipt
    }

    /// The whole body.
    public let json: JSONValue
    /// `status`.
    public let status: VerifyReceiptStatus
    /// `environment` (`Production` or `Sandbox`), when present.
    public let environment: String?
    /// `receipt`, when present.
    public let receipt: JSONValue?
    /// `latest_receipt_info`: an array for app receipts; iOS 6 responses carried one object, returned
    /// here as a one-element array.
    public let latestReceiptInfo: [JSONValue]
    /// `latest_expired_receipt_info` (iOS 6 responses with status 21006).
    public let latestExpiredReceiptInfo: JSONValue?
    /// `latest_receipt` (base64), when present.
    public let latestReceipt: String?
    /// `pending_renewal_info`, when present.
    public let pendingRenewalInfo: [JSONValue]
    /// `is-retryable` (or `is_retryable`), when present.
    public let isRetryable: Bool?

    /// Reads a response body.
    /// - Throws: ``Malformed`` when the body is not a JSON object with an integer `status`.
    public init(body: [UInt8]) throws(Malformed) {
        let json: JSONValue
        do throws(JSONError) {
            json = try JSONValue.parse(body)
        } catch {
            throw Malformed(reason: "the response is not JSON: \(error)")
        }
        try self.init(json: json)
    }

    /// Reads a parsed response.
    /// - Throws: ``Malformed`` when it is not an object with an integer `status`.
    public init(json: JSONValue) throws(Malformed) {
        guard case .object = json else { throw Malformed(reason: "the response is not a JSON object") }
        guard let text = json["status"]?.scalarText, let code = Int(text) else {
            throw Malformed(reason: "the response has no integer \"status\"")
        }
        self.json = json
        status = VerifyReceiptStatus(rawValue: code)
        environment = json["environment"]?.stringValue
        receipt = json["receipt"]
        switch json["latest_receipt_info"] {
        case .array(let elements)?: latestReceiptInfo = elements
        case .object(let members)?: latestReceiptInfo = [.object(members)]
        default: latestReceiptInfo = []
        }
        latestExpiredReceiptInfo = json["latest_expired_receipt_info"]
        latestReceipt = json["latest_receipt"]?.stringValue
        pendingRenewalInfo = json["pending_renewal_info"]?.arrayValue ?? []
        switch json["is-retryable"] ?? json["is_retryable"] {
        case .bool(let flag)?: isRetryable = flag
        case .number(let number)?: isRetryable = number != "0"
        case .string(let text)?: isRetryable = text == "true" || text == "1"
        default: isRetryable = nil
        }
    }

    /// Which kind of receipt ``receipt`` describes, if any.
    public var receiptKind: ReceiptKind? {
        guard let receipt, case .object = receipt else { return nil }
        if receipt["bundle_id"] != nil || receipt["receipt_type"] != nil || receipt["in_app"] != nil { return .appReceipt }
        if receipt["bid"] != nil || receipt["transaction_id"] != nil { return .transactionReceipt }
        return nil
    }

    /// ``receipt`` as an app receipt, when it is one.
    /// - Throws: `ReceiptError` when a field does not type-check.
    public func appReceipt() throws(ReceiptError) -> AppReceipt? {
        guard receiptKind == .appReceipt, let receipt else { return nil }
        return try AppReceipt(json: receipt)
    }

    /// ``receipt`` as an iOS 6 purchase, when it is one.
    /// - Throws: `ReceiptError` when a field does not type-check.
    public func purchaseInfo() throws(ReceiptError) -> PurchaseInfo? {
        guard receiptKind == .transactionReceipt, let receipt else { return nil }
        return try PurchaseInfo(verifyReceiptJSON: receipt)
    }

    /// ``latestReceiptInfo`` as in-app purchase records (app receipt responses).
    /// - Throws: `ReceiptError` when a field does not type-check.
    public func latestTransactions() throws(ReceiptError) -> [InAppPurchase] {
        var result: [InAppPurchase] = []
        for element in latestReceiptInfo { result.append(try InAppPurchase(json: element)) }
        return result
    }
}
