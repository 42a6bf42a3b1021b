import Testing

@testable import ServerNotifications

/// The tables both stores define from one description (``SQLDialect``) are exactly the SQL each
/// store wrote out by hand before: schema version 1 is what migrations start from, so it must not
/// move when ``NotificationColumns/names`` grows.
struct StoreSQLTests {
    @Test func postgresSchemaVersion1IsUnchanged() {
        #expect(PostgresNotificationStore.createSchema == Self.postgresVersion1)
    }

    @Test func sqliteSchemaVersion1IsUnchanged() {
        #expect(SQLiteNotificationStore.createSchema == Self.sqliteVersion1)
    }

    @Test func deadLetterTablesAreUnchanged() {
        #expect(PostgresNotificationStore.createDeadLetters == Self.postgresDeadLetters)
        #expect(SQLiteDeadLetterFile.createSchema == Self.sqliteDeadLetters)
    }

    @Test func backfillTablesAreUnchanged() {
        #expect(NotificationBackfillSchema.sqlite == Self.sqliteBackfill)
        #expect(NotificationBackfillSchema.postgres == Self.postgresBackfill)
    }

    @Test func insertsBindEveryColumnOnce() {
        let count = NotificationColumns.names.count
        #expect(SQLiteNotificationStore.insert.hasSuffix(", ?\(count)) ON CONFLICT (notification_uuid) DO NOTHING"))
        #expect(PostgresNotificationStore.insert.hasSuffix(", $\(count)) ON CONFLICT (notification_uuid) DO NOTHING RETURNING id"))
        #expect(SQLiteNotificationStore.insert.hasPrefix("INSERT INTO notifications (\(NotificationColumns.list)) VALUES (?1, ?2, "))
    }

    @Test func deadLetterSelectNamesItsFilters() {
        let all = DeadLetterColumns.select(DeadLetterQuery(), placeholder: "?1")
        #expect(all == "SELECT \(DeadLetterColumns.list) FROM dead_letters ORDER BY id")
        let one = DeadLetterColumns.select(DeadLetterQuery(pendingOnly: true, id: 7, limit: -3), placeholder: "$1")
        #expect(one == "SELECT \(DeadLetterColumns.list) FROM dead_letters WHERE retried_date IS NULL AND id = $1 ORDER BY id LIMIT 0")
    }

    static let postgresVersion1 = """
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
        CREATE TABLE IF NOT EXISTS notification_store_health (id INTEGER PRIMARY KEY, checked_at BIGINT NOT NULL);
        CREATE TABLE IF NOT EXISTS notification_store_schema (version INTEGER NOT NULL);
        INSERT INTO notification_store_schema (version)
            SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM notification_store_schema);
        """

    static let sqliteVersion1 = """
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
        CREATE TABLE IF NOT EXISTS notification_store_health (id INTEGER PRIMARY KEY, checked_at INTEGER NOT NULL);
        """

    static let postgresDeadLetters = """
        CREATE TABLE IF NOT EXISTS dead_letters (
            id BIGSERIAL PRIMARY KEY,
            received_date BIGINT NOT NULL,
            source_address TEXT,
            check_name TEXT NOT NULL,
            reason TEXT NOT NULL,
            body BYTEA NOT NULL,
            body_length BIGINT NOT NULL,
            retried_date BIGINT,
            retried_notification_uuid TEXT
        );
        CREATE INDEX IF NOT EXISTS dead_letters_by_received_date ON dead_letters (received_date);
        """

    static let sqliteDeadLetters = """
        CREATE TABLE IF NOT EXISTS dead_letters (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            received_date INTEGER NOT NULL,
            source_address TEXT,
            check_name TEXT NOT NULL,
            reason TEXT NOT NULL,
            body BLOB NOT NULL,
            body_length INTEGER NOT NULL,
            retried_date INTEGER,
            retried_notification_uuid TEXT
        );
        CREATE INDEX IF NOT EXISTS dead_letters_by_received_date ON dead_letters (received_date);
        """

    static let sqliteBackfill = """
        CREATE TABLE IF NOT EXISTS notification_backfills (
            scope TEXT NOT NULL,
            range_start INTEGER NOT NULL,
            range_end INTEGER NOT NULL,
            pagination_token TEXT,
            pages INTEGER NOT NULL,
            completed INTEGER NOT NULL,
            updated_date INTEGER NOT NULL,
            PRIMARY KEY (scope, range_start, range_end)
        );
        CREATE TABLE IF NOT EXISTS customer_history (
            record_key TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL,
            app_account_token TEXT,
            signed_date INTEGER,
            signed_payload TEXT NOT NULL,
            stored_date INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS customer_history_by_original_transaction ON customer_history (original_transaction_id);
        CREATE INDEX IF NOT EXISTS customer_history_by_app_account_token ON customer_history (app_account_token);
        """

    static let postgresBackfill = """
        CREATE TABLE IF NOT EXISTS notification_backfills (
            scope TEXT NOT NULL,
            range_start BIGINT NOT NULL,
            range_end BIGINT NOT NULL,
            pagination_token TEXT,
            pages BIGINT NOT NULL,
            completed BOOLEAN NOT NULL,
            updated_date BIGINT NOT NULL,
            PRIMARY KEY (scope, range_start, range_end)
        );
        CREATE TABLE IF NOT EXISTS customer_history (
            record_key TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL,
            app_account_token TEXT,
            signed_date BIGINT,
            signed_payload TEXT NOT NULL,
            stored_date BIGINT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS customer_history_by_original_transaction ON customer_history (original_transaction_id);
        CREATE INDEX IF NOT EXISTS customer_history_by_app_account_token ON customer_history (app_account_token);
        """
}
