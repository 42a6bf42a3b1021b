import Foundation
import JWS
public import ReceiptVerification

extension VerificationCheck.Name {
    /// A verified answer of the App Store Server API is the answer to the request that was sent:
    /// the transaction asked for, statuses and history within the filters asked for, a TEST
    /// notification, notifications within the requested range. A genuine value that answers
    /// another question fails the call like a forged one
    /// (``AppStoreServerAPIError/Code/verificationFailed``, with this check as
    /// ``AppStoreServerAPIError/failedCheck``).
    public static let answerMatchesRequest = VerificationCheck.Name(rawValue: "answerMatchesRequest")
}

/// The checks that tie each verified answer to its request, as far as Apple documents a relation.
///
/// - Get Transaction Info: the transaction's `transactionId` is the requested id, or (Apple accepts
///   an original transaction id there) its `originalTransactionId` is.
/// - Get Transaction History: every transaction meets the request's filters (`purchaseDate` at or
///   after `startDate` and before `endDate`, `productId`, product type, subscription group,
///   ownership, revoked). Apple answers with the customer's whole history, not one subscription's.
/// - Get All Subscription Statuses: every status is among those asked for. Apple answers with all
///   of the customer's subscriptions, so no original transaction id is required.
/// - Get Test Notification Status: the notification is of type `TEST`.
/// - Get Notification History: every notification's `signedDate` lies in the requested range, and
///   its type and subtype are those asked for.
///
/// Get App Transaction Info accepts any of the customer's transaction ids, none of which an app
/// transaction names: nothing is checkable there beyond the bundle id and environment.
enum AnswerMatching {
    /// The error of an answer that does not match its request.
    static func mismatch(_ call: Call, at location: String?, _ reason: String) -> AppStoreServerAPIError {
        call.failure(
            .verificationFailed, at: location, failedCheck: VerificationCheck(name: .answerMatchesRequest, passed: false, reason: reason),
            "answerMatchesRequest: \(reason)")
    }

    static func quoted(_ text: String?) -> String { text.map(VerificationTextQuote.quoted) ?? "(none)" }

    /// Get Transaction Info answered with the transaction `requested` names.
    static func transaction(_ transaction: JWSTransaction, requested: String, at location: String, _ call: Call)
        throws(AppStoreServerAPIError)
    {
        guard transaction.transactionId == requested || transaction.originalTransactionId == requested else {
            throw mismatch(
                call, at: location,
                "transaction \(VerificationTextQuote.quoted(requested)) was requested, the answer is transaction \(quoted(transaction.transactionId)) (original \(quoted(transaction.originalTransactionId)))"
            )
        }
    }

    /// A transaction of Get Transaction History meets the request's filters.
    static func historyTransaction(
        _ transaction: JWSTransaction, request: TransactionHistoryRequest, at location: String, _ call: Call
    ) throws(AppStoreServerAPIError) {
        let purchased = transaction.purchaseDate?.millisecondsSince1970
        if let start = request.startDate {
            let bound = milliseconds(start)
            guard let purchased, purchased >= bound else {
                throw mismatch(
                    call, at: location, "purchaseDate \(shown(transaction.purchaseDate)) is before the requested startDate \(bound)")
            }
        }
        if let end = request.endDate {
            let bound = milliseconds(end)
            guard let purchased, purchased < bound else {
                throw mismatch(
                    call, at: location, "purchaseDate \(shown(transaction.purchaseDate)) is not before the requested endDate \(bound)")
            }
        }
        if !request.productIDs.isEmpty, !request.productIDs.contains(where: { $0 == transaction.productId }) {
            throw mismatch(call, at: location, "productId \(quoted(transaction.productId)) is not among the requested products")
        }
        if !request.productTypes.isEmpty {
            let type = transaction.type.flatMap(historyType)
            guard let type, request.productTypes.contains(type) else {
                throw mismatch(
                    call, at: location, "type \(quoted(transaction.type?.rawValue)) is not among the requested product types")
            }
        }
        if !request.subscriptionGroupIdentifiers.isEmpty,
            !request.subscriptionGroupIdentifiers.contains(where: { $0 == transaction.subscriptionGroupIdentifier })
        {
            throw mismatch(
                call, at: location,
                "subscriptionGroupIdentifier \(quoted(transaction.subscriptionGroupIdentifier)) is not among the requested groups")
        }
        if let ownership = request.inAppOwnershipType, transaction.inAppOwnershipType != ownership {
            throw mismatch(
                call, at: location,
                "inAppOwnershipType \(quoted(transaction.inAppOwnershipType?.rawValue)) is not the requested \(ownership.rawValue)")
        }
        if let revoked = request.revoked, revoked != (transaction.revocationDate != nil) {
            throw mismatch(
                call, at: location,
                revoked
                    ? "the transaction is not revoked, only revoked ones were requested"
                    : "the transaction is revoked, revoked ones were excluded")
        }
    }

    /// A status of Get All Subscription Statuses is among those asked for.
    static func status(_ status: SubscriptionStatus, wanted: [SubscriptionStatus], at location: String, _ call: Call)
        throws(AppStoreServerAPIError)
    {
        guard wanted.isEmpty || wanted.contains(status) else {
            let asked = wanted.map { String($0.rawValue) }.joined(separator: ", ")
            throw mismatch(call, at: location, "status \(status.rawValue) is not among the requested statuses (\(asked))")
        }
    }

    /// Get Test Notification Status answered with a TEST notification.
    static func testNotification(_ notification: NotificationPayload, at location: String, _ call: Call) throws(AppStoreServerAPIError) {
        guard notification.notificationType == .test else {
            throw mismatch(
                call, at: location,
                "the test notification status carries a \(quoted(notification.notificationType?.rawValue)) notification, not TEST")
        }
    }

    /// A notification of Get Notification History lies in the requested range and is of the
    /// requested type and subtype.
    static func historyNotification(
        _ notification: NotificationPayload, request: NotificationHistoryRequest, at location: String, _ call: Call
    ) throws(AppStoreServerAPIError) {
        let start = milliseconds(request.startDate)
        let end = milliseconds(request.endDate)
        guard let signed = notification.signedDate?.millisecondsSince1970, signed >= start, signed < end else {
            throw mismatch(
                call, at: location, "signedDate \(shown(notification.signedDate)) is not in the requested range [\(start), \(end))")
        }
        if let type = request.notificationType, notification.notificationType != type {
            throw mismatch(
                call, at: location,
                "notificationType \(quoted(notification.notificationType?.rawValue)) is not the requested \(type.rawValue)")
        }
        if let subtype = request.notificationSubtype, notification.subtype != subtype {
            throw mismatch(call, at: location, "subtype \(quoted(notification.subtype?.rawValue)) is not the requested \(subtype.rawValue)")
        }
    }

    /// Milliseconds since 1970, as the request sent them (rounded to the nearest).
    static func milliseconds(_ date: Date) -> Double { (date.timeIntervalSince1970 * 1000).rounded() }

    /// A date's text as signed, or `(none)`.
    static func shown(_ date: JWSDate?) -> String { date.map { VerificationTextQuote.quoted($0.text) } ?? "(none)" }

    /// The history filter value of a transaction's `type`.
    static func historyType(_ type: ProductType) -> HistoryProductType? {
        switch type {
        case .autoRenewableSubscription: .autoRenewable
        case .nonRenewingSubscription: .nonRenewable
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        default: nil
        }
    }
}
