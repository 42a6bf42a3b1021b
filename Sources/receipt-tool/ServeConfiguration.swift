import JWS
import ReceiptServer
import ReceiptVerification
import ServerNotifications

extension ServiceConfiguration {
    /// The notification router of the configured apps (`serve --config` and `dead-letters retry
    /// --config`): per app its anchors (default `apple`), policy (default: the rule of
    /// `VerificationPolicy.standard(for:)`), bundle id, app Apple id and environments, with the
    /// revocation, validation time and caches of `settings`. An app must name its environments,
    /// and its app Apple id when Production is one of them.
    func router(settings: VerificationSettings, file: String) throws -> NotificationRouter {
        var routes: [NotificationRoute] = []
        for app in apps {
            let at = "app \(ManagementRequests.quoted(app.bundleId))"
            guard !app.environments.isEmpty else {
                throw ToolFailure("\(ManagementRequests.quoted(file)): \(at) names no environments (Production, Sandbox, Xcode)")
            }
            if app.environments.contains("Production"), app.appAppleId == nil {
                throw ToolFailure(
                    "\(ManagementRequests.quoted(file)): \(at) receives Production notifications: give its appAppleId (Apple checks it there)"
                )
            }
            let sources = (app.anchors.isEmpty ? ["apple"] : app.anchors).map(TrustAnchorName.init(name:))
            let appSettings = VerificationSettings(
                anchors: try VerificationSettings.loadAnchors(sources), sources: sources,
                policy: try VerificationSettings.parsePolicy(app.policy), revocation: settings.policy.revocation,
                validationTime: settings.validationTime, clock: settings.clock, chainCache: settings.chainCache,
                headerCache: settings.headerCache)
            let expectations = JWSExpectations(
                bundleIdentifier: app.bundleId, appAppleId: app.appAppleId,
                environments: Set(app.environments.map { Environment(rawValue: $0) }))
            routes.append(NotificationRoute(verifier: appSettings.jwsVerifier(), expectations: expectations))
        }
        do throws(NotificationStoreError) {
            return try NotificationRouter(routes: routes)
        } catch {
            throw ToolFailure("\(ManagementRequests.quoted(file)): \(error.reason)")
        }
    }
}

extension ServeCommand {
    /// The options `--config` replaces (one app's notification options, and the anchors).
    static let singleAppOptions = ["--bundle-id", "--app-apple-id", "--policy", "--anchor", "--notifications-db", "--notifications-path"]

    /// The configuration `--config` names (nil without it); refused with a single-app option
    /// or with `--retention-path` (which needs `--app-apple-id`).
    static func configuration(_ args: Arguments) throws -> (service: ServiceConfiguration, file: String)? {
        guard let file = args.value("--config") else { return nil }
        if let mixed = (singleAppOptions + ["--retention-path", "--retention-config"]).first(where: { args.value($0) != nil }) {
            throw UsageError("--config and \(mixed) cannot be mixed: the configuration file names the apps, their anchors and the store")
        }
        return (try ServiceConfiguration.load(file), file)
    }

    /// The notifications endpoint of `--config`: its store, its `notificationsPath` (default
    /// `/notifications`) and a router of its apps.
    static func configuredNotificationsEndpoint(
        _ configuration: ServiceConfiguration, file: String, args: Arguments, settings: VerificationSettings, requestTimeout: Duration,
        metrics: ServerMetrics, report: OutcomeHook?
    ) throws -> NotificationsEndpoint {
        guard let location = configuration.store else {
            throw ToolFailure("\(ManagementRequests.quoted(file)): serve needs a \"store\" (a SQLite path or postgres:// URL)")
        }
        let router = try configuration.router(settings: settings, file: file)
        return try notificationsEndpoint(
            location: location, path: configuration.notificationsPath ?? "/notifications", pathOption: "notificationsPath", router: router,
            time: settings.validationTime, requestTimeout: requestTimeout, metrics: metrics, report: report,
            retention: try deadLetterRetention(args))
    }
}
