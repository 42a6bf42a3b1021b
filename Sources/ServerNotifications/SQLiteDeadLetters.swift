import CSQLite
import Foundation

/// The dead letters of a ``SQLiteNotificationStore``: the `dead_letters` table of the same
/// database file, written through a connection of its own (SQLite serialises it with the
/// notification writer by its file locks), with the same durability (WAL, `synchronous=FULL`:
/// ``keep(_:retention:)`` returns after the commit is synced). The table is created when missing
/// (unless the store was opened read-only, where a store without it lists no letters). A failed
/// statement closes the connection; the next call reopens the path.
extension SQLiteNotificationStore: DeadLetterStore {
    /// Commits `letter` and enforces `retention` in the same transaction.
    public func keep(_ letter: DeadLetter, retention: DeadLetterRetention) throws(NotificationStoreError) -> Int64 {
        try options.requireWritable(path)
        return try deadLetterFile.withConnection(create: true) { (connection) throws(NotificationStoreError) -> Int64 in
            try connection.immediateTransaction { () throws(NotificationStoreError) -> Int64 in
                let insert = try connection.statement(SQLiteDeadLetterFile.insert)
                try insert.bind(1, letter.receivedDate)
                try insert.bind(2, letter.sourceAddress)
                try insert.bind(3, letter.check)
                try insert.bind(4, letter.reason)
                try insert.bindBlob(5, letter.body)
                try insert.bind(6, letter.bodyLength)
                _ = try insert.step()
                insert.reset()
                let id = try connection.scalarText("SELECT last_insert_rowid()").flatMap { Int64($0) } ?? 0
                let old = try connection.statement("DELETE FROM dead_letters WHERE received_date < ?1")
                try old.bind(1, letter.receivedDate - retention.maximumAge * 1000)
                _ = try old.step()
                old.reset()
                let many = try connection.statement(
                    "DELETE FROM dead_letters WHERE id <= (SELECT id FROM dead_letters ORDER BY id DESC LIMIT 1 OFFSET ?1)")
                try many.bind(1, Int64(retention.maximumCount))
                _ = try many.step()
                many.reset()
                return id
            }
        }
    }

    /// The letters matching `query`, by id.
    public func deadLetters(_ query: DeadLetterQuery) throws(NotificationStoreError) -> [DeadLetter] {
        try deadLetterFile.withConnection(create: false) { (connection) throws(NotificationStoreError) -> [DeadLetter] in
            guard try connection.scalarText("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'dead_letters'") != nil else {
                return []
            }
            let statement = try connection.statement(DeadLetterColumns.select(query, placeholder: "?1"))
            defer { statement.reset() }
            if let id = query.id { try statement.bind(1, id) }
            var letters: [DeadLetter] = []
            while try statement.step() {
                letters.append(
                    DeadLetter(
                        id: statement.int64(0) ?? 0, receivedDate: statement.int64(1) ?? 0, sourceAddress: statement.text(2),
                        check: statement.text(3) ?? "", reason: statement.text(4) ?? "", body: statement.blob(5),
                        bodyLength: statement.int64(6), retriedDate: statement.int64(7), retriedNotificationUUID: statement.text(8)))
            }
            return letters
        }
    }

    /// Marks letter `id` retried unless it already is.
    public func markRetried(id: Int64, notificationUUID: String, at date: Int64) throws(NotificationStoreError) -> Bool {
        try options.requireWritable(path)
        return try deadLetterFile.withConnection(create: true) { (connection) throws(NotificationStoreError) -> Bool in
            let statement = try connection.statement(
                "UPDATE dead_letters SET retried_date = ?1, retried_notification_uuid = ?2 WHERE id = ?3 AND retried_date IS NULL")
            defer { statement.reset() }
            try statement.bind(1, date)
            try statement.bind(2, DeadLetter.storable(notificationUUID))
            try statement.bind(3, id)
            _ = try statement.step()
            return connection.changes > 0
        }
    }

    /// Deletes the letters received before `date` (nil: all).
    public func purgeDeadLetters(before date: Int64?) throws(NotificationStoreError) -> Int {
        try options.requireWritable(path)
        return try deadLetterFile.withConnection(create: true) { (connection) throws(NotificationStoreError) -> Int in
            let statement = try connection.statement("DELETE FROM dead_letters WHERE received_date < ?1")
            defer { statement.reset() }
            try statement.bind(1, date ?? Int64.max)
            _ = try statement.step()
            return connection.changes
        }
    }
}

/// The connection a ``SQLiteNotificationStore`` keeps dead letters through, opened at first use.
final class SQLiteDeadLetterFile: @unchecked Sendable {
    // @unchecked: `connection` and `hasSchema` are used only under `lock`.
    private let lock = NSLock()
    private let path: String
    private let readOnly: Bool
    private let busyTimeout: Int32
    private var connection: SQLiteConnection?
    private var hasSchema = false
    private var isClosed = false

    static let createSchema = DeadLetterColumns.schema(.sqlite)

    static let insert =
        "INSERT INTO dead_letters (received_date, source_address, check_name, reason, body, body_length) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"

    init(path: String, readOnly: Bool, busyTimeout: Int32) {
        self.path = path
        self.readOnly = readOnly
        self.busyTimeout = busyTimeout
    }

    /// Runs `body` on the connection (opened, and the table created when `create`, first); a
    /// failure closes it so that the next call reopens the path.
    func withConnection<T>(create: Bool, _ body: (SQLiteConnection) throws(NotificationStoreError) -> T) throws(NotificationStoreError) -> T
    {
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed else { throw NotificationStoreError(.readOnly, "the store at \(path) is closed") }
        do throws(NotificationStoreError) {
            let current: SQLiteConnection
            if let connection {
                current = connection
            } else {
                guard FileIdentity(path) != nil else { throw NotificationStoreError(.unavailable, "cannot open \(path): no such file") }
                current = try SQLiteConnection(path: path, mode: readOnly ? .readOnly : .readWrite(create: false))
                current.setBusyTimeout(milliseconds: busyTimeout)
                if readOnly {
                    try current.execute("PRAGMA query_only=1")
                } else {
                    try current.execute("PRAGMA synchronous=FULL")
                }
                connection = current
                hasSchema = false
            }
            if create, !hasSchema, !readOnly {
                try current.execute("BEGIN IMMEDIATE; \(Self.createSchema) COMMIT;")
                hasSchema = true
            }
            return try body(current)
        } catch {
            if let connection, !readOnly { try? connection.execute("ROLLBACK") }
            connection?.close()
            connection = nil
            throw error
        }
    }

    /// Closes the connection; later calls fail.
    func close() {
        lock.lock()
        isClosed = true
        connection?.close()
        connection = nil
        lock.unlock()
    }
}

extension SQLiteStatement {
    /// Binds bytes as a BLOB (SQLite copies them).
    func bindBlob(_ index: Int32, _ bytes: [UInt8]) throws(NotificationStoreError) {
        let status = bytes.withUnsafeBytes { buffer in
            // A zero-length BLOB still needs a non-null pointer to be a BLOB rather than NULL.
            rmshim_sqlite3_bind_blob_transient(
                handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(clamping: buffer.count))
        }
        guard status == SQLITE_OK else { throw NotificationStoreError(.failed, "cannot bind a value: \(connection.lastError)") }
    }

    /// The bytes of column `index` (empty for NULL).
    func blob(_ index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
