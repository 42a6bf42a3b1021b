import Foundation
import Internals
import JSON
import ReceiptServer
import ReceiptVerification
import ServerNotifications
import VerifyReceipt

/// `receipt-tool notifications backfill`: restores the notifications a store is missing from Get
/// Notification History (see `NotificationsCommand`'s help).
enum BackfillCommand {
    static let help = """
        backfill --since <date> [--until <date>] --db <location>|--config <file> [--app <bundle-id>]
                 --issuer-id <id> --key-id <kid> --private-key <file.p8> --bundle-id <bid>
                 [--environment production|sandbox] [--base-url <url>] [--anchor <anchor>]...
                 [--app-apple-id <n>] [--policy appstore|xcode] [--max-pages <n>]
                 [--max-seconds <s>] [--json]
                  Pages Get Notification History for notifications signed in [--since, --until)
                  (--until: default now, or the end of an interrupted backfill with the same
                  --since), verifies every entry as serve verifies a delivery (--bundle-id,
                  --app-apple-id, --environment, --anchor, --policy: serve's notification
                  options), stores those the store lacks (by notificationUUID) and keeps those
                  that fail as dead letters (source "notification-history") with their reason.
                  The page token is saved in the store after each page's rows are committed, so a
                  run that is interrupted resumes at the next page. Prints one line per restored
                  notification (notificationUUID, type, signedDate) and per dead letter, then a
                  summary on standard error; --json: one object per line, "event" restored,
                  deadLettered or summary. The API options are those of `api` (the key, --base-url,
                  --timeout, --max-attempts, --max-response-bytes). With --config, the app's
                  bundle id, app Apple id, anchors and policy fill in what the command line leaves
                  out. Bounds: --max-pages (default 1000) and --max-seconds (default 600) per run;
                  an entry signed outside the range, hasMore without a token or a repeated token
                  stop the run (exit 1) before anything of that page is stored.
        """

    static let valued: Set<String> = [
        "--since", "--until", "--db", "--config", "--app", "--issuer-id", "--key-id", "--private-key", "--bundle-id", "--environment",
        "--base-url", "--anchor", "--timeout", "--max-attempts", "--max-response-bytes", "--max-total-bytes", "--paging-deadline",
        "--revocation", "--ocsp-response", "--app-apple-id", "--policy", "--max-pages", "--max-seconds", "--original-transaction-id",
    ]

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments, valued: valued, flagNames: ["--json", "--legacy-host"])
        try args.requireNoOperands("backfill")
        let configuration = try args.value("--config").map { try ServiceConfiguration.load($0) }
        if let configuration {
            // The configured app fills in what the command line leaves out.
            let app = try configuration.app(args.value("--app") ?? args.value("--bundle-id"))
            if let bundle = args.value("--bundle-id"), bundle != app.bundleId {
                throw UsageError(
                    "--bundle-id \(ManagementRequests.quoted(bundle)) is not the app \(ManagementRequests.quoted(app.bundleId))")
            }
            var extra = args.value("--bundle-id") == nil ? ["--bundle-id", app.bundleId] : []
            if args.value("--app-apple-id") == nil, let id = app.appAppleId { extra += ["--app-apple-id", String(id)] }
            if args.values("--anchor").isEmpty { extra += app.anchors.flatMap { ["--anchor", $0] } }
            if args.value("--policy") == nil, let policy = app.policy { extra += ["--policy", policy] }
            args = try Arguments(arguments + extra, valued: valued, flagNames: ["--json", "--legacy-host"])
        }
        guard let location = args.value("--db") ?? configuration?.store else {
            throw UsageError("notifications backfill needs --db <path>|<url>, or --config with a store")
        }
        let environment = try ServeCommand.environment(args)
        if let configuration {
            let app = try configuration.app(args.value("--app") ?? args.value("--bundle-id"))
            let name = environment == .production ? "Production" : "Sandbox"
            if !app.environments.isEmpty, !app.environments.contains(name) {
                throw UsageError("the app \(ManagementRequests.quoted(app.bundleId)) is not configured for \(name)")
            }
        }
        let (verifier, expectations) = try ServeCommand.notificationVerification(
            args, settings: try VerificationSettings(options: args), environment: environment, option: "notifications backfill")
        if let original = args.value("--original-transaction-id") {
            if let stray = ["--since", "--until", "--max-pages", "--max-seconds"].first(where: { args.value($0) != nil }) {
                throw UsageError("\(stray) is not an option of backfill --original-transaction-id")
            }
            try APICommand.checkIdentifier(original)
            let client = try APICommand.makeClient(args)
            return try CustomerRebuildCommand.run(original: original, client: client, location: location, json: args.flag("--json"))
        }
        guard let sinceText = args.value("--since") else { throw UsageError("notifications backfill needs --since <date>") }
        let since = try NotificationsCommand.date(sinceText, option: "--since")
        let limits = try limits(args)
        let client = try APICommand.makeClient(args)
        let store = try NotificationsCommand.open(location, options: NotificationStoreOptions(create: true))
        defer { store.close() }
        guard let progress = NotificationStores.backfillProgress(of: store) else {
            throw ToolFailure("the store \(NotificationStores.displayed(location)) keeps no backfill progress")
        }
        let scope = "\(expectations.bundleIdentifier ?? "")/\(environment == .production ? "Production" : "Sandbox")"
        let start = StoredNotification.milliseconds(since)
        let end: Int64
        if let untilText = args.value("--until") {
            end = StoredNotification.milliseconds(try NotificationsCommand.date(untilText, option: "--until"))
        } else {
            // The end of an interrupted backfill with the same start, so that it resumes; else now.
            let saved = try read { () throws(NotificationStoreError) in try progress.backfillProgress(scope: scope, start: start) }
            end = saved.first { !$0.isComplete && $0.paginationToken != nil }?.range.end ?? StoredNotification.milliseconds(Date())
        }
        guard start < end else { throw UsageError("--since must be before --until (or now)") }
        let receiver = NotificationReceiver(
            verifier: verifier, expectations: expectations, store: store, deadLetters: NotificationStores.deadLetters(of: store))
        let backfill = NotificationBackfill(
            receiver: receiver, source: AppStoreNotificationHistory(client: client), progress: progress, limits: limits)
        let range = NotificationBackfillRange(scope: scope, start: start, end: end)
        let json = args.flag("--json")
        let tally = Locked(Tally())
        let outcome: Result<NotificationBackfillReport, NotificationStoreError> = try APICommand.blocking {
            do throws(NotificationStoreError) {
                return .success(try await backfill.run(range) { event in Self.show(event, json: json, tally: tally) })
            } catch {
                return .failure(error)
            }
        }
        let counts = tally.withLock { $0 }
        switch outcome {
        case .success(let report):
            summary(range, counts: counts, resumed: report.resumed, alreadyPresent: report.alreadyPresent, error: nil, json: json)
            return ExitStatus.success
        case .failure(let error):
            summary(range, counts: counts, resumed: nil, alreadyPresent: nil, error: error, json: json)
            return ExitStatus.failure
        }
    }

    /// What the events of a run added up to (an interrupted run has no report).
    struct Tally: Sendable {
        var pages = 0
        var lastPage = 0
        var restored = 0
        var deadLettered = 0
    }

    static func limits(_ args: Arguments) throws(UsageError) -> NotificationBackfill.Limits {
        var limits = NotificationBackfill.Limits()
        if let text = args.value("--max-pages") {
            guard let value = Int(text), (1...1_000_000).contains(value) else {
                throw UsageError("--max-pages must be 1-1000000, found \(text)")
            }
            limits.maximumPages = value
        }
        if let text = args.value("--max-seconds") {
            guard let value = Double(text), value > 0, value <= 86_400 else {
                throw UsageError("--max-seconds must be 0-86400 seconds, found \(text)")
            }
            limits.maximumDuration = .milliseconds(Int64(value * 1000))
        }
        return limits
    }

    static func read<T>(_ body: () throws(NotificationStoreError) -> T) throws(ToolFailure) -> T {
        do throws(NotificationStoreError) {
            return try body()
        } catch {
            throw ToolFailure("cannot read the backfill progress: \(error.reason)")
        }
    }

    /// Prints one event (every string from the history escaped) and counts it.
    static func show(_ event: NotificationBackfillEvent, json: Bool, tally: Locked<Tally>) {
        switch event {
        case .restored(let entry):
            tally.withLock { $0.restored += 1 }
            if json {
                var writer = JSONWriter(indent: 0)
                writer.beginObject()
                writer.string("event", "restored")
                writer.string("notificationUUID", entry.notificationUUID)
                NotificationsCommand.string(&writer, "notificationType", entry.notificationType)
                NotificationsCommand.string(&writer, "subtype", entry.subtype)
                NotificationsCommand.integer(&writer, "signedDate", entry.signedDate)
                writer.endObject()
                printOut(writer.text)
            } else {
                let type = [entry.notificationType, entry.subtype].compactMap { $0 }.joined(separator: "/")
                printOut(
                    "restored \(ManagementRequests.quoted(entry.notificationUUID)) \(ManagementRequests.quoted(type.isEmpty ? "-" : type)) \(NotificationsCommand.text(entry.signedDate))"
                )
            }
        case .rejected(let kept):
            tally.withLock { $0.deadLettered += 1 }
            if json {
                var writer = JSONWriter(indent: 0)
                writer.beginObject()
                writer.string("event", "deadLettered")
                NotificationsCommand.integer(&writer, "deadLetterId", kept.deadLetterId)
                writer.string("check", kept.rejection.check.rawValue)
                writer.string("reason", kept.rejection.reason)
                NotificationsCommand.string(&writer, "notificationUUID", kept.unverifiedNotificationUUID)
                writer.endObject()
                printOut(writer.text)
            } else {
                let id = kept.deadLetterId.map { "dead letter \($0)" } ?? "not kept"
                printOut(
                    "dead-lettered (\(id)) \(kept.rejection.check.rawValue): \(ManagementRequests.quoted(kept.rejection.reason))")
            }
        case .page(let number, _):
            tally.withLock {
                $0.pages += 1
                $0.lastPage = number
            }
        }
    }

    static func summary(
        _ range: NotificationBackfillRange, counts: Tally, resumed: Bool?, alreadyPresent: Int?, error: NotificationStoreError?, json: Bool
    ) {
        if json {
            var writer = JSONWriter(indent: 0)
            writer.beginObject()
            writer.string("event", "summary")
            writer.number("since", String(range.start))
            writer.number("until", String(range.end))
            writer.number("pages", String(counts.pages))
            writer.number("restored", String(counts.restored))
            NotificationsCommand.integer(&writer, "alreadyPresent", alreadyPresent.map(Int64.init))
            writer.number("deadLettered", String(counts.deadLettered))
            if let resumed { writer.bool("resumed", resumed) }
            writer.bool("complete", error == nil)
            NotificationsCommand.string(&writer, "error", error.map(\.description))
            writer.endObject()
            printOut(writer.text)
        }
        var line = "backfill [\(NotificationsCommand.text(range.start)), \(NotificationsCommand.text(range.end))): "
        line += "\(counts.pages) page\(counts.pages == 1 ? "" : "s")"
        if resumed == true { line += " (resumed)" }
        line += ", \(counts.restored) restored"
        if let alreadyPresent { line += ", \(alreadyPresent) already stored" }
        line += ", \(counts.deadLettered) dead-lettered"
        if let error {
            line += "; stopped after page \(counts.lastPage): \(TerminalEscaping.escaped(error.description))"
            line += " (pages done stay done: run again to resume)"
        }
        printError(line)
    }
}
