// Answers tied to questions: a genuine, validly signed value that answers another request fails
// the call like a forged one, naming the check `answerMatchesRequest`.

import AppStoreServerAPI
import Foundation
import JSON
import JWS
import ReceiptSigning
import ReceiptVerification
import StoreTesting
import TestSupport
import Testing

@Suite("answers match requests")
@MainActor
struct AnswerMatchingTests {
    /// A 200 answer with this JSON body, once.
    func answer(_ world: ServerWorld, _ endpoint: SimulatedAppStoreServer.Endpoint, _ members: [(String, JSONValue)]) {
        world.server.script([.body(status: 200, JSONValue.object(members).jsonBytes())], for: endpoint)
    }

    func token<Value>(_ signed: SignedJWS<Value>) -> String { String(decoding: signed.jws.token, as: UTF8.self) }

    func expectMismatch(_ error: AppStoreServerAPIError?, at location: String, _ detail: String) {
        #expect(error?.code == .verificationFailed, "\(String(describing: error))")
        #expect(error?.failedCheck?.name == .answerMatchesRequest)
        #expect(error?.failedCheck?.passed == false)
        #expect(error?.location == location)
        #expect(error?.reason.contains(detail) == true, "\(String(describing: error?.reason))")
    }

    /// A notification signed by the test PKI, as the App Store signs them.
    func notification(_ world: ServerWorld, type: String, signedDate: Date) throws -> String {
        let milliseconds = Int64(signedDate.timeIntervalSince1970 * 1000)
        let json =
            #"{"notificationType":"\#(type)","notificationUUID":"\#(UUID().uuidString.lowercased())","data":{"bundleId":"\#(ServerWorld.bundleID)","environment":"Sandbox"},"version":"2.0","signedDate":\#(milliseconds)}"#
        return try world.jwsPKI.jwsSigner().sign(payload: Array(json.utf8))
    }

    @Test func transactionInfo_answeredWithAnotherGenuineTransaction_fails() async throws {
        let world = try ServerWorld()
        world.buy(Products.coins)
        world.buy(Products.level)
        let client = try world.client()
        let ids = world.historyIDs
        let other = try await client.transactionInfo(transactionID: ids[1])
        #expect(other.value.transactionId == ids[1], "the simulated server answers the question asked")
        answer(world, .transactionInfo, [("signedTransactionInfo", .string(token(other)))])
        let error = await apiError { try await client.transactionInfo(transactionID: ids[0]) }
        expectMismatch(error, at: "signedTransactionInfo", "transaction \"\(ids[0])\" was requested")
        #expect(error?.description.contains("answerMatchesRequest") == true)
        await world.shutdown()
    }

    @Test func testNotificationStatus_mustBeATestNotification() async throws {
        let world = try ServerWorld()
        let client = try world.client()
        let renewal = try notification(world, type: "DID_RENEW", signedDate: world.clock.now)
        answer(world, .testNotificationStatus, [("signedPayload", .string(renewal)), ("sendAttempts", .array([]))])
        let error = await apiError { try await client.testNotificationStatus(token: "1234") }
        expectMismatch(error, at: "signedPayload", "\"DID_RENEW\" notification, not TEST")
        // The same notification as TEST is accepted.
        let test = try notification(world, type: "TEST", signedDate: world.clock.now)
        answer(world, .testNotificationStatus, [("signedPayload", .string(test)), ("sendAttempts", .array([]))])
        let status = try await client.testNotificationStatus(token: "1234")
        #expect(status.notification.value.notificationType == .test)
        await world.shutdown()
    }

    @Test func notificationHistory_entriesMustFallInTheRequestedRangeAndType() async throws {
        let world = try ServerWorld()
        let client = try world.client()
        let now = world.clock.now
        let window = NotificationHistoryRequest(startDate: now.addingTimeInterval(-3600), endDate: now)
        let inside = try notification(world, type: "TEST", signedDate: now.addingTimeInterval(-60))
        let outside = try notification(world, type: "TEST", signedDate: now.addingTimeInterval(-7200))
        func page(_ tokens: [String]) -> [(String, JSONValue)] {
            [
                ("notificationHistory", .array(tokens.map { .object([("sendAttempts", .array([])), ("signedPayload", .string($0))]) })),
                ("hasMore", .bool(false)),
            ]
        }
        answer(world, .notificationHistory, page([inside, outside]))
        let early = await apiError { try await client.notificationHistory(window) }
        expectMismatch(early, at: "page 1: notificationHistory[1].signedPayload", "is not in the requested range")
        // At the end date: outside too (the range is [startDate, endDate)).
        answer(world, .notificationHistory, page([try notification(world, type: "TEST", signedDate: now)]))
        expectMismatch(
            await apiError { try await client.notificationHistory(window) }, at: "page 1: notificationHistory[0].signedPayload",
            "is not in the requested range")
        // Another type than the one asked for.
        answer(world, .notificationHistory, page([inside]))
        let typed = NotificationHistoryRequest(startDate: window.startDate, endDate: window.endDate, notificationType: .didRenew)
        expectMismatch(
            await apiError { try await client.notificationHistory(typed) }, at: "page 1: notificationHistory[0].signedPayload",
            "is not the requested DID_RENEW")
        // Inside the range: accepted.
        answer(world, .notificationHistory, page([inside]))
        #expect(try await client.notificationHistory(window).count == 1)
        await world.shutdown()
    }

    @Test func statusesAndHistory_mustMeetTheFiltersAskedFor() async throws {
        let world = try ServerWorld()
        world.buy(Products.coins)
        world.buy(Products.monthly)
        let client = try world.client()
        let ids = world.historyIDs
        // Statuses: only active ones were asked for; a genuine item with status 2 is not an answer.
        let statuses = try await client.subscriptionStatuses(transactionID: ids[0], status: [.active])
        let item = try #require(statuses.groups.first?.lastTransactions.first)
        #expect(item.status == .active)
        let group: JSONValue = .object([
            ("subscriptionGroupIdentifier", .string(Products.monthlyGroup)),
            (
                "lastTransactions",
                .array([
                    .object([
                        ("status", .number("2")), ("originalTransactionId", .string(item.originalTransactionId)),
                        ("signedTransactionInfo", .string(token(item.transaction))),
                        ("signedRenewalInfo", .string(token(item.renewalInfo))),
                    ])
                ])
            ),
        ])
        answer(
            world, .subscriptionStatuses,
            [("environment", .string("Sandbox")), ("bundleId", .string(ServerWorld.bundleID)), ("data", .array([group]))])
        expectMismatch(
            await apiError { try await client.subscriptionStatuses(transactionID: ids[0], status: [.active]) },
            at: "data[0].lastTransactions[0].status", "status 2 is not among the requested statuses (1)")

        // History: only coins were asked for; the genuine monthly transaction is not an answer.
        let filter = TransactionHistoryRequest(productIDs: [Products.coins])
        let coins = try await client.transactionHistory(transactionID: ids[0], request: filter)
        #expect(coins.transactions.map(\.value.productId) == [Products.coins], "the simulated server filters as asked")
        let monthly = try await client.transactionInfo(transactionID: ids[1])
        answer(
            world, .transactionHistory,
            [
                ("revision", .string("r1")), ("hasMore", .bool(false)), ("bundleId", .string(ServerWorld.bundleID)),
                ("environment", .string("Sandbox")), ("signedTransactions", .array([.string(token(monthly))])),
            ])
        expectMismatch(
            await apiError { try await client.transactionHistory(transactionID: ids[0], request: filter) },
            at: "page 1: signedTransactions[0]", "productId \"\(Products.monthly)\" is not among the requested products")
        // And purchased before the requested start date.
        answer(
            world, .transactionHistory,
            [
                ("revision", .string("r1")), ("hasMore", .bool(false)), ("bundleId", .string(ServerWorld.bundleID)),
                ("environment", .string("Sandbox")), ("signedTransactions", .array([.string(token(monthly))])),
            ])
        let later = TransactionHistoryRequest(startDate: world.clock.now.addingTimeInterval(86_400))
        expectMismatch(
            await apiError { try await client.transactionHistory(transactionID: ids[0], request: later) },
            at: "page 1: signedTransactions[0]", "is before the requested startDate")
        await world.shutdown()
    }
}
