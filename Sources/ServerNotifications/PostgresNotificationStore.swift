import Foundation

/// The shared store: a PostgreSQL database, for several receivers (`serve` instances on one or
/// more machines) that must keep one copy of each notification.
///
/// - **Uniqueness and commit live in the database**: `UNIQUE (notification_uuid)` and
///   `INSERT … ON CONFLICT (notification_uuid) DO NOTHING`, one autocommitted statement per
///   notification; ``store(_:)`` returns after PostgreSQL reports the commit, which with the
///   default `synchronous_commit = on` means its WAL record is flushed. Two instances receiving
///   Apple's retry of one notification at once: the database keeps one row, one of them hears
///   ``NotificationStoreOutcome/stored`` and the other ``NotificationStoreOutcome/duplicate``.
/// - **Group commit** is PostgreSQL's own: one WAL flush covers every commit record written
///   before it, so concurrent commits from many connections share flushes.
/// - **Schema**: created on open with `CREATE … IF NOT EXISTS` inside a transaction holding a
///   transaction-level advisory lock, so any number of instances starting at once on an empty
///   database all come up (they take turns; the first creates, the others find it).
/// - **Connections**: a pool of at most ``maximumConnections`` libpq connections, each lent to one
///   caller at a time. A statement that fails because the connection broke is retried once on a
///   new connection (safe: a retry of a committed insert finds the row and reports a duplicate).
public final class PostgresNotificationStore: NotificationStore, @unchecked Sendable {
    /// `host:port/database` (the URL without user, password or options).
    public let location: String
    /// The most connections open at once.
    public let maximumConnections: Int

    private let pool: PostgresPool
    private let counters = NSLock()
    private var commitCount = 0
    private var storedCount = 0

    /// The schema version this code writes and reads.
    static let schemaVersion = 1

    /// The key of the advisory lock that serialises schema creation (any fixed number; "RMStore" in
    /// ASCII).
    static let schemaLockKey: Int64 = 0x524D_5374_6F72_65

    static let createSchema = """
        CREATE TABLE IF NOT EXISTS notifications (
            id BIGSERIAL PRIMARY KEY,
            notification_uuid TEXT NOT NULL UNIQUE,
            notification_type TEXT,
            subtype TEXT,
            signed_date BIGINT,
            received_date BIGINT NOT NULL,
            bundle_id TEXT,
            environment TEXT,
            app_apple_id BIGINT,
            transaction_id TEXT,
            original_transaction_id TEXT,
            product_id TEXT,
            purchase_date BIGINT,
            expires_date BIGINT,
            revocation_date BIGINT,
            transaction_signed_date BIGINT,
            auto_renew_status BIGINT,
            is_in_billing_retry_period BOOLEAN,
            grace_period_expires_date BIGINT,
            renewal_signed_date BIGINT,
            signed_payload TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS notifications_by_original_transaction ON notifications (original_transaction_id);
        CREATE INDEX IF NOT EXISTS notifications_by_type ON notifications (notification_type);
        CREATE TABLE IF NOT EXISTS notification_store_schema (version INTEGER NOT NULL);
        INSERT INTO notification_store_schema (version)
            SELECT \(schemaVersion) WHERE NOT EXISTS (SELECT 1 FROM notification_store_schema);
        """

    static let insert =
        "INSERT INTO notifications (\(NotificationColumns.list)) VALUES ("
        + (1...NotificationColumns.names.count).map { "$\($0)" }.joined(separator: ", ")
        + ") ON CONFLICT (notification_uuid) DO NOTHING RETURNING id"

    /// Connects to `url` (`postgres://USER@HOST:PORT/DB`, or any libpq connection URI) and, when
    /// `createSchema` is true, creates the schema if it is missing.
    /// - Parameters:
    ///   - connectTimeout: seconds libpq waits for a connection.
    ///   - statementTimeout: milliseconds PostgreSQL lets one statement run.
    /// - Throws: ``NotificationStoreError`` when the database cannot be reached or holds another
    ///   schema version.
    public init(
        url: String, createSchema: Bool = true, maximumConnections: Int = 16, connectTimeout: Int = 5, statementTimeout: Int = 15_000
    ) throws(NotificationStoreError) {
        location = Self.redacted(url)
        self.maximumConnections = maximumConnections
        pool = PostgresPool(
            parameters: [
                ("dbname", url), ("connect_timeout", String(max(1, connectTimeout))), ("application_name", "rmstore-notifications"),
                ("options", "-c statement_timeout=\(max(0, statementTimeout)) -c client_min_messages=warning"),
            ],
            maximumConnections: maximumConnections)
        if createSchema {
            try pool.withConnection { (connection) throws(NotificationStoreError) in
                do throws(NotificationStoreError) {
                    try connection.execute("BEGIN")
                    try connection.execute("SELECT pg_advisory_xact_lock(\(Self.schemaLockKey))")
                    try connection.execute(Self.createSchema)
                    try connection.execute("COMMIT")
                } catch {
                    if !connection.isBroken { _ = try? connection.execute("ROLLBACK") }
                    throw error
                }
            }
        }
        let version = try pool.withConnection { (connection) throws(NotificationStoreError) -> String? in
            let exists = try connection.execute("SELECT to_regclass('notification_store_schema') IS NOT NULL").scalar
            guard exists == "t" else { return nil }
            return try connection.execute("SELECT max(version) FROM notification_store_schema").scalar
        }
        guard let version else { throw NotificationStoreError(.schema, "\(location) holds no notification store") }
        guard version == String(Self.schemaVersion) else {
            throw NotificationStoreError(.schema, "\(location) has schema version \(version), not \(Self.schemaVersion)")
        }
    }

    /// The URL without its user information and query: `host:port/database`.
    static func redacted(_ url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        if let query = rest.firstIndex(of: "?") { rest = rest[..<query] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        return String(rest)
    }

    /// Runs `body` on a pooled connection, once more on a new connection when the first broke.
    private func withRetry<T>(_ body: (PostgresConnection) throws(NotificationStoreError) -> T) throws(NotificationStoreError) -> T {
        var brokeOnce = false
        while true {
            var broke = false
            do throws(NotificationStoreError) {
                return try pool.withConnection { (connection) throws(NotificationStoreError) -> T in
                    do throws(NotificationStoreError) {
                        return try body(connection)
                    } catch {
                        broke = connection.isBroken
                        throw error
                    }
                }
            } catch {
                guard broke, !brokeOnce else { throw error }
                brokeOnce = true
            }
        }
    }

    /// Inserts `notification` unless its `notificationUUID` is stored; returns after PostgreSQL
    /// committed.
    public func store(_ notification: StoredNotification) throws(NotificationStoreError) -> NotificationStoreOutcome {
        let parameters = NotificationColumns.values(notification).map(Self.text)
        let rows = try withRetry { (connection) throws(NotificationStoreError) in try connection.execute(Self.insert, parameters) }
        let outcome: NotificationStoreOutcome = rows.rows.isEmpty ? .duplicate : .stored
        counters.lock()
        commitCount += 1
        if outcome == .stored { storedCount += 1 }
        counters.unlock()
        return outcome
    }

    private static func text(_ value: NotificationColumns.Value) -> String? {
        switch value {
        case .text(let text): text
        case .integer(let integer): integer.map(String.init)
        case .boolean(let boolean): boolean.map { $0 ? "true" : "false" }
        }
    }

    /// The rows matching `query`, in signed-date order.
    public func notifications(_ query: NotificationQuery) throws(NotificationStoreError) -> [StoredNotification] {
        let (filter, parameters) = NotificationColumns.filter(query) { "$\($0)" }
        let sql = "SELECT \(NotificationColumns.list) FROM notifications" + filter
        let result = try withRetry { (connection) throws(NotificationStoreError) in
            try connection.execute(sql, parameters.map(Self.text))
        }
        var rows: [StoredNotification] = []
        rows.reserveCapacity(result.rows.count)
        for values in result.rows {
            func text(_ index: Int) -> String? { index < values.count ? values[index] : nil }
            let row = NotificationColumns.row(
                text: text, integer: { text($0).flatMap { Int64($0) } },
                boolean: { text($0).map { $0 == "t" || $0 == "true" } })
            guard let row else { throw NotificationStoreError(.schema, "a row lacks its uuid, received date or payload") }
            rows.append(row)
        }
        return rows
    }

    /// `postgresql`, `host:port/database`, whether `SELECT 1` succeeds, and this process's counters.
    public func health() -> NotificationStoreHealth {
        var problem: String?
        do throws(NotificationStoreError) {
            _ = try withRetry { (connection) throws(NotificationStoreError) in try connection.execute("SELECT 1") }
        } catch {
            problem = error.reason
        }
        counters.lock()
        defer { counters.unlock() }
        return NotificationStoreHealth(
            kind: "postgresql", location: location, isAvailable: problem == nil, problem: problem, commits: commitCount,
            storedNotifications: storedCount)
    }

    /// The server's count of WAL syncs to disk (`pg_stat_wal.wal_sync`, PostgreSQL 14 and later),
    /// cumulative since its statistics were last reset: the fsyncs its commits cost.
    /// - Throws: ``NotificationStoreError`` when the query fails.
    public func walSyncCount() throws(NotificationStoreError) -> Int64 {
        let value = try withRetry { (connection) throws(NotificationStoreError) in
            try connection.execute("SELECT wal_sync FROM pg_stat_wal").scalar
        }
        guard let value, let count = Int64(value) else { throw NotificationStoreError(.failed, "pg_stat_wal has no wal_sync") }
        return count
    }
}
