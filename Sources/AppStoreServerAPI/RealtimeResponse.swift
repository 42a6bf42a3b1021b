public import Foundation
public import JSON

/// The answer a Get Retention Message endpoint gives the App Store (Apple's
/// `RealtimeResponseBody`): exactly one of a text message, a switch-plan message or a
/// promotional-offer message.
///
/// ```swift
/// let body = RealtimeResponse.message(messageID).jsonBody
/// // {"message":{"messageIdentifier":"…"}}
/// ```
public enum RealtimeResponse: Sendable, Hashable {
    /// `{"message": {"messageIdentifier"}}`: a text message, with or without an image.
    case message(UUID)
    /// `{"alternateProduct": {"messageIdentifier", "productId", "billingPlanType"?}}`: a
    /// switch-plan message suggesting `productId`.
    case alternateProduct(messageIdentifier: UUID, productId: String, billingPlanType: String? = nil)
    /// `{"promotionalOffer": {"messageIdentifier", "promotionalOfferSignatureV2"}}`: a message with
    /// a promotional offer signed by ``JWSSignatureCreator/promotionalOffer(productID:offerIdentifier:transactionID:)``.
    case promotionalOffer(messageIdentifier: UUID, signatureV2: String)
    /// `{"promotionalOffer": {"messageIdentifier", "promotionalOfferSignatureV1": {…}}}`: a message
    /// with a promotional offer signed the version 1 way (``PromotionalOfferSignatureCreator``).
    case promotionalOfferV1(messageIdentifier: UUID, signature: PromotionalOfferSignatureV1)

    /// The JSON body, UUIDs lower-cased.
    public var jsonBody: [UInt8] { jsonValue.jsonBytes() }

    /// The body as a JSON value.
    public var jsonValue: JSONValue {
        switch self {
        case .message(let id):
            return .object([("message", .object([("messageIdentifier", .string(id.uuidString.lowercased()))]))])
        case .alternateProduct(let id, let productId, let plan):
            var members: [(String, JSONValue)] = [
                ("messageIdentifier", .string(id.uuidString.lowercased())), ("productId", .string(productId)),
            ]
            if let plan { members.append(("billingPlanType", .string(plan))) }
            return .object([("alternateProduct", .object(members))])
        case .promotionalOffer(let id, let signature):
            return .object([
                (
                    "promotionalOffer",
                    .object([
                        ("messageIdentifier", .string(id.uuidString.lowercased())), ("promotionalOfferSignatureV2", .string(signature)),
                    ])
                )
            ])
        case .promotionalOfferV1(let id, let signature):
            return .object([
                (
                    "promotionalOffer",
                    .object([
                        ("messageIdentifier", .string(id.uuidString.lowercased())), ("promotionalOfferSignatureV1", signature.jsonValue),
                    ])
                )
            ])
        }
    }
}

/// A version 1 promotional offer signature as a real-time response carries it (Apple's
/// `PromotionalOfferSignatureV1`).
public struct PromotionalOfferSignatureV1: Sendable, Hashable {
    /// `encodedSignature`: base64 of the DER signature.
    public var encodedSignature: String
    /// `productId`.
    public var productId: String
    /// `nonce`: a lower-cased UUID.
    public var nonce: UUID
    /// `offerId`.
    public var offerId: String
    /// `timestamp`: milliseconds since 1970.
    public var timestamp: Int64
    /// `keyIdentifier`: the subscription key's id.
    public var keyIdentifier: String

    /// Creates a signature value.
    public init(encodedSignature: String, productId: String, nonce: UUID, offerId: String, timestamp: Int64, keyIdentifier: String) {
        self.encodedSignature = encodedSignature
        self.productId = productId
        self.nonce = nonce
        self.offerId = offerId
        self.timestamp = timestamp
        self.keyIdentifier = keyIdentifier
    }

    /// The JSON object, members in Apple's order.
    public var jsonValue: JSONValue {
        .object([
            ("encodedSignature", .string(encodedSignature)), ("productId", .string(productId)),
            ("nonce", .string(nonce.uuidString.lowercased())), ("offerId", .string(offerId)), ("timestamp", .number(String(timestamp))),
            ("keyIdentifier", .string(keyIdentifier)),
        ])
    }
}
