// The App Store Server API on the wire, written once: each endpoint's method, path template,
// success status and Apple's published rate limit. The client builds its requests from this
// table and the simulated App Store Server (StoreTesting) routes by it, so the two cannot name an
// endpoint differently.

/// One segment of an endpoint's path: a fixed word or a caller's identifier.
public enum APIPathSegment: Sendable, Hashable {
    /// A fixed segment (`inApps`, `v1`, `transactions`).
    case literal(String)
    /// An identifier the caller supplies, with Apple's name for it (`transactionId`).
    case parameter(String)
}

extension AppStoreServerEndpoint {
    /// The method and the path template as Apple's documentation writes them.
    var wire: (method: String, path: String) {
        switch self {
        case .transactionInfo: ("GET", "/inApps/v1/transactions/{transactionId}")
        case .transactionHistory: ("GET", "/inApps/v2/history/{transactionId}")
        case .subscriptionStatuses: ("GET", "/inApps/v1/subscriptions/{transactionId}")
        case .orderLookup: ("GET", "/inApps/v1/lookup/{orderId}")
        case .refundHistory: ("GET", "/inApps/v2/refund/lookup/{transactionId}")
        case .notificationHistory: ("POST", "/inApps/v1/notifications/history")
        case .requestTestNotification: ("POST", "/inApps/v1/notifications/test")
        case .testNotificationStatus: ("GET", "/inApps/v1/notifications/test/{testNotificationToken}")
        case .sendConsumptionInformation: ("PUT", "/inApps/v1/transactions/consumption/{transactionId}")
        case .extendSubscriptionRenewalDate: ("PUT", "/inApps/v1/subscriptions/extend/{originalTransactionId}")
        case .sendConsumptionInformationV2: ("PUT", "/inApps/v2/transactions/consumption/{transactionId}")
        case .setAppAccountToken: ("PUT", "/inApps/v1/transactions/{originalTransactionId}/appAccountToken")
        case .appTransactionInfo: ("GET", "/inApps/v1/transactions/appTransactions/{transactionId}")
        case .finishTransaction: ("POST", "/inApps/v1/transactions/{transactionId}/finish")
        case .extendRenewalDateForAllActiveSubscribers: ("POST", "/inApps/v1/subscriptions/extend/mass")
        case .renewalDateExtensionStatus: ("GET", "/inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}")
        case .uploadRetentionImage: ("PUT", "/inApps/v1/messaging/image/{imageIdentifier}")
        case .retentionImageList: ("GET", "/inApps/v1/messaging/image/list")
        case .deleteRetentionImage: ("DELETE", "/inApps/v1/messaging/image/{imageIdentifier}")
        case .uploadRetentionMessage: ("PUT", "/inApps/v1/messaging/message/{messageIdentifier}")
        case .retentionMessageList: ("GET", "/inApps/v1/messaging/message/list")
        case .deleteRetentionMessage: ("DELETE", "/inApps/v1/messaging/message/{messageIdentifier}")
        case .configureDefaultRetentionMessage: ("PUT", "/inApps/v1/messaging/default/{productId}/{locale}")
        case .defaultRetentionMessage: ("GET", "/inApps/v1/messaging/default/{productId}/{locale}")
        case .deleteDefaultRetentionMessage: ("DELETE", "/inApps/v1/messaging/default/{productId}/{locale}")
        case .advancedCommerceChangePrice: ("POST", "/advancedCommerce/v1/subscription/changePrice/{transactionId}")
        case .advancedCommerceCancel: ("POST", "/advancedCommerce/v1/subscription/cancel/{transactionId}")
        case .advancedCommerceChangeMetadata: ("POST", "/advancedCommerce/v1/subscription/changeMetadata/{transactionId}")
        case .advancedCommerceMigrate: ("POST", "/advancedCommerce/v1/subscription/migrate/{transactionId}")
        case .advancedCommerceRevoke: ("POST", "/advancedCommerce/v1/subscription/revoke/{transactionId}")
        case .advancedCommerceRequestRefund: ("POST", "/advancedCommerce/v1/transaction/requestRefund/{transactionId}")
        }
    }

    /// The HTTP method (`GET`, `POST`, `PUT`, `DELETE`).
    public var method: String { wire.method }

    /// The path template, for example `/inApps/v1/transactions/{transactionId}`.
    public var pathTemplate: String { wire.path }

    /// The path template's segments.
    public var pathSegments: [APIPathSegment] {
        wire.path.split(separator: "/").map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
    }

    /// The names of the identifiers the path takes, in order.
    public var parameterNames: [String] {
        pathSegments.compactMap { if case .parameter(let name) = $0 { name } else { nil } }
    }

    /// The path's segments with `arguments` in the parameters' places (nil when the count differs).
    public func segments(_ arguments: [String]) -> [String]? {
        guard arguments.count == parameterNames.count else { return nil }
        var remaining = arguments[...]
        return pathSegments.map { segment in
            switch segment {
            case .literal(let word): word
            case .parameter: remaining.popFirst() ?? ""
            }
        }
    }

    /// The endpoint a request names, with its identifiers: the first endpoint (in declaration
    /// order) whose method matches and whose fixed segments all match. Identifiers are returned as
    /// they appear in the path (still percent-encoded).
    public static func match(method: String, segments: [String]) -> (endpoint: AppStoreServerEndpoint, arguments: [String])? {
        for endpoint in allCases where endpoint.method == method {
            let template = endpoint.pathSegments
            guard template.count == segments.count else { continue }
            var arguments: [String] = []
            var matches = true
            for (part, actual) in zip(template, segments) {
                switch part {
                case .literal(let word): if word != actual { matches = false }
                case .parameter: if actual.isEmpty { matches = false } else { arguments.append(actual) }
                }
                if !matches { break }
            }
            if matches { return (endpoint, arguments) }
        }
        return nil
    }

    /// The status Apple answers on success: 202 Accepted for consumption information, 200 for
    /// every other endpoint.
    public var successStatus: Int {
        switch self {
        case .sendConsumptionInformation, .sendConsumptionInformationV2: 202
        default: 200
        }
    }

    /// Whether the request carries a body (JSON, or the PNG of Upload Image).
    public var hasRequestBody: Bool {
        switch self {
        case .notificationHistory, .sendConsumptionInformation, .extendSubscriptionRenewalDate, .sendConsumptionInformationV2,
            .setAppAccountToken, .extendRenewalDateForAllActiveSubscribers, .uploadRetentionImage, .uploadRetentionMessage,
            .configureDefaultRetentionMessage, .advancedCommerceChangePrice, .advancedCommerceCancel, .advancedCommerceChangeMetadata,
            .advancedCommerceMigrate, .advancedCommerceRevoke, .advancedCommerceRequestRefund:
            true
        default: false
        }
    }

    /// The `Content-Type` of the request body: `image/png` for Upload Image, `application/json`
    /// for every other.
    public var requestContentType: String {
        self == .uploadRetentionImage ? "image/png" : "application/json"
    }

    /// Whether the endpoint belongs to the Retention Messaging API (its own rate table).
    public var isRetentionMessaging: Bool {
        switch self {
        case .uploadRetentionImage, .retentionImageList, .deleteRetentionImage, .uploadRetentionMessage, .retentionMessageList,
            .deleteRetentionMessage, .configureDefaultRetentionMessage, .defaultRetentionMessage, .deleteDefaultRetentionMessage:
            true
        default: false
        }
    }

    /// Whether the endpoint belongs to the Advanced Commerce API.
    public var isAdvancedCommerce: Bool {
        switch self {
        case .advancedCommerceChangePrice, .advancedCommerceCancel, .advancedCommerceChangeMetadata, .advancedCommerceMigrate,
            .advancedCommerceRevoke, .advancedCommerceRequestRefund:
            true
        default: false
        }
    }

    /// Apple's published limit in production, in requests per second ("Identifying rate
    /// limits"; Apple enforces it per app, hourly). Get Status of Subscription Renewal Date
    /// Extensions is not in Apple's table; it is given the lowest published rate (1). The
    /// Retention Messaging API's own table: 10 for Configure Default Message, 1 for each other
    /// endpoint. The Advanced Commerce API publishes no per-endpoint table; its calls are given
    /// the App Store Server API's common rate (50).
    public var productionRequestsPerSecond: Double {
        switch self {
        case .transactionInfo, .transactionHistory, .subscriptionStatuses, .sendConsumptionInformation, .sendConsumptionInformationV2,
            .notificationHistory, .appTransactionInfo, .finishTransaction:
            50
        case .extendSubscriptionRenewalDate, .setAppAccountToken: 20
        case .orderLookup, .refundHistory: 10
        case .extendRenewalDateForAllActiveSubscribers, .requestTestNotification, .testNotificationStatus, .renewalDateExtensionStatus: 1
        case .configureDefaultRetentionMessage: 10
        case .uploadRetentionImage, .retentionImageList, .deleteRetentionImage, .uploadRetentionMessage, .retentionMessageList,
            .deleteRetentionMessage, .defaultRetentionMessage, .deleteDefaultRetentionMessage:
            1
        case .advancedCommerceChangePrice, .advancedCommerceCancel, .advancedCommerceChangeMetadata, .advancedCommerceMigrate,
            .advancedCommerceRevoke, .advancedCommerceRequestRefund:
            50
        }
    }

    /// The limit in the sandbox: 10 % of production's.
    public var sandboxRequestsPerSecond: Double { productionRequestsPerSecond / 10 }
}
