import Foundation
import Internals
public import JSON
public import JWS
public import ReceiptVerification

/// The answer of an Advanced Commerce server call: the transaction and (for the subscription
/// calls) the renewal info after the change, both verified.
public struct AdvancedCommerceResult: Sendable {
    /// `signedTransactionInfo`, verified.
    public let transaction: SignedJWS<JWSTransaction>
    /// `signedRenewalInfo`, verified (nil for Request Transaction Refund, which has none).
    public let renewalInfo: SignedJWS<JWSRenewalInfo>?
}

extension AppStoreServerAPIClient {
    /// Sends an Advanced Commerce server call for `transactionID` (the body says which call). The
    /// body is validated first (``AdvancedCommerceRequest/validate()``); every JWS of the answer is
    /// verified, and the transaction and renewal info must belong to one subscription.
    public func advancedCommerce(
        transactionID: String, _ request: AdvancedCommerceRequest
    ) async throws(AppStoreServerAPIError) -> AdvancedCommerceResult {
        try refuse(request.operation) { () throws(RequestBodyError) in try request.validate() }
        let call = try Call(self, request.operation, arguments: [transactionID], body: request.jsonBody)
        let response = try call.object(try await call.send())
        let transactionToken = try response.string("signedTransactionInfo", required: true) ?? ""
        let transaction = try verifier.verify(transactionToken, as: JWSTransaction.self, at: "signedTransactionInfo", call)
        guard request.operation != .advancedCommerceRequestRefund else {
            return AdvancedCommerceResult(transaction: transaction, renewalInfo: nil)
        }
        let renewalToken = try response.string("signedRenewalInfo", required: true) ?? ""
        let renewal = try verifier.verify(renewalToken, as: JWSRenewalInfo.self, at: "signedRenewalInfo", call)
        guard renewal.value.originalTransactionId == transaction.value.originalTransactionId else {
            throw call.failure(
                .verificationFailed, at: "signedRenewalInfo",
                "the renewal info is for original transaction \(renewal.value.originalTransactionId ?? "none"), the transaction for \(transaction.value.originalTransactionId ?? "none")"
            )
        }
        return AdvancedCommerceResult(transaction: transaction, renewalInfo: renewal)
    }
}

extension JWSSignatureCreator {
    /// `advanced-commerce-api`.
    public static let advancedCommerceAudience = "advanced-commerce-api"

    /// An Advanced Commerce in-app request, signed for StoreKit: an ES256 JWT with the common
    /// claims (`iss`, `iat`, `aud` `advanced-commerce-api`, `bid`, `nonce`) and `request`, the
    /// standard base64 of the request's JSON (`operation`, `version`, `requestInfo`, … as Apple
    /// defines each in-app request).
    /// - Throws: ``AppStoreServerAPIError/Code/invalidRequest`` when the request is not a JSON
    ///   object with a UUID `requestInfo.requestReferenceId`, ``AppStoreServerAPIError/Code/invalidConfiguration``
    ///   when signing fails.
    public func advancedCommerceInAppRequest(_ request: JSONValue) throws(AppStoreServerAPIError) -> String {
        guard case .object = request else {
            throw AppStoreServerAPIError(code: .invalidRequest, reason: "an in-app request is a JSON object, not \(request.kindName)")
        }
        do throws(RequestBodyError) {
            guard request["requestInfo"] != nil else { throw RequestBodyError(field: "requestInfo", reason: "is required") }
            try AdvancedCommerceValidator.check(request, path: "")
        } catch {
            throw AppStoreServerAPIError(code: .invalidRequest, location: error.field, reason: "\(error)")
        }
        return try sign(audience: Self.advancedCommerceAudience, [("request", .string(Base64.encode(request.jsonBytes())))])
    }
}
