import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The embedded store: one SQLite database file, for a receiver on one machine.
///
/// - **Durable commits**: WAL journal mode with `synchronous=FULL`, so a commit returns only after
///   the write-ahead log is synced to disk; ``store(_:)`` returns after the commit.
/// - **The file it commits to is the file at its path**: the store remembers the identity
///   (device and inode) of the database file and of its `-wal` when it opens them, and after each
///   commit checks that the path still names those files and that the database file has not
///   shrunk. A file deleted, replaced or truncated under the store, or its `-wal` deleted, makes the
///   commit a failure (nothing acknowledged), and the store reopens the path before the next
///   commit (creating it anew when it may create).
/// - **Failures heal**: after any failed commit (a read-only file or directory, a full disk, the
///   checks above) the store closes its connections and reopens the path at the next commit or
///   health check, so fixing the cause brings commits back without a restart.
/// - **Uniqueness**: `UNIQUE(notification_uuid)` in the table, and inserts that do nothing on a
///   conflict; two processes on one file are serialised by SQLite's own locks (each waits up to
///   ``busyTimeout`` for the other).
/// - **Group commit**: concurrent ``store(_:)`` calls share commits. The first caller to find no
///   commit in progress becomes the leader: it takes every row queued so far (at most
///   ``maximumBatchSize``), inserts them in one transaction and commits once (one WAL sync), then
///   wakes their callers; rows that arrive meanwhile wait for the next leader. One caller alone
///   commits at once, so a single sender pays one sync per notification and sixteen pay much less.
///   If a commit fails, every row of its batch fails (nothing of it is acknowledged).
/// - **Health** is a real write: ``health()`` queues an update of one row of the
///   `notification_store_health` table into the next group commit and reports that commit's
///   result (within ``NotificationStoreOptions/healthTimeout``).
/// - **Reads** use their own connection, which sees every committed row (WAL readers do not block
///   the writer). A store opened read-only (``NotificationStoreOptions/readOnly``) has only that
///   connection, opened with `SQLITE_OPEN_READONLY` and no journal-mode change: it never changes
///   the file.
/// - **Closing** (``close()``) waits for the commit in progress, checkpoints the log into the
///   database file (`wal_checkpoint(TRUNCATE)`) and closes both connections, so that the database
///   file alone holds every acknowledged row.
public final class SQLiteNotificationStore: NotificationStore, @unchecked Sendable {
    /// The database file.
    public let path: String
    /// The most rows one commit takes.
    public let maximumBatchSize: Int
    /// How long a statement waits for a lock another process holds, in milliseconds.
    public let busyTimeout: Int32
    /// How the store was opened.
    public let options: NotificationStoreOptions

    // `files` and `problem` are read and written under `condition`; they are replaced only by the
    // leader of a group commit (one at a time, which `committing` guarantees) while it also holds
    // `readLock`, so a reader holding `readLock` keeps the connections it took. The writer
    // connection is used only by that leader, the reader connection only under `readLock`.
    private let condition = NSCondition()
    private let readLock = NSLock()
    /// The connection dead letters are kept through (SQLiteDeadLetters.swift).
    let deadLetterFile: SQLiteDeadLetterFile
    private var files: OpenFiles?
    private var problem: NotificationStoreError?
    private var isClosed = false
    private var queue: [PendingRow] = []
    private var committing = false
    private var commitCount = 0
    private var storedCount = 0
    /// Rebuilds compact rows, keeping the certificates it fetched.
    private let compactRows = CompactRows()

    /// The schema version this code writes and reads (`PRAGMA user_version`); a store of an
    /// earlier version is migrated when opened for writing (``NotificationSchemaMigration``, then
    /// ``CompactPayloadMigration``).
    static let schemaVersion = 3

    static let createSchema = NotificationColumns.version1Schema(.sqlite)

    static let insert = NotificationColumns.insert { "?\($0)" }

    static let insertCertificate =
        "INSERT INTO notification_certificates (digest, der) VALUES (?1, ?2) ON CONFLICT (digest) DO NOTHING"

    static let selectCertificate = "SELECT der FROM notification_certificates WHERE digest = ?1"

    static let healthWrite =
        "INSERT INTO notification_store_health (id, checked_at) VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at"

    /// Opens the database at `path`: WAL mode, `synchronous=FULL`, the schema created when missing.
    /// - Parameters:
    ///   - path: the database file.
    ///   - create: create the file and the schema when missing (false: the file must exist and hold
    ///     the schema).
    ///   - maximumBatchSize: the most notifications committed in one transaction (group commit).
    ///   - busyTimeout: milliseconds to wait for another connection's lock.
    /// - Throws: ``NotificationStoreError`` when the file cannot be opened, WAL mode cannot be set,
    ///   or it holds another schema version.
    public convenience init(path: String, create: Bool = true, maximumBatchSize: Int = 512, busyTimeout: Int32 = 10_000)
        throws(NotificationStoreError)
    {
        try self.init(
            path: path, options: NotificationStoreOptions(create: create), maximumBatchSize: maximumBatchSize, busyTimeout: busyTimeout)
    }

    /// Opens the database at `path` as `options` say (read-only: no journal-mode change, nothing
    /// created; ``NotificationStoreOptions/allowUnavailableAtStart``: a file that cannot be written
    /// now is retried at each commit and health check).
    /// - Throws: ``NotificationStoreError`` when the file cannot be opened (unless
    ///   ``NotificationStoreOptions/allowUnavailableAtStart``), or holds something else than this
    ///   store.
    public init(path: String, options: NotificationStoreOptions, maximumBatchSize: Int = 512, busyTimeout: Int32 = 10_000)
        throws(NotificationStoreError)
    {
        self.path = path
        self.options = options
        self.maximumBatchSize = max(1, maximumBatchSize)
        self.busyTimeout = busyTimeout
        deadLetterFile = SQLiteDeadLetterFile(path: path, readOnly: options.readOnly, busyTimeout: busyTimeout)
        do throws(NotificationStoreError) {
            files = try OpenFiles(path: path, options: options, busyTimeout: busyTimeout)
        } catch {
            guard options.allowUnavailableAtStart, !options.readOnly, error.code == .unavailable || error.code == .failed else {
                throw error
            }
            problem = error
        }
    }

    /// Commits `notification` (see the type's documentation for group commit); returns after the
    /// commit is durable and the path still names the file it went to.
    public func store(_ notification: StoredNotification) throws(NotificationStoreError) -> NotificationStoreOutcome {
        try options.requireWritable(path)
        try NotificationColumns.check(NotificationColumns.values(notification))
        let pending = PendingRow(notification, compact: CompactPayload(signedPayload: notification.signedPayload))
        let result = commitQueued(pending, until: nil)
        switch result {
        case .success(let outcome)?: return outcome
        case .failure(let error)?: throw error
        case nil: throw NotificationStoreError(.failed, "no result")
        }
    }

    /// Queues `pending` and waits for its result (becoming the leader of a group commit when none
    /// is in progress); `nil` when `deadline` passed first (the row is committed later).
    private func commitQueued(_ pending: PendingRow, until deadline: Date?) -> Result<NotificationStoreOutcome, NotificationStoreError>? {
        condition.lock()
        queue.append(pending)
        while pending.result == nil {
            if committing {
                if let deadline {
                    if !condition.wait(until: deadline) { break }
                } else {
                    condition.wait()
                }
                continue
            }
            committing = true
            let batch = Array(queue.prefix(maximumBatchSize))
            queue.removeFirst(batch.count)
            condition.unlock()
            let results = lead(batch)
            condition.lock()
            for (row, result) in zip(batch, results) { row.result = result }
            if batch.contains(where: { $0.notification != nil }) { commitCount += 1 }
            storedCount += zip(batch, results).count { $0.0.notification != nil && (try? $0.1.get()) == .stored }
            committing = false
            condition.broadcast()
        }
        let result = pending.result
        condition.unlock()
        return result
    }

    /// The leader's work: (re)opens the files when needed, commits `batch`, checks the files, and
    /// closes them after a failure so that the next leader reopens the path.
    private func lead(_ batch: [PendingRow]) -> [Result<NotificationStoreOutcome, NotificationStoreError>] {
        condition.lock()
        let closed = isClosed
        var current = files
        condition.unlock()
        if closed { return batch.map { _ in .failure(NotificationStoreError(.readOnly, "the store at \(path) is closed")) } }
        do throws(NotificationStoreError) {
            if current == nil {
                let opened = try OpenFiles(path: path, options: options, busyTimeout: busyTimeout)
                replaceFiles(with: opened, problem: nil)
                current = opened
            }
            guard let current else { throw NotificationStoreError(.unavailable, "\(path) is not open") }
            let outcomes = try commit(batch, writer: try current.writableConnection())
            try current.checkStillAtPath()
            condition.lock()
            problem = nil
            condition.unlock()
            return outcomes.map { .success($0) }
        } catch {
            replaceFiles(with: nil, problem: error)
            return batch.map { _ in .failure(error) }
        }
    }

    /// Swaps the open files (closing the old ones) while no reader uses them.
    private func replaceFiles(with new: OpenFiles?, problem newProblem: NotificationStoreError?) {
        readLock.lock()
        condition.lock()
        let old = files
        files = new
        problem = newProblem
        condition.unlock()
        if let old, old !== new { old.close() }
        readLock.unlock()
    }

    /// Inserts `batch` in one transaction; every row gets the same failure if any step fails.
    private func commit(_ batch: [PendingRow], writer: SQLiteConnection) throws(NotificationStoreError) -> [NotificationStoreOutcome] {
        try writer.immediateTransaction { () throws(NotificationStoreError) -> [NotificationStoreOutcome] in
            var outcomes: [NotificationStoreOutcome] = []
            for row in batch {
                guard let notification = row.notification else {
                    let statement = try writer.statement(Self.healthWrite)
                    try statement.bind(1, StoredNotification.milliseconds(Date()))
                    _ = try statement.step()
                    statement.reset()
                    outcomes.append(.duplicate)
                    continue
                }
                // The certificates first, in the same transaction: a committed row never lacks one.
                for certificate in row.compact?.certificates ?? [] {
                    let insert = try writer.statement(Self.insertCertificate)
                    try insert.bindBlob(1, certificate.digest)
                    try insert.bindBlob(2, certificate.der)
                    _ = try insert.step()
                    insert.reset()
                }
                let statement = try writer.statement(Self.insert)
                try statement.bind(NotificationColumns.values(notification, compact: row.compact))
                _ = try statement.step()
                statement.reset()
                outcomes.append(writer.changes > 0 ? .stored : .duplicate)
            }
            return outcomes
        }
    }

    /// The rows matching `query`, in signed-date order, then by `notificationUUID`.
    public func notifications(_ query: NotificationQuery) throws(NotificationStoreError) -> [StoredNotification] {
        let (filter, parameters) = NotificationColumns.filter(query, uuidOrder: "notification_uuid") { "?\($0)" }
        try NotificationColumns.check(parameters, isRow: false)
        let sql = "SELECT \(NotificationColumns.selected(query)) FROM notifications" + filter
        readLock.lock()
        defer { readLock.unlock() }
        condition.lock()
        let current = files
        let currentProblem = problem
        condition.unlock()
        guard let reader = current?.reader else {
            throw currentProblem ?? NotificationStoreError(.unavailable, "\(path) is not open")
        }
        let statement = try reader.statement(sql)
        defer { statement.reset() }
        try statement.bind(parameters)
        var rows: [NotificationColumns.ReadRow] = []
        while try statement.step() {
            let row = NotificationColumns.row(
                text: { statement.text(Int32($0)) }, integer: { statement.int64(Int32($0)) },
                boolean: { statement.int64(Int32($0)).map { $0 != 0 } },
                bytes: { statement.optionalBlob(Int32($0)) })
            guard let row else { throw NotificationStoreError(.schema, "a row lacks its uuid, received date or payload") }
            rows.append(row)
        }
        statement.reset()
        return try compactRows.notifications(rows) { (digests) throws(NotificationStoreError) in
            var found: [[UInt8]: [UInt8]] = [:]
            let select = try reader.statement(Self.selectCertificate)
            defer { select.reset() }
            for digest in digests {
                try select.bindBlob(1, digest)
                if try select.step() { found[digest] = select.blob(0) }
                select.reset()
            }
            return found
        }
    }

    /// `sqlite`, the path, whether a write round trip just committed (read-only stores: whether a
    /// read succeeds), and this process's commit counters.
    public func health() -> NotificationStoreHealth {
        var failure: String?
        if options.readOnly {
            do throws(NotificationStoreError) {
                _ = try notifications(NotificationQuery(notificationUUID: "", limit: 0))
            } catch {
                failure = error.reason
            }
        } else {
            let probe = PendingRow(nil)
            let deadline = Date().addingTimeInterval(options.healthTimeout.seconds)
            switch commitQueued(probe, until: deadline) {
            case .success?: failure = nil
            case .failure(let error)?: failure = error.reason
            case nil: failure = "no commit within \(options.healthTimeout)"
            }
        }
        condition.lock()
        let commits = commitCount
        let stored = storedCount
        condition.unlock()
        return NotificationStoreHealth(
            kind: "sqlite", location: path, isAvailable: failure == nil, problem: failure, commits: commits, storedNotifications: stored)
    }

    /// Waits for the commit in progress, checkpoints the log into the database file and closes the
    /// connections; later commits fail. Safe to call twice.
    public func close() {
        condition.lock()
        while committing { condition.wait() }
        let already = isClosed
        isClosed = true
        committing = true
        condition.unlock()
        if !already {
            readLock.lock()
            condition.lock()
            let old = files
            files = nil
            condition.unlock()
            deadLetterFile.close()
            old?.checkpointAndClose()
            readLock.unlock()
        }
        condition.lock()
        committing = false
        condition.broadcast()
        condition.unlock()
    }
}

/// The connections of one opening of the store's path, and the identity of the files they use.
private final class OpenFiles {
    let path: String
    let writer: SQLiteConnection?
    let reader: SQLiteConnection
    let database: FileIdentity
    var log: FileIdentity?
    var largestSize: Int64

    init(path: String, options: NotificationStoreOptions, busyTimeout: Int32) throws(NotificationStoreError) {
        self.path = path
        if options.readOnly {
            reader = try Self.openReadOnly(path: path, busyTimeout: busyTimeout)
            writer = nil
        } else {
            let writer = try SQLiteConnection(path: path, mode: .readWrite(create: options.create))
            guard !writer.isReadOnly else {
                throw NotificationStoreError(.unavailable, "\(path) may not be written (read-only file or directory)")
            }
            writer.setBusyTimeout(milliseconds: busyTimeout)
            let mode = try writer.scalarText("PRAGMA journal_mode=WAL")
            guard mode?.lowercased() == "wal" else {
                throw NotificationStoreError(.unavailable, "\(path): cannot use WAL mode (journal_mode is \(mode ?? "unknown"))")
            }
            try writer.execute("PRAGMA synchronous=FULL")
            if options.create {
                // BEGIN IMMEDIATE: two processes creating the schema at once take turns.
                try writer.immediateTransaction { () throws(NotificationStoreError) in
                    let version = Int(try writer.scalarText("PRAGMA user_version") ?? "0") ?? 0
                    let tables = Int(try writer.scalarText("SELECT count(*) FROM sqlite_master") ?? "0") ?? 0
                    guard version != 0 || tables == 0 else {
                        throw NotificationStoreError(.schema, "\(path) holds another program's database, not a notification store")
                    }
                    if version <= SQLiteNotificationStore.schemaVersion {
                        try writer.execute(SQLiteNotificationStore.createSchema)
                        try NotificationSchemaMigration.migrateSQLite(writer)
                        try CompactPayloadMigration.migrateSQLite(writer)
                        try NotificationBackfillSchema.migrateSQLite(writer)
                    }
                    if version < SQLiteNotificationStore.schemaVersion {
                        try writer.execute("PRAGMA user_version=\(SQLiteNotificationStore.schemaVersion)")
                    }
                }
            }
            try Self.checkSchema(writer, path: path)
            self.writer = writer
            reader = try SQLiteConnection(path: path, mode: .readWrite(create: false))
            reader.setBusyTimeout(milliseconds: busyTimeout)
        }
        guard let identity = FileIdentity(path) else { throw NotificationStoreError(.unavailable, "\(path) is gone") }
        database = identity
        largestSize = identity.size
        log = FileIdentity(path + "-wal")
    }

    /// A read-only connection that changes nothing: `SQLITE_OPEN_READONLY`, no journal-mode
    /// change; when SQLite cannot read a WAL database that way (it may not create the shared-memory
    /// file) and no log exists, the file is read as immutable.
    private static func openReadOnly(path: String, busyTimeout: Int32) throws(NotificationStoreError) -> SQLiteConnection {
        guard FileIdentity(path) != nil else { throw NotificationStoreError(.unavailable, "cannot open \(path): no such file") }
        var connection = try SQLiteConnection(path: path, mode: .readOnly)
        connection.setBusyTimeout(milliseconds: busyTimeout)
        do throws(NotificationStoreError) {
            _ = try connection.scalarText("PRAGMA user_version")
        } catch {
            guard FileIdentity(path + "-wal") == nil else { throw error }
            connection.close()
            connection = try SQLiteConnection(path: path, mode: .immutable)
        }
        try connection.execute("PRAGMA query_only=1")
        try checkSchema(connection, path: path)
        return connection
    }

    /// Refuses a file that is not this store (another version, another program's database).
    private static func checkSchema(_ connection: SQLiteConnection, path: String) throws(NotificationStoreError) {
        let version = Int(try connection.scalarText("PRAGMA user_version") ?? "0") ?? 0
        guard version == SQLiteNotificationStore.schemaVersion else {
            throw NotificationStoreError(
                .schema,
                version == 0
                    ? "\(path) holds no notification store"
                    : NotificationSchemaMigration.refusal(location: path, version: version, expected: SQLiteNotificationStore.schemaVersion)
            )
        }
        let table = try connection.scalarText("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'notifications'")
        guard table == "notifications" else { throw NotificationStoreError(.schema, "\(path) holds no notification store") }
    }

    /// The writer, or a failure for a read-only opening.
    func writableConnection() throws(NotificationStoreError) -> SQLiteConnection {
        guard let writer else { throw NotificationStoreError(.readOnly, "\(path) was opened read-only") }
        return writer
    }

    /// Throws unless the path still names the database file (and `-wal`) this opening commits
    /// to, and the database file has not shrunk.
    func checkStillAtPath() throws(NotificationStoreError) {
        guard let now = FileIdentity(path) else {
            throw NotificationStoreError(.failed, "\(path) was deleted under the store; nothing of this commit is acknowledged")
        }
        guard now.device == database.device, now.inode == database.inode else {
            throw NotificationStoreError(.failed, "\(path) was replaced by another file under the store")
        }
        guard now.size >= largestSize else {
            throw NotificationStoreError(.failed, "\(path) was truncated under the store (\(now.size) bytes, was \(largestSize))")
        }
        largestSize = now.size
        let logNow = FileIdentity(path + "-wal")
        if let log {
            guard let logNow, logNow.device == log.device, logNow.inode == log.inode else {
                throw NotificationStoreError(.failed, "\(path)-wal was deleted or replaced under the store")
            }
        } else {
            log = logNow
        }
    }

    /// Closes the connections (the writer last, so that it checkpoints the log when no other
    /// process has the file open).
    func close() {
        reader.close()
        writer?.close()
    }

    /// Checkpoints the whole log into the database file, then closes.
    func checkpointAndClose() {
        reader.close()
        if let writer {
            _ = try? writer.scalarText("PRAGMA wal_checkpoint(TRUNCATE)")
            writer.close()
        }
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// What names a file: its device and inode, and its size when it was looked at.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64

    /// The identity of the file at `path`, or nil when there is none.
    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
    }
}

/// A row waiting for a group commit (nil: the health check's write), and its result once
/// committed (guarded by the store's condition).
private final class PendingRow {
    let notification: StoredNotification?
    /// The notification's compact form, when it has one (otherwise it is stored raw).
    let compact: CompactPayload?
    var result: Result<NotificationStoreOutcome, NotificationStoreError>?

    init(_ notification: StoredNotification?, compact: CompactPayload? = nil) {
        self.notification = notification
        self.compact = compact
    }
}
