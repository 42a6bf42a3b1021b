import Foundation
import JSON
import ReceiptServer
import ReceiptVerification
import ServerNotifications
import VerifyReceipt

/// `receipt-tool notifications dead-letters list|retry|purge`: the bodies `serve` refused, kept
/// in the notification store (see `NotificationsCommand`'s help).
enum DeadLettersCommand {
    static let help = """
        dead-letters list --db <location>|--config <file> [--json] [--pending]
                  The bodies serve did not acknowledge as valid notifications, oldest first: id,
                  received date, source address, the failed check and reason, and the bundle id,
                  notificationUUID and type read WITHOUT verification from the body (untrusted,
                  escaped). --json: one object per line with id, receivedDate (milliseconds),
                  check, reason, bundleId, notificationUUID, notificationType (null when
                  unreadable), sourceAddress, bodyLength, truncated, retried, retriedDate,
                  retriedNotificationUUID. --pending: only letters no retry has stored.
        dead-letters retry --db <location> --bundle-id <id> [--app-apple-id <n>]
                  [--environment production|sandbox] [--anchor <anchor>]... [--policy appstore|xcode]
        dead-letters retry --config <file>
                  Verifies every pending letter again under these options (serve's notification
                  options, today's configuration), or with the configuration file's apps, each
                  letter verified as the app its payload names (as serve --config does), and
                  stores those that pass; each is then marked retried, so a second retry stores
                  nothing. Exit 1 when the store failed.
        dead-letters purge --db <location>|--config <file> [--before <date>]
                  Deletes the letters received before the date (default: every letter).
        serve keeps at most --dead-letters-max-count letters (default 10000) for at most
        --dead-letters-max-age days (default 30), deleting the oldest as new ones arrive.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let action = arguments.first else { throw UsageError("dead-letters needs list, retry or purge") }
        let args = try Arguments(
            Array(arguments.dropFirst()),
            valued: ["--db", "--config", "--before", "--bundle-id", "--app-apple-id", "--environment", "--anchor", "--policy"],
            flagNames: ["--json", "--pending"])
        try args.requireNoOperands("dead-letters \(action)")
        let configFile = args.value("--config")
        let configuration = try configFile.map { try ServiceConfiguration.load($0) }
        guard let location = args.value("--db") ?? configuration?.store else {
            throw UsageError("dead-letters \(action) needs --db <path>|<url>, or --config with a store")
        }
        let retryOptions = ["--bundle-id", "--app-apple-id", "--environment", "--anchor", "--policy"]
        if configuration != nil, let mixed = retryOptions.first(where: { args.value($0) != nil }) {
            throw UsageError("--config and \(mixed) cannot be mixed: the configuration file names the apps")
        }
        switch action {
        case "list":
            if let stray = (retryOptions + ["--before"]).first(where: { args.value($0) != nil }) {
                throw UsageError("\(stray) is not an option of dead-letters list")
            }
            return try list(args, location: location)
        case "retry":
            if let stray = ["--before"].first(where: { args.value($0) != nil }) ?? (args.flag("--json") ? "--json" : nil) {
                throw UsageError("\(stray) is not an option of dead-letters retry")
            }
            if let configuration, let configFile {
                let router = try configuration.router(settings: try VerificationSettings(options: args), file: configFile)
                return try retry(router: router, location: location)
            }
            return try retry(args, location: location)
        case "purge":
            if let stray = retryOptions.first(where: { args.value($0) != nil }) ?? (args.flag("--json") ? "--json" : nil) {
                throw UsageError("\(stray) is not an option of dead-letters purge")
            }
            return try purge(args, location: location)
        default:
            throw UsageError("unknown dead-letters action '\(action)': list, retry or purge")
        }
    }

    /// The store, opened as `options` say, and its dead letters.
    static func open(_ location: String, options: NotificationStoreOptions) throws(ToolFailure) -> (
        any NotificationStore, any DeadLetterStore
    ) {
        let store = try NotificationsCommand.open(location, options: options)
        guard let letters = NotificationStores.deadLetters(of: store) else {
            throw ToolFailure("the store \(NotificationStores.displayed(location)) keeps no dead letters")
        }
        return (store, letters)
    }

    static func list(_ args: Arguments, location: String) throws -> Int32 {
        let (store, letters) = try open(location, options: .reading)
        defer { store.close() }
        let rows: [DeadLetter]
        do throws(NotificationStoreError) {
            rows = try letters.deadLetters(DeadLetterQuery(pendingOnly: args.flag("--pending")))
        } catch {
            throw ToolFailure("cannot read \(NotificationStores.displayed(location)): \(error.reason)")
        }
        for letter in rows {
            if args.flag("--json") {
                printOut(json(letter))
            } else {
                let fields = letter.unverified
                var line = "\(letter.id) \(NotificationsCommand.text(letter.receivedDate)) \(letter.check)"
                line += letter.isRetried ? " retried=\(ManagementRequests.quoted(letter.retriedNotificationUUID ?? "?"))" : " pending"
                if let bundle = fields.bundleId { line += " bundleId=\(ManagementRequests.quoted(bundle))" }
                if let uuid = fields.notificationUUID { line += " notificationUUID=\(ManagementRequests.quoted(uuid))" }
                if let type = fields.notificationType { line += " type=\(ManagementRequests.quoted(type))" }
                if let source = letter.sourceAddress { line += " from=\(ManagementRequests.quoted(source))" }
                line +=
                    " \(letter.bodyLength) bytes\(letter.isTruncated ? " (truncated)" : ""): \(ManagementRequests.quoted(letter.reason))"
                printOut(line)
            }
        }
        if !args.flag("--json") { printError("\(rows.count) dead letter\(rows.count == 1 ? "" : "s")") }
        return ExitStatus.success
    }

    /// One letter as a JSON line (every string escaped by the writer).
    static func json(_ letter: DeadLetter) -> String {
        let fields = letter.unverified
        var json = JSONWriter(indent: 0)
        json.beginObject()
        json.number("id", String(letter.id))
        json.number("receivedDate", String(letter.receivedDate))
        json.string("check", letter.check)
        json.string("reason", letter.reason)
        NotificationsCommand.string(&json, "bundleId", fields.bundleId)
        NotificationsCommand.string(&json, "notificationUUID", fields.notificationUUID)
        NotificationsCommand.string(&json, "notificationType", fields.notificationType)
        NotificationsCommand.string(&json, "sourceAddress", letter.sourceAddress)
        json.number("bodyLength", String(letter.bodyLength))
        json.bool("truncated", letter.isTruncated)
        json.bool("retried", letter.isRetried)
        NotificationsCommand.integer(&json, "retriedDate", letter.retriedDate)
        NotificationsCommand.string(&json, "retriedNotificationUUID", letter.retriedNotificationUUID)
        json.endObject()
        return json.text
    }

    static func retry(_ args: Arguments, location: String) throws -> Int32 {
        let environment = try ServeCommand.environment(args)
        let (verifier, expectations) = try ServeCommand.notificationVerification(
            args, settings: try VerificationSettings(options: args), environment: environment, option: "dead-letters retry")
        return try retry(
            router: NotificationRouter(only: NotificationRoute(verifier: verifier, expectations: expectations)), location: location)
    }

    /// Retries every pending letter of the store at `location` with `router` (one app's
    /// verification, or the configured apps').
    static func retry(router: NotificationRouter, location: String) throws -> Int32 {
        let (store, letters) = try open(location, options: NotificationStoreOptions(create: false))
        defer { store.close() }
        let receiver = NotificationReceiver(router: router, store: store, deadLetters: letters)
        let pending: [DeadLetter]
        do throws(NotificationStoreError) {
            pending = try letters.deadLetters(DeadLetterQuery(pendingOnly: true))
        } catch {
            throw ToolFailure("cannot read \(NotificationStores.displayed(location)): \(error.reason)")
        }
        var counts: [String: Int] = [:]
        for letter in pending {
            let outcome = receiver.retry(letter)
            counts[outcome.name, default: 0] += 1
            switch outcome {
            case .stored(let row), .duplicate(let row):
                printOut("\(letter.id) \(outcome.name) \(ManagementRequests.quoted(row.notificationUUID))")
            case .stillRejected(let rejection):
                printOut("\(letter.id) rejected \(rejection.check): \(ManagementRequests.quoted(rejection.reason))")
            case .alreadyRetried:
                printOut("\(letter.id) alreadyRetried")
            case .unavailable(let error):
                printOut("\(letter.id) unavailable: \(error.reason)")
            }
        }
        let summary = ["stored", "duplicate", "rejected", "alreadyRetried", "unavailable"].map { "\(counts[$0, default: 0]) \($0)" }
        printError("\(pending.count) pending dead letter\(pending.count == 1 ? "" : "s"): " + summary.joined(separator: ", "))
        return counts["unavailable", default: 0] > 0 ? ExitStatus.failure : ExitStatus.success
    }

    static func purge(_ args: Arguments, location: String) throws -> Int32 {
        let before = try args.value("--before").map { try NotificationsCommand.date($0, option: "--before") }
        let (store, letters) = try open(location, options: NotificationStoreOptions(create: false))
        defer { store.close() }
        let count: Int
        do throws(NotificationStoreError) {
            count = try letters.purgeDeadLetters(before: before.map(StoredNotification.milliseconds))
        } catch {
            throw ToolFailure("cannot purge \(NotificationStores.displayed(location)): \(error.reason)")
        }
        printOut("purged \(count) dead letter\(count == 1 ? "" : "s")")
        return ExitStatus.success
    }
}
