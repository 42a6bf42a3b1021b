import CSQLite

/// One SQLite connection (not thread-safe: its owner serialises every use). Internal: no SQLite
/// type leaves this module.
final class SQLiteConnection {
    private let handle: OpaquePointer
    let path: String
    private var isClosed = false

    /// How a connection opens its file.
    enum Mode {
        /// Read-write (creating the file when `create` is true).
        case readWrite(create: Bool)
        /// Read-only (`SQLITE_OPEN_READONLY`): nothing is created and nothing written.
        case readOnly
        /// Read-only of a file nobody writes while it is open (`immutable=1`): for a store the
        /// user may only read whose write-ahead log is absent (SQLite could not create its
        /// shared-memory file).
        case immutable
    }

    /// Opens `path` in `mode`.
    init(path: String, mode: Mode) throws(NotificationStoreError) {
        var db: OpaquePointer?
        let status: Int32
        switch mode {
        case .readWrite(let create):
            status = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX, nil)
        case .readOnly:
            status = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        case .immutable:
            status = sqlite3_open_v2(
                "file:" + Self.uriPath(path) + "?mode=ro&immutable=1", &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                nil)
        }
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            if let db { sqlite3_close_v2(db) }
            throw NotificationStoreError(.unavailable, "cannot open \(path): \(message)")
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
    }

    /// `path` as the path of a `file:` URI (`%`, `?` and `#` percent-encoded).
    private static func uriPath(_ path: String) -> String {
        var result = ""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "%": result += "%25"
            case "?": result += "%3F"
            case "#": result += "%23"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    deinit { close() }

    /// Finalises every statement and closes the connection (the last connection of a WAL database
    /// checkpoints it and removes the log). Safe to call twice.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        for statement in cache.values { sqlite3_finalize(statement) }
        cache = [:]
        sqlite3_close_v2(handle)
    }

    /// Whether SQLite opened the file read-only (asked to, or because it may not be written).
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    var lastError: String { String(cString: sqlite3_errmsg(handle)) }

    /// Runs statements that return nothing useful (`;`-separated).
    func execute(_ sql: String) throws(NotificationStoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_free(message)
            throw NotificationStoreError(.failed, "\(text) (SQLite \(status))")
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction (the write lock taken at once, so two
    /// writers take turns): committed when `body` returns, rolled back when it or the commit throws.
    func immediateTransaction<Result>(_ body: () throws(NotificationStoreError) -> Result) throws(NotificationStoreError) -> Result {
        try execute("BEGIN IMMEDIATE")
        do throws(NotificationStoreError) {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Sets how long a statement waits for another process's lock.
    func setBusyTimeout(milliseconds: Int32) { sqlite3_busy_timeout(handle, milliseconds) }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    private var cache: [String: OpaquePointer] = [:]

    /// A prepared statement for `sql` (prepared once per connection, reset for each use).
    func statement(_ sql: String) throws(NotificationStoreError) -> SQLiteStatement {
        if let cached = cache[sql] {
            sqlite3_reset(cached)
            sqlite3_clear_bindings(cached)
            return SQLiteStatement(handle: cached, connection: self)
        }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else {
            throw NotificationStoreError(.failed, "cannot prepare a statement: \(lastError)")
        }
        cache[sql] = statement
        return SQLiteStatement(handle: statement, connection: self)
    }

    /// The text of the first column of the first row of `sql`.
    func scalarText(_ sql: String) throws(NotificationStoreError) -> String? {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.text(0)
    }
}

/// A prepared statement borrowed from its connection's cache.
struct SQLiteStatement {
    let handle: OpaquePointer
    let connection: SQLiteConnection

    /// Binds a value to the 1-based parameter `index` (nil binds NULL).
    func bind(_ index: Int32, _ value: String?) throws(NotificationStoreError) {
        let status: Int32
        if let value {
            var copy = value
            status = copy.withUTF8 { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    rmshim_sqlite3_bind_text_transient(handle, index, chars.baseAddress, Int32(clamping: chars.count))
                }
            }
        } else {
            status = sqlite3_bind_null(handle, index)
        }
        try check(status)
    }

    /// Binds an integer (nil binds NULL).
    func bind(_ index: Int32, _ value: Int64?) throws(NotificationStoreError) {
        try check(value.map { sqlite3_bind_int64(handle, index, $0) } ?? sqlite3_bind_null(handle, index))
    }

    /// Binds a Boolean as 0 or 1 (nil binds NULL).
    func bind(_ index: Int32, _ value: Bool?) throws(NotificationStoreError) {
        try bind(index, value.map { $0 ? Int64(1) : 0 })
    }

    private func check(_ status: Int32) throws(NotificationStoreError) {
        guard status == SQLITE_OK else { throw NotificationStoreError(.failed, "cannot bind a value: \(connection.lastError)") }
    }

    /// Runs the statement to its next row: true when a row is ready, false when done.
    func step() throws(NotificationStoreError) -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = connection.lastError
            sqlite3_reset(handle)
            throw NotificationStoreError(.failed, "\(message) (SQLite \(status))")
        }
    }

    /// Resets the statement so that its locks are released.
    func reset() { sqlite3_reset(handle) }

    /// The text of column `index` (0-based) of the current row; nil for NULL.
    func text(_ index: Int32) -> String? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL, let pointer = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The integer of column `index`; nil for NULL.
    func int64(_ index: Int32) -> Int64? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        return sqlite3_column_int64(handle, index)
    }
}

extension SQLiteStatement {
    /// Binds `values` to the parameters 1, 2, … in order.
    func bind(_ values: [NotificationColumns.Value]) throws(NotificationStoreError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .text(let text): try bind(index, text)
            case .integer(let integer): try bind(index, integer)
            case .boolean(let boolean): try bind(index, boolean)
            case .bytes(let bytes?): try bindBlob(index, bytes)
            case .bytes(nil): try bind(index, nil as Int64?)
            }
        }
    }

    /// The bytes of column `index`; nil for NULL.
    func optionalBlob(_ index: Int32) -> [UInt8]? {
        sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : blob(index)
    }
}
