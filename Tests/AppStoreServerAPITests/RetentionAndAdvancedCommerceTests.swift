// Retention Messaging and Advanced Commerce end to end: the client against the simulated App
// Store Server on 127.0.0.1 (Apple's method, path, query, body and content type checked there),
// values refused before any request, Apple's JSON decoded, and the real-time response and the
// in-app request signature as Apple defines them.

import AppStoreServerAPI
import Foundation
import Internals
import JSON
import JWS
import RMStore
import ReceiptCrypto
import ReceiptVerification
import StoreTesting
import TestSupport
import Testing

/// A PNG's framing (signature, IHDR with CRC, a short IDAT, IEND): what Upload Image checks.
func pngBytes(width: Int, height: Int, colourType: UInt8 = 2) -> [UInt8] {
    func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }
    func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(data.count) + body + be32(Int(crc32(body)))
    }
    let header = be32(width) + be32(height) + [8, colourType, 0, 0, 0]
    return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", [0x78, 0x9C, 0x03, 0x00])
        + chunk("IEND", [])
}

@Suite("Retention Messaging and Advanced Commerce")
@MainActor
struct RetentionAndAdvancedCommerceTests {
    @Test func applesRetentionJSON_decodes() throws {
        // Apple's examples (app-store-server-library test resources, shared/vectors).
        let messages = try RetentionResponses.messageList(
            json: Array(
                #"{"messageIdentifiers": [{"messageIdentifier": "a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890", "messageState": "APPROVED"}]}"#.utf8
            ))
        #expect(messages == [RetentionMessageListItem(messageIdentifier: "a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890", messageState: .approved)])
        let images = try RetentionResponses.imageList(
            json: Array(
                #"{"imageIdentifiers": [{"imageIdentifier": "a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890", "imageState": "APPROVED", "imageSize": "FULL_SIZE"}]}"#
                    .utf8))
        #expect(images.first?.imageState == .approved && images.first?.imageSize == .fullSize)
        #expect(
            try RetentionResponses.defaultMessage(json: Array(#"{"messageIdentifier": "a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890"}"#.utf8))
                == "a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890")
        let wrong = #"{"messageIdentifiers": [{"messageIdentifier": 7}]}"#
        #expect(throws: AppStoreServerAPIError.self) { try RetentionResponses.messageList(json: Array(wrong.utf8)) }
        // An upload body in Apple's shape decodes and re-encodes to the same members.
        let upload =
            #"{"header":"Stay","body":"Half price","image":{"imageIdentifier":"a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890","altText":"A cat"},"headerPosition":"ABOVE_IMAGE"}"#
        let decoded = try UploadMessageRequest(json: Array(upload.utf8))
        #expect(try JSONValue.parse(decoded.jsonBody) == (try JSONValue.parse(Array(upload.utf8))))
    }

    @Test func realtimeResponse_isApplesBody() throws {
        let id = try #require(UUID(uuidString: "A1B2C3D4-E5F6-7890-A1B2-C3D4E5F67890"))
        #expect(
            String(decoding: RealtimeResponse.message(id).jsonBody, as: UTF8.self)
                == #"{"message":{"messageIdentifier":"a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890"}}"#)
        let switchPlan = RealtimeResponse.alternateProduct(messageIdentifier: id, productId: "com.example.yearly").jsonValue
        #expect(switchPlan["alternateProduct"]?["productId"] == .string("com.example.yearly"))
        #expect(
            RealtimeResponse.promotionalOffer(messageIdentifier: id, signatureV2: "jws").jsonValue["promotionalOffer"]?[
                "promotionalOfferSignatureV2"] == .string("jws"))
    }

    @Test func retentionEndpoints_endToEnd_againstTheSimulatedServer() async throws {
        let world = try ServerWorld()
        let client = try world.client()
        let image = UUID()
        let bullet = UUID()
        let message = UUID()
        try await client.uploadRetentionImage(imageIdentifier: image, png: pngBytes(width: 3840, height: 400), size: .fullSize)
        try await client.uploadRetentionImage(imageIdentifier: bullet, png: pngBytes(width: 96, height: 96), size: .bulletPoint)
        let body = UploadMessageRequest(
            header: "Before you go", body: "Keep your plan at half price for three months.",
            image: RetentionMessageImage(imageIdentifier: image, altText: "A calendar"),
            bulletPoints: [RetentionBulletPoint(text: "All levels", imageIdentifier: bullet, altText: "Star")], headerPosition: .aboveImage)
        try await client.uploadRetentionMessage(messageIdentifier: message, body)
        let messages = try await client.retentionMessages()
        #expect(messages == [RetentionMessageListItem(messageIdentifier: message.uuidString.lowercased(), messageState: .approved)])
        #expect(try await client.retentionImages().map(\.imageSize) == [.fullSize, .bulletPoint])
        try await client.configureDefaultRetentionMessage(productID: Products.monthly, locale: "en-US", messageIdentifier: message)
        #expect(try await client.defaultRetentionMessage(productID: Products.monthly, locale: "en-US") == message.uuidString.lowercased())

        // Apple's answers for a duplicate, an image in use and a missing default.
        #expect(await apiError { try await client.uploadRetentionMessage(messageIdentifier: message, body) }?.httpStatus == 409)
        let inUse = await apiError { try await client.deleteRetentionImage(imageIdentifier: image) }
        #expect(inUse?.httpStatus == 403 && inUse?.apiErrorCode?.rawValue == 4_030_019)
        try await client.deleteDefaultRetentionMessage(productID: Products.monthly, locale: "en-US")
        let missing = await apiError { try await client.defaultRetentionMessage(productID: Products.monthly, locale: "en-US") }
        #expect(missing?.httpStatus == 404 && missing?.apiErrorCode?.rawValue == 4_040_020)
        try await client.deleteRetentionMessage(messageIdentifier: message)
        try await client.deleteRetentionImage(imageIdentifier: image)
        #expect(try await client.retentionMessages().isEmpty)

        // Exactly Apple's requests: method, path, query, content type and body.
        let sent = world.server.requests
        let id = { (uuid: UUID) in uuid.uuidString.lowercased() }
        #expect(
            sent.map { "\($0.method) \($0.path)\($0.query.map { "?" + $0 } ?? "") \($0.status)" } == [
                "PUT /inApps/v1/messaging/image/\(id(image))?imageSize=FULL_SIZE 200",
                "PUT /inApps/v1/messaging/image/\(id(bullet))?imageSize=BULLET_POINT 200",
                "PUT /inApps/v1/messaging/message/\(id(message)) 200", "GET /inApps/v1/messaging/message/list 200",
                "GET /inApps/v1/messaging/image/list 200", "PUT /inApps/v1/messaging/default/com.example.monthly/en-US 200",
                "GET /inApps/v1/messaging/default/com.example.monthly/en-US 200", "PUT /inApps/v1/messaging/message/\(id(message)) 409",
                "DELETE /inApps/v1/messaging/image/\(id(image)) 403", "DELETE /inApps/v1/messaging/default/com.example.monthly/en-US 200",
                "GET /inApps/v1/messaging/default/com.example.monthly/en-US 404", "DELETE /inApps/v1/messaging/message/\(id(message)) 200",
                "DELETE /inApps/v1/messaging/image/\(id(image)) 200", "GET /inApps/v1/messaging/message/list 200",
            ])
        #expect(sent[0].contentType == "image/png" && sent[0].body == pngBytes(width: 3840, height: 400))
        #expect(sent[2].contentType == "application/json" && sent[2].body == body.jsonBody)
        #expect(try JSONValue.parse(sent[5].body) == .object([("messageIdentifier", .string(id(message)))]))
        #expect(sent.allSatisfy { $0.rejection == nil })
        await world.shutdown()
    }

    @Test func malformedRetentionValues_areRefusedBeforeAnyRequest() async throws {
        let world = try ServerWorld()
        let client = try world.client()
        let long = String(repeating: "é", count: 67)
        let refused: [AppStoreServerAPIError?] = [
            await apiError {
                try await client.uploadRetentionMessage(messageIdentifier: UUID(), UploadMessageRequest(header: long, body: "b"))
            },
            await apiError {
                try await client.uploadRetentionMessage(
                    messageIdentifier: UUID(), UploadMessageRequest(header: "h", body: "b", headerPosition: .aboveImage))
            },
            await apiError {
                try await client.uploadRetentionImage(imageIdentifier: UUID(), png: pngBytes(width: 3840, height: 100), size: .fullSize)
            },
            await apiError {
                try await client.uploadRetentionImage(imageIdentifier: UUID(), png: pngBytes(width: 96, height: 96, colourType: 6))
            },
            await apiError { try await client.uploadRetentionImage(imageIdentifier: UUID(), png: Array("GIF89a".utf8)) },
            await apiError { try await client.defaultRetentionMessage(productID: Products.monthly, locale: "english!") },
        ]
        #expect(refused.allSatisfy { $0?.code == .invalidRequest })
        #expect(refused.first??.location == "header")
        #expect(world.server.requests.isEmpty)
        await world.shutdown()
    }

    @Test func advancedCommerceCalls_endToEnd_andTheInAppSigner() async throws {
        let world = try ServerWorld()
        world.buy(Products.monthly)
        world.buy(Products.coins)
        let client = try world.client()
        let ids = world.historyIDs
        let info = AdvancedCommerceRequestInfo(requestReferenceId: UUID())
        let calls: [AdvancedCommerceRequest] = [
            .changePrice(info, items: [(sku: "sku.monthly", price: 15_000)], currency: "USD"),
            .cancel(info, storefront: "USA"),
            .changeMetadata(
                info, items: [(currentSKU: "sku.monthly", sku: "sku.pro", displayName: "Pro", description: nil, effective: .nextBillCycle)]),
            .migrate(
                info, displayName: "Pro", description: "Every level",
                items: [(sku: "sku.pro", displayName: "Pro", description: "Every level")],
                targetProductId: Products.monthly, taxCode: "C003-00-2"),
            .revoke(info, refundReason: "LEGAL", refundType: "FULL", refundRiskingPreference: true, storefront: "USA"),
        ]
        for request in calls {
            let result = try await client.advancedCommerce(transactionID: ids[0], request)
            #expect(result.transaction.value.originalTransactionId == ids[0] && result.renewalInfo?.value.originalTransactionId == ids[0])
        }
        let refund = try await client.advancedCommerce(
            transactionID: ids[1],
            .requestRefund(
                info, items: [(sku: "sku.coins", refundReason: "OTHER", refundType: "PRORATED", revoke: false, refundAmount: nil)],
                refundRiskingPreference: false, currency: "USD"))
        #expect(refund.transaction.value.transactionId == ids[1] && refund.renewalInfo == nil)
        let paths = world.server.requests.map { "\($0.method) \($0.path)" }
        #expect(
            paths == [
                "changePrice", "cancel", "changeMetadata", "migrate", "revoke",
            ].map { "POST /advancedCommerce/v1/subscription/\($0)/\(ids[0])" } + [
                "POST /advancedCommerce/v1/transaction/requestRefund/\(ids[1])"
            ])
        #expect(world.server.advancedCommerceRequests.map(\.body) == calls + [world.server.advancedCommerceRequests[5].body])
        #expect(world.server.requests.first?.body == calls[0].jsonBody && world.server.requests.first?.contentType == "application/json")

        // Refused locally: a display name over 30 characters, a currency that is not a code.
        let before = world.server.requests.count
        let long = AdvancedCommerceRequest.changeMetadata(
            info, descriptors: (displayName: String(repeating: "x", count: 31), description: nil, effective: .immediately))
        #expect(await apiError { try await client.advancedCommerce(transactionID: ids[0], long) }?.code == .invalidRequest)
        let currency = AdvancedCommerceRequest.changePrice(info, items: [(sku: "s", price: 1)], currency: "usd")
        #expect(await apiError { try await client.advancedCommerce(transactionID: ids[0], currency) }?.code == .invalidRequest)
        #expect(world.server.requests.count == before)

        // The in-app request: an ES256 JWT for advanced-commerce-api carrying the request in base64.
        let key = try world.apiKey.key()
        let creator = JWSSignatureCreator(key: key, bundleID: ServerWorld.bundleID)
        let inApp = JSONValue.object([
            ("operation", .string("CREATE_ONE_TIME_CHARGE")), ("version", .string("1")), ("requestInfo", info.jsonValue),
            ("currency", .string("USD")), ("taxCode", .string("C003-00-2")),
            (
                "item",
                .object([
                    ("SKU", .string("sku.coins")), ("displayName", .string("Coins")), ("description", .string("100 coins")),
                    ("price", .number("990")),
                ])
            ),
        ])
        let token = try creator.advancedCommerceInAppRequest(inApp)
        let expectations = OfferJWSExpectations(
            keyID: APIKeyFixture.keyID, issuerID: APIKeyFixture.issuerID, bundleID: ServerWorld.bundleID,
            audience: JWSSignatureCreator.advancedCommerceAudience)
        #expect(
            JWSSignatureCreator.problems(with: token, publicKey: try world.apiKey.privateKey.publicKey, expecting: expectations).isEmpty)
        let jwt = try SignedJWT(token)
        let carried = try Base64.decode(Array((jwt.string("request") ?? "").utf8), rules: .strictStandard)
        #expect(try JSONValue.parse(carried) == inApp)
        let badInApp = JSONValue.object([("requestInfo", .object([("requestReferenceId", .string("nope"))]))])
        #expect(throws: AppStoreServerAPIError.self) { try creator.advancedCommerceInAppRequest(badInApp) }
        await world.shutdown()
    }
}
