import Foundation
import HTTPServer
import Internals
import JSON
import JWS
import StoreTesting
import TestSupport
import Testing

@MainActor
@Suite struct SenderTests {
    /// Over real HTTP (URLSession to the package's server on 127.0.0.1): a notification that is not
    /// answered 200 is retried 1, 12, 24, 48 and 72 hours after the previous attempt on the
    /// simulated clock, and not after it is delivered.
    @Test func retriesOnApplesScheduleUntilDelivered() async throws {
        let answers = Locked([500, 503, 400])
        let handler = ScriptedHandler { _ in
            let status = answers.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
            return HTTPResponse(status: status, body: Array("{}".utf8))
        }
        let local = try LocalServer(handler)
        do {
            let app = try SimulatedApp(transport: URLSessionNotificationTransport(), url: url(local.server, "/notifications"))
            let start = app.clock.now
            let uuid = try app.sender.sendTestNotification()
            await waitIdle(app)
            #expect(app.sender.deliveries.first?.attempts.count == 1)
            #expect(app.sender.deliveries.first?.nextAttempt == start.addingTimeInterval(3_600))
            app.advance(days: 0.5 / 24)  // 30 minutes: nothing due
            await waitIdle(app)
            #expect(app.sender.deliveries.first?.attempts.count == 1)
            app.advance(days: 1.0 / 24)  // 1 h 30: the first retry
            await waitIdle(app)
            #expect(app.sender.deliveries.first?.attempts.count == 2)
            app.advance(days: 3)  // past 1 + 12 + 24 hours: the second and third retries
            await waitIdle(app)
            let delivery = try #require(app.sender.deliveries.first)
            #expect(delivery.notificationUUID == uuid)
            #expect(delivery.isDelivered)
            #expect(delivery.attempts.map(\.result) == [.status(500), .status(503), .status(400), .status(200)])
            #expect(delivery.attempts.map { $0.due.timeIntervalSince(start) } == [0, 3_600, 3_600 + 43_200, 3_600 + 43_200 + 86_400])
            app.advance(days: 10)
            await waitIdle(app)
            #expect(app.sender.deliveries.first?.attempts.count == 4)
            // Every attempt carried the same signed body, as Apple's retries do.
            let bodies = handler.requests.map(\.body)
            #expect(bodies.count == 4 && Set(bodies.map { $0 }).count == 1)
            #expect(handler.requests.allSatisfy { $0.method == "POST" && $0.path == "/notifications" })
            let payload = try JSONValue.parse(bodies[0])["signedPayload"]?.stringValue
            let decoded = try NotificationPayload(jsonPayload: try CompactJWS(payload ?? "").unverifiedPayload)
            #expect(decoded.notificationType == .test && decoded.notificationUUID == uuid && decoded.version == "2.0")
            #expect(decoded.data?.bundleId == IDs.bundle && decoded.data?.environment == .production)
        } catch {
            await local.shutdown()
            throw error
        }
        await local.shutdown()
    }

    /// Nobody listening: after the five retries of the schedule the notification is abandoned.
    @Test func abandonsAfterFiveRetries() async throws {
        let app = try SimulatedApp(
            transport: URLSessionNotificationTransport(timeout: 5), url: URL(string: "http://127.0.0.1:9/n") ?? URL(fileURLWithPath: "/"))
        try app.sender.sendTestNotification()
        app.advance(days: 30)
        await waitIdle(app)
        let delivery = try #require(app.sender.deliveries.first)
        #expect(delivery.attempts.count == 6)
        #expect(delivery.isAbandoned && !delivery.isDelivered)
        // Nothing listens on port 9: no attempt got an answer (refused, or timed out on a loaded machine).
        #expect(delivery.attempts.allSatisfy { if case .status = $0.result { false } else { true } })
    }

    func waitIdle(_ app: SimulatedApp) async {
        let sender = app.sender
        _ = try? await onThread { sender.waitUntilIdle() }
    }
}
