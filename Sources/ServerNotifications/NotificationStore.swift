public import Foundation

/// Where notifications are kept: SQLite on one machine (``SQLiteNotificationStore``) or
/// PostgreSQL when several receivers share one store (``PostgresNotificationStore``).
///
/// The contract every store keeps:
/// - ``store(_:)`` returns only after the row is committed durably (or was already there): a
///   receiver acknowledges a notification only after that return.
/// - `notificationUUID` is unique in the store, enforced by the store itself (a database
///   constraint), so concurrent deliveries of one notification, from one process or several,
///   keep one row: one of them gets ``NotificationStoreOutcome/stored``, the others
///   ``NotificationStoreOutcome/duplicate``.
/// - Every method is safe to call from many threads at once.
public protocol NotificationStore: Sendable {
    /// Commits `notification` unless a row with its `notificationUUID` exists; returns after the
    /// commit is durable.
    /// - Throws: ``NotificationStoreError`` when the store cannot commit; nothing was acknowledged
    ///   and the sender should retry.
    func store(_ notification: StoredNotification) throws(NotificationStoreError) -> NotificationStoreOutcome
    /// The rows matching `query`, ordered by signed date (``StoredNotification/effectiveSignedDate``),
    /// then by arrival.
    func notifications(_ query: NotificationQuery) throws(NotificationStoreError) -> [StoredNotification]
    /// Whether the store answers now, and what it is.
    func health() -> NotificationStoreHealth
}

extension NotificationStore {
    /// The subscription state derived from every notification of `originalTransactionId` signed at
    /// or before `date` (see ``SubscriptionState``); `nil` when the store has none.
    public func subscriptionState(originalTransactionId: String, at date: Date) throws(NotificationStoreError) -> SubscriptionState? {
        let rows = try notifications(NotificationQuery(originalTransactionId: originalTransactionId))
        return SubscriptionState(originalTransactionId: originalTransactionId, notifications: rows, at: date)
    }
}

/// What ``NotificationStore/store(_:)`` did.
public enum NotificationStoreOutcome: String, Sendable, Hashable {
    /// The row was committed now.
    case stored
    /// A row with the same `notificationUUID` was already committed; nothing was written.
    case duplicate
}

/// Which rows ``NotificationStore/notifications(_:)`` returns; every property left `nil` matches
/// every row.
public struct NotificationQuery: Sendable, Hashable {
    /// Only this `notificationType`.
    public var notificationType: String?
    /// Only this original transaction.
    public var originalTransactionId: String?
    /// Only rows whose signed date (``StoredNotification/effectiveSignedDate``) is at or after
    /// this, in milliseconds since 1970.
    public var signedSince: Int64?
    /// Only this `notificationUUID`.
    public var notificationUUID: String?
    /// At most this many rows (the first ones in order).
    public var limit: Int?

    /// Creates a query.
    public init(
        notificationType: String? = nil, originalTransactionId: String? = nil, signedSince: Int64? = nil, notificationUUID: String? = nil,
        limit: Int? = nil
    ) {
        self.notificationType = notificationType
        self.originalTransactionId = originalTransactionId
        self.signedSince = signedSince
        self.notificationUUID = notificationUUID
        self.limit = limit
    }

    /// Every row.
    public static let all = NotificationQuery()
}

/// Why a store could not do what it was asked.
public struct NotificationStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Sendable, Hashable {
        /// The database could not be opened or reached (a missing file, a refused connection).
        case unavailable
        /// A statement or a commit failed (disk full, I/O error, a lost connection, a timeout).
        case failed
        /// The database holds something this version cannot use (another schema).
        case schema
        /// The location names no store this package has (neither a path nor a PostgreSQL URL).
        case location
    }

    /// The kind of failure.
    public let code: Code
    /// What failed, for people and logs.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `"<code>: <reason>"`.
    public var description: String { "\(code.rawValue): \(reason)" }
}

/// What a store says about itself for `GET /health`.
public struct NotificationStoreHealth: Sendable, Hashable {
    /// `sqlite` or `postgresql`.
    public var kind: String
    /// The file, or `host:port/database` (never a password).
    public var location: String
    /// Whether a trivial query just succeeded.
    public var isAvailable: Bool
    /// Why not, when it is not available.
    public var problem: String?
    /// Commits made by this process since it opened the store (each a durable commit, with
    /// group commit possibly covering several notifications).
    public var commits: Int
    /// Notifications this process committed (new rows) since it opened the store.
    public var storedNotifications: Int

    /// Creates a report.
    public init(kind: String, location: String, isAvailable: Bool, problem: String? = nil, commits: Int = 0, storedNotifications: Int = 0) {
        self.kind = kind
        self.location = location
        self.isAvailable = isAvailable
        self.problem = problem
        self.commits = commits
        self.storedNotifications = storedNotifications
    }
}

/// Opens the store a location names: `postgres://USER@HOST:PORT/DB` (or `postgresql://…`) for
/// PostgreSQL, anything else as the path of a SQLite database file.
public enum NotificationStores {
    /// Whether `location` names a PostgreSQL database.
    public static func isPostgres(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    /// Opens (and, when `create` is true, creates the schema of) the store at `location`.
    /// - Throws: ``NotificationStoreError`` when it cannot be opened.
    public static func open(_ location: String, create: Bool = true) throws(NotificationStoreError) -> any NotificationStore {
        guard !location.isEmpty else { throw NotificationStoreError(.location, "no store location given") }
        if isPostgres(location) {
            return try PostgresNotificationStore(url: location, createSchema: create)
        }
        return try SQLiteNotificationStore(path: location, create: create)
    }
}
