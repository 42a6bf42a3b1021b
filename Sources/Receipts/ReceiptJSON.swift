import ASN1
public import FoundationEssentials
import Internals
public import JSON

/// What the verifyReceipt-style JSON of a receipt includes.
public struct ReceiptJSONOptions: Sendable {
    /// Writes `request_date` (+`_ms`, `_pst`) as Apple's endpoint did, when set.
    public var requestDate: Date?
    /// Adds the fields Apple's JSON never carried but the receipt does (opaque value, SHA-1 hash,
    /// age rating, product type, undocumented and unknown attributes), under keys Apple never
    /// used, so nothing is lost and `receipt-tool make` can rebuild the receipt from the JSON.
    public var includeReceiptOnlyFields: Bool

    /// Creates options.
    public init(requestDate: Date? = nil, includeReceiptOnlyFields: Bool = true) {
        self.requestDate = requestDate
        self.includeReceiptOnlyFields = includeReceiptOnlyFields
    }
}

extension InAppPurchase {
    /// Writes this record as an object of verifyReceipt's `in_app` array.
    public func writeJSON(to json: inout JSONWriter, options: ReceiptJSONOptions = ReceiptJSONOptions()) {
        var encoder = ReceiptJSONEncoder(continuing: &json)
        encoder.write(self, options: options)
        encoder.finish(into: &json)
    }

    /// Writes `records` as an array under `key` (one encoder for all of them).
    package static func writeJSON(
        _ records: some Sequence<InAppPurchase>, key: String, to json: inout JSONWriter, options: ReceiptJSONOptions = ReceiptJSONOptions()
    ) {
        var encoder = ReceiptJSONEncoder(continuing: &json)
        encoder.writeArray(key, records, options: options)
        encoder.finish(into: &json)
    }
}

extension AppReceipt {
    /// Writes the receipt as the `receipt` object of Apple's verifyReceipt response: snake_case
    /// keys in Apple's order, numbers as strings where Apple used strings, date triplets.
    public func writeJSON(to json: inout JSONWriter, key: String? = nil, options: ReceiptJSONOptions = ReceiptJSONOptions()) {
        var encoder = ReceiptJSONEncoder(continuing: &json)
        encoder.expect(self, key: key, options: options)
        encoder.write(self, key: key, options: options)
        encoder.finish(into: &json)
    }

    /// The receipt as pretty-printed (or, with `indent` 0, compact) verifyReceipt-style JSON.
    public func jsonText(indent: Int = 2, options: ReceiptJSONOptions = ReceiptJSONOptions()) -> String {
        // Written straight into the String's storage, sized by a bound computed first (a spill to
        // a buffer of the encoder's own keeps the result right if the bound were ever short).
        var spilled: [UInt8]?
        let bound = ReceiptJSONEncoder.bound(self, key: nil, options: options, indent: indent, level: 0)
        let text = String(unsafeUninitializedCapacity: max(bound, 1)) { memory in
            var encoder = ReceiptJSONEncoder(inPlace: memory, indent: indent)
            encoder.write(self, key: nil, options: options)
            if let count = encoder.inPlaceCount { return count }
            spilled = encoder.spilledBytes()
            return 0
        }
        return spilled.map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    /// The bundle identifier attribute value this library writes: a DER UTF8String.
    package static func canonicalBundleData(_ bundleIdentifier: String?) -> [UInt8]? {
        guard let bundleIdentifier else { return nil }
        var writer = DERWriter()
        writer.appendUTF8String(bundleIdentifier)
        return writer.bytes
    }
}

// MARK: - Reading the JSON back

extension AppReceipt {
    /// Builds a receipt from the JSON ``jsonText(indent:options:)`` writes (or a verifyReceipt
    /// `receipt` object): the inverse used by `receipt-tool make`. Dates are read from `X_ms`
    /// when present, else from `X` (Apple's `… Etc/GMT` form or RFC 3339).
    /// - Throws: ``ReceiptError/Code/invalidAttributeValue`` naming the offending key.
    public init(json: JSONValue) throws(ReceiptError) {
        guard case .object = json else { throw JSONReading.fail("receipt JSON must be an object") }
        self.init()
        receiptType = try JSONReading.string(json, "receipt_type")
        appItemID = try JSONReading.integer(json, "app_item_id")
        if appItemID == nil { appItemID = try JSONReading.integer(json, "adam_id") }
        bundleIdentifier = try JSONReading.string(json, "bundle_id")
        bundleIdentifierData = try JSONReading.base64(json, "bundle_id_data")
        if bundleIdentifierData == nil { bundleIdentifierData = AppReceipt.canonicalBundleData(bundleIdentifier) }
        appVersion = try JSONReading.string(json, "application_version")
        downloadID = try JSONReading.integer(json, "download_id")
        versionExternalIdentifier = try JSONReading.integer(json, "version_external_identifier")
        creationDate = try JSONReading.date(json, "receipt_creation_date")
        originalPurchaseDate = try JSONReading.date(json, "original_purchase_date")
        originalAppVersion = try JSONReading.string(json, "original_application_version")
        expirationDate = try JSONReading.date(json, "expiration_date")
        opaqueValue = try JSONReading.base64(json, "opaque_value")
        sha1Hash = try JSONReading.base64(json, "sha1_hash")
        ageRating = try JSONReading.string(json, "age_rating")
        undocumentedDate8 = try JSONReading.date(json, "undocumented_date_8")
        undocumentedInteger13 = try JSONReading.integer(json, "undocumented_integer_13")
        undocumentedInteger25 = try JSONReading.integer(json, "undocumented_integer_25")
        attributeVersions = try JSONReading.attributeVersions(json)
        emptyDateAttributeTypes = try JSONReading.emptyDates(json)
        unknownAttributes = try JSONReading.unknownAttributes(json)
        if let list = json["in_app"] {
            guard let array = list.arrayValue else { throw JSONReading.fail("in_app must be an array") }
            inAppPurchases = []
            for element in array { inAppPurchases.append(try InAppPurchase(json: element)) }
        }
    }
}

extension InAppPurchase {
    /// Builds a record from an `in_app` object.
    public init(json: JSONValue) throws(ReceiptError) {
        guard case .object = json else { throw JSONReading.fail("in_app elements must be objects") }
        self.init()
        quantity = try JSONReading.integer(json, "quantity")
        productIdentifier = try JSONReading.string(json, "product_id")
        transactionIdentifier = try JSONReading.string(json, "transaction_id")
        originalTransactionIdentifier = try JSONReading.string(json, "original_transaction_id")
        purchaseDate = try JSONReading.date(json, "purchase_date")
        originalPurchaseDate = try JSONReading.date(json, "original_purchase_date")
        subscriptionExpirationDate = try JSONReading.date(json, "expires_date")
        webOrderLineItemID = try JSONReading.integer(json, "web_order_line_item_id")
        isTrialPeriod = try JSONReading.flag(json, "is_trial_period")
        isInIntroOfferPeriod = try JSONReading.flag(json, "is_in_intro_offer_period")
        cancellationDate = try JSONReading.date(json, "cancellation_date")
        cancellationReason = try JSONReading.integer(json, "cancellation_reason").map(CancellationReason.init(rawValue:))
        promotionalOfferIdentifier = try JSONReading.string(json, "promotional_offer_id")
        productType = try JSONReading.integer(json, "product_type").map(ProductType.init(rawValue:))
        undocumentedInteger1722 = try JSONReading.integer(json, "undocumented_integer_1722")
        attributeVersions = try JSONReading.attributeVersions(json)
        emptyDateAttributeTypes = try JSONReading.emptyDates(json)
        unknownAttributes = try JSONReading.unknownAttributes(json)
    }
}

enum JSONReading {
    static func fail(_ reason: String) -> ReceiptError { ReceiptError.make(.invalidAttributeValue, nil, reason) }

    static func string(_ json: JSONValue, _ key: String) throws(ReceiptError) -> String? {
        guard let value = json[key], value != .null else { return nil }
        guard let text = value.scalarText else { throw fail("\(key) must be a string") }
        return text
    }

    static func integer(_ json: JSONValue, _ key: String) throws(ReceiptError) -> Int64? {
        guard let text = try string(json, key) else { return nil }
        guard let value = Int64(text) else { throw fail("\(key) must be a 64-bit integer, found \"\(text)\"") }
        return value
    }

    static func flag(_ json: JSONValue, _ key: String) throws(ReceiptError) -> Bool? {
        switch try string(json, key) {
        case nil: return nil
        case "true", "1": return true
        case "false", "0": return false
        case let other?: throw fail("\(key) must be \"true\" or \"false\", found \"\(other)\"")
        }
    }

    static func base64(_ json: JSONValue, _ key: String) throws(ReceiptError) -> [UInt8]? {
        guard let text = try string(json, key) else { return nil }
        do {
            return try Base64.decode(Array(text.utf8))
        } catch {
            throw fail("\(key) must be base64")
        }
    }

    static func date(_ json: JSONValue, _ key: String) throws(ReceiptError) -> Date? {
        if let ms = try integer(json, key + "_ms") { return ReceiptDate.date(milliseconds: ms) }
        guard let text = try string(json, key) else { return nil }
        if text.hasSuffix(" Etc/GMT") {
            let stem = text.dropLast(" Etc/GMT".count)
            if let date = try? ReceiptDate.parse(String(stem) + "Z") { return date }
        }
        if let ms = Int64(text) { return ReceiptDate.date(milliseconds: ms) }
        do {
            return try ReceiptDate.parse(text)
        } catch {
            throw fail("\(key) is not a date: \"\(text)\"")
        }
    }

    static func emptyDates(_ json: JSONValue) throws(ReceiptError) -> Set<Int> {
        guard let value = json["empty_date_attributes"] else { return [] }
        guard let list = value.arrayValue else { throw fail("empty_date_attributes must be an array") }
        var types: Set<Int> = []
        for element in list {
            guard let text = element.scalarText, let type = Int(text) else { throw fail("empty_date_attributes holds integers") }
            types.insert(type)
        }
        return types
    }

    static func attributeVersions(_ json: JSONValue) throws(ReceiptError) -> [Int: Int] {
        guard let value = json["attribute_versions"] else { return [:] }
        guard case .object(let members) = value else { throw fail("attribute_versions must be an object") }
        var versions: [Int: Int] = [:]
        for (key, version) in members {
            guard let type = Int(key), let text = version.scalarText, let number = Int(text) else {
                throw fail("attribute_versions maps attribute types to integers")
            }
            versions[type] = number
        }
        return versions
    }

    static func unknownAttributes(_ json: JSONValue) throws(ReceiptError) -> [ReceiptAttribute] {
        guard let list = json["unknown_attributes"] else { return [] }
        guard let array = list.arrayValue else { throw fail("unknown_attributes must be an array") }
        var result: [ReceiptAttribute] = []
        for element in array {
            guard let type = try integer(element, "type").flatMap(Int.init(exactly:)),
                let version = try integer(element, "version").flatMap(Int.init(exactly:)),
                let value = try base64(element, "value")
            else { throw fail("unknown_attributes elements need type, version and value") }
            result.append(ReceiptAttribute(type: type, version: version, value: value[...]))
        }
        return result
    }
}
