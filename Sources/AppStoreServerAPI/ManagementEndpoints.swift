public import Foundation
import JSON
public import JWS
public import ReceiptVerification

extension Call {
    /// A call to `endpoint` with its path built from the wire table (``AppStoreServerEndpoint/pathTemplate``)
    /// and `arguments` in the parameters' places.
    init(
        _ client: AppStoreServerAPIClient, _ endpoint: AppStoreServerEndpoint, arguments: [String], query: [(String, String)] = [],
        body: [UInt8]? = nil
    ) throws(AppStoreServerAPIError) {
        guard let segments = endpoint.segments(arguments) else {
            throw AppStoreServerAPIError(
                code: .invalidRequest, endpoint: endpoint,
                reason: "\(endpoint.pathTemplate) takes \(endpoint.parameterNames.count) identifiers, not \(arguments.count)")
        }
        try self.init(client, endpoint, endpoint.method, segments, query: query, body: body)
    }
}

extension AppStoreServerAPIClient {
    /// A body that breaks Apple's rules, as this client's error (nothing is sent).
    static func invalidBody(_ error: RequestBodyError, _ endpoint: AppStoreServerEndpoint) -> AppStoreServerAPIError {
        AppStoreServerAPIError(code: .invalidRequest, endpoint: endpoint, location: error.field, reason: "\(error)")
    }

    /// Get App Transaction Info: the customer's app transaction, verified. `transactionID` may be
    /// any transaction id of the customer (Apple's `anyTransactionId`). Apple answers
    /// `appTransactionDoesNotExist` (4040019) when the customer has none.
    public func appTransactionInfo(transactionID: String) async throws(AppStoreServerAPIError) -> SignedJWS<AppTransaction> {
        let call = try Call(self, .appTransactionInfo, arguments: [transactionID])
        let response = try call.object(try await call.send())
        let token = try response.string("signedAppTransactionInfo", required: true) ?? ""
        return try verifier.verify(token, as: AppTransaction.self, at: "signedAppTransactionInfo", call)
    }

    /// Send Consumption Information (v2; Apple answers 202 Accepted). The body is validated
    /// first (``ConsumptionRequestV2/validate()``): a value Apple would refuse, such as a
    /// `consumptionPercentage` of 100,001, is refused without a request.
    public func sendConsumptionInformation(transactionID: String, _ request: ConsumptionRequestV2) async throws(AppStoreServerAPIError) {
        do throws(RequestBodyError) {
            try request.validate()
        } catch {
            throw Self.invalidBody(error, .sendConsumptionInformationV2)
        }
        let call = try Call(self, .sendConsumptionInformationV2, arguments: [transactionID], body: request.jsonBody)
        _ = try await call.send()
    }

    /// Set App Account Token: links `appAccountToken` to every transaction of the purchase
    /// `originalTransactionID` (Apple answers 200 with no body).
    public func setAppAccountToken(originalTransactionID: String, _ appAccountToken: UUID) async throws(AppStoreServerAPIError) {
        let body = UpdateAppAccountTokenRequest(appAccountToken: appAccountToken).jsonBody
        let call = try Call(self, .setAppAccountToken, arguments: [originalTransactionID], body: body)
        _ = try await call.send()
    }

    /// Finish Transaction: tells the App Store the server finished delivering the purchase
    /// `transactionID` (for apps that do not call `Transaction.finish()` themselves).
    public func finishTransaction(transactionID: String) async throws(AppStoreServerAPIError) {
        let call = try Call(self, .finishTransaction, arguments: [transactionID])
        _ = try await call.send()
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers. The body is validated first;
    /// the answer must name the request's `requestIdentifier`.
    public func extendRenewalDateForAllActiveSubscribers(
        _ request: MassExtendRenewalDateRequest
    ) async throws(AppStoreServerAPIError) -> MassExtendRenewalDateResponse {
        do throws(RequestBodyError) {
            try request.validate()
        } catch {
            throw Self.invalidBody(error, .extendRenewalDateForAllActiveSubscribers)
        }
        let call = try Call(self, .extendRenewalDateForAllActiveSubscribers, arguments: [], body: request.jsonBody)
        let response = try call.object(try await call.send())
        let identifier = try response.string("requestIdentifier", required: true) ?? ""
        guard identifier == request.requestIdentifier else {
            throw call.failure(
                .invalidResponse, at: "requestIdentifier",
                "the answer is for request \(VerificationTextQuote.quoted(identifier)), not \(VerificationTextQuote.quoted(request.requestIdentifier))"
            )
        }
        return MassExtendRenewalDateResponse(requestIdentifier: identifier)
    }

    /// Get Status of Subscription Renewal Date Extensions: how far the request
    /// `requestIdentifier` for `productID` has got. The answer must name that request.
    public func renewalDateExtensionStatus(
        productID: String, requestIdentifier: String
    ) async throws(AppStoreServerAPIError) -> MassExtendRenewalDateStatus {
        let call = try Call(self, .renewalDateExtensionStatus, arguments: [productID, requestIdentifier])
        let response = try call.object(try await call.send())
        let identifier = try response.string("requestIdentifier", required: true) ?? ""
        guard identifier == requestIdentifier else {
            throw call.failure(
                .invalidResponse, at: "requestIdentifier",
                "the answer is for request \(VerificationTextQuote.quoted(identifier)), not \(VerificationTextQuote.quoted(requestIdentifier))"
            )
        }
        return MassExtendRenewalDateStatus(
            requestIdentifier: identifier, complete: try response.bool("complete", required: true) ?? false,
            completeDate: try response.int64("completeDate").map { JWSDate(milliseconds: $0) },
            succeededCount: try response.int64("succeededCount"), failedCount: try response.int64("failedCount"))
    }
}
