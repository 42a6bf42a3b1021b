import Foundation
import ServerNotifications
import TestSupport
import Testing

/// Schema version 2 (appAccountToken, product type, ownership, and the index of customers) and 3
/// (compact payloads): a store of an earlier version is refused read-only and migrated when opened
/// for writing, keeping its rows; on PostgreSQL the customer's lookup uses the indexes.
@Suite struct SchemaMigrationTests {
    /// A row as a version-1 store kept it, and a row with the version-2 columns.
    static func rows() -> (old: StoredNotification, new: StoredNotification) {
        let old = StoredNotification(
            notificationUUID: "old", notificationType: "SUBSCRIBED", signedDate: 1, receivedDate: 1, transactionId: "10",
            originalTransactionId: "10", productId: "p", signedPayload: "a")
        var new = old
        new.notificationUUID = "new"
        new.signedDate = 2
        new.appAccountToken = "0f6d0c63-5a4e-4c2b-9d59-2f1c4d0e7a11"
        new.productType = "Consumable"
        new.inAppOwnershipType = "PURCHASED"
        return (old, new)
    }

    static func sqlite3(_ path: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, sql]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Back to version 2: what the compact-payload migration added, dropped.
    static let compactDowngrade = """
        DROP TABLE notification_certificates;
        ALTER TABLE notifications DROP COLUMN payload_format;
        ALTER TABLE notifications DROP COLUMN payload_body;
        ALTER TABLE notifications DROP COLUMN payload_sha256;

        """

    static let downgrade =
        compactDowngrade + """
            DROP INDEX notifications_by_app_account_token;
            ALTER TABLE notifications DROP COLUMN app_account_token;
            ALTER TABLE notifications DROP COLUMN product_type;
            ALTER TABLE notifications DROP COLUMN in_app_ownership_type;
            """

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"))) func sqliteStoreOfVersionOneIsMigrated() throws {
        let path = temporaryDatabase()
        let created = try SQLiteNotificationStore(path: path)
        #expect(try created.store(Self.rows().old) == .stored)
        created.close()
        // Back to version 1, as a store written by the previous version is.
        _ = try Self.sqlite3(path, Self.downgrade + "PRAGMA user_version=1;")
        #expect(try Self.sqlite3(path, "PRAGMA user_version") == "1")

        #expect {
            try SQLiteNotificationStore(path: path, options: .reading)
        } throws: { error in
            let error = error as? NotificationStoreError
            return error?.code == .schema && error?.reason.contains("schema version 1, not 3: open it once for writing") == true
        }
        let migrated = try SQLiteNotificationStore(path: path)
        #expect(try migrated.store(Self.rows().new) == .stored)
        let rows = try migrated.notifications(.all)
        #expect(rows == [Self.rows().old, Self.rows().new])
        #expect(try migrated.notifications(NotificationQuery(appAccountToken: "0F6D0C63-5A4E-4C2B-9D59-2F1C4D0E7A11")).count == 2)
        migrated.close()
        #expect(try Self.sqlite3(path, "PRAGMA user_version") == "3")
        let plan = try Self.sqlite3(
            path,
            "EXPLAIN QUERY PLAN SELECT * FROM notifications WHERE original_transaction_id IN (SELECT original_transaction_id"
                + " FROM notifications WHERE app_account_token = 'x' AND original_transaction_id IS NOT NULL)")
        #expect(plan.contains("notifications_by_app_account_token") && plan.contains("notifications_by_original_transaction"), "\(plan)")
        #expect(!plan.contains("SCAN notifications"), "\(plan)")
        // Opening it again changes nothing.
        let again = try SQLiteNotificationStore(path: path, options: .reading)
        #expect(try again.notifications(.all).count == 2)
        again.close()
    }

    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(3)))
    func postgresStoreOfVersionOneIsMigratedAndTheCustomerLookupUsesIndexes() throws {
        let cluster = try PostgresCluster.start(label: "migration")
        defer { cluster.stop() }
        let url = try cluster.createDatabase("notifications")
        let created = try PostgresNotificationStore(url: url)
        #expect(try created.store(Self.rows().old) == .stored)
        created.close()
        try cluster.sql(Self.downgrade + "UPDATE notification_store_schema SET version = 1;", database: "notifications")

        #expect {
            try PostgresNotificationStore(url: url, options: .reading)
        } throws: { error in
            let error = error as? NotificationStoreError
            return error?.code == .schema && error?.reason.contains("schema version 1, not 3: open it once for writing") == true
        }
        let store = try PostgresNotificationStore(url: url)
        defer { store.close() }
        #expect(try store.store(Self.rows().new) == .stored)
        #expect(try store.notifications(.all) == [Self.rows().old, Self.rows().new])
        #expect(try cluster.sql("SELECT version FROM notification_store_schema", database: "notifications") == "3")

        // 200,000 rows of 20,000 customers: the lookup by token and by original transaction id
        // uses the indexes, no sequential scan.
        try cluster.sql(
            """
            INSERT INTO notifications (notification_uuid, received_date, signed_date, transaction_id, original_transaction_id,
                app_account_token, signed_payload)
            SELECT 'u' || g, 0, g, 't' || g, 'o' || (g / 5), 'token-' || (g / 10), 'p' FROM generate_series(1, 200000) g;
            ANALYZE notifications;
            """, database: "notifications")
        let byToken = try store.queryPlan(NotificationQuery(appAccountToken: "token-77"))
        #expect(byToken.contains("notifications_by_app_account_token"), "\(byToken)")
        #expect(byToken.contains("notifications_by_original_transaction"), "\(byToken)")
        #expect(!byToken.contains("Seq Scan"), "\(byToken)")
        let byOriginal = try store.queryPlan(NotificationQuery(originalTransactionId: "o77"))
        #expect(byOriginal.contains("notifications_by_original_transaction") && !byOriginal.contains("Seq Scan"), "\(byOriginal)")
        #expect(try store.notifications(NotificationQuery(appAccountToken: "token-77")).count == 10)
        print("EXPLAIN by appAccountToken:\n\(byToken)\nEXPLAIN by original transaction id:\n\(byOriginal)")
    }

    /// A store of version 2 keeps its raw rows readable after the compact-payload migration, and
    /// new rows are stored compact.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"))) func sqliteStoreOfVersionTwoKeepsItsRawRows()
        throws
    {
        let tokens = try CompactionTests.realTokens().filter { $0.name.hasPrefix("gopay/") }
        let path = temporaryDatabase()
        try SQLiteNotificationStore(path: path).close()
        _ = try Self.sqlite3(path, Self.compactDowngrade + "PRAGMA user_version=2;")
        // The rows a version-2 store wrote: the payload as text.
        let old = try #require(tokens.first)
        _ = try Self.sqlite3(
            path, "INSERT INTO notifications (notification_uuid, received_date, signed_payload) VALUES ('old', 1, '\(old.token)')")
        #expect {
            try SQLiteNotificationStore(path: path, options: .reading)
        } throws: { error in
            (error as? NotificationStoreError)?.reason.contains("schema version 2, not 3: open it once for writing") == true
        }
        let store = try SQLiteNotificationStore(path: path)
        #expect(try store.store(CompactionTests.notification("new", old.token)) == .stored)
        let rows = try store.notifications(.all)
        #expect(rows.map(\.notificationUUID) == ["old", "new"])
        #expect(rows.allSatisfy { $0.signedPayload == old.token })
        store.close()
        #expect(
            try Self.sqlite3(path, "SELECT notification_uuid || ':' || coalesce(payload_format, 'raw') FROM notifications ORDER BY 1")
                == "new:1\nold:raw")
    }
}
