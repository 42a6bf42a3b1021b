import AppStoreServerAPI
import Foundation
import HTTPServer
import Internals
import JSON
import JWS
import RMStore
import ReceiptSigning

// The answers of the simulated App Store Server API, in Apple's JSON shapes (member names and
// order of Apple's responses), with Apple's error codes for bad parameters.

extension SimulatedServerHandler {
    var environmentName: String { issuer.environment.rawValue }

    /// Every customer's transactions and statuses, one customer after another.
    func snapshot() -> (transactions: [TransactionContents], statuses: [SimulatedSubscriptionGroupContents]) {
        state.withLock { state in (state.customers.flatMap(\.transactions), state.customers.flatMap(\.statuses)) }
    }

    /// The history of the customer whose transaction `identifier` names (Apple's error for a
    /// malformed or unknown id): only that customer's transactions and statuses.
    func customerSnapshot(
        of identifier: String?
    ) throws(RouteError) -> (transactions: [TransactionContents], statuses: [SimulatedSubscriptionGroupContents]) {
        guard Self.isDigits(identifier) else { throw RouteError.invalidTransactionID }
        let found = state.withLock { state in
            state.customers.first { $0.transactions.contains { $0.purchase.transactionIdentifier == identifier } }
        }
        guard let found else { throw RouteError.transactionNotFound }
        return (found.transactions, found.statuses)
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded()) ?? 0
    }

    static func isDigits(_ text: String?) -> Bool {
        guard let text, !text.isEmpty, text.utf8.count <= 32 else { return false }
        return text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The transaction `identifier` names, or Apple's error for a malformed or unknown id.
    @discardableResult
    func requireTransaction(_ identifier: String?, in transactions: [TransactionContents]) throws(RouteError) -> TransactionContents {
        guard Self.isDigits(identifier) else { throw RouteError.invalidTransactionID }
        guard let found = transactions.last(where: { $0.purchase.transactionIdentifier == identifier }) else {
            throw RouteError.transactionNotFound
        }
        return found
    }

    /// The signed transaction, `signedDate` now.
    func signed(_ contents: TransactionContents, _ signer: inout ResponseSigner) throws -> String {
        var contents = contents
        contents.signedDate = clock.now
        if let token = state.withLock({ $0.appAccountTokens[contents.purchase.originalTransactionIdentifier] }) {
            contents.appAccountToken = token
        }
        return try signer.sign(try issuer.transactionPayload(for: contents))
    }

    /// The signed renewal info, `signedDate` now.
    func signed(_ contents: RenewalInfoContents, _ signer: inout ResponseSigner) throws -> String {
        var contents = contents
        contents.signedDate = clock.now
        if let token = state.withLock({ $0.appAccountTokens[contents.originalTransactionIdentifier] }) {
            contents.appAccountToken = token
        }
        return try signer.sign(try issuer.renewalInfoPayload(for: contents))
    }

    func appMembers() -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [("bundleId", .string(configuration.bundleIdentifier))]
        if let appAppleId = configuration.appAppleId { members.append(("appAppleId", .number(String(appAppleId)))) }
        return members
    }

    static func ok(_ members: [(String, JSONValue)], status: Int = 200) -> HTTPResponse {
        .json(JSONValue.object(members).jsonBytes(), status: status)
    }

    /// The signed transactions of `transactions`, `signedDate` now (`signedTransactions`).
    func signedTransactions(_ transactions: some Sequence<TransactionContents>, _ signer: inout ResponseSigner) throws -> JSONValue {
        var tokens: [JSONValue] = []
        for contents in transactions { tokens.append(.string(try signed(contents, &signer))) }
        return .array(tokens)
    }

    static func historyType(_ kind: Product.Kind) -> String {
        switch kind {
        case .autoRenewableSubscription: "AUTO_RENEWABLE"
        case .nonRenewingSubscription: "NON_RENEWABLE"
        case .consumable: "CONSUMABLE"
        case .nonConsumable: "NON_CONSUMABLE"
        }
    }

    // MARK: - Transactions

    func transactionInfo(_ identifier: String?, _ signer: inout ResponseSigner) throws -> HTTPResponse {
        let found = try requireTransaction(identifier, in: try customerSnapshot(of: identifier).transactions)
        return Self.ok([("signedTransactionInfo", .string(try signed(found, &signer)))])
    }

    func transactionHistory(_ identifier: String?, _ query: String?, _ signer: inout ResponseSigner) throws -> HTTPResponse {
        let transactions = try customerSnapshot(of: identifier).transactions
        try requireTransaction(identifier, in: transactions)
        guard let items = Self.queryItems(query) else { throw RouteError.badRequest(4_000_000, "Invalid request.") }
        var revision: String?
        var startDate: Int64?
        var endDate: Int64?
        var products: Set<String> = []
        var types: Set<String> = []
        var descending = false
        var groups: Set<String> = []
        var ownership: String?
        var revoked: Bool?
        var filterText: [String] = []
        for (name, value) in items {
            if name != "revision" { filterText.append("\(name)=\(value)") }
            switch name {
            case "revision": revision = value
            case "startDate":
                guard let date = Int64(value) else { throw RouteError.badRequest(4_000_015, "Invalid start date.") }
                startDate = date
            case "endDate":
                guard let date = Int64(value) else { throw RouteError.badRequest(4_000_016, "Invalid end date.") }
                endDate = date
            case "productId": products.insert(value)
            case "productType":
                guard ["AUTO_RENEWABLE", "NON_RENEWABLE", "CONSUMABLE", "NON_CONSUMABLE"].contains(value) else {
                    throw RouteError.badRequest(4_000_022, "Invalid product type.")
                }
                types.insert(value)
            case "sort":
                guard value == "ASCENDING" || value == "DESCENDING" else { throw RouteError.badRequest(4_000_021, "Invalid sort.") }
                descending = value == "DESCENDING"
            case "subscriptionGroupIdentifier": groups.insert(value)
            case "inAppOwnershipType":
                guard value == "PURCHASED" || value == "FAMILY_SHARED" else {
                    throw RouteError.badRequest(4_000_026, "Invalid in-app ownership type.")
                }
                ownership = value
            case "revoked":
                guard value == "true" || value == "false" else { throw RouteError.badRequest(4_000_030, "Invalid revoked.") }
                revoked = value == "true"
            default: break
            }
        }
        if let startDate, let endDate, startDate >= endDate {
            throw RouteError.badRequest(4_000_013, "Invalid request. The end date precedes the start date or the dates are the same.")
        }
        var selected = transactions.filter { contents in
            let purchase = contents.purchase
            let date = Self.milliseconds(purchase.purchaseDate)
            if let startDate, date < startDate { return false }
            if let endDate, date >= endDate { return false }
            if !products.isEmpty, !products.contains(purchase.productIdentifier) { return false }
            if !types.isEmpty, !types.contains(Self.historyType(purchase.productType)) { return false }
            if !groups.isEmpty, !groups.contains(contents.subscriptionGroupIdentifier ?? "") { return false }
            if let ownership, ownership != "PURCHASED" { return false }
            if let revoked, revoked != (purchase.cancellationDate != nil) { return false }
            return true
        }
        if descending { selected.reverse() }
        let page = try SimulatedPage(
            count: selected.count, size: configuration.historyPageSize, filters: "history/" + filterText.joined(separator: "&"),
            token: revision, invalid: .invalidRevision)
        return Self.ok(
            [("revision", .string(page.nextToken)), ("hasMore", .bool(page.hasMore))] + appMembers() + [
                ("environment", .string(environmentName)), ("signedTransactions", try signedTransactions(selected[page.range], &signer)),
            ])
    }

    func subscriptionStatuses(_ identifier: String?, _ query: String?, _ signer: inout ResponseSigner) throws -> HTTPResponse {
        let (transactions, statuses) = try customerSnapshot(of: identifier)
        try requireTransaction(identifier, in: transactions)
        guard let items = Self.queryItems(query) else { throw RouteError.badRequest(4_000_000, "Invalid request.") }
        var wanted: Set<Int64> = []
        for (name, value) in items where name == "status" {
            guard let status = Int64(value), (1...5).contains(status) else { throw RouteError.badRequest(4_000_031, "Invalid status.") }
            wanted.insert(status)
        }
        var data: [JSONValue] = []
        for group in statuses {
            var last: [JSONValue] = []
            for item in group.lastTransactions where wanted.isEmpty || wanted.contains(item.status.rawValue) {
                last.append(
                    .object([
                        ("status", .number(String(item.status.rawValue))),
                        ("originalTransactionId", .string(item.originalTransactionIdentifier)),
                        ("signedTransactionInfo", .string(try signed(item.transaction, &signer))),
                        ("signedRenewalInfo", .string(try signed(item.renewalInfo, &signer))),
                    ]))
            }
            if !last.isEmpty {
                data.append(
                    .object([
                        ("subscriptionGroupIdentifier", .string(group.subscriptionGroupIdentifier)), ("lastTransactions", .array(last)),
                    ]))
            }
        }
        return Self.ok([("environment", .string(environmentName))] + appMembers() + [("data", .array(data))])
    }

    /// Ten letters and digits from SHA-256 of the transaction id (the look of Apple's order ids).
    static func orderIdentifier(_ transactionIdentifier: String) -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789".utf8)
        let digest = SHA256.hash(Array(("order:" + transactionIdentifier).utf8))
        return String(decoding: digest.prefix(10).map { alphabet[Int($0 % 32)] }, as: UTF8.self)
    }

    func orderLookup(_ orderID: String?, _ signer: inout ResponseSigner) throws -> HTTPResponse {
        let transactions = snapshot().transactions
        let matching = transactions.filter { Self.orderIdentifier($0.purchase.transactionIdentifier) == orderID }
        guard !matching.isEmpty else { return Self.ok([("status", .number("1")), ("signedTransactions", .array([]))]) }
        return Self.ok([("status", .number("0")), ("signedTransactions", try signedTransactions(matching, &signer))])
    }

    func refundHistory(_ identifier: String?, _ query: String?, _ signer: inout ResponseSigner) throws -> HTTPResponse {
        let transactions = try customerSnapshot(of: identifier).transactions
        try requireTransaction(identifier, in: transactions)
        guard let items = Self.queryItems(query) else { throw RouteError.badRequest(4_000_000, "Invalid request.") }
        let refunded = transactions.enumerated()
            .filter { $0.element.purchase.cancellationDate != nil }
            .sorted {
                ($0.element.purchase.cancellationDate ?? .distantPast, $0.offset) < (
                    $1.element.purchase.cancellationDate ?? .distantPast, $1.offset
                )
            }
            .map(\.element)
        let page = try SimulatedPage(
            count: refunded.count, size: configuration.refundPageSize, filters: "refunds",
            token: items.last(where: { $0.0 == "revision" })?.1, invalid: .invalidRevision)
        return Self.ok([
            ("signedTransactions", try signedTransactions(refunded[page.range], &signer)), ("revision", .string(page.nextToken)),
            ("hasMore", .bool(page.hasMore)),
        ])
    }

    // MARK: - Notifications

    static func jsonObject(_ body: [UInt8]) throws(RouteError) -> JSONValue {
        guard let value = try? JSONValue.parse(body), case .object = value else {
            throw RouteError.badRequest(4_000_000, "Invalid request.")
        }
        return value
    }

    func notificationHistory(_ body: [UInt8], _ query: String?) throws -> HTTPResponse {
        let request = try Self.jsonObject(body)
        guard case .number = request["startDate"], let start = request["startDate"]?.int64Value else {
            throw RouteError.badRequest(4_000_015, "Invalid start date.")
        }
        guard case .number = request["endDate"], let end = request["endDate"]?.int64Value else {
            throw RouteError.badRequest(4_000_016, "Invalid end date.")
        }
        guard start < end else {
            throw RouteError.badRequest(4_000_013, "Invalid request. The end date precedes the start date or the dates are the same.")
        }
        let type = request["notificationType"]?.stringValue
        let subtype = request["notificationSubtype"]?.stringValue
        let onlyFailures = request["onlyFailures"]?.boolValue ?? false
        let transactionID = request["transactionId"]?.stringValue
        if subtype != nil, type == nil { throw RouteError.badRequest(4_000_018, "Invalid notification type.") }
        if let transactionID { try requireTransaction(transactionID, in: snapshot().transactions) }
        let records = state.withLock { $0.notifications }.filter { record in
            let date = record.signedDate ?? record.attempts.first.map { Self.milliseconds($0.0) } ?? 0
            guard date >= start, date < end else { return false }
            if let type, record.notificationType != type { return false }
            if let subtype, record.subtype != subtype { return false }
            if transactionID != nil, !record.concernsTransaction { return false }
            if onlyFailures, record.attempts.allSatisfy({ $0.1 == "SUCCESS" }) { return false }
            return true
        }
        let page = try SimulatedPage(
            count: records.count, size: configuration.notificationPageSize,
            filters: "notifications/\(start)/\(end)/\(type ?? "")/\(subtype ?? "")/\(transactionID ?? "")/\(onlyFailures)",
            token: Self.queryItems(query)?.last(where: { $0.0 == "paginationToken" })?.1,
            invalid: .badRequest(4_000_014, "Invalid pagination token."))
        let items: [JSONValue] = records[page.range].map { record in
            .object([("sendAttempts", Self.attemptsJSON(record.attempts)), ("signedPayload", .string(record.signedPayload))])
        }
        var members: [(String, JSONValue)] = []
        if page.hasMore { members.append(("paginationToken", .string(page.nextToken))) }
        members += [("hasMore", .bool(page.hasMore)), ("notificationHistory", .array(items))]
        return Self.ok(members)
    }

    static func attemptsJSON(_ attempts: [(Date, String)]) -> JSONValue {
        .array(
            attempts.map {
                .object([("attemptDate", .number(String(milliseconds($0.0)))), ("sendAttemptResult", .string($0.1))])
            })
    }

    func requestTestNotification(_ signer: inout ResponseSigner) throws -> HTTPResponse {
        guard let url = configuration.notificationURL else {
            throw RouteError.notFound(4_040_007, "An error that indicates the App Store server couldn't find a notifications URL.")
        }
        let now = clock.now
        var data: [(String, JSONValue)] = []
        if let appAppleId = configuration.appAppleId { data.append(("appAppleId", .number(String(appAppleId)))) }
        data += [("bundleId", .string(configuration.bundleIdentifier)), ("environment", .string(environmentName))]
        let payload = JSONValue.object([
            ("notificationType", .string("TEST")), ("notificationUUID", .string(UUID().uuidString.lowercased())), ("data", .object(data)),
            ("version", .string("2.0")), ("signedDate", .number(String(Self.milliseconds(now)))),
        ])
        let token = try signer.sign(payload.jsonBytes())
        let testToken = "\(UUID().uuidString.lowercased())_\(Self.milliseconds(now))"
        let index = state.withLock { state in
            state.notifications.append(NotificationRecord(signedPayload: token, attempts: []))
            let index = state.notifications.count - 1
            state.testNotifications[testToken] = index
            return index
        }
        // Delivered before answering, so Get Test Notification Status shows the attempt at once.
        let outcome = transport.post(JSONValue.object([("signedPayload", .string(token))]).jsonBytes(), to: url)
        state.withLock { $0.notifications[index].attempts.append((clock.now, outcome.sendAttemptResult)) }
        return Self.ok([("testNotificationToken", .string(testToken))])
    }

    func testNotificationStatus(_ token: String?) throws -> HTTPResponse {
        guard let token, !token.isEmpty, token.utf8.count <= 128 else {
            throw RouteError.badRequest(4_000_020, "Invalid test notification token.")
        }
        let record = state.withLock { state in state.testNotifications[token].map { state.notifications[$0] } }
        guard let record else {
            throw RouteError.notFound(
                4_040_008, "Either the test notification token is expired or the notification and status are not yet available.")
        }
        return Self.ok([("signedPayload", .string(record.signedPayload)), ("sendAttempts", Self.attemptsJSON(record.attempts))])
    }

    // MARK: - Consumption and extensions

    func consumption(_ identifier: String?, _ body: [UInt8]) throws -> HTTPResponse {
        try requireTransaction(identifier, in: snapshot().transactions)
        let request = try Self.jsonObject(body)
        func integer(_ name: String, _ range: ClosedRange<Int64>, _ code: Int64, required: Bool = true) throws(RouteError) {
            guard let value = request[name] else {
                if required { throw RouteError.badRequest(code, "Invalid \(name).") }
                return
            }
            guard case .number = value, let number = value.int64Value, range.contains(number) else {
                throw RouteError.badRequest(code, "Invalid \(name).")
            }
        }
        guard request["customerConsented"]?.boolValue == true else {
            throw RouteError.badRequest(4_000_035, "Invalid request. The customer consented field is invalid or doesn't indicate consent.")
        }
        try integer("consumptionStatus", 0...3, 4_000_034)
        try integer("platform", 0...2, 4_000_039)
        guard request["sampleContentProvided"]?.boolValue != nil else {
            throw RouteError.badRequest(4_000_041, "Invalid sampleContentProvided.")
        }
        try integer("deliveryStatus", 0...5, 4_000_036)
        guard let token = request["appAccountToken"]?.stringValue, token.isEmpty || UUID(uuidString: token) != nil else {
            throw RouteError.badRequest(4_000_033, "Invalid app account token.")
        }
        try integer("accountTenure", 0...7, 4_000_032)
        try integer("playTime", 0...7, 4_000_040)
        try integer("lifetimeDollarsRefunded", 0...7, 4_000_038)
        try integer("lifetimeDollarsPurchased", 0...7, 4_000_037)
        try integer("userStatus", 0...4, 4_000_042)
        try integer("refundPreference", 0...3, 4_000_000, required: false)
        let id = identifier ?? ""
        state.withLock { $0.consumption.append((transactionIdentifier: id, body: request)) }
        return HTTPResponse(status: 202)
    }

    func extend(_ identifier: String?, _ body: [UInt8]) throws -> HTTPResponse {
        let request = try Self.jsonObject(body)
        guard case .number = request["extendByDays"], let days = request["extendByDays"]?.int64Value, (1...90).contains(days) else {
            throw RouteError.badRequest(4_000_009, "Invalid extend by days value.")
        }
        guard case .number = request["extendReasonCode"], let reason = request["extendReasonCode"]?.int64Value, (0...3).contains(reason)
        else {
            throw RouteError.badRequest(4_000_010, "Invalid extend reason code.")
        }
        guard let requestID = request["requestIdentifier"]?.stringValue, !requestID.isEmpty, requestID.utf8.count <= 128 else {
            throw RouteError.badRequest(4_000_011, "Invalid request identifier.")
        }
        guard Self.isDigits(identifier), let original = identifier else {
            throw RouteError.badRequest(4_000_008, "Invalid original transaction id.")
        }
        return try state.withLock { (state) throws(RouteError) -> HTTPResponse in
            if let answer = state.extensionAnswers[requestID] { return .json(answer) }
            var location: (Int, Int, Int)?
            for (c, customer) in state.customers.enumerated() {
                for (g, group) in customer.statuses.enumerated() {
                    if let i = group.lastTransactions.firstIndex(where: { $0.originalTransactionIdentifier == original }) {
                        location = (c, g, i)
                    }
                }
            }
            guard let (c, g, i) = location else {
                if state.customers.contains(where: { $0.transactions.contains { $0.purchase.transactionIdentifier == original } }) {
                    throw RouteError.badRequest(
                        4_000_187, "Invalid request. The transaction ID provided is not an original transaction ID.")
                }
                throw RouteError.notFound(4_040_005, "Original transaction id not found.")
            }
            let current = state.customers[c].statuses[g].lastTransactions[i]
            guard current.status == .active, let expiry = current.transaction.purchase.expirationDate else {
                throw RouteError(status: 403, errorCode: 4_030_004, message: "Forbidden - subscription state ineligible for extension.")
            }
            guard state.extensionCounts[original, default: 0] < 2 else {
                throw RouteError(
                    status: 403, errorCode: 4_030_005, message: "Forbidden - subscription has reached maximum extension count.")
            }
            let extended = state.extendSubscription(customer: c, group: g, item: i, from: expiry, byDays: Int(days))
            var members: [(String, JSONValue)] = [("originalTransactionId", .string(original))]
            if let webOrder = current.transaction.purchase.webOrderLineItemID {
                members.append(("webOrderLineItemId", .string(String(webOrder))))
            }
            members += [("success", .bool(true)), ("effectiveDate", .number(String(Self.milliseconds(extended))))]
            let answer = JSONValue.object(members).jsonBytes()
            state.extensionAnswers[requestID] = answer
            return .json(answer)
        }
    }
}
