import Foundation
import HTTPServer
import JSON
import JWS
import ReceiptServer
import ReceiptSigning
import ReceiptVerification
import ServerNotifications
import TestSupport
import Testing
import VerifyReceipt

@Suite struct NotificationsEndpointTests {
    static func routes(store: any NotificationStore, path: String = "/notifications") throws -> ReceiptServerRoutes {
        let receiver = NotificationReceiver(
            verifier: NotificationVerifier(anchors: [try PKIs.jws.get().root], cache: nil),
            expectations: JWSExpectations(bundleIdentifier: "com.example.app", environments: [.sandbox]), store: store)
        return ReceiptServerRoutes(
            verifyReceipt: try VerifyReceiptEndpoint.apple(configuration: .init(environment: .sandbox)),
            notifications: NotificationsEndpoint(path: path, receiver: receiver))
    }

    static func request(_ method: String, _ path: String, _ body: [UInt8] = []) -> HTTPRequest {
        HTTPRequest(method: method, target: path, body: body)
    }

    static func testBody(uuid: String) throws -> [UInt8] {
        let json =
            #"{"notificationType":"TEST","notificationUUID":"\#(uuid)","data":{"bundleId":"com.example.app","environment":"Sandbox"},"version":"2.0","signedDate":1700000000000}"#
        let token = try PKIs.jws.get().jwsSigner().sign(payload: Array(json.utf8))
        return Array(#"{"signedPayload":"\#(token)"}"#.utf8)
    }

    /// Routing: the notifications path (POST only, configurable), /health with the store,
    /// verifyReceipt and 404 as before.
    @Test func routesAndStatuses() throws {
        let store = try SQLiteNotificationStore(path: temporaryDirectory().appendingPathComponent("n.db").path)
        let routes = try Self.routes(store: store, path: "/apple/notifications")
        let body = try Self.testBody(uuid: "c0ffee00-0000-4000-8000-000000000001")
        let accepted = routes.respond(to: Self.request("POST", "/apple/notifications", body))
        #expect(accepted.status == 200)
        #expect(
            String(decoding: accepted.body, as: UTF8.self)
                == #"{"status":"accepted","notificationUUID":"c0ffee00-0000-4000-8000-000000000001"}"#)
        let duplicate = routes.respond(to: Self.request("POST", "/apple/notifications", body))
        #expect(duplicate.status == 200 && String(decoding: duplicate.body, as: UTF8.self).contains(#""duplicate""#))
        let rejected = routes.respond(to: Self.request("POST", "/apple/notifications", Array("[]".utf8)))
        #expect(rejected.status == 400)
        #expect(try JSONValue.parse(rejected.body)["check"]?.stringValue == "body")
        let get = routes.respond(to: Self.request("GET", "/apple/notifications"))
        #expect(get.status == 405 && get.headers.contains { $0.name == "Allow" && $0.value == "POST" })
        #expect(routes.respond(to: Self.request("POST", "/notifications", body)).status == 404)
        #expect(routes.respond(to: Self.request("POST", "/verifyReceipt", Array("{}".utf8))).status == 200)

        let health = routes.respond(to: Self.request("GET", "/health"))
        #expect(health.status == 200)
        let json = try JSONValue.parse(health.body)
        #expect(json["status"]?.stringValue == "ok" && json["environment"]?.stringValue == "Sandbox")
        #expect(json["notifications"]?["store"]?.stringValue == "sqlite")
        #expect(json["notifications"]?["status"]?.stringValue == "ok")
        #expect(json["notifications"]?["stored"]?.int64Value == 1 && json["notifications"]?["commits"]?.int64Value == 2)
        #expect(routes.respond(to: Self.request("POST", "/health")).status == 405)
    }

    /// The store gone (its PostgreSQL server stopped): notifications get 503 and are not
    /// acknowledged, `/health` answers 503 naming the problem.
    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"))
    func storeUnavailableIs503() throws {
        let cluster = try PostgresCluster.start(label: "endpoint")
        defer { cluster.stop() }
        let routes = try Self.routes(store: try PostgresNotificationStore(url: cluster.url(), connectTimeout: 2))
        #expect(routes.respond(to: Self.request("POST", "/notifications", try Self.testBody(uuid: "a"))).status == 200)
        cluster.stop()
        let answer = routes.respond(to: Self.request("POST", "/notifications", try Self.testBody(uuid: "b")))
        #expect(answer.status == 503)
        #expect(try JSONValue.parse(answer.body)["status"]?.stringValue == "unavailable")
        let health = routes.respond(to: Self.request("GET", "/health"))
        #expect(health.status == 503)
        let json = try JSONValue.parse(health.body)
        #expect(json["status"]?.stringValue == "unavailable" && json["notifications"]?["status"]?.stringValue == "unavailable")
        #expect(json["notifications"]?["problem"]?.stringValue?.isEmpty == false)
    }
}
