import Foundation
import Internals

/// The dead letters of a ``PostgresNotificationStore``: the `dead_letters` table of the same
/// database (created when missing, under the schema's advisory lock), each letter kept with one
/// autocommitted statement that also enforces the retention limit, committed durably as
/// notifications are (the session pins `synchronous_commit=on`). Bodies are `bytea`.
extension PostgresNotificationStore: DeadLetterStore {
    static let createDeadLetters = DeadLetterColumns.schema(.postgres)

    /// The insert, and the deletion of letters beyond the limits (the new row is not visible to
    /// the deletion, so it keeps `count - 1` older ones).
    static let keepLetter = """
        WITH kept AS (
            INSERT INTO dead_letters (received_date, source_address, check_name, reason, body, body_length)
            VALUES ($1, $2, $3, $4, $5::bytea, $6) RETURNING id
        ), expired AS (
            DELETE FROM dead_letters WHERE received_date < $7
                OR id <= (SELECT id FROM dead_letters ORDER BY id DESC LIMIT 1 OFFSET $8)
        )
        SELECT id FROM kept
        """

    /// Creates the table once per process (not for read-only stores).
    private func ensureDeadLetters(deadline: ContinuousClock.Instant) throws(NotificationStoreError) {
        guard !deadLetterSchema.isReady else { return }
        try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) in
            try connection.executeLocked(Self.createDeadLetters, lockKey: Self.schemaLockKey, deadline: deadline)
        }
        deadLetterSchema.markReady()
    }

    /// Commits `letter` and enforces `retention` in one statement.
    public func keep(_ letter: DeadLetter, retention: DeadLetterRetention) throws(NotificationStoreError) -> Int64 {
        try options.requireWritable(location)
        let deadline = options.makeOperationDeadline()
        try ensureDeadLetters(deadline: deadline)
        let parameters: [PostgresParameter] = [
            .literal(String(letter.receivedDate)), .text(letter.sourceAddress), .text(letter.check), .text(letter.reason),
            .literal("\\x" + Hex.encode(letter.body)), .literal(String(letter.bodyLength)),
            .literal(String(letter.receivedDate - retention.maximumAge * 1000)), .literal(String(max(0, retention.maximumCount - 1))),
        ]
        let result = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) in
            try connection.execute(Self.keepLetter, parameters, deadline: deadline)
        }
        guard let id = result.scalar.flatMap({ Int64($0) }) else { throw NotificationStoreError(.failed, "the insert returned no id") }
        return id
    }

    /// The letters matching `query`, by id (none when the table does not exist yet).
    public func deadLetters(_ query: DeadLetterQuery) throws(NotificationStoreError) -> [DeadLetter] {
        let deadline = options.makeOperationDeadline()
        let sql = DeadLetterColumns.select(query, placeholder: "$1")
        let parameters: [PostgresParameter] = query.id.map { [.literal(String($0))] } ?? []
        let result = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) -> PostgresRows? in
            guard try connection.execute("SELECT to_regclass('dead_letters') IS NOT NULL", deadline: deadline).scalar == "t" else {
                return nil
            }
            return try connection.execute(sql, parameters, deadline: deadline)
        }
        return (result?.rows ?? []).map { values in
            func text(_ index: Int) -> String? { index < values.count ? values[index] : nil }
            func integer(_ index: Int) -> Int64? { text(index).flatMap { Int64($0) } }
            let hex = text(5).map { $0.hasPrefix("\\x") ? String($0.dropFirst(2)) : $0 } ?? ""
            return DeadLetter(
                id: integer(0) ?? 0, receivedDate: integer(1) ?? 0, sourceAddress: text(2), check: text(3) ?? "", reason: text(4) ?? "",
                body: Hex.decode(Array(hex.utf8)) ?? [], bodyLength: integer(6), retriedDate: integer(7),
                retriedNotificationUUID: text(8))
        }
    }

    /// Marks letter `id` retried unless it already is (one statement: concurrent retries mark once).
    public func markRetried(id: Int64, notificationUUID: String, at date: Int64) throws(NotificationStoreError) -> Bool {
        try options.requireWritable(location)
        let deadline = options.makeOperationDeadline()
        try ensureDeadLetters(deadline: deadline)
        let result = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) in
            try connection.execute(
                "UPDATE dead_letters SET retried_date = $1, retried_notification_uuid = $2 WHERE id = $3 AND retried_date IS NULL RETURNING id",
                [.literal(String(date)), .text(DeadLetter.storable(notificationUUID)), .literal(String(id))], deadline: deadline)
        }
        return !result.rows.isEmpty
    }

    /// Deletes the letters received before `date` (nil: all).
    public func purgeDeadLetters(before date: Int64?) throws(NotificationStoreError) -> Int {
        try options.requireWritable(location)
        let deadline = options.makeOperationDeadline()
        try ensureDeadLetters(deadline: deadline)
        let result = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) in
            try connection.execute(
                "DELETE FROM dead_letters WHERE received_date < $1 RETURNING id", [.literal(String(date ?? Int64.max))], deadline: deadline)
        }
        return result.rows.count
    }
}

/// Whether the `dead_letters` table is known to exist (set once).
final class PostgresDeadLetterSchema: @unchecked Sendable {
    // @unchecked: `ready` is used only under `lock`.
    private let lock = NSLock()
    private var ready = false

    var isReady: Bool { lock.withLock { ready } }

    func markReady() { lock.withLock { ready = true } }
}
