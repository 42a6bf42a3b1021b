import Foundation
public import HTTPServer
public import ServerNotifications

/// A notification store that times each commit into ``ServerMetrics`` (`rmstore_store_commit_seconds`)
/// and otherwise passes every call to the store it wraps, dead letters included.
public struct MeasuredNotificationStore: NotificationStore, DeadLetterStore {
    /// The store that does the work.
    public let base: any NotificationStore
    /// Where commit times go.
    public let metrics: ServerMetrics

    /// Wraps `base`.
    public init(_ base: any NotificationStore, metrics: ServerMetrics) {
        self.base = base
        self.metrics = metrics
    }

    /// The dead letters of ``base``, when it keeps them.
    var deadLetterBase: (any DeadLetterStore)? { NotificationStores.deadLetters(of: base) }

    /// Commits through ``base`` and records how long it took.
    public func store(_ notification: StoredNotification) throws(NotificationStoreError) -> NotificationStoreOutcome {
        let start = ContinuousClock.now
        defer { metrics.recordCommit("notification", seconds: (ContinuousClock.now - start).seconds) }
        return try base.store(notification)
    }

    /// ``base``'s rows.
    public func notifications(_ query: NotificationQuery) throws(NotificationStoreError) -> [StoredNotification] {
        try base.notifications(query)
    }

    /// ``base``'s health.
    public func health() -> NotificationStoreHealth { base.health() }

    /// Closes ``base``.
    public func close() { base.close() }

    /// Keeps through ``base`` and records how long it took.
    public func keep(_ letter: DeadLetter, retention: DeadLetterRetention) throws(NotificationStoreError) -> Int64 {
        guard let deadLetterBase else { throw NotificationStoreError(.unavailable, "the store keeps no dead letters") }
        let start = ContinuousClock.now
        defer { metrics.recordCommit("dead_letter", seconds: (ContinuousClock.now - start).seconds) }
        return try deadLetterBase.keep(letter, retention: retention)
    }

    /// ``base``'s letters.
    public func deadLetters(_ query: DeadLetterQuery) throws(NotificationStoreError) -> [DeadLetter] {
        guard let deadLetterBase else { return [] }
        return try deadLetterBase.deadLetters(query)
    }

    /// Marks through ``base``.
    public func markRetried(id: Int64, notificationUUID: String, at date: Int64) throws(NotificationStoreError) -> Bool {
        guard let deadLetterBase else { throw NotificationStoreError(.unavailable, "the store keeps no dead letters") }
        return try deadLetterBase.markRetried(id: id, notificationUUID: notificationUUID, at: date)
    }

    /// Purges through ``base``.
    public func purgeDeadLetters(before date: Int64?) throws(NotificationStoreError) -> Int {
        guard let deadLetterBase else { return 0 }
        return try deadLetterBase.purgeDeadLetters(before: date)
    }
}

/// An ``HTTPHandler`` that counts every answer of the handler it wraps in
/// `rmstore_http_requests_total`, by route (one of ``ReceiptServerRoutes``' paths, else `other`,
/// so that a client cannot add series by asking for new paths) and status.
public struct MeasuredHandler: HTTPHandler {
    /// The handler that answers.
    public let base: any HTTPHandler
    /// The routes whose paths are labels.
    public let routes: ReceiptServerRoutes
    /// Where counts go.
    public let metrics: ServerMetrics

    /// Wraps `base` (usually `routes` itself, or a logging handler around them).
    public init(_ base: any HTTPHandler, routes: ReceiptServerRoutes, metrics: ServerMetrics) {
        self.base = base
        self.routes = routes
        self.metrics = metrics
    }

    /// Answers with ``base`` and counts the answer.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let response = base.respond(to: request)
        metrics.recordRequest(route: routes.routeLabel(request.path), status: response.status)
        return response
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
