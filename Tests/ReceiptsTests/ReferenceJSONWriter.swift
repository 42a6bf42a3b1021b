import Foundation
import Internals
import JSON

@testable import Receipts

// The verifyReceipt-style JSON written the plain way, through `JSONWriter`'s own methods one field
// at a time: the oracle the library's one receipt JSON writer (`ReceiptJSONEncoder`, behind
// `AppReceipt.jsonText` and `writeJSON`) is compared with in RecordLayoutAndJSONTests.

extension JSONWriter {
    /// Writes Apple's date triplet: `key` (`YYYY-MM-DD HH:MM:SS Etc/GMT`), `key_ms`, `key_pst`.
    /// Digits are written straight into the output (no intermediate Strings).
    mutating func dateTriplet(_ key: String, _ date: Date?) {
        guard let date else { return }
        let ms = ReceiptDate.milliseconds(date)
        let seconds = ReceiptDate.floorDiv(ms, 1000)
        writeKey(key)
        quotedWallClock(seconds: seconds, suffix: " Etc/GMT")
        writeKey(key + "_ms")
        output.append(UInt8(ascii: "\""))
        appendDecimal(ms)
        output.append(UInt8(ascii: "\""))
        writeKey(key + "_pst")
        quotedWallClock(seconds: seconds + Int64(ReceiptDate.pacificOffset(utcSeconds: seconds)), suffix: " America/Los_Angeles")
    }

    /// `"YYYY-MM-DD HH:MM:SS<suffix>"`.
    mutating func quotedWallClock(seconds: Int64, suffix: StaticString) {
        let days = ReceiptDate.floorDiv(seconds, 86_400)
        let rest = Int(seconds - days * 86_400)
        let (y, m, d) = CivilCalendar.date(daysSince1970: days)
        output.append(UInt8(ascii: "\""))
        if y >= 0 && y < 10_000 {
            appendDigits(y, width: 4)
        } else {
            appendDecimal(Int64(y))
        }
        output.append(UInt8(ascii: "-"))
        appendDigits(m, width: 2)
        output.append(UInt8(ascii: "-"))
        appendDigits(d, width: 2)
        output.append(UInt8(ascii: " "))
        appendDigits(rest / 3600, width: 2)
        output.append(UInt8(ascii: ":"))
        appendDigits(rest / 60 % 60, width: 2)
        output.append(UInt8(ascii: ":"))
        appendDigits(rest % 60, width: 2)
        suffix.withUTF8Buffer { output.append(contentsOf: $0) }
        output.append(UInt8(ascii: "\""))
    }

    mutating func appendDigits(_ value: Int, width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var v = value
        while divisor > 0 {
            output.append(UInt8(48 + v / divisor % 10))
            v %= divisor
            divisor /= 10
        }
    }

    mutating func appendDecimal(_ value: Int64) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(48 + magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for i in stride(from: count - 1, through: 0, by: -1) { output.append(buffer[i]) }
        }
    }

    mutating func emptyDates(_ types: Set<Int>) {
        guard !types.isEmpty else { return }
        beginArray("empty_date_attributes")
        for type in types.sorted() { raw(Array(String(type).utf8)) }
        endArray()
    }

    mutating func attributeVersions(_ versions: [Int: Int]) {
        guard !versions.isEmpty else { return }
        beginObject("attribute_versions")
        for (type, version) in versions.sorted(by: { $0.key < $1.key }) { number(String(type), String(version)) }
        endObject()
    }

    mutating func unknownAttributes(_ attributes: [ReceiptAttribute]) {
        guard !attributes.isEmpty else { return }
        beginArray("unknown_attributes")
        for attribute in attributes {
            beginObject()
            number("type", String(attribute.type))
            number("version", String(attribute.version))
            string("value", Base64.encode(attribute.value))
            endObject()
        }
        endArray()
    }
}

extension InAppPurchase {
    /// ``writeJSON(to:options:)`` through `JSONWriter`'s own methods, one field at a time: the
    /// plain form the tests compare `ReceiptJSONEncoder` with.
    func writeReferenceJSON(to json: inout JSONWriter, options: ReceiptJSONOptions = ReceiptJSONOptions()) {
        json.beginObject()
        if let quantity { json.string("quantity", String(quantity)) }
        if let productIdentifier { json.string("product_id", productIdentifier) }
        if let transactionIdentifier { json.string("transaction_id", transactionIdentifier) }
        if let originalTransactionIdentifier { json.string("original_transaction_id", originalTransactionIdentifier) }
        json.dateTriplet("purchase_date", purchaseDate)
        json.dateTriplet("original_purchase_date", originalPurchaseDate)
        json.dateTriplet("expires_date", subscriptionExpirationDate)
        if let webOrderLineItemID { json.string("web_order_line_item_id", String(webOrderLineItemID)) }
        if let isTrialPeriod { json.string("is_trial_period", isTrialPeriod ? "true" : "false") }
        if let isInIntroOfferPeriod { json.string("is_in_intro_offer_period", isInIntroOfferPeriod ? "true" : "false") }
        json.dateTriplet("cancellation_date", cancellationDate)
        if let cancellationReason { json.string("cancellation_reason", String(cancellationReason.rawValue)) }
        if let promotionalOfferIdentifier { json.string("promotional_offer_id", promotionalOfferIdentifier) }
        if options.includeReceiptOnlyFields {
            if let productType { json.string("product_type", String(productType.rawValue)) }
            if let undocumentedInteger1722 { json.string("undocumented_integer_1722", String(undocumentedInteger1722)) }
            json.attributeVersions(attributeVersions)
            json.emptyDates(emptyDateAttributeTypes)
            json.unknownAttributes(unknownAttributes)
        }
        json.endObject()
    }
}

extension AppReceipt {
    /// ``writeJSON(to:key:options:)`` through `JSONWriter`'s own methods, one field at a time: the
    /// plain form the tests compare `ReceiptJSONEncoder` with.
    func writeReferenceJSON(to json: inout JSONWriter, key: String? = nil, options: ReceiptJSONOptions = ReceiptJSONOptions()) {
        if let key { json.beginObject(key) } else { json.beginObject() }
        if let receiptType { json.string("receipt_type", receiptType) }
        if let appItemID {
            json.number("adam_id", String(appItemID))
            json.number("app_item_id", String(appItemID))
        }
        if let bundleIdentifier { json.string("bundle_id", bundleIdentifier) }
        if let appVersion { json.string("application_version", appVersion) }
        if let downloadID { json.number("download_id", String(downloadID)) }
        if let versionExternalIdentifier { json.number("version_external_identifier", String(versionExternalIdentifier)) }
        json.dateTriplet("receipt_creation_date", creationDate)
        json.dateTriplet("request_date", options.requestDate)
        json.dateTriplet("original_purchase_date", originalPurchaseDate)
        if let originalAppVersion { json.string("original_application_version", originalAppVersion) }
        json.dateTriplet("expiration_date", expirationDate)
        if options.includeReceiptOnlyFields {
            if let opaqueValue { json.string("opaque_value", Base64.encode(opaqueValue)) }
            if let sha1Hash { json.string("sha1_hash", Base64.encode(sha1Hash)) }
            if let bundleIdentifierData, bundleIdentifierData != AppReceipt.canonicalBundleData(bundleIdentifier) {
                json.string("bundle_id_data", Base64.encode(bundleIdentifierData))
            }
            if let ageRating { json.string("age_rating", ageRating) }
            json.dateTriplet("undocumented_date_8", undocumentedDate8)
            if let undocumentedInteger13 { json.number("undocumented_integer_13", String(undocumentedInteger13)) }
            if let undocumentedInteger25 { json.number("undocumented_integer_25", String(undocumentedInteger25)) }
            json.attributeVersions(attributeVersions)
            json.emptyDates(emptyDateAttributeTypes)
            json.unknownAttributes(unknownAttributes)
        }
        json.beginArray("in_app")
        for purchase in inAppPurchases { purchase.writeReferenceJSON(to: &json, options: options) }
        json.endArray()
        json.endObject()
    }

    /// ``jsonText(indent:options:)`` written the plain way (``writeReferenceJSON(to:key:options:)``).
    func referenceJSONText(indent: Int = 2, options: ReceiptJSONOptions = ReceiptJSONOptions()) -> String {
        var json = JSONWriter(indent: indent)
        writeReferenceJSON(to: &json, options: options)
        return json.text
    }
}
