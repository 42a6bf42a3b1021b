/// What schema version 3 adds to a store of version 2, in SQLite and PostgreSQL: the
/// `notification_certificates` table (each certificate once, by the SHA-256 of its DER) and the
/// columns of a compact row (`payload_format`, `payload_body`, `payload_sha256`; see
/// ``CompactPayload``).
///
/// Rows stored before the migration keep their `signed_payload` text and are read as they are (a
/// raw row has no `payload_format`); new rows are stored compact when their payload comes back
/// byte for byte, raw otherwise. A step of its own, after ``NotificationSchemaMigration``'s,
/// safe to repeat.
enum CompactPayloadMigration {
    /// The columns version 3 adds, with their SQLite types.
    static let addedColumns = [("payload_format", "INTEGER"), ("payload_body", "BLOB"), ("payload_sha256", "BLOB")]

    /// The table of certificates (SQLite).
    static let sqliteCertificates =
        "CREATE TABLE IF NOT EXISTS notification_certificates (digest BLOB PRIMARY KEY, der BLOB NOT NULL) WITHOUT ROWID"

    /// Brings a SQLite store of version 2 (or a new one) to version 3, inside the caller's
    /// transaction; adds only what is missing.
    static func migrateSQLite(_ connection: SQLiteConnection) throws(NotificationStoreError) {
        try connection.execute(sqliteCertificates)
        for (column, type) in addedColumns {
            let present = try connection.scalarText("SELECT count(*) FROM pragma_table_info('notifications') WHERE name = '\(column)'")
            if present == "0" { try connection.execute("ALTER TABLE notifications ADD COLUMN \(column) \(type)") }
        }
    }

    /// The statements that bring a PostgreSQL store of version 2 to version 3 (run in one
    /// transaction holding the schema's advisory lock; each is safe to repeat).
    static let postgres = """
        CREATE TABLE IF NOT EXISTS notification_certificates (digest BYTEA PRIMARY KEY, der BYTEA NOT NULL);
        ALTER TABLE notifications ADD COLUMN IF NOT EXISTS payload_format INTEGER,
            ADD COLUMN IF NOT EXISTS payload_body BYTEA, ADD COLUMN IF NOT EXISTS payload_sha256 BYTEA;
        UPDATE notification_store_schema SET version = 3 WHERE version = 2;
        """
}
