public import Foundation
import Internals

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
/// - A value the store cannot keep exactly (text holding U+0000, which PostgreSQL's `text`
///   refuses) is refused by every store the same way, with
///   ``NotificationStoreError/Code/unsupportedValue``, before anything is written.
/// - Every method is safe to call from many threads at once.
public protocol NotificationStore: Sendable {
    /// Commits `notification` unless a row with its `notificationUUID` exists; returns after the
    /// commit is durable.
    /// - Throws: ``NotificationStoreError`` when the store cannot commit; nothing was acknowledged
    ///   and the sender should retry.
    func store(_ notification: StoredNotification) throws(NotificationStoreError) -> NotificationStoreOutcome
    /// The rows matching `query`, ordered by signed date (``StoredNotification/effectiveSignedDate``),
    /// then by `notificationUUID` (byte order), never by arrival, so every store gives one order.
    func notifications(_ query: NotificationQuery) throws(NotificationStoreError) -> [StoredNotification]
    /// Whether a commit would succeed now (a real write round trip, within a short deadline), and
    /// what the store is.
    func health() -> NotificationStoreHealth
    /// Makes everything committed durable in the store's own files and closes its connections
    /// (SQLite: a checkpoint, so that the database file alone holds every row). Later calls of
    /// ``store(_:)`` fail. Safe to call twice.
    func close()
}

extension NotificationStore {
    /// Closes nothing (a store without resources of its own).
    public func close() {}
}

extension NotificationStore {
    /// The subscription state derived from every notification of `originalTransactionId` signed at
    /// or before `date` (see ``SubscriptionState``); `nil` when the store has none.
    public func subscriptionState(originalTransactionId: String, at date: Date) throws(NotificationStoreError) -> SubscriptionState? {
        let rows = try notifications(NotificationQuery(originalTransactionId: originalTransactionId, includesSignedPayload: false))
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
    /// Only rows whose signed transaction has this `transactionId` (not indexed: for lookups
    /// such as finding the original transaction of a transaction id, not for hot paths).
    public var transactionId: String?
    /// Only rows of the original transactions of which some row carries this `appAccountToken`
    /// (compared as ``StoredNotification/accountToken(_:)`` writes it), so that a subscription's
    /// notifications without a transaction come with it. Indexed, as `originalTransactionId` is.
    public var appAccountToken: String?
    /// Whether rows come with their ``StoredNotification/signedPayload`` (the default). A query
    /// that needs only the columns (entitlements, subscription state) says `false`: its rows'
    /// `signedPayload` is empty and a compact row is not rebuilt, which is most of what reading a
    /// row costs. A store may return the payloads anyway.
    public var includesSignedPayload: Bool

    /// Creates a query.
    public init(
        notificationType: String? = nil, originalTransactionId: String? = nil, signedSince: Int64? = nil, notificationUUID: String? = nil,
        limit: Int? = nil, transactionId: String? = nil, appAccountToken: String? = nil, includesSignedPayload: Bool = true
    ) {
        self.includesSignedPayload = includesSignedPayload
        self.notificationType = notificationType
        self.originalTransactionId = originalTransactionId
        self.signedSince = signedSince
        self.notificationUUID = notificationUUID
        self.limit = limit
        self.transactionId = transactionId
        self.appAccountToken = appAccountToken
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
        /// A value the store cannot keep exactly (text holding U+0000); every store refuses it.
        case unsupportedValue
        /// The store was opened read-only, or has been closed.
        case readOnly
        /// A configuration given to the store's queries is invalid (an ``EntitlementMap`` without
        /// entitlements, a repeated name, an entitlement without products).
        case invalidConfiguration
        /// Get Notification History could not be read (the API call failed) during a backfill.
        case historyUnavailable
        /// Get Notification History answered something that is not an answer to the request (a
        /// notification outside the requested range, `hasMore` without a token, a token that
        /// repeats): the backfill stops, nothing of that page stored.
        case historyMismatch
        /// A backfill reached its page or time limit (``NotificationBackfill/Limits``).
        case limitReached
        /// A stored row does not give back the bytes it was given (its rebuilt payload does not
        /// match its SHA-256, a certificate it references is missing or altered, its compact form
        /// is damaged): the database was altered outside the store. Nothing else of the row is
        /// returned.
        case corrupt
    }

    /// The kind of failure.
    public let code: Code
    /// What failed, for people and logs.
    public let reason: String

    /// Creates an error; passwords of a URL or connection string in `reason` are masked.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = Redaction.redacted(reason)
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

/// How ``NotificationStores/open(_:options:)`` opens a store.
public struct NotificationStoreOptions: Sendable, Hashable {
    /// Open for reading only: SQLite opens the file read-only (no journal-mode change, nothing
    /// created, the file's bytes unchanged), PostgreSQL sessions are read-only; ``NotificationStore/store(_:)``
    /// fails with ``NotificationStoreError/Code/readOnly``.
    public var readOnly: Bool
    /// Create the file and the schema when missing (ignored when ``readOnly``).
    public var create: Bool
    /// Open even when the store cannot be written now (a read-only file or directory, a full
    /// disk): the store then reports itself unavailable and retries opening at each commit and
    /// health check, so fixing the cause needs no restart. A location holding another schema is
    /// still refused.
    public var allowUnavailableAtStart: Bool
    /// The deadline of one operation (``NotificationStore/store(_:)``, a query), including waiting
    /// for a pooled connection, connecting and the statement (PostgreSQL), or for a lock (SQLite).
    public var operationTimeout: Duration
    /// The deadline of the write round trip of ``NotificationStore/health()``.
    public var healthTimeout: Duration

    /// Creates options.
    public init(
        readOnly: Bool = false, create: Bool = true, allowUnavailableAtStart: Bool = false, operationTimeout: Duration = .seconds(10),
        healthTimeout: Duration = .seconds(2)
    ) {
        self.readOnly = readOnly
        self.create = create
        self.allowUnavailableAtStart = allowUnavailableAtStart
        self.operationTimeout = operationTimeout
        self.healthTimeout = healthTimeout
    }

    /// For commands that only read: ``readOnly``.
    public static let reading = NotificationStoreOptions(readOnly: true, create: false)
}

extension NotificationStoreOptions {
    /// Refuses a write to the store at `location` (as it may be shown) when it was opened
    /// read-only.
    func requireWritable(_ location: String) throws(NotificationStoreError) {
        guard !readOnly else { throw NotificationStoreError(.readOnly, "\(location) was opened read-only") }
    }

    /// When an operation that starts now must be done (``operationTimeout`` from now).
    func makeOperationDeadline() -> ContinuousClock.Instant { ContinuousClock.now.advanced(by: operationTimeout) }
}

/// Opens the store a location names: `postgres://USER@HOST:PORT/DB` (or `postgresql://…`) for
/// PostgreSQL, anything else as the path of a SQLite database file.
public enum NotificationStores {
    /// Whether `location` names a PostgreSQL database.
    public static func isPostgres(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    /// `location` with every password masked (see ``NotificationStoreError``): what a message or a
    /// log line may say about it.
    public static func displayed(_ location: String) -> String { Redaction.redacted(location) }

    /// Opens (and, when `create` is true, creates the schema of) the store at `location`.
    /// - Throws: ``NotificationStoreError`` when it cannot be opened.
    public static func open(_ location: String, create: Bool = true) throws(NotificationStoreError) -> any NotificationStore {
        try open(location, options: NotificationStoreOptions(create: create))
    }

    /// Opens the store at `location` as `options` say.
    /// - Throws: ``NotificationStoreError`` when it cannot be opened.
    public static func open(_ location: String, options: NotificationStoreOptions) throws(NotificationStoreError) -> any NotificationStore {
        guard !location.isEmpty else { throw NotificationStoreError(.location, "no store location given") }
        if isPostgres(location) {
            return try PostgresNotificationStore(url: location, options: options)
        }
        return try SQLiteNotificationStore(path: location, options: options)
    }
}
