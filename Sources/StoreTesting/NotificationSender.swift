// The simulated App Store's App Store Server Notifications V2: what happens in the simulation
// (purchases, renewals, expiries, billing failures, refunds, revocations, renewal-status changes)
// becomes a notification signed like Apple's and POSTed as `{"signedPayload": "<JWS>"}` to the
// configured URL, retried like Apple when the answer is not 200 (on the simulated clock).

import Dispatch
public import Foundation
import HTTPClient
import Internals
import JSON
public import JWS
public import ReceiptSigning

/// One thing the App Store tells a server about: the notification's type and subtype, and the
/// signed transaction and renewal info it carries (signed when it happened).
public struct ServerNotificationEvent: Sendable, Hashable {
    /// `notificationType`.
    public var type: NotificationType
    /// `subtype`.
    public var subtype: NotificationSubtype?
    /// `data.signedTransactionInfo`.
    public var signedTransactionInfo: String?
    /// `data.signedRenewalInfo`.
    public var signedRenewalInfo: String?
    /// `data.status` (subscriptions).
    public var status: SubscriptionStatus?
    /// The original transaction it is about (not sent: for logs and tests).
    public var originalTransactionIdentifier: String?

    /// Creates an event.
    public init(
        type: NotificationType, subtype: NotificationSubtype? = nil, signedTransactionInfo: String? = nil, signedRenewalInfo: String? = nil,
        status: SubscriptionStatus? = nil, originalTransactionIdentifier: String? = nil
    ) {
        self.type = type
        self.subtype = subtype
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
        self.originalTransactionIdentifier = originalTransactionIdentifier
    }
}

/// The outcome of one POST.
public enum NotificationAttemptResult: Sendable, Hashable, CustomStringConvertible {
    /// The server answered with this HTTP status.
    case status(Int)
    /// No answer within the transport's time limit.
    case timedOut(String)
    /// No answer (connection refused, reset, TLS failure).
    case failed(String)

    /// Whether the App Store counts it as delivered: HTTP 200, as Apple requires.
    public var isDelivered: Bool { self == .status(200) }

    /// The attempt as the App Store Server API reports it in `sendAttemptResult`: `SUCCESS` for
    /// HTTP 200, `UNSUCCESSFUL_HTTP_RESPONSE_CODE` for any other status, `TIMED_OUT`, or
    /// `NO_RESPONSE`.
    public var sendAttemptResult: String {
        switch self {
        case .status(200): "SUCCESS"
        case .status: "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        case .timedOut: "TIMED_OUT"
        case .failed: "NO_RESPONSE"
        }
    }

    /// `HTTP 200`, `timed out: <reason>` or `failed: <reason>`.
    public var description: String {
        switch self {
        case .status(let code): "HTTP \(code)"
        case .timedOut(let reason): "timed out: \(reason)"
        case .failed(let reason): "failed: \(reason)"
        }
    }
}

/// How notifications travel: one POST of a JSON body, answered with a status or a failure. The
/// notification sender uses it for every attempt, and the simulated App Store Server API for
/// Request a Test Notification; a test can pass one that records or fails on purpose.
public protocol NotificationTransport: Sendable {
    /// POSTs `body` (`application/json`) to `url` and waits for the answer. Must return within a
    /// bounded time.
    func post(_ body: [UInt8], to url: URL) -> NotificationAttemptResult
}

/// POSTs with Foundation's `URLSession` (HTTP, or HTTPS trusted by the system's CA bundle) through
/// the package's HTTP client exchange: `Content-Type: application/json`, no cookies or cache, no
/// redirects, a bounded wait, and the answer's body read up to 64 KiB (only its status counts).
public final class URLSessionNotificationTransport: NotificationTransport {
    /// Seconds allowed per POST.
    public var timeout: TimeInterval { client.timeout }
    private let client: HTTPClientTransport

    /// Creates a transport.
    public init(timeout: TimeInterval = 30) {
        client = HTTPClientTransport(timeout: timeout, maximumResponseSize: 64 << 10)
    }

    /// POSTs and waits at most ``timeout`` seconds, blocking the calling thread without Swift
    /// concurrency (the notification sender's queue, a server's connection thread).
    public func post(_ body: [UInt8], to url: URL) -> NotificationAttemptResult {
        let request = HTTPClientRequest(method: "POST", url: url, headers: [("Content-Type", "application/json")], body: body)
        return switch client.sendBlocking(request) {
        case .response(let status, _, _), .tooLarge(let status, _): .status(status)
        case .timedOut: .timedOut("no answer within \(client.timeout) s")
        case .failure(.timedOut, let text): .timedOut(text)
        case .failure(_, let text): .failed(text)
        case .cancelled: .failed("cancelled")
        }
    }
}

/// POSTs with the `curl` command, which can trust a private certificate authority (Foundation on
/// Linux trusts only the system's CA bundle): for HTTPS to a server with a self-signed
/// certificate, as `deploy/` sets nginx up.
public struct CurlNotificationTransport: NotificationTransport {
    /// The `curl` executable.
    public var executable: URL
    /// A PEM file of the certificate(s) to trust for HTTPS (nil: curl's defaults).
    public var certificateAuthority: URL?
    /// Seconds allowed per POST.
    public var timeout: TimeInterval

    /// Creates a transport.
    public init(certificateAuthority: URL? = nil, timeout: TimeInterval = 30, executable: URL = URL(fileURLWithPath: "/usr/bin/curl")) {
        self.certificateAuthority = certificateAuthority
        self.timeout = timeout
        self.executable = executable
    }

    /// POSTs and waits.
    public func post(_ body: [UInt8], to url: URL) -> NotificationAttemptResult {
        let process = Process()
        process.executableURL = executable
        var arguments = [
            "--silent", "--show-error", "--output", "/dev/null", "--write-out", "%{http_code}", "--max-time",
            String(Int(timeout.rounded(.up))),
            "--header", "Content-Type: application/json", "--data-binary", "@-",
        ]
        if let certificateAuthority { arguments += ["--cacert", certificateAuthority.path] }
        process.arguments = arguments + [url.absoluteString]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            return .failed("cannot run \(executable.path): \(error)")
        }
        input.fileHandleForWriting.write(Data(body))
        try? input.fileHandleForWriting.close()
        let code = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if let status = Int(code.trimmingCharacters(in: .whitespacesAndNewlines)), status > 0 { return .status(status) }
        // curl's exit status 28: the operation timed out.
        if process.terminationStatus == 28 { return .timedOut(message.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return .failed(
            message.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? "curl exited \(process.terminationStatus)" : message)
    }
}

/// One notification the sender signed, and what became of it.
public struct NotificationDelivery: Sendable, Hashable {
    /// `notificationUUID` (the same on every attempt).
    public let notificationUUID: String
    /// What it reports.
    public let event: ServerNotificationEvent
    /// The request body `{"signedPayload": …}` (the same on every attempt).
    public let body: [UInt8]
    /// When it was signed (simulated time).
    public let signedDate: Date
    /// Every attempt so far: when it was due (simulated time) and its result.
    public internal(set) var attempts: [(due: Date, result: NotificationAttemptResult)]
    /// When the next retry is due (simulated time); nil when delivered or given up.
    public internal(set) var nextAttempt: Date?

    /// Whether an attempt got 200.
    public var isDelivered: Bool { attempts.contains { $0.result.isDelivered } }
    /// Whether every retry of the schedule failed.
    public var isAbandoned: Bool { !isDelivered && nextAttempt == nil && !attempts.isEmpty }

    /// Equal when the same notification has the same history.
    public static func == (lhs: NotificationDelivery, rhs: NotificationDelivery) -> Bool {
        lhs.notificationUUID == rhs.notificationUUID && lhs.attempts.count == rhs.attempts.count
            && zip(lhs.attempts, rhs.attempts).allSatisfy { $0.due == $1.due && $0.result == $1.result }
            && lhs.nextAttempt == rhs.nextAttempt
    }

    /// Hashes the identity and history size.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(notificationUUID)
        hasher.combine(attempts.count)
    }
}

/// Sends App Store Server Notifications V2 the way the App Store does: each event becomes a
/// `ResponseBodyV2DecodedPayload` JSON (Apple's member names and order, `version` `2.0`,
/// `signedDate` in milliseconds) signed with an Apple-shaped JWS test PKI, POSTed as
/// `{"signedPayload": "<JWS>"}` to ``url``. An attempt that does not get HTTP 200 is retried after
/// each interval of ``retrySchedule`` (Apple's production schedule: 1, 12, 24, 48 and 72 hours after
/// the previous attempt), measured on the simulated clock: retries go out when
/// ``deliverDueRetries()`` runs (the simulated App Store calls it whenever its clock advances).
///
/// Attempts run in order on the sender's own serial queue, never on the caller's thread;
/// ``waitUntilIdle()`` waits for every attempt scheduled so far.
public final class AppStoreNotificationSender: @unchecked Sendable {
    /// Where notifications are POSTed.
    public let url: URL
    /// Signs the notifications (key and `x5c` chain).
    public let signer: JWSSigner
    /// `data.bundleId`.
    public let bundleIdentifier: String
    /// `data.appAppleId` (nil: not written, as in sandbox).
    public let appAppleId: Int64?
    /// `data.bundleVersion` (nil: not written).
    public let bundleVersion: String?
    /// `data.environment`.
    public let environment: Environment
    /// The simulated time: signed dates and retry times.
    public let clock: SimulatedClock
    /// The intervals before each retry, after the previous attempt.
    public let retrySchedule: [TimeInterval]
    /// How POSTs travel.
    public let transport: any NotificationTransport

    /// Apple's production retry schedule: 1, 12, 24, 48 and 72 hours.
    public static let appleRetrySchedule: [TimeInterval] = [3_600, 43_200, 86_400, 172_800, 259_200]

    private let queue = DispatchQueue(label: "AppStoreNotificationSender")
    private let lock = NSLock()
    private var log: [NotificationDelivery] = []

    /// Creates a sender.
    public init(
        url: URL, signer: JWSSigner, bundleIdentifier: String, appAppleId: Int64? = nil, bundleVersion: String? = nil,
        environment: Environment = .sandbox, clock: SimulatedClock, retrySchedule: [TimeInterval] = appleRetrySchedule,
        transport: any NotificationTransport = URLSessionNotificationTransport()
    ) {
        self.url = url
        self.signer = signer
        self.bundleIdentifier = bundleIdentifier
        self.appAppleId = appAppleId
        self.bundleVersion = bundleVersion
        self.environment = environment
        self.clock = clock
        self.retrySchedule = retrySchedule
        self.transport = transport
    }

    /// Every notification signed so far, in order, with its attempts.
    public var deliveries: [NotificationDelivery] {
        lock.lock()
        defer { lock.unlock() }
        return log
    }

    /// The notification JSON for `event` (compact, Apple's member order).
    public func payload(for event: ServerNotificationEvent, notificationUUID: String, signedDate: Date) throws(JWSIssuingError) -> [UInt8] {
        var json = JSONWriter(indent: 0)
        json.beginObject()
        json.string("notificationType", event.type.rawValue)
        if let subtype = event.subtype { json.string("subtype", subtype.rawValue) }
        json.string("notificationUUID", notificationUUID)
        json.beginObject("data")
        if let appAppleId { json.number("appAppleId", String(appAppleId)) }
        json.string("bundleId", bundleIdentifier)
        if let bundleVersion { json.string("bundleVersion", bundleVersion) }
        json.string("environment", environment.rawValue)
        if let token = event.signedTransactionInfo { json.string("signedTransactionInfo", token) }
        if let token = event.signedRenewalInfo { json.string("signedRenewalInfo", token) }
        if let status = event.status { json.number("status", String(status.rawValue)) }
        json.endObject()
        json.string("version", "2.0")
        json.number("signedDate", try JWSIssuer.milliseconds(signedDate, "signedDate"))
        json.endObject()
        return json.output
    }

    /// The request body for `event`, signed now: `{"signedPayload": "<JWS>"}`.
    public func signedBody(for event: ServerNotificationEvent, notificationUUID: String, signedDate: Date) throws -> [UInt8] {
        let token = try signer.sign(payload: try payload(for: event, notificationUUID: notificationUUID, signedDate: signedDate))
        var json = JSONWriter(indent: 0)
        json.beginObject()
        json.string("signedPayload", token)
        json.endObject()
        return json.output
    }

    /// Signs `event` now (a new `notificationUUID`) and schedules its first attempt at once.
    /// - Returns: the notification's UUID.
    /// - Throws: the signer's errors (nothing is scheduled then).
    @discardableResult
    public func send(_ event: ServerNotificationEvent) throws -> String {
        let uuid = UUID().uuidString.lowercased()
        let now = clock.now
        let body = try signedBody(for: event, notificationUUID: uuid, signedDate: now)
        lock.lock()
        log.append(NotificationDelivery(notificationUUID: uuid, event: event, body: body, signedDate: now, attempts: [], nextAttempt: now))
        lock.unlock()
        queue.async { self.attemptDue() }
        return uuid
    }

    /// Sends one `TEST` notification (no nested token) to ``url``, as the App Store Server API's
    /// "Request a Test Notification" does.
    /// - Returns: its UUID (Apple calls it the test notification token's notification).
    @discardableResult
    public func sendTestNotification() throws -> String {
        try send(ServerNotificationEvent(type: .test))
    }

    /// Attempts every notification whose next attempt is due at the simulated clock's time.
    public func deliverDueRetries() {
        queue.async { self.attemptDue() }
    }

    /// Blocks until every attempt scheduled so far has run.
    public func waitUntilIdle() {
        queue.sync {}
    }

    /// Runs on the queue: POSTs every due notification, in order, until none is due (after a
    /// long step of the clock a failing one uses every retry it was due for).
    private func attemptDue() {
        let now = clock.now
        while true {
            lock.lock()
            let work = log.indices.compactMap { index -> (index: Int, body: [UInt8], when: Date)? in
                guard let when = log[index].nextAttempt, when <= now else { return nil }
                return (index, log[index].body, when)
            }
            lock.unlock()
            guard !work.isEmpty else { return }
            for item in work {
                let result = transport.post(item.body, to: url)
                lock.lock()
                var delivery = log[item.index]
                delivery.attempts.append((item.when, result))
                if result.isDelivered {
                    delivery.nextAttempt = nil
                } else {
                    let retries = delivery.attempts.count - 1
                    delivery.nextAttempt = retries < retrySchedule.count ? item.when.addingTimeInterval(retrySchedule[retries]) : nil
                }
                log[item.index] = delivery
                lock.unlock()
            }
        }
    }
}
