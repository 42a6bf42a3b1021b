import JSON
import ServerNotifications

/// The configuration file of a subscription backend (`--config F`), of this shape:
///
///     {"store": "PATH|postgres://…", "notificationsPath": "/notifications",
///      "apps": [{"bundleId": "…", "appAppleId": 123, "environments": ["Production", "Sandbox"],
///                "anchors": ["apple" | "PATH"], "policy": "appstore|xcode",
///                "entitlements": {"ENTITLEMENT": ["PRODUCT_ID", …]}}]}
///
/// Every key is type-checked and an unknown key is refused (a misspelt key would otherwise be a
/// setting silently dropped). `entitlements` reads the store and the apps' entitlements.
struct ServiceConfiguration {
    /// One app of the file.
    struct App {
        var bundleId: String
        var appAppleId: Int64?
        var environments: [String]
        var anchors: [String]
        var policy: String?
        var entitlements: EntitlementMap?
    }

    var store: String?
    var notificationsPath: String?
    var apps: [App]

    static let keys: Set<String> = ["store", "notificationsPath", "apps"]
    static let appKeys: Set<String> = ["bundleId", "appAppleId", "environments", "anchors", "policy", "entitlements"]
    static let environmentNames: Set<String> = ["Production", "Sandbox", "Xcode"]

    /// Reads and checks the file at `path` (at most 1 MiB).
    static func load(_ path: String) throws(ToolFailure) -> ServiceConfiguration {
        let bytes = try readInput(path, limit: 1 << 20)
        let json: JSONValue
        do throws(JSONError) {
            json = try JSONValue.parse(bytes)
        } catch {
            throw ToolFailure("\(ManagementRequests.quoted(path)): not JSON: \(error)")
        }
        return try ServiceConfiguration(json: json, file: path)
    }

    init(json: JSONValue, file: String) throws(ToolFailure) {
        func fail(_ message: String) -> ToolFailure { ToolFailure("\(ManagementRequests.quoted(file)): \(message)") }
        guard let members = json.objectValue else { throw fail("the configuration must be a JSON object, found \(json.kindName)") }
        if let unknown = members.first(where: { !Self.keys.contains($0.0) }) {
            throw fail("unknown key \(ManagementRequests.quoted(unknown.0)) (known: apps, notificationsPath, store)")
        }
        store = try Self.string(json["store"], "store", fail)
        notificationsPath = try Self.string(json["notificationsPath"], "notificationsPath", fail)
        if let path = notificationsPath, !path.hasPrefix("/") {
            throw fail("notificationsPath must start with /, found \(ManagementRequests.quoted(path))")
        }
        guard let items = json["apps"]?.arrayValue, !items.isEmpty else { throw fail("apps must be a non-empty array of apps") }
        var apps: [App] = []
        for (index, item) in items.enumerated() {
            let at = "apps[\(index)]"
            guard let appMembers = item.objectValue else { throw fail("\(at) must be an object, found \(item.kindName)") }
            if let unknown = appMembers.first(where: { !Self.appKeys.contains($0.0) }) {
                throw fail(
                    "\(at): unknown key \(ManagementRequests.quoted(unknown.0)) (known: \(Self.appKeys.sorted().joined(separator: ", ")))")
            }
            guard let bundleId = try Self.string(item["bundleId"], "\(at).bundleId", fail), !bundleId.isEmpty else {
                throw fail("\(at).bundleId is missing")
            }
            guard !apps.contains(where: { $0.bundleId == bundleId }) else {
                throw fail("\(at): bundle id \(ManagementRequests.quoted(bundleId)) is configured twice")
            }
            var appAppleId: Int64?
            if let value = item["appAppleId"] {
                guard let number = value.int64Value, number > 0 else { throw fail("\(at).appAppleId must be a positive integer") }
                appAppleId = number
            }
            let environments = try Self.strings(item["environments"], "\(at).environments", fail)
            if let unknown = environments.first(where: { !Self.environmentNames.contains($0) }) {
                throw fail("\(at).environments: \(ManagementRequests.quoted(unknown)) is not Production, Sandbox or Xcode")
            }
            let anchors = try Self.strings(item["anchors"], "\(at).anchors", fail)
            let policy = try Self.string(item["policy"], "\(at).policy", fail)
            if let policy, policy != "appstore", policy != "xcode" {
                throw fail("\(at).policy must be appstore or xcode, found \(ManagementRequests.quoted(policy))")
            }
            var entitlements: EntitlementMap?
            if let value = item["entitlements"] {
                do throws(NotificationStoreError) {
                    entitlements = try EntitlementMap(json: value)
                } catch {
                    throw fail("\(at).entitlements: \(error.reason)")
                }
            }
            apps.append(
                App(
                    bundleId: bundleId, appAppleId: appAppleId, environments: environments, anchors: anchors, policy: policy,
                    entitlements: entitlements))
        }
        self.apps = apps
    }

    /// The app `bundleId` names, or the only app when none is named.
    func app(_ bundleId: String?) throws(UsageError) -> App {
        if let bundleId {
            guard let app = apps.first(where: { $0.bundleId == bundleId }) else {
                throw UsageError(
                    "--app \(ManagementRequests.quoted(bundleId)) is not in the configuration: "
                        + apps.map { ManagementRequests.quoted($0.bundleId) }.joined(separator: ", "))
            }
            return app
        }
        guard apps.count == 1, let only = apps.first else {
            throw UsageError("the configuration has \(apps.count) apps: name one with --app BUNDLE_ID")
        }
        return only
    }

    private static func string(_ value: JSONValue?, _ key: String, _ fail: (String) -> ToolFailure) throws(ToolFailure) -> String? {
        guard let value else { return nil }
        guard let text = value.stringValue else { throw fail("\(key) must be a string, found \(value.kindName)") }
        return text
    }

    private static func strings(_ value: JSONValue?, _ key: String, _ fail: (String) -> ToolFailure) throws(ToolFailure) -> [String] {
        guard let value else { return [] }
        guard let items = value.arrayValue else { throw fail("\(key) must be an array of strings, found \(value.kindName)") }
        var result: [String] = []
        for item in items {
            guard let text = item.stringValue else { throw fail("\(key) must hold strings, found \(item.kindName)") }
            result.append(text)
        }
        return result
    }
}
