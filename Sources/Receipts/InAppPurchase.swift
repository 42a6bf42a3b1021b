public import FoundationEssentials

/// One in-app purchase record of an app receipt (attribute 17), with every field Apple's receipts
/// carry. Absent fields are `nil`; nothing is defaulted.
public struct InAppPurchase: Sendable {
    /// The kind of product (attribute 1707, undocumented): 0 non-consumable, 1 consumable,
    /// 2 non-renewing subscription, 3 auto-renewable subscription. Other values are kept.
    public struct ProductType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The number stored in attribute 1707.
        public var rawValue: Int64
        /// Wraps any number, including values Apple has not used so far.
        public init(rawValue: Int64) { self.rawValue = rawValue }

        /// 0: bought once, kept forever.
        public static let nonConsumable = ProductType(rawValue: 0)
        /// 1: used up and bought again (coins, lives).
        public static let consumable = ProductType(rawValue: 1)
        /// 2: a subscription with a fixed term that the App Store does not renew.
        public static let nonRenewingSubscription = ProductType(rawValue: 2)
        /// 3: a subscription the App Store renews until cancelled; each renewal is its own record.
        public static let autoRenewableSubscription = ProductType(rawValue: 3)

        /// `non-consumable`, `consumable`, `non-renewing subscription`, `auto-renewable subscription`,
        /// or the number for any other value.
        public var description: String {
            switch rawValue {
            case 0: "non-consumable"
            case 1: "consumable"
            case 2: "non-renewing subscription"
            case 3: "auto-renewable subscription"
            default: "type \(rawValue)"
            }
        }
    }

    /// Why a purchase was cancelled (attribute 1720, undocumented by Apple; `cancellation_reason`
    /// in Apple's verifyReceipt answers): 0 for another reason, 1 when the customer cancelled because
    /// of an issue in the app. Other values are kept.
    public struct CancellationReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The INTEGER as encoded.
        public var rawValue: Int64
        /// Wraps a value.
        public init(rawValue: Int64) { self.rawValue = rawValue }

        /// 0: the customer cancelled for another reason (for example by accident).
        public static let other = CancellationReason(rawValue: 0)
        /// 1: the customer cancelled because of an actual or perceived issue in the app.
        public static let issueInApp = CancellationReason(rawValue: 1)

        /// `other`, `issue in the app`, or `reason N`.
        public var description: String {
            switch rawValue {
            case 0: "other"
            case 1: "issue in the app"
            default: "reason \(rawValue)"
            }
        }
    }

    // Storage is sized for receipts of thousands of records (104 bytes a record, no allocation of
    // its own in the common case):
    // - dates and numbers are stored unboxed with a presence bit each; small numbers (quantity,
    //   product type, attribute 1722) inline, larger ones in `rare`;
    // - numeric transaction identifiers (every App Store one) as their value, the String made
    //   when asked for; any other text in `rare`;
    // - the product identifier as a String shared by every record of that product (the parser
    //   interns it);
    // - fields most records lack (cancellation, promotional offer, attribute versions, non-numeric
    //   identifiers, large numbers) in one optional box, allocated only by the records that have one;
    // - unknown attributes as a view of the receipt's bytes (see `UnknownAttributes`).
    // The public properties present all of it as optionals. Field order is layout order.
    var purchaseMS: Int64 = 0
    var originalPurchaseMS: Int64 = 0
    var expiresMS: Int64 = 0
    var webOrderLineItemIDValue: Int64 = 0
    /// The value of a numeric transaction identifier (when `.transactionID` and not `.transactionIDText`).
    var transactionNumber: UInt64 = 0
    /// The value of a numeric original transaction identifier.
    var originalTransactionNumber: UInt64 = 0
    var quantityValue: Int32 = 0
    var present: Present = []
    /// Bit n: attribute type 1701 + n was present with an empty date string.
    var emptyDateMask: UInt16 = 0
    var productTypeValue: Int8 = 0
    var undocumented1722Value: Int8 = 0
    /// How many unknown attributes the record has and their value bytes together (for sizing
    /// JSON output without walking them), in what would otherwise be padding; `unknownCountHint`
    /// `.max` means "not recorded". Not part of the value: equality ignores it.
    var unknownCountHint: UInt16 = 0
    var unknownBytesHint: UInt16 = 0
    var storedProductIdentifier: String?
    var unknown: UnknownAttributes = .none
    var rare: Rare?

    struct Present: OptionSet, Sendable, Hashable {
        let rawValue: UInt32
        static let quantity = Present(rawValue: 1 << 0)
        static let productType = Present(rawValue: 1 << 1)
        static let webOrderLineItemID = Present(rawValue: 1 << 2)
        static let undocumented1722 = Present(rawValue: 1 << 3)
        static let purchaseDate = Present(rawValue: 1 << 4)
        static let originalPurchaseDate = Present(rawValue: 1 << 5)
        static let expiresDate = Present(rawValue: 1 << 6)
        static let cancellationDate = Present(rawValue: 1 << 7)
        static let trial = Present(rawValue: 1 << 8)
        static let trialValue = Present(rawValue: 1 << 9)
        static let intro = Present(rawValue: 1 << 10)
        static let introValue = Present(rawValue: 1 << 11)
        static let cancellationReason = Present(rawValue: 1 << 12)
        static let transactionID = Present(rawValue: 1 << 13)
        static let originalTransactionID = Present(rawValue: 1 << 14)
        /// The transaction identifier is not numeric: its text is in `rare`.
        static let transactionIDText = Present(rawValue: 1 << 15)
        /// The original transaction identifier is not numeric: its text is in `rare`.
        static let originalTransactionIDText = Present(rawValue: 1 << 16)
        /// The quantity does not fit 32 bits: it is in `rare`.
        static let quantityInRare = Present(rawValue: 1 << 17)
        /// The product type does not fit 8 bits: it is in `rare`.
        static let productTypeInRare = Present(rawValue: 1 << 18)
        /// Attribute 1722 does not fit 8 bits: it is in `rare`.
        static let undocumented1722InRare = Present(rawValue: 1 << 19)

        @inline(__always)
        mutating func set(_ bit: Present, _ on: Bool) {
            if on { insert(bit) } else { remove(bit) }
        }
    }

    /// The fields most records lack. Immutable: a change replaces the box, and a record whose rare
    /// fields are all unset holds none, so equal records have equal boxes.
    final class Rare: Sendable {
        let fields: RareFields
        init(_ fields: RareFields) { self.fields = fields }
    }

    /// What ``Rare`` holds; each value is meaningful only while its presence bit is set.
    struct RareFields: Sendable, Equatable {
        var cancellationMS: Int64 = 0
        var cancellationReason: Int64 = 0
        var quantity: Int64 = 0
        var productType: Int64 = 0
        var undocumented1722: Int64 = 0
        var promotionalOfferIdentifier: String?
        var transactionText: String?
        var originalTransactionText: String?
        var attributeVersions: [Int: Int] = [:]

        static let empty = RareFields()
    }

    @inline(__always)
    var rareFields: RareFields { rare?.fields ?? .empty }

    /// Changes the rare fields, dropping the box when nothing rare is left.
    @inline(__always)
    mutating func updateRare(_ body: (inout RareFields) -> Void) {
        var fields = rareFields
        body(&fields)
        rare = fields == .empty ? nil : Rare(fields)
    }

    @inline(__always)
    func date(_ bit: Present, _ ms: Int64) -> Date? { present.contains(bit) ? ReceiptDate.date(milliseconds: ms) : nil }

    /// 1701: number of items purchased.
    public var quantity: Int64? {
        get {
            guard present.contains(.quantity) else { return nil }
            return present.contains(.quantityInRare) ? rareFields.quantity : Int64(quantityValue)
        }
        set {
            let small = newValue.flatMap(Int32.init(exactly:))
            quantityValue = small ?? 0
            present.set(.quantity, newValue != nil)
            present.set(.quantityInRare, newValue != nil && small == nil)
            if newValue != nil && small == nil || rare != nil { updateRare { $0.quantity = small == nil ? newValue ?? 0 : 0 } }
        }
    }
    /// 1702: the product identifier.
    public var productIdentifier: String? {
        get { storedProductIdentifier }
        set { storedProductIdentifier = newValue }
    }
    /// 1703: the transaction identifier (`"0"`, `"1"`… in Xcode receipts).
    public var transactionIdentifier: String? {
        get { identifier(.transactionID, .transactionIDText, transactionNumber, rare?.fields.transactionText) }
        set {
            let number = newValue.flatMap(InAppPurchase.numericIdentifier)
            transactionNumber = number ?? 0
            present.set(.transactionID, newValue != nil)
            present.set(.transactionIDText, newValue != nil && number == nil)
            if number == nil && newValue != nil || rare != nil { updateRare { $0.transactionText = number == nil ? newValue : nil } }
        }
    }
    /// 1704: purchase date (for a restore, the restore date; for a renewal, the renewal date).
    public var purchaseDate: Date? {
        get { date(.purchaseDate, purchaseMS) }
        set {
            let value = newValue.map(ReceiptDate.milliseconds)
            purchaseMS = value ?? 0
            present.set(.purchaseDate, value != nil)
        }
    }
    /// 1705: the transaction identifier of the original purchase (shared by a subscription's renewals).
    public var originalTransactionIdentifier: String? {
        get {
            identifier(.originalTransactionID, .originalTransactionIDText, originalTransactionNumber, rare?.fields.originalTransactionText)
        }
        set {
            let number = newValue.flatMap(InAppPurchase.numericIdentifier)
            originalTransactionNumber = number ?? 0
            present.set(.originalTransactionID, newValue != nil)
            present.set(.originalTransactionIDText, newValue != nil && number == nil)
            if number == nil && newValue != nil || rare != nil {
                updateRare { $0.originalTransactionText = number == nil ? newValue : nil }
            }
        }
    }
    /// 1706: the date of the original purchase.
    public var originalPurchaseDate: Date? {
        get { date(.originalPurchaseDate, originalPurchaseMS) }
        set {
            let value = newValue.map(ReceiptDate.milliseconds)
            originalPurchaseMS = value ?? 0
            present.set(.originalPurchaseDate, value != nil)
        }
    }
    /// 1707 (undocumented): the product type.
    public var productType: ProductType? {
        get {
            guard present.contains(.productType) else { return nil }
            return ProductType(rawValue: present.contains(.productTypeInRare) ? rareFields.productType : Int64(productTypeValue))
        }
        set {
            let value = newValue?.rawValue
            let small = value.flatMap(Int8.init(exactly:))
            productTypeValue = small ?? 0
            present.set(.productType, value != nil)
            present.set(.productTypeInRare, value != nil && small == nil)
            if value != nil && small == nil || rare != nil { updateRare { $0.productType = small == nil ? value ?? 0 : 0 } }
        }
    }
    /// 1708: subscription expiration date (absent or empty for other products).
    public var subscriptionExpirationDate: Date? {
        get { date(.expiresDate, expiresMS) }
        set {
            let value = newValue.map(ReceiptDate.milliseconds)
            expiresMS = value ?? 0
            present.set(.expiresDate, value != nil)
        }
    }
    /// 1711: the web order line item id, a 64-bit number.
    public var webOrderLineItemID: Int64? {
        get { present.contains(.webOrderLineItemID) ? webOrderLineItemIDValue : nil }
        set {
            webOrderLineItemIDValue = newValue ?? 0
            present.set(.webOrderLineItemID, newValue != nil)
        }
    }
    /// 1712: when Apple support cancelled (refunded) the transaction; treat as never purchased.
    public var cancellationDate: Date? {
        get { date(.cancellationDate, rareFields.cancellationMS) }
        set {
            let value = newValue.map(ReceiptDate.milliseconds)
            present.set(.cancellationDate, value != nil)
            if value != nil || rare != nil { updateRare { $0.cancellationMS = value ?? 0 } }
        }
    }
    /// 1720 (undocumented): why the purchase was cancelled; present only on records with a
    /// cancellation date.
    public var cancellationReason: CancellationReason? {
        get { present.contains(.cancellationReason) ? CancellationReason(rawValue: rareFields.cancellationReason) : nil }
        set {
            present.set(.cancellationReason, newValue != nil)
            if newValue != nil || rare != nil { updateRare { $0.cancellationReason = newValue?.rawValue ?? 0 } }
        }
    }
    /// 1713: whether the period is a free trial.
    public var isTrialPeriod: Bool? {
        get { present.contains(.trial) ? present.contains(.trialValue) : nil }
        set {
            present.subtract([.trial, .trialValue])
            if let newValue { present.formUnion(newValue ? [.trial, .trialValue] : [.trial]) }
        }
    }
    /// 1719: whether the period is an introductory offer.
    public var isInIntroOfferPeriod: Bool? {
        get { present.contains(.intro) ? present.contains(.introValue) : nil }
        set {
            present.subtract([.intro, .introValue])
            if let newValue { present.formUnion(newValue ? [.intro, .introValue] : [.intro]) }
        }
    }
    /// 1721: the promotional offer identifier.
    public var promotionalOfferIdentifier: String? {
        get { rare?.fields.promotionalOfferIdentifier }
        set { if newValue != nil || rare != nil { updateRare { $0.promotionalOfferIdentifier = newValue } } }
    }
    /// 1722 (undocumented integer, in receipts since 2023).
    public var undocumentedInteger1722: Int64? {
        get {
            guard present.contains(.undocumented1722) else { return nil }
            return present.contains(.undocumented1722InRare) ? rareFields.undocumented1722 : Int64(undocumented1722Value)
        }
        set {
            let small = newValue.flatMap(Int8.init(exactly:))
            undocumented1722Value = small ?? 0
            present.set(.undocumented1722, newValue != nil)
            present.set(.undocumented1722InRare, newValue != nil && small == nil)
            if newValue != nil && small == nil || rare != nil { updateRare { $0.undocumented1722 = small == nil ? newValue ?? 0 : 0 } }
        }
    }

    /// Versions of modelled attributes whose version number is not 1, keyed by attribute type.
    public var attributeVersions: [Int: Int] {
        get { rare?.fields.attributeVersions ?? [:] }
        set { if !newValue.isEmpty || rare != nil { updateRare { $0.attributeVersions = newValue } } }
    }

    /// Date attributes present with an empty string (1708 and 1712 in most App Store records),
    /// reported as `nil` by the date properties; kept so re-encoding distinguishes empty from absent.
    public var emptyDateAttributeTypes: Set<Int> {
        get { Set((0..<16).filter { emptyDateMask & (1 << UInt16($0)) != 0 }.map { $0 + 1701 }) }
        set {
            emptyDateMask = newValue.reduce(0) { mask, type in
                let slot = type - 1701
                return slot >= 0 && slot < 16 ? mask | 1 << UInt16(slot) : mask
            }
        }
    }

    /// Attributes of this record whose type is not modelled above (1709, 1710, 1714–1718 in real
    /// receipts), kept as encoded.
    public var unknownAttributes: [ReceiptAttribute] {
        get { unknown.list }
        set {
            unknown = newValue.isEmpty ? .none : .explicit(newValue)
            let bytes = newValue.reduce(0) { $0 + $1.value.count }
            let fits = newValue.count < Int(UInt16.max) && bytes <= Int(UInt16.max)
            unknownCountHint = fits ? UInt16(newValue.count) : .max
            unknownBytesHint = fits ? UInt16(bytes) : 0
        }
    }

    /// The number of unknown attributes and their value bytes together.
    var unknownSizes: (count: Int, valueBytes: Int) {
        unknownCountHint == .max ? unknown.sizes : (Int(unknownCountHint), Int(unknownBytesHint))
    }

    /// An empty record; set the fields you need.
    public init() {}

    /// Whether Apple cancelled (refunded) this transaction.
    public var isCancelled: Bool { present.contains(.cancellationDate) }

    // MARK: Identifiers

    /// An identifier's text: the decimal form of its number, or the text kept in `rare`.
    @inline(__always)
    func identifier(_ bit: Present, _ textBit: Present, _ number: UInt64, _ text: String?) -> String? {
        guard present.contains(bit) else { return nil }
        return present.contains(textBit) ? text : String(number)
    }

    /// The value of a canonical decimal identifier (1 to 19 digits, no leading zero unless it is
    /// `0`), which its decimal form gives back exactly; nil for any other text.
    static func numericIdentifier(_ text: String) -> UInt64? {
        var text = text
        return text.withUTF8 { AppReceiptParser.decimalIdentifier(UnsafeRawBufferPointer($0), 0..<$0.count) }
    }

    /// Whether the transaction identifier is `text` (without making the String of a numeric one).
    func hasTransactionIdentifier(_ text: String) -> Bool {
        guard present.contains(.transactionID) else { return false }
        if present.contains(.transactionIDText) { return rare?.fields.transactionText == text }
        return InAppPurchase.numericIdentifier(text) == transactionNumber
    }
}

extension InAppPurchase: Equatable {
    /// Two records are equal when every decoded field, the unknown attributes, the attribute
    /// versions and the record of which dates were present but empty are equal; the bytes the
    /// records were parsed from are not compared.
    public static func == (lhs: InAppPurchase, rhs: InAppPurchase) -> Bool {
        // Every setter stores one canonical form (numbers inline when they fit, numeric identifiers
        // as numbers, no box without a rare field, zero for absent values), so equal values have
        // equal storage.
        lhs.present == rhs.present && lhs.emptyDateMask == rhs.emptyDateMask && lhs.purchaseMS == rhs.purchaseMS
            && lhs.originalPurchaseMS == rhs.originalPurchaseMS && lhs.expiresMS == rhs.expiresMS
            && lhs.webOrderLineItemIDValue == rhs.webOrderLineItemIDValue && lhs.transactionNumber == rhs.transactionNumber
            && lhs.originalTransactionNumber == rhs.originalTransactionNumber && lhs.quantityValue == rhs.quantityValue
            && lhs.productTypeValue == rhs.productTypeValue && lhs.undocumented1722Value == rhs.undocumented1722Value
            && lhs.storedProductIdentifier == rhs.storedProductIdentifier && lhs.rareFields == rhs.rareFields
            && lhs.unknownAttributes == rhs.unknownAttributes
    }
}
