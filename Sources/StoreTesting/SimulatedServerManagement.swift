import AppStoreServerAPI
import Foundation
import HTTPServer
import Internals
import JSON
import JWS
import RMStore
import ReceiptSigning

// The endpoints Apple added since 2023 (Get App Transaction Info, Send Consumption Information
// v2, Set App Account Token, Finish Transaction, the mass renewal-date extension and its status)
// and the per-endpoint rate limits, answered from the simulated App Store's state. Request bodies
// are decoded and validated by the client's own body types, so the simulator refuses exactly
// what the client refuses before sending.

extension SimulatedServerHandler {
    // MARK: - Rate limits

    /// HTTP 429 when `endpoint` has no request left in its bucket (a burst of one second's
    /// requests, refilled at the configured rate); nil when the request may go on.
    func limited(_ endpoint: Endpoint) -> HTTPResponse? {
        guard let rate = configuration.rateLimits.requestsPerSecond[endpoint], rate.isFinite, rate > 0 else { return nil }
        let capacity = max(1, rate)
        let now = ContinuousClock.now
        let wait: Double? = state.withLock { state in
            var bucket = state.buckets[endpoint] ?? (tokens: capacity, updated: now)
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(capacity, bucket.tokens + seconds * rate)
            bucket.updated = now
            defer { state.buckets[endpoint] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return (1 - bucket.tokens) / rate
        }
        guard let wait else { return nil }
        var response = RouteError(status: 429, errorCode: 4_290_000, message: "Rate limit exceeded.").response
        let retryAt = Date().addingTimeInterval(wait)
        response.headers.append(HTTPHeader("Retry-After", String(Self.milliseconds(retryAt))))
        return response
    }

    /// Apple's error code for a request body field the shared body types refused.
    static func bodyError(_ error: RequestBodyError) -> RouteError {
        let code: Int64 =
            switch error.field {
            case "customerConsented": 4_000_035
            case "deliveryStatus": 4_000_036
            case "sampleContentProvided": 4_000_041
            case "appAccountToken": 4_000_183
            case "extendByDays": 4_000_009
            case "extendReasonCode": 4_000_010
            case "requestIdentifier": 4_000_011
            case "storefrontCountryCodes": 4_000_028
            case "productId": 4_000_023
            default: 4_000_000
            }
        return RouteError.badRequest(code, "Invalid request. \(error)")
    }

    // MARK: - App transactions

    /// Eight digits from SHA-256 of the customer's name: the customer's `appTransactionId`.
    static func appTransactionIdentifier(_ customer: String) -> String {
        let digest = SHA256.hash(Array(("app-transaction:" + customer).utf8))
        let value = digest.prefix(6).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return String(700_000_000_000 + value % 100_000_000_000)
    }

    func appTransactionInfo(_ identifier: String?, _ signer: inout ResponseSigner) throws -> HTTPResponse {
        guard Self.isDigits(identifier) else { throw RouteError.invalidTransactionID }
        let customer = state.withLock { state in
            state.customers.first { $0.transactions.contains { $0.purchase.transactionIdentifier == identifier } }
        }
        guard let customer else { throw RouteError.transactionNotFound }
        let now = Self.milliseconds(clock.now)
        let firstPurchase = customer.transactions.map { Self.milliseconds($0.purchase.originalPurchaseDate) }.min() ?? now
        var members: [(String, JSONValue)] = [("receiptType", .string(environmentName))]
        if let appAppleId = configuration.appAppleId { members.append(("appAppleId", .number(String(appAppleId)))) }
        members += [
            ("bundleId", .string(configuration.bundleIdentifier)), ("applicationVersion", .string("1")),
            ("receiptCreationDate", .number(String(now))), ("requestDate", .number(String(now))),
            ("originalPurchaseDate", .number(String(firstPurchase))), ("originalApplicationVersion", .string("1")),
            ("appTransactionId", .string(Self.appTransactionIdentifier(customer.name))), ("originalPlatform", .string("iOS")),
        ]
        let token = try signer.sign(JSONValue.object(members).jsonBytes())
        return Self.ok([("signedAppTransactionInfo", .string(token))])
    }

    // MARK: - Consumption (v2), app account tokens, finishing

    func consumptionV2(_ identifier: String?, _ body: [UInt8]) throws -> HTTPResponse {
        let transactions = try customerSnapshot(of: identifier).transactions
        let found = try requireTransaction(identifier, in: transactions)
        let request: ConsumptionRequestV2
        do throws(RequestBodyError) {
            request = try ConsumptionRequestV2(json: body)
        } catch {
            throw Self.bodyError(error)
        }
        if found.purchase.productType == .autoRenewableSubscription, request.consumptionPercentage != nil {
            throw RouteError.badRequest(
                4_000_000, "Invalid request. Don't send consumptionPercentage for an auto-renewable subscription.")
        }
        let id = identifier ?? ""
        state.withLock { $0.consumptionV2.append((transactionIdentifier: id, body: request)) }
        return HTTPResponse(status: 202)
    }

    func setAppAccountToken(_ identifier: String?, _ body: [UInt8]) throws -> HTTPResponse {
        guard Self.isDigits(identifier), let original = identifier else {
            throw RouteError.badRequest(4_000_008, "Invalid original transaction id.")
        }
        let request: UpdateAppAccountTokenRequest
        do throws(RequestBodyError) {
            request = try UpdateAppAccountTokenRequest(json: body)
        } catch {
            throw Self.bodyError(error)
        }
        try state.withLock { (state) throws(RouteError) in
            let all = state.customers.flatMap(\.transactions)
            guard all.contains(where: { $0.purchase.originalTransactionIdentifier == original }) else {
                if all.contains(where: { $0.purchase.transactionIdentifier == original }) {
                    throw RouteError.badRequest(
                        4_000_187, "Invalid request. The transaction ID provided is not an original transaction ID.")
                }
                throw RouteError.notFound(4_040_005, "Original transaction id not found.")
            }
            state.appAccountTokens[original] = request.appAccountToken
        }
        return HTTPResponse(status: 200)
    }

    func finishTransaction(_ identifier: String?) throws -> HTTPResponse {
        try requireTransaction(identifier, in: try customerSnapshot(of: identifier).transactions)
        let id = identifier ?? ""
        state.withLock { $0.finished.append(id) }
        return HTTPResponse(status: 200)
    }

    // MARK: - Mass renewal-date extension

    func massExtend(_ body: [UInt8]) throws -> HTTPResponse {
        let request: MassExtendRenewalDateRequest
        do throws(RequestBodyError) {
            request = try MassExtendRenewalDateRequest(json: body)
        } catch {
            throw Self.bodyError(error)
        }
        let answer = Self.ok([("requestIdentifier", .string(request.requestIdentifier))])
        let storefront = issuer.storefront
        let now = clock.now
        return try state.withLock { (state) throws(RouteError) -> HTTPResponse in
            if state.massExtensions[request.requestIdentifier] != nil { return answer }
            let isSubscription = state.customers.contains { customer in
                customer.transactions.contains {
                    $0.purchase.productIdentifier == request.productId && $0.purchase.productType == .autoRenewableSubscription
                }
            }
            guard isSubscription else { throw RouteError.badRequest(4_000_023, "Invalid product id.") }
            let inStorefront = request.storefrontCountryCodes.map { $0.contains(storefront) } ?? true
            var succeeded = 0
            var failed = 0
            for c in state.customers.indices {
                for g in state.customers[c].statuses.indices {
                    for i in state.customers[c].statuses[g].lastTransactions.indices {
                        let item = state.customers[c].statuses[g].lastTransactions[i]
                        guard item.transaction.purchase.productIdentifier == request.productId, item.status == .active, inStorefront
                        else { continue }
                        let original = item.originalTransactionIdentifier
                        guard let expiry = item.transaction.purchase.expirationDate, state.extensionCounts[original, default: 0] < 2 else {
                            failed += 1
                            continue
                        }
                        state.extendSubscription(customer: c, group: g, item: i, from: expiry, byDays: request.extendByDays)
                        succeeded += 1
                    }
                }
            }
            state.massExtensions[request.requestIdentifier] = MassExtension(
                productId: request.productId, completeDate: now, succeeded: succeeded, failed: failed)
            return answer
        }
    }

    func massExtensionStatus(_ arguments: [String]) throws -> HTTPResponse {
        guard arguments.count == 2 else { throw RouteError.badRequest(4_000_000, "Invalid request.") }
        let (product, identifier) = (arguments[0], arguments[1])
        guard !identifier.isEmpty, identifier.count <= 128 else { throw RouteError.badRequest(4_000_011, "Invalid request identifier.") }
        guard let found = state.withLock({ $0.massExtensions[identifier] }), found.productId == product else {
            throw RouteError.notFound(4_040_009, "Status request not found.")
        }
        return Self.ok([
            ("requestIdentifier", .string(identifier)), ("complete", .bool(true)),
            ("completeDate", .number(String(Self.milliseconds(found.completeDate)))), ("succeededCount", .number(String(found.succeeded))),
            ("failedCount", .number(String(found.failed))),
        ])
    }
}
