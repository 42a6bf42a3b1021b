import Foundation
import JSON
import JWS
import ReceiptSigning
import ReceiptVerification
import ServerNotifications
import StoreTesting
import TestSupport
import Testing

/// `NotificationRouter`: several apps, each verified with its own anchors and expectations; the
/// payload's bundle id only chooses which.
@Suite struct RouterTests {
    static let first = "com.example.first"
    static let second = "com.example.second"
    static let unknown = "com.example.unknown"
    static let firstAppleId: Int64 = 1_001
    static let secondAppleId: Int64 = 2_002

    /// The first app trusts the JWS test PKI in Production and Sandbox; the second trusts the
    /// other JWS test PKI in Sandbox only.
    static func router() throws -> NotificationRouter {
        try NotificationRouter(routes: [
            NotificationRoute(
                verifier: NotificationVerifier(anchors: [try PKIs.jws.get().root], cache: nil),
                expectations: JWSExpectations(bundleIdentifier: first, appAppleId: firstAppleId, environments: [.production, .sandbox])),
            NotificationRoute(
                verifier: NotificationVerifier(anchors: [try PKIs.otherJWS.get().root], cache: nil),
                expectations: JWSExpectations(bundleIdentifier: second, appAppleId: secondAppleId, environments: [.sandbox])),
        ])
    }

    /// A signed TEST notification body of `bundle`.
    static func body(
        _ bundle: String, environment: Environment = .production, appAppleId: Int64? = nil, signer: JWSSigner? = nil,
        uuid: String = UUID().uuidString.lowercased()
    ) throws -> [UInt8] {
        let clock = SimulatedClock()
        let sender = AppStoreNotificationSender(
            url: URL(fileURLWithPath: "/"), signer: try signer ?? PKIs.jws.get().jwsSigner(), bundleIdentifier: bundle,
            appAppleId: appAppleId ?? (bundle == second ? secondAppleId : firstAppleId), bundleVersion: "1.0", environment: environment,
            clock: clock, transport: URLSessionNotificationTransport())
        return try sender.signedBody(for: ServerNotificationEvent(type: .test), notificationUUID: uuid, signedDate: clock.now)
    }

    static func token(_ body: [UInt8]) throws -> String {
        try #require(try JSONValue.parse(body)["signedPayload"]?.stringValue)
    }

    /// The rejection `router` gives `body` (nil when it verifies).
    static func rejection(_ router: NotificationRouter, _ body: [UInt8]) throws -> NotificationRejection? {
        guard case .failure(let rejection) = router.verify(try token(body), at: .signedDate) else { return nil }
        return rejection
    }

    @Test func routesEachAppToItsOwnVerification() throws {
        let router = try Self.router()
        #expect(router.bundleIds == [Self.first, Self.second])
        let other = try PKIs.otherJWS.get().jwsSigner()
        for (bundle, environment, signer) in [
            (Self.first, Environment.production, nil), (Self.first, .sandbox, nil), (Self.second, .sandbox, other),
        ] {
            let result = router.verify(try Self.token(try Self.body(bundle, environment: environment, signer: signer)), at: .signedDate)
            guard case .success(let verdict) = result else {
                Issue.record("\(bundle) \(environment) was rejected: \(result)")
                continue
            }
            #expect(verdict.payload?.value.data?.bundleId == bundle && verdict.payload?.value.data?.environment == environment)
        }
    }

    /// The payload names the app; that app's anchors and expectations decide.
    @Test func theNamedAppsExpectationsDecide() throws {
        let router = try Self.router()
        let other = try PKIs.otherJWS.get().jwsSigner()
        // The first app's notification signed under the second app's anchors: the second app would
        // accept that chain, the first does not.
        let crossSigned = try #require(try Self.rejection(router, try Self.body(Self.first, signer: other)))
        #expect(crossSigned.check != .bundleIdentifier && crossSigned.mayBeOurConfiguration, "\(crossSigned)")
        // The second app's notification under the first app's anchors.
        let crossSecond = try #require(try Self.rejection(router, try Self.body(Self.second, environment: .sandbox)))
        #expect(crossSecond.check != .bundleIdentifier && crossSecond.mayBeOurConfiguration, "\(crossSecond)")
        // An environment the app does not receive (the first app allows it).
        let environment = try #require(try Self.rejection(router, try Self.body(Self.second, environment: .production, signer: other)))
        #expect(environment.check == .environment && environment.mayBeOurConfiguration, "\(environment)")
        #expect(environment.reason.contains("Production"))
        // Another app Apple id in production.
        let appleId = try #require(try Self.rejection(router, try Self.body(Self.first, appAppleId: 99)))
        #expect(appleId.check == .appAppleId && appleId.mayBeOurConfiguration, "\(appleId)")
        // A forged signature of a configured app: not Apple's, answered 400.
        let genuine = try Self.token(try Self.body(Self.first))
        let forged = String(genuine.dropLast(4)) + (genuine.hasSuffix("AAAA") ? "BBBB" : "AAAA")
        guard case .failure(let signature) = router.verify(forged, at: .signedDate) else {
            Issue.record("a forged signature verified")
            return
        }
        #expect(signature.check == .signature && !signature.mayBeOurConfiguration, "\(signature)")
    }

    /// A bundle id no app has: genuine, it is refused as a configuration problem (5xx); forged, for
    /// its forgery (400); unreadable, by the first app's verification.
    @Test func unconfiguredAndUnreadable() throws {
        let router = try Self.router()
        let unconfigured = try #require(try Self.rejection(router, try Self.body(Self.unknown)))
        #expect(unconfigured.check == .bundleIdentifier && unconfigured.mayBeOurConfiguration, "\(unconfigured)")
        #expect(unconfigured.reason.contains(#""com.example.unknown""#) && unconfigured.reason.contains("not a configured app"))
        // Genuine under the second app's anchors only: still recognised as genuine.
        let underOther = try #require(
            try Self.rejection(router, try Self.body(Self.unknown, signer: try PKIs.otherJWS.get().jwsSigner())))
        #expect(underOther.check == .bundleIdentifier, "\(underOther)")
        let genuine = try Self.token(try Self.body(Self.unknown))
        let forged = String(genuine.dropLast(4)) + (genuine.hasSuffix("AAAA") ? "BBBB" : "AAAA")
        guard case .failure(let signature) = router.verify(forged, at: .signedDate) else {
            Issue.record("a forged signature verified")
            return
        }
        #expect(signature.check == .signature && !signature.mayBeOurConfiguration, "\(signature)")
        // A hostile bundle id is quoted in the reason.
        let hostile = try #require(try Self.rejection(router, try Self.body("evil\"\n\u{1B}[31m")))
        #expect(hostile.check == .bundleIdentifier && !hostile.reason.contains("\n") && !hostile.reason.contains("\u{1B}"))
        // Not a JWS at all.
        guard case .failure(let garbage) = router.verify("not.a.token", at: .signedDate) else {
            Issue.record("garbage verified")
            return
        }
        #expect(!garbage.mayBeOurConfiguration, "\(garbage)")
    }

    @Test func refusesAmbiguousConfigurations() throws {
        let verifier = NotificationVerifier(anchors: [try PKIs.jws.get().root], cache: nil)
        func route(_ bundle: String?, _ environments: Set<Environment>? = [.production]) -> NotificationRoute {
            NotificationRoute(verifier: verifier, expectations: JWSExpectations(bundleIdentifier: bundle, environments: environments))
        }
        for routes in [[], [route(nil)], [route("")], [route("a"), route("a")], [route("a", nil)], [route("a", [])]] {
            #expect(throws: NotificationStoreError.self) { try NotificationRouter(routes: routes) }
            do {
                _ = try NotificationRouter(routes: routes)
            } catch {
                #expect(error.code == .invalidConfiguration)
            }
        }
        // One route that does not read tokens leaves the decision to its expectations.
        let only = NotificationRouter(only: route("a"))
        #expect(only.bundleIds.isEmpty)
        let rejection = try #require(try Self.rejection(only, try Self.body(Self.first)))
        #expect(rejection.check == .bundleIdentifier && rejection.reason.contains("expected"), "\(rejection)")
    }

    /// One receiver, one store: rows keep their app and environment; an unconfigured app's
    /// notification is a dead letter, stored once by a retry under a router that has the app.
    @Test func receiverStoresPerAppAndRetriesOnce() throws {
        let store = try SQLiteNotificationStore(path: temporaryDatabase())
        let receiver = NotificationReceiver(router: try Self.router(), store: store, deadLetters: store)
        let other = try PKIs.otherJWS.get().jwsSigner()
        for (bundle, environment, signer) in [
            (Self.first, Environment.production, nil), (Self.first, .sandbox, nil), (Self.second, .sandbox, other),
        ] {
            let outcome = receiver.receive(body: try Self.body(bundle, environment: environment, signer: signer))
            #expect(outcome.name == "accepted", "\(bundle) \(environment): \(outcome)")
        }
        let rows = try store.notifications(.all)
        #expect(
            rows.map { "\($0.bundleId ?? "?")/\($0.environment ?? "?")" }.sorted() == [
                "\(Self.first)/Production", "\(Self.first)/Sandbox", "\(Self.second)/Sandbox",
            ])
        let uuid = "0a0b0c0d-0000-4000-8000-000000000001"
        guard case .rejected(let rejection) = receiver.receive(body: try Self.body(Self.unknown, uuid: uuid), source: "127.0.0.1") else {
            Issue.record("an unconfigured app was not rejected")
            return
        }
        #expect(rejection.check == .bundleIdentifier && rejection.deadLetterId != nil)

        // Retried under the same router: still rejected, nothing stored.
        let letters = try store.deadLetters(DeadLetterQuery(pendingOnly: true))
        try #require(letters.count == 1)
        #expect(receiver.retry(letters[0]).name == "rejected")

        // The app added: stored once; the letter marked, so a second retry stores nothing.
        var routes = try Self.router().routes
        routes.append(
            NotificationRoute(
                verifier: NotificationVerifier(anchors: [try PKIs.jws.get().root], cache: nil),
                expectations: JWSExpectations(bundleIdentifier: Self.unknown, appAppleId: Self.firstAppleId, environments: [.production])))
        let added = NotificationReceiver(router: try NotificationRouter(routes: routes), store: store, deadLetters: store)
        #expect(added.retry(try #require(try store.deadLetters(DeadLetterQuery(pendingOnly: true)).first)).name == "stored")
        #expect(try store.deadLetters(DeadLetterQuery(pendingOnly: true)).isEmpty)
        let marked = try #require(try store.deadLetters(.init()).first)
        #expect(added.retry(marked).name == "alreadyRetried")
        let stored = try store.notifications(NotificationQuery(notificationUUID: uuid))
        #expect(stored.count == 1 && stored.first?.bundleId == Self.unknown && stored.first?.environment == "Production")
        #expect(try store.notifications(.all).count == 4)
    }
}
