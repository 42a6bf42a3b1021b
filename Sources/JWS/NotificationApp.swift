/// The app and environment a notification is about, named the same way by its ``NotificationData``,
/// ``NotificationSummary`` and ``AppData``.
///
/// Decoding verifies nothing (see ``JWSPayload``).
public protocol NotificationApp: JWSPayloadObject {
    /// The app's Apple identifier (absent in sandbox and early notifications). (`appAppleId`)
    var appAppleId: Int64? { get }
    /// The app's bundle identifier. (`bundleId`)
    var bundleId: String? { get }
    /// The environment of the notification (of the extension request, in a summary).
    /// (`environment`)
    var environment: Environment? { get }
}

/// The field table of a ``NotificationApp`` model: its cases of the shared fields are these.
protocol NotificationAppField: TypedPayloadField {
    static var appAppleId: Self { get }
    static var bundleId: Self { get }
    static var environment: Self { get }
}

/// A ``NotificationApp`` kept as ``PayloadFields``: the shared fields are read once here.
protocol NotificationAppObject: FieldsObject, NotificationApp where Field: NotificationAppField {}

extension NotificationAppObject {
    /// `appAppleId` as read.
    public var appAppleId: Int64? { fields.int64(.appAppleId) }
    /// `bundleId` as read.
    public var bundleId: String? { fields.string(.bundleId) }
    /// `environment` as read.
    public var environment: Environment? { fields.raw(.environment) }
}
