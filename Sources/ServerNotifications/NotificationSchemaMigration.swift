/// What schema version 2 adds to a store of version 1, in SQLite and PostgreSQL: the columns the
/// entitlement query reads (`app_account_token`, `product_type`, `in_app_ownership_type`) and the
/// index that finds a customer's rows by `appAccountToken` (rows of an original transaction are
/// found by `notifications_by_original_transaction`, which version 1 has).
///
/// A store is migrated when a program opens it for writing with schema creation allowed (`serve`
/// does): the columns are added empty (a nullable column without default: no table rewrite), so
/// notifications stored before the migration have no `appAccountToken` until they are stored
/// again (Apple's retries and backfill keep their row: ask by original transaction id for those).
/// A store of version 1 opened read-only is refused, naming the migration.
enum NotificationSchemaMigration {
    /// The columns version 2 adds, with their SQL type (the same in both databases).
    static let addedColumns = ["app_account_token", "product_type", "in_app_ownership_type"]

    /// The index of customers' rows.
    static let accountTokenIndex =
        "CREATE INDEX IF NOT EXISTS notifications_by_app_account_token ON notifications (app_account_token)"

    /// Brings a SQLite store of version 1 (or a new one) to version 2, inside the caller's
    /// transaction; adds only the columns still missing, so it is safe to repeat.
    static func migrateSQLite(_ connection: SQLiteConnection) throws(NotificationStoreError) {
        for column in addedColumns {
            let present = try connection.scalarText("SELECT count(*) FROM pragma_table_info('notifications') WHERE name = '\(column)'")
            if present == "0" { try connection.execute("ALTER TABLE notifications ADD COLUMN \(column) TEXT") }
        }
        try connection.execute(accountTokenIndex)
    }

    /// The statements that bring a PostgreSQL store of version 1 to version 2 (run in one
    /// transaction holding the schema's advisory lock; each is safe to repeat).
    static let postgres =
        addedColumns.map { "ALTER TABLE notifications ADD COLUMN IF NOT EXISTS \($0) TEXT;\n" }.joined()
        + accountTokenIndex + ";\nUPDATE notification_store_schema SET version = 2 WHERE version = 1;"

    /// Why a store of `version` cannot be used by this code (version `expected`), for its error.
    static func refusal(location: String, version: Int, expected: Int) -> String {
        guard version < expected else { return "\(location) has schema version \(version), not \(expected)" }
        return "\(location) has schema version \(version), not \(expected): open it once for writing (serve does) to migrate it"
    }
}
