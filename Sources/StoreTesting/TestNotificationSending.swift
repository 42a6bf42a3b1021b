import Dispatch
public import Foundation
import Internals

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What one attempt to send a notification ended with, as the App Store records it in
/// `sendAttemptResult` (`SUCCESS`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, `TIMED_OUT`, …).
public struct NotificationSendOutcome: Sendable, Hashable, CustomStringConvertible {
    /// Apple's `sendAttemptResult` value.
    public var sendAttemptResult: String
    /// The HTTP status the receiver answered, if it answered.
    public var httpStatus: Int?
    /// What happened, for people.
    public var detail: String

    /// Creates an outcome.
    public init(sendAttemptResult: String, httpStatus: Int? = nil, detail: String = "") {
        self.sendAttemptResult = sendAttemptResult
        self.httpStatus = httpStatus
        self.detail = detail
    }

    /// The receiver answered `status`: `SUCCESS` for 200, `UNSUCCESSFUL_HTTP_RESPONSE_CODE` otherwise
    /// (Apple retries anything but 200).
    public static func answered(_ status: Int) -> NotificationSendOutcome {
        NotificationSendOutcome(
            sendAttemptResult: status == 200 ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE", httpStatus: status, detail: "HTTP \(status)")
    }

    /// `SUCCESS (HTTP 200)`.
    public var description: String { detail.isEmpty ? sendAttemptResult : "\(sendAttemptResult) (\(detail))" }
}

/// Delivers a signed notification body (`{"signedPayload": "<JWS>"}`) to the app's App Store Server
/// Notifications URL. The simulated App Store Server calls it for Request a Test Notification and
/// records what it returns for Get Test Notification Status; give it another sender (a recording
/// one in tests, the notification sender of the store's simulation) to route notifications
/// elsewhere.
public protocol TestNotificationSending: Sendable {
    /// POSTs `body` to `url` and says how the attempt ended. Must return within a bounded time.
    func send(_ body: [UInt8], to url: URL) -> NotificationSendOutcome
}

/// POSTs notifications with URLSession, as the App Store does: `Content-Type: application/json`,
/// no redirects followed, a bounded wait.
public final class HTTPTestNotificationSender: TestNotificationSending {
    /// Seconds to wait for the receiver's answer.
    public let timeout: TimeInterval
    let session: URLSession

    /// Creates a sender.
    public init(timeout: TimeInterval = 5) {
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = (timeout + 1).rounded(.up)
        configuration.timeoutIntervalForResource = (timeout + 1).rounded(.up)
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// POSTs the body; `TIMED_OUT` after ``timeout``, `NO_RESPONSE` when the receiver cannot be
    /// reached, `SUCCESS` for HTTP 200, `UNSUCCESSFUL_HTTP_RESPONSE_CODE` for any other status.
    public func send(_ body: [UInt8], to url: URL) -> NotificationSendOutcome {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: (timeout + 1).rounded(.up))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body)
        let result = Locked<NotificationSendOutcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: request) { _, response, error in
            let outcome: NotificationSendOutcome
            if let http = response as? HTTPURLResponse {
                outcome = .answered(http.statusCode)
            } else if let error = error as? URLError, error.code == .timedOut {
                outcome = NotificationSendOutcome(sendAttemptResult: "TIMED_OUT", detail: "\(error)")
            } else {
                outcome = NotificationSendOutcome(sendAttemptResult: "NO_RESPONSE", detail: error.map { "\($0)" } ?? "no response")
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout) == .timedOut {
            task.cancel()
            return NotificationSendOutcome(sendAttemptResult: "TIMED_OUT", detail: "no answer within \(timeout) s")
        }
        return result.withLock { $0 } ?? NotificationSendOutcome(sendAttemptResult: "OTHER", detail: "no outcome")
    }
}
