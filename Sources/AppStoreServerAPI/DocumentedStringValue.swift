// Apple's string values with a documented list (`deliveryStatus`, `refundPreference`,
// `headerPosition`, `sendAttemptResult`, …): one shape for all of them, and one refusal of a value
// Apple does not document.

/// A string value Apple documents a list of: any value is kept as it arrived, ``isKnown`` says
/// whether Apple documents it.
public protocol DocumentedStringValue: RawRepresentable, Hashable, Sendable, CustomStringConvertible where RawValue == String {
    /// Every value Apple documents.
    static var known: [Self] { get }
}

extension DocumentedStringValue {
    /// Whether Apple documents the value.
    public var isKnown: Bool { Self.known.contains(self) }
    /// The raw value.
    public var description: String { rawValue }

    /// Refuses a value Apple does not document: `field` names the member, the reason lists the
    /// documented values.
    func requireKnown(field: String) throws(RequestBodyError) {
        guard isKnown else {
            throw RequestBodyError(
                field: field,
                reason: "\(RequestBodyText.quoted(rawValue)) is not one of \(Self.known.map(\.rawValue).joined(separator: ", "))")
        }
    }
}

/// The Retention Messaging values' protocol before every documented string value shared one.
@available(*, deprecated, renamed: "DocumentedStringValue")
public typealias RetentionValue = DocumentedStringValue
