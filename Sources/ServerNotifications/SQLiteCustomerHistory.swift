import Foundation

/// The customer history of a ``SQLiteNotificationStore``: table `customer_history` of the same
/// file, written through the store's side connection (the one that keeps dead letters).
extension SQLiteNotificationStore: CustomerHistoryStore {
    /// Commits the new records in one transaction; returns how many were new.
    public func storeCustomerHistory(_ records: [CustomerHistoryRecord]) throws(NotificationStoreError) -> Int {
        try options.requireWritable(path)
        let now = StoredNotification.milliseconds(Date())
        return try deadLetterFile.withConnection(create: false) { (connection) throws(NotificationStoreError) -> Int in
            try connection.immediateTransaction { () throws(NotificationStoreError) -> Int in
                try connection.execute(NotificationBackfillSchema.sqlite)
                let insert = try connection.statement(
                    "INSERT INTO customer_history (\(NotificationBackfillSchema.historyColumns), stored_date) "
                        + "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (record_key) DO NOTHING")
                var added = 0
                for record in records {
                    try insert.bind(1, DeadLetter.storable(record.key))
                    try insert.bind(2, record.kind.rawValue)
                    try insert.bind(3, DeadLetter.storable(record.originalTransactionId))
                    try insert.bind(4, record.appAccountToken.map(DeadLetter.storable))
                    try insert.bind(5, record.signedDate)
                    try insert.bind(6, record.signedPayload)
                    try insert.bind(7, now)
                    _ = try insert.step()
                    added += connection.changes
                    insert.reset()
                }
                return added
            }
        }
    }

    /// The records of these original transactions and of `appAccountToken`, by key.
    public func customerHistory(originalTransactionIds: [String], appAccountToken: String?) throws(NotificationStoreError)
        -> [CustomerHistoryRecord]
    {
        try deadLetterFile.withConnection(create: false) { (connection) throws(NotificationStoreError) -> [CustomerHistoryRecord] in
            let table = "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'customer_history'"
            guard try connection.scalarText(table) != nil else { return [] }
            var found: [String: CustomerHistoryRecord] = [:]
            func collect(_ condition: String, _ value: String) throws(NotificationStoreError) {
                let statement = try connection.statement(
                    "SELECT \(NotificationBackfillSchema.historyColumns) FROM customer_history WHERE \(condition) = ?1")
                defer { statement.reset() }
                try statement.bind(1, value)
                while try statement.step() {
                    guard let key = statement.text(0), let kind = statement.text(1).flatMap(CustomerHistoryRecord.Kind.init(rawValue:)),
                        let original = statement.text(2), let payload = statement.text(5)
                    else { throw NotificationStoreError(.schema, "a customer history row lacks its key, kind, transaction or token") }
                    found[key] = CustomerHistoryRecord(
                        key: key, kind: kind, originalTransactionId: original, appAccountToken: statement.text(3),
                        signedDate: statement.int64(4), signedPayload: payload)
                }
            }
            for original in Set(originalTransactionIds) { try collect("original_transaction_id", original) }
            if let token = StoredNotification.accountToken(appAccountToken) { try collect("app_account_token", token) }
            return found.keys.sorted().compactMap { found[$0] }
        }
    }
}
