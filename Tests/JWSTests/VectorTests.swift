import Foundation
import Internals
import JSON
import JWS
import ReceiptCrypto
import Testing

/// Every JWS in TestReceipts/jws decodes to the values its source lists (jws/README.md, from each
/// vector folder's PROVENANCE.md and `.expected.json`).
@Suite struct VectorTests {
    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// The real Apple-signed tokens against their `.expected.json`: header, each certificate of
    /// `x5c`, the payload JSON exactly, the typed decode, and the date a verifier validates at.
    @Test(arguments: Vectors.expectedFiles)
    func realTokenDecodesToItsExpectedValues(_ expectedPath: String) throws {
        let expected = try Vectors.json(expectedPath)
        let jws = try Vectors.token(expectedPath.replacingOccurrences(of: ".expected.json", with: ".jws"))

        let header = try #require(expected["header"])
        #expect(jws.header.algorithm.rawValue == header["alg"]?.stringValue)
        #expect(jws.header.algorithm == .es256)
        let chain = try #require(jws.header.certificateChain)
        #expect(chain.count == header["x5c_count"]?.int64Value.map(Int.init))
        var others = jws.header.unknownFields.map(\.0)
        if jws.header.keyID != nil { others.append("kid") }
        if jws.header.type != nil { others.append("typ") }
        #expect(others == (header["other_keys"]?.arrayValue ?? []).compactMap(\.stringValue))
        #expect(jws.signature.count == 64)
        #expect(Array(jws.signingInput) == Array(jws.token[..<jws.signingInputEnd]))
        #expect(jws.token.split(separator: UInt8(ascii: ".")).count == 3)

        let certificates = try #require(expected["x5c"]?.arrayValue)
        #expect(certificates.count == chain.count)
        for (der, facts) in zip(chain, certificates) {
            let certificate = try Certificate(derEncoded: der)
            #expect(certificate.subject.commonName == facts["cn"]?.stringValue)
            #expect(certificate.serialNumberHex == facts["serial"]?.stringValue)
            #expect(Self.iso(certificate.notBefore) == facts["not_before"]?.stringValue)
            #expect(Self.iso(certificate.notAfter) == facts["not_after"]?.stringValue)
            #expect(Hex.encode(try certificate.sha256Fingerprint) == facts["sha256"]?.stringValue)
            let curve = facts["key"]?.stringValue == "ECPublicKey/secp256r1" ? "prime256v1" : "secp384r1"
            #expect(try certificate.publicKey.kind == .ec(curve: curve))
        }

        // The payload bytes are exactly the JSON the expected file records, member order included.
        let payload = try #require(expected["payload"])
        #expect(try JSONValue.parse(jws.unverifiedPayload) == payload)

        // The typed decode keeps every member: re-encoding gives the same JSON.
        let decoded = try AppStorePayload.decodeUnverified(jws)
        let kinds: [String: AppStorePayloadKind] = ["notification": .notification, "transaction": .transaction, "renewal": .renewalInfo]
        #expect(decoded.kind == kinds[expected["kind"]?.stringValue ?? ""])
        #expect(decoded.jsonValue().isEqualIgnoringMemberOrder(to: payload))

        let signedDate: JWSDate?
        switch decoded {
        case .transaction(let t): signedDate = t.signedDate
        case .renewalInfo(let r): signedDate = r.signedDate
        case .notification(let n): signedDate = n.signedDate
        default: signedDate = nil
        }
        #expect(signedDate?.milliseconds == expected["validation_time_ms"]?.int64Value)
    }

    /// The table of jws/README.md: kind, bundle id, environment, signed date and ids of every real
    /// token, checked through the typed fields.
    @Test(
        arguments: [
            ("go-iap/sandbox-renewal-info-2000000335310644", "renewal", nil, "Sandbox", 1_684_822_778_492, nil, "2000000335310644"),
            (
                "gopay/sandbox-transaction-2000000184445477", "transaction", "Com.VoiceRecording.Telephone", "Sandbox", 1_667_559_685_499,
                "2000000184445477", "2000000184445477"
            ),
            (
                "gopay/sandbox-transaction-2000000191896422", "transaction", "Com.VoiceRecording.Telephone", "Sandbox", 1_667_561_039_251,
                "2000000191896422", "2000000184445477"
            ),
            ("gopay/sandbox-renewal-2000000184445477", "renewal", nil, "Sandbox", 1_667_561_039_251, nil, "2000000184445477"),
            ("gopay/sandbox-notification-DID_RENEW", "notification", "com.audaos.audarecorder", "Sandbox", nil, nil, nil),
            (
                "gopay/sandbox-transaction-2000000004047119", "transaction", "com.audaos.audarecorder", "Sandbox", 1_646_387_008_254,
                "2000000004047119", "2000000000842607"
            ),
            ("gopay/sandbox-renewal-2000000000842607", "renewal", nil, "Sandbox", 1_646_387_008_228, nil, "2000000000842607"),
            (
                "gopay/production-notification-CONSUMPTION_REQUEST", "notification", "com.jrjj.keysns", "Production", 1_687_941_512_560,
                nil, nil
            ),
            (
                "gopay/production-transaction-510001261072921-nested", "transaction", "com.jrjj.keysns", "Production", 1_687_941_512_573,
                "510001261072921", "510001261072921"
            ),
            ("appstore-iap/sandbox-notification-TEST", "notification", "com.Abilities", "Sandbox", 1_662_122_492_884, nil, nil),
            (
                "omnimind/noenv-transaction-1000000907182138", "transaction", "club.omnichess.ios", nil, 1_636_464_323_732,
                "1000000907182138",
                "1000000906235058"
            ),
            ("omnimind/noenv-renewal-1000000906235058", "renewal", nil, nil, 1_636_464_323_732, nil, "1000000906235058"),
            (
                "omnimind/noenv-transaction-1000000906235058", "transaction", "club.omnichess.ios", nil, 1_636_465_081_044,
                "1000000906235058",
                "1000000906235058"
            ),
            (
                "omnimind/noenv-transaction-1000000906239564", "transaction", "club.omnichess.ios", nil, 1_636_465_081_044,
                "1000000906239564",
                "1000000906235058"
            ),
            (
                "omnimind/noenv-transaction-1000000906242618", "transaction", "club.omnichess.ios", nil, 1_636_465_081_044,
                "1000000906242618",
                "1000000906235058"
            ),
            (
                "omnimind/noenv-transaction-1000000906245876", "transaction", "club.omnichess.ios", nil, 1_636_465_081_044,
                "1000000906245876",
                "1000000906235058"
            ),
            (
                "omnimind/noenv-transaction-1000000906249606", "transaction", "club.omnichess.ios", nil, 1_636_465_081_044,
                "1000000906249606",
                "1000000906235058"
            ),
            (
                "mimo/sandbox-notification-TEST-original-reconstructed", "notification", "com.getmimo.mimo", "Sandbox", 1_706_887_729_389,
                nil, nil
            ),
        ] as [(String, String, String?, String?, Int64?, String?, String?)])
    func realTokenTable(
        _ name: String, _ kind: String, _ bundleId: String?, _ environment: String?, _ signedDate: Int64?, _ transactionId: String?,
        _ originalTransactionId: String?
    ) throws {
        let jws = try Vectors.token("jws/\(name).jws")
        switch kind {
        case "transaction":
            let t = try jws.decodePayloadToVerify(as: JWSTransaction.self)
            #expect(t.bundleId == bundleId)
            #expect(t.environment?.rawValue == environment)
            #expect(t.signedDate?.milliseconds == signedDate)
            #expect(t.transactionId == transactionId)
            #expect(t.originalTransactionId == originalTransactionId)
            #expect(t.inAppOwnershipType == .purchased)
            #expect(t.quantity == 1)
        case "renewal":
            let r = try jws.decodePayloadToVerify(as: JWSRenewalInfo.self)
            #expect(bundleId == nil)
            #expect(r.environment?.rawValue == environment)
            #expect(r.signedDate?.milliseconds == signedDate)
            #expect(r.originalTransactionId == originalTransactionId)
            #expect(r.productId != nil && r.productId == r.autoRenewProductId)
        default:
            let n = try jws.decodePayloadToVerify(as: NotificationPayload.self)
            let data = try #require(n.data)
            #expect(data.bundleId == bundleId)
            #expect(data.environment?.rawValue == environment)
            #expect(n.signedDate?.milliseconds == signedDate)
            #expect(n.version == "2.0")
            #expect(n.summary == nil && n.externalPurchaseToken == nil && n.appData == nil)
        }
    }

    /// Notifications: type, UUID, and nested tokens that are byte for byte the separate files.
    @Test func notificationsAndTheirNestedTokens() throws {
        let consumption = try Vectors.token("jws/gopay/production-notification-CONSUMPTION_REQUEST.jws")
            .decodePayloadToVerify(as: NotificationPayload.self)
        #expect(consumption.notificationType == .consumptionRequest)
        #expect(consumption.subtype == nil)
        #expect(consumption.notificationUUID == "cbff6987-b8d9-43d8-b1dc-07fa8c9fd945")
        #expect(consumption.data?.appAppleId == 1_601_830_814)
        #expect(consumption.data?.bundleVersion == "1")
        let nested = try #require(consumption.data?.signedTransactionInfo)
        #expect(Array(nested.token.utf8) == (try Vectors.bytes("jws/gopay/production-transaction-510001261072921-nested.jws")))
        #expect(consumption.data?.signedRenewalInfo == nil)
        let transaction = try nested.parse().decodePayloadToVerify(as: JWSTransaction.self)
        #expect(transaction.transactionId == "510001261072921")
        #expect(transaction.type == .consumable)
        #expect(transaction.storefront == "CHN")
        #expect(transaction.storefrontId == "143465")
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.price == nil && transaction.currency == nil)
        #expect(transaction.purchaseDate?.milliseconds == 1_687_239_036_000)
        #expect(transaction.productId == "com.keysns.JR1200")

        let renew = try Vectors.token("jws/gopay/sandbox-notification-DID_RENEW.jws").decodePayloadToVerify(as: NotificationPayload.self)
        #expect(renew.notificationType == .didRenew)
        #expect(renew.notificationUUID == "469bf30e-7715-4f9f-aae3-a7bfc12aea77")
        #expect(renew.signedDate == nil)
        #expect(renew.data?.bundleVersion == "7")
        let renewTransaction = try #require(renew.data?.signedTransactionInfo)
        let renewInfo = try #require(renew.data?.signedRenewalInfo)
        #expect(Array(renewTransaction.token.utf8) == (try Vectors.bytes("jws/gopay/sandbox-transaction-2000000004047119.jws")))
        #expect(Array(renewInfo.token.utf8) == (try Vectors.bytes("jws/gopay/sandbox-renewal-2000000000842607.jws")))
        let info = try renewInfo.parse().decodePayloadToVerify(as: JWSRenewalInfo.self)
        #expect(info.autoRenewStatus == .on)
        #expect(info.autoRenewProductId == "com.audaos.audarecorder.vip.m2")
        #expect(try renewTransaction.parse().decodePayloadToVerify(as: JWSTransaction.self).expiresDate?.milliseconds == 1_646_387_196_000)

        for (name, uuid) in [
            ("appstore-iap/sandbox-notification-TEST", "5e09dcfc-205e-4ea1-9883-96676f394992"),
            ("mimo/sandbox-notification-TEST-original-reconstructed", "2d483fcc-3657-423e-ab13-024602fe16b3"),
        ] {
            let test = try Vectors.token("jws/\(name).jws").decodePayloadToVerify(as: NotificationPayload.self)
            #expect(test.notificationType == .test)
            #expect(test.notificationUUID == uuid)
            #expect(test.data?.signedTransactionInfo == nil)
            #expect(test.data?.appAppleId == nil)
        }
    }

    /// The two rotating Apple leaves appear as x5c[0] of the tokens they signed, G6 as x5c[1].
    @Test func realChainsAreTheKnownCertificates() throws {
        let leaf2021 = try Vectors.bytes("jws/certs/leaf-ProdECC-MacAppStore-iTunesStore-ReceiptSigning-2021-08-25_2023-09-24.der")
        let leaf2023 = try Vectors.bytes("jws/certs/leaf-ProdECC-MacAppStore-iTunesStore-ReceiptSigning-2023-09-12_2025-10-11.der")
        let g6 = try Vectors.bytes("jws/certs/AppleWWDRCA-G6.der")
        let g3 = try Vectors.bytes("certs/AppleRootCA-G3.cer")
        for file in Vectors.expectedFiles {
            let chain = try #require(
                try Vectors.token(file.replacingOccurrences(of: ".expected.json", with: ".jws")).header.certificateChain)
            #expect(chain[0] == (file.contains("mimo") ? leaf2023 : leaf2021), "\(file)")
            #expect(chain[1] == g6)
            #expect(chain[2] == g3)
        }
    }

    /// A notification body `{"signedPayload": "…"}` holds the TEST notification token.
    @Test func notificationBody() throws {
        let body = try Vectors.bytes("jws/appstore-iap/test-notification-signed-payload.json")
        let input = try #require(try SignedDataInput.detect(body))
        guard case .notificationBody(let jws) = input else {
            Issue.record("not detected as a notification body")
            return
        }
        #expect(jws.token == (try Vectors.bytes("jws/appstore-iap/sandbox-notification-TEST.jws")))
    }
}

/// Apple's Xcode and test-CA tokens (app-store-server-library), and the synthetic ones.
@Suite struct AppleTestTokenTests {
    @Test func xcodeTransaction() throws {
        let jws = try Vectors.token("jws/apple/xcode/xcode-signed-transaction.jws")
        #expect(jws.header.keyID == "Apple_Xcode_Key")
        #expect(jws.header.type == "JWT")
        let chain = try #require(jws.header.certificateChain)
        #expect(chain.count == 1)
        let certificate = try Certificate(derEncoded: chain[0])
        #expect(certificate.subject.commonName == "StoreKit Testing in Xcode")
        #expect(certificate.isSelfSigned)
        let t = try jws.decodePayloadToVerify(as: JWSTransaction.self)
        #expect(t.transactionId == "0" && t.originalTransactionId == "0" && t.webOrderLineItemId == "0")
        #expect(t.productId == "pass.premium")
        #expect(t.subscriptionGroupIdentifier == "6F3A93AB")
        #expect(t.purchaseDate?.text == "1697679936049.7297")
        #expect(t.purchaseDate?.milliseconds == nil)
        #expect(abs((t.purchaseDate?.secondsSince1970 ?? 0) - 1_697_679_936.049) < 0.001)
        #expect(t.expiresDate?.text == "1700358336049.7297")
        #expect(t.signedDate?.text == "1697679936056.485")
        #expect(t.quantity == 1)
        #expect(t.type == .autoRenewableSubscription)
        #expect(t.inAppOwnershipType == .purchased)
        #expect(t.offerType == .introductory)
        #expect(t.storefront == "USA" && t.storefrontId == "143441")
        #expect(t.transactionReason == .purchase)
        #expect(t.isUpgraded == false)
        #expect(t.environment == .xcode)
        #expect(t.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(t.deviceVerificationNonce == "7edea87d-98f0-42d0-9682-49ca81022f73")
        #expect(t.unknownFields.isEmpty)
        // Fractional milliseconds come back exactly.
        #expect(t.jsonValue().isEqualIgnoringMemberOrder(to: try JSONValue.parse(jws.unverifiedPayload)))
    }

    @Test func xcodeRenewalInfo() throws {
        let r = try Vectors.token("jws/apple/xcode/xcode-signed-renewal-info.jws").decodePayloadToVerify(as: JWSRenewalInfo.self)
        #expect(r.autoRenewProductId == "pass.premium")
        #expect(r.autoRenewStatus == .on)
        #expect(r.signedDate?.text == "1697679936711.0747")
        #expect(r.renewalDate?.text == "1700358336049.7297")
        #expect(r.recentSubscriptionStartDate?.text == "1697679936049.7297")
        #expect(r.originalTransactionId == "0")
        #expect(r.environment == .xcode)
    }

    @Test func xcodeAppTransaction() throws {
        let a = try Vectors.token("jws/apple/xcode/xcode-signed-app-transaction.jws").decodePayloadToVerify(as: AppTransaction.self)
        #expect(a.appAppleId == nil)
        #expect(a.applicationVersion == "1")
        #expect(a.originalApplicationVersion == "1")
        #expect(a.originalPurchaseDate?.milliseconds == -62_135_769_600_000)
        #expect(a.originalPurchaseDate?.text == "-62135769600000")
        #expect(a.deviceVerification == "cYUsXc53EbYc0pOeXG5d6/31LGHeVGf84sqSN0OrJi5u/j2H89WWKgS8N0hMsMlf")
        #expect(a.deviceVerificationNonce == "48c8b92d-ce0d-4229-bedf-e61b4f9cfc92")
        #expect(a.receiptType == .xcode)
        #expect(a.receiptCreationDate?.text == "1697680122257.447")
        #expect(a.requestDate?.text == "1697680122257.447")
        #expect(a.bundleId == "com.example.naturelab.backyardbirds.example")
    }

    @Test func testCATokens() throws {
        let testCA = try Vectors.bytes("jws/certs/testCA.der")
        let leaf = try Vectors.bytes("jws/certs/leaf-cert.der")
        let intermediate = try Vectors.bytes("jws/certs/intermediate-ca.der")

        let notification = try Vectors.token("jws/apple/mock_signed_data/testNotification.jws")
        let n = try notification.decodePayloadToVerify(as: NotificationPayload.self)
        #expect(n.notificationType == .test)
        #expect(n.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(n.signedDate?.milliseconds == 1_681_314_324_000)
        #expect(n.data?.environment == .sandbox)
        #expect(n.data?.appAppleId == 1234)
        #expect(n.data?.bundleId == "com.example")
        // testNotification and transactionInfo carry an older test chain (root serial
        // 9F8D35062C39D1F6), not testCA.der; renewalInfo, wrongBundleId and the x5c-less token
        // carry testCA.der's chain.
        let olderChain = try #require(notification.header.certificateChain)
        #expect(olderChain.count == 3)
        #expect(try Certificate(derEncoded: olderChain[2]).serialNumberHex == "9F8D35062C39D1F6")

        let transaction = try Vectors.token("jws/apple/mock_signed_data/transactionInfo.jws")
        let t = try transaction.decodePayloadToVerify(as: JWSTransaction.self)
        #expect(t.environment == .sandbox && t.bundleId == "com.example" && t.signedDate?.milliseconds == 1_672_956_154_000)
        #expect(transaction.header.certificateChain == olderChain)

        let renewal = try Vectors.token("jws/apple/mock_signed_data/renewalInfo.jws")
        let r = try renewal.decodePayloadToVerify(as: JWSRenewalInfo.self)
        #expect(r.environment == .sandbox && r.signedDate?.milliseconds == 1_672_956_154_000)
        #expect(renewal.header.certificateChain == [leaf, intermediate, testCA])

        let wrong = try Vectors.token("jws/apple/mock_signed_data/wrongBundleId.jws")
        #expect(try wrong.decodePayloadToVerify(as: NotificationPayload.self).data?.bundleId == "com.example.wrong")
        #expect(wrong.header.certificateChain == [leaf, intermediate, testCA])

        let missing = try Vectors.token("jws/apple/mock_signed_data/missingX5CHeaderClaim.jws")
        #expect(missing.header.certificateChain == nil)
        #expect(missing.header.unknownFields.map(\.0) == ["x5cwrong"])
        #expect(missing.header.unknownFields.first?.1.arrayValue?.count == 3)
        #expect(try missing.decodePayloadToVerify(as: NotificationPayload.self).notificationType == .test)
    }

    @Test func mimoNegativeInputs() throws {
        let hs256 = try Vectors.token("jws/mimo/upstream/InputFor_VerifyAndDecode_AlgParameterIsUnsupported_Fails.txt")
        #expect(hs256.header.algorithm == .hs256)
        #expect(try hs256.decodePayloadToVerify(as: NotificationPayload.self).data?.bundleId == "com.example")

        let missingPart = try Vectors.bytes("jws/mimo/upstream/InputFor_VerifyAndDecode_JWSIsMissingAPart_Fails.txt")
        let error = jwsError { _ = try CompactJWS(missingPart) }
        #expect(error?.code == .wrongSegmentCount)
        #expect(error?.offset == missingPart.count)

        let noX5C = try Vectors.token("jws/mimo/upstream/InputFor_VerifyAndDecode_Nox5cParameter_Fails.txt")
        #expect(noX5C.header.certificateChain == [])

        let invalid = try Vectors.token("jws/mimo/upstream/InputFor_VerifyAndDecode_InvalidSignature_Fails.txt")
        #expect(try invalid.decodePayloadToVerify(as: JWSTransaction.self).bundleId == "com.example.subdomain")

        let compromised = try Vectors.token("jws/mimo/upstream/InputFor_VerifyAndDecode_ChainCertificateCompromised_Fails.txt")
        let chain = try #require(compromised.header.certificateChain)
        let g6 = try Vectors.bytes("jws/certs/AppleWWDRCA-G6.der")
        #expect(chain.count == 3 && chain[0] == g6 && chain[1] == g6)
        // Its payload and signature are the reconstructed original's.
        let original = try Vectors.token("jws/mimo/sandbox-notification-TEST-original-reconstructed.jws")
        #expect(compromised.unverifiedPayload == original.unverifiedPayload)
        #expect(compromised.signature == original.signature)
    }

    /// The synthetic tokens decode to the values of their manifest.
    @Test func syntheticTokens() throws {
        let manifest = try Vectors.json("synthetic/manifest.json")
        let transactionExpected = try #require(manifest["transaction"])
        for name in ["transaction", "transaction-no-leaf-oid", "transaction-no-intermediate-oid", "expired-cert-fresh"] {
            let t = try Vectors.token("jws/synthetic/\(name).jws").decodePayloadToVerify(as: JWSTransaction.self)
            #expect(t.jsonValue().isEqualIgnoringMemberOrder(to: transactionExpected), "\(name)")
            #expect(t.productId == "com.example.app.pro" && t.transactionId == "2000000000000001")
            #expect(t.signedDate?.milliseconds == 1_722_945_600_000)
        }
        let historical = try Vectors.token("jws/synthetic/expired-cert-historical.jws").decodePayloadToVerify(as: JWSTransaction.self)
        #expect(historical.signedDate?.milliseconds == manifest["expiredChain"]?["historicalSignedDate"]?.int64Value)

        var appExpected = try #require(manifest["appTransaction"]?.objectValue)
        let sandbox = try Vectors.token("jws/synthetic/app-transaction.jws").decodePayloadToVerify(as: AppTransaction.self)
        #expect(sandbox.jsonValue().isEqualIgnoringMemberOrder(to: .object(appExpected)))
        #expect(sandbox.appAppleId == 123_456_789 && sandbox.applicationVersion == "1.2.3" && sandbox.receiptType == .sandbox)
        appExpected = appExpected.map { $0.0 == "receiptType" ? ($0.0, .string("Production")) : $0 }
        let production = try Vectors.token("jws/synthetic/app-transaction-production.jws").decodePayloadToVerify(as: AppTransaction.self)
        #expect(production.jsonValue().isEqualIgnoringMemberOrder(to: .object(appExpected)))
        #expect(production.receiptType == .production)
    }
}
