import Foundation
import JSON
public import JWS

/// A request body the receiver did not acknowledge as a valid notification, kept so that it can be
/// inspected, and retried once the configuration that refused it is fixed
/// (``NotificationReceiver/retry(_:)``).
///
/// Everything but ``id``, ``receivedDate`` and ``sourceAddress`` comes from the sender: the body
/// is kept as received (its first ``maximumKeptBytes`` bytes), and what ``unverified`` reads from
/// it is untrusted text, to be escaped wherever it is shown.
public struct DeadLetter: Sendable, Hashable {
    /// The most bytes of a body that are kept (256 KiB; a real notification body is about 18 KB).
    public static let maximumKeptBytes = 256 << 10

    /// The store's number of the letter (0 before it is kept).
    public var id: Int64
    /// When it was received, in milliseconds since 1970.
    public var receivedDate: Int64
    /// The address of the connection it came on (a proxy's, behind one), when known.
    public var sourceAddress: String?
    /// The check that failed (`VerificationCheck.Name` raw value, for example `bundleIdentifier`).
    public var check: String
    /// Why, as the receiver said it.
    public var reason: String
    /// The body's first ``maximumKeptBytes`` bytes.
    public var body: [UInt8]
    /// The body's length as received.
    public var bodyLength: Int64
    /// When a retry stored it as a notification, in milliseconds since 1970 (nil: still dead).
    public var retriedDate: Int64?
    /// The `notificationUUID` it was stored under by that retry.
    public var retriedNotificationUUID: String?

    /// Creates a letter; `body` is cut to ``maximumKeptBytes`` (its full length is kept in
    /// ``bodyLength``), and U+0000 in `reason` is written `\u0000` (no store keeps it).
    public init(
        id: Int64 = 0, receivedDate: Int64, sourceAddress: String?, check: String, reason: String, body: [UInt8],
        bodyLength: Int64? = nil, retriedDate: Int64? = nil, retriedNotificationUUID: String? = nil
    ) {
        self.id = id
        self.receivedDate = receivedDate
        self.sourceAddress = sourceAddress.map(Self.storable)
        self.check = Self.storable(check)
        self.reason = Self.storable(reason)
        self.body = Array(body.prefix(Self.maximumKeptBytes))
        self.bodyLength = bodyLength ?? Int64(body.count)
        self.retriedDate = retriedDate
        self.retriedNotificationUUID = retriedNotificationUUID
    }

    /// Whether only part of the body was kept (such a letter cannot be retried).
    public var isTruncated: Bool { Int64(body.count) < bodyLength }

    /// Whether a retry has stored it.
    public var isRetried: Bool { retriedDate != nil }

    /// What the body says about itself, read without verifying anything.
    public var unverified: UnverifiedNotificationFields { UnverifiedNotificationFields(body: body) }

    /// `text` with U+0000 written `\u0000`.
    static func storable(_ text: String) -> String {
        text.contains("\u{0}") ? text.replacingOccurrences(of: "\u{0}", with: "\\u0000") : text
    }
}

/// Fields of a notification body read WITHOUT verifying its signature: for listing and metrics of
/// rejected bodies only. Every value is attacker-controlled text (escape it; never trust it).
public struct UnverifiedNotificationFields: Sendable, Hashable {
    /// `data.bundleId` (or `appTransactionInfo`-less notifications' `data.bundleId`), if readable.
    public var bundleId: String?
    /// `notificationUUID`, if readable.
    public var notificationUUID: String?
    /// `notificationType`, if readable.
    public var notificationType: String?

    /// Reads the fields from a body `{"signedPayload": JWS}`; any field that cannot be read is nil.
    public init(body: [UInt8], limits: JWSLimits = .default) {
        guard case .success(let token) = NotificationReceiver.signedPayload(of: body, limits: limits),
            let jws = try? CompactJWS(token, limits: limits),
            let payload = try? JSONValue.parse(jws.unverifiedPayload, options: limits.jsonOptions)
        else { return }
        notificationUUID = payload["notificationUUID"]?.stringValue
        notificationType = payload["notificationType"]?.stringValue
        bundleId = payload["data"]?["bundleId"]?.stringValue ?? payload["summary"]?["bundleId"]?.stringValue
    }
}

/// How many dead letters a store keeps: it deletes the oldest beyond ``maximumCount`` and those
/// older than ``maximumAge`` each time it keeps a new one.
public struct DeadLetterRetention: Sendable, Hashable {
    /// The most letters kept (default 10 000: at most about 2.5 GiB of bodies at 256 KiB, usually
    /// under 200 MB).
    public var maximumCount: Int
    /// The oldest a letter may be, in seconds (default 30 days).
    public var maximumAge: Int64

    /// Creates a retention limit (a count below 1 keeps 1; an age below one second keeps one second).
    public init(maximumCount: Int = 10_000, maximumAge: Int64 = 30 * 86_400) {
        self.maximumCount = max(1, maximumCount)
        self.maximumAge = max(1, maximumAge)
    }

    /// The defaults.
    public static let standard = DeadLetterRetention()
}

/// Which dead letters ``DeadLetterStore/deadLetters(_:)`` returns, oldest first.
public struct DeadLetterQuery: Sendable, Hashable {
    /// Only letters no retry has stored.
    public var pendingOnly: Bool
    /// Only this letter.
    public var id: Int64?
    /// At most this many.
    public var limit: Int?

    /// Creates a query.
    public init(pendingOnly: Bool = false, id: Int64? = nil, limit: Int? = nil) {
        self.pendingOnly = pendingOnly
        self.id = id
        self.limit = limit
    }
}

/// Where dead letters are kept: the notification store's own database, in a table of its own
/// (`dead_letters`, created when missing), with the notification store's durability: ``keep(_:retention:)``
/// returns after the commit.
public protocol DeadLetterStore: Sendable {
    /// Commits `letter` and deletes the letters `retention` no longer allows; returns its id.
    func keep(_ letter: DeadLetter, retention: DeadLetterRetention) throws(NotificationStoreError) -> Int64
    /// The letters matching `query`, by id (arrival order).
    func deadLetters(_ query: DeadLetterQuery) throws(NotificationStoreError) -> [DeadLetter]
    /// Marks letter `id` retried (stored as `notificationUUID` at `date`); false when it was
    /// already marked or is gone, so that concurrent retries mark it once.
    func markRetried(id: Int64, notificationUUID: String, at date: Int64) throws(NotificationStoreError) -> Bool
    /// Deletes the letters received before `date` (milliseconds since 1970; nil: every letter);
    /// returns how many.
    func purgeDeadLetters(before date: Int64?) throws(NotificationStoreError) -> Int
}

extension NotificationStores {
    /// The dead-letter side of a store `open` returned (both built-in stores have one).
    public static func deadLetters(of store: any NotificationStore) -> (any DeadLetterStore)? {
        store as? any DeadLetterStore
    }
}
