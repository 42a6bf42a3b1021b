/// Which Notification History a backfill reads: one app and environment (``scope``) over the
/// signed dates [``start``, ``end``), in milliseconds since 1970. Its progress is kept under this
/// key, so that an interrupted backfill of the same range resumes where it stopped.
public struct NotificationBackfillRange: Sendable, Hashable {
    /// What the history belongs to, such as `com.example.app/Sandbox` (two apps sharing one store
    /// keep separate progress).
    public var scope: String
    /// The first signed date asked for (inclusive).
    public var start: Int64
    /// The signed date the range ends before (exclusive).
    public var end: Int64

    /// Creates a range.
    public init(scope: String, start: Int64, end: Int64) {
        self.scope = scope
        self.start = start
        self.end = end
    }
}

/// How far a backfill of one range has got: saved after each page's rows are durable.
public struct NotificationBackfillProgress: Sendable, Hashable {
    /// The range.
    public var range: NotificationBackfillRange
    /// The token of the next page to read (nil: from the first page, or nothing left).
    public var paginationToken: String?
    /// Pages read and stored so far, over every run of this range.
    public var pages: Int
    /// Whether the last page has been read and stored.
    public var isComplete: Bool
    /// When this was saved, in milliseconds since 1970.
    public var updatedDate: Int64

    /// Creates a record.
    public init(range: NotificationBackfillRange, paginationToken: String?, pages: Int, isComplete: Bool, updatedDate: Int64) {
        self.range = range
        self.paginationToken = paginationToken
        self.pages = pages
        self.isComplete = isComplete
        self.updatedDate = updatedDate
    }
}

/// Where backfill progress is kept: the notification store's own database, table
/// `notification_backfills` (created by the store's backfill schema step), so that progress and the rows it
/// covers live and die together. Both built-in stores keep it.
public protocol NotificationBackfillProgressStore: Sendable {
    /// The progress records of `scope` whose range starts at `start`, most recently saved first.
    func backfillProgress(scope: String, start: Int64) throws(NotificationStoreError) -> [NotificationBackfillProgress]
    /// Saves `progress` (replacing the record of its range); returns after the commit is durable.
    func saveBackfillProgress(_ progress: NotificationBackfillProgress) throws(NotificationStoreError)
}

extension NotificationStores {
    /// The backfill-progress side of a store `open` returned (both built-in stores have one).
    public static func backfillProgress(of store: any NotificationStore) -> (any NotificationBackfillProgressStore)? {
        store as? any NotificationBackfillProgressStore
    }
}

/// The schema step that adds the backfill tables to a store: `notification_backfills` (backfill
/// progress) and `customer_history` (``CustomerHistoryRecord``). A migration step of its own, run
/// whenever a store is opened for writing with schema creation allowed (after
/// ``NotificationSchemaMigration``), in SQLite and PostgreSQL. It only adds tables and indexes
/// (`IF NOT EXISTS`), so it is safe to repeat and needs no schema version of its own: a store
/// without the tables has no saved progress and no customer history, and code that does not know
/// them ignores them.
enum NotificationBackfillSchema {
    /// The tables, in SQLite.
    static let sqlite = schema(.sqlite)
    /// The tables, in PostgreSQL.
    static let postgres = schema(.postgres)

    static func schema(_ dialect: SQLDialect) -> String {
        let integer = dialect.integer
        let backfills = SQLDialect.createTable(
            "notification_backfills",
            [
                "scope TEXT NOT NULL", "range_start \(integer) NOT NULL", "range_end \(integer) NOT NULL", "pagination_token TEXT",
                "pages \(integer) NOT NULL", "completed \(dialect.boolean) NOT NULL", "updated_date \(integer) NOT NULL",
                "PRIMARY KEY (scope, range_start, range_end)",
            ])
        let history = SQLDialect.createTable(
            "customer_history",
            [
                "record_key TEXT PRIMARY KEY", "kind TEXT NOT NULL", "original_transaction_id TEXT NOT NULL", "app_account_token TEXT",
                "signed_date \(integer)", "signed_payload TEXT NOT NULL", "stored_date \(integer) NOT NULL",
            ])
        return backfills + "\n" + history + """

            CREATE INDEX IF NOT EXISTS customer_history_by_original_transaction ON customer_history (original_transaction_id);
            CREATE INDEX IF NOT EXISTS customer_history_by_app_account_token ON customer_history (app_account_token);
            """
    }

    static let columns = "scope, range_start, range_end, pagination_token, pages, completed, updated_date"

    static let historyColumns = "record_key, kind, original_transaction_id, app_account_token, signed_date, signed_payload"

    /// Adds the tables to a SQLite store inside the caller's transaction.
    static func migrateSQLite(_ connection: SQLiteConnection) throws(NotificationStoreError) {
        try connection.execute(sqlite)
    }
}
