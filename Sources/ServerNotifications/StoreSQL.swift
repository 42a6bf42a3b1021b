/// The column types of one of the two databases, for the tables whose definitions the SQLite and
/// PostgreSQL stores share.
struct SQLDialect {
    /// A 64-bit integer column.
    let integer: String
    /// A boolean column.
    let boolean: String
    /// A byte-string column.
    let bytes: String
    /// The `id` column of `notifications`.
    let notificationKey: String
    /// The `id` column of `dead_letters`.
    let deadLetterKey: String

    static let postgres = SQLDialect(
        integer: "BIGINT", boolean: "BOOLEAN", bytes: "BYTEA", notificationKey: "BIGSERIAL PRIMARY KEY",
        deadLetterKey: "BIGSERIAL PRIMARY KEY")
    static let sqlite = SQLDialect(
        integer: "INTEGER", boolean: "INTEGER", bytes: "BLOB", notificationKey: "INTEGER PRIMARY KEY",
        deadLetterKey: "INTEGER PRIMARY KEY AUTOINCREMENT")

    /// `CREATE TABLE IF NOT EXISTS table (…);` with one column (`name TYPE`) or constraint a line.
    static func createTable(_ table: String, _ columns: [String]) -> String {
        "CREATE TABLE IF NOT EXISTS \(table) (\n" + columns.map { "    " + $0 }.joined(separator: ",\n") + "\n);"
    }
}

extension NotificationColumns {
    /// Schema version 1 in `dialect`: the `notifications` table with the first 20 of ``names``
    /// (later versions add the rest by migration), its indexes and the health table.
    static func version1Schema(_ dialect: SQLDialect) -> String {
        let text = "TEXT"
        let integer = dialect.integer
        let types = [
            "TEXT NOT NULL UNIQUE", text, text, integer, "\(integer) NOT NULL", text, text, integer, text, text, text, integer, integer,
            integer, integer, integer, dialect.boolean, integer, integer, "TEXT NOT NULL",
        ]
        let columns = ["id \(dialect.notificationKey)"] + zip(names, types).map { "\($0) \($1)" }
        return SQLDialect.createTable("notifications", columns) + """

            CREATE INDEX IF NOT EXISTS notifications_by_original_transaction ON notifications (original_transaction_id);
            CREATE INDEX IF NOT EXISTS notifications_by_type ON notifications (notification_type);
            CREATE TABLE IF NOT EXISTS notification_store_health (id INTEGER PRIMARY KEY, checked_at \(integer) NOT NULL);
            """
    }
}

/// The `dead_letters` table both stores keep (``DeadLetterStore``), and the SQL they share.
enum DeadLetterColumns {
    /// The columns in ``DeadLetter``'s order.
    static let list = "id, received_date, source_address, check_name, reason, body, body_length, retried_date, retried_notification_uuid"

    /// The table and its index in `dialect`.
    static func schema(_ dialect: SQLDialect) -> String {
        let integer = dialect.integer
        let columns = [
            "id \(dialect.deadLetterKey)", "received_date \(integer) NOT NULL", "source_address TEXT", "check_name TEXT NOT NULL",
            "reason TEXT NOT NULL", "body \(dialect.bytes) NOT NULL", "body_length \(integer) NOT NULL", "retried_date \(integer)",
            "retried_notification_uuid TEXT",
        ]
        return SQLDialect.createTable("dead_letters", columns)
            + "\nCREATE INDEX IF NOT EXISTS dead_letters_by_received_date ON dead_letters (received_date);"
    }

    /// The SELECT of the letters matching `query`, by id; its one parameter, when `query` names
    /// an id, is `query.id` as `placeholder` (`?1` or `$1`).
    static func select(_ query: DeadLetterQuery, placeholder: String) -> String {
        var conditions: [String] = []
        if query.pendingOnly { conditions.append("retried_date IS NULL") }
        if query.id != nil { conditions.append("id = \(placeholder)") }
        var sql = "SELECT \(list) FROM dead_letters"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY id"
        if let limit = query.limit { sql += " LIMIT \(max(0, limit))" }
        return sql
    }
}
