import Foundation
import JSON
import JWS
import Testing

/// Apple's payload JSON for every payload type (app-store-server-library `models/`): each decodes
/// to the values Apple's own tests expect, and re-encoding gives the input member by member.
@Suite struct ModelTests {
    static let notificationFiles = [
        "signedNotification", "signedConsumptionRequestNotification", "signedSummaryNotification",
        "signedExternalPurchaseTokenNotification",
        "signedExternalPurchaseTokenSandboxNotification", "signedRescindConsentNotification",
    ]

    static func model(_ name: String) throws -> [UInt8] { try Vectors.bytes("jws/apple/models/\(name).json") }

    /// Decoding then re-encoding keeps Apple's names, JSON types and values, every member.
    func roundTrips(_ value: JSONValue, _ name: String) throws {
        let input = try JSONValue.parse(try Self.model(name))
        #expect(value.isEqualIgnoringMemberOrder(to: input), "\(name): \(value.jsonText(indent: 0))")
    }

    @Test(arguments: notificationFiles)
    func notificationRoundTrips(_ name: String) throws {
        let n = try NotificationPayload(jsonPayload: try Self.model(name))
        try roundTrips(n.jsonValue(), name)
        #expect(n.unknownFields.isEmpty)
        #expect(n.jsonPayload == (try Self.model(name)))
        #expect(n.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(n.version == "2.0")
        #expect(n.signedDate?.milliseconds == 1_698_148_900_000)
        #expect(AppStorePayloadKind.of(jsonPayload: try Self.model(name)) == .notification)
        // Decoding through the value is the identity.
        #expect(try NotificationPayload(jsonPayload: n.jsonValue().jsonBytes()) == n)
    }

    @Test func notificationVariants() throws {
        let subscribed = try NotificationPayload(jsonPayload: try Self.model("signedNotification"))
        #expect(subscribed.notificationType == .subscribed && subscribed.subtype == .initialBuy)
        let data = try #require(subscribed.data)
        #expect(data.environment == .localTesting && data.appAppleId == 41234 && data.bundleId == "com.example")
        #expect(data.bundleVersion == "1.2.3" && data.status == .active && data.consumptionRequestReason == nil)
        #expect(data.signedTransactionInfo?.token == "signed_transaction_info_value")
        #expect(data.signedRenewalInfo?.token == "signed_renewal_info_value")
        // The nested values are not tokens: decoding them (unverified) fails with a typed error.
        #expect(jwsError { _ = try data.signedTransactionInfo?.parse() }?.code == .wrongSegmentCount)
        #expect(subscribed.summary == nil && subscribed.externalPurchaseToken == nil && subscribed.appData == nil)

        let consumption = try NotificationPayload(jsonPayload: try Self.model("signedConsumptionRequestNotification"))
        #expect(consumption.notificationType == .consumptionRequest && consumption.subtype == nil)
        #expect(consumption.data?.consumptionRequestReason == .unintendedPurchase)

        let summary = try NotificationPayload(jsonPayload: try Self.model("signedSummaryNotification"))
        #expect(summary.notificationType == .renewalExtension && summary.subtype == .summary)
        #expect(summary.data == nil)
        let s = try #require(summary.summary)
        #expect(s.requestIdentifier == "efb27071-45a4-4aca-9854-2a1e9146f265" && s.productId == "com.example.product")
        #expect(s.storefrontCountryCodes == ["CAN", "USA", "MEX"] && s.succeededCount == 5 && s.failedCount == 2)
        #expect(s.environment == .localTesting && s.appAppleId == 41234 && s.bundleId == "com.example")

        for (name, id) in [
            ("signedExternalPurchaseTokenNotification", "b2158121-7af9-49d4-9561-1f588205523e"),
            ("signedExternalPurchaseTokenSandboxNotification", "SANDBOX_b2158121-7af9-49d4-9561-1f588205523e"),
        ] {
            let n = try NotificationPayload(jsonPayload: try Self.model(name))
            #expect(n.notificationType == .externalPurchaseToken && n.subtype == .unreported)
            let token = try #require(n.externalPurchaseToken)
            #expect(token.externalPurchaseId == id && token.tokenCreationDate?.milliseconds == 1_698_148_950_000)
            #expect(token.appAppleId == 55555 && token.bundleId == "com.example")
            #expect(n.data == nil)
        }

        let rescind = try NotificationPayload(jsonPayload: try Self.model("signedRescindConsentNotification"))
        #expect(rescind.notificationType == .rescindConsent)
        #expect(rescind.data == nil && rescind.summary == nil && rescind.externalPurchaseToken == nil)
        let appData = try #require(rescind.appData)
        #expect(appData.environment == .localTesting && appData.appAppleId == 41234 && appData.bundleId == "com.example")
        #expect(appData.signedAppTransactionInfo?.token == "signed_app_transaction_info_value")
    }

    @Test(arguments: ["signedTransaction", "signedTransactionWithRevocation"])
    func transaction(_ name: String) throws {
        let t = try JWSTransaction(jsonPayload: try Self.model(name))
        try roundTrips(t.jsonValue(), name)
        #expect(t.unknownFields.isEmpty)
        #expect(t.originalTransactionId == "12345" && t.transactionId == "23456" && t.webOrderLineItemId == "34343")
        #expect(t.productId == "com.example.product" && t.subscriptionGroupIdentifier == "55555" && t.bundleId == "com.example")
        #expect(t.originalPurchaseDate?.milliseconds == 1_698_148_800_000)
        #expect(t.purchaseDate?.milliseconds == 1_698_148_900_000)
        #expect(t.revocationDate?.milliseconds == 1_698_148_950_000)
        #expect(t.expiresDate?.milliseconds == 1_698_149_000_000)
        #expect(t.type == .autoRenewableSubscription && t.quantity == 1)
        #expect(t.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(t.inAppOwnershipType == .purchased && t.revocationReason == .appIssue)
        #expect(t.offerIdentifier == "abc.123" && t.offerType == .introductory && t.isUpgraded == true)
        #expect(t.storefront == "USA" && t.storefrontId == "143441" && t.transactionReason == .purchase)
        #expect(t.price == 10990 && t.currency == "USD" && t.offerDiscountType == .payAsYouGo)
        #expect(t.appTransactionId == "71134" && t.offerPeriod == "P1Y" && t.environment == .localTesting)
        if name == "signedTransactionWithRevocation" {
            #expect(t.revocationType == .refundProrated && t.revocationPercentage == 50000)
            #expect(t.advancedCommerceInfo == nil)
        } else {
            #expect(t.revocationType == nil)
            let info = try #require(t.advancedCommerceInfo)
            #expect(info.period == "P1M" && info.estimatedTax == 1500 && info.taxRate == "0.15" && info.taxExclusivePrice == 8490)
            #expect(info.descriptors?.displayName == "Premium" && info.requestReferenceId == "ref-12345" && info.taxCode == "TAX_CODE_1")
            let item = try #require(info.items?.first)
            #expect(item.sku == "com.example.sku.premium" && item.price == 9990 && item.revocationDate?.milliseconds == 1_698_149_200_000)
            let refund = try #require(item.refunds?.first)
            #expect(refund.refundType == "PRORATED" && refund.refundReason == "FULFILLMENT_ISSUE" && refund.refundAmount == 5000)
            #expect(refund.refundDate?.milliseconds == 1_698_149_100_000)
            #expect(t.billingPlanType == .monthly)
            let commitment = try #require(t.commitmentInfo)
            #expect(commitment.billingPeriodNumber == 3 && commitment.totalBillingPeriods == 12 && commitment.commitmentPrice == 119_880)
            #expect(commitment.commitmentExpiresDate?.milliseconds == 1_698_150_000_000)
        }
    }

    @Test func renewalInfo() throws {
        let r = try JWSRenewalInfo(jsonPayload: try Self.model("signedRenewalInfo"))
        try roundTrips(r.jsonValue(), "signedRenewalInfo")
        #expect(r.expirationIntent == .customerCancelled && r.autoRenewStatus == .on && r.isInBillingRetryPeriod == true)
        #expect(r.priceIncreaseStatus == .notResponded && r.gracePeriodExpiresDate?.milliseconds == 1_698_148_900_000)
        #expect(r.offerType == .promotional && r.renewalDate?.milliseconds == 1_698_148_850_000)
        #expect(r.renewalPrice == 9990 && r.currency == "USD" && r.offerDiscountType == .payAsYouGo)
        #expect(r.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(r.autoRenewProductId == "com.example.product.2" && r.productId == "com.example.product")
        #expect(r.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138" && r.renewalBillingPlanType == .monthly)
        let increase = try #require(r.advancedCommerceInfo?.items?.first?.priceIncreaseInfo)
        #expect(
            increase.dependentSKUs == ["com.example.sku.1", "com.example.sku.2"] && increase.price == 12990 && increase.status == "PENDING")
        #expect(r.advancedCommerceInfo?.consistencyToken == "token-abc-123")
        #expect(r.commitmentInfo?.commitmentAutoRenewStatus == .on && r.commitmentInfo?.commitmentRenewalPrice == 9990)
        #expect(r.commitmentInfo?.commitmentRenewalBillingPlanType == .monthly)
        #expect(r.commitmentInfo?.commitmentRenewalDate?.milliseconds == 1_698_149_500_000)
    }

    @Test func appTransaction() throws {
        let a = try AppTransaction(jsonPayload: try Self.model("appTransaction"))
        try roundTrips(a.jsonValue(), "appTransaction")
        #expect(a.receiptType == .localTesting && a.appAppleId == 531412 && a.bundleId == "com.example")
        #expect(a.applicationVersion == "1.2.3" && a.versionExternalIdentifier == 512)
        #expect(a.receiptCreationDate?.milliseconds == 1_698_148_900_000 && a.originalPurchaseDate?.milliseconds == 1_698_148_800_000)
        #expect(a.originalApplicationVersion == "1.1.2" && a.deviceVerification == "device_verification_value")
        #expect(a.deviceVerificationNonce == "48ccfa42-7431-4f22-9908-7e88983e105a" && a.preorderDate?.milliseconds == 1_698_148_700_000)
        #expect(a.appTransactionId == "71134" && a.originalPlatform == .iOS)
        #expect(AppStorePayloadKind.of(jsonPayload: try Self.model("appTransaction")) == .appTransaction)
    }

    @Test func realtimeRequestAndAppData() throws {
        let request = try RealtimeRequest(jsonPayload: try Self.model("decodedRealtimeRequest"))
        try roundTrips(request.jsonValue(), "decodedRealtimeRequest")
        #expect(request.originalTransactionId == "99371282" && request.appAppleId == 531412 && request.userLocale == "en-US")
        #expect(
            request.requestIdentifier == "3db5c98d-8acf-4e29-831e-8e1f82f9f6e9" && request.signedDate?.milliseconds == 1_698_148_900_000)
        #expect(AppStorePayloadKind.of(jsonPayload: try Self.model("decodedRealtimeRequest")) == .realtimeRequest)

        let appData = try AppData(json: try Self.model("appData"))
        try roundTrips(appData.jsonValue(), "appData")
        #expect(appData.appAppleId == 987_654_321 && appData.environment == .sandbox)
        #expect(appData.signedAppTransactionInfo?.token == "signed-app-transaction-info")
    }
}

/// Unknown members and enum values are kept; strict types; nulls.
@Suite struct ModelStrictnessTests {
    @Test func unknownFieldsAndValuesAreKeptInOrder() throws {
        let text = #"""
            {"zNew":{"a":[1,2]},"transactionId":"1","type":"Brand-New Type","offerType":9,"environment":"Staging",
             "aNew":1.50,"revocationReason":null,"inAppOwnershipType":"SOMETHING_ELSE"}
            """#
        let t = try JWSTransaction(jsonText: text)
        #expect(t.unknownFields.map(\.0) == ["zNew", "aNew", "revocationReason"])
        #expect(t.unknownFields[1].1 == .number("1.50"))
        #expect(t.unknownFields[2].1 == .null)
        #expect(t.revocationReason == nil)
        #expect(t.type?.rawValue == "Brand-New Type" && t.type != .consumable)
        #expect(t.offerType?.rawValue == 9 && t.environment?.rawValue == "Staging")
        #expect(t.inAppOwnershipType == InAppOwnershipType(rawValue: "SOMETHING_ELSE"))
        #expect(t.jsonValue().isEqualIgnoringMemberOrder(to: try JSONValue.parse(text)))
        #expect(AppStorePayloadKind.of(jsonPayload: Array(text.utf8)) == .transaction)
    }

    @Test(
        arguments: [
            (#"{"transactionId":1}"#, JSONError.Code.typeMismatch, 17),
            (#"{"price":9223372036854775808}"#, .numberDoesNotFit, 9),
            (#"{"price":1e3}"#, .numberDoesNotFit, 9),
            (#"{"quantity":1.5}"#, .numberDoesNotFit, 12),
            (#"{"quantity":-0}"#, .numberDoesNotFit, 12),
            (#"{"purchaseDate":1e400}"#, .numberDoesNotFit, 16),
            (#"{"purchaseDate":9e15}"#, .numberDoesNotFit, 16),
            (#"{"purchaseDate":"1697679936049"}"#, .typeMismatch, 16),
            (#"{"isUpgraded":"true"}"#, .typeMismatch, 14),
            (#"{"advancedCommerceInfo":[]}"#, .typeMismatch, 24),
            (#"{"advancedCommerceInfo":{"items":[{"price":"1"}]}}"#, .typeMismatch, 43),
        ] as [(String, JSONError.Code, Int)])
    func wrongTypesAndNumbersThatDoNotFit(_ text: String, _ code: JSONError.Code, _ offset: Int) {
        let error = jwsError { _ = try JWSTransaction(jsonText: text) }
        #expect(error?.code == .invalidField, "\(text): \(String(describing: error))")
        #expect(error?.underlying?.code == code, "\(text)")
        #expect(error?.offset == offset, "\(text)")
    }

    @Test(
        arguments: [
            (#"{"transactionId":"1","transactionId":"1"}"#, JSONError.Code.duplicateKey, 21),
            (#"{"x":1,"x":2}"#, .duplicateKey, 7),
            (#"{"revocationReason":null,"revocationReason":1}"#, .duplicateKey, 25),
            (#"{"commitmentInfo":{"commitmentPrice":1,"commitmentPrice":2}}"#, .duplicateKey, 39),
            (#"{"a":1} {}"#, .trailingData, 8),
            (#"[1]"#, .typeMismatch, 0),
            ("{\"bundleId\":\"a\u{1}\"}", .invalidString, 14),
        ] as [(String, JSONError.Code, Int)])
    func invalidJSON(_ text: String, _ code: JSONError.Code, _ offset: Int) {
        let error = jwsError { _ = try JWSTransaction(jsonText: text) }
        #expect(error?.underlying?.code == code, "\(text): \(String(describing: error))")
        #expect(error?.code == (code == .typeMismatch ? .invalidField : .invalidJSON), "\(text)")
        #expect(error?.offset == offset, "\(text)")
    }

    @Test func duplicateUnknownMembersInLargeObjects() throws {
        var text = "{"
        for i in 0..<40 { text += "\"u\(i)\":\(i)," }
        text += "\"u33\":0}"
        let error = jwsError { _ = try JWSRenewalInfo(jsonText: text) }
        #expect(error?.code == .invalidJSON && error?.underlying?.code == .duplicateKey)
        #expect(error?.offset == text.utf8.count - 8)
        #expect(try JWSRenewalInfo(jsonText: String(text.dropLast(9)) + "}").unknownFields.count == 40)
    }

    @Test func invalidUTF8InAPayload() {
        let bytes = Array(#"{"bundleId":"a"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        let error = jwsError { _ = try JWSTransaction(jsonPayload: bytes) }
        #expect(error?.code == .invalidJSON)
        #expect(error?.underlying?.code == .invalidUTF8)
        #expect(error?.offset == 14)
    }

    @Test func datesKeepTheirText() throws {
        let date = try #require(JWSDate(text: "1697679936049.7297"))
        #expect(date.milliseconds == nil)
        #expect(date.millisecondsSince1970 == 1_697_679_936_049.7297)
        #expect(JWSDate(text: "-62135769600000")?.milliseconds == -62_135_769_600_000)
        #expect(JWSDate(text: "-62135769600000")?.date == Date(timeIntervalSince1970: -62_135_769_600))
        #expect(abs(date.date.timeIntervalSince1970 - 1_697_679_936.0497297) < 1e-6)
        #expect(JWSDate(text: "1e400") == nil && JWSDate(text: "01") == nil && JWSDate(text: "9e15") == nil)
        #expect(JWSDate(milliseconds: 5) == JWSDate(text: "5"))
        #expect(JWSDate(text: "1") != JWSDate(text: "1.0"))
        #expect(try #require(JWSDate(text: "1")) < (try #require(JWSDate(text: "1.5"))))
    }
}

/// The custom link token fields Apple added to `externalPurchaseToken` (Notifications 2.17) and the
/// `ACTIVE_TOKEN_REMINDER` subtype, in the shape of Apple's EXTERNAL_PURCHASE_TOKEN model.
@Suite struct ExternalPurchaseTokenFieldTests {
    @Test func tokenTypeAndExpiration_decode_andRoundTrip() throws {
        let text = """
            {"notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": "ACTIVE_TOKEN_REMINDER",
             "notificationUUID": "002e14d5-51f5-4503-b5a8-c3a1af68eb20", "version": "2.0", "signedDate": 1698148900000,
             "externalPurchaseToken": {"externalPurchaseId": "b2158121-7af9-49d4-9561-1f588205523e", "tokenCreationDate": 1698148950000,
              "appAppleId": 55555, "bundleId": "com.example", "tokenType": "SERVICES", "tokenExpirationDate": 1698235350000}}
            """
        let n = try NotificationPayload(jsonPayload: Array(text.utf8))
        #expect(n.subtype == .activeTokenReminder)
        let token = try #require(n.externalPurchaseToken)
        #expect(token.tokenType == "SERVICES" && token.tokenExpirationDate?.milliseconds == 1_698_235_350_000)
        #expect(token.unknownFields.isEmpty)
        #expect(n.jsonValue().isEqualIgnoringMemberOrder(to: try JSONValue.parse(Array(text.utf8))))
    }
}
