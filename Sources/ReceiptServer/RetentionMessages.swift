public import Foundation
import JSON

/// Which Retention Messaging message answers a real-time request: one per product, and a default
/// for every other product. Read from `receipt-tool serve --retention-config FILE.json`:
///
/// ```json
/// {"default": "MESSAGE_ID", "products": {"PRODUCT_ID": "MESSAGE_ID"}}
/// ```
///
/// Message identifiers are the UUIDs the messages were uploaded under (Upload Message). Both
/// members are optional, but one must be given; any other member is refused.
public struct RetentionMessages: Sendable, Hashable {
    /// The message for products without one of their own.
    public var defaultMessage: UUID?
    /// The message per product id.
    public var products: [String: UUID]

    /// Creates a configuration.
    public init(defaultMessage: UUID? = nil, products: [String: UUID] = [:]) {
        self.defaultMessage = defaultMessage
        self.products = products
    }

    /// Reads the JSON form (see the type's documentation).
    /// - Throws: ``ReceiptServerError/Code/invalidConfiguration`` naming what is wrong.
    public init(json bytes: [UInt8]) throws(ReceiptServerError) {
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONValue.parse(bytes)
        } catch {
            throw ReceiptServerError(code: .invalidConfiguration, reason: "the retention configuration is not JSON: \(error)")
        }
        guard case .object(let members) = value else {
            throw ReceiptServerError(
                code: .invalidConfiguration, reason: "the retention configuration is a JSON \(value.kindName), not an object")
        }
        var defaultMessage: UUID?
        var products: [String: UUID] = [:]
        for (name, member) in members {
            switch name {
            case "default":
                defaultMessage = try Self.messageIdentifier(member, at: "default")
            case "products":
                guard case .object(let entries) = member else {
                    throw ReceiptServerError(
                        code: .invalidConfiguration, reason: "\"products\" is a JSON \(member.kindName), not an object")
                }
                for (product, id) in entries {
                    guard !product.isEmpty else {
                        throw ReceiptServerError(code: .invalidConfiguration, reason: "\"products\" has an empty product id")
                    }
                    products[product] = try Self.messageIdentifier(id, at: "products.\(product)")
                }
            default:
                throw ReceiptServerError(
                    code: .invalidConfiguration,
                    reason: "the retention configuration has an unknown member \(JSONValue.string(name).jsonText(indent: 0)) "
                        + "(known: \"default\", \"products\")")
            }
        }
        guard defaultMessage != nil || !products.isEmpty else {
            throw ReceiptServerError(code: .invalidConfiguration, reason: "the retention configuration names no message")
        }
        self.init(defaultMessage: defaultMessage, products: products)
    }

    /// The message for `productId`: its own, or the default.
    public func message(forProduct productId: String?) -> UUID? {
        productId.flatMap { products[$0] } ?? defaultMessage
    }

    static func messageIdentifier(_ value: JSONValue, at path: String) throws(ReceiptServerError) -> UUID {
        guard case .string(let text) = value, let id = UUID(uuidString: text) else {
            throw ReceiptServerError(
                code: .invalidConfiguration,
                reason: "\(path) must be a message identifier (a UUID), not \(value.jsonText(indent: 0).prefix(80))")
        }
        return id
    }
}
