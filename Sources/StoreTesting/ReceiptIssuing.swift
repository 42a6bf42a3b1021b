// The receipt seam: the simulated App Store hands its app's transaction history to an issuer after
// every purchase and on refresh, and writes the bytes it returns to the app's receipt file.
//
// `SignedReceiptIssuer` (SignedReceiptIssuer.swift) is the real issuer: a PKCS#7 receipt signed
// with a test PKI. The JSON issuer below is for the store's own tests only.

public import Foundation
public import RMStore

/// One in-app purchase as an App Store receipt lists it (receipt fields 1701–1712).
public struct ReceiptInAppPurchase: Sendable, Hashable, Codable {
    /// 1702
    public var productIdentifier: String
    /// 1703
    public var transactionIdentifier: String
    /// 1705: the same for every renewal of a subscription.
    public var originalTransactionIdentifier: String
    /// 1704
    public var purchaseDate: Date
    /// 1706
    public var originalPurchaseDate: Date
    /// 1708 (auto-renewables only)
    public var expirationDate: Date?
    /// 1712 (refunds)
    public var cancellationDate: Date?
    /// 1701
    public var quantity: Int
    /// 1711, 64-bit (auto-renewables only)
    public var webOrderLineItemID: Int64?
    /// What kind of product it is.
    public var productType: Product.Kind

    /// Creates a value.
    public init(
        productIdentifier: String,
        transactionIdentifier: String,
        originalTransactionIdentifier: String,
        purchaseDate: Date,
        originalPurchaseDate: Date,
        expirationDate: Date? = nil,
        cancellationDate: Date? = nil,
        quantity: Int = 1,
        webOrderLineItemID: Int64? = nil,
        productType: Product.Kind
    ) {
        self.productIdentifier = productIdentifier
        self.transactionIdentifier = transactionIdentifier
        self.originalTransactionIdentifier = originalTransactionIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expirationDate = expirationDate
        self.cancellationDate = cancellationDate
        self.quantity = quantity
        self.webOrderLineItemID = webOrderLineItemID
        self.productType = productType
    }
}

/// Everything an issuer needs to build an app receipt.
public struct ReceiptContents: Sendable, Hashable, Codable {
    /// Field 2.
    public var bundleIdentifier: String
    /// Field 3.
    public var appVersion: String
    /// Field 19.
    public var originalApplicationVersion: String
    /// Field 12: when the receipt was issued (the simulated clock's time).
    public var creationDate: Date
    /// Where the receipt will be written.
    public var receiptURL: URL
    /// Field 17, in purchase order. Like the App Store, finished consumables are left out.
    public var inAppPurchases: [ReceiptInAppPurchase]

    /// Creates a value.
    public init(
        bundleIdentifier: String,
        appVersion: String,
        originalApplicationVersion: String,
        creationDate: Date,
        receiptURL: URL,
        inAppPurchases: [ReceiptInAppPurchase]
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.appVersion = appVersion
        self.originalApplicationVersion = originalApplicationVersion
        self.creationDate = creationDate
        self.receiptURL = receiptURL
        self.inAppPurchases = inAppPurchases
    }
}

/// Turns receipt contents into receipt bytes. The simulated App Store calls it after every
/// purchase (including renewals) and on every refresh, and writes the result atomically to
/// `contents.receiptURL`. A thrown error fails a refresh; after a purchase it is kept in
/// `SimulatedAppStore.lastReceiptError` and the purchase goes on.
///
/// ``SignedReceiptIssuer`` signs PKCS#7 receipts with a test PKI, so that real verifiers check
/// real signatures end to end.
public protocol ReceiptIssuing: Sendable {
    /// The bytes of the receipt for `contents`.
    func issueReceipt(for contents: ReceiptContents) throws -> Data
}

/// **For tests only**: writes the receipt contents as plain, unsigned JSON. Nothing can verify
/// it; it exists so that the store's tests can see what the simulated App Store would put in a
/// receipt, and when.
public struct JSONReceiptIssuerForTests: ReceiptIssuing {
    /// Creates the issuer.
    public init() {}

    /// `contents` as pretty-printed JSON with sorted keys and ISO 8601 dates; read it back with
    /// ``decode(_:)``.
    public func issueReceipt(for contents: ReceiptContents) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(contents)
    }

    /// Reads back what `issueReceipt(for:)` wrote.
    public static func decode(_ data: Data) throws -> ReceiptContents {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(ReceiptContents.self, from: data)
    }
}
