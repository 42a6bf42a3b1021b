// The receipt encoder's dates, receipt-only fields, records and size bounds (split from
// ReceiptJSONEncoder.swift; the scratch buffer and primitives live there).

import FoundationEssentials
import Internals
import JSON

extension ReceiptJSONEncoder {
    // MARK: Dates

    /// A date triplet: `key` (UTC, `YYYY-MM-DD HH:MM:SS Etc/GMT`), `key_ms`, `key_pst`
    /// (America/Los_Angeles), as the tests' plain writer (`JSONWriter.dateTriplet`) writes it.
    mutating func dateTriplet(_ keys: DateKeys, milliseconds ms: Int64) {
        let seconds = ReceiptDate.floorDiv(ms, 1000)
        let day = ReceiptDate.floorDiv(seconds, 86_400)
        let secondOfDay = Int(truncatingIfNeeded: seconds &- day &* 86_400)
        let utc = days.entry(day)
        key(keys.utc)
        wallClock(utc, secondOfDay, suffix: " Etc/GMT\"")
        key(keys.ms)
        quotedDecimal(ms)
        key(keys.pacific)
        let offset = secondOfDay < Int(utc.switchSecond) ? Int(utc.offsetBefore) : Int(utc.offsetAfter)
        var local = secondOfDay &+ offset
        var localDay = day
        if local < 0 {
            local &+= 86_400
            localDay &-= 1
        }
        wallClock(localDay == day ? utc : days.entry(localDay), local, suffix: " America/Los_Angeles\"")
    }

    /// `"YYYY-MM-DD HH:MM:SS` + `suffix` for a day and a second of that day.
    @inline(__always)
    mutating func wallClock(_ day: DayCache.Entry, _ second: Int, suffix: StaticString) {
        reserve(32 &+ suffix.utf8CodeUnitCount)
        buffer[count] = 0x22
        count &+= 1
        if day.textLength == 10 {
            let at = UnsafeMutableRawPointer(buffer + count)
            at.storeBytes(of: day.text.littleEndian, as: UInt64.self)
            at.storeBytes(of: day.textTail.littleEndian, toByteOffset: 8, as: UInt16.self)
            count &+= 10
        } else {
            // Years outside 0...9999: JSONWriter's form (a signed year of any width).
            let (y, m, d) = CivilCalendar.date(daysSince1970: day.day)
            decimal(Int64(y))
            byte(UInt8(ascii: "-"))
            twoDigits(m)
            byte(UInt8(ascii: "-"))
            twoDigits(d)
        }
        reserve(9)
        let hours = second / 3600
        let minutes = second / 60 % 60
        let seconds = Self.pair(second % 60)
        var time = UInt64(0x20)  // ' '
        time |= UInt64(Self.pair(hours)) << 8
        time |= UInt64(0x3A) << 24
        time |= UInt64(Self.pair(minutes)) << 32
        time |= UInt64(0x3A) << 48
        time |= UInt64(seconds & 0xFF) << 56
        let at = UnsafeMutableRawPointer(buffer + count)
        at.storeBytes(of: time.littleEndian, as: UInt64.self)
        at.storeBytes(of: UInt8(truncatingIfNeeded: seconds >> 8), toByteOffset: 8, as: UInt8.self)
        count &+= 9
        bytes(suffix)
    }

    @inline(__always)
    mutating func twoDigits(_ value: Int) {
        reserve(2)
        UnsafeMutableRawPointer(buffer + count).storeBytes(of: Self.pair(value).littleEndian, as: UInt16.self)
        count &+= 2
    }

    /// The three keys of a date triplet, quotes and colons included.
    struct DateKeys {
        let utc: StaticString
        let ms: StaticString
        let pacific: StaticString

        static let purchase = DateKeys(
            utc: "\"purchase_date\":", ms: "\"purchase_date_ms\":", pacific: "\"purchase_date_pst\":")
        static let originalPurchase = DateKeys(
            utc: "\"original_purchase_date\":", ms: "\"original_purchase_date_ms\":", pacific: "\"original_purchase_date_pst\":")
        static let expires = DateKeys(utc: "\"expires_date\":", ms: "\"expires_date_ms\":", pacific: "\"expires_date_pst\":")
        static let cancellation = DateKeys(
            utc: "\"cancellation_date\":", ms: "\"cancellation_date_ms\":", pacific: "\"cancellation_date_pst\":")
        static let receiptCreation = DateKeys(
            utc: "\"receipt_creation_date\":", ms: "\"receipt_creation_date_ms\":", pacific: "\"receipt_creation_date_pst\":")
        static let request = DateKeys(utc: "\"request_date\":", ms: "\"request_date_ms\":", pacific: "\"request_date_pst\":")
        static let expiration = DateKeys(
            utc: "\"expiration_date\":", ms: "\"expiration_date_ms\":", pacific: "\"expiration_date_pst\":")
        static let undocumented8 = DateKeys(
            utc: "\"undocumented_date_8\":", ms: "\"undocumented_date_8_ms\":", pacific: "\"undocumented_date_8_pst\":")
    }

    mutating func dateTriplet(_ keys: DateKeys, _ date: Date?) {
        guard let date else { return }
        dateTriplet(keys, milliseconds: ReceiptDate.milliseconds(date))
    }

    // MARK: Receipt-only fields

    mutating func attributeVersions(_ versions: [Int: Int]) {
        guard !versions.isEmpty else { return }
        beginObject("\"attribute_versions\":")
        for (type, version) in versions.sorted(by: { $0.key < $1.key }) {
            key(text: String(type))
            decimal(Int64(version))
        }
        end(UInt8(ascii: "}"))
    }

    /// `empty_date_attributes`: the set bits of `mask`, bit n naming type `base + n`, ascending.
    mutating func emptyDates(_ mask: UInt64, base: Int) {
        guard mask != 0 else { return }
        beginArray("\"empty_date_attributes\":")
        var rest = mask
        while rest != 0 {
            let bit = rest.trailingZeroBitCount
            rest &= rest &- 1
            beforeValue()
            decimal(Int64(base &+ bit))
            needsComma = true
        }
        end(UInt8(ascii: "]"))
    }

    mutating func unknownAttributes(_ unknown: UnknownAttributes) {
        guard !unknown.isEmpty else { return }
        beginArray("\"unknown_attributes\":")
        unknown.visit { type, version, value in
            beginObject()
            key("\"type\":")
            decimal(Int64(type))
            key("\"version\":")
            decimal(Int64(version))
            key("\"value\":")
            base64(value)
            end(UInt8(ascii: "}"))
        }
        end(UInt8(ascii: "]"))
    }

    // MARK: Records and receipts

    /// One `in_app` object, as the tests' plain writer (`InAppPurchase.writeReferenceJSON`) writes it.
    mutating func write(_ p: InAppPurchase, options: ReceiptJSONOptions) {
        beginObject()
        let present = p.present
        // The box, read only for the fields that are in it (most records have none).
        let rare = p.rare?.fields
        if present.contains(.quantity) {
            key("\"quantity\":")
            quotedDecimal(present.contains(.quantityInRare) ? rare?.quantity ?? 0 : Int64(p.quantityValue))
        }
        if let product = p.storedProductIdentifier {
            key("\"product_id\":")
            string(product)
        }
        identifier("\"transaction_id\":", p, .transactionID, .transactionIDText, p.transactionNumber, rare?.transactionText)
        identifier(
            "\"original_transaction_id\":", p, .originalTransactionID, .originalTransactionIDText, p.originalTransactionNumber,
            rare?.originalTransactionText)
        if present.contains(.purchaseDate) { dateTriplet(.purchase, milliseconds: p.purchaseMS) }
        if present.contains(.originalPurchaseDate) { dateTriplet(.originalPurchase, milliseconds: p.originalPurchaseMS) }
        if present.contains(.expiresDate) { dateTriplet(.expires, milliseconds: p.expiresMS) }
        if present.contains(.webOrderLineItemID) {
            key("\"web_order_line_item_id\":")
            quotedDecimal(p.webOrderLineItemIDValue)
        }
        if present.contains(.trial) {
            key("\"is_trial_period\":")
            bytes(present.contains(.trialValue) ? "\"true\"" : "\"false\"")
        }
        if present.contains(.intro) {
            key("\"is_in_intro_offer_period\":")
            bytes(present.contains(.introValue) ? "\"true\"" : "\"false\"")
        }
        if present.contains(.cancellationDate) { dateTriplet(.cancellation, milliseconds: rare?.cancellationMS ?? 0) }
        if present.contains(.cancellationReason) {
            key("\"cancellation_reason\":")
            quotedDecimal(rare?.cancellationReason ?? 0)
        }
        if let offer = rare?.promotionalOfferIdentifier {
            key("\"promotional_offer_id\":")
            string(offer)
        }
        if options.includeReceiptOnlyFields {
            if present.contains(.productType) {
                key("\"product_type\":")
                quotedDecimal(present.contains(.productTypeInRare) ? rare?.productType ?? 0 : Int64(p.productTypeValue))
            }
            if present.contains(.undocumented1722) {
                key("\"undocumented_integer_1722\":")
                quotedDecimal(present.contains(.undocumented1722InRare) ? rare?.undocumented1722 ?? 0 : Int64(p.undocumented1722Value))
            }
            if let versions = rare?.attributeVersions { attributeVersions(versions) }
            emptyDates(UInt64(p.emptyDateMask), base: 1701)
            unknownAttributes(p.unknown)
        }
        end(UInt8(ascii: "}"))
    }

    mutating func identifier(
        _ name: StaticString, _ p: InAppPurchase, _ bit: InAppPurchase.Present, _ textBit: InAppPurchase.Present, _ number: UInt64,
        _ text: String?
    ) {
        guard p.present.contains(bit) else { return }
        key(name)
        if p.present.contains(textBit) {
            string(text ?? "")
        } else {
            byte(0x22)
            unsignedDecimal(number)
            byte(0x22)
        }
    }

    /// `"key":` and the string, when there is one.
    @inline(__always)
    mutating func field(_ name: StaticString, string value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// `"key":` and the number, when there is one.
    @inline(__always)
    mutating func field(_ name: StaticString, decimal value: Int64?) {
        guard let value else { return }
        key(name)
        decimal(value)
    }

    /// `"key":` and the bytes in base64, when there are some.
    @inline(__always)
    mutating func field(_ name: StaticString, base64 value: [UInt8]?) {
        guard let value else { return }
        key(name)
        base64(value[...])
    }

    /// The `receipt` object, as the tests' plain writer (`AppReceipt.writeReferenceJSON`) writes it.
    mutating func write(_ r: AppReceipt, key name: String?, options: ReceiptJSONOptions) {
        if let name {
            key(text: name)
            byte(UInt8(ascii: "{"))
            level &+= 1
            needsComma = false
        } else {
            beginObject()
        }
        let f = r.box.fields
        field("\"receipt_type\":", string: f.receiptType)
        field("\"adam_id\":", decimal: f.appItemID)
        field("\"app_item_id\":", decimal: f.appItemID)
        field("\"bundle_id\":", string: f.bundleIdentifier)
        field("\"application_version\":", string: f.appVersion)
        field("\"download_id\":", decimal: f.downloadID)
        field("\"version_external_identifier\":", decimal: f.versionExternalIdentifier)
        dateTriplet(.receiptCreation, f.creationDate)
        dateTriplet(.request, options.requestDate)
        dateTriplet(.originalPurchase, f.originalPurchaseDate)
        field("\"original_application_version\":", string: f.originalAppVersion)
        dateTriplet(.expiration, f.expirationDate)
        if options.includeReceiptOnlyFields {
            field("\"opaque_value\":", base64: f.opaqueValue)
            field("\"sha1_hash\":", base64: f.sha1Hash)
            if let data = f.bundleIdentifierData, data != AppReceipt.canonicalBundleData(f.bundleIdentifier) {
                field("\"bundle_id_data\":", base64: data)
            }
            field("\"age_rating\":", string: f.ageRating)
            dateTriplet(.undocumented8, f.undocumentedDate8)
            field("\"undocumented_integer_13\":", decimal: f.undocumentedInteger13)
            field("\"undocumented_integer_25\":", decimal: f.undocumentedInteger25)
            attributeVersions(f.attributeVersions)
            emptyDates(f.emptyDateMask, base: 0)
            unknownAttributes(f.unknown)
        }
        beginArray("\"in_app\":")
        f.inAppPurchases.withUnsafeBufferPointer { records in
            for index in records.indices { write(records[index], options: options) }
        }
        end(UInt8(ascii: "]"))
        end(UInt8(ascii: "}"))
    }

    // MARK: Size bounds

    /// At least the bytes ``write(_:options:)`` writes for `p` at the current nesting level (a
    /// few per value more), so `jsonText` can write in place; never less, or writing spills to a
    /// block of its own (correct, only slower).
    static func bound(_ p: InAppPurchase, options: ReceiptJSONOptions, indent: Int, level: Int) -> Int {
        // Per key or element: a comma, a new line with its indentation (records nest at most five
        // levels below here), a space after the colon.
        let item = 2 &+ (indent > 0 ? 2 &+ (max(0, level) &+ 6) &* indent : 0)
        let present = p.present
        var keys = 2  // the braces
        var bytes = 0
        @inline(__always) func field(_ key: Int, _ value: Int) {
            keys &+= 1
            bytes &+= key &+ value
        }
        if present.contains(.quantity) { field(11, 22) }
        if let product = p.storedProductIdentifier { field(12, Self.stringBound(product)) }
        let rare = p.rare?.fields ?? InAppPurchase.RareFields()
        if present.contains(.transactionID) { field(17, rare.transactionText.map(Self.stringBound) ?? 22) }
        if present.contains(.originalTransactionID) { field(26, rare.originalTransactionText.map(Self.stringBound) ?? 22) }
        @inline(__always) func date(_ bit: InAppPurchase.Present, _ ms: Int64) {
            guard present.contains(bit) else { return }
            keys &+= 3
            bytes &+= Self.dateBound(ms, keys: 3 &* 30 &+ 7)
        }
        date(.purchaseDate, p.purchaseMS)
        date(.originalPurchaseDate, p.originalPurchaseMS)
        date(.expiresDate, p.expiresMS)
        date(.cancellationDate, rare.cancellationMS)
        if present.contains(.webOrderLineItemID) { field(25, 22) }
        if present.contains(.trial) { field(18, 7) }
        if present.contains(.intro) { field(27, 7) }
        if present.contains(.cancellationReason) { field(22, 22) }
        if let offer = rare.promotionalOfferIdentifier { field(23, Self.stringBound(offer)) }
        if options.includeReceiptOnlyFields {
            if present.contains(.productType) { field(15, 22) }
            if present.contains(.undocumented1722) { field(28, 22) }
            if !rare.attributeVersions.isEmpty {
                field(21, 0)
                keys &+= 1 &+ rare.attributeVersions.count
                bytes &+= rare.attributeVersions.count &* 46
            }
            if p.emptyDateMask != 0 {
                field(24, 0)
                keys &+= 1 &+ p.emptyDateMask.nonzeroBitCount
                bytes &+= p.emptyDateMask.nonzeroBitCount &* 20
            }
            if !p.unknown.isEmpty {
                field(21, 0)
                let (attributes, valueBytes) = p.unknownSizes
                keys &+= 1 &+ 5 &* attributes
                bytes &+= attributes &* (26 &+ 40 &+ 2 &+ 4) &+ valueBytes / 3 &* 4 &+ 4
            }
        }
        return bytes &+ keys &* item
    }

    /// At least the bytes of ``write(_:key:options:)`` for `r` at the current nesting level.
    static func bound(_ r: AppReceipt, key name: String?, options: ReceiptJSONOptions, indent: Int, level: Int) -> Int {
        let f = r.box.fields
        let item = 2 &+ (indent > 0 ? 2 &+ (max(0, level) &+ 6) &* indent : 0)
        var bytes = 64 &+ (name.map(Self.stringBound) ?? 0) &+ 8 &* item
        for text in [f.receiptType, f.bundleIdentifier, f.appVersion, f.originalAppVersion, f.ageRating] {
            if let text { bytes &+= 32 &+ Self.stringBound(text) &+ item }
        }
        bytes &+= 6 &* (32 &+ 22 &+ item)  // numbers
        for date in [f.creationDate, options.requestDate, f.originalPurchaseDate, f.expirationDate, f.undocumentedDate8] {
            if let date { bytes &+= Self.dateBound(ReceiptDate.milliseconds(date), keys: 3 &* 32 &+ 7) &+ 3 &* item }
        }
        for data in [f.opaqueValue, f.sha1Hash, f.bundleIdentifierData] {
            if let data { bytes &+= 32 &+ (data.count &+ 2) / 3 &* 4 &+ 2 &+ item }
        }
        bytes &+= f.attributeVersions.count &* (46 &+ item) &+ 64 &* (f.emptyDateMask.nonzeroBitCount &+ 2) &* item / 2
        bytes &+= 32 &+ 2 &* item
        let (attributes, valueBytes) = f.unknown.sizes
        bytes &+= attributes &* (5 &* item &+ 26 &+ 40 &+ 2 &+ 4) &+ valueBytes / 3 &* 4 &+ 4
        f.inAppPurchases.withUnsafeBufferPointer { records in
            for index in records.indices { bytes &+= bound(records[index], options: options, indent: indent, level: level) }
        }
        return bytes
    }

    /// A quoted string with every byte escaped at worst (`\u00XX`).
    static func stringBound(_ text: String) -> Int { 2 &+ 6 &* text.utf8.count }

    /// A date triplet: its keys (`keys`) and values; the date texts have 10 characters for the
    /// years 0001–9999 and at most 27 otherwise (a signed year of up to 20 digits).
    static func dateBound(_ ms: Int64, keys: Int) -> Int {
        let day = ms >= -62_135_596_800_000 && ms <= 253_402_300_799_999 ? 10 : 27
        return keys &+ (2 &+ day &+ 9 &+ 8) &+ 22 &+ (2 &+ day &+ 9 &+ 20)
    }

    /// An array of records under `name`.
    mutating func writeArray(_ name: String, _ records: some Sequence<InAppPurchase>, options: ReceiptJSONOptions) {
        key(text: name)
        byte(UInt8(ascii: "["))
        level &+= 1
        needsComma = false
        for record in records { write(record, options: options) }
        end(UInt8(ascii: "]"))
    }
}
