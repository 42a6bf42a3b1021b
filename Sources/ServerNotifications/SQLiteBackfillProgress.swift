/// The backfill progress of a ``SQLiteNotificationStore``: table `notification_backfills` of the
/// same file, written through the store's side connection (the one that keeps dead letters), with
/// the same durability (WAL, `synchronous=FULL`).
extension SQLiteNotificationStore: NotificationBackfillProgressStore {
    /// The records of `scope` starting at `start`, most recently saved first (none when the table
    /// does not exist).
    public func backfillProgress(scope: String, start: Int64) throws(NotificationStoreError) -> [NotificationBackfillProgress] {
        try deadLetterFile.withConnection(create: false) { (connection) throws(NotificationStoreError) -> [NotificationBackfillProgress] in
            let table = "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'notification_backfills'"
            guard try connection.scalarText(table) != nil else { return [] }
            let statement = try connection.statement(
                "SELECT \(NotificationBackfillSchema.columns) FROM notification_backfills WHERE scope = ?1 AND range_start = ?2 "
                    + "ORDER BY updated_date DESC, range_end DESC")
            defer { statement.reset() }
            try statement.bind(1, scope)
            try statement.bind(2, start)
            var records: [NotificationBackfillProgress] = []
            while try statement.step() {
                records.append(
                    NotificationBackfillProgress(
                        range: NotificationBackfillRange(
                            scope: statement.text(0) ?? "", start: statement.int64(1) ?? 0, end: statement.int64(2) ?? 0),
                        paginationToken: statement.text(3), pages: Int(clamping: statement.int64(4) ?? 0),
                        isComplete: (statement.int64(5) ?? 0) != 0, updatedDate: statement.int64(6) ?? 0))
            }
            return records
        }
    }

    /// Saves `progress`, replacing its range's record; returns after the commit is synced.
    public func saveBackfillProgress(_ progress: NotificationBackfillProgress) throws(NotificationStoreError) {
        try options.requireWritable(path)
        try deadLetterFile.withConnection(create: false) { (connection) throws(NotificationStoreError) in
            try connection.execute(NotificationBackfillSchema.sqlite)
            let statement = try connection.statement(
                "INSERT OR REPLACE INTO notification_backfills (\(NotificationBackfillSchema.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
            defer { statement.reset() }
            try statement.bind(1, DeadLetter.storable(progress.range.scope))
            try statement.bind(2, progress.range.start)
            try statement.bind(3, progress.range.end)
            try statement.bind(4, progress.paginationToken.map(DeadLetter.storable))
            try statement.bind(5, Int64(progress.pages))
            try statement.bind(6, progress.isComplete ? Int64(1) : Int64(0))
            try statement.bind(7, progress.updatedDate)
            _ = try statement.step()
        }
    }
}
