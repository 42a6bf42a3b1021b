public import JSON

/// What every App Store payload model (``JWSTransaction``, ``NotificationPayload``, …) and every
/// object model inside one (``NotificationData``, ``AdvancedCommerceInfo``, …) has: typed fields
/// under Apple's names, and every other member of the JSON kept.
///
/// Decoding verifies nothing (see ``JWSPayload``).
public protocol JWSPayloadModel: Sendable {
    /// The members the model does not type, in document order: names this version does not know,
    /// and known names whose value is `null`. Re-encoded as they were.
    var unknownFields: [(String, JSONValue)] { get }
    /// The value as JSON: the typed fields present, under Apple's names, in the order the model
    /// declares them and with their JSON types (dates as their exact number text), then
    /// ``unknownFields``.
    func jsonValue() -> JSONValue
}

/// A payload whose decoding kept a record of every top-level member it read: the package's own
/// models. Their kind check answers from that record (``fitsKind(at:)``, the names only to
/// describe a mismatch) instead of walking the JSON again (`AppStorePayloadKind.mismatch(decoded:)`);
/// a payload type from outside the package is checked by walking its JSON.
package protocol DecodedMemberNames {
    /// Calls `body` with the name of each top-level member the decoding read: the typed fields
    /// present, in the order the model declares them, then the members kept untyped.
    func forEachDecodedMemberName(_ body: (String) -> Void)
    /// Whether the members the decoding read fit the kind at `index` of the kind tables: none of
    /// the kind's foreign members, and one of its required members when it requires any.
    func fitsKind(at index: Int) -> Bool
}

/// A JSON object inside an App Store payload that has a model of its own (``NotificationData``,
/// ``AdvancedCommerceInfo``, …). It also decodes from JSON text on its own.
public protocol JWSPayloadObject: JWSPayloadModel {
    /// Decodes the object from JSON text on its own (offsets in errors count from its start).
    /// - Throws: ``JWSError`` as ``JWSPayload/init(jsonPayload:limits:)`` does.
    init(json: [UInt8], limits: JWSLimits) throws(JWSError)
}

extension JWSPayloadObject {
    /// Decodes the object from JSON text on its own with the default limits.
    public init(json: [UInt8]) throws(JWSError) {
        try self.init(json: json, limits: .default)
    }
}
