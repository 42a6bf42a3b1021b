public import ReceiptVerification

/// What an endpoint did with one request, as it reports it through an ``OutcomeHook``: enough
/// for a log line and for the metrics, so that neither routes the request again.
///
/// Text from the request (the path, a bundle id or notification type read from an unverified
/// body, a reason quoting input) is attacker-controlled: escape it before it reaches a terminal
/// or a log.
public struct EndpointOutcome: Sendable {
    /// The endpoint that answered.
    public enum Route: String, Sendable {
        /// `POST /verifyReceipt` (``VerifyReceiptEndpoint``).
        case verifyReceipt
        /// App Store Server Notifications V2 (``NotificationsEndpoint``).
        case notifications
        /// Retention Messaging real-time requests (``RetentionEndpoint``).
        case retention
    }

    /// The endpoint that answered.
    public var route: Route
    /// The request's method.
    public var method: String
    /// The request's path.
    public var path: String
    /// The client's address, when known.
    public var remoteAddress: String?
    /// The HTTP status answered.
    public var status: Int
    /// What the endpoint did: a notification's `accepted`, `duplicate`, `rejected` or
    /// `unavailable`; a retention request's `answered`, `noMessage` or `rejected`; verifyReceipt's
    /// JSON status number (`0`, `21002`, …).
    public var outcome: String
    /// A sentence for logs: the notification's UUID and type, or why it was refused.
    public var detail: String
    /// The check that failed, when the request was refused by one.
    public var failedCheck: VerificationCheck.Name?
    /// The bundle id: verified for an accepted notification, read unverified from a refused one.
    public var bundleId: String?
    /// The notification type, verified or read unverified as ``bundleId`` is.
    public var notificationType: String?
    /// The notificationUUID of an accepted or duplicate notification.
    public var notificationUUID: String?
    /// Seconds from an accepted or duplicate notification's signedDate to its receipt.
    public var lagSeconds: Double?

    /// Creates a record.
    public init(
        route: Route, method: String, path: String, remoteAddress: String? = nil, status: Int, outcome: String, detail: String,
        failedCheck: VerificationCheck.Name? = nil, bundleId: String? = nil, notificationType: String? = nil,
        notificationUUID: String? = nil, lagSeconds: Double? = nil
    ) {
        self.route = route
        self.method = method
        self.path = path
        self.remoteAddress = remoteAddress
        self.status = status
        self.outcome = outcome
        self.detail = detail
        self.failedCheck = failedCheck
        self.bundleId = bundleId
        self.notificationType = notificationType
        self.notificationUUID = notificationUUID
        self.lagSeconds = lagSeconds
    }
}

/// Where endpoints report each ``EndpointOutcome``: the metrics (``ServerMetrics/hook``), a log,
/// or both (``+(_:_:)``). Called on the connection's thread after the response is decided.
public struct OutcomeHook: Sendable {
    /// Receives one outcome.
    public let report: @Sendable (EndpointOutcome) -> Void

    /// A hook calling `report`.
    public init(_ report: @escaping @Sendable (EndpointOutcome) -> Void) {
        self.report = report
    }

    /// Both hooks, `lhs` first.
    public static func + (lhs: OutcomeHook, rhs: OutcomeHook) -> OutcomeHook {
        OutcomeHook { outcome in
            lhs.report(outcome)
            rhs.report(outcome)
        }
    }

    /// The hooks given, in order (nil when there is none).
    public static func all(_ hooks: [OutcomeHook?]) -> OutcomeHook? {
        hooks.compactMap { $0 }.reduce(nil) { combined, hook in combined.map { $0 + hook } ?? hook }
    }
}
