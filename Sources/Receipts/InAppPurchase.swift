public import FoundationEssentials

/// One in-app purchase record of an app receipt (attribute 17), with every field Apple's receipts
/// carry. Absent fields are `nil`; nothing is defaulted.
public struct InAppPurchase: Sendable {
    /// The kind of product (attribute 1707, undocumented): 0 non-consumable, 1 consumable,
    /// 2 non-renewing subscription, 3 auto-renewable subscription. Other values are kept.
    public struct ProductType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: Int64
        public init(rawValue: Int64) { self.rawValue = rawValue }

        public static let nonConsumable = ProductType(rawValue: 0)
        public static let consumable = ProductType(rawValue: 1)
        public static let nonRenewingSubscription = ProductType(rawValue: 2)
        public static let autoRenewableSubscription = ProductType(rawValue: 3)

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

    /// 1701: number of items purchased.
    public var quantity: Int64?
    /// 1702: the product identifier.
    public var productIdentifier: String?
    /// 1703: the transaction identifier (`"0"`, `"1"`… in Xcode receipts).
    public var transactionIdentifier: String?
    /// 1704: purchase date (for a restore, the restore date; for a renewal, the renewal date).
    public var purchaseDate: Date?
    /// 1705: the transaction identifier of the original purchase (shared by a subscription's renewals).
    public var originalTransactionIdentifier: String?
    /// 1706: the date of the original purchase.
    public var originalPurchaseDate: Date?
    /// 1707 (undocumented): the product type.
    public var productType: ProductType?
    /// 1708: subscription expiration date (absent or empty for other products).
    public var subscriptionExpirationDate: Date?
    /// 1711: the web order line item id, a 64-bit number.
    public var webOrderLineItemID: Int64?
    /// 1712: when Apple support cancelled (refunded) the transaction; treat as never purchased.
    public var cancellationDate: Date?
    /// 1713: whether the period is a free trial.
    public var isTrialPeriod: Bool?
    /// 1719: whether the period is an introductory offer.
    public var isInIntroOfferPeriod: Bool?
    /// 1721: the promotional offer identifier.
    public var promotionalOfferIdentifier: String?
    /// 1722 (undocumented integer, in receipts since 2023).
    public var undocumentedInteger1722: Int64?

    /// Versions of modelled attributes whose version number is not 1, keyed by attribute type.
    public var attributeVersions: [Int: Int] = [:]

    /// Date attributes present with an empty string (1708 and 1712 in most App Store records),
    /// reported as `nil` by the date properties; kept so re-encoding distinguishes empty from absent.
    public var emptyDateAttributeTypes: Set<Int> {
        get { Set((0..<32).filter { emptyDateMask & (1 << UInt32($0)) != 0 }.map { $0 + 1701 }) }
        set {
            emptyDateMask = newValue.reduce(0) { mask, type in
                let slot = type - 1701
                return slot >= 0 && slot < 32 ? mask | 1 << UInt32(slot) : mask
            }
        }
    }

    /// Bit n: attribute type 1701 + n was present with an empty date string.
    var emptyDateMask: UInt32 = 0

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

    /// Whether this record is an auto-renewable subscription period covering `date`:
    /// purchase date ≤ `date` < expiration date, and not cancelled. A record without an expiration
    /// date never covers a date.
    public func isActiveSubscription(at date: Date) -> Bool {
        guard cancellationDate == nil, let expires = subscriptionExpirationDate, date < expires else { return false }
        if let start = purchaseDate, date < start { return false }
        return true
    }
}

extension InAppPurchase: Equatable {
    public static func == (lhs: InAppPurchase, rhs: InAppPurchase) -> Bool {
        lhs.quantity == rhs.quantity && lhs.productIdentifier == rhs.productIdentifier
            && lhs.transactionIdentifier == rhs.transactionIdentifier && lhs.purchaseDate == rhs.purchaseDate
            && lhs.originalTransactionIdentifier == rhs.originalTransactionIdentifier
            && lhs.originalPurchaseDate == rhs.originalPurchaseDate && lhs.productType == rhs.productType
            && lhs.subscriptionExpirationDate == rhs.subscriptionExpirationDate
            && lhs.webOrderLineItemID == rhs.webOrderLineItemID && lhs.cancellationDate == rhs.cancellationDate
            && lhs.isTrialPeriod == rhs.isTrialPeriod && lhs.isInIntroOfferPeriod == rhs.isInIntroOfferPeriod
            && lhs.promotionalOfferIdentifier == rhs.promotionalOfferIdentifier
            && lhs.undocumentedInteger1722 == rhs.undocumentedInteger1722
            && lhs.unknownAttributes == rhs.unknownAttributes && lhs.attributeVersions == rhs.attributeVersions
            && lhs.emptyDateMask == rhs.emptyDateMask
    }
}
