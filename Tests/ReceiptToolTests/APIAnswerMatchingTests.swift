// `receipt-tool api` against a simulated App Store Server API that answers with a genuine value
// for another question: refused like a forged signature, naming the check.

import AppStoreServerAPI
import Foundation
import JSON
import JWS
import ReceiptSigning
import ReceiptVerification
import StoreTesting
import TestSupport
import Testing

@Suite("receipt-tool api: answers match requests")
@MainActor
struct APIAnswerMatchingTests {
    /// `api transaction X` answered with transaction Y, validly signed by the App Store's (test)
    /// PKI: nothing printed, exit 1, the check named.
    @Test func transactionAnsweredWithAnotherGenuineTransaction_exitsOne() async throws {
        let world = try APIToolWorld()
        world.buy("com.example.coins")
        world.buy("com.example.level")
        let ids = world.ids
        let p8 = try String(contentsOf: world.keyFile, encoding: .utf8)
        let client = try AppStoreServerAPIClient(
            configuration: .init(
                key: try AppStoreConnectKey(issuerID: APIToolWorld.issuerID, keyID: APIToolWorld.keyID, p8: p8),
                bundleID: APIToolWorld.bundleID, environment: AppStoreServerEnvironment.sandbox.at(world.server.baseURL),
                anchors: TrustAnchors([try PKIs.jws.get().root]), rateLimits: .unlimited))
        let other = try await client.transactionInfo(transactionID: ids[1])
        let body = JSONValue.object([("signedTransactionInfo", .string(String(decoding: other.jws.token, as: UTF8.self)))])

        let genuine = try await tool(["api", "transaction", ids[0], "--json"] + world.common)
        #expect(genuine.status == 0, "\(genuine.stderr)")
        #expect(try APIToolWorld.lines(genuine.stdout).first?["transactionId"] == .string(ids[0]))

        world.server.script([.body(status: 200, body.jsonBytes())], for: .transactionInfo)
        let result = try await tool(["api", "transaction", ids[0], "--json"] + world.common)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty, "the other transaction is never printed")
        #expect(result.stderr.contains("verificationFailed"), "\(result.stderr)")
        #expect(result.stderr.contains("answerMatchesRequest"), "\(result.stderr)")
        #expect(result.stderr.contains("transaction \"\(ids[0])\" was requested"), "\(result.stderr)")
        await world.finish()
    }
}
