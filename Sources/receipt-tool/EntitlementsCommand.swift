import Foundation
import JSON
import ServerNotifications

/// `receipt-tool entitlements`: what a customer is entitled to at a date, from the notifications
/// a store holds (see `EntitlementMap` for how each entitlement is answered).
enum EntitlementsCommand {
    static let subcommand = Subcommand(
        name: "entitlements",
        summary: "Answer what a customer is entitled to, from stored notifications.",
        help: """
            USAGE: receipt-tool entitlements (--db <path>|<url> | --config <file>) [--app <bundle-id>]
                                             (--app-account-token <uuid> | --original-transaction-id <id>)
                                             [--entitlement NAME=PRODUCT_ID[,PRODUCT_ID…] …] [--at <date>] [--json]

            Every configured entitlement, active or not, with until when and why: subscribed,
            purchased (a non-consumable), gracePeriod (active until the grace period ends),
            familyShared (active), billingRetry, refunded, revoked (REVOKE of a family-shared
            purchase), consumed (a consumable: reported once, by its latest purchase, never
            active), expired, replaced (the subscription moved to another product of its group),
            none (nothing stored grants it). Derived from the notifications signed at or before
            --at, by what each payload means, not by arrival order. The store is only read.

              --db <path>|<url>       The store `serve` writes (SQLite file or postgres://…).
              --config <file>         A configuration file ({"store": …, "apps": [{"bundleId": …,
                                      "entitlements": {"NAME": ["PRODUCT_ID", …]}, …}]}, unknown
                                      keys refused): its store (unless --db) and the app's
                                      entitlements.
              --app <bundle-id>       The app of the configuration (needed when it has several);
                                      only that app's notifications count.
              --app-account-token <uuid>
                                      The customer, by the appAccountToken the app set on purchases
                                      (any case).
              --original-transaction-id <id>
                                      One subscription group's chain or one purchase.
              --entitlement NAME=PRODUCT_ID[,PRODUCT_ID…]
                                      An entitlement and the products granting it (repeatable;
                                      instead of the configuration's).
              --at <date>             Answer at this date (2026-11-29 or 2026-11-29T12:00:00Z;
                                      default now).
              --json                  One object: {"entitlements": [{"entitlement", "active",
                                      "expiresDate" (RFC 3339 or null), "reason", "productId",
                                      "originalTransactionId", "transactionId"}]}.
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(
            arguments, valued: ["--db", "--config", "--app", "--app-account-token", "--original-transaction-id", "--entitlement", "--at"],
            flagNames: ["--json"])
        try args.requireNoOperands("entitlements")
        for option in ["--db", "--config", "--app", "--app-account-token", "--original-transaction-id", "--at"]
        where args.values(option).count > 1 {
            throw UsageError("\(option) is given twice")
        }
        let token = args.value("--app-account-token")
        let original = args.value("--original-transaction-id")
        guard (token == nil) != (original == nil) else {
            throw UsageError("entitlements needs one of --app-account-token <uuid> or --original-transaction-id <id>")
        }
        if let token, UUID(uuidString: token) == nil {
            throw UsageError("--app-account-token \(ManagementRequests.quoted(token)) is not a UUID")
        }
        let at = try args.value("--at").map { try NotificationsCommand.date($0, option: "--at") } ?? Date()
        let configuration = try args.value("--config").map { try ServiceConfiguration.load($0) }
        let app = try configuration?.app(args.value("--app"))
        if configuration == nil, args.value("--app") != nil, args.values("--entitlement").isEmpty {
            throw UsageError("--app without --config needs --entitlement")
        }
        let map = try entitlementMap(definitions: args.values("--entitlement"), app: app)
        guard let location = args.value("--db") ?? configuration?.store else {
            throw UsageError("entitlements needs --db <path>|<url>, or --config with a store")
        }
        let store = try NotificationsCommand.open(location)
        defer { store.close() }
        var rows: [StoredNotification]
        do throws(NotificationStoreError) {
            rows = try store.notifications(NotificationQuery(originalTransactionId: original, appAccountToken: token))
            // What `notifications backfill --original-transaction-id` kept (renewal infos name no app).
            var originals = rows.compactMap(\.originalTransactionId)
            if let original { originals.append(original) }
            let history = try store.customerHistoryRows(originalTransactionIds: originals, appAccountToken: token)
            if let bundleId = app?.bundleId ?? args.value("--app") { rows.removeAll { $0.bundleId != bundleId } }
            rows += history.filter { row in (app?.bundleId ?? args.value("--app")).map { row.bundleId == nil || row.bundleId == $0 } ?? true
            }
        } catch {
            throw ToolFailure("cannot read \(NotificationStores.displayed(location)): \(error.reason)")
        }
        let answers = map.answers(notifications: rows, at: at)
        if args.flag("--json") {
            printOut(json(answers))
        } else {
            for answer in answers {
                var line = "\(answer.entitlement): \(answer.isActive ? "active" : "inactive") (\(answer.reason.rawValue))"
                if let expires = answer.expiresDate { line += " \(answer.isActive ? "until" : "since") \(rfc3339(expires))" }
                if let product = answer.productId { line += " product=\(product)" }
                if let chain = answer.originalTransactionId { line += " original=\(chain)" }
                printOut(line)
            }
        }
        return ExitStatus.success
    }

    /// The entitlements from `--entitlement` definitions, else from the configuration's app.
    static func entitlementMap(definitions: [String], app: ServiceConfiguration.App?) throws -> EntitlementMap {
        if !definitions.isEmpty {
            if app?.entitlements != nil { throw UsageError("--entitlement and the configuration's entitlements: give one of them") }
            do throws(NotificationStoreError) {
                return try EntitlementMap(definitions: definitions)
            } catch {
                throw UsageError("--entitlement: \(error.reason)")
            }
        }
        guard let app else { throw UsageError("entitlements needs --entitlement NAME=PRODUCT_ID[,…] or --config with entitlements") }
        guard let map = app.entitlements else {
            throw UsageError("app \(ManagementRequests.quoted(app.bundleId)) of the configuration has no entitlements")
        }
        return map
    }

    /// `{"entitlements": [...]}`.
    static func json(_ answers: [EntitlementAnswer]) -> String {
        var json = JSONWriter(indent: 0)
        json.beginObject()
        json.beginArray("entitlements")
        for answer in answers {
            json.beginObject()
            json.string("entitlement", answer.entitlement)
            json.bool("active", answer.isActive)
            NotificationsCommand.string(&json, "expiresDate", answer.expiresDate.map(rfc3339))
            json.string("reason", answer.reason.rawValue)
            NotificationsCommand.string(&json, "productId", answer.productId)
            NotificationsCommand.string(&json, "originalTransactionId", answer.originalTransactionId)
            NotificationsCommand.string(&json, "transactionId", answer.transactionId)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return json.text
    }

    /// Milliseconds since 1970 as RFC 3339 UTC, with milliseconds when they are not zero.
    static func rfc3339(_ milliseconds: Int64) -> String {
        var style = Date.ISO8601FormatStyle(includingFractionalSeconds: milliseconds % 1000 != 0)
        style.timeZone = .gmt
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(style)
    }
}
