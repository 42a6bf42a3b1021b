import Foundation

/// The customer history of a ``PostgresNotificationStore``: table `customer_history` of the same
/// database, the records of one rebuild inserted in one statement.
extension PostgresNotificationStore: CustomerHistoryStore {
    /// Commits the new records (500 a statement, each statement atomic); returns how many were new.
    public func storeCustomerHistory(_ records: [CustomerHistoryRecord]) throws(NotificationStoreError) -> Int {
        try options.requireWritable(location)
        let deadline = options.makeOperationDeadline()
        let now = StoredNotification.milliseconds(Date())
        var added = 0
        // 500 records (3,500 parameters) a statement: far below PostgreSQL's 65,535.
        var offset = 0
        while offset < records.count {
            let chunk = Array(records[offset..<min(records.count, offset + 500)])
            offset += chunk.count
            added += try insertHistory(chunk, storedDate: now, deadline: deadline)
        }
        return added
    }

    /// Inserts up to 500 records in one statement; returns how many were new.
    private func insertHistory(
        _ records: [CustomerHistoryRecord], storedDate now: Int64, deadline: ContinuousClock.Instant
    ) throws(NotificationStoreError) -> Int {
        var parameters: [PostgresParameter] = []
        var rows: [String] = []
        for (index, record) in records.enumerated() {
            let base = index * 7
            rows.append("(" + (1...7).map { "$\(base + $0)" }.joined(separator: ", ") + ")")
            parameters += [
                .text(DeadLetter.storable(record.key)), .text(record.kind.rawValue),
                .text(DeadLetter.storable(record.originalTransactionId)),
                .text(record.appAccountToken.map(DeadLetter.storable)), .literal(record.signedDate.map(String.init)),
                .text(record.signedPayload), .literal(String(now)),
            ]
        }
        let sql =
            "INSERT INTO customer_history (\(NotificationBackfillSchema.historyColumns), stored_date) VALUES "
            + rows.joined(separator: ", ") + " ON CONFLICT (record_key) DO NOTHING RETURNING record_key"
        let result = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) in
            try connection.execute(sql, parameters, deadline: deadline)
        }
        return result.rows.count
    }

    /// The records of these original transactions and of `appAccountToken`, by key.
    public func customerHistory(originalTransactionIds: [String], appAccountToken: String?) throws(NotificationStoreError)
        -> [CustomerHistoryRecord]
    {
        let deadline = options.makeOperationDeadline()
        let originals = Array(Set(originalTransactionIds)).sorted()
        var conditions: [String] = []
        var parameters: [PostgresParameter] = []
        for original in originals {
            parameters.append(.text(original))
            conditions.append("original_transaction_id = $\(parameters.count)")
        }
        if let token = StoredNotification.accountToken(appAccountToken) {
            parameters.append(.text(token))
            conditions.append("app_account_token = $\(parameters.count)")
        }
        guard !conditions.isEmpty else { return [] }
        let sql =
            "SELECT \(NotificationBackfillSchema.historyColumns) FROM customer_history WHERE "
            + conditions.joined(separator: " OR ") + " ORDER BY record_key"
        let result = try withRetry(deadline: deadline) { (connection) throws(NotificationStoreError) -> PostgresRows? in
            guard try connection.execute("SELECT to_regclass('customer_history') IS NOT NULL", deadline: deadline).scalar == "t" else {
                return nil
            }
            return try connection.execute(sql, parameters, deadline: deadline)
        }
        return try (result?.rows ?? []).map { (values) throws(NotificationStoreError) -> CustomerHistoryRecord in
            func text(_ index: Int) -> String? { index < values.count ? values[index] : nil }
            guard let key = text(0), let kind = text(1).flatMap(CustomerHistoryRecord.Kind.init(rawValue:)), let original = text(2),
                let payload = text(5)
            else { throw NotificationStoreError(.schema, "a customer history row lacks its key, kind, transaction or token") }
            return CustomerHistoryRecord(
                key: key, kind: kind, originalTransactionId: original, appAccountToken: text(3), signedDate: text(4).flatMap { Int64($0) },
                signedPayload: payload)
        }
    }
}
