import Foundation

/// The embedded store: one SQLite database file, for a receiver on one machine.
///
/// - **Durable commits**: WAL journal mode with `synchronous=FULL`, so a commit returns only after
///   the write-ahead log is synced to disk; ``store(_:)`` returns after the commit.
/// - **Uniqueness**: `UNIQUE(notification_uuid)` in the table, and inserts that do nothing on a
///   conflict; two processes on one file are serialised by SQLite's own locks (each waits up to
///   ``busyTimeout`` for the other).
/// - **Group commit**: concurrent ``store(_:)`` calls share commits. The first caller to find no
///   commit in progress becomes the leader: it takes every row queued so far (at most
///   ``maximumBatchSize``), inserts them in one transaction and commits once (one WAL sync), then
///   wakes their callers; rows that arrive meanwhile wait for the next leader. One caller alone
///   commits at once, so a single sender pays one sync per notification and sixteen pay much less.
///   If a commit fails, every row of its batch fails (nothing of it is acknowledged).
/// - **Reads** use their own connection, which sees every committed row (WAL readers do not block
///   the writer).
public final class SQLiteNotificationStore: NotificationStore, @unchecked Sendable {
    /// The database file.
    public let path: String
    /// The most rows one commit takes.
    public let maximumBatchSize: Int
    /// How long a statement waits for a lock another process holds, in milliseconds.
    public let busyTimeout: Int32

    // The writer connection is used only by the leader of a group commit (one at a time, which
    // `committing` under `condition` guarantees); the reader connection only under `readLock`.
    private let writer: SQLiteConnection
    private let reader: SQLiteConnection
    private let condition = NSCondition()
    private let readLock = NSLock()
    private var queue: [PendingRow] = []
    private var committing = false
    private var commitCount = 0
    private var storedCount = 0

    /// The schema version this code writes and reads (`PRAGMA user_version`).
    static let schemaVersion = 1

    static let createSchema = """
        CREATE TABLE IF NOT EXISTS notifications (
            id INTEGER PRIMARY KEY,
            notification_uuid TEXT NOT NULL UNIQUE,
            notification_type TEXT,
            subtype TEXT,
            signed_date INTEGER,
            received_date INTEGER NOT NULL,
            bundle_id TEXT,
            environment TEXT,
            app_apple_id INTEGER,
            transaction_id TEXT,
            original_transaction_id TEXT,
            product_id TEXT,
            purchase_date INTEGER,
            expires_date INTEGER,
            revocation_date INTEGER,
            transaction_signed_date INTEGER,
            auto_renew_status INTEGER,
            is_in_billing_retry_period INTEGER,
            grace_period_expires_date INTEGER,
            renewal_signed_date INTEGER,
            signed_payload TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS notifications_by_original_transaction ON notifications (original_transaction_id);
        CREATE INDEX IF NOT EXISTS notifications_by_type ON notifications (notification_type);
        """

    static let insert =
        "INSERT INTO notifications (\(NotificationColumns.list)) VALUES ("
        + (1...NotificationColumns.names.count).map { "?\($0)" }.joined(separator: ", ")
        + ") ON CONFLICT (notification_uuid) DO NOTHING"

    /// Opens the database at `path`: WAL mode, `synchronous=FULL`, the schema created when missing.
    /// - Parameters:
    ///   - create: create the file and the schema when missing (false: the file must exist and hold
    ///     the schema, as the `notifications` commands need).
    /// - Throws: ``NotificationStoreError`` when the file cannot be opened, WAL mode cannot be set,
    ///   or it holds another schema version.
    public init(path: String, create: Bool = true, maximumBatchSize: Int = 512, busyTimeout: Int32 = 10_000)
        throws(NotificationStoreError)
    {
        self.path = path
        self.maximumBatchSize = max(1, maximumBatchSize)
        self.busyTimeout = busyTimeout
        writer = try SQLiteConnection(path: path, create: create)
        writer.setBusyTimeout(milliseconds: busyTimeout)
        let mode = try writer.scalarText("PRAGMA journal_mode=WAL")
        guard mode?.lowercased() == "wal" else {
            throw NotificationStoreError(.unavailable, "\(path): cannot use WAL mode (journal_mode is \(mode ?? "unknown"))")
        }
        try writer.execute("PRAGMA synchronous=FULL")
        if create {
            // BEGIN IMMEDIATE: two processes creating the schema at once take turns.
            try writer.execute("BEGIN IMMEDIATE")
            do throws(NotificationStoreError) {
                try writer.execute(Self.createSchema)
                let version = Int(try writer.scalarText("PRAGMA user_version") ?? "0") ?? 0
                if version == 0 { try writer.execute("PRAGMA user_version=\(Self.schemaVersion)") }
                try writer.execute("COMMIT")
            } catch {
                try? writer.execute("ROLLBACK")
                throw error
            }
        }
        let version = Int(try writer.scalarText("PRAGMA user_version") ?? "0") ?? 0
        guard version == Self.schemaVersion else {
            throw NotificationStoreError(
                .schema,
                version == 0 ? "\(path) holds no notification store" : "\(path) has schema version \(version), not \(Self.schemaVersion)")
        }
        reader = try SQLiteConnection(path: path, create: false)
        reader.setBusyTimeout(milliseconds: busyTimeout)
    }

    /// Commits `notification` (see the type's documentation for group commit); returns after the
    /// commit is durable.
    public func store(_ notification: StoredNotification) throws(NotificationStoreError) -> NotificationStoreOutcome {
        let pending = PendingRow(notification)
        condition.lock()
        queue.append(pending)
        while pending.result == nil {
            if committing {
                condition.wait()
                continue
            }
            committing = true
            let batch = Array(queue.prefix(maximumBatchSize))
            queue.removeFirst(batch.count)
            condition.unlock()
            let results = commit(batch)
            condition.lock()
            for (row, result) in zip(batch, results) { row.result = result }
            commitCount += 1
            storedCount += results.count { (try? $0.get()) == .stored }
            committing = false
            condition.broadcast()
        }
        let result = pending.result
        condition.unlock()
        switch result {
        case .success(let outcome)?: return outcome
        case .failure(let error)?: throw error
        case nil: throw NotificationStoreError(.failed, "no result")
        }
    }

    /// Inserts `batch` in one transaction; every row gets the same failure if any step fails.
    private func commit(_ batch: [PendingRow]) -> [Result<NotificationStoreOutcome, NotificationStoreError>] {
        do throws(NotificationStoreError) {
            try writer.execute("BEGIN IMMEDIATE")
            var outcomes: [NotificationStoreOutcome] = []
            do throws(NotificationStoreError) {
                let statement = try writer.statement(Self.insert)
                for row in batch {
                    statement.reset()
                    for (offset, value) in NotificationColumns.values(row.notification).enumerated() {
                        let index = Int32(offset + 1)
                        switch value {
                        case .text(let text): try statement.bind(index, text)
                        case .integer(let integer): try statement.bind(index, integer)
                        case .boolean(let boolean): try statement.bind(index, boolean)
                        }
                    }
                    _ = try statement.step()
                    outcomes.append(writer.changes > 0 ? .stored : .duplicate)
                }
                statement.reset()
                try writer.execute("COMMIT")
            } catch {
                try? writer.execute("ROLLBACK")
                throw error
            }
            return outcomes.map { .success($0) }
        } catch {
            return batch.map { _ in .failure(error) }
        }
    }

    /// The rows matching `query`, in signed-date order.
    public func notifications(_ query: NotificationQuery) throws(NotificationStoreError) -> [StoredNotification] {
        let (filter, parameters) = NotificationColumns.filter(query) { "?\($0)" }
        let sql = "SELECT \(NotificationColumns.list) FROM notifications" + filter
        readLock.lock()
        defer { readLock.unlock() }
        let statement = try reader.statement(sql)
        defer { statement.reset() }
        for (offset, value) in parameters.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .text(let text): try statement.bind(index, text)
            case .integer(let integer): try statement.bind(index, integer)
            case .boolean(let boolean): try statement.bind(index, boolean)
            }
        }
        var rows: [StoredNotification] = []
        while try statement.step() {
            let row = NotificationColumns.row(
                text: { statement.text(Int32($0)) }, integer: { statement.int64(Int32($0)) },
                boolean: { statement.int64(Int32($0)).map { $0 != 0 } })
            guard let row else { throw NotificationStoreError(.schema, "a row lacks its uuid, received date or payload") }
            rows.append(row)
        }
        return rows
    }

    /// `sqlite`, the path, whether a read succeeds, and this process's commit counters.
    public func health() -> NotificationStoreHealth {
        var problem: String?
        readLock.lock()
        do throws(NotificationStoreError) {
            _ = try reader.scalarText("SELECT count(*) FROM notifications WHERE id = 0")
        } catch {
            problem = error.reason
        }
        readLock.unlock()
        condition.lock()
        let commits = commitCount
        let stored = storedCount
        condition.unlock()
        return NotificationStoreHealth(
            kind: "sqlite", location: path, isAvailable: problem == nil, problem: problem, commits: commits, storedNotifications: stored)
    }
}

/// A row waiting for a group commit, and its result once committed (guarded by the store's
/// condition).
private final class PendingRow {
    let notification: StoredNotification
    var result: Result<NotificationStoreOutcome, NotificationStoreError>?

    init(_ notification: StoredNotification) { self.notification = notification }
}
