public import FoundationEssentials

/// The signed `purchase-info` of a legacy transaction receipt: an old-style property list of
/// strings describing one transaction.
///
/// Typed properties cover every key seen in real receipts; ``entries`` keeps all of them (and any
/// unknown key) in document order, and ``data`` keeps the exact bytes the signature covers.
/// Dates come from the millisecond keys (`purchase-date-ms`, `original-purchase-date-ms`, and
/// `expires-date`, which is in milliseconds although it has no `-ms` suffix); when a millisecond
/// key is missing, the `… Etc/GMT` text form is used instead.
public struct PurchaseInfo: Sendable, Equatable {
    /// The exact property-list bytes (for a value read from JSON: the text written from its entries).
    public let data: [UInt8]
    /// Every entry in document order, with offsets relative to ``data``.
    public let entries: [OldStylePropertyList.Entry]

    /// `transaction-id`.
    public let transactionIdentifier: String?
    /// `original-transaction-id`.
    public let originalTransactionIdentifier: String?
    /// `product-id`.
    public let productIdentifier: String?
    /// `quantity`.
    public let quantity: Int64?
    /// `bid`: the app's bundle identifier.
    public let bundleIdentifier: String?
    /// `bvrs`: the app's CFBundleVersion at purchase time.
    public let bundleVersion: String?
    /// `item-id`: the App Store item id of the product.
    public let itemID: Int64?
    /// `app-item-id`: the App Store item id of the app (in some verifyReceipt responses).
    public let appItemID: Int64?
    /// `version-external-identifier` (in some verifyReceipt responses).
    public let versionExternalIdentifier: Int64?
    /// `purchase-date-ms` (else `purchase-date`).
    public let purchaseDate: Date?
    /// `original-purchase-date-ms` (else `original-purchase-date`).
    public let originalPurchaseDate: Date?
    /// `expires-date`, milliseconds since 1970 (auto-renewable subscriptions).
    public let expiresDate: Date?
    /// `web-order-line-item-id`, a 64-bit number (auto-renewable subscriptions).
    public let webOrderLineItemID: Int64?
    /// `unique-identifier`: the device's UDID-style identifier.
    public let uniqueIdentifier: String?
    /// `unique-vendor-identifier`: the app's identifierForVendor.
    public let uniqueVendorIdentifier: String?
    /// `is-trial-period` (`"true"`/`"false"`; in some verifyReceipt responses).
    public let isTrialPeriod: Bool?
    /// `is-in-intro-offer-period` (`"true"`/`"false"`; in some verifyReceipt responses).
    public let isInIntroOfferPeriod: Bool?

    /// The keys this type models (typed above, or the redundant date texts).
    public static let knownKeys: Set<String> = [
        "transaction-id", "original-transaction-id", "product-id", "quantity", "bid", "bvrs", "item-id", "app-item-id",
        "version-external-identifier", "purchase-date-ms", "purchase-date", "purchase-date-pst", "original-purchase-date-ms",
        "original-purchase-date", "original-purchase-date-pst", "expires-date", "expires-date-formatted",
        "expires-date-formatted-pst", "web-order-line-item-id", "unique-identifier", "unique-vendor-identifier",
        "is-trial-period", "is-in-intro-offer-period",
    ]

    /// Entries whose key is not in ``knownKeys``, in document order.
    public var unknownEntries: [OldStylePropertyList.Entry] {
        entries.filter { !PurchaseInfo.knownKeys.contains($0.key) }
    }

    /// The string value of `key`, if present and a string.
    public func string(forKey key: String) -> String? {
        entries.first { $0.key == key }?.value.stringValue
    }

    /// Parses decoded purchase-info bytes.
    /// - Throws: ``ReceiptError/Code/malformedTransactionReceipt`` (offsets relative to `data`, reasons
    ///   prefixed with `purchase-info:`) for bad syntax, a non-string value of a known key, or a
    ///   number or date that does not parse.
    public init(data: [UInt8], limits: ReceiptLimits = .default) throws(ReceiptError) {
        let root = try OldStylePropertyList.parse(data, limits: limits, context: "purchase-info: ")
        guard let entries = root.entries else {
            throw ReceiptError.make(.malformedTransactionReceipt, 0, "purchase-info: expected a dictionary, found a \(root.kindName)")
        }
        try self.init(data: data, entries: entries)
    }

    init(data: [UInt8], entries: [OldStylePropertyList.Entry]) throws(ReceiptError) {
        let fields = Fields(entries: entries)
        self.data = data
        self.entries = entries
        transactionIdentifier = try fields.string("transaction-id")
        originalTransactionIdentifier = try fields.string("original-transaction-id")
        productIdentifier = try fields.string("product-id")
        quantity = try fields.integer("quantity")
        bundleIdentifier = try fields.string("bid")
        bundleVersion = try fields.string("bvrs")
        itemID = try fields.integer("item-id")
        appItemID = try fields.integer("app-item-id")
        versionExternalIdentifier = try fields.integer("version-external-identifier")
        purchaseDate = try fields.date(milliseconds: "purchase-date-ms", text: "purchase-date")
        originalPurchaseDate = try fields.date(milliseconds: "original-purchase-date-ms", text: "original-purchase-date")
        expiresDate = try fields.date(milliseconds: "expires-date", text: "expires-date-formatted")
        webOrderLineItemID = try fields.integer("web-order-line-item-id")
        uniqueIdentifier = try fields.string("unique-identifier")
        uniqueVendorIdentifier = try fields.string("unique-vendor-identifier")
        isTrialPeriod = try fields.flag("is-trial-period")
        isInIntroOfferPeriod = try fields.flag("is-in-intro-offer-period")
    }

    /// Builds purchase-info in code from `entries` (written as Apple's layout and parsed back).
    public init(entries: [OldStylePropertyList.Entry]) throws(ReceiptError) {
        try self.init(data: OldStylePropertyList.encode(entries))
    }

    struct Fields {
        let entries: [OldStylePropertyList.Entry]

        func fail(_ entry: OldStylePropertyList.Entry, _ reason: String) -> ReceiptError {
            ReceiptError.make(.malformedTransactionReceipt, entry.valueOffset, "purchase-info: \"\(entry.key)\" \(reason)")
        }

        func entry(_ key: String) -> OldStylePropertyList.Entry? { entries.first { $0.key == key } }

        func text(_ key: String) throws(ReceiptError) -> (String, OldStylePropertyList.Entry)? {
            guard let entry = entry(key) else { return nil }
            guard case .string(let value) = entry.value else { throw fail(entry, "must be a string, found a \(entry.value.kindName)") }
            return (value, entry)
        }

        func string(_ key: String) throws(ReceiptError) -> String? { try text(key)?.0 }

        func integer(_ key: String) throws(ReceiptError) -> Int64? {
            guard let (value, entry) = try text(key) else { return nil }
            guard let number = PurchaseInfo.decimal(value) else {
                throw fail(entry, "must be a decimal 64-bit integer, found \"\(value.prefix(40))\"")
            }
            return number
        }

        func flag(_ key: String) throws(ReceiptError) -> Bool? {
            guard let (value, entry) = try text(key) else { return nil }
            switch value {
            case "true", "1": return true
            case "false", "0": return false
            default: throw fail(entry, "must be \"true\" or \"false\", found \"\(value.prefix(40))\"")
            }
        }

        func date(milliseconds key: String, text textKey: String) throws(ReceiptError) -> Date? {
            if let (value, entry) = try text(key), !value.isEmpty {
                if let ms = PurchaseInfo.decimal(value) { return ReceiptDate.date(milliseconds: ms) }
                if let date = PurchaseInfo.appleGMTDate(value) { return date }
                throw fail(entry, "must be milliseconds since 1970, found \"\(value.prefix(40))\"")
            }
            guard let (value, entry) = try text(textKey), !value.isEmpty else { return nil }
            guard let date = PurchaseInfo.appleGMTDate(value) else {
                throw fail(entry, "must be a date like \"2012-04-30 15:05:55 Etc/GMT\", found \"\(value.prefix(40))\"")
            }
            return date
        }
    }

    /// A decimal integer: an optional `-` and 1–19 ASCII digits that fit in 64 bits.
    static func decimal(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        let digits = bytes.first == UInt8(ascii: "-") ? bytes.dropFirst() : bytes[...]
        guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }

    /// Apple's `YYYY-MM-DD HH:MM:SS Etc/GMT` form.
    static func appleGMTDate(_ text: String) -> Date? {
        let suffix = " Etc/GMT"
        guard text.hasSuffix(suffix), text.utf8.count == 19 + suffix.utf8.count else { return nil }
        let stem = String(text.utf8.prefix(19)).map { $0 + "Z" }
        guard let stem, let date = try? ReceiptDate.parse(stem) else { return nil }
        return date
    }
}
