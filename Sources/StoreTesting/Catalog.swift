// The simulated App Store's product catalog: built in code or read from an Xcode `.storekit`
// configuration file.

public import Foundation
public import RMStore

/// How a simulated store-hosted download ends.
public enum DownloadOutcome: Sendable {
    /// The content is written to disk and the download finishes.
    case finished
    /// The download fails with this error.
    case failed(any Error)
    /// The system cancels the download.
    case cancelled
}

/// A store-hosted content package of a simulated product.
public struct SimulatedDownloadContent: Sendable {
    /// The package identifier.
    public var contentIdentifier: String
    /// The package version.
    public var contentVersion: String
    /// The name of the file written under the download's content directory.
    public var fileName: String
    /// The bytes delivered.
    public var payload: Data
    /// Progress values (between 0 and 1) reported, one event each, before the outcome.
    public var progressSteps: [Double]
    /// How the download ends.
    public var outcome: DownloadOutcome

    /// Creates a package.
    public init(
        contentIdentifier: String,
        contentVersion: String = "1.0",
        fileName: String = "content.bin",
        payload: Data = Data("content".utf8),
        progressSteps: [Double] = [0.5],
        outcome: DownloadOutcome = .finished
    ) {
        self.contentIdentifier = contentIdentifier
        self.contentVersion = contentVersion
        self.fileName = fileName
        self.payload = payload
        self.progressSteps = progressSteps
        self.outcome = outcome
    }
}

/// A product of the simulated App Store, with its hosted content if any.
public struct SimulatedProduct: Sendable {
    /// The product as a products request returns it.
    public var product: Product
    /// Store-hosted content. When non-empty, `product.isDownloadable` and the content lengths
    /// are set from it.
    public var hostedContents: [SimulatedDownloadContent]
    /// The subscription group of an auto-renewable subscription, as signed transactions name it
    /// (`subscriptionGroupIdentifier`). `nil`: see ``effectiveSubscriptionGroupIdentifier``.
    public var subscriptionGroupIdentifier: String?

    /// Creates a simulated product.
    public init(_ product: Product, hostedContents: [SimulatedDownloadContent] = [], subscriptionGroupIdentifier: String? = nil) {
        var product = product
        if !hostedContents.isEmpty {
            product.isDownloadable = true
            product.downloadContentLengths = hostedContents.map { Int64($0.payload.count) }
            product.downloadContentVersion = hostedContents.first?.contentVersion
        }
        self.product = product
        self.hostedContents = hostedContents
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
    }

    /// The group an auto-renewable subscription belongs to: ``subscriptionGroupIdentifier`` when
    /// set, else a group of its own whose identifier is eight decimal digits derived from the
    /// product identifier (stable from run to run, like App Store Connect's). `nil` for every
    /// other kind of product.
    public var effectiveSubscriptionGroupIdentifier: String? {
        guard product.kind == .autoRenewableSubscription else { return nil }
        if let subscriptionGroupIdentifier { return subscriptionGroupIdentifier }
        // FNV-1a over the identifier's UTF-8, folded into 10000000...99999999.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in product.identifier.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return String(10_000_000 + hash % 90_000_000)
    }
}

/// Why a `.storekit` file could not be read.
public struct StoreKitConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var reason: String

    /// `invalid StoreKit configuration: <reason>`.
    public var description: String { "invalid StoreKit configuration: \(reason)" }
}

/// The products a simulated App Store sells.
public struct StoreCatalog: Sendable {
    /// The products, in catalog order.
    public var products: [SimulatedProduct]
    /// The storefront (for example "USA"), when the configuration names one.
    public var storefront: String?

    /// Creates a catalog.
    public init(products: [SimulatedProduct], storefront: String? = nil) {
        self.products = products
        self.storefront = storefront
    }

    /// Creates a catalog of products without hosted content.
    public init(_ products: [Product]) {
        self.init(products: products.map { SimulatedProduct($0) })
    }

    /// The product with this identifier.
    public func product(_ identifier: String) -> SimulatedProduct? {
        products.first { $0.product.identifier == identifier }
    }

    /// Reads an Xcode StoreKit configuration file (`.storekit`).
    public init(storeKitConfigurationAt url: URL) throws {
        try self.init(storeKitConfiguration: try Data(contentsOf: url))
    }

    /// Reads the JSON of an Xcode StoreKit configuration file.
    ///
    /// Understood: top-level `products` (types `Consumable`, `NonConsumable`),
    /// `nonRenewingSubscriptions` (`NonRenewable`), `subscriptionGroups[].subscriptions`
    /// (`RecurringSubscription`, with `recurringSubscriptionPeriod` such as `P1M`; the group's
    /// `id`, else its `name`, is the ``SimulatedProduct/subscriptionGroupIdentifier``), and
    /// `settings._locale` / `settings._storefront` (or the older `locale` / `storefront`).
    /// For each product: `productID`, `referenceName`, `displayPrice`, `type` and the
    /// `localizations` entry of the configured locale (else the first; else the reference name).
    /// Other keys (offers, family sharing, internal ids) are ignored.
    public init(storeKitConfiguration data: Data) throws {
        let file: ConfigurationFile
        do {
            file = try JSONDecoder().decode(ConfigurationFile.self, from: data)
        } catch {
            throw StoreKitConfigurationError(reason: "not a StoreKit configuration JSON: \(error)")
        }
        let locale = file.settings?.locale ?? "en_US"
        var products: [SimulatedProduct] = []
        for entry in (file.products ?? []) + (file.nonRenewingSubscriptions ?? []) {
            products.append(SimulatedProduct(try entry.product(locale: locale, defaultKind: nil)))
        }
        for group in file.subscriptionGroups ?? [] {
            for entry in group.subscriptions ?? [] {
                products.append(
                    SimulatedProduct(
                        try entry.product(locale: locale, defaultKind: .autoRenewableSubscription),
                        subscriptionGroupIdentifier: group.id ?? group.name))
            }
        }
        var seen: Set<String> = []
        for product in products where !seen.insert(product.product.identifier).inserted {
            throw StoreKitConfigurationError(reason: "duplicate productID \(product.product.identifier)")
        }
        self.init(products: products, storefront: file.settings?.storefront)
    }
}

// MARK: - The .storekit JSON shape (only the fields used)

private struct ConfigurationFile: Decodable {
    var products: [ConfigurationProduct]?
    var nonRenewingSubscriptions: [ConfigurationProduct]?
    var subscriptionGroups: [ConfigurationGroup]?
    var settings: ConfigurationSettings?
}

private struct ConfigurationGroup: Decodable {
    var id: String?
    var name: String?
    var subscriptions: [ConfigurationProduct]?

    private enum CodingKeys: String, CodingKey {
        case id, name, subscriptions
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // Xcode writes the group id as a string; anything else is ignored, not an error.
        id = try? container.decodeIfPresent(String.self, forKey: .id)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        subscriptions = try container.decodeIfPresent([ConfigurationProduct].self, forKey: .subscriptions)
    }
}

private struct ConfigurationSettings: Decodable {
    var locale: String?
    var storefront: String?

    private enum CodingKeys: String, CodingKey {
        case underscoredLocale = "_locale"
        case underscoredStorefront = "_storefront"
        case locale, storefront
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        locale =
            try container.decodeIfPresent(String.self, forKey: .underscoredLocale)
            ?? container.decodeIfPresent(String.self, forKey: .locale)
        storefront =
            try container.decodeIfPresent(String.self, forKey: .underscoredStorefront)
            ?? container.decodeIfPresent(String.self, forKey: .storefront)
    }
}

private struct ConfigurationLocalization: Decodable {
    var description: String?
    var displayName: String?
    var locale: String?
}

private struct ConfigurationProduct: Decodable {
    var productID: String
    var referenceName: String?
    var displayPrice: String?
    var type: String?
    var localizations: [ConfigurationLocalization]?
    var recurringSubscriptionPeriod: String?

    func product(locale: String, defaultKind: Product.Kind?) throws -> Product {
        let kind: Product.Kind
        switch type {
        case "Consumable": kind = .consumable
        case "NonConsumable": kind = .nonConsumable
        case "NonRenewable", "NonRenewingSubscription": kind = .nonRenewingSubscription
        case "RecurringSubscription", "AutoRenewable": kind = .autoRenewableSubscription
        case nil:
            guard let defaultKind else {
                throw StoreKitConfigurationError(reason: "product \(productID) has no type")
            }
            kind = defaultKind
        case let other?:
            throw StoreKitConfigurationError(reason: "product \(productID) has unknown type \(other)")
        }
        guard let priceText = displayPrice,
            let price = Decimal(string: priceText, locale: Locale(identifier: "en_US_POSIX")),
            price >= 0
        else {
            throw StoreKitConfigurationError(reason: "product \(productID) has no valid displayPrice")
        }
        var period: SubscriptionPeriod?
        if kind == .autoRenewableSubscription {
            guard let text = recurringSubscriptionPeriod, let parsed = SubscriptionPeriod(iso8601: text) else {
                throw StoreKitConfigurationError(
                    reason: "subscription \(productID) has no valid recurringSubscriptionPeriod"
                )
            }
            period = parsed
        }
        let localization = localizations?.first { $0.locale == locale } ?? localizations?.first
        return Product(
            identifier: productID,
            localizedTitle: localization?.displayName ?? referenceName ?? productID,
            localizedDescription: localization?.description ?? "",
            price: price,
            priceLocaleIdentifier: locale,
            kind: kind,
            subscriptionPeriod: period
        )
    }
}
