import Foundation
import HTTPServer
import Internals
import JWS
import ReceiptServer
import ReceiptSigning
import ReceiptVerification
import ServerNotifications
import TestSupport
import Testing
import VerifyReceipt

/// Endpoints report what they did through one hook, which the metrics and a log both consume:
/// nobody routes a request again to learn its outcome.
@Suite struct OutcomeHookTests {
    /// The outcomes a hook received.
    final class Recorder: Sendable {
        let outcomes = Locked<[EndpointOutcome]>([])
        var hook: OutcomeHook { OutcomeHook { [self] outcome in outcomes.withLock { $0.append(outcome) } } }
        var all: [EndpointOutcome] { outcomes.withLock { $0 } }
    }

    @Test func notificationsReportToTheMetricsAndTheLogOnce() throws {
        let store = try SQLiteNotificationStore(path: temporaryDirectory().appendingPathComponent("n.db").path)
        let receiver = NotificationReceiver(
            verifier: NotificationVerifier(anchors: [try PKIs.jws.get().root], cache: nil),
            expectations: JWSExpectations(bundleIdentifier: "com.example.app", environments: [.sandbox]), store: store)
        let metrics = ServerMetrics(bundleIds: ["com.example.app"])
        let log = Recorder()
        let endpoint = NotificationsEndpoint(path: "/n", receiver: receiver, metrics: metrics, report: log.hook)
        let body = try NotificationsEndpointTests.testBody(uuid: "c0ffee00-0000-4000-8000-000000000002")
        var request = HTTPRequest(method: "POST", target: "/n", body: body)
        request.remoteAddress = "192.0.2.7"
        #expect(endpoint.respond(to: request).status == 200)
        #expect(endpoint.respond(to: request).status == 200)
        #expect(endpoint.respond(to: HTTPRequest(method: "POST", target: "/n", body: Array("[]".utf8))).status == 400)
        #expect(endpoint.respond(to: HTTPRequest(method: "GET", target: "/n")).status == 405)

        let outcomes = log.all
        #expect(outcomes.map(\.outcome) == ["accepted", "duplicate", "rejected"])
        #expect(outcomes.map(\.status) == [200, 200, 400])
        #expect(outcomes.allSatisfy { $0.route == .notifications && $0.method == "POST" && $0.path == "/n" })
        #expect(outcomes.first?.remoteAddress == "192.0.2.7")
        #expect(outcomes.first?.bundleId == "com.example.app")
        #expect(outcomes.first?.notificationUUID == "c0ffee00-0000-4000-8000-000000000002")
        #expect(outcomes.first?.detail == "c0ffee00-0000-4000-8000-000000000002 TEST")
        #expect(outcomes.first?.lagSeconds != nil)
        #expect(outcomes.last?.failedCheck == .body)
        #expect(outcomes.last?.bundleId == nil)

        #expect(metrics.counter("rmstore_notifications_total", ["com.example.app", "TEST", "accepted"]) == 1)
        #expect(metrics.counter("rmstore_notifications_total", ["com.example.app", "TEST", "duplicate"]) == 1)
        #expect(metrics.counter("rmstore_notifications_total", ["none", "none", "rejected"]) == 1)
        #expect(metrics.counter("rmstore_verification_failures_total", ["body"]) == 1)
    }

    @Test func verifyReceiptReportsItsStatus() throws {
        var endpoint = try VerifyReceiptEndpoint.apple(configuration: .init(environment: .sandbox))
        let log = Recorder()
        endpoint.report = log.hook
        let answer = endpoint.respond(to: HTTPRequest(method: "POST", target: "/verifyReceipt", body: Array("{}".utf8)))
        #expect(answer.status == 200)
        #expect(endpoint.respond(to: HTTPRequest(method: "GET", target: "/verifyReceipt")).status == 405)
        let outcomes = log.all
        #expect(outcomes.count == 1)
        #expect(outcomes.first?.route == .verifyReceipt)
        #expect(outcomes.first?.outcome == "21000" || outcomes.first?.outcome == "21002")
        #expect(outcomes.first?.detail.isEmpty == false)
    }

    @Test func hooksCombineInOrder() {
        let first = Recorder()
        let second = Recorder()
        let both = OutcomeHook.all([first.hook, nil, second.hook])
        both?.report(EndpointOutcome(route: .retention, method: "POST", path: "/r", status: 404, outcome: "noMessage", detail: "x"))
        #expect(first.all.count == 1 && second.all.count == 1)
        #expect(OutcomeHook.all([nil, nil]) == nil)
    }
}
