import Foundation
import Internals
import JSON
import Receipts
import TestSupport
import Testing
import VerifyReceipt

@Suite struct VerifyReceiptStatusTests {
    @Test func documentedCodesHaveMeanings() {
        let named: [(VerifyReceiptStatus, Int)] = [
            (.valid, 0), (.malformedRequest, 21000), (.malformedReceiptData, 21002), (.notAuthenticated, 21003),
            (.sharedSecretMismatch, 21004), (.serverUnavailable, 21005), (.subscriptionExpired, 21006),
            (.sandboxReceiptOnProduction, 21007), (.productionReceiptOnSandbox, 21008), (.internalDataAccessError, 21009),
            (.accountNotFound, 21010),
        ]
        for (status, code) in named {
            #expect(status.rawValue == code)
            #expect(!status.meaning.hasPrefix("Unknown"), "\(code)")
        }
        #expect(Set(named.map(\.0.meaning)).count == named.count)
        #expect(VerifyReceiptStatus(rawValue: 21150).isInternalDataAccessRange)
        #expect(VerifyReceiptStatus(rawValue: 21150).meaning.contains("Internal data access"))
        #expect(!VerifyReceiptStatus(rawValue: 21200).isInternalDataAccessRange)
        #expect(VerifyReceiptStatus(rawValue: 12345).meaning.hasPrefix("Unknown"))
        #expect(VerifyReceiptStatus.serverUnavailable.isRetryable)
        #expect(VerifyReceiptStatus(rawValue: 21100).isRetryable)
        #expect(!VerifyReceiptStatus.notAuthenticated.isRetryable)
        #expect(VerifyReceiptStatus.subscriptionExpired.carriesReceipt)
        #expect(!VerifyReceiptStatus.sandboxReceiptOnProduction.carriesReceipt)
        #expect(VerifyReceiptStatus.sandboxReceiptOnProduction.description.hasPrefix("21007 (This receipt is from the sandbox"))
    }
}

@Suite struct VerifyReceiptRequestTests {
    /// venice's expectation: the body is exactly `{"receipt-data": …}`, plus `password` and
    /// `exclude-old-transactions` only when set.
    @Test func bodiesCarryOnlyWhatIsSet() throws {
        #expect(String(decoding: VerifyReceiptRequest(receiptData: "QUJD").jsonBody, as: UTF8.self) == #"{"receipt-data":"QUJD"}"#)
        let full = VerifyReceiptRequest(receiptData: "QUJD", password: "s3cr\"t", excludeOldTransactions: true)
        #expect(
            String(decoding: full.jsonBody, as: UTF8.self)
                == #"{"receipt-data":"QUJD","password":"s3cr\"t","exclude-old-transactions":true}"#)
        #expect(try VerifyReceiptRequest(body: full.jsonBody) == full)
        #expect(VerifyReceiptRequest(receipt: [1, 2, 3]).receiptData == "AQID")
    }

    @Test func rejectionsUseApplesStatuses() {
        func status(_ body: String) -> Int? {
            do {
                _ = try VerifyReceiptRequest(body: Array(body.utf8))
                return nil
            } catch {
                return error.status.rawValue
            }
        }
        #expect(status("") == 21000)
        #expect(status("not json") == 21000)
        #expect(status("[1, 2]") == 21000)
        #expect(status("\"receipt-data\"") == 21000)
        #expect(status(#"{"receipt-data": "QUJD", "password": 7}"#) == 21000)
        #expect(status(#"{"receipt-data": "QUJD", "exclude-old-transactions": "yes"}"#) == 21000)
        #expect(status("{}") == 21002)
        #expect(status(#"{"receipt-data": 5}"#) == 21002)
        #expect(status(#"{"receipt-data": ""}"#) == 21002)
        #expect(status(#"{"receipt-data": null}"#) == 21002)
        #expect(status(#"{"receipt-data": "QUJD", "exclude-old-transactions": "true", "password": null}"#) == nil)
        // Deeply nested JSON is refused by depth, not by the stack.
        #expect(status(String(repeating: "[", count: 100_000)) == 21000)
    }
}

@Suite struct VerifyReceiptResponseTests {
    /// The verifyReceipt JSON we write for RevenueCat's sample1 matches Apple's own response for the
    /// same receipt field by field wherever both carry the field: top level, `receipt`, every `in_app`
    /// record and every `latest_receipt_info` record (Apple's only extra is
    /// `subscription_group_identifier`, which the receipt does not contain).
    @Test func appReceiptResponseMatchesApplesSample1() throws {
        let receipt = try AppReceipt(Fixtures.bytes("base64encodedreceiptsample1.der"))
        let apple = try JSONValue.parse(Fixtures.bytes("json/verifyReceiptSample1.json"))
        let appleReceipt = try #require(apple["receipt"])
        let requestDate = ReceiptDate.date(milliseconds: 1_595_440_486_402)  // Apple's request_date_ms
        let body = VerifyReceiptResponseWriter.appReceipt(
            receipt, environment: .sandbox,
            options: .init(requestDate: requestDate, latestReceipt: Base64.encode(try Fixtures.bytes("base64encodedreceiptsample1.der"))))
        let ours = try JSONValue.parse(body)

        #expect(ours["status"] == apple["status"])
        #expect(ours["environment"] == apple["environment"])
        guard case .object(let topLevel) = ours, case .object(let appleTopLevel) = apple else {
            Issue.record("not objects")
            return
        }
        #expect(topLevel.map(\.0) == ["status", "environment", "receipt", "latest_receipt_info", "latest_receipt"])
        #expect(Set(topLevel.map(\.0)).isSubset(of: Set(appleTopLevel.map(\.0))))

        // receipt: every key Apple wrote, request_date included, is equal; we write no other key.
        let ourReceipt = try #require(ours["receipt"])
        guard case .object(let appleMembers) = appleReceipt, case .object(let ourMembers) = ourReceipt else {
            Issue.record("receipt is not an object")
            return
        }
        var compared = 0
        for (key, value) in appleMembers where key != "in_app" {
            #expect(ourReceipt[key] == value, "receipt.\(key)")
            compared += 1
        }
        #expect(compared == 17)
        #expect(ourMembers.map(\.0) == appleMembers.map(\.0))

        // in_app: same records, same order, equal members.
        let appleInApp = try #require(appleReceipt["in_app"]?.arrayValue)
        let ourInApp = try #require(ourReceipt["in_app"]?.arrayValue)
        #expect(appleInApp.count == 9)
        #expect(ourInApp == appleInApp)

        // latest_receipt_info: derived from the receipt; Apple's order (oldest purchase first).
        let appleLatest = try #require(apple["latest_receipt_info"]?.arrayValue)
        let ourLatest = try #require(ours["latest_receipt_info"]?.arrayValue)
        #expect(ourLatest.count == appleLatest.count)
        var latestCompared = 0
        for (a, o) in zip(appleLatest, ourLatest) {
            guard case .object(let members) = a, case .object(let ourRecord) = o else { continue }
            for (key, value) in members where key != "subscription_group_identifier" {
                #expect(o[key] == value, "latest_receipt_info.\(key)")
                latestCompared += 1
            }
            for (key, _) in ourRecord { #expect(a[key] != nil, "extra key \(key)") }
        }
        #expect(latestCompared == 9 * 16)

        // Reading our response back with the client's parser gives the same receipt.
        let parsed = try VerifyReceiptResponse(body: body)
        #expect(parsed.status == .valid)
        #expect(parsed.receiptKind == .appReceipt)
        let reread = try #require(try parsed.appReceipt())
        #expect(
            reread.inAppPurchases
                == receipt.inAppPurchases.map { purchase in
                    var copy = purchase
                    copy.productType = nil
                    copy.attributeVersions = [:]
                    copy.emptyDateAttributeTypes = []
                    copy.unknownAttributes = []
                    return copy
                })
    }

    @Test func excludeOldTransactionsKeepsTheNewestPerSubscription() throws {
        let receipt = try AppReceipt(Fixtures.bytes("base64encodedreceiptsample1.der"))
        let latest = try #require(VerifyReceiptResponseWriter.latestReceiptInfo(receipt.inAppPurchases, excludeOldTransactions: true))
        #expect(latest.count == 1)
        #expect(latest.first?.transactionIdentifier == "1000000696553650")
        let body = VerifyReceiptResponseWriter.appReceipt(receipt, environment: .sandbox, options: .init(excludeOldTransactions: true))
        #expect(try VerifyReceiptResponse(body: body).latestReceiptInfo.count == 1)
        // A receipt without subscriptions has no latest_receipt_info.
        let consumables = try AppReceipt(Fixtures.bytes("base64encoded_sandboxReceipt3.der"))
        #expect(VerifyReceiptResponseWriter.latestReceiptInfo(consumables.inAppPurchases, excludeOldTransactions: false) == nil)
        let plain = try JSONValue.parse(VerifyReceiptResponseWriter.appReceipt(consumables, environment: .sandbox))
        #expect(plain["latest_receipt_info"] == nil)
        #expect(plain["latest_receipt"] == nil)
    }

    /// The iOS 6 shape: `receipt` with `bid`, `bvrs`, `item_id`, `expires_date` in ms and its texts;
    /// `latest_receipt_info` (or `latest_expired_receipt_info` with 21006) for subscriptions.
    @Test func transactionReceiptResponseHasTheIOS6Shape() throws {
        let subscription = try TransactionReceipt(Fixtures.bytes("legacy/base64encoded_unsupportedReceipt1.b64"))
        let body = VerifyReceiptResponseWriter.transactionReceipt(
            subscription, environment: .sandbox, latestReceipt: subscription.base64Encoded)
        let json = try JSONValue.parse(body)
        #expect(json["status"] == .number("0"))
        #expect(json["environment"] == .string("Sandbox"))
        #expect(json["receipt"]?["bid"] == .string("com.mbaasy.ios.demo"))
        #expect(json["receipt"]?["expires_date"] == .string("1448346881000"))
        #expect(json["receipt"]?["expires_date_formatted"] == .string("2015-11-24 06:34:41 Etc/GMT"))
        #expect(json["latest_receipt_info"] == json["receipt"])
        #expect(json["latest_receipt"] == .string(subscription.base64Encoded))
        let expired = try JSONValue.parse(
            VerifyReceiptResponseWriter.transactionReceipt(
                subscription, status: .subscriptionExpired, environment: .sandbox))
        #expect(expired["status"] == .number("21006"))
        #expect(expired["latest_expired_receipt_info"] == json["receipt"])
        #expect(expired["latest_receipt_info"] == nil)

        let consumable = try TransactionReceipt(Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64"))
        let plain = try JSONValue.parse(VerifyReceiptResponseWriter.transactionReceipt(consumable, environment: .sandbox))
        #expect(plain["latest_receipt_info"] == nil)
        #expect(plain["receipt"]?["transaction_id"] == .string("1000000046178817"))
        let parsed = try VerifyReceiptResponse(json: plain)
        #expect(parsed.receiptKind == .transactionReceipt)
        #expect(try parsed.purchaseInfo()?.itemID == 521_129_812)
        #expect(try parsed.appReceipt() == nil)
    }

    @Test func applesResponsesParse() throws {
        let sample1 = try VerifyReceiptResponse(body: Fixtures.bytes("json/verifyReceiptSample1.json"))
        #expect(sample1.status == .valid)
        #expect(sample1.environment == "Sandbox")
        #expect(sample1.receiptKind == .appReceipt)
        #expect(try sample1.appReceipt()?.bundleIdentifier == "com.revenuecat.sampleapp")
        #expect(try sample1.latestTransactions().count == 9)
        #expect(sample1.pendingRenewalInfo.count == 1)
        #expect(sample1.latestReceipt == "...")

        let ios6 = try VerifyReceiptResponse(body: Fixtures.bytes("json/verifyReceipt-autorenew-legacy-ios6.json"))
        #expect(ios6.status == .valid)
        #expect(ios6.receiptKind == .transactionReceipt)
        #expect(ios6.latestReceiptInfo.count == 1)
        #expect(try ios6.purchaseInfo()?.expiresDate.map(ReceiptDate.milliseconds) == 1_354_436_154_000)

        let ios7 = try VerifyReceiptResponse(body: Fixtures.bytes("json/verifyReceipt-autorenew-ios7.json"))
        #expect(try ios7.appReceipt()?.bundleIdentifier == "com.example.app")
        #expect(try ios7.appReceipt()?.inAppPurchases.count == 13)

        let expired = try VerifyReceiptResponse(body: Fixtures.bytes("json/receipt_expired_cancelled.json"))
        #expect(expired.status == .subscriptionExpired)
        #expect(expired.latestExpiredReceiptInfo?["bid"] == .string("com.foo.bar"))
        #expect(try expired.purchaseInfo()?.isTrialPeriod == true)

        let notExpired = try VerifyReceiptResponse(body: Fixtures.bytes("json/receipt_not_expired_cancelled.json"))
        #expect(notExpired.pendingRenewalInfo.first?["expiration_intent"] == .string("1"))

        // Numbers instead of strings (aporat's fixture) read the same.
        let numeric = try VerifyReceiptResponse(body: Fixtures.bytes("json/inAppPurchaseResponse.json"))
        let transactions = try numeric.latestTransactions()
        #expect(transactions.first?.transactionIdentifier == "1000000104232856")
        #expect(transactions.first?.isTrialPeriod == false)

        let invalid = try VerifyReceiptResponse(body: Fixtures.bytes("json/inAppPurchaseInvalidReceiptResponse.json"))
        #expect(invalid.status == .malformedReceiptData)
        #expect(invalid.receipt == nil)

        #expect(throws: VerifyReceiptResponse.Malformed.self) { try VerifyReceiptResponse(body: Array("{}".utf8)) }
        #expect(throws: VerifyReceiptResponse.Malformed.self) { try VerifyReceiptResponse(body: Array("{\"status\": \"ok\"}".utf8)) }
        #expect(throws: VerifyReceiptResponse.Malformed.self) { try VerifyReceiptResponse(body: Array("<html>".utf8)) }
        let retryable = try VerifyReceiptResponse(body: Array(#"{"status": 21100, "is-retryable": true}"#.utf8))
        #expect(retryable.isRetryable == true)
        #expect(retryable.status.isInternalDataAccessRange)
    }
}
