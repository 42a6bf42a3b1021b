/// The backfill progress of a ``PostgresNotificationStore``: table `notification_backfills` of the
/// same database, each save one autocommitted statement, durable as notifications are (the
/// session pins `synchronous_commit=on`).
extension PostgresNotificationStore: NotificationBackfillProgressStore {
    /// The records of `scope` starting at `start`, most recently saved first (none when the table
    /// does not exist).
    public func backfillProgress(scope: String, start: Int64) throws(NotificationStoreError) -> [NotificationBackfillProgress] {
        let deadline = options.makeOperationDeadline()
        let result = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) -> PostgresRows? in
            let exists = try connection.execute("SELECT to_regclass('notification_backfills') IS NOT NULL", deadline: deadline)
            guard exists.scalar == "t" else { return nil }
            return try connection.execute(
                "SELECT \(NotificationBackfillSchema.columns) FROM notification_backfills WHERE scope = $1 AND range_start = $2 "
                    + "ORDER BY updated_date DESC, range_end DESC",
                [.text(scope), .literal(String(start))], deadline: deadline)
        }
        return (result?.rows ?? []).map { values in
            func text(_ index: Int) -> String? { index < values.count ? values[index] : nil }
            func integer(_ index: Int) -> Int64 { text(index).flatMap { Int64($0) } ?? 0 }
            return NotificationBackfillProgress(
                range: NotificationBackfillRange(scope: text(0) ?? "", start: integer(1), end: integer(2)), paginationToken: text(3),
                pages: Int(clamping: integer(4)), isComplete: text(5) == "t", updatedDate: integer(6))
        }
    }

    /// Saves `progress`, replacing its range's record, in one statement.
    public func saveBackfillProgress(_ progress: NotificationBackfillProgress) throws(NotificationStoreError) {
        try options.requireWritable(location)
        let deadline = options.makeOperationDeadline()
        let parameters: [PostgresParameter] = [
            .text(DeadLetter.storable(progress.range.scope)), .literal(String(progress.range.start)), .literal(String(progress.range.end)),
            .text(progress.paginationToken.map(DeadLetter.storable)), .literal(String(progress.pages)),
            .literal(progress.isComplete ? "true" : "false"), .literal(String(progress.updatedDate)),
        ]
        _ = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) in
            try connection.execute(
                "INSERT INTO notification_backfills (\(NotificationBackfillSchema.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7) "
                    + "ON CONFLICT (scope, range_start, range_end) DO UPDATE SET pagination_token = excluded.pagination_token, "
                    + "pages = excluded.pages, completed = excluded.completed, updated_date = excluded.updated_date",
                parameters, deadline: deadline)
        }
    }
}
