import Foundation
import Internals
import JSON
import JWS
import Receipts
import ServerNotifications

/// `receipt-tool notifications`: what a notification store (filled by `serve --notifications-db`)
/// holds, and the subscription state it gives.
enum NotificationsCommand {
    static let subcommand = Subcommand(
        name: "notifications",
        summary: "List stored App Store Server Notifications and the subscription state they give.",
        help: """
            USAGE: receipt-tool notifications list --db <path>|<url> [--json] [--type <type>]
                                                [--original-transaction-id <id>] [--since <date>]
                                                [--limit <n>] [--payload]
                   receipt-tool notifications status --db <path>|<url> <original-transaction-id>
                                                [--at <date>] [--json]
                   receipt-tool notifications dead-letters list|retry|purge --db <path>|<url> …
                   receipt-tool notifications backfill (--since <date> [--until <date>] |
                                                --original-transaction-id <id>) --db <path>|<url> …

            The store is what `serve --notifications-db` writes: a SQLite file, or
            postgres://USER@HOST:PORT/DB. Both actions only read: a SQLite file is opened
            read-only (its bytes never change; another program's database or an empty file is
            refused as it is), PostgreSQL sessions are read-only. Passwords in the location are
            never printed. --config <file> names the store instead of --db (its "store"; --db
            takes precedence), and --app <bundle-id> keeps only that app's notifications (one of
            the configuration's apps, when a configuration is given).

            list      The notifications, ordered by signed date (not arrival). With --json, one
                      JSON object per line with the keys notificationUUID, notificationType,
                      subtype, signedDate, receivedDate, bundleId, environment, transactionId,
                      originalTransactionId (and appAppleId, productId, appAccountToken,
                      expiresDate, revocationDate, autoRenewStatus), null where one does not apply; ids are
                      the JWS's strings, dates milliseconds since 1970 as Apple writes them.
              --type <type>           Only this notificationType (SUBSCRIBED, DID_RENEW, …); one
                                      Apple does not document, and no stored notification has,
                                      is a usage error naming the valid types.
              --original-transaction-id <id>
                                      Only this subscription or purchase.
              --since <date>          Only notifications signed at or after the date
                                      (2026-11-29 or 2026-11-29T12:00:00Z).
              --limit <n>             At most n notifications.
              --payload               Add signedPayload, the JWS as received.

            status    The state of one original transaction derived from its notifications signed
                      at or before --at (default now), each part from the latest signed
                      transaction and renewal info: expiresDate, active, autoRenewStatus, revoked,
                      billing retry and grace period. Exit 1 when the store has no notification
                      of it (for the id of a later transaction, such as a renewal, the message
                      names its original transaction id).
              --at <date>             Read the state at this date.
              --json                  One JSON object.

            \(DeadLettersCommand.help)
            \(BackfillCommand.help)
            \(CustomerRebuildCommand.help)
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let action = arguments.first else { throw UsageError("notifications needs list, status or dead-letters") }
        if action == "dead-letters" { return try DeadLettersCommand.run(Array(arguments.dropFirst())) }
        if action == "backfill" { return try BackfillCommand.run(Array(arguments.dropFirst())) }
        let args = try Arguments(
            Array(arguments.dropFirst()),
            valued: ["--db", "--config", "--app", "--type", "--original-transaction-id", "--since", "--limit", "--at"],
            flagNames: ["--json", "--payload"])
        let configuration = try args.value("--config").map { try ServiceConfiguration.load($0) }
        if let configuration, let app = args.value("--app") { _ = try configuration.app(app) }
        guard let location = args.value("--db") ?? configuration?.store else {
            throw UsageError("notifications \(action) needs --db <path>|<url>, or --config with a store")
        }
        switch action {
        case "list":
            try args.requireNoOperands("list")
            if let stray = ["--at"].first(where: { args.value($0) != nil }) { throw UsageError("\(stray) is an option of status") }
            return try list(args, location: location)
        case "status":
            guard args.positional.count == 1 else { throw UsageError("status takes one original transaction id") }
            if let stray = ["--type", "--original-transaction-id", "--since", "--limit"].first(where: { args.value($0) != nil }) {
                throw UsageError("\(stray) is an option of list")
            }
            return try status(args, location: location, original: args.positional[0])
        default:
            throw UsageError("unknown action '\(action)': list or status")
        }
    }

    /// Opens the store at `location` (read-only unless `options` say otherwise), or fails naming it.
    static func open(_ location: String, options: NotificationStoreOptions = .reading) throws(ToolFailure) -> any NotificationStore {
        do throws(NotificationStoreError) {
            return try NotificationStores.open(location, options: options)
        } catch {
            throw ToolFailure("cannot open the notification store \(NotificationStores.displayed(location)): \(error.reason)")
        }
    }

    static func date(_ text: String, option: String) throws(UsageError) -> Date {
        let full = text.count == 10 ? text + "T00:00:00Z" : text
        guard let date = try? ReceiptDate.parse(full) else {
            throw UsageError("\(option) '\(text)' is not a date such as 2026-11-29 or 2026-11-29T12:00:00Z")
        }
        return date
    }

    static func list(_ args: Arguments, location: String) throws -> Int32 {
        var query = NotificationQuery(
            notificationType: args.value("--type"), originalTransactionId: args.value("--original-transaction-id"))
        if let text = args.value("--since") { query.signedSince = StoredNotification.milliseconds(try date(text, option: "--since")) }
        var limit: Int?
        if let text = args.value("--limit") {
            guard let value = Int(text), value >= 0 else { throw UsageError("--limit must be a number, found \(text)") }
            limit = value
        }
        let app = args.value("--app")
        // With --app the limit applies to that app's rows.
        if app == nil { query.limit = limit }
        let store = try open(location)
        var rows: [StoredNotification]
        do throws(NotificationStoreError) {
            rows = try store.notifications(query)
        } catch {
            throw ToolFailure("cannot read \(NotificationStores.displayed(location)): \(error.reason)")
        }
        if let app {
            rows.removeAll { $0.bundleId != app }
            if let limit { rows = Array(rows.prefix(limit)) }
        }
        // A type Apple does not document, and that no stored notification has, is a mistake,
        // not an empty answer (a type Apple adds later is listed once a notification has it).
        if let type = query.notificationType, rows.isEmpty, !NotificationType.known.contains(NotificationType(rawValue: type)) {
            throw UsageError(
                "--type \(ManagementRequests.quoted(type)) is not a notification type: "
                    + NotificationType.known.map(\.rawValue).joined(separator: ", "))
        }
        let withPayload = args.flag("--payload")
        for row in rows {
            if args.flag("--json") {
                printOut(json(row, payload: withPayload))
            } else {
                var line =
                    "\(text(row.signedDate)) \(row.notificationType ?? "?")\(row.subtype.map { "/\($0)" } ?? "") \(row.notificationUUID)"
                if let original = row.originalTransactionId { line += " original=\(original)" }
                if let transaction = row.transactionId { line += " transaction=\(transaction)" }
                if let product = row.productId { line += " product=\(product)" }
                if let expires = row.expiresDate { line += " expires=\(text(expires))" }
                if withPayload { line += " \(row.signedPayload)" }
                printOut(TerminalEscaping.escaped(line))
            }
        }
        if !args.flag("--json") { printError("\(rows.count) notification\(rows.count == 1 ? "" : "s")") }
        return ExitStatus.success
    }

    /// One notification as a JSON line.
    static func json(_ row: StoredNotification, payload: Bool) -> String {
        var json = JSONWriter(indent: 0)
        json.beginObject()
        json.string("notificationUUID", row.notificationUUID)
        string(&json, "notificationType", row.notificationType)
        string(&json, "subtype", row.subtype)
        integer(&json, "signedDate", row.signedDate)
        integer(&json, "receivedDate", row.receivedDate)
        string(&json, "bundleId", row.bundleId)
        string(&json, "environment", row.environment)
        integer(&json, "appAppleId", row.appAppleId)
        string(&json, "transactionId", row.transactionId)
        string(&json, "originalTransactionId", row.originalTransactionId)
        string(&json, "productId", row.productId)
        string(&json, "appAccountToken", row.appAccountToken)
        integer(&json, "expiresDate", row.expiresDate)
        integer(&json, "revocationDate", row.revocationDate)
        integer(&json, "autoRenewStatus", row.autoRenewStatus)
        if payload { json.string("signedPayload", row.signedPayload) }
        json.endObject()
        return json.text
    }

    static func status(_ args: Arguments, location: String, original: String) throws -> Int32 {
        let at = try args.value("--at").map { try date($0, option: "--at") } ?? Date()
        let store = try open(location)
        let state: SubscriptionState?
        do throws(NotificationStoreError) {
            if let app = args.value("--app") {
                let rows = try store.notifications(NotificationQuery(originalTransactionId: original)).filter { $0.bundleId == app }
                state = SubscriptionState(originalTransactionId: original, notifications: rows, at: at)
            } else {
                state = try store.subscriptionState(originalTransactionId: original, at: at)
            }
        } catch {
            throw ToolFailure("cannot read \(NotificationStores.displayed(location)): \(error.reason)")
        }
        guard let state else {
            var message =
                "no notification of original transaction \(ManagementRequests.quoted(original)) signed by \(text(StoredNotification.milliseconds(at)))"
            // The id may be a later transaction's (a renewal): name the original to ask for.
            if let row = try? store.notifications(NotificationQuery(limit: 1, transactionId: original)).first,
                let other = row.originalTransactionId, other != original
            {
                message +=
                    "; \(ManagementRequests.quoted(original)) is a transaction of original transaction \(ManagementRequests.quoted(other)):"
                    + " ask 'notifications status \(ManagementRequests.quoted(other))'"
            }
            throw ToolFailure(message)
        }
        if args.flag("--json") {
            var json = JSONWriter(indent: 0)
            json.beginObject()
            json.string("originalTransactionId", state.originalTransactionId)
            json.number("at", String(state.date))
            json.bool("active", state.isActive)
            integer(&json, "expiresDate", state.expiresDate)
            integer(&json, "autoRenewStatus", state.autoRenewStatus)
            json.bool("revoked", state.isRevoked)
            integer(&json, "revocationDate", state.revocationDate)
            json.bool("inBillingRetryPeriod", state.isInBillingRetryPeriod)
            json.bool("inGracePeriod", state.isInGracePeriod)
            integer(&json, "gracePeriodExpiresDate", state.gracePeriodExpiresDate)
            string(&json, "productId", state.productId)
            string(&json, "latestTransactionId", state.latestTransactionId)
            integer(&json, "purchaseDate", state.purchaseDate)
            string(&json, "latestNotificationType", state.latestNotificationType)
            string(&json, "latestSubtype", state.latestSubtype)
            json.number("notificationCount", String(state.notificationCount))
            json.endObject()
            printOut(json.text)
        } else {
            /// One line of the state, escaped whole (ids and names come from stored notifications).
            func show(_ line: String) { printOut(TerminalEscaping.escaped(line)) }
            show("original transaction \(state.originalTransactionId) at \(text(state.date))")
            show("  \(state.isActive ? "active" : "not active")\(state.isRevoked ? ", revoked \(text(state.revocationDate))" : "")")
            show("  product:        \(state.productId ?? "-")  latest transaction \(state.latestTransactionId ?? "-")")
            show("  expires:        \(text(state.expiresDate))")
            show("  auto-renew:     \(state.autoRenewStatus.map { $0 == 1 ? "on" : $0 == 0 ? "off" : String($0) } ?? "-")")
            if state.isInBillingRetryPeriod {
                show("  billing retry\(state.isInGracePeriod ? ", grace period until \(text(state.gracePeriodExpiresDate))" : "")")
            }
            show(
                "  from \(state.notificationCount) notification\(state.notificationCount == 1 ? "" : "s"), the latest \(state.latestNotificationType ?? "?")\(state.latestSubtype.map { "/\($0)" } ?? "")"
            )
        }
        return ExitStatus.success
    }

    static func string(_ json: inout JSONWriter, _ key: String, _ value: String?) {
        if let value { json.string(key, value) } else { json.null(key) }
    }

    static func integer(_ json: inout JSONWriter, _ key: String, _ value: Int64?) {
        if let value { json.number(key, String(value)) } else { json.null(key) }
    }

    /// Milliseconds as RFC 3339 UTC (`-` for none).
    static func text(_ milliseconds: Int64?) -> String {
        guard let milliseconds else { return "-" }
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        var formatter = Date.ISO8601FormatStyle()
        formatter.timeZone = .gmt
        return date.formatted(formatter)
    }
}
