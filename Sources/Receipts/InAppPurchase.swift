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

    // Storage is compact (a record is about 150 bytes) because receipts hold thousands of them:
    // numbers and dates are stored unboxed with a presence bit each; the public properties below
    // present them as optionals.
    var quantityValue: Int64 = 0
    var productTypeValue: Int64 = 0
    var webOrderLineItemIDValue: Int64 = 0
    var undocumented1722Value: Int64 = 0
    var purchaseMS: Int64 = 0
    var originalPurchaseMS: Int64 = 0
    var expiresMS: Int64 = 0
    var cancellationMS: Int64 = 0
    var cancellationReasonValue: Int64 = 0
    var present: Present = []
    /// Bit n: attribute type 1701 + n was present with an empty date string.
    var emptyDateMask: UInt16 = 0

    struct Present: OptionSet, Sendable, Hashable {
        let rawValue: UInt16
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

        @inline(__always)
        mutating func set(_ bit: Present, _ on: Bool) {
            if on { insert(bit) } else { remove(bit) }
        }
    }

    @inline(__always)
    func int(_ bit: Present, _ value: Int64) -> Int64? { present.contains(bit) ? value : nil }

    @inline(__always)
    func date(_ bit: Present, _ ms: Int64) -> Date? { present.contains(bit) ? ReceiptDate.date(milliseconds: ms) : nil }

    /// 1701: number of items purchased.
    public var quantity: Int64? {
        get { int(.quantity, quantityValue) }
        set {
            let value = newValue
            quantityValue = value ?? 0
            present.set(.quantity, value != nil)
        }
    }
    /// 1702: the product identifier.
    public var productIdentifier: String?
    /// 1703: the transaction identifier (`"0"`, `"1"`… in Xcode receipts).
    public var transactionIdentifier: String?
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
    public var originalTransactionIdentifier: String?
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
        get { int(.productType, productTypeValue).map(ProductType.init(rawValue:)) }
        set {
            let value = newValue?.rawValue
            productTypeValue = value ?? 0
            present.set(.productType, value != nil)
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
        get { int(.webOrderLineItemID, webOrderLineItemIDValue) }
        set {
            let value = newValue
            webOrderLineItemIDValue = value ?? 0
            present.set(.webOrderLineItemID, value != nil)
        }
    }
    /// 1712: when Apple support cancelled (refunded) the transaction; treat as never purchased.
    public var cancellationDate: Date? {
        get { date(.cancellationDate, cancellationMS) }
        set {
            let value = newValue.map(ReceiptDate.milliseconds)
            cancellationMS = value ?? 0
            present.set(.cancellationDate, value != nil)
        }
    }
    /// 1720 (undocumented): why the purchase was cancelled; present only on records with a
    /// cancellation date.
    public var cancellationReason: CancellationReason? {
        get { int(.cancellationReason, cancellationReasonValue).map(CancellationReason.init(rawValue:)) }
        set {
            let value = newValue?.rawValue
            cancellationReasonValue = value ?? 0
            present.set(.cancellationReason, value != nil)
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
    public var promotionalOfferIdentifier: String?
    /// 1722 (undocumented integer, in receipts since 2023).
    public var undocumentedInteger1722: Int64? {
        get { int(.undocumented1722, undocumented1722Value) }
        set {
            let value = newValue
            undocumented1722Value = value ?? 0
            present.set(.undocumented1722, value != nil)
        }
    }

    /// Versions of modelled attributes whose version number is not 1, keyed by attribute type.
    public var attributeVersions: [Int: Int] = [:]

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

    var unknown: UnknownAttributes = .none

    /// Attributes of this record whose type is not modelled above (1709, 1710, 1714–1718 in real
    /// receipts), kept as encoded.
    public var unknownAttributes: [ReceiptAttribute] {
        get { unknown.list }
        set { unknown = newValue.isEmpty ? .none : .explicit(newValue) }
    }

    /// An empty record; set the fields you need.
    public init() {}

    /// Whether Apple cancelled (refunded) this transaction.
    public var isCancelled: Bool { cancellationDate != nil }
}

extension InAppPurchase: Equatable {
    /// Two records are equal when every decoded field, the unknown attributes, the attribute
    /// versions and the record of which dates were present but empty are equal; the bytes the
    /// records were parsed from are not compared.
    public static func == (lhs: InAppPurchase, rhs: InAppPurchase) -> Bool {
        lhs.quantity == rhs.quantity && lhs.productIdentifier == rhs.productIdentifier
            && lhs.transactionIdentifier == rhs.transactionIdentifier && lhs.purchaseDate == rhs.purchaseDate
            && lhs.originalTransactionIdentifier == rhs.originalTransactionIdentifier
            && lhs.originalPurchaseDate == rhs.originalPurchaseDate && lhs.productType == rhs.productType
            && lhs.subscriptionExpirationDate == rhs.subscriptionExpirationDate
            && lhs.webOrderLineItemID == rhs.webOrderLineItemID && lhs.cancellationDate == rhs.cancellationDate
            && lhs.cancellationReason == rhs.cancellationReason
            && lhs.isTrialPeriod == rhs.isTrialPeriod && lhs.isInIntroOfferPeriod == rhs.isInIntroOfferPeriod
            && lhs.promotionalOfferIdentifier == rhs.promotionalOfferIdentifier
            && lhs.undocumentedInteger1722 == rhs.undocumentedInteger1722
            && lhs.unknownAttributes == rhs.unknownAttributes && lhs.attributeVersions == rhs.attributeVersions
            && lhs.emptyDateMask == rhs.emptyDateMask
    }
}
