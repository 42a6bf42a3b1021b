// Value types the store exchanges with a payment queue: products, payments, transactions, downloads.
// They mirror StoreKit's SKProduct, SKPayment, SKPaymentTransaction and SKDownload, as plain Sendable
// values so that they can cross isolation domains freely.

public import Foundation

/// A product on sale, as a products request returns it (the analogue of `SKProduct`).
public struct Product: Sendable, Hashable, Codable {
    /// What kind of in-app purchase the product is.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Bought, used up, and bought again (coins, lives).
        case consumable
        /// Bought once and kept forever; restorable.
        case nonConsumable
        /// A subscription that renews itself each period until cancelled; restorable.
        case autoRenewableSubscription
        /// A subscription for a fixed time that does not renew; not restorable by the queue.
        case nonRenewingSubscription
    }

    /// The product identifier, as configured in the store.
    public var identifier: String
    /// The name shown to the user, in the storefront's language.
    public var localizedTitle: String
    /// The description shown to the user, in the storefront's language.
    public var localizedDescription: String
    /// The price in the storefront's currency.
    public var price: Decimal
    /// The locale whose currency the price is in (for example `en_US`, `fr_FR`).
    public var priceLocaleIdentifier: String
    /// The kind of purchase.
    public var kind: Kind
    /// The renewal period of an auto-renewable subscription, or `nil`.
    public var subscriptionPeriod: SubscriptionPeriod?
    /// Whether the store hosts downloadable content for this product.
    public var isDownloadable: Bool
    /// The size in bytes of each hosted content package (empty when not downloadable).
    public var downloadContentLengths: [Int64]
    /// The version of the hosted content, when downloadable.
    public var downloadContentVersion: String?

    /// Creates a product.
    public init(
        identifier: String,
        localizedTitle: String = "",
        localizedDescription: String = "",
        price: Decimal,
        priceLocaleIdentifier: String = "en_US",
        kind: Kind = .nonConsumable,
        subscriptionPeriod: SubscriptionPeriod? = nil,
        isDownloadable: Bool = false,
        downloadContentLengths: [Int64] = [],
        downloadContentVersion: String? = nil
    ) {
        self.identifier = identifier
        self.localizedTitle = localizedTitle
        self.localizedDescription = localizedDescription
        self.price = price
        self.priceLocaleIdentifier = priceLocaleIdentifier
        self.kind = kind
        self.subscriptionPeriod = subscriptionPeriod
        self.isDownloadable = isDownloadable
        self.downloadContentLengths = downloadContentLengths
        self.downloadContentVersion = downloadContentVersion
    }
}

/// The length of one subscription period, as ISO 8601 writes it (`P1M`, `P1W`, `P3D`, `P1Y`).
public struct SubscriptionPeriod: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The calendar unit of a period.
    public enum Unit: String, Sendable, Hashable, Codable {
        case day, week, month, year
    }

    /// How many units one period lasts (at least 1).
    public var value: Int
    /// The unit.
    public var unit: Unit

    /// Creates a period of `value` units.
    public init(value: Int, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// Parses an ISO 8601 duration with a single component (`P1M`, `P2W`, `P3D`, `P1Y`), the form
    /// Xcode's `.storekit` files use. Returns `nil` for anything else.
    public init?(iso8601 text: String) {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count >= 3, scalars.first == "P", let last = scalars.last else { return nil }
        let unit: Unit
        switch last {
        case "D": unit = .day
        case "W": unit = .week
        case "M": unit = .month
        case "Y": unit = .year
        default: return nil
        }
        let digits = String(String.UnicodeScalarView(scalars[1..<(scalars.count - 1)]))
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits), value > 0 else { return nil }
        self.init(value: value, unit: unit)
    }

    /// The ISO 8601 spelling, for example `P1M`.
    public var iso8601: String {
        let letter: String
        switch unit {
        case .day: letter = "D"
        case .week: letter = "W"
        case .month: letter = "M"
        case .year: letter = "Y"
        }
        return "P\(value)\(letter)"
    }

    /// The ISO 8601 form, for example `P1M`.
    public var description: String { iso8601 }

    /// The date one period after `date`, computed in the Gregorian calendar in UTC (so that the
    /// result does not depend on the machine's time zone).
    public func advance(_ date: Date) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        var components = DateComponents()
        switch unit {
        case .day: components.day = value
        case .week: components.day = value * 7
        case .month: components.month = value
        case .year: components.year = value
        }
        return calendar.date(byAdding: components, to: date)
    }
}

/// Identifies one payment, so that callbacks are kept per payment and not per product.
public struct PaymentID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The unique value.
    public let rawValue: UUID

    /// Creates a new, unique payment id.
    public init() { rawValue = UUID() }

    /// Wraps an existing value.
    public init(rawValue: UUID) { self.rawValue = rawValue }

    /// The UUID in its usual upper-case text form.
    public var description: String { rawValue.uuidString }
}

/// A request to buy a product (the analogue of `SKPayment`).
///
/// A queue must hand back the same `id` in every transaction it reports for this payment: that is
/// how the store finds the callbacks of this particular purchase.
public struct Payment: Sendable, Hashable, Identifiable {
    /// The unique id of this payment.
    public let id: PaymentID
    /// The product bought.
    public var productIdentifier: String
    /// How many items (at least 1; more only for consumables).
    public var quantity: Int
    /// An opaque id of the app's user account, used by the store to detect fraud and to restore
    /// only that user's purchases.
    public var applicationUsername: String?

    /// The app account token this payment carries: ``applicationUsername`` when it is a UUID (any
    /// case), else `nil`. The App Store copies such a username into the signed transaction's
    /// `appAccountToken` (lower-cased), as StoreKit 2's `appAccountToken` purchase option does, so a
    /// verifier can check that the signed transaction belongs to this user.
    public var appAccountToken: UUID? {
        applicationUsername.flatMap { UUID(uuidString: $0) }
    }

    /// Creates a payment with a fresh id.
    public init(productIdentifier: String, quantity: Int = 1, applicationUsername: String? = nil, id: PaymentID = PaymentID()) {
        self.id = id
        self.productIdentifier = productIdentifier
        self.quantity = quantity
        self.applicationUsername = applicationUsername
    }
}

/// The state of a payment transaction (the analogue of `SKPaymentTransactionState`).
public enum TransactionState: String, Sendable, Hashable, Codable {
    /// In the queue, being processed.
    case purchasing
    /// Charged; the app must deliver the content and then finish the transaction.
    case purchased
    /// Failed; see the transaction's error. Must be finished too.
    case failed
    /// An earlier purchase, delivered again by a restore.
    case restored
    /// Waiting for an outside action (Ask to Buy); a later update says how it ended.
    case deferred
}

/// The earlier transaction a restored transaction or a subscription renewal refers to.
public struct OriginalTransaction: Sendable, Hashable, Codable {
    /// Its transaction identifier.
    public var identifier: String
    /// Its date.
    public var date: Date?

    /// Creates a reference.
    public init(identifier: String, date: Date?) {
        self.identifier = identifier
        self.date = date
    }
}

/// One transaction reported by a payment queue (the analogue of `SKPaymentTransaction`).
public struct PaymentTransaction: Sendable, Identifiable, CustomStringConvertible {
    /// The transaction identifier. A queue must give every transaction it reports one; App Store
    /// identifiers are decimal strings of about 16 digits.
    public var identifier: String
    /// The current state.
    public var state: TransactionState
    /// The payment this transaction is for (same `id` as the payment that was added).
    public var payment: Payment
    /// When the transaction was added to the store's server.
    public var date: Date?
    /// For restored transactions and renewals: the transaction they derive from.
    public var original: OriginalTransaction?
    /// Why the transaction failed (state `.failed`).
    public var error: (any Error)?
    /// Store-hosted content to download for this transaction.
    public var downloads: [Download]
    /// For auto-renewable subscriptions: when this period ends.
    public var expirationDate: Date?
    /// For auto-renewable subscriptions: the web order line item id. Real values are about 10^15,
    /// so this is 64-bit (RMStore read it through a 32-bit int, Docs/StoreBehaviour.md §8.9).
    public var webOrderLineItemID: Int64?
    /// The legacy per-transaction receipt (iOS 6 `SKPaymentTransaction.transactionReceipt`): the
    /// signed, old-style property list the store attached to this transaction, as raw bytes.
    /// Deprecated by Apple since iOS 7 in favour of the app receipt; `nil` when the queue has none
    /// (the simulated App Store never sets it). Untrusted until a verifier has checked it.
    public var transactionReceipt: Data?
    /// The App Store's signed transaction (StoreKit 2's `jwsRepresentation`): a compact JWS, the
    /// text `header.payload.signature`, whose payload is Apple's `JWSTransaction` JSON for this
    /// purchase (for a restored transaction: the purchase it restores). Kept as the token text
    /// only: the store neither parses nor trusts it, and links no cryptography. Untrusted until a
    /// verifier (`RMStoreVerifiers.JWSTransactionStoreVerifier`) has checked its signature, chain
    /// and contents. `nil` when the queue has none: StoreKit 1 queues, transactions that are not
    /// purchased or restored, a simulated App Store without a JWS issuer.
    public var jwsRepresentation: String?

    /// Creates a transaction value.
    public init(
        identifier: String,
        state: TransactionState,
        payment: Payment,
        date: Date? = nil,
        original: OriginalTransaction? = nil,
        error: (any Error)? = nil,
        downloads: [Download] = [],
        expirationDate: Date? = nil,
        webOrderLineItemID: Int64? = nil,
        transactionReceipt: Data? = nil,
        jwsRepresentation: String? = nil
    ) {
        self.identifier = identifier
        self.state = state
        self.payment = payment
        self.date = date
        self.original = original
        self.error = error
        self.downloads = downloads
        self.expirationDate = expirationDate
        self.webOrderLineItemID = webOrderLineItemID
        self.transactionReceipt = transactionReceipt
        self.jwsRepresentation = jwsRepresentation
    }

    /// The transaction identifier, as `Identifiable` requires.
    public var id: String { identifier }

    /// The product identifier of the payment.
    public var productIdentifier: String { payment.productIdentifier }

    /// `PaymentTransaction(<identifier>, <state>, <product>)`, for logs.
    public var description: String {
        "PaymentTransaction(\(identifier), \(state.rawValue), \(payment.productIdentifier))"
    }
}

/// The state of a store-hosted download (the analogue of `SKDownloadState`).
public enum DownloadState: String, Sendable, Hashable, Codable {
    case waiting, active, paused, finished, failed, cancelled

    /// Whether the download has not settled yet (waiting, active or paused).
    public var isPending: Bool {
        switch self {
        case .waiting, .active, .paused: return true
        case .finished, .failed, .cancelled: return false
        }
    }
}

/// Store-hosted content being downloaded for a transaction (the analogue of `SKDownload`).
public struct Download: Sendable, Identifiable, CustomStringConvertible {
    /// Unique among all downloads of the queue.
    public var id: String
    /// The content package's identifier.
    public var contentIdentifier: String
    /// The transaction this download belongs to.
    public var transactionIdentifier: String
    /// The current state.
    public var state: DownloadState
    /// From 0 to 1.
    public var progress: Double
    /// Estimated seconds left, when known.
    public var timeRemaining: TimeInterval?
    /// Size of the package in bytes.
    public var contentLength: Int64
    /// Version of the package.
    public var contentVersion: String
    /// Where the downloaded content is, once finished.
    public var contentURL: URL?
    /// Why it failed (state `.failed`).
    public var error: (any Error)?

    /// Creates a download value.
    public init(
        id: String,
        contentIdentifier: String,
        transactionIdentifier: String,
        state: DownloadState = .waiting,
        progress: Double = 0,
        timeRemaining: TimeInterval? = nil,
        contentLength: Int64 = 0,
        contentVersion: String = "1.0",
        contentURL: URL? = nil,
        error: (any Error)? = nil
    ) {
        self.id = id
        self.contentIdentifier = contentIdentifier
        self.transactionIdentifier = transactionIdentifier
        self.state = state
        self.progress = progress
        self.timeRemaining = timeRemaining
        self.contentLength = contentLength
        self.contentVersion = contentVersion
        self.contentURL = contentURL
        self.error = error
    }

    /// `Download(<id>, <state>, <progress>)`, for logs.
    public var description: String { "Download(\(id), \(state.rawValue), \(progress))" }
}

/// The answer to a products request.
public struct ProductsResponse: Sendable {
    /// The products found.
    public var products: [Product]
    /// The requested identifiers the store does not know.
    public var invalidProductIdentifiers: [String]

    /// Creates a response.
    public init(products: [Product], invalidProductIdentifiers: [String]) {
        self.products = products
        self.invalidProductIdentifiers = invalidProductIdentifiers
    }
}

/// A transaction that failed, with the reason.
public struct FailedTransaction: Sendable {
    /// The transaction.
    public var transaction: PaymentTransaction
    /// Why it failed.
    public var error: any Error

    /// Creates a value.
    public init(transaction: PaymentTransaction, error: any Error) {
        self.transaction = transaction
        self.error = error
    }
}

/// What a restore produced once every restored transaction settled.
public struct RestoreResult: Sendable {
    /// Transactions that went through the whole pipeline (verified, downloaded, persisted).
    public var restoredTransactions: [PaymentTransaction]
    /// Restored transactions that failed (verification, download or persistence), reported apart
    /// so that a failed restore is never mistaken for a success (Docs/StoreBehaviour.md §8.3, #164).
    public var failedTransactions: [FailedTransaction]

    /// Creates a value.
    public init(restoredTransactions: [PaymentTransaction], failedTransactions: [FailedTransaction]) {
        self.restoredTransactions = restoredTransactions
        self.failedTransactions = failedTransactions
    }
}

/// The failure of a purchase started with the async API.
public struct PurchaseError: Error {
    /// The transaction, when the queue reported one (nil for an unknown product or a task
    /// cancelled before the payment was queued).
    public var transaction: PaymentTransaction?
    /// The reason.
    public var error: any Error

    /// Creates a value.
    public init(transaction: PaymentTransaction?, error: any Error) {
        self.transaction = transaction
        self.error = error
    }
}
