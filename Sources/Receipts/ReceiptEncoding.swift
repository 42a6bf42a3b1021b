import ASN1
public import FoundationEssentials

/// How ``AppReceipt/encodedPayload(options:)`` lays out a payload.
public struct ReceiptEncodingOptions: Sendable {
    /// How dates are written.
    public enum DateStyle: Sendable, Hashable {
        /// `2020-07-14T19:36:40Z` (App Store receipts).
        case utc
        /// Local time with a `±hhmm` offset, for example `2021-04-03T22:38:45+0300` (older Xcode receipts).
        case offset(minutes: Int)
    }

    /// Sort attribute SETs by encoding as DER requires (App Store receipts); `false` keeps model
    /// order, as Xcode receipts do.
    public var sortAttributes: Bool
    /// How dates are written.
    public var dateStyle: DateStyle
    /// Write an empty string for absent expiration and cancellation dates (1708, 1712) of in-app
    /// records, as real App Store receipts do.
    public var emptyStringsForAbsentDates: Bool

    /// Creates options; the defaults match App Store receipts.
    public init(sortAttributes: Bool = true, dateStyle: DateStyle = .utc, emptyStringsForAbsentDates: Bool = false) {
        self.sortAttributes = sortAttributes
        self.dateStyle = dateStyle
        self.emptyStringsForAbsentDates = emptyStringsForAbsentDates
    }

    /// App Store layout: sorted SETs, UTC dates.
    public static let appStore = ReceiptEncodingOptions()
    /// Xcode layout: receipt order, dates with a `+hhmm` offset.
    public static let xcode = ReceiptEncodingOptions(sortAttributes: false, dateStyle: .offset(minutes: 60))
}

extension ReceiptDate {
    /// A date as receipts store it, in the given style.
    public static func receiptString(_ date: Date, style: ReceiptEncodingOptions.DateStyle) -> String {
        switch style {
        case .utc:
            return rfc3339(date)
        case .offset(let minutes):
            let local = date.addingTimeInterval(TimeInterval(minutes * 60))
            let text = String(rfc3339(local).dropLast())
            let sign = minutes < 0 ? "-" : "+"
            let magnitude = abs(minutes)
            return text + sign + pad(magnitude / 60, 2) + pad(magnitude % 60, 2)
        }
    }
}

extension AppReceipt {
    /// Encodes the receipt's attributes as a payload (a DER SET of attribute SEQUENCEs), the bytes a
    /// PKCS#7 envelope signs. Parsing the result gives back an equal receipt.
    public func encodedPayload(options: ReceiptEncodingOptions = .appStore) -> [UInt8] {
        var encoder = PayloadEncoder(options: options)
        return encoder.encode(self)
    }
}

struct PayloadEncoder {
    let options: ReceiptEncodingOptions

    struct Entry {
        let type: Int
        let version: Int
        let value: [UInt8]
    }

    /// The attributes of one SET in model order: each with the version it was read with (1 when
    /// none was recorded), and an empty IA5String for a date that was read empty.
    struct Entries {
        static let emptyIA5String: [UInt8] = {
            var writer = DERWriter()
            writer.appendIA5String("")
            return writer.bytes
        }()

        let versions: [Int: Int]
        let emptyDates: Set<Int>
        var entries: [Entry] = []

        mutating func add(_ type: Int, _ value: [UInt8]?) {
            if let value = value ?? (emptyDates.contains(type) ? Entries.emptyIA5String : nil) {
                entries.append(Entry(type: type, version: versions[type] ?? 1, value: value))
            }
        }

        mutating func addUnknown(_ attributes: [ReceiptAttribute]) {
            for attribute in attributes {
                entries.append(Entry(type: attribute.type, version: attribute.version, value: Array(attribute.value)))
            }
        }
    }

    mutating func encode(_ receipt: AppReceipt) -> [UInt8] {
        var list = Entries(versions: receipt.attributeVersions, emptyDates: receipt.emptyDateAttributeTypes)
        func add(_ type: Int, _ value: [UInt8]?) { list.add(type, value) }
        add(0, receipt.receiptType.map(utf8))
        add(1, receipt.appItemID.map(integer))
        add(2, receipt.bundleIdentifierData ?? receipt.bundleIdentifier.map(utf8))
        add(3, receipt.appVersion.map(utf8))
        add(4, receipt.opaqueValue)
        add(5, receipt.sha1Hash)
        add(8, receipt.undocumentedDate8.map(date))
        add(10, receipt.ageRating.map(ia5))  // Apple writes the age rating as an IA5String
        add(12, receipt.creationDate.map(date))
        add(13, receipt.undocumentedInteger13.map(integer))
        add(15, receipt.downloadID.map(integer))
        add(16, receipt.versionExternalIdentifier.map(integer))
        add(18, receipt.originalPurchaseDate.map(date))
        add(19, receipt.originalAppVersion.map(utf8))
        add(21, receipt.expirationDate.map(date))
        add(25, receipt.undocumentedInteger25.map(integer))
        list.addUnknown(receipt.unknownAttributes)
        for purchase in receipt.inAppPurchases {
            list.add(17, encode(purchase))
        }
        return set(list.entries)
    }

    func encode(_ purchase: InAppPurchase) -> [UInt8] {
        var list = Entries(versions: purchase.attributeVersions, emptyDates: purchase.emptyDateAttributeTypes)
        func add(_ type: Int, _ value: [UInt8]?) { list.add(type, value) }
        let empty = options.emptyStringsForAbsentDates ? ia5("") : nil
        add(1701, purchase.quantity.map(integer))
        add(1702, purchase.productIdentifier.map(utf8))
        add(1703, purchase.transactionIdentifier.map(utf8))
        add(1704, purchase.purchaseDate.map(date))
        add(1705, purchase.originalTransactionIdentifier.map(utf8))
        add(1706, purchase.originalPurchaseDate.map(date))
        add(1707, purchase.productType.map { integer($0.rawValue) })
        add(1708, purchase.subscriptionExpirationDate.map(date) ?? empty)
        add(1711, purchase.webOrderLineItemID.map(integer))
        add(1712, purchase.cancellationDate.map(date) ?? empty)
        add(1713, purchase.isTrialPeriod.map { integer($0 ? 1 : 0) })
        add(1719, purchase.isInIntroOfferPeriod.map { integer($0 ? 1 : 0) })
        add(1720, purchase.cancellationReason.map { integer($0.rawValue) })
        add(1721, purchase.promotionalOfferIdentifier.map(utf8))
        add(1722, purchase.undocumentedInteger1722.map(integer))
        list.addUnknown(purchase.unknownAttributes)
        return set(list.entries)
    }

    /// The attribute SET: sorted (DER) or in model order (BER, as Xcode writes it).
    func set(_ entries: [Entry]) -> [UInt8] {
        var writer = BERWriter()
        let body: (inout BERWriter) -> Void = { w in
            for entry in entries {
                w.appendSequence { s in
                    s.appendInteger(Int64(entry.type))
                    s.appendInteger(Int64(entry.version))
                    s.appendOctetString(entry.value)
                }
            }
        }
        if options.sortAttributes {
            writer.appendSetOf(body)
        } else {
            writer.appendUnsortedSet(body)
        }
        return writer.bytes
    }

    /// The DER bytes `write` appends to an empty writer.
    func der(_ write: (inout DERWriter) -> Void) -> [UInt8] {
        var writer = DERWriter()
        write(&writer)
        return writer.bytes
    }

    func utf8(_ text: String) -> [UInt8] { der { $0.appendUTF8String(text) } }

    func ia5(_ text: String) -> [UInt8] { der { $0.appendIA5String(text) } }

    func integer(_ value: Int64) -> [UInt8] { der { $0.appendInteger(value) } }

    func date(_ value: Date) -> [UInt8] { ia5(ReceiptDate.receiptString(value, style: options.dateStyle)) }
}
