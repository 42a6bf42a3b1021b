import Internals
public import JSON

/// Which products grant which entitlement: the product model a backend configures (`"pro"` is
/// granted by the monthly and yearly subscriptions of a group, `"level-2"` by a non-consumable).
///
/// A product may grant several entitlements and an entitlement may be granted by products of
/// several subscription groups, non-consumables and consumables. Subscription groups need no
/// configuration: the App Store keeps one original transaction id per customer and group (an
/// upgrade or downgrade continues it with a transaction of the new product), which is how the
/// stored notifications tell groups apart (see ``EntitlementAnswer``).
public struct EntitlementMap: Sendable, Hashable {
    /// One entitlement and the products that grant it.
    public struct Entitlement: Sendable, Hashable {
        /// The entitlement's name, as the backend calls it.
        public var name: String
        /// The product ids that grant it (each once, in configured order).
        public var productIds: [String]

        /// Creates an entitlement.
        public init(name: String, productIds: [String]) {
            self.name = name
            self.productIds = productIds
        }
    }

    /// The entitlements in configured order, each name once.
    public let entitlements: [Entitlement]

    /// A map of `entitlements`.
    /// - Throws: ``NotificationStoreError/Code/invalidConfiguration`` when there is none, a name is
    ///   empty or repeated, an entitlement has no product, or a product id is empty or repeated
    ///   within one entitlement.
    public init(_ entitlements: [Entitlement]) throws(NotificationStoreError) {
        guard !entitlements.isEmpty else { throw Self.invalid("no entitlement is configured") }
        var names = Set<String>()
        for entitlement in entitlements {
            let name = Self.quoted(entitlement.name)
            guard !entitlement.name.isEmpty else { throw Self.invalid("an entitlement has an empty name") }
            guard names.insert(entitlement.name).inserted else { throw Self.invalid("entitlement \(name) is configured twice") }
            guard !entitlement.productIds.isEmpty else { throw Self.invalid("entitlement \(name) has no product") }
            guard !entitlement.productIds.contains("") else { throw Self.invalid("entitlement \(name) has an empty product id") }
            guard Set(entitlement.productIds).count == entitlement.productIds.count else {
                throw Self.invalid("entitlement \(name) lists a product twice")
            }
        }
        self.entitlements = entitlements
    }

    /// The map of a JSON object `{"ENTITLEMENT": ["PRODUCT_ID", …], …}` (the `entitlements` of an
    /// app in the configuration file), in member order.
    /// - Throws: ``NotificationStoreError/Code/invalidConfiguration`` when it has another shape
    ///   (a value that is not an array of strings) or breaks the rules of ``init(_:)``.
    public init(json: JSONValue) throws(NotificationStoreError) {
        guard let members = json.objectValue else {
            throw Self.invalid("entitlements must be an object of entitlement names to product id arrays, found \(json.kindName)")
        }
        var entitlements: [Entitlement] = []
        for (name, value) in members {
            guard let items = value.arrayValue else {
                throw Self.invalid("entitlement \(Self.quoted(name)) must be an array of product ids, found \(value.kindName)")
            }
            var products: [String] = []
            for item in items {
                guard let product = item.stringValue else {
                    throw Self.invalid("entitlement \(Self.quoted(name)) lists a \(item.kindName), not a product id string")
                }
                products.append(product)
            }
            entitlements.append(Entitlement(name: name, productIds: products))
        }
        try self.init(entitlements)
    }

    /// The map of command-line definitions `NAME=PRODUCT_ID[,PRODUCT_ID…]`, in order.
    /// - Throws: ``NotificationStoreError/Code/invalidConfiguration`` when a definition lacks `=`
    ///   or breaks the rules of ``init(_:)``.
    public init(definitions: [String]) throws(NotificationStoreError) {
        var entitlements: [Entitlement] = []
        for definition in definitions {
            guard let equals = definition.firstIndex(of: "=") else {
                throw Self.invalid("\(Self.quoted(definition)) is not NAME=PRODUCT_ID[,PRODUCT_ID…]")
            }
            let products = definition[definition.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
            entitlements.append(Entitlement(name: String(definition[..<equals]), productIds: products.map(String.init)))
        }
        try self.init(entitlements)
    }

    static func invalid(_ reason: String) -> NotificationStoreError { NotificationStoreError(.invalidConfiguration, reason) }

    /// `text` in quotes, with quotes, backslashes and control characters escaped (it may come
    /// from a file or a command line and reaches a terminal).
    static func quoted(_ text: String) -> String { TerminalEscaping.quoted(text) }
}
