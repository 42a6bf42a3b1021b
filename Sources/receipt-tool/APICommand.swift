import AppStoreServerAPI
import Dispatch
import Foundation
import Internals
import JSON
import JWS
import ReceiptVerification
import Receipts
import VerifyReceipt

/// `receipt-tool api`: the App Store Server API, every signed payload verified before it is shown.
enum APICommand {
    static let subcommand = Subcommand(
        name: "api",
        summary: "Call the App Store Server API; print the verified, decoded payloads.",
        help: """
            USAGE: receipt-tool api <request> [<argument>] --issuer-id <id> --key-id <kid> --private-key <file.p8>
                                    --bundle-id <bid> [--environment production|sandbox] [--base-url <url>]
                                    [--anchor apple|<file>]... [--json] [request options]

            REQUESTS:
              history <txid>...       Get Transaction History (v2), every page in order, for each
                                      id in turn: one transaction per line. Or --from-receipt
                                      <file> instead of <txid>: the first transaction id of that
                                      app receipt or iOS 6 transaction receipt, which must verify
                                      first.
              transaction <txid>...   Get Transaction Info, for each id in turn.
              statuses <txid>         Get All Subscription Statuses: one subscription per line
                                      (group, originalTransactionId, status, the last transaction
                                      and the renewal info).
              order <order-id>        Look Up Order ID: the order's transactions (an invalid order
                                      id is an error).
              refunds <txid>          Get Refund History, every page.
              notifications           Get Notification History, every page (--start, --end).
              test-notification       Request a Test Notification, then print its status.
              app-transaction <txid>  Get App Transaction Info: the customer's app transaction
                                      (any of the customer's transaction ids).
              set-app-account-token <original-txid> <uuid>
                                      Set App Account Token.
              consumption <txid> --body <file.json>
                                      Send Consumption Information (v2): customerConsented,
                                      consumptionPercentage (0-100000), deliveryStatus,
                                      refundPreference, sampleContentProvided.
              finish <txid>           Finish Transaction.
              extend-all --body <file.json>
                                      Extend Subscription Renewal Dates for All Active
                                      Subscribers: extendByDays (1-90), extendReasonCode (0-3),
                                      requestIdentifier, productId, storefrontCountryCodes.
              extend-all-status <product-id> <request-id>
                                      Get Status of Subscription Renewal Date Extensions.
              retention messages      Retention Messaging: Get Message List (id and state).
              retention message-upload <uuid> --body <file.json>
                                      Upload Message: header (1-66), body (1-144), image
                                      {imageIdentifier, altText (150)}, bulletPoints (5),
                                      headerPosition ABOVE_BODY|ABOVE_IMAGE.
              retention message-delete <uuid>
                                      Delete Message.
              retention images        Get Image List (id, state, size).
              retention image-upload <uuid> --image <file.png> [--image-size FULL_SIZE|BULLET_POINT]
                                      Upload Image: a PNG without transparency (FULL_SIZE:
                                      3840 wide, 160-2160 high).
              retention image-delete <uuid>
                                      Delete Image.
              retention default <product-id> <locale>
                                      Get Default Message.
              retention default-set <product-id> <locale> <message-uuid>
                                      Configure Default Message.
              retention default-delete <product-id> <locale>
                                      Delete Default Message.

            OPTIONS:
              --issuer-id <id>        The issuer id of the App Store Connect API key.
              --key-id <kid>          The key id.
              --private-key <file>    The key's .p8 file (PKCS#8, EC P-256).
              --bundle-id <bid>       The app's bundle id (the token's bid; every payload's bundleId).
              --environment <env>     production (default) or sandbox: the API Apple serves it at,
                                      and the environment every payload must name.
              --base-url <url>        Send the requests to this URL instead (a simulated server, a
                                      proxy); the payloads must still name --environment.
              --legacy-host           Use Apple's older hosts (api.storekit.itunes.apple.com,
                                      api.storekit-sandbox.itunes.apple.com) instead of
                                      api.storekit.apple.com and api.storekit-sandbox.apple.com.
              --anchor <anchor>       Roots the JWS chains must end at (repeatable): 'apple' (the
                                      bundled Apple roots; default) or a certificate file.
              --json                  One JSON object per line, nested JWS replaced by their
                                      decoded payloads.
              --timeout <seconds>     Per HTTP attempt (default 30).
              --max-attempts <n>      HTTP attempts per request, 429 and 5xx retried (default 3).
              --max-response-bytes <n>
                                      The largest response body, in bytes (default 8388608).
                                      Bodies are asked for and accepted unencoded only
                                      (Accept-Encoding: identity; a gzip answer is an error).
              --max-total-bytes <n>   history, refunds, notifications: the most response bytes
                                      of all pages together (default 16777216).
              --paging-deadline <s>   history, refunds, notifications: the longest the whole
                                      paging call may take, every page and retry included
                                      (default 300 seconds). A page token that repeats an
                                      earlier one ends the call too.
            \(RevocationOption.help)
              -h, --help              Show help information.

            REQUEST OPTIONS:
              --from-receipt <file>   history: take the transaction id from this receipt.
              --receipt-anchor <a>    The roots that receipt must chain to: 'apple' (default),
                                      'xcode' (with the xcode policy, as in verify) or a
                                      certificate file (repeatable).
              --unverified-receipt    Take the transaction id without verifying the receipt.
              --product-id <id>       history: only this product (repeatable).
              --product-type <type>   history: AUTO_RENEWABLE, NON_RENEWABLE, CONSUMABLE or
                                      NON_CONSUMABLE (repeatable).
              --sort <order>          history: ascending (default) or descending.
              --revoked <bool>        history: only refunded (true) or only other (false)
                                      transactions.
              --status <n>            statuses: only subscriptions with this status, 1-5 (repeatable).
              --start <date>          notifications: from this date (RFC 3339 or milliseconds;
                                      default 180 days before --end).
              --end <date>            notifications: before this date (default now).
              --only-failures         notifications: only those that did not reach the server.
              --body <file.json>      consumption, extend-all, retention message-upload: the
                                      request body, validated before anything is sent.
              --image <file.png>      retention image-upload: the PNG, checked before sending.
              --image-size <size>     retention image-upload: FULL_SIZE or BULLET_POINT.

            Exit status: 0 when every payload verified, 1 for any error (HTTP, Apple's errorCode,
            a payload that does not verify: nothing is printed from a response with one forged
            JWS), 64 for a usage error (a malformed id, UUID or body is refused before any
            request). One bearer token and one throttle serve every request of a run: requests
            are spaced at Apple's published rate for each endpoint (sandbox: 10 %), so a run
            with many ids is not answered HTTP 429.
            """,
        run: run)

    /// Each request and how many operands it takes (`nil` upper bound: any number).
    static let arity: [String: (minimum: Int, maximum: Int?)] = [
        "history": (1, nil), "transaction": (1, nil), "statuses": (1, 1), "order": (1, 1), "refunds": (1, 1),
        "notifications": (0, 0), "test-notification": (0, 0), "app-transaction": (1, 1), "set-app-account-token": (2, 2),
        "consumption": (1, 1), "finish": (1, 1), "extend-all": (0, 0), "extend-all-status": (2, 2), "retention": (1, 4),
    ]

    static var requests: Set<String> { Set(arity.keys) }

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(
            arguments,
            valued: [
                "--issuer-id", "--key-id", "--private-key", "--bundle-id", "--environment", "--base-url", "--anchor", "--timeout",
                "--max-attempts", "--from-receipt", "--receipt-anchor", "--itunes-ca", "--wwdr-ca", "--product-id", "--product-type",
                "--sort", "--revoked", "--status", "--start", "--end", "--body", "--image", "--image-size", "--max-response-bytes",
                "--max-total-bytes", "--paging-deadline", "--revocation", "--ocsp-response",
            ],
            flagNames: ["--json", "--unverified-receipt", "--only-failures", "--legacy-host"])
        guard let request = args.positional.first else { throw UsageError("missing request: \(requests.sorted().joined(separator: ", "))") }
        guard let (minimum, maximum) = arity[request] else { throw UsageError("unknown request '\(request)'") }
        let fromReceipt = args.value("--from-receipt")
        if fromReceipt != nil, request != "history" { throw UsageError("--from-receipt is for history") }
        let operands = Array(args.positional.dropFirst())
        if fromReceipt != nil, !operands.isEmpty { throw UsageError("too many arguments") }
        if operands.count < minimum, fromReceipt == nil {
            throw UsageError(minimum == 1 ? "\(request) needs an argument" : "\(request) needs \(minimum) arguments")
        }
        if let maximum, operands.count > maximum { throw UsageError("too many arguments") }
        // Retention Messaging: its own operands and files, all checked before anything is sent.
        if request == "retention" {
            let plan = try RetentionRequests.plan(operands, args: args)
            let client = try makeClient(args)
            let lines = try RetentionRequests.run(plan, client: client, json: args.flag("--json"))
            if !lines.isEmpty { printOut(lines.joined(separator: "\n")) }
            return ExitStatus.success
        }
        if args.value("--image") != nil || args.value("--image-size") != nil {
            throw UsageError("--image and --image-size are for retention image-upload")
        }
        let bodyPath = args.value("--body")
        let takesBody = request == "consumption" || request == "extend-all"
        if bodyPath != nil, !takesBody { throw UsageError("--body is for consumption, extend-all and retention message-upload") }
        if takesBody, bodyPath == nil { throw UsageError("\(request) needs --body <file.json>") }
        // Every local value is checked before the client is made and anything is sent.
        for (index, operand) in operands.enumerated() where !(request == "set-app-account-token" && index == 1) {
            try checkIdentifier(operand)
        }
        let body = try bodyPath.map { path throws in try readInput(path, limit: 64 << 10) }
        let consumption = try body.flatMap { bytes throws(UsageError) in request == "consumption" ? try consumptionBody(bytes) : nil }
        let massExtension = try body.flatMap { bytes throws(UsageError) in request == "extend-all" ? try massExtensionBody(bytes) : nil }
        var appAccountToken: UUID?
        if request == "set-app-account-token" {
            guard let token = UUIDText.parse(operands[1]) else {
                throw UsageError("\(ManagementRequests.quoted(operands[1])) is not a UUID (8-4-4-4-12 hexadecimal digits)")
            }
            appAccountToken = token
        }
        let client = try makeClient(args)
        let json = args.flag("--json")
        let identifiers = try fromReceipt.map { path throws in [try transactionID(fromReceipt: path, args)] } ?? operands
        let identifier = identifiers.first ?? ""

        let lines: [String]
        switch request {
        case "history":
            let filters = try historyFilters(args)
            let histories = try blocking {
                try await inOrder(identifiers) { id in try await client.transactionHistory(transactionID: id, request: filters) }
            }
            lines = histories.flatMap { $0.transactions.map { transactionLine($0, json: json) } }
        case "transaction":
            let transactions = try blocking { try await inOrder(identifiers) { id in try await client.transactionInfo(transactionID: id) } }
            lines = transactions.map { transactionLine($0, json: json) }
        case "statuses":
            let wanted = try args.values("--status").map { text throws(UsageError) in
                guard let value = Int64(text), (1...5).contains(value) else { throw UsageError("--status must be 1-5, found \(text)") }
                return SubscriptionStatus(rawValue: value)
            }
            let statuses = try blocking { try await client.subscriptionStatuses(transactionID: identifier, status: wanted) }
            lines = statuses.groups.flatMap { group in group.lastTransactions.map { statusLine($0, group: group, json: json) } }
        case "order":
            let lookup = try blocking { try await client.lookUpOrder(orderID: identifier) }
            guard lookup.status == .valid else { throw ToolFailure("order \(identifier) is not valid (status \(lookup.status))") }
            lines = lookup.transactions.map { transactionLine($0, json: json) }
        case "refunds":
            lines = try blocking { try await client.refundHistory(transactionID: identifier) }.map { transactionLine($0, json: json) }
        case "notifications":
            let history = try notificationRequest(args)
            lines = try blocking { try await client.notificationHistory(history) }.map {
                notificationLine($0.notification, attempts: $0.sendAttempts, extra: [], json: json)
            }
        case "test-notification":
            let status = try blocking { () async throws -> (String, TestNotificationStatus) in
                let token = try await client.requestTestNotification()
                return (token, try await client.testNotificationStatus(token: token))
            }
            lines = [
                notificationLine(
                    status.1.notification, attempts: status.1.sendAttempts, extra: [("testNotificationToken", .string(status.0))],
                    json: json)
            ]
        default:
            lines = try ManagementRequests.run(
                request, operands: identifiers, client: client, json: json, appAccountToken: appAccountToken, consumption: consumption,
                massExtension: massExtension)
        }
        if !lines.isEmpty { printOut(lines.joined(separator: "\n")) }
        return ExitStatus.success
    }

    /// The requests in flight at once when a run has several ids: the client's throttle decides
    /// when each starts, so a slow answer does not hold back the next slot.
    static let concurrentRequests = 8

    /// `body` for every id, at most ``concurrentRequests`` at a time, the answers in the ids'
    /// order; the first failure ends the run (nothing is printed).
    static func inOrder<T: Sendable>(
        _ identifiers: [String], _ body: @escaping @Sendable (String) async throws -> T
    ) async throws -> [T] {
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var results = [T?](repeating: nil, count: identifiers.count)
            var next = 0
            while next < min(concurrentRequests, identifiers.count) {
                let (index, id) = (next, identifiers[next])
                group.addTask { (index, try await body(id)) }
                next += 1
            }
            while let (index, value) = try await group.next() {
                results[index] = value
                if next < identifiers.count {
                    let (index, id) = (next, identifiers[next])
                    group.addTask { (index, try await body(id)) }
                    next += 1
                }
            }
            return results.compactMap { $0 }
        }
    }

    /// An id the API takes in its path: 1 to 256 letters, digits, `-`, `.`, `_` or `~`.
    static func checkIdentifier(_ text: String) throws(UsageError) {
        let allowed = text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                true
            default: false
            }
        }
        guard !text.isEmpty, text.utf8.count <= 256, allowed else {
            throw UsageError("\(ManagementRequests.quoted(text)) is not an id (1 to 256 letters, digits, '-', '.', '_' or '~')")
        }
    }

    static func consumptionBody(_ bytes: [UInt8]) throws(UsageError) -> ConsumptionRequestV2 {
        do throws(RequestBodyError) {
            return try ConsumptionRequestV2(json: bytes)
        } catch {
            throw UsageError("--body: \(error)")
        }
    }

    static func massExtensionBody(_ bytes: [UInt8]) throws(UsageError) -> MassExtendRenewalDateRequest {
        do throws(RequestBodyError) {
            return try MassExtendRenewalDateRequest(json: bytes)
        } catch {
            throw UsageError("--body: \(error)")
        }
    }

    // MARK: - Configuration

    static func makeClient(_ args: Arguments) throws -> AppStoreServerAPIClient {
        let issuer = try args.required("--issuer-id")
        let keyID = try args.required("--key-id")
        let keyFile = try args.required("--private-key")
        let bundleID = try args.required("--bundle-id")
        var environment: AppStoreServerEnvironment
        let legacy = args.flag("--legacy-host")
        switch try ServeCommand.environment(args) {
        case .production: environment = legacy ? .productionLegacyHost : .production
        case .sandbox: environment = legacy ? .sandboxLegacyHost : .sandbox
        }
        if let text = args.value("--base-url") {
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw UsageError("--base-url must be an http or https URL, found \(Redaction.redacted(text))")
            }
            environment = environment.at(url)
        }
        var timeout: TimeInterval = 30
        if let text = args.value("--timeout") {
            guard let value = Double(text), value > 0, value <= 600 else {
                throw UsageError("--timeout must be 0-600 seconds, found \(text)")
            }
            timeout = value
        }
        var retry = RetryPolicy.default
        if let text = args.value("--max-attempts") {
            guard let value = Int(text), (1...10).contains(value) else { throw UsageError("--max-attempts must be 1-10, found \(text)") }
            retry.maximumAttempts = value
        }
        func byteCount(_ name: String, default value: Int) throws(UsageError) -> Int {
            guard let text = args.value(name) else { return value }
            guard let count = Int(text), (1...(1 << 40)).contains(count) else {
                throw UsageError("\(name) must be a number of bytes from 1 to 2^40, found \(text)")
            }
            return count
        }
        let maximumResponseSize = try byteCount("--max-response-bytes", default: 8 << 20)
        let maximumTotal = try byteCount("--max-total-bytes", default: 16 << 20)
        var pagingDeadline: TimeInterval = 300
        if let text = args.value("--paging-deadline") {
            guard let value = Double(text), value > 0, value <= 86_400 else {
                throw UsageError("--paging-deadline must be 0-86400 seconds, found \(text)")
            }
            pagingDeadline = value
        }
        let settings = try VerificationSettings(options: args)
        let pem = String(decoding: try readInput(keyFile, limit: 64 << 10), as: UTF8.self)
        let key = try AppStoreConnectKey(issuerID: issuer, keyID: keyID, p8: pem)
        return try AppStoreServerAPIClient(
            configuration: .init(
                key: key, bundleID: bundleID, environment: environment, anchors: settings.anchors, policy: settings.policy,
                timeout: timeout, retry: retry, maximumResponseSize: maximumResponseSize, maximumTotalResponseSize: maximumTotal,
                pagingDeadline: pagingDeadline))
    }

    /// The transaction id of the receipt `path`: verified first unless `--unverified-receipt`.
    static func transactionID(fromReceipt path: String, _ args: Arguments) throws -> String {
        // Detected once; the receipt's own bytes (decoded from base64) go on.
        let raw = try readInput(path)
        let detected = try? SignedInput.detect(raw)
        var isTransactionReceipt = false
        if case .transactionReceipt? = detected { isTransactionReceipt = true }
        let bytes = detected?.verifiableBytes ?? raw
        let unverified = args.flag("--unverified-receipt")
        let settings = try VerificationSettings(options: args, anchorOption: "--receipt-anchor")
        let transactionVerifier = isTransactionReceipt && !unverified ? try settings.transactionReceiptVerifier() : nil
        let id: String?
        do throws(ReceiptUtilityError) {
            if unverified {
                id =
                    isTransactionReceipt
                    ? try ReceiptUtility.unverifiedTransactionID(fromTransactionReceipt: bytes)
                    : try ReceiptUtility.unverifiedTransactionID(fromAppReceipt: bytes)
            } else if let transactionVerifier {
                id = try ReceiptUtility.transactionID(fromTransactionReceipt: bytes, verifier: transactionVerifier)
            } else {
                id = try ReceiptUtility.transactionID(fromAppReceipt: bytes, verifier: settings.appReceiptVerifier())
            }
        } catch {
            throw ToolFailure("\(path): \(error)")
        }
        guard let id else { throw ToolFailure("\(path): the receipt lists no transaction") }
        return id
    }

    static func historyFilters(_ args: Arguments) throws(UsageError) -> TransactionHistoryRequest {
        var request = TransactionHistoryRequest(productIDs: args.values("--product-id"))
        for type in args.values("--product-type") {
            guard ["AUTO_RENEWABLE", "NON_RENEWABLE", "CONSUMABLE", "NON_CONSUMABLE"].contains(type) else {
                throw UsageError("--product-type must be AUTO_RENEWABLE, NON_RENEWABLE, CONSUMABLE or NON_CONSUMABLE, found \(type)")
            }
            request.productTypes.append(HistoryProductType(rawValue: type))
        }
        switch args.value("--sort") {
        case nil: break
        case "ascending": request.order = .ascending
        case "descending": request.order = .descending
        case let other?: throw UsageError("--sort must be ascending or descending, found \(other)")
        }
        switch args.value("--revoked") {
        case nil: break
        case "true": request.revoked = true
        case "false": request.revoked = false
        case let other?: throw UsageError("--revoked must be true or false, found \(other)")
        }
        return request
    }

    static func notificationRequest(_ args: Arguments) throws(UsageError) -> NotificationHistoryRequest {
        func date(_ name: String) throws(UsageError) -> Date? {
            guard let text = args.value(name) else { return nil }
            if let ms = Int64(text) { return Date(timeIntervalSince1970: Double(ms) / 1000) }
            let full = text.count == 10 ? text + "T00:00:00Z" : text
            guard let parsed = (try? ReceiptDate.parse(full)) ?? nil else {
                throw UsageError("\(name) must be an RFC 3339 date or milliseconds since 1970, found \(text)")
            }
            return parsed
        }
        let end = try date("--end") ?? Date()
        let start = try date("--start") ?? end.addingTimeInterval(-180 * 86_400)
        guard start < end else { throw UsageError("--start must be before --end") }
        return NotificationHistoryRequest(startDate: start, endDate: end, onlyFailures: args.flag("--only-failures") ? true : nil)
    }

    // MARK: - Running

    /// Runs an async call to completion from the tool's synchronous code.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws(ToolFailure) -> T {
        let box = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, any Error>
            do {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        switch box.withLock({ $0 }) {
        case .success(let value)?: return value
        case .failure(let error)?: throw ToolFailure(Redaction.redacted("\(error)"))
        case nil: throw ToolFailure("the call ended without a result")
        }
    }

    // MARK: - Output

    /// The exact payload JSON a verified token carries.
    static func decoded(_ payload: [UInt8]) -> JSONValue {
        (try? JSONValue.parse(payload, options: JWSLimits.default.jsonOptions)) ?? .null
    }

    static func transactionLine(_ signed: SignedJWS<JWSTransaction>, json: Bool) -> String {
        let payload = decoded(signed.value.jsonPayload)
        if json { return payload.jsonText(indent: 0) }
        var out = ["Transaction \(signed.value.transactionId ?? "?") (verified)"]
        JWSDump.fields(payload, path: "", nested: [:], into: &out, indent: 2)
        return out.joined(separator: "\n")
    }

    static func statusLine(_ item: LastTransaction, group: SubscriptionGroupStatus, json: Bool) -> String {
        let transaction = decoded(item.transaction.value.jsonPayload)
        let renewal = decoded(item.renewalInfo.value.jsonPayload)
        if json {
            return JSONValue.object([
                ("subscriptionGroupIdentifier", .string(group.subscriptionGroupIdentifier)),
                ("originalTransactionId", .string(item.originalTransactionId)), ("status", .number(String(item.status.rawValue))),
                ("signedTransactionInfo", transaction), ("signedRenewalInfo", renewal),
            ]).jsonText(indent: 0)
        }
        var out = [
            "Subscription \(item.originalTransactionId) in group \(group.subscriptionGroupIdentifier): status \(item.status.rawValue) (\(statusName(item.status)))"
        ]
        out.append("  Last transaction (verified)")
        JWSDump.fields(transaction, path: "", nested: [:], into: &out, indent: 4)
        out.append("  Renewal info (verified)")
        JWSDump.fields(renewal, path: "", nested: [:], into: &out, indent: 4)
        return out.joined(separator: "\n")
    }

    static func statusName(_ status: SubscriptionStatus) -> String {
        switch status {
        case .active: "active"
        case .expired: "expired"
        case .billingRetry: "billing retry"
        case .billingGracePeriod: "billing grace period"
        case .revoked: "revoked"
        default: "unknown"
        }
    }

    static func notificationLine(
        _ signed: SignedJWS<NotificationPayload>, attempts: [SendAttempt], extra: [(String, JSONValue)], json: Bool
    ) -> String {
        let payload = decoded(signed.value.jsonPayload)
        let nested = (try? JWSDump.nestedTokens(payload, kind: .notification)) ?? [:]
        let attemptsJSON = JSONValue.array(
            attempts.map { .object([("attemptDate", .number($0.attemptDate.text)), ("sendAttemptResult", .string($0.result.rawValue))]) })
        if json {
            return JSONValue.object(extra + [("signedPayload", JWSDump.expanded(payload, nested)), ("sendAttempts", attemptsJSON)])
                .jsonText(indent: 0)
        }
        let value = signed.value
        var out = [
            "Notification \(value.notificationType?.rawValue ?? "?")\(value.subtype.map { "/\($0.rawValue)" } ?? "") \(value.notificationUUID ?? "") (verified)"
        ]
        for (key, member) in extra { out.append(TextLayout.line(key, member.stringValue ?? member.jsonText(indent: 0))) }
        JWSDump.fields(payload, path: "", nested: nested, into: &out, indent: 2)
        out.append("  Send attempts")
        for attempt in attempts {
            out.append(TextLayout.line(JWSDump.rfc3339(attempt.attemptDate), attempt.result.rawValue, indent: 4))
        }
        return out.joined(separator: "\n")
    }
}
