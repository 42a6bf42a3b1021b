// What every request carries (the bearer token and its claims), what Apple's 401 looks like to
// the client, retries of 429 and 5xx, timeouts, forged JWS in a response, and malformed answers.

import AppStoreServerAPI
import Foundation
import Internals
import JSON
import JWS
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import StoreTesting
import TestSupport
import Testing

@Suite("App Store Server API: tokens, errors, retries, forgeries")
@MainActor
struct AuthenticationAndFailureTests {
    /// The token's header and claims, read independently of the client's code.
    struct DecodedToken {
        let header: JSONValue
        let claims: JSONValue
        let signingInput: [UInt8]
        let signature: [UInt8]

        init(_ token: String) throws {
            let parts = token.split(separator: ".", omittingEmptySubsequences: false).map { Array($0.utf8) }
            try #require(parts.count == 3)
            header = try JSONValue.parse(try Base64.decode(parts[0], rules: .strictURL))
            claims = try JSONValue.parse(try Base64.decode(parts[1], rules: .strictURL))
            signingInput = parts[0] + [UInt8(ascii: ".")] + parts[1]
            signature = try Base64.decode(parts[2], rules: .strictURL)
        }
    }

    @Test func everyRequestCarriesOneToken_thatVerifiesWithThePublicKeyOfTheP8_withApplesClaims() async throws {
        let world = try ServerWorld(pageSize: 1)
        world.buy(Products.coins)
        world.buy(Products.level)
        world.buy(Products.monthly)
        let client = try world.client()
        let before = Date().timeIntervalSince1970
        _ = try await client.transactionHistory(transactionID: world.historyIDs[0])
        _ = try await client.subscriptionStatuses(transactionID: world.historyIDs[0])
        _ = try await client.transactionInfo(transactionID: world.historyIDs[1])
        let after = Date().timeIntervalSince1970
        await world.shutdown()
        let requests = world.server.requests
        #expect(requests.count == 5)
        #expect(requests.allSatisfy { $0.status == 200 && $0.rejection == nil })
        let tokens = Set(requests.compactMap(\.bearerToken))
        #expect(tokens.count == 1, "one token serves every request")
        let token = try DecodedToken(try #require(tokens.first))
        // The public key of the .p8, read back from the PEM text.
        let publicKey = try PrivateKey(pemEncoded: world.apiKey.p8).publicKey
        #expect(publicKey.verify(rawECDSASignature: token.signature, over: token.signingInput, digest: .sha256))
        #expect(token.signature.count == 64)
        #expect(token.header == .object([("alg", .string("ES256")), ("kid", .string(APIKeyFixture.keyID)), ("typ", .string("JWT"))]))
        #expect(token.claims["iss"] == .string(APIKeyFixture.issuerID))
        #expect(token.claims["aud"] == .string("appstoreconnect-v1"))
        #expect(token.claims["bid"] == .string(ServerWorld.bundleID))
        let iat = try #require(token.claims["iat"]?.int64Value)
        let exp = try #require(token.claims["exp"]?.int64Value)
        #expect(Double(iat) >= before.rounded(.down) && Double(iat) <= after)
        #expect(exp - iat == 300)
        #expect(exp - iat <= 3600)
        // Another key (the signature is checked against the registered one) does not.
        let otherKey = try PrivateKey.generateP256().publicKey
        #expect(!otherKey.verify(rawECDSASignature: token.signature, over: token.signingInput, digest: .sha256))
    }

    @Test func theTokenIsReused_untilShortlyBeforeItExpires() throws {
        let now = Locked(Date(timeIntervalSince1970: 1_750_000_000))
        let configuration = AppStoreServerAPIClient.Configuration(
            key: try APIKeyFixture().key(), bundleID: ServerWorld.bundleID, environment: .sandbox, anchors: TrustAnchors([]),
            tokenLifetime: 600, tokenRefreshMargin: 60, clock: { now.withLock { $0 } })
        let client = try AppStoreServerAPIClient(configuration: configuration)
        let first = try client.currentToken()
        #expect(first.issuedAt == 1_750_000_000 && first.expiresAt == 1_750_000_600)
        now.withLock { $0 = $0.addingTimeInterval(539) }
        #expect(try client.currentToken() == first)
        now.withLock { $0 = $0.addingTimeInterval(1) }  // 60 s before exp: replaced
        let second = try client.currentToken()
        #expect(second != first)
        #expect(second.issuedAt == 1_750_000_540)
        // Over an hour is refused before any request is made.
        var tooLong = configuration
        tooLong.tokenLifetime = 3601
        #expect(throws: AppStoreServerAPIError.self) { try AppStoreServerAPIClient(configuration: tooLong) }
    }

    @Test func wrongKey_wrongBundleID_orExpiredToken_getApples401_andATypedError() async throws {
        let world = try ServerWorld()
        world.buy(Products.coins)
        let id = world.historyIDs[0]
        // A key the server does not know, under the registered key id.
        let stranger = try AppStoreConnectKey(issuerID: APIKeyFixture.issuerID, keyID: APIKeyFixture.keyID, privateKey: try .generateP256())
        let cases: [(String, AppStoreServerAPIClient, String)] = [
            ("wrong key", try world.client(key: stranger), "signature"),
            ("wrong bid", try world.client(bundleID: "com.example.other"), "bid"),
            (
                "expired",
                try world.client { configuration in
                    configuration.tokenLifetime = 300
                    configuration.clock = { Date().addingTimeInterval(-7200) }
                }, "expired"
            ),
            ("wrong kid", try world.client(key: try world.apiKey.key(keyID: "OTHERKEY01")), "kid"),
            ("wrong issuer", try world.client(key: try world.apiKey.key(issuerID: "00000000-0000-0000-0000-000000000000")), "iss"),
            (
                "issued in the future",
                try world.client { configuration in
                    configuration.clock = { Date().addingTimeInterval(600) }
                }, "future"
            ),
        ]
        for (name, client, reason) in cases {
            let error = await apiError { try await client.transactionInfo(transactionID: id) }
            #expect(error?.code == .unauthorized, "\(name)")
            #expect(error?.httpStatus == 401, "\(name)")
            #expect(error?.attempts == 1, "\(name): a 401 is not retried")
            #expect(error?.endpoint == .transactionInfo, "\(name)")
            let rejection = world.server.requests.last?.rejection ?? ""
            #expect(rejection.contains(reason), "\(name): \(rejection)")
        }
        // The genuine client still gets in.
        #expect(try await world.client().transactionInfo(transactionID: id).value.transactionId == id)
        await world.shutdown()
    }

    @Test func rateLimited_withRetryAfterOne_isRetried_noSoonerThanTheHeaderSays() async throws {
        let world = try ServerWorld()
        world.buy(Products.coins)
        let client = try world.client()
        world.server.script([.rateLimited(retryAfter: "1")], for: .transactionInfo)
        let start = ContinuousClock.now
        let info = try await client.transactionInfo(transactionID: world.historyIDs[0])
        let seconds = elapsed(since: start)
        #expect(info.value.transactionId == world.historyIDs[0])
        #expect(seconds >= 1.0, "the retry came after \(seconds) s")
        #expect(world.requests(.transactionInfo).map(\.status) == [429, 200])
        // A Retry-After beyond the policy's limit ends the call at once with the wait it asked for.
        world.server.script([.rateLimited(retryAfter: "3600")], for: .transactionInfo)
        let limited = await apiError { try await client.transactionInfo(transactionID: world.historyIDs[0]) }
        #expect(limited?.code == .rateLimited)
        #expect(limited?.apiErrorCode == .rateLimitExceeded)
        #expect(limited?.retryAfter == 3600)
        #expect(limited?.attempts == 1)
        await world.shutdown()
    }

    @Test func rateLimited_withApplesUnixMillisecondsRetryAfter_isRetriedOnceThatTimeHasCome() async throws {
        // Apple's form: Retry-After is the UNIX time in milliseconds (here: 1,500 ms after the
        // 429). Read as delay seconds, 13 digits would be a wait of 56,000 years: the call would
        // fail instead of waiting.
        let world = try ServerWorld()
        world.buy(Products.coins)
        let client = try world.client()
        world.server.script([.rateLimitedFor(1.5)], for: .transactionInfo)
        let start = ContinuousClock.now
        let info = try await client.transactionInfo(transactionID: world.historyIDs[0])
        let seconds = elapsed(since: start)
        #expect(info.value.transactionId == world.historyIDs[0])
        #expect(seconds >= 1.5, "the retry came after \(seconds) s")
        #expect(world.requests(.transactionInfo).map(\.status) == [429, 200])
        await world.shutdown()
    }

    @Test func serverErrors_areRetriedUpToTheLimit_thenReported() async throws {
        let world = try ServerWorld()
        world.buy(Products.coins)
        let id = world.historyIDs[0]
        let client = try world.client()  // 3 attempts, 10 ms backoff
        world.server.script(
            Array(repeating: .error(status: 500, errorCode: 5_000_000, errorMessage: "An unknown error occurred."), count: 5),
            for: .transactionInfo)
        let error = await apiError { try await client.transactionInfo(transactionID: id) }
        #expect(error?.code == .apiError)
        #expect(error?.httpStatus == 500)
        #expect(error?.apiErrorCode == .generalInternal)
        #expect(error?.apiErrorMessage == "An unknown error occurred.")
        #expect(error?.attempts == 3)
        #expect(error?.isRetryable == true)
        #expect(world.requests(.transactionInfo).map(\.status) == [500, 500, 500])
        world.server.clearScript()
        // Two 503s without a body, then success: within the limit.
        world.server.script([.error(status: 503, errorCode: nil, errorMessage: nil), .rateLimited(retryAfter: nil)], for: .transactionInfo)
        let recovered = try await client.transactionInfo(transactionID: id)
        #expect(recovered.value.transactionId == id)
        #expect(world.requests(.transactionInfo).suffix(3).map(\.status) == [503, 429, 200])
        // With retries off, the first 503 is the answer.
        world.server.script([.error(status: 503, errorCode: nil, errorMessage: nil)], for: .transactionInfo)
        let once = await apiError { try await world.client { $0.retry = .never }.transactionInfo(transactionID: id) }
        #expect(once?.code == .httpStatus && once?.httpStatus == 503 && once?.attempts == 1)
        await world.shutdown()
    }

    @Test func aTimeout_isAnError_notAHang() async throws {
        let world = try ServerWorld()
        world.buy(Products.coins)
        let client = try world.client { $0.timeout = 0.2 }
        let gate = SimulatedAppStoreServer.Gate()
        world.server.script([.hold(gate)], for: .transactionInfo)
        let error = await apiError { try await client.transactionInfo(transactionID: world.historyIDs[0]) }
        #expect(error?.code == .timedOut)
        #expect(error?.attempts == 1)
        // The server still holds the request: the call returned without an answer.
        #expect(gate.waiting == 1)
        #expect(world.requests(.transactionInfo).isEmpty)
        gate.open()
        await world.shutdown()
        #expect(world.requests(.transactionInfo).count == 1)
    }

    @Test func aPageWithOneJWSSignedByAnotherKey_failsTheWholeCall() async throws {
        let world = try ServerWorld(pageSize: 3)
        for product in [Products.coins, Products.level, Products.coins, Products.season, Products.coins, Products.level, Products.coins] {
            world.buy(product)
        }
        let client = try world.client()
        let id = world.historyIDs[0]
        let pki = world.jwsPKI
        // The genuine certificates in x5c, the signature made with another key.
        let anotherKey = JWSSigner(key: try PrivateKey.generateP256(), chain: [pki.leaf, pki.intermediate, pki.root])
        world.server.script([.none, .forgedSignature(anotherKey, index: 1)], for: .transactionHistory)
        let forged = await apiError { try await client.transactionHistory(transactionID: id) }
        #expect(forged?.code == .verificationFailed)
        #expect(forged?.location == "page 2: signedTransactions[1]")
        #expect(forged?.failedCheck?.name == .signature)
        #expect(world.requests(.transactionHistory).count == 2)  // it stopped there
        // Another PKI altogether: the chain does not end at the anchor.
        let forger = try PKIs.otherJWS.get().jwsSigner()
        world.server.script([.forgedSignature(forger, index: 2)], for: .transactionHistory)
        let otherPKI = await apiError { try await client.transactionHistoryPage(transactionID: id) }
        #expect(otherPKI?.code == .verificationFailed)
        #expect(otherPKI?.location == "page 1: signedTransactions[2]")
        #expect(otherPKI?.failedCheck?.name == .chain)
        // The same for renewal info in the statuses, and for a single transaction.
        world.buy(Products.monthly)
        world.server.script([.forgedSignature(anotherKey, index: 1)], for: .subscriptionStatuses)
        let renewal = await apiError { try await client.subscriptionStatuses(transactionID: id) }
        #expect(renewal?.code == .verificationFailed)
        #expect(renewal?.location == "data[0].lastTransactions[0].signedRenewalInfo")
        world.server.script([.forgedSignature(forger, index: 0)], for: .transactionInfo)
        #expect(await apiError { try await client.transactionInfo(transactionID: id) }?.code == .verificationFailed)
        // Unscripted, everything verifies.
        #expect(try await client.transactionHistory(transactionID: id).transactions.count == 8)
        await world.shutdown()
    }

    @Test func payloadsForAnotherEnvironmentOrApp_areRefused() async throws {
        let world = try ServerWorld()
        world.buy(Products.coins)
        let id = world.historyIDs[0]
        let production = try world.client(environment: .production)
        let single = await apiError { try await production.transactionInfo(transactionID: id) }
        #expect(single?.code == .verificationFailed)
        #expect(single?.failedCheck?.name == .environment)
        let page = await apiError { try await production.transactionHistory(transactionID: id) }
        #expect(page?.code == .invalidResponse)
        #expect(page?.location == "page 1: environment")
        // The JWS says another bundle id: the server signs what it signs, the client checks it.
        let other = JWSSigner(key: world.jwsPKI.leafKey, chain: [world.jwsPKI.leaf, world.jwsPKI.intermediate, world.jwsPKI.root])
        let payload = Array(
            #"{"transactionId":"1","bundleId":"com.example.other","environment":"Sandbox","signedDate":1700000000000}"#.utf8)
        let token = try other.sign(payload: payload)
        world.server.script([.body(status: 200, Array(#"{"signedTransactionInfo":"\#(token)"}"#.utf8))], for: .transactionInfo)
        let app = await apiError { try await world.client().transactionInfo(transactionID: id) }
        #expect(app?.failedCheck?.name == .bundleIdentifier)
        await world.shutdown()
    }

    @Test func errorCodes_unknownCodesKept_malformedAndOversizedBodies_badIdentifiers() async throws {
        let world = try ServerWorld()
        world.buy(Products.coins)
        let id = world.historyIDs[0]
        let client = try world.client { $0.maximumResponseSize = 4096 }
        world.server.script([.error(status: 400, errorCode: 4_009_999, errorMessage: "Something new.")], for: .transactionInfo)
        let unknown = await apiError { try await client.transactionInfo(transactionID: id) }
        #expect(unknown?.code == .apiError)
        #expect(unknown?.apiErrorCode?.rawValue == 4_009_999)
        #expect(unknown?.apiErrorCode?.name == nil)
        #expect(unknown?.apiErrorCode?.isKnown == false)
        #expect(unknown?.apiErrorMessage == "Something new.")
        let invalid = await apiError { try await client.transactionInfo(transactionID: "12ab") }
        #expect(invalid?.apiErrorCode == .invalidTransactionId)
        #expect(invalid?.apiErrorCode?.description == "invalidTransactionId (4000006)")
        for body in ["not json", #"{"signedTransactionInfo":1}"#, #"{"signedTransactionInfo":"a","signedTransactionInfo":"b"}"#, "[]"] {
            world.server.script([.body(status: 200, Array(body.utf8))], for: .transactionInfo)
            let error = await apiError { try await client.transactionInfo(transactionID: id) }
            #expect(error?.code == .invalidResponse, "\(body)")
        }
        world.server.script([.body(status: 200, Array(repeating: UInt8(ascii: " "), count: 100_000))], for: .transactionInfo)
        let large = await apiError { try await client.transactionInfo(transactionID: id) }
        #expect(large?.code == .invalidResponse)
        #expect(large?.reason.contains("larger than 4096") == true)
        let requestsBefore = world.server.requests.count
        for bad in ["", "../transactions/1", "1/2", "1?x=2", String(repeating: "9", count: 300)] {
            let error = await apiError { try await client.transactionInfo(transactionID: bad) }
            #expect(error?.code == .invalidRequest, "\(bad)")
        }
        #expect(world.server.requests.count == requestsBefore)  // none was sent
        await world.shutdown()
        let closed = await apiError { try await client.transactionInfo(transactionID: id) }
        #expect(closed?.code == .cannotConnect || closed?.code == .transport)
    }
}
