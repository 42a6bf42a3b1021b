import AppStoreServerAPI
public import Foundation
public import HTTPServer
import JSON
public import JWS
public import ReceiptVerification
import ServerNotifications

/// Retention Messaging's Get Retention Message endpoint: the App Store POSTs
/// `{"signedPayload": JWS}` while a customer looks at a subscription, and the answer chooses the
/// message the system shows.
///
/// | status | body | when |
/// |---|---|---|
/// | 200 | `{"message":{"messageIdentifier":…}}` | verified; the product's message, or the default |
/// | 400 | `{"status":"rejected","check":…,"reason":…}` | not a real-time request body, or a failed check |
/// | 404 | `{"status":"noMessage"}` | verified, but no message is configured for the product |
///
/// Each request is verified like every App Store JWS (signature, chain to the anchors, kind,
/// environment, app Apple id) before a message is chosen. Apple asks receivers to compare every
/// request's `appAppleId` with the app's, so a request naming another app is refused in every
/// environment, not only in production. On any answer but 200 the App Store shows the default
/// message configured with Configure Default Message.
public struct RetentionEndpoint: HTTPHandler {
    /// What the endpoint did with one body.
    public enum Outcome: Sendable {
        /// Verified; answered with this message.
        case answered(RealtimeRequest, message: UUID)
        /// Verified; no message is configured for its product.
        case noMessage(RealtimeRequest)
        /// Refused, naming the failed check.
        case rejected(check: VerificationCheck.Name, reason: String)
    }

    /// The route's path.
    public let path: String
    /// Verifies each request.
    public let verifier: RealtimeRequestVerifier
    /// What a request must say: app Apple id and environments (a bundle id does not apply: a
    /// real-time request names none).
    public let expectations: JWSExpectations
    /// When chains are validated (the request's signed date by default).
    public let validationTime: ValidationTime
    /// The messages to answer with.
    public let messages: RetentionMessages
    /// Where each answer is reported (route ``EndpointOutcome/Route/retention``); nil: nowhere.
    public var report: OutcomeHook?

    /// Creates the endpoint; expectations a real-time request does not carry are dropped
    /// (`JWSExpectations.applicable(to:)`), so one set of an app's expectations serves here too.
    public init(
        path: String = "/retention", verifier: RealtimeRequestVerifier, expectations: JWSExpectations,
        validationTime: ValidationTime = .signedDate, messages: RetentionMessages
    ) {
        self.path = path
        self.verifier = verifier
        self.expectations = expectations.applicable(to: RealtimeRequest.self)
        self.validationTime = validationTime
        self.messages = messages
    }

    /// Answers `POST` on ``path`` (405 for another method, 404 for another path).
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        guard request.path == path else { return .text("not found", status: 404) }
        guard request.method == "POST" else { return .text("use POST", status: 405, headers: [HTTPHeader("Allow", "POST")]) }
        let (response, outcome) = answer(body: request.body)
        if let report {
            var record = EndpointOutcome(
                route: .retention, method: request.method, path: request.path, remoteAddress: request.remoteAddress,
                status: response.status, outcome: "", detail: "")
            switch outcome {
            case .answered(let realtime, let message):
                record.outcome = "answered"
                record.detail = "message \(message.uuidString) for product \(realtime.productId ?? "?")"
            case .noMessage(let realtime):
                record.outcome = "noMessage"
                record.detail = "no message for product \(realtime.productId ?? "?")"
            case .rejected(let check, let reason):
                record.outcome = "rejected"
                record.detail = "\(check.rawValue): \(reason)"
                record.failedCheck = check
            }
            report.report(record)
        }
        return response
    }

    /// The outcome for a body and the response that says it.
    public func answer(body: [UInt8]) -> (response: HTTPResponse, outcome: Outcome) {
        let outcome = decide(body: body)
        switch outcome {
        case .answered(_, let message):
            return (.json(RealtimeResponse.message(message).jsonBody), outcome)
        case .noMessage:
            return (.json(Array(#"{"status":"noMessage"}"#.utf8), status: 404), outcome)
        case .rejected(let check, let reason):
            var json = JSONWriter(indent: 0)
            json.beginObject()
            json.string("status", "rejected")
            json.string("check", check.rawValue)
            json.string("reason", reason)
            json.endObject()
            return (.json(json.output, status: 400), outcome)
        }
    }

    func decide(body: [UInt8]) -> Outcome {
        let token: String
        switch NotificationReceiver.signedPayload(of: body, limits: verifier.format.limits) {
        case .success(let value): token = value
        case .failure(let rejection): return .rejected(check: rejection.check, reason: rejection.reason)
        }
        let verdict = verifier.verify(Array(token.utf8), expecting: expectations, at: validationTime)
        guard verdict.isValid, let request: RealtimeRequest = verdict.value() else {
            let failed = verdict.failures.first
            return .rejected(check: failed?.name ?? .signature, reason: failed?.reason ?? "the request did not verify")
        }
        if let expected = expectations.appAppleId, let actual = request.appAppleId, actual != expected {
            return .rejected(check: .appAppleId, reason: "the real-time request is for app \(actual), expected \(expected)")
        }
        guard let message = messages.message(forProduct: request.productId) else { return .noMessage(request) }
        return .answered(request, message: message)
    }
}
