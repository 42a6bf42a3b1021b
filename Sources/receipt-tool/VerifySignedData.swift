import Foundation
import JSON
import JWS
import ReceiptVerification

extension VerifyCommand {
    /// How `verify` checks StoreKit 2 signed data (a compact JWS or a notification body
    /// `{"signedPayload": …}`): the same anchors and policy as receipts, one verifier per payload
    /// kind (transaction, renewal info, app transaction, notification), sharing one chain cache and
    /// one header cache, and the expectations of the JWS options.
    struct SignedDataVerification: Sendable {
        let transactions: JWSTransactionVerifier
        let renewals: JWSRenewalInfoVerifier
        let appTransactions: AppTransactionVerifier
        let notifications: NotificationVerifier
        let expectations: JWSExpectations
        /// `--kind`, when given.
        let forcedKind: ForcedKind?
        /// The expectation options given, to refuse those a kind does not carry.
        let options: ExpectationOptions

        init(settings: VerificationSettings, arguments: Arguments) throws(UsageError) {
            forcedKind = try ForcedKind.parse(arguments)
            transactions = settings.jwsVerifier()
            renewals = settings.jwsVerifier()
            appTransactions = settings.jwsVerifier()
            notifications = settings.jwsVerifier()
            expectations = settings.jwsExpectations
            options = ExpectationOptions(arguments)
        }

        /// Verifies `bytes` as `Value` with the expectations that kind carries; the options it does
        /// not carry are refused (`notApplicable`).
        func verify<Value: AppStoreSignedPayload>(_ verifier: SignedDataVerifier<JWSFormat<Value>>, _ bytes: [UInt8], time: ValidationTime)
            -> Verdict<SignedJWS<Value>>
        {
            let verdict = verifier.verify(bytes, expecting: expectations.applicable(to: Value.self), at: time)
            return options.refusing(verdict, as: .signedData(name: Value.payloadName, carries: Value.carriedClaims))
        }

        /// The JWS expectations of the command line: `--bundle-id`, `--app-apple-id`,
        /// `--environment`, `--max-age`, `--device-verification-id`, `--app-account-token`.
        static func expectations(_ args: Arguments) throws(UsageError) -> JWSExpectations {
            var expectations = JWSExpectations()
            expectations.bundleIdentifier = args.value("--bundle-id")
            if let text = args.value("--app-apple-id") {
                guard let id = Int64(text), id >= 0 else { throw UsageError("--app-apple-id '\(text)' is not a non-negative integer") }
                expectations.appAppleId = id
            }
            if let allowed = try args.environments(production: Environment.production, sandbox: .sandbox, xcode: .xcode) {
                expectations.environments = allowed
            }
            if let text = args.value("--max-age") {
                guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
                    throw UsageError("--max-age '\(text)' is not a number of seconds (0 or more)")
                }
                expectations.maximumAge = seconds
            }
            if let text = args.value("--device-verification-id") {
                guard isUUID(text) else { throw UsageError("--device-verification-id '\(text)' is not a UUID") }
                expectations.deviceVerificationID = text
            }
            if let text = args.value("--app-account-token") {
                guard isUUID(text) else { throw UsageError("--app-account-token '\(text)' is not a UUID") }
                expectations.appAccountToken = text
            }
            return expectations
        }

        /// Whether `text` is a UUID in its 8-4-4-4-12 hexadecimal form (either case).
        static func isUUID(_ text: String) -> Bool {
            let bytes = Array(text.utf8)
            guard bytes.count == 36 else { return false }
            for (index, byte) in bytes.enumerated() {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard byte == UInt8(ascii: "-") else { return false }
                } else {
                    let isHex =
                        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
                        || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
                    guard isHex else { return false }
                }
            }
            return true
        }

        /// Verifies detected signed data by the kind `--kind` names or else the kind its payload's
        /// members name (`detectedKind`).
        func verify(_ label: String, _ input: SignedDataInput, kind detectedKind: AppStorePayloadKind, time: ValidationTime, json: Bool)
            -> Outcome
        {
            let body: Bool
            switch input {
            case .token: body = false
            case .notificationBody: body = true
            }
            if let forcedKind, forcedKind.payloadKind == nil {
                return forcedKind.mismatch(label, found: "signed data (\(detectedKind.withArticle))", json: json)
            }
            let bytes = input.jws.token
            switch forcedKind?.payloadKind ?? detectedKind {
            case .transaction:
                return report(label, verify(transactions, bytes, time: time), kind: "jws_transaction", json: json) {
                    Self.transactionFields($0, &$2)
                }
            case .renewalInfo:
                return report(label, verify(renewals, bytes, time: time), kind: "jws_renewal_info", json: json) {
                    Self.renewalFields($0, &$2)
                }
            case .appTransaction:
                return report(
                    label, verify(appTransactions, bytes, time: time), kind: "jws_app_transaction", json: json
                ) { Self.appTransactionFields($0, &$2) }
            case .notification:
                return report(
                    label, verify(notifications, bytes, time: time), kind: "jws_notification", json: json,
                    body: body
                ) { Self.notificationFields($0, $1, &$2) }
            case .realtimeRequest, .unknown:
                let what =
                    detectedKind == .realtimeRequest ? "a Retention Messaging real-time request" : "JSON of no App Store payload kind"
                return VerifyCommand.unreadable(
                    label,
                    "signed data whose payload is \(what); verify reads transactions, renewal info, app transactions and notifications"
                        + "; name its kind with --kind transaction, renewal, app-transaction or notification",
                    json: json)
            }
        }

        /// The outcome of input shaped like signed data that does not read: the verifier's parse
        /// check says why.
        func malformed(_ label: String, _ bytes: [UInt8], time: ValidationTime, json: Bool) -> Outcome {
            report(label, transactions.verify(bytes, expecting: expectations, at: time), kind: "jws", json: json) { _, _, _ in }
        }

        /// The outcome of one verdict: text (`VALID (JWS transaction)`) or the JSON verdict object
        /// with the payload's identifying fields.
        func report<Value: AppStoreSignedPayload>(
            _ label: String, _ verdict: Verdict<SignedJWS<Value>>, kind: String, json: Bool, body: Bool = false,
            fields: (Value, VerifiedNestedTokens, inout JSONWriter) -> Void
        ) -> Outcome {
            let value = verdict.payload?.value
            let status: Status = verdict.isValid ? .valid : (value == nil ? .unreadable : .invalid)
            if json {
                let output = VerdictReport.json(label, status, verdict, kind: kind) { writer in
                    if let value { fields(value, verdict.nested, &writer) }
                }
                return Outcome(status: status, output: output, signedData: true)
            }
            var detail = value.map { Self.detail($0) } ?? "signed data"
            if body { detail = "notification body, " + detail }
            return Outcome(status: status, output: VerdictReport.text(label, status, verdict, detail: detail), signedData: true)
        }

        /// `JWS transaction`, `JWS renewal info`, `JWS app transaction`, or `notification DID_RENEW
        /// (BILLING_RECOVERY)`.
        static func detail<Value: AppStoreSignedPayload>(_ value: Value) -> String {
            if let notification = value as? NotificationPayload {
                var text = "notification " + (notification.notificationType?.rawValue ?? "(no type)")
                if let subtype = notification.subtype { text += " (\(subtype.rawValue))" }
                return text
            }
            return "JWS " + Value.payloadName
        }

        static func date(_ key: String, _ date: JWSDate?, _ writer: inout JSONWriter) {
            if let date { writer.number(key, date.text) }
        }

        static func string(_ key: String, _ value: String?, _ writer: inout JSONWriter) {
            if let value { writer.string(key, value) }
        }

        static func transactionFields(_ t: JWSTransaction, _ w: inout JSONWriter) {
            string("transactionId", t.transactionId, &w)
            string("originalTransactionId", t.originalTransactionId, &w)
            string("bundleId", t.bundleId, &w)
            string("productId", t.productId, &w)
            string("environment", t.environment?.rawValue, &w)
            date("purchaseDate", t.purchaseDate, &w)
            date("signedDate", t.signedDate, &w)
        }

        static func renewalFields(_ r: JWSRenewalInfo, _ w: inout JSONWriter) {
            string("originalTransactionId", r.originalTransactionId, &w)
            string("productId", r.productId, &w)
            string("autoRenewProductId", r.autoRenewProductId, &w)
            string("environment", r.environment?.rawValue, &w)
            date("signedDate", r.signedDate, &w)
        }

        static func appTransactionFields(_ a: AppTransaction, _ w: inout JSONWriter) {
            string("bundleId", a.bundleId, &w)
            if let id = a.appAppleId { w.number("appAppleId", String(id)) }
            string("applicationVersion", a.applicationVersion, &w)
            string("appTransactionId", a.appTransactionId, &w)
            string("receiptType", a.receiptType?.rawValue, &w)
            date("receiptCreationDate", a.receiptCreationDate, &w)
        }

        /// The notification's own identifiers, the app and environment it names (from `data`,
        /// `summary`, `externalPurchaseToken` or `appData`), and its signed transaction's ids (as
        /// verified with it: only in a valid verdict).
        static func notificationFields(_ n: NotificationPayload, _ nested: VerifiedNestedTokens, _ w: inout JSONWriter) {
            string("notificationType", n.notificationType?.rawValue, &w)
            string("subtype", n.subtype?.rawValue, &w)
            string("notificationUUID", n.notificationUUID, &w)
            date("signedDate", n.signedDate, &w)
            let claims = n.claims
            string("bundleId", claims.bundleIdentifier, &w)
            if let id = claims.appAppleId { w.number("appAppleId", String(id)) }
            string("environment", claims.environment?.rawValue, &w)
            if let transaction = nested.transaction?.value {
                string("transactionId", transaction.transactionId, &w)
                string("originalTransactionId", transaction.originalTransactionId, &w)
                string("productId", transaction.productId, &w)
            }
        }
    }
}
