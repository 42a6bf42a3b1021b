public import AppStoreServerAPI
import Foundation
import HTTPServer
import Internals
import JSON
import JWS

// The Advanced Commerce API's six server calls in the simulated App Store Server: the body is
// validated by the client's own AdvancedCommerceRequest, the transaction id must belong to a
// customer (any transaction of the purchase), and the answer carries that purchase's latest
// transaction and, for the subscription calls, its renewal info, signed now. Accepted bodies are
// kept for tests (``SimulatedAppStoreServer/advancedCommerceRequests``); the simulated store's
// history itself does not change.

extension SimulatedAppStoreServer {
    /// The Advanced Commerce calls accepted, in order: the call, the transaction id and the body.
    public var advancedCommerceRequests: [(operation: Endpoint, transactionIdentifier: String, body: AdvancedCommerceRequest)] {
        handler.state.withLock { $0.advancedCommerce }
    }
}

extension SimulatedServerHandler {
    func advancedCommerce(_ route: Route, _ request: HTTPRequest, _ signer: inout ResponseSigner) throws -> HTTPResponse {
        let (transactions, statuses) = try customerSnapshot(of: route.parameter)
        let found = try requireTransaction(route.parameter, in: transactions)
        let body: AdvancedCommerceRequest
        do throws(RequestBodyError) {
            body = try AdvancedCommerceRequest(operation: route.endpoint, json: request.body)
        } catch {
            throw RouteError.badRequest(4_000_000, "Invalid request. \(error)")
        }
        let original = found.purchase.originalTransactionIdentifier
        let latest = transactions.last { $0.purchase.originalTransactionIdentifier == original } ?? found
        var members: [(String, JSONValue)] = []
        if route.endpoint != .advancedCommerceRequestRefund {
            let item = statuses.lazy.flatMap(\.lastTransactions).first { $0.originalTransactionIdentifier == original }
            guard let item else {
                throw RouteError.badRequest(4_000_000, "Invalid request. The transaction is not an auto-renewable subscription.")
            }
            members.append(("signedRenewalInfo", .string(try signed(item.renewalInfo, &signer))))
            members.append(("signedTransactionInfo", .string(try signed(item.transaction, &signer))))
        } else {
            members.append(("signedTransactionInfo", .string(try signed(latest, &signer))))
        }
        let id = route.parameter ?? ""
        state.withLock { $0.advancedCommerce.append((operation: route.endpoint, transactionIdentifier: id, body: body)) }
        return Self.ok(members)
    }
}
