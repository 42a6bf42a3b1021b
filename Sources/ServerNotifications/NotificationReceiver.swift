public import Foundation
import JSON
public import JWS
public import ReceiptVerification

/// Receives App Store Server Notifications V2 without HTTP: verifies a request body, stores the
/// notification, and says what to answer. An HTTP endpoint (ReceiptServer's
/// `NotificationsEndpoint`) turns the outcome into a status code.
///
/// For each body, in this order:
/// 1. The body must be a strict JSON object whose `signedPayload` is a string, else
///    ``NotificationReceiverOutcome/rejected(_:)`` naming the check `VerificationCheck.Name.body`.
/// 2. The token is verified by ``router`` at ``validationTime`` — with the one app's verifier and
///    expectations, or, for a receiver of several apps, with those of the app its payload names
///    (``NotificationRouter``): the outer JWS and its nested signed transaction and renewal info in
///    one call (signature, chain to a pinned anchor, policy, kind — a renewal info or a
///    notification where the transaction belongs fails —, bundle id (a nested transaction must
///    carry the notification's), app Apple id on production, environment, agreement of the nested
///    tokens). An invalid verdict is rejected with its first failed check; a bundle id no app of
///    the router has is rejected (`VerificationCheck.Name.bundleIdentifier`).
/// 3. A notification without `notificationUUID` is rejected (`VerificationCheck.Name.notificationUUID`).
/// 4. The row (``StoredNotification``), built from the verdict's verified values, is stored; the outcome is
///    ``NotificationReceiverOutcome/accepted(_:)`` or ``NotificationReceiverOutcome/duplicate(_:)``
///    only after the store returned, which is after its commit is durable; a store failure is
///    ``NotificationReceiverOutcome/unavailable(_:)`` (the sender must retry; Apple does), except a
///    value no store can keep (``NotificationStoreError/Code/unsupportedValue``), which is
///    rejected (`VerificationCheck.Name.body`).
///
/// A `TEST` notification (no nested token) is genuine when it verifies, and is stored like any
/// other. Thread-safe: one receiver serves every connection.
public struct NotificationReceiver: Sendable {
    /// Which app's verifier and expectations verify a notification (one app's, or the app among
    /// several that its payload names).
    public let router: NotificationRouter
    /// When chains are validated: the notification's signed date by default, as Apple's
    /// verifier does offline.
    public let validationTime: ValidationTime
    /// Where accepted notifications go.
    public let store: any NotificationStore
    /// The clock for ``StoredNotification/receivedDate``.
    public let clock: @Sendable () -> Date
    /// Where bodies that are not acknowledged as valid are kept (nil: nowhere).
    public let deadLetters: (any DeadLetterStore)?
    /// How many dead letters ``deadLetters`` keeps.
    public let retention: DeadLetterRetention

    /// The notification verifier of the one app (of a receiver of several apps: the first app's).
    public var verifier: NotificationVerifier { router.primary.verifier }
    /// What the one app's notifications must say: bundle id, app Apple id (production),
    /// environments (of a receiver of several apps: the first app's).
    public var expectations: JWSExpectations { router.primary.expectations }

    /// Creates a receiver of one app's notifications, verified with `verifier` against
    /// `expectations`.
    public init(
        verifier: NotificationVerifier, expectations: JWSExpectations, validationTime: ValidationTime = .signedDate,
        store: any NotificationStore, clock: @escaping @Sendable () -> Date = { Date() }, deadLetters: (any DeadLetterStore)? = nil,
        retention: DeadLetterRetention = .standard
    ) {
        self.init(
            router: NotificationRouter(only: NotificationRoute(verifier: verifier, expectations: expectations)),
            validationTime: validationTime,
            store: store, clock: clock, deadLetters: deadLetters, retention: retention)
    }

    /// Creates a receiver whose `router` chooses each notification's verification: one store
    /// (rows keep their bundle id and environment) and one dead-letter store for every app.
    public init(
        router: NotificationRouter, validationTime: ValidationTime = .signedDate, store: any NotificationStore,
        clock: @escaping @Sendable () -> Date = { Date() }, deadLetters: (any DeadLetterStore)? = nil,
        retention: DeadLetterRetention = .standard
    ) {
        self.router = router
        self.validationTime = validationTime
        self.store = store
        self.clock = clock
        self.deadLetters = deadLetters
        self.retention = retention
    }

    /// Verifies and stores one request body (see the type's documentation for the order); a
    /// rejected body is kept in ``deadLetters`` (committed before this returns; when it cannot be,
    /// the outcome is ``NotificationReceiverOutcome/unavailable(_:)`` so that the sender retries).
    /// - Parameters:
    ///   - body: the request body.
    ///   - source: the address it came from, kept with a dead letter.
    public func receive(body: [UInt8], source: String? = nil) -> NotificationReceiverOutcome {
        let receivedDate = clock()
        let outcome = verifyAndStore(body: body, receivedDate: receivedDate)
        guard case .rejected(let rejection) = outcome, let deadLetters else { return outcome }
        return keep(rejection, body: body, source: source, receivedDate: receivedDate, in: deadLetters)
    }

    /// Steps 1 to 4 of the type's documentation, the row received at `receivedDate`.
    func verifyAndStore(body: [UInt8], receivedDate: Date) -> NotificationReceiverOutcome {
        let token: String
        switch Self.signedPayload(of: body, limits: router.limits) {
        case .success(let value): token = value
        case .failure(let rejection): return .rejected(rejection)
        }
        let row: StoredNotification
        switch verifiedRow(token, receivedDate: receivedDate) {
        case .success(let verified): row = verified
        case .failure(let rejection): return .rejected(rejection)
        }
        do throws(NotificationStoreError) {
            switch try store.store(row) {
            case .stored: return .accepted(row)
            case .duplicate: return .duplicate(row)
            }
        } catch {
            // A value no store can keep exactly (U+0000) is refused the same way by every store:
            // a retry cannot succeed, so it is not "unavailable".
            if error.code == .unsupportedValue {
                return .rejected(NotificationRejection(check: .body, reason: error.reason, notificationUUID: row.notificationUUID))
            }
            return .unavailable(error)
        }
    }

    /// Steps 2 and 3 of the type's documentation: `token` verified through ``router`` at
    /// ``validationTime`` (each app as its payload names it), as the row received at
    /// `receivedDate`; or the rejection naming the first failed check. Deliveries and backfills
    /// both verify through here.
    func verifiedRow(_ token: String, receivedDate: Date) -> Result<StoredNotification, NotificationRejection> {
        let verdict: Verdict<SignedJWS<NotificationPayload>>
        switch router.verify(token, at: validationTime) {
        case .success(let valid): verdict = valid
        case .failure(let rejection): return .failure(rejection)
        }
        guard let row = StoredNotification(verified: verdict, signedPayload: token, receivedDate: receivedDate) else {
            return .failure(NotificationRejection(check: .notificationUUID, reason: "the notification has no notificationUUID"))
        }
        return .success(row)
    }

    /// The `signedPayload` string of a request body, or the rejection of a body that has none.
    public static func signedPayload(of body: [UInt8], limits: JWSLimits = .default) -> Result<String, NotificationRejection> {
        var options = limits.jsonOptions
        options.maximumInputSize = limits.maximumTokenSize * 2
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONValue.parse(body, options: options)
        } catch {
            return .failure(NotificationRejection(check: .body, reason: "the body is not JSON: \(error)"))
        }
        guard case .object = value else {
            return .failure(NotificationRejection(check: .body, reason: "the body is a JSON \(value.kindName), not an object"))
        }
        guard let member = value["signedPayload"] else {
            return .failure(NotificationRejection(check: .body, reason: "the body has no \"signedPayload\""))
        }
        guard case .string(let token) = member else {
            return .failure(NotificationRejection(check: .body, reason: "\"signedPayload\" is a \(member.kindName), not a string"))
        }
        return .success(token)
    }
}

/// What ``NotificationReceiver/receive(body:source:)`` did with a body.
public enum NotificationReceiverOutcome: Sendable {
    /// Verified and committed now: answer 200.
    case accepted(StoredNotification)
    /// Verified; a notification with its `notificationUUID` was already committed (Apple's retry,
    /// or the same retry at another instance): answer 200, nothing stored twice.
    case duplicate(StoredNotification)
    /// Not genuine, not for this app or environment, or not a notification body: nothing stored
    /// as a notification (kept as a dead letter when the receiver keeps them); answer 400, or 500
    /// when it may be our configuration's fault (``NotificationRejection/mayBeOurConfiguration``)
    /// so that Apple retries.
    case rejected(NotificationRejection)
    /// Verified but the store could not commit: answer 503 so that the sender retries.
    case unavailable(NotificationStoreError)

    /// Whether the sender may consider it delivered (accepted or duplicate).
    public var isAcknowledged: Bool {
        switch self {
        case .accepted, .duplicate: true
        case .rejected, .unavailable: false
        }
    }

    /// `accepted`, `duplicate`, `rejected` or `unavailable`.
    public var name: String {
        switch self {
        case .accepted: "accepted"
        case .duplicate: "duplicate"
        case .rejected: "rejected"
        case .unavailable: "unavailable"
        }
    }
}

/// Why a body was not accepted: the check that failed, in the verifiers' one namespace.
public struct NotificationRejection: Error, Sendable, CustomStringConvertible {
    /// The failed check (`VerificationCheck.Name.body` for a body that is not a notification,
    /// otherwise the verdict's first failure, such as `signature`, `chain`, `bundleIdentifier`,
    /// `environment`, `appAppleId`, `signedTransactionInfo`).
    public let check: VerificationCheck.Name
    /// Why, for people.
    public let reason: String
    /// The notification's UUID, when it was read.
    public let notificationUUID: String?
    /// Whether the body may be Apple's and refused only because of our configuration (see
    /// ``configurationChecks``), or because its revocation could not be checked in a way a retry
    /// could cure: such a rejection is answered 5xx, so that Apple retries it.
    public var mayBeOurConfiguration: Bool
    /// The id of the dead letter that keeps the body, once kept.
    public var deadLetterId: Int64?

    /// The checks whose failure may be our configuration's fault rather than the sender's: a
    /// chain to an anchor or intermediate we do not trust (a new Apple certificate), the policy's
    /// marker and profile checks, the validation time, and what we expect of the app (bundle id,
    /// app Apple id, environment). A malformed body or a bad signature is never Apple's.
    public static let configurationChecks: Set<VerificationCheck.Name> = [
        .trustAnchors, .validationTime, .chain, .pinnedAnchor, .chainLength, .certificateCount, .leafMarker, .intermediateMarker,
        .pinnedIntermediate, .keyUsage, .basicConstraints, .bundleIdentifier, .appAppleId, .environment,
    ]

    /// Creates a rejection; ``mayBeOurConfiguration`` is whether `check` is one of
    /// ``configurationChecks``.
    public init(check: VerificationCheck.Name, reason: String, notificationUUID: String? = nil) {
        self.check = check
        self.reason = reason
        self.notificationUUID = notificationUUID
        self.mayBeOurConfiguration = Self.configurationChecks.contains(check)
    }

    /// `"<check>: <reason>"`.
    public var description: String { "\(check): \(reason)" }
}
