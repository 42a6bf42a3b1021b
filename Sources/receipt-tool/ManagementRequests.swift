import AppStoreServerAPI
import Foundation
import Internals
import JSON
import JWS
import ReceiptVerification

/// The `api` requests for the endpoints Apple added since 2023: app transactions, consumption
/// information (v2), app account tokens, finishing transactions and the mass renewal-date
/// extension. Every value was checked by ``APICommand`` before the client was made.
enum ManagementRequests {
    static func run(
        _ request: String, operands: [String], client: AppStoreServerAPIClient, json: Bool, appAccountToken: UUID?,
        consumption: ConsumptionRequestV2?, massExtension: MassExtendRenewalDateRequest?
    ) throws -> [String] {
        let identifier = operands.first ?? ""
        switch request {
        case "app-transaction":
            let signed = try APICommand.blocking { try await client.appTransactionInfo(transactionID: identifier) }
            return [appTransactionLine(signed, json: json)]
        case "set-app-account-token":
            guard let appAccountToken else { throw UsageError("set-app-account-token needs a UUID") }
            try APICommand.blocking { try await client.setAppAccountToken(originalTransactionID: identifier, appAccountToken) }
            let token = appAccountToken.uuidString.lowercased()
            if json {
                return [
                    object([("originalTransactionId", .string(identifier)), ("appAccountToken", .string(token)), ("set", .bool(true))])
                ]
            }
            return ["App account token \(token) set for original transaction \(identifier)"]
        case "consumption":
            guard let consumption else { throw UsageError("consumption needs --body <file.json>") }
            try APICommand.blocking { try await client.sendConsumptionInformation(transactionID: identifier, consumption) }
            if json { return [object([("transactionId", .string(identifier)), ("accepted", .bool(true))])] }
            return ["Consumption information for transaction \(identifier) accepted"]
        case "finish":
            try APICommand.blocking { try await client.finishTransaction(transactionID: identifier) }
            if json { return [object([("transactionId", .string(identifier)), ("finished", .bool(true))])] }
            return ["Transaction \(identifier) finished"]
        case "extend-all":
            guard let massExtension else { throw UsageError("extend-all needs --body <file.json>") }
            let answer = try APICommand.blocking { try await client.extendRenewalDateForAllActiveSubscribers(massExtension) }
            if json { return [object([("requestIdentifier", .string(answer.requestIdentifier))])] }
            return ["Renewal-date extension \(quoted(answer.requestIdentifier)) for \(massExtension.productId) accepted"]
        case "extend-all-status":
            let product = identifier
            let requestID = operands.count > 1 ? operands[1] : ""
            let status = try APICommand.blocking {
                try await client.renewalDateExtensionStatus(productID: product, requestIdentifier: requestID)
            }
            var members: [(String, JSONValue)] = [
                ("requestIdentifier", .string(status.requestIdentifier)), ("complete", .bool(status.complete)),
            ]
            if let date = status.completeDate { members.append(("completeDate", .number(date.text))) }
            if let count = status.succeededCount { members.append(("succeededCount", .number(String(count)))) }
            if let count = status.failedCount { members.append(("failedCount", .number(String(count)))) }
            if json { return [object(members)] }
            var out = ["Renewal-date extension \(quoted(status.requestIdentifier)): \(status.complete ? "complete" : "in progress")"]
            if let date = status.completeDate { out.append(TextLayout.line("completeDate", JWSDump.rfc3339(date))) }
            if let count = status.succeededCount { out.append(TextLayout.line("succeededCount", String(count))) }
            if let count = status.failedCount { out.append(TextLayout.line("failedCount", String(count))) }
            return [out.joined(separator: "\n")]
        default:
            throw UsageError("unknown request '\(quoted(request))'")
        }
    }

    static func object(_ members: [(String, JSONValue)]) -> String { JSONValue.object(members).jsonText(indent: 0) }

    static func appTransactionLine(_ signed: SignedJWS<AppTransaction>, json: Bool) -> String {
        let payload = APICommand.decoded(signed.value.jsonPayload)
        if json { return payload.jsonText(indent: 0) }
        var out = ["App transaction \(signed.value.appTransactionId ?? "?") (verified)"]
        JWSDump.fields(payload, path: "", nested: [:], into: &out, indent: 2)
        return out.joined(separator: "\n")
    }

    /// `text` in double quotes by the one terminal rule (`TerminalEscaping.quoted`), at most 80
    /// characters shown: how an input string reaches the terminal.
    static func quoted(_ text: String) -> String {
        TerminalEscaping.quoted(text.count > 80 ? String(text.prefix(80)) + "…" : text)
    }
}
