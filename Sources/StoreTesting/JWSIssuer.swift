// The StoreKit 2 seam: the simulated App Store describes each transaction it reports (and each
// subscription's renewal state) to an issuer, which returns the signed JWS that StoreKit 2 would
// hand the app (`jwsRepresentation`) and that the App Store Server sends and serves.
//
// `JWSIssuer` is the real issuer: Apple's payload JSON, signed ES256 with a JWS test PKI.

public import Foundation
import JSON
public import JWS
public import RMStore
public import ReceiptSigning

/// What the simulated App Store signs for one transaction: Apple's `JWSTransaction` fields.
///
/// The identifiers, dates, quantity and product type come from the same ``ReceiptInAppPurchase``
/// the app receipt lists, so the JWS and the receipt agree (the receipt keeps whole seconds, the
/// JWS milliseconds: with a clock on whole seconds, as ``SimulatedClock`` starts, they are equal).
public struct TransactionContents: Sendable, Hashable {
    /// `bundleId`.
    public var bundleIdentifier: String
    /// `transactionId`, `originalTransactionId`, `webOrderLineItemId`, `productId`,
    /// `purchaseDate`, `originalPurchaseDate`, `expiresDate`, `quantity`, `type`, and
    /// `revocationDate` (its cancellation date).
    public var purchase: ReceiptInAppPurchase
    /// `subscriptionGroupIdentifier` (auto-renewable subscriptions).
    public var subscriptionGroupIdentifier: String?
    /// `appAccountToken`, written lower-cased.
    public var appAccountToken: UUID?
    /// `transactionReason`: `PURCHASE` or `RENEWAL`.
    public var transactionReason: TransactionReason
    /// `price`, written in milliunits of ``currency`` (the product's price per item).
    public var price: Decimal?
    /// `currency`, an ISO 4217 code.
    public var currency: String?
    /// `revocationReason`, written with `revocationDate` when the purchase was refunded.
    public var revocationReason: RevocationReason?
    /// `signedDate`: when the App Store signed this JWS.
    public var signedDate: Date

    /// Creates contents.
    public init(
        bundleIdentifier: String, purchase: ReceiptInAppPurchase, subscriptionGroupIdentifier: String? = nil,
        appAccountToken: UUID? = nil, transactionReason: TransactionReason = .purchase, price: Decimal? = nil,
        currency: String? = nil, revocationReason: RevocationReason? = nil, signedDate: Date
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.purchase = purchase
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.appAccountToken = appAccountToken
        self.transactionReason = transactionReason
        self.price = price
        self.currency = currency
        self.revocationReason = revocationReason
        self.signedDate = signedDate
    }
}

/// What the simulated App Store signs for one subscription (one original transaction): Apple's
/// `JWSRenewalInfo` fields.
public struct RenewalInfoContents: Sendable, Hashable {
    /// `originalTransactionId`.
    public var originalTransactionIdentifier: String
    /// `productId`: the product of the current period.
    public var productIdentifier: String
    /// `autoRenewProductId`: the product of the next period.
    public var autoRenewProductIdentifier: String
    /// `autoRenewStatus`.
    public var autoRenewStatus: AutoRenewStatus
    /// `expirationIntent`, once the subscription has expired.
    public var expirationIntent: ExpirationIntent?
    /// `isInBillingRetryPeriod`.
    public var isInBillingRetryPeriod: Bool?
    /// `gracePeriodExpiresDate`: the end of the billing grace period, while in one.
    public var gracePeriodExpiresDate: Date?
    /// `recentSubscriptionStartDate`: the start of the latest run of continuous subscription.
    public var recentSubscriptionStartDate: Date?
    /// `renewalDate`: when the subscription renews (while it renews).
    public var renewalDate: Date?
    /// `renewalPrice`, in milliunits of ``currency``.
    public var renewalPrice: Decimal?
    /// `currency`, an ISO 4217 code.
    public var currency: String?
    /// `appAccountToken`, written lower-cased.
    public var appAccountToken: UUID?
    /// `priceIncreaseStatus`, while a price increase is pending or was accepted.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// `signedDate`.
    public var signedDate: Date

    /// Creates contents.
    public init(
        originalTransactionIdentifier: String, productIdentifier: String, autoRenewProductIdentifier: String? = nil,
        autoRenewStatus: AutoRenewStatus, expirationIntent: ExpirationIntent? = nil, isInBillingRetryPeriod: Bool? = false,
        recentSubscriptionStartDate: Date? = nil, renewalDate: Date? = nil, renewalPrice: Decimal? = nil, currency: String? = nil,
        appAccountToken: UUID? = nil, gracePeriodExpiresDate: Date? = nil, signedDate: Date,
        priceIncreaseStatus: PriceIncreaseStatus? = nil
    ) {
        self.priceIncreaseStatus = priceIncreaseStatus
        self.originalTransactionIdentifier = originalTransactionIdentifier
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.productIdentifier = productIdentifier
        self.autoRenewProductIdentifier = autoRenewProductIdentifier ?? productIdentifier
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        self.renewalDate = renewalDate
        self.renewalPrice = renewalPrice
        self.currency = currency
        self.appAccountToken = appAccountToken
        self.signedDate = signedDate
    }
}

/// Turns transaction and renewal contents into signed JWS (compact serialisation). The simulated
/// App Store calls it for every transaction it reports as purchased (renewals included) or
/// restored, and when asked for a subscription's signed data. A thrown error is kept in
/// ``SimulatedAppStore/lastJWSError`` and the transaction is reported without a JWS.
///
/// ``JWSIssuer`` signs Apple's payloads with a test PKI; a test may wrap it to sign something
/// else (another transaction, another bundle id) and see the verifier refuse it.
public protocol JWSIssuing: Sendable {
    /// The signed transaction for `contents`.
    func issueTransaction(_ contents: TransactionContents) throws -> String
    /// The signed renewal info for `contents`.
    func issueRenewalInfo(_ contents: RenewalInfoContents) throws -> String
}

/// Why an issuer could not write a payload (a date or price beyond what JSON integers hold here).
public struct JWSIssuingError: Error, Sendable, CustomStringConvertible {
    /// What could not be written.
    public let reason: String

    /// Creates an error.
    public init(_ reason: String) { self.reason = reason }

    /// The reason.
    public var description: String { reason }
}

/// The simulated App Store's real JWS issuer: writes Apple's `JWSTransaction` and
/// `JWSRenewalInfo` JSON (Apple's member names, order and types: identifiers as strings, dates as
/// integer milliseconds, prices in milliunits) and signs it as the App Store does (ES256, `x5c` =
/// leaf, intermediate, root), so the real verifiers check a real signature and chain end to end.
///
/// Give it a PKI shaped like Apple's JWS PKI (`TestPKI.jws()`); a verifier trusts it only when
/// given that PKI's root as an anchor.
public struct JWSIssuer: JWSIssuing {
    /// Signs the payloads (key and `x5c` chain).
    public var signer: JWSSigner
    /// `environment` of every payload (default `Sandbox`, matching the receipts'
    /// `ProductionSandbox` type).
    public var environment: Environment
    /// `storefront`: the three-letter code of the storefront's country or region.
    public var storefront: String
    /// `storefrontId`: Apple's identifier of that storefront (143441 is the United States).
    public var storefrontId: String

    /// Creates an issuer.
    public init(signer: JWSSigner, environment: Environment = .sandbox, storefront: String = "USA", storefrontId: String = "143441") {
        self.signer = signer
        self.environment = environment
        self.storefront = storefront
        self.storefrontId = storefrontId
    }

    /// An issuer signing with `pki`'s leaf, `x5c` = leaf, intermediate, root.
    public init(pki: TestPKI, environment: Environment = .sandbox, storefront: String = "USA", storefrontId: String = "143441") {
        self.init(signer: pki.jwsSigner(), environment: environment, storefront: storefront, storefrontId: storefrontId)
    }

    /// The `JWSTransaction` JSON for `contents` (compact, Apple's member order).
    /// - Throws: ``JWSIssuingError`` when a date or price does not fit in 64-bit milliseconds.
    public func transactionPayload(for contents: TransactionContents) throws(JWSIssuingError) -> [UInt8] {
        let purchase = contents.purchase
        var json = JSONWriter(indent: 0)
        json.beginObject()
        json.string("transactionId", purchase.transactionIdentifier)
        json.string("originalTransactionId", purchase.originalTransactionIdentifier)
        if let webOrder = purchase.webOrderLineItemID { json.string("webOrderLineItemId", String(webOrder)) }
        json.string("bundleId", contents.bundleIdentifier)
        json.string("productId", purchase.productIdentifier)
        if let group = contents.subscriptionGroupIdentifier { json.string("subscriptionGroupIdentifier", group) }
        json.number("purchaseDate", try Self.milliseconds(purchase.purchaseDate, "purchaseDate"))
        json.number("originalPurchaseDate", try Self.milliseconds(purchase.originalPurchaseDate, "originalPurchaseDate"))
        if let expires = purchase.expirationDate { json.number("expiresDate", try Self.milliseconds(expires, "expiresDate")) }
        json.number("quantity", String(purchase.quantity))
        json.string("type", Self.productType(purchase.productType).rawValue)
        if let token = contents.appAccountToken { json.string("appAccountToken", token.uuidString.lowercased()) }
        json.string("inAppOwnershipType", InAppOwnershipType.purchased.rawValue)
        json.number("signedDate", try Self.milliseconds(contents.signedDate, "signedDate"))
        if let revoked = purchase.cancellationDate {
            json.number("revocationReason", String((contents.revocationReason ?? .other).rawValue))
            json.number("revocationDate", try Self.milliseconds(revoked, "revocationDate"))
            json.string("revocationType", RevocationType.refundFull.rawValue)
        }
        json.string("environment", environment.rawValue)
        json.string("transactionReason", contents.transactionReason.rawValue)
        json.string("storefront", storefront)
        json.string("storefrontId", storefrontId)
        if let price = contents.price { json.number("price", try Self.milliunits(price, "price")) }
        if let currency = contents.currency { json.string("currency", currency) }
        json.endObject()
        return json.output
    }

    /// The `JWSRenewalInfo` JSON for `contents` (compact, Apple's member order).
    /// - Throws: ``JWSIssuingError`` when a date or price does not fit in 64-bit milliseconds.
    public func renewalInfoPayload(for contents: RenewalInfoContents) throws(JWSIssuingError) -> [UInt8] {
        var json = JSONWriter(indent: 0)
        json.beginObject()
        if let intent = contents.expirationIntent { json.number("expirationIntent", String(intent.rawValue)) }
        json.string("originalTransactionId", contents.originalTransactionIdentifier)
        json.string("autoRenewProductId", contents.autoRenewProductIdentifier)
        json.string("productId", contents.productIdentifier)
        json.number("autoRenewStatus", String(contents.autoRenewStatus.rawValue))
        if let retrying = contents.isInBillingRetryPeriod { json.bool("isInBillingRetryPeriod", retrying) }
        if let status = contents.priceIncreaseStatus { json.number("priceIncreaseStatus", String(status.rawValue)) }
        if let grace = contents.gracePeriodExpiresDate {
            json.number("gracePeriodExpiresDate", try Self.milliseconds(grace, "gracePeriodExpiresDate"))
        }
        json.number("signedDate", try Self.milliseconds(contents.signedDate, "signedDate"))
        json.string("environment", environment.rawValue)
        if let start = contents.recentSubscriptionStartDate {
            json.number("recentSubscriptionStartDate", try Self.milliseconds(start, "recentSubscriptionStartDate"))
        }
        if let renewal = contents.renewalDate { json.number("renewalDate", try Self.milliseconds(renewal, "renewalDate")) }
        if let price = contents.renewalPrice { json.number("renewalPrice", try Self.milliunits(price, "renewalPrice")) }
        if let currency = contents.currency { json.string("currency", currency) }
        if let token = contents.appAccountToken { json.string("appAccountToken", token.uuidString.lowercased()) }
        json.endObject()
        return json.output
    }

    /// The signed transaction.
    public func issueTransaction(_ contents: TransactionContents) throws -> String {
        try signer.sign(payload: try transactionPayload(for: contents))
    }

    /// The signed renewal info.
    public func issueRenewalInfo(_ contents: RenewalInfoContents) throws -> String {
        try signer.sign(payload: try renewalInfoPayload(for: contents))
    }

    /// Apple's `type` for a product kind.
    public static func productType(_ kind: Product.Kind) -> ProductType {
        switch kind {
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        case .autoRenewableSubscription: .autoRenewableSubscription
        case .nonRenewingSubscription: .nonRenewingSubscription
        }
    }

    /// Integer milliseconds since 1970, rounded to the nearest.
    static func milliseconds(_ date: Date, _ field: String) throws(JWSIssuingError) -> String {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard let integer = Int64(exactly: value), abs(value) <= JWSDate.maximumMagnitude else {
            throw JWSIssuingError("\(field) \(date) is out of range")
        }
        return String(integer)
    }

    /// `price × 1000` rounded to an integer, as Apple writes prices.
    static func milliunits(_ price: Decimal, _ field: String) throws(JWSIssuingError) -> String {
        var scaled = price * 1000
        var rounded = Decimal()
        NSDecimalRound(&rounded, &scaled, 0, .plain)
        guard let integer = Int64(rounded.description) else {
            throw JWSIssuingError("\(field) \(price) does not fit in 64-bit milliunits")
        }
        return String(integer)
    }

    /// The ISO 4217 currency of a locale identifier such as `en_US` or `fr_FR`, when known.
    public static func currency(ofLocale identifier: String) -> String? {
        Locale(identifier: identifier).currency?.identifier
    }
}
