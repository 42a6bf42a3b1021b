import Foundation
import Internals

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
/// - **Durability is pinned per session**, not left to the server's defaults: every connection
///   starts with `synchronous_commit=on` (overriding a database or role default such as
///   `ALTER DATABASE … SET synchronous_commit=off`) and checks, before its first use, that
///   `synchronous_commit` is `on` and the server runs with `fsync=on`; a connection that finds
///   otherwise is refused, so nothing is acknowledged on a promise the server would not keep.
/// - **Deadlines**: every operation has one (``NotificationStoreOptions/operationTimeout``,
///   ``NotificationStoreOptions/healthTimeout`` for ``health()``), covering the wait for a pooled
///   connection, connecting, and each statement: the server's `statement_timeout`, and on this side
///   a `poll` of the connection's socket, so a stalled server or network answers
///   ``NotificationStoreError`` in time instead of hanging.
/// - **Connections**: a pool of at most ``maximumConnections`` libpq connections, each lent to one
///   caller at a time. A connection that broke is closed with every connection opened before it
///   (after a server restart they are all stale), and the statement is retried once on a new
///   connection (safe: a retry of a committed insert finds the row and reports a duplicate).
/// - **Values**: text parameters go as bytes with their lengths, never as C strings; text holding
///   U+0000, which PostgreSQL's `text` cannot hold, is refused before anything is sent, as the
///   SQLite store refuses it.
/// - **Health** is a real write: an update of one row of `notification_store_health`, committed.
public final class PostgresNotificationStore: NotificationStore, @unchecked Sendable {
    /// `host:port/database` (the URL without user, password or options).
    public let location: String
    /// The most connections open at once.
    public let maximumConnections: Int

    /// How the store was opened.
    public let options: NotificationStoreOptions
    /// The most a new connection may take to connect.
    public let connectTimeout: Duration

    let pool: PostgresPool
    /// Whether this process has made sure the `dead_letters` table exists (PostgresDeadLetters.swift).
    let deadLetterSchema = PostgresDeadLetterSchema()
    private let counters = NSLock()
    private var commitCount = 0
    private var storedCount = 0
    /// Rebuilds compact rows, keeping the certificates it fetched.
    private let compactRows = CompactRows()

    /// The schema version this code writes and reads; a store of an earlier version is migrated
    /// when opened for writing (``NotificationSchemaMigration``, then ``CompactPayloadMigration``).
    static let schemaVersion = 3

    /// The key of the advisory lock that serialises schema creation (any fixed number; "RMStore" in
    /// ASCII).
    static let schemaLockKey: Int64 = 0x524D_5374_6F72_65

    /// Schema version 1; ``NotificationSchemaMigration`` then brings it to ``schemaVersion``.
    static let createSchema =
        NotificationColumns.version1Schema(.postgres) + """

            CREATE TABLE IF NOT EXISTS notification_store_schema (version INTEGER NOT NULL);
            INSERT INTO notification_store_schema (version)
                SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM notification_store_schema);
            """

    static let insert = NotificationColumns.insert { "$\($0)" } + " RETURNING id"

    static let healthWrite =
        "INSERT INTO notification_store_health (id, checked_at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET checked_at = EXCLUDED.checked_at"

    /// Connects to `url` (`postgres://USER@HOST:PORT/DB`, or any libpq connection URI) and, when
    /// `createSchema` is true, creates the schema if it is missing.
    /// - Parameters:
    ///   - url: the connection URI.
    ///   - createSchema: create the schema when it is missing.
    ///   - maximumConnections: the pool's size.
    ///   - connectTimeout: seconds a new connection may take.
    ///   - statementTimeout: milliseconds one operation may take (the deadline of
    ///     ``NotificationStoreOptions/operationTimeout``).
    /// - Throws: ``NotificationStoreError`` when the database cannot be reached or holds another
    ///   schema version.
    public convenience init(
        url: String, createSchema: Bool = true, maximumConnections: Int = 16, connectTimeout: Int = 5, statementTimeout: Int = 15_000
    ) throws(NotificationStoreError) {
        try self.init(
            url: url, options: NotificationStoreOptions(create: createSchema, operationTimeout: .milliseconds(max(1, statementTimeout))),
            maximumConnections: maximumConnections, connectTimeout: .seconds(max(1, connectTimeout)))
    }

    /// Connects to `url` as `options` say: read-only sessions for
    /// ``NotificationStoreOptions/readOnly``, the schema created when missing for
    /// ``NotificationStoreOptions/create``.
    /// - Throws: ``NotificationStoreError`` when the database cannot be reached, does not keep
    ///   commits durable, or holds another schema version.
    public init(url: String, options: NotificationStoreOptions, maximumConnections: Int = 16, connectTimeout: Duration = .seconds(5))
        throws(NotificationStoreError)
    {
        location = Self.redacted(url)
        self.options = options
        self.maximumConnections = maximumConnections
        self.connectTimeout = connectTimeout
        let milliseconds = max(1, Int(options.operationTimeout.seconds * 1000))
        var settings = "-c statement_timeout=\(milliseconds) -c synchronous_commit=on -c client_min_messages=warning"
        if options.readOnly { settings += " -c default_transaction_read_only=on" }
        pool = PostgresPool(
            parameters: [("dbname", url), ("application_name", "rmstore-notifications"), ("options", settings)],
            maximumConnections: maximumConnections,
            setUp: { (connection, deadline) throws(NotificationStoreError) in
                let row = try connection.execute(
                    "SELECT current_setting('synchronous_commit'), current_setting('fsync')", deadline: deadline
                ).rows.first
                let synchronous = row?.first ?? nil
                let fsync = row.flatMap { $0.count > 1 ? $0[1] : nil }
                guard synchronous == "on" else {
                    throw NotificationStoreError(.unavailable, "the session's synchronous_commit is \(synchronous ?? "unknown"), not on")
                }
                guard fsync == "on" else {
                    throw NotificationStoreError(
                        .unavailable, "the server runs with fsync=\(fsync ?? "unknown"): commits would not be durable")
                }
            })
        let deadline = options.makeOperationDeadline()
        let connect = ContinuousClock.now.advanced(by: connectTimeout)
        let existing = try pool.withConnection(deadline: deadline, connect: connect) {
            (connection) throws(NotificationStoreError) -> String? in
            let exists = try connection.execute(
                "SELECT to_regclass('notification_store_schema') IS NOT NULL AND to_regclass('notification_store_health') IS NOT NULL",
                deadline: deadline
            ).scalar
            guard exists == "t" else { return nil }
            return try connection.execute("SELECT max(version) FROM notification_store_schema", deadline: deadline).scalar
        }
        if existing == nil, options.create, !options.readOnly {
            try pool.withConnection(deadline: deadline, connect: connect) { (connection) throws(NotificationStoreError) in
                try connection.executeLocked(Self.createSchema, lockKey: Self.schemaLockKey, deadline: deadline)
            }
        }
        func readVersion() throws(NotificationStoreError) -> String? {
            try pool.withConnection(deadline: deadline, connect: connect) { (connection) throws(NotificationStoreError) -> String? in
                let exists = try connection.execute("SELECT to_regclass('notification_store_schema') IS NOT NULL", deadline: deadline)
                    .scalar
                guard exists == "t" else { return nil }
                return try connection.execute("SELECT max(version) FROM notification_store_schema", deadline: deadline).scalar
            }
        }
        var version = try readVersion()
        // Each step brings one version to the next, in its own transaction under the schema lock.
        for (from, statements) in [("1", NotificationSchemaMigration.postgres), ("2", CompactPayloadMigration.postgres)]
        where version == from && options.create && !options.readOnly {
            try pool.withConnection(deadline: deadline, connect: connect) { (connection) throws(NotificationStoreError) in
                try connection.executeLocked(statements, lockKey: Self.schemaLockKey, deadline: deadline)
            }
            version = try readVersion()
        }
        guard let version else { throw NotificationStoreError(.schema, "\(location) holds no notification store") }
        guard version == String(Self.schemaVersion) else {
            throw NotificationStoreError(
                .schema, NotificationSchemaMigration.refusal(location: location, version: Int(version) ?? 0, expected: Self.schemaVersion))
        }
        if options.create, !options.readOnly {
            // NotificationBackfillSchema: its own step, under the schema's lock (two instances
            // creating one table at once would otherwise collide in PostgreSQL's catalog).
            try pool.withConnection(deadline: deadline, connect: connect) { (connection) throws(NotificationStoreError) in
                try connection.executeLocked(NotificationBackfillSchema.postgres, lockKey: Self.schemaLockKey, deadline: deadline)
            }
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

    /// Runs `body` on a pooled connection by `deadline`, once more on a new connection when the
    /// first broke (not when it passed the deadline).
    func withRetry<T>(
        deadline: ContinuousClock.Instant, _ body: (PostgresConnection) throws(NotificationStoreError) -> T
    ) throws(NotificationStoreError) -> T {
        var brokeOnce = false
        let connect = min(deadline, ContinuousClock.now.advanced(by: connectTimeout))
        while true {
            var broke = false
            do throws(NotificationStoreError) {
                return try pool.withConnection(deadline: deadline, connect: connect) { (connection) throws(NotificationStoreError) -> T in
                    do throws(NotificationStoreError) {
                        return try body(connection)
                    } catch {
                        broke = connection.isBroken && !connection.timedOut
                        throw error
                    }
                }
            } catch {
                guard broke, !brokeOnce, ContinuousClock.now < deadline else { throw error }
                brokeOnce = true
            }
        }
    }

    /// Inserts `notification` unless its `notificationUUID` is stored; returns after PostgreSQL
    /// committed (durably: the session pins `synchronous_commit=on`).
    public func store(_ notification: StoredNotification) throws(NotificationStoreError) -> NotificationStoreOutcome {
        try options.requireWritable(location)
        try NotificationColumns.check(NotificationColumns.values(notification))
        let compact = CompactPayload(signedPayload: notification.signedPayload)
        var parameters = NotificationColumns.values(notification, compact: compact).map(Self.parameter)
        let certificates = compact?.certificates ?? []
        for certificate in certificates {
            parameters += [Self.parameter(.bytes(certificate.digest)), Self.parameter(.bytes(certificate.der))]
        }
        let sql = Self.insert(certificates: certificates.count)
        let deadline = options.makeOperationDeadline()
        let rows = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) in
            try connection.execute(sql, parameters, deadline: deadline)
        }
        let outcome: NotificationStoreOutcome = rows.rows.isEmpty ? .duplicate : .stored
        counters.lock()
        commitCount += 1
        if outcome == .stored { storedCount += 1 }
        counters.unlock()
        return outcome
    }

    /// The insert of a row and, in the same statement (one transaction), of `count` certificates
    /// it references (parameters after the row's, digest and DER of each).
    static func insert(certificates count: Int) -> String {
        guard count > 0 else { return insert }
        let first = NotificationColumns.names.count + 1
        let values = (0..<count).map { "($\(first + 2 * $0), $\(first + 2 * $0 + 1))" }.joined(separator: ", ")
        return "WITH certificates AS (INSERT INTO notification_certificates (digest, der) VALUES \(values)"
            + " ON CONFLICT (digest) DO NOTHING) " + insert
    }

    private static func parameter(_ value: NotificationColumns.Value) -> PostgresParameter {
        switch value {
        case .text(let text): .text(text)
        case .integer(let integer): .literal(integer.map(String.init))
        case .boolean(let boolean): .literal(boolean.map { $0 ? "true" : "false" })
        case .bytes(let bytes): .literal(bytes.map { "\\x" + Hex.encode($0) })
        }
    }

    /// The bytes of a `bytea` value in PostgreSQL's text form (`\x` and hex).
    private static func bytes(_ text: String?) -> [UInt8]? {
        guard let text, text.hasPrefix("\\x") else { return nil }
        return Hex.decode(text.utf8.dropFirst(2))
    }

    /// The rows matching `query`, in signed-date order, then by `notificationUUID` (byte order).
    public func notifications(_ query: NotificationQuery) throws(NotificationStoreError) -> [StoredNotification] {
        let deadline = options.makeOperationDeadline()
        let result = try select(query, deadline: deadline)
        var rows: [NotificationColumns.ReadRow] = []
        rows.reserveCapacity(result.rows.count)
        for values in result.rows {
            func text(_ index: Int) -> String? { index < values.count ? values[index] : nil }
            let row = NotificationColumns.row(
                text: text, integer: { text($0).flatMap { Int64($0) } },
                boolean: { text($0).map { $0 == "t" || $0 == "true" } }, bytes: { Self.bytes(text($0)) })
            guard let row else { throw NotificationStoreError(.schema, "a row lacks its uuid, received date or payload") }
            rows.append(row)
        }
        return try compactRows.notifications(rows) { (digests) throws(NotificationStoreError) in
            let placeholders = digests.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
            let found = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) in
                try connection.execute(
                    "SELECT digest, der FROM notification_certificates WHERE digest IN (\(placeholders))",
                    digests.map { Self.parameter(.bytes($0)) }, deadline: deadline)
            }
            var certificates: [[UInt8]: [UInt8]] = [:]
            for row in found.rows where row.count == 2 {
                if let digest = Self.bytes(row[0]), let der = Self.bytes(row[1]) { certificates[digest] = der }
            }
            return certificates
        }
    }

    /// `postgresql`, `host:port/database`, whether a write round trip just committed within
    /// ``NotificationStoreOptions/healthTimeout`` (read-only stores: whether `SELECT 1` answers),
    /// and this process's counters.
    public func health() -> NotificationStoreHealth {
        var problem: String?
        let deadline = ContinuousClock.now.advanced(by: min(options.healthTimeout, options.operationTimeout))
        do throws(NotificationStoreError) {
            _ = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) in
                if options.readOnly {
                    try connection.execute("SELECT 1", deadline: deadline)
                } else {
                    try connection.execute(
                        Self.healthWrite, [.literal(String(StoredNotification.milliseconds(Date())))], deadline: deadline)
                }
            }
        } catch {
            problem = error.reason
        }
        counters.lock()
        defer { counters.unlock() }
        return NotificationStoreHealth(
            kind: "postgresql", location: location, isAvailable: problem == nil, problem: problem, commits: commitCount,
            storedNotifications: storedCount)
    }

    /// Closes the pooled connections; later calls fail.
    public func close() { pool.close() }

    /// The plan PostgreSQL chooses for ``notifications(_:)`` with `query` (`EXPLAIN` of the same
    /// statement and parameters, not run), one line per plan node: how an operator checks that a
    /// customer's lookup (``NotificationQuery/appAccountToken``, ``NotificationQuery/originalTransactionId``)
    /// uses the indexes.
    /// - Throws: ``NotificationStoreError`` when the query fails.
    public func queryPlan(_ query: NotificationQuery) throws(NotificationStoreError) -> String {
        try select(query, explain: true, deadline: options.makeOperationDeadline()).rows.compactMap {
            $0.first ?? nil
        }.joined(separator: "\n")
    }

    /// Runs the SELECT of the rows matching `query` (its `EXPLAIN` with `explain`) by `deadline`.
    private func select(_ query: NotificationQuery, explain: Bool = false, deadline: ContinuousClock.Instant) throws(NotificationStoreError)
        -> PostgresRows
    {
        let (filter, parameters) = NotificationColumns.filter(query, uuidOrder: "notification_uuid COLLATE \"C\"") { "$\($0)" }
        try NotificationColumns.check(parameters, isRow: false)
        let sql = (explain ? "EXPLAIN " : "") + "SELECT \(NotificationColumns.selected(query)) FROM notifications" + filter
        return try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) in
            try connection.execute(sql, parameters.map(Self.parameter), deadline: deadline)
        }
    }

    /// The server's count of WAL syncs to disk (`pg_stat_wal.wal_sync`, PostgreSQL 14 and later),
    /// cumulative since its statistics were last reset: the fsyncs its commits cost.
    /// - Throws: ``NotificationStoreError`` when the query fails.
    public func walSyncCount() throws(NotificationStoreError) -> Int64 {
        let deadline = options.makeOperationDeadline()
        let value = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) in
            try connection.execute("SELECT wal_sync FROM pg_stat_wal", deadline: deadline).scalar
        }
        guard let value, let count = Int64(value) else { throw NotificationStoreError(.failed, "pg_stat_wal has no wal_sync") }
        return count
    }
}
