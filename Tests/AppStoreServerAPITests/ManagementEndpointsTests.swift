// The endpoints Apple added since 2023 end to end: the client against the simulated App Store
// Server on 127.0.0.1, two customers whose histories must never mix, the bodies validated before
// sending, and the per-endpoint rate limits on both sides.

import AppStoreServerAPI
import Foundation
import JSON
import JWS
import RMStore
import ReceiptSigning
import ReceiptVerification
import StoreTesting
import TestSupport
import Testing

@Suite("App Store Server API: 2026 endpoints, two customers, rate limits")
@MainActor
struct ManagementEndpointsTests {
    /// A second customer of the same app: a store of its own (other transaction ids), synchronized
    /// into the same server under the name `bob`.
    func secondCustomer(_ world: ServerWorld) -> SimulatedAppStore {
        let store = SimulatedAppStore(
            catalog: Products.catalog, bundleIdentifier: ServerWorld.bundleID, jwsIssuer: JWSIssuer(pki: world.jwsPKI), clock: world.clock,
            deliversAutomatically: false, seed: 99)
        return store
    }

    func buy(_ store: SimulatedAppStore, _ product: String, _ world: ServerWorld) {
        store.add(Payment(productIdentifier: product))
        store.processAllEvents()
        world.server.synchronize(with: store, customer: "bob")
    }

    @Test func everyNewEndpoint_answersFromTheSimulation_andTwoCustomersNeverMix() async throws {
        let world = try ServerWorld()
        let bob = secondCustomer(world)
        world.buy(Products.coins)
        world.buy(Products.monthly)
        buy(bob, Products.monthly, world)
        buy(bob, Products.level, world)
        let alice = world.historyIDs
        let bobs = bob.purchaseHistory.map(\.transactionIdentifier)
        #expect(Set(alice).isDisjoint(with: bobs))
        let client = try world.client()

        // Get App Transaction Info: one app transaction per customer, verified.
        let aliceApp = try await client.appTransactionInfo(transactionID: alice[0])
        let aliceAgain = try await client.appTransactionInfo(transactionID: alice[1])
        let bobApp = try await client.appTransactionInfo(transactionID: bobs[1])
        #expect(aliceApp.value.receiptType == .sandbox && aliceApp.value.bundleId == ServerWorld.bundleID)
        #expect(aliceApp.value.appTransactionId != nil && aliceApp.value.appTransactionId == aliceAgain.value.appTransactionId)
        #expect(bobApp.value.appTransactionId != aliceApp.value.appTransactionId)
        #expect(
            world.requests(.appTransactionInfo).map(\.path) == alice.prefix(2).map { "/inApps/v1/transactions/appTransactions/\($0)" } + [
                "/inApps/v1/transactions/appTransactions/\(bobs[1])"
            ])

        // A transaction id answers only with its own customer's history.
        let bobHistory = try await client.transactionHistory(transactionID: bobs[0])
        #expect(bobHistory.transactions.compactMap(\.value.transactionId) == bobs)
        let aliceHistory = try await client.transactionHistory(transactionID: alice[1])
        #expect(aliceHistory.transactions.compactMap(\.value.transactionId) == alice)
        let bobStatuses = try await client.subscriptionStatuses(transactionID: bobs[0])
        #expect(bobStatuses.groups.flatMap(\.lastTransactions).map(\.originalTransactionId) == [bobs[0]])

        // Send Consumption Information (v2): accepted, the body as sent; out of range refused locally.
        let consumption = ConsumptionRequestV2(
            customerConsented: true, consumptionPercentage: 25_000, deliveryStatus: .delivered, refundPreference: .grantProrated,
            sampleContentProvided: false)
        try await client.sendConsumptionInformation(transactionID: alice[0], consumption)
        #expect(world.server.consumptionRequestsV2.map(\.transactionIdentifier) == [alice[0]])
        #expect(world.server.consumptionRequestsV2.first?.body == consumption)
        #expect(
            world.requests(.sendConsumptionInformationV2).map { "\($0.method) \($0.path) \($0.status)" } == [
                "PUT /inApps/v2/transactions/consumption/\(alice[0]) 202"
            ])
        let sent = world.server.requests.count
        var tooMuch = consumption
        tooMuch.consumptionPercentage = 100_001
        let refused = await apiError { try await client.sendConsumptionInformation(transactionID: alice[0], tooMuch) }
        #expect(refused?.code == .invalidRequest && refused?.location == "consumptionPercentage")
        var unconsented = consumption
        unconsented.customerConsented = false
        #expect(
            await apiError { try await client.sendConsumptionInformation(transactionID: alice[0], unconsented) }?.code == .invalidRequest)
        #expect(world.server.requests.count == sent)

        // Set App Account Token: every later transaction of that purchase carries it; bob's do not.
        let token = UUID()
        try await client.setAppAccountToken(originalTransactionID: alice[1], token)
        #expect(world.server.appAccountToken(forOriginalTransactionIdentifier: alice[1]) == token)
        let tokened = try await client.transactionInfo(transactionID: alice[1])
        #expect(tokened.value.appAccountToken == token.uuidString.lowercased())
        let bobsMonthly = try await client.transactionInfo(transactionID: bobs[0])
        #expect(bobsMonthly.value.appAccountToken == nil)
        let unknownOriginal = await apiError { try await client.setAppAccountToken(originalTransactionID: "9999", token) }
        #expect(unknownOriginal?.apiErrorCode == .originalTransactionIdNotFound)

        // Finish Transaction.
        try await client.finishTransaction(transactionID: bobs[1])
        #expect(world.server.finishedTransactionIdentifiers == [bobs[1]])
        #expect(world.requests(.finishTransaction).map { "\($0.method) \($0.path)" } == ["POST /inApps/v1/transactions/\(bobs[1])/finish"])
        #expect(await apiError { try await client.finishTransaction(transactionID: "9999") }?.apiErrorCode == .transactionIdNotFound)

        // Extend for all active subscribers: both customers' monthly subscriptions move 5 days.
        let before = try await client.transactionInfo(transactionID: bobs[0]).value.expiresDate
        let mass = MassExtendRenewalDateRequest(extendByDays: 5, extendReasonCode: 3, productId: Products.monthly)
        let accepted = try await client.extendRenewalDateForAllActiveSubscribers(mass)
        #expect(accepted.requestIdentifier == mass.requestIdentifier)
        let status = try await client.renewalDateExtensionStatus(productID: Products.monthly, requestIdentifier: mass.requestIdentifier)
        #expect(status.complete && status.succeededCount == 2 && status.failedCount == 0)
        let after = try await client.transactionInfo(transactionID: bobs[0]).value.expiresDate
        #expect(before.map { $0.millisecondsSince1970 + 5 * 86_400_000 } == after?.millisecondsSince1970)
        let tooLong = MassExtendRenewalDateRequest(extendByDays: 91, extendReasonCode: 0, productId: Products.monthly)
        #expect(await apiError { try await client.extendRenewalDateForAllActiveSubscribers(tooLong) }?.code == .invalidRequest)
        let missing = await apiError { try await client.renewalDateExtensionStatus(productID: Products.monthly, requestIdentifier: "nope") }
        #expect(missing?.apiErrorCode == .statusRequestNotFound)

        // Apple's 4040019, and a forged app transaction: no answer.
        world.server.script(
            [.error(status: 404, errorCode: 4_040_019, errorMessage: "No AppTransaction exists for the customer.")],
            for: .appTransactionInfo)
        let none = await apiError { try await client.appTransactionInfo(transactionID: alice[0]) }
        #expect(none?.apiErrorCode == .appTransactionDoesNotExist && none?.apiErrorCode?.name == "appTransactionDoesNotExist")
        let forger = try PKIs.otherJWS.get().jwsSigner()
        world.server.script([.forgedSignature(forger, index: 0)], for: .appTransactionInfo)
        #expect(await apiError { try await client.appTransactionInfo(transactionID: alice[0]) }?.code == .verificationFailed)
        await world.shutdown()
    }

    @Test func wireTable_namesApplesPaths_andRoutesThemBack() throws {
        #expect(AppStoreServerEndpoint.setAppAccountToken.pathTemplate == "/inApps/v1/transactions/{originalTransactionId}/appAccountToken")
        #expect(AppStoreServerEndpoint.renewalDateExtensionStatus.parameterNames == ["productId", "requestIdentifier"])
        for endpoint in AppStoreServerEndpoint.allCases {
            let arguments = endpoint.parameterNames.map { _ in "1234" }
            let segments = try #require(endpoint.segments(arguments))
            let found = try #require(AppStoreServerEndpoint.match(method: endpoint.method, segments: segments))
            #expect(found.endpoint == endpoint && found.arguments == arguments)
        }
        #expect(AppStoreServerEndpoint.transactionInfo.sandboxRequestsPerSecond == 5)
        #expect(APIRateLimits.apple(for: .production).requestsPerSecond[.extendRenewalDateForAllActiveSubscribers] == 1)
        #expect(AppStoreServerEnvironment.production.baseURL.host == "api.storekit.apple.com")
        #expect(AppStoreServerEnvironment.sandboxLegacyHost.baseURL.host == "api.storekit-sandbox.itunes.apple.com")
    }

    @Test func throttledClient_earnsNo429_whereAnUnthrottledOneDoes() async throws {
        let world = try ServerWorld { $0.rateLimits = .sandbox }
        world.buy(Products.coins)
        let id = world.historyIDs[0]
        // Without a throttle, 12 requests at once exceed the 5 a second the sandbox allows.
        let eager = try world.client { $0.retry = .never }
        // All twelve in flight together, so even a slow machine sends more than 5 within a second.
        let errors = await withTaskGroup(of: AppStoreServerAPIError?.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    do throws(AppStoreServerAPIError) {
                        _ = try await eager.transactionInfo(transactionID: id)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            var found: [AppStoreServerAPIError?] = []
            for await error in group { found.append(error) }
            return found
        }
        var limited = 0
        for case let error? in errors {
            #expect(error.code == .rateLimited && error.httpStatus == 429)
            limited += 1
        }
        #expect(limited > 0)
        let limitedResponse = try #require(world.server.requests.last { $0.status == 429 })
        #expect(limitedResponse.endpoint == .transactionInfo)
        // With Apple's sandbox limits, the same client's calls are spaced: none is refused.
        try await Task.sleep(for: .seconds(2.5))
        let careful = try world.client {
            $0.retry = .never
            $0.rateLimits = .sandbox
        }
        let start = world.server.requests.count
        for _ in 0..<12 { _ = try await careful.transactionInfo(transactionID: id) }
        #expect(world.server.requests.dropFirst(start).allSatisfy { $0.status == 200 })
        #expect(world.server.requests.count - start == 12)
        await world.shutdown()
    }
}

/// Apple's response JSON for the new endpoints (TestReceipts/jws/apple/api/), served as they are.
@Suite("App Store Server API: Apple's response JSON for the 2026 endpoints")
@MainActor
struct AppleResponseModelTests {
    static func model(_ name: String) throws -> [UInt8] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("TestReceipts/jws/apple/api/\(name).json"))
        return [UInt8](data)
    }

    @Test func applesAnswers_decode_andAPlaceholderTokenDoesNotVerify() async throws {
        let world = try ServerWorld()
        world.buy(Products.monthly)
        let client = try world.client()
        world.server.script([.body(status: 200, try Self.model("extendRenewalDateForAllActiveSubscribersResponse"))])
        let request = MassExtendRenewalDateRequest(
            extendByDays: 45, extendReasonCode: 1, requestIdentifier: "758883e8-151b-47b7-abd0-60c4d804c2f5",
            storefrontCountryCodes: ["USA", "MEX"], productId: "com.example.productId")
        #expect(try await client.extendRenewalDateForAllActiveSubscribers(request).requestIdentifier == request.requestIdentifier)
        // An answer for another request is refused.
        world.server.script([.body(status: 200, try Self.model("extendRenewalDateForAllActiveSubscribersResponse"))])
        var other = request
        other.requestIdentifier = "another"
        #expect(await apiError { try await client.extendRenewalDateForAllActiveSubscribers(other) }?.code == .invalidResponse)

        world.server.script([.body(status: 200, try Self.model("getStatusOfSubscriptionRenewalDateExtensionsResponse"))])
        let status = try await client.renewalDateExtensionStatus(
            productID: "com.example.product", requestIdentifier: "20fba8a0-2b80-4a7d-a17f-85c1854727f8")
        #expect(status.complete && status.completeDate?.milliseconds == 1_698_148_900_000)
        #expect(status.succeededCount == 30 && status.failedCount == 2)

        world.server.script([.body(status: 404, try Self.model("appTransactionDoesNotExistError"))])
        let none = await apiError { try await client.appTransactionInfo(transactionID: world.historyIDs[0]) }
        #expect(none?.httpStatus == 404 && none?.apiErrorCode == .appTransactionDoesNotExist)
        #expect(none?.apiErrorMessage == "No AppTransaction exists for the customer.")

        world.server.script([.body(status: 200, try Self.model("appTransactionInfoResponse"))])
        let placeholder = await apiError { try await client.appTransactionInfo(transactionID: world.historyIDs[0]) }
        #expect(placeholder?.code == .verificationFailed && placeholder?.location == "signedAppTransactionInfo")
        await world.shutdown()
    }
}
