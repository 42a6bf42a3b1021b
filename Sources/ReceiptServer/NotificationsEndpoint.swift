public import HTTPServer
public import JSON
import ReceiptVerification
public import ServerNotifications
import VerifyReceipt

/// App Store Server Notifications V2 over HTTP: `POST /notifications` (the path is configurable)
/// hands the body to a `NotificationReceiver` and answers from its outcome:
///
/// | status | body | when |
/// |---|---|---|
/// | 200 | `{"status":"accepted","notificationUUID":…}` | verified and committed now |
/// | 200 | `{"status":"duplicate","notificationUUID":…}` | verified; already committed (a retry) |
/// | 400 | `{"status":"rejected","check":…,"reason":…,"retry":false}` | not a notification body, or a forged one: it is not Apple's |
/// | 500 | `{"status":"rejected","check":…,"reason":…,"retry":true}` | a check that may fail because of our configuration (`NotificationRejection.configurationChecks`: an untrusted chain, another bundle id, app Apple id or environment) or an Apple-signed body failing a later check |
/// | 503 | `{"status":"unavailable","reason":…}` | the store could not commit: retry |
///
/// A rejected body is kept as a dead letter when the receiver keeps them (its id is the member
/// `deadLetter`), so that it can be retried once the configuration is fixed. Since March 2026
/// Apple does not retry a notification answered 400; it retries 5xx answers, so a notification
/// we refused by our own mistake comes again. A 200 is given only after the commit. The HTTP
/// layer answers 413 (body too large), 408 (too slow) and the other protocol errors before the
/// receiver sees anything.
public struct NotificationsEndpoint: HTTPHandler {
    /// The path of the notifications route.
    public let path: String
    /// Verifies and stores.
    public let receiver: NotificationReceiver
    /// Where outcomes are counted (nil: nowhere).
    public let metrics: ServerMetrics?
    /// Where every outcome is reported: ``metrics``' hook, then the `report` given (a log).
    public let hook: OutcomeHook?

    /// Creates the endpoint; each outcome is counted in `metrics` and reported to `report`.
    public init(path: String = "/notifications", receiver: NotificationReceiver, metrics: ServerMetrics? = nil, report: OutcomeHook? = nil)
    {
        self.path = path
        self.receiver = receiver
        self.metrics = metrics
        hook = OutcomeHook.all([metrics?.hook, report])
    }

    /// Answers `POST` on ``path`` (405 for another method, 404 for another path).
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        guard request.path == path else { return .text("not found", status: 404) }
        guard request.method == "POST" else { return .text("use POST", status: 405, headers: [HTTPHeader("Allow", "POST")]) }
        return answer(body: request.body, source: request.remoteAddress).response
    }

    /// The outcome for a body (from `source`, kept with a dead letter) and the response that says
    /// it; the outcome is reported to ``hook`` (counted in ``metrics``).
    public func answer(body: [UInt8], source: String? = nil) -> (response: HTTPResponse, outcome: NotificationReceiverOutcome) {
        let outcome = receiver.receive(body: body, source: source)
        var json = JSONWriter(indent: 0)
        json.beginObject()
        json.string("status", outcome.name)
        let status: Int
        switch outcome {
        case .accepted(let row), .duplicate(let row):
            json.string("notificationUUID", row.notificationUUID)
            status = 200
        case .rejected(let rejection):
            json.string("check", rejection.check.rawValue)
            json.string("reason", rejection.reason)
            json.bool("retry", rejection.mayBeOurConfiguration)
            if let id = rejection.deadLetterId { json.number("deadLetter", String(id)) }
            status = rejection.mayBeOurConfiguration ? 500 : 400
        case .unavailable:
            // The store's own message stays in the server's log.
            json.string("reason", "the notification store is unavailable; retry later")
            status = 503
        }
        json.endObject()
        if let hook { hook.report(report(outcome, status: status, body: body, source: source)) }
        return (.json(json.output, status: status), outcome)
    }

    /// The record of one outcome: the verified row's fields, or those read unverified from a
    /// refused body.
    func report(_ outcome: NotificationReceiverOutcome, status: Int, body: [UInt8], source: String?) -> EndpointOutcome {
        var record = EndpointOutcome(
            route: .notifications, method: "POST", path: path, remoteAddress: source, status: status, outcome: outcome.name, detail: "")
        switch outcome {
        case .accepted(let row), .duplicate(let row):
            record.detail = "\(row.notificationUUID) \(row.notificationType ?? "?")\(row.subtype.map { "/\($0)" } ?? "")"
            record.bundleId = row.bundleId
            record.notificationType = row.notificationType
            record.notificationUUID = row.notificationUUID
            record.lagSeconds = row.signedDate.map { max(0, Double(row.receivedDate - $0) / 1000) }
        case .rejected(let rejection):
            let fields = UnverifiedNotificationFields(body: body)
            record.detail = "\(rejection)"
            record.failedCheck = rejection.check
            record.bundleId = fields.bundleId
            record.notificationType = fields.notificationType
        case .unavailable(let error):
            let fields = UnverifiedNotificationFields(body: body)
            record.detail = "\(error)"
            record.bundleId = fields.bundleId
            record.notificationType = fields.notificationType
        }
        return record
    }

    /// The store's part of `GET /health`, as the member `notifications`:
    /// `{"path":…,"store":…,"location":…,"status":"ok"|"unavailable",…}`.
    public func writeHealth(_ health: NotificationStoreHealth, into json: inout JSONWriter) {
        json.beginObject("notifications")
        json.string("path", path)
        json.string("store", health.kind)
        json.string("location", health.location)
        json.string("status", health.isAvailable ? "ok" : "unavailable")
        if let problem = health.problem { json.string("problem", problem) }
        json.number("commits", String(health.commits))
        json.number("stored", String(health.storedNotifications))
        json.endObject()
    }
}

/// Every route of `receipt-tool serve`: verifyReceipt, notifications and retention (when configured) and
/// `GET /health`, which reports the notification store and answers 503 while it is unavailable
/// (so a load balancer stops sending there).
public struct ReceiptServerRoutes: HTTPHandler {
    /// The verifyReceipt endpoint.
    public let verifyReceipt: VerifyReceiptEndpoint
    /// The notifications endpoint, if notifications are received.
    public let notifications: NotificationsEndpoint?
    /// The Retention Messaging real-time endpoint, if real-time requests are answered.
    public let retention: RetentionEndpoint?
    /// The registry `GET /metrics` exposes (nil: no `/metrics` route).
    public let metrics: ServerMetrics?

    /// Creates the routes.
    public init(
        verifyReceipt: VerifyReceiptEndpoint, notifications: NotificationsEndpoint? = nil, retention: RetentionEndpoint? = nil,
        metrics: ServerMetrics? = nil
    ) {
        self.verifyReceipt = verifyReceipt
        self.notifications = notifications
        self.retention = retention
        self.metrics = metrics
    }

    /// The `route` label of a request path: a configured route's path, else `other`.
    public func routeLabel(_ path: String) -> String {
        let known = [verifyReceipt.configuration.path, "/health", notifications?.path, retention?.path, metrics.map { _ in "/metrics" }]
        return known.contains(path) ? path : "other"
    }

    /// Routes by path: the notifications path, the retention path, `/health`, everything else to
    /// verifyReceipt.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        if let notifications, request.path == notifications.path { return notifications.respond(to: request) }
        if let retention, request.path == retention.path { return retention.respond(to: request) }
        if let metrics, request.path == "/metrics" {
            guard request.method == "GET" || request.method == "HEAD" else {
                return .text("use GET", status: 405, headers: [HTTPHeader("Allow", "GET, HEAD")])
            }
            let text = metrics.exposition(storeUp: notifications.map { $0.receiver.store.health().isAvailable })
            return HTTPResponse(
                status: 200, headers: [HTTPHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: Array(text.utf8))
        }
        if request.path == "/health" {
            guard request.method == "GET" || request.method == "HEAD" else {
                return .text("use GET", status: 405, headers: [HTTPHeader("Allow", "GET, HEAD")])
            }
            return health()
        }
        return verifyReceipt.respond(to: request)
    }

    /// `{"status":"ok","environment":…,"notifications":{…}}`; 503 with `"status":"unavailable"`
    /// when the notification store does not answer.
    public func health() -> HTTPResponse {
        let store = notifications?.receiver.store.health()
        let available = store?.isAvailable ?? true
        var json = JSONWriter(indent: 0)
        json.beginObject()
        json.string("status", available ? "ok" : "unavailable")
        json.string("environment", verifyReceipt.configuration.environment.rawValue)
        if let notifications, let store { notifications.writeHealth(store, into: &json) }
        json.endObject()
        return .json(json.output, status: available ? 200 : 503)
    }
}
