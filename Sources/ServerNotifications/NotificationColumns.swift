/// The columns of the `notifications` table, shared by the SQLite and PostgreSQL stores (same names,
/// same order), and the SQL both use apart from their types.
enum NotificationColumns {
    /// The column names after `id`, in ``StoredNotification``'s order.
    static let names = [
        "notification_uuid", "notification_type", "subtype", "signed_date", "received_date", "bundle_id", "environment",
        "app_apple_id", "transaction_id", "original_transaction_id", "product_id", "purchase_date", "expires_date",
        "revocation_date", "transaction_signed_date", "auto_renew_status", "is_in_billing_retry_period",
        "grace_period_expires_date", "renewal_signed_date", "signed_payload", "app_account_token", "product_type",
        "in_app_ownership_type", "payload_format", "payload_body", "payload_sha256",
    ]

    /// `a, b, c, …`.
    static let list = names.joined(separator: ", ")

    /// The columns a SELECT reads for `query`: ``list``, or, for a query that does not want the
    /// signed payloads, the same with an empty `signed_payload` and no compact form (nothing
    /// fetched or rebuilt).
    static func selected(_ query: NotificationQuery) -> String {
        guard !query.includesSignedPayload else { return list }
        return names.map { name in
            switch name {
            case "signed_payload": "'' AS signed_payload"
            case "payload_format", "payload_body", "payload_sha256": "NULL AS \(name)"
            default: name
            }
        }.joined(separator: ", ")
    }

    /// The insert of a row that keeps the row already stored under its `notification_uuid`, with
    /// parameters written by `placeholder` (1-based: `?1` for SQLite, `$1` for PostgreSQL).
    static func insert(placeholder: (Int) -> String) -> String {
        "INSERT INTO notifications (\(list)) VALUES (" + (1...names.count).map(placeholder).joined(separator: ", ")
            + ") ON CONFLICT (notification_uuid) DO NOTHING"
    }

    /// The expression rows are ordered by: the signed date, or the received date without one.
    static let orderKey = "COALESCE(signed_date, transaction_signed_date, renewal_signed_date, received_date)"

    /// A column's value of a row, as the text a database parameter takes (nil for NULL).
    enum Value {
        case text(String?)
        case integer(Int64?)
        case boolean(Bool?)
        case bytes([UInt8]?)
    }

    /// The values of `row` in ``names`` order: its `signedPayload` as text, or, with `compact`,
    /// an empty `signed_payload` and the compact form beside it (``CompactPayload``).
    static func values(_ row: StoredNotification, compact: CompactPayload? = nil) -> [Value] {
        let payload: [Value] =
            if let compact {
                [.text(""), .integer(CompactPayload.format), .bytes(compact.body), .bytes(compact.digest)]
            } else {
                [.text(row.signedPayload), .integer(nil), .bytes(nil), .bytes(nil)]
            }
        return [
            .text(row.notificationUUID), .text(row.notificationType), .text(row.subtype), .integer(row.signedDate),
            .integer(row.receivedDate), .text(row.bundleId), .text(row.environment), .integer(row.appAppleId),
            .text(row.transactionId), .text(row.originalTransactionId), .text(row.productId), .integer(row.purchaseDate),
            .integer(row.expiresDate), .integer(row.revocationDate), .integer(row.transactionSignedDate),
            .integer(row.autoRenewStatus), .boolean(row.isInBillingRetryPeriod), .integer(row.gracePeriodExpiresDate),
            .integer(row.renewalSignedDate), payload[0], .text(row.appAccountToken), .text(row.productType),
            .text(row.inAppOwnershipType), payload[1], payload[2], payload[3],
        ]
    }

    /// Refuses values no store can keep exactly: text holding U+0000 (PostgreSQL's `text` cannot
    /// hold it, so both stores refuse it, before writing anything, rather than one keeping it and
    /// the other cutting it).
    static func check(_ values: [Value], isRow: Bool = true) throws(NotificationStoreError) {
        for (index, value) in values.enumerated() {
            guard case .text(let text?) = value, text.utf8.contains(0) else { continue }
            let name = isRow && index < names.count ? names[index] : "a query value"
            throw NotificationStoreError(.unsupportedValue, "\(name) holds U+0000, which the store cannot keep")
        }
    }

    /// The WHERE clause and its parameters for `query`, with parameters written by `placeholder`
    /// (1-based: `?1` for SQLite, `$1` for PostgreSQL) and rows ordered by the signed date, then by
    /// the `notificationUUID` in byte order (`uuidOrder`: the column with the byte-order collation
    /// of the database), so that both stores give one order that does not depend on arrival.
    static func filter(_ query: NotificationQuery, uuidOrder: String, placeholder: (Int) -> String) -> (sql: String, parameters: [Value]) {
        var conditions: [String] = []
        var parameters: [Value] = []
        func add(_ condition: (String) -> String, _ value: Value) {
            parameters.append(value)
            conditions.append(condition(placeholder(parameters.count)))
        }
        if let type = query.notificationType { add({ "notification_type = \($0)" }, .text(type)) }
        if let original = query.originalTransactionId { add({ "original_transaction_id = \($0)" }, .text(original)) }
        if let since = query.signedSince { add({ "\(orderKey) >= \($0)" }, .integer(since)) }
        if let uuid = query.notificationUUID { add({ "notification_uuid = \($0)" }, .text(uuid)) }
        if let transaction = query.transactionId { add({ "transaction_id = \($0)" }, .text(transaction)) }
        if let token = query.appAccountToken {
            // Every row of each original transaction a row of which carries the token (renewal
            // info alone may not): both lookups use an index.
            add(
                {
                    "original_transaction_id IN (SELECT original_transaction_id FROM notifications WHERE app_account_token = \($0)"
                        + " AND original_transaction_id IS NOT NULL)"
                }, .text(StoredNotification.accountToken(token)))
        }
        var sql = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        sql += " ORDER BY \(orderKey), \(uuidOrder)"
        if let limit = query.limit { sql += " LIMIT \(max(0, limit))" }
        return (sql, parameters)
    }

    /// A row from column readers (`text(i)`, `integer(i)`, `boolean(i)`, `bytes(i)` for the
    /// 0-based column `i` of ``names``): the notification, with its compact form still to be
    /// rebuilt (``CompactRows``) when it has one.
    static func row(text: (Int) -> String?, integer: (Int) -> Int64?, boolean: (Int) -> Bool?, bytes: (Int) -> [UInt8]?) -> ReadRow? {
        guard let uuid = text(0), let received = integer(4), let payload = text(19) else { return nil }
        var compact: ReadRow.Compact?
        if let format = integer(23), format != 0 {
            guard format == CompactPayload.format, let body = bytes(24), let digest = bytes(25) else {
                return ReadRow(notification: nil, uuid: uuid, compact: nil)
            }
            compact = ReadRow.Compact(body: body, digest: digest)
        }
        let notification = StoredNotification(
            notificationUUID: uuid, notificationType: text(1), subtype: text(2), signedDate: integer(3), receivedDate: received,
            bundleId: text(5), environment: text(6), appAppleId: integer(7), transactionId: text(8), originalTransactionId: text(9),
            productId: text(10), purchaseDate: integer(11), expiresDate: integer(12), revocationDate: integer(13),
            transactionSignedDate: integer(14), autoRenewStatus: integer(15), isInBillingRetryPeriod: boolean(16),
            gracePeriodExpiresDate: integer(17), renewalSignedDate: integer(18), appAccountToken: text(20), productType: text(21),
            inAppOwnershipType: text(22), signedPayload: payload)
        return ReadRow(notification: notification, uuid: uuid, compact: compact)
    }

    /// A row as read from a database, before its compact form (if any) is rebuilt.
    struct ReadRow {
        /// A compact row's stored form.
        struct Compact {
            var body: [UInt8]
            var digest: [UInt8]
        }

        /// The row (its `signedPayload` empty while ``compact`` is not nil); nil when its payload
        /// columns name a format this version does not know, or lack the compact form.
        var notification: StoredNotification?
        /// The row's `notificationUUID`, for errors.
        var uuid: String
        /// The compact form, when the row has one.
        var compact: Compact?
    }
}
