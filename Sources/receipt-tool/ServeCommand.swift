import Foundation
import HTTPServer
import Internals
import JWS
import ReceiptCrypto
import ReceiptServer
import ReceiptVerification
import Receipts
import ServerNotifications
import VerifyReceipt

/// `receipt-tool serve`: a local stand-in for Apple's verifyReceipt endpoint that verifies offline.
enum ServeCommand {
    static let subcommand = Subcommand(
        name: "serve",
        summary: "Answer POST /verifyReceipt like Apple did, and receive App Store Server Notifications V2.",
        help: """
            USAGE: receipt-tool serve [--host <address>] [--port <n>] [--environment production|sandbox]
                                      [--anchor <anchor>]... [--itunes-ca <file>] [--wwdr-ca <file>] [--shared-secret <secret>]
                                      [--at signed|now|<date>] [--policy appstore|xcode] [--max-connections <n>]
                                      [--max-connections-per-client <n>] [--trusted-proxy <address>]...
                                      [--max-body-bytes <n>] [--request-timeout <seconds>] [--quiet]
                                      [--log-format text|json]
                                      [--notifications-db <path>|postgres://USER@HOST:PORT/DB
                                       --bundle-id <id> [--app-apple-id <n>]
                                       [--notifications-path <path>] [--dead-letters-max-count <n>]
                                       [--dead-letters-max-age <days>]]
                                      [--retention-path <path> --retention-config <file.json> --app-apple-id <n>]
                   receipt-tool serve --config <file.json> [the options above but --anchor, --notifications-db,
                                      --bundle-id, --app-apple-id, --policy, --notifications-path, --retention-*]

            OPTIONS:
              --host <address>        Address to listen on (default 127.0.0.1; 0.0.0.0 for all).
              --port <n>              Port (default 8080; 0 picks a free one, printed at start).
              --environment <env>     Which Apple endpoint to stand in for: production (default)
                                      answers 21007 to sandbox receipts, sandbox answers 21008 to
                                      production receipts. Notifications must be of this
                                      environment too.
              --anchor <anchor>       A trust anchor (repeatable): 'apple' (the bundled Apple Inc.
                                      Root, G2 and G3), 'xcode' (the bundled StoreKit test
                                      certificate, with the Xcode policy) or a certificate file,
                                      DER or PEM. Default: apple. Transaction receipts chain to the
                                      same anchors.
              --itunes-ca <file>      The intermediate pinned for iOS 6 transaction receipts
                                      with version-2 signatures (default: the bundled Apple
                                      iTunes Store CA).
              --wwdr-ca <file>        The intermediate pinned for version-3 signatures (default:
                                      the bundled Apple WWDR CA of 2013).
              --shared-secret <s>     Require this "password" (21004 otherwise; subscriptions only
                                      when the request has none).
              --at <when>             Validation time of certificate chains, as in verify: 'signed'
                                      (default; also 'creation': an app receipt's creation date,
                                      a transaction receipt's purchase date, a notification's
                                      signedDate, as Apple's endpoint accepted receipts whose
                                      certificates have expired since), 'now', or a date
                                      (2026-11-29, 2026-11-29T12:00:00Z).
              --policy <policy>       appstore or xcode, as in verify, for receipts, notifications
                                      and real-time requests. Default: xcode when every anchor is
                                      'xcode', appstore otherwise.
              --max-connections <n>   Connections served at once (default 128; more get 503).
              --max-connections-per-client <n>
                                      Of those, at most this many from one client address (an
                                      IPv4 address or an IPv6 /64); more from it get 503 while
                                      others are served. Default 32; 0 turns the cap off.
              --trusted-proxy <address>
                                      An address exempt from the per-client cap (repeatable): a
                                      reverse proxy or load balancer in front, which carries many
                                      clients' connections and should limit them itself.
              --max-body-bytes <n>    Largest request body (default 4194304; larger get 413).
              --request-timeout <s>   Seconds allowed per request (default 10; slower get 408).
              --quiet                 Do not log requests to standard error. (Each log line is
                                      one line: text from a request, such as a JSON key in an
                                      error, is shown with control characters escaped.)
              --log-format <format>   text (default) or json: one JSON object per line (time,
                                      level, method, path, status, outcome, detail,
                                      remoteAddress), request text escaped.
            \(RevocationOption.help)
                                      Applies to receipts, notifications and real-time requests.
              -h, --help              Show help information.

            NOTIFICATIONS (App Store Server Notifications V2):
              --notifications-db <location>
                                      Receive notifications on POST /notifications and keep them
                                      in this store: a SQLite file (created with its schema when
                                      missing; one machine), or postgres://USER@HOST:PORT/DB for
                                      several instances sharing one PostgreSQL database (the
                                      schema is created when missing, safely by instances starting
                                      at once).
              --bundle-id <id>        The app's bundle id (required with --notifications-db).
              --app-apple-id <n>      The app's Apple id (required for production: checked on
                                      production notifications, as Apple does).
              --notifications-path <path>
                                      The route (default /notifications): an absolute path
                                      without query or fragment.
              --dead-letters-max-count <n>
                                      Keep at most this many dead letters (default 10000).
              --dead-letters-max-age <days>
                                      Keep dead letters at most this long (default 30).
              A notification is answered 200 only after it is committed (accepted, or a duplicate
              notificationUUID: stored once). A body that is not is kept as a dead letter (first
              256 KiB, reason, time, source address; see 'notifications dead-letters') and
              answered {"status":"rejected","check":…,"retry":…}: 400 when it is not Apple's (not
              a notification body, a bad signature), 500 when our configuration may be wrong (a
              chain to no --anchor, another bundle id, app Apple id or environment) so that Apple
              retries. 503 when the store cannot commit (Apple retries). GET /health commits a write to the store (deadline 2 s) and answers 503
              whenever a notification would get 503. A store that cannot be written (read-only
              file or directory, full disk, its file deleted or replaced) is reopened at the next
              request, so fixing the cause needs no restart. Database calls end within 0.8 x
              --request-timeout. SIGTERM checkpoints and closes the store: the SQLite file alone
              then holds every acknowledged notification.

            SEVERAL APPS AND ENVIRONMENTS (--config <file.json>):
              {"store": "PATH|postgres://…", "notificationsPath": "/notifications",
               "apps": [{"bundleId": "…", "appAppleId": 123, "environments": ["Production", "Sandbox"],
                         "anchors": ["apple" | "PATH"], "policy": "appstore|xcode", "entitlements": {…}}]}
                                      One store and one route for every app (unknown keys are
                                      refused). Each notification is verified as the app its
                                      payload names: that app's anchors (default apple), policy,
                                      bundle id, app Apple id (required with Production) and
                                      environments (required). A bundle id the file does not have
                                      is answered 500 (check bundleIdentifier, Apple retries) and
                                      kept as a dead letter; 'notifications dead-letters retry
                                      --config <file.json>' stores it once the app is added.
                                      verifyReceipt then trusts the bundled Apple roots.

            RETENTION MESSAGING (Get Retention Message, real-time requests):
              --retention-path <path> Answer the App Store's real-time requests ({"signedPayload":
                                      JWS}) on this route. Each is verified (chain to --anchor,
                                      --policy, --environment, its appAppleId against
                                      --app-apple-id, required) before a message is chosen.
              --retention-config <file.json>
                                      {"default": "MESSAGE_ID", "products": {"PRODUCT_ID":
                                      "MESSAGE_ID"}}: the product's message, else the default.
              Answers 200 {"message":{"messageIdentifier":…}}, 400 {"status":"rejected","check":…}
              when a request does not verify, 404 {"status":"noMessage"} when no message applies
              (the App Store then shows the default message configured with Apple).

            Routes: POST /verifyReceipt, POST /notifications (with --notifications-db), POST on
            --retention-path, GET /health, GET /metrics (Prometheus text: requests by route and
            status, notifications by bundle id, type and outcome, verification failures by check,
            signedDate-to-receipt lag, store commit latency, rmstore_store_up).
            Verification is stateless: run as many instances as needed behind any load balancer;
            notifications need a shared PostgreSQL store then. SIGINT or SIGTERM stops it gracefully
            (requests in progress finish, and every 200 given was committed, then exit 0).
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(
            arguments,
            valued: [
                "--host", "--port", "--environment", "--anchor", "--itunes-ca", "--wwdr-ca", "--shared-secret", "--at", "--max-connections",
                "--max-connections-per-client", "--trusted-proxy", "--max-body-bytes", "--request-timeout", "--notifications-db",
                "--bundle-id", "--app-apple-id", "--policy", "--notifications-path", "--retention-path", "--retention-config",
                "--revocation", "--ocsp-response",
                "--log-format", "--dead-letters-max-count", "--dead-letters-max-age", "--config",
            ],
            flagNames: ["--quiet"])
        try args.requireNoOperands("serve")
        let configured = try configuration(args)

        var configuration = HTTPServerConfiguration(host: args.value("--host") ?? "127.0.0.1", port: 8080)
        if let text = args.value("--port") {
            guard let port = UInt16(text) else { throw UsageError("--port must be 0-65535, found \(text)") }
            configuration.port = port
        }
        if let text = args.value("--max-connections") {
            guard let value = Int(text), value > 0, value <= 10_000 else { throw UsageError("--max-connections must be 1-10000") }
            configuration.maximumConnections = value
        }
        if let text = args.value("--max-connections-per-client") {
            guard let value = Int(text), value >= 0, value <= 10_000 else {
                throw UsageError("--max-connections-per-client must be 0-10000 (0: no cap)")
            }
            configuration.maximumConnectionsPerClient = value
        }
        for proxy in args.values("--trusted-proxy") {
            guard ClientAddress(literal: proxy) != nil else {
                throw UsageError("--trusted-proxy '\(proxy)' is not an IPv4 or IPv6 address")
            }
            configuration.trustedProxies.append(proxy)
        }
        if let text = args.value("--max-body-bytes") {
            guard let value = Int(text), value > 0, value <= 1 << 30 else { throw UsageError("--max-body-bytes must be 1-1073741824") }
            configuration.maximumBodySize = value
        }
        if let text = args.value("--request-timeout") {
            guard let value = Double(text), value > 0, value <= 3600 else { throw UsageError("--request-timeout must be 0-3600 seconds") }
            configuration.requestTimeout = .milliseconds(Int(value * 1000))
        }
        let environment = try ServeCommand.environment(args)
        // Anchors, policy, --at and revocation: one value for receipts, notifications and
        // real-time requests (with --config, each app names its own anchors and policy).
        let settings = try VerificationSettings(options: args)
        let quiet = args.flag("--quiet")
        let log = try ServeLog(format: args.value("--log-format"))
        if !quiet { configuration.log = { log.message($0) } }

        // Every endpoint reports its outcomes: to the metrics, and to the log unless --quiet.
        let report = quiet ? nil : log.hook
        var endpoint = VerifyReceiptEndpoint(
            configuration: .init(
                environment: environment, sharedSecret: args.value("--shared-secret"), appReceiptTime: settings.validationTime,
                transactionReceiptTime: settings.validationTime, clock: settings.clock),
            appReceiptVerifier: settings.appReceiptVerifier(),
            transactionReceiptVerifier: try settings.transactionReceiptVerifier())
        endpoint.report = report
        let metrics = ServerMetrics(bundleIds: configured?.service.apps.map(\.bundleId) ?? args.value("--bundle-id").map { [$0] } ?? [])
        let notifications: NotificationsEndpoint?
        if let configured {
            notifications = try configuredNotificationsEndpoint(
                configured.service, file: configured.file, args: args, settings: settings, requestTimeout: configuration.requestTimeout,
                metrics: metrics, report: report)
        } else {
            notifications = try notificationsEndpoint(
                args, settings: settings, environment: environment, requestTimeout: configuration.requestTimeout, metrics: metrics,
                report: report)
        }
        var retention = try retentionEndpoint(args, settings: settings, environment: environment)
        retention?.report = report
        let routes = ReceiptServerRoutes(verifyReceipt: endpoint, notifications: notifications, retention: retention, metrics: metrics)
        let server = HTTPServer(configuration: configuration, handler: MeasuredHandler(routes, routes: routes, metrics: metrics))
        do {
            try server.start()
        } catch {
            throw ToolFailure("cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        let signals = server.stopOnSignals()
        let store =
            notifications.map { endpoint in
                let health = endpoint.receiver.store.health()
                return " notifications → \(health.kind) \(health.location)"
            } ?? ""
        printOut(
            "receipt-tool serve: listening on http://\(configuration.host):\(server.port) (\(environment.rawValue.lowercased()))\(store)")
        server.waitUntilStopped()
        // Every request has been answered: checkpoint and close, so that the store's own file
        // holds every acknowledged notification.
        notifications?.receiver.store.close()
        withExtendedLifetime(signals) {}
        return ExitStatus.success
    }
}

extension ServeCommand {
    /// The notifications endpoint `--notifications-db` asks for (nil without it).
    static func notificationsEndpoint(
        _ args: Arguments, settings: VerificationSettings, environment: VerifyReceiptEnvironment, requestTimeout: Duration,
        metrics: ServerMetrics, report: OutcomeHook?
    ) throws -> NotificationsEndpoint? {
        let options = ["--bundle-id", "--app-apple-id", "--notifications-path", "--dead-letters-max-count", "--dead-letters-max-age"]
        guard let location = args.value("--notifications-db") else {
            // --app-apple-id serves --retention-path too; --bundle-id is accepted there (a real-time
            // request names none, so it does not apply).
            let shared = args.value("--retention-path") != nil ? ["--bundle-id", "--app-apple-id"] : []
            if let stray = options.first(where: { args.value($0) != nil && !shared.contains($0) }) {
                throw UsageError("\(stray) configures notifications: give --notifications-db too")
            }
            return nil
        }
        let (verifier, expectations) = try notificationVerification(
            args, settings: settings, environment: environment, option: "--notifications-db")
        return try notificationsEndpoint(
            location: location, path: args.value("--notifications-path") ?? "/notifications", pathOption: "--notifications-path",
            router: NotificationRouter(only: NotificationRoute(verifier: verifier, expectations: expectations)),
            time: settings.validationTime,
            requestTimeout: requestTimeout, metrics: metrics, report: report, retention: try deadLetterRetention(args))
    }

    /// The notifications endpoint on `path` (`pathOption` gives it) keeping notifications in the
    /// store at `location`, verified by `router`, reporting its outcomes to `metrics` and `report`.
    static func notificationsEndpoint(
        location: String, path: String, pathOption: String, router: NotificationRouter, time: ValidationTime, requestTimeout: Duration,
        metrics: ServerMetrics, report: OutcomeHook?, retention: DeadLetterRetention
    ) throws -> NotificationsEndpoint {
        guard isRoutePath(path), path != "/health", path != "/verifyReceipt", path != "/metrics" else {
            throw UsageError(
                "\(pathOption) must be an absolute path without query or fragment, other than /health, /metrics and /verifyReceipt, found \(Redaction.redacted(path))"
            )
        }
        // The store's deadline stays inside the request timeout, so that a stalled database is
        // answered 503 before the client gives up; /health has a shorter one.
        let operation = requestTimeout * 0.8
        let storeOptions = NotificationStoreOptions(
            allowUnavailableAtStart: true, operationTimeout: operation, healthTimeout: min(.seconds(2), operation))
        let store: any NotificationStore
        do throws(NotificationStoreError) {
            store = try NotificationStores.open(location, options: storeOptions)
        } catch {
            throw ToolFailure("cannot open the notification store \(NotificationStores.displayed(location)): \(error.reason)")
        }
        let health = store.health()
        if !health.isAvailable {
            printLogLine(
                "serve: the notification store \(health.location) is unavailable (\(health.problem ?? "unknown")); notifications get 503 until it is writable, retried at each request"
            )
        }
        let measured = MeasuredNotificationStore(store, metrics: metrics)
        let receiver = NotificationReceiver(
            router: router, validationTime: time, store: measured,
            deadLetters: NotificationStores.deadLetters(of: store) == nil ? nil : measured, retention: retention)
        return NotificationsEndpoint(path: path, receiver: receiver, metrics: metrics, report: report)
    }

    /// The Apple environment `--environment` names, in any case (`serve`, `dead-letters retry`,
    /// `api` and `notifications backfill`; default: production).
    static func environment(_ args: Arguments) throws(UsageError) -> VerifyReceiptEnvironment {
        switch args.value("--environment")?.lowercased() {
        case nil, "production": return .production
        case "sandbox": return .sandbox
        case let other?: throw UsageError("--environment must be production or sandbox, found \(other)")
        }
    }

    /// The verifier and expectations of notifications that `--bundle-id`, `--app-apple-id` and
    /// `--environment` ask for, under `settings` (`serve` and `dead-letters retry`).
    static func notificationVerification(
        _ args: Arguments, settings: VerificationSettings, environment: VerifyReceiptEnvironment, option: String
    ) throws -> (NotificationVerifier, JWSExpectations) {
        guard let bundle = args.value("--bundle-id"), !bundle.isEmpty else {
            throw UsageError("\(option) needs --bundle-id (notifications of any app would be accepted otherwise)")
        }
        var appAppleId: Int64?
        if let text = args.value("--app-apple-id") {
            guard let value = Int64(text), value > 0 else { throw UsageError("--app-apple-id must be a positive integer, found \(text)") }
            appAppleId = value
        }
        if environment == .production, appAppleId == nil {
            throw UsageError("\(option) in production needs --app-apple-id (Apple checks it on production notifications)")
        }
        return (
            settings.jwsVerifier(),
            JWSExpectations(
                bundleIdentifier: bundle, appAppleId: appAppleId, environments: [environment == .production ? .production : .sandbox])
        )
    }

    /// `--dead-letters-max-count` and `--dead-letters-max-age` (days), or the defaults.
    static func deadLetterRetention(_ args: Arguments) throws -> DeadLetterRetention {
        var retention = DeadLetterRetention.standard
        if let text = args.value("--dead-letters-max-count") {
            guard let value = Int(text), value > 0, value <= 10_000_000 else {
                throw UsageError("--dead-letters-max-count must be 1-10000000, found \(text)")
            }
            retention.maximumCount = value
        }
        if let text = args.value("--dead-letters-max-age") {
            guard let days = Double(text), days > 0, days <= 3650 else {
                throw UsageError("--dead-letters-max-age must be 0-3650 days, found \(text)")
            }
            retention.maximumAge = max(1, Int64(days * 86_400))
        }
        return retention
    }
}

/// Whether `path` is an absolute path a request line can name exactly: it starts with `/`, and
/// holds no query (`?`), fragment (`#`), white space or control character.
func isRoutePath(_ path: String) -> Bool {
    path.hasPrefix("/")
        && !path.unicodeScalars.contains { $0 == "?" || $0 == "#" || $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }
}
