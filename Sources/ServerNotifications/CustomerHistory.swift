public import JWS

/// A signed transaction or renewal info of one customer, from Get Transaction History or Get All
/// Subscription Statuses (a customer rebuilt with `notifications backfill --original-transaction-id`),
/// kept beside the notifications for the entitlement query: they are not notifications (no
/// `notificationUUID`, no notification signature), so they are not stored as such, but the
/// entitlement query reads them with the notifications of the same original transactions
/// (``NotificationStore/entitlements(appAccountToken:map:at:)``).
///
/// Only values that verified may be kept: the record holds the token exactly as signed, and
/// ``row`` decodes it again without checking anything.
public struct CustomerHistoryRecord: Sendable, Hashable {
    /// What the token is.
    public enum Kind: String, Sendable, Hashable {
        /// A signed transaction (`JWSTransaction`).
        case transaction
        /// A signed renewal info (`JWSRenewalInfo`).
        case renewalInfo
    }

    /// The record's key: kind, id and signed date (a transaction re-signed later, such as
    /// refunded, is a new record).
    public var key: String
    /// What the token is.
    public var kind: Kind
    /// Its `originalTransactionId`.
    public var originalTransactionId: String
    /// Its `appAccountToken`, as ``StoredNotification/accountToken(_:)`` writes it.
    public var appAccountToken: String?
    /// Its `signedDate`, in milliseconds since 1970.
    public var signedDate: Int64?
    /// The JWS exactly as signed.
    public var signedPayload: String

    /// Creates a record from stored columns.
    public init(
        key: String, kind: Kind, originalTransactionId: String, appAccountToken: String?, signedDate: Int64?, signedPayload: String
    ) {
        self.key = key
        self.kind = kind
        self.originalTransactionId = originalTransactionId
        self.appAccountToken = appAccountToken
        self.signedDate = signedDate
        self.signedPayload = signedPayload
    }

    /// The record of a verified transaction; nil without `transactionId` or `originalTransactionId`.
    public init?(verifiedTransaction transaction: JWSTransaction, signedPayload: String) {
        guard let id = transaction.transactionId, let original = transaction.originalTransactionId else { return nil }
        let signed = StoredNotification.milliseconds(transaction.signedDate)
        self.init(
            key: "transaction:\(id):\(signed.map(String.init) ?? "-")", kind: .transaction, originalTransactionId: original,
            appAccountToken: StoredNotification.accountToken(transaction.appAccountToken), signedDate: signed,
            signedPayload: signedPayload)
    }

    /// The record of a verified renewal info; nil without `originalTransactionId`.
    public init?(verifiedRenewalInfo renewal: JWSRenewalInfo, signedPayload: String) {
        guard let original = renewal.originalTransactionId else { return nil }
        let signed = StoredNotification.milliseconds(renewal.signedDate)
        self.init(
            key: "renewalInfo:\(original):\(signed.map(String.init) ?? "-")", kind: .renewalInfo, originalTransactionId: original,
            appAccountToken: StoredNotification.accountToken(renewal.appAccountToken), signedDate: signed, signedPayload: signedPayload)
    }

    /// The record as a row the entitlement query and ``SubscriptionState`` read: the transaction's
    /// or renewal info's columns, ``key`` as its `notificationUUID`, no notification type, the
    /// value's own signed date as the row's. Nil when the token cannot be decoded.
    public var row: StoredNotification? {
        guard let jws = try? CompactJWS(Array(signedPayload.utf8)) else { return nil }
        switch kind {
        case .transaction:
            guard let transaction = try? JWSTransaction(jsonPayload: jws.unverifiedPayload) else { return nil }
            let signed = StoredNotification.milliseconds(transaction.signedDate)
            return StoredNotification(
                notificationUUID: key, signedDate: signed, receivedDate: signed ?? 0, bundleId: transaction.bundleId,
                environment: transaction.environment?.rawValue, transactionId: transaction.transactionId,
                originalTransactionId: transaction.originalTransactionId, productId: transaction.productId,
                purchaseDate: StoredNotification.milliseconds(transaction.purchaseDate),
                expiresDate: StoredNotification.milliseconds(transaction.expiresDate),
                revocationDate: StoredNotification.milliseconds(transaction.revocationDate), transactionSignedDate: signed,
                appAccountToken: StoredNotification.accountToken(transaction.appAccountToken), productType: transaction.type?.rawValue,
                inAppOwnershipType: transaction.inAppOwnershipType?.rawValue, signedPayload: signedPayload)
        case .renewalInfo:
            guard let renewal = try? JWSRenewalInfo(jsonPayload: jws.unverifiedPayload) else { return nil }
            let signed = StoredNotification.milliseconds(renewal.signedDate)
            return StoredNotification(
                notificationUUID: key, signedDate: signed, receivedDate: signed ?? 0, environment: renewal.environment?.rawValue,
                originalTransactionId: renewal.originalTransactionId, productId: renewal.productId,
                autoRenewStatus: renewal.autoRenewStatus?.rawValue, isInBillingRetryPeriod: renewal.isInBillingRetryPeriod,
                gracePeriodExpiresDate: StoredNotification.milliseconds(renewal.gracePeriodExpiresDate), renewalSignedDate: signed,
                appAccountToken: StoredNotification.accountToken(renewal.appAccountToken), signedPayload: signedPayload)
        }
    }
}

/// Where customer history is kept: table `customer_history` of the notification store's own
/// database (created by the store's backfill schema step). Both built-in stores keep it.
public protocol CustomerHistoryStore: Sendable {
    /// Commits the records the store does not have yet (by ``CustomerHistoryRecord/key``) in one
    /// transaction; returns how many were new, after the commit is durable.
    func storeCustomerHistory(_ records: [CustomerHistoryRecord]) throws(NotificationStoreError) -> Int
    /// The records of these original transactions, and those carrying `appAccountToken`.
    func customerHistory(originalTransactionIds: [String], appAccountToken: String?) throws(NotificationStoreError)
        -> [CustomerHistoryRecord]
}

extension NotificationStores {
    /// The customer-history side of a store `open` returned (both built-in stores have one).
    public static func customerHistory(of store: any NotificationStore) -> (any CustomerHistoryStore)? {
        store as? any CustomerHistoryStore
    }
}

extension NotificationStore {
    /// The rows of the customer history (``CustomerHistoryStore``) of these original transactions
    /// and of `appAccountToken`, as rows the entitlement query reads; none when the store keeps
    /// no history.
    /// - Throws: ``NotificationStoreError/Code/schema`` for a stored token that cannot be decoded.
    public func customerHistoryRows(originalTransactionIds: [String], appAccountToken: String?) throws(NotificationStoreError)
        -> [StoredNotification]
    {
        guard let history = self as? any CustomerHistoryStore else { return [] }
        var originals = Set(originalTransactionIds)
        if appAccountToken != nil {
            // The token's records name their original transactions, whose other records (a
            // renewal info without the token) belong to the customer too.
            for record in try history.customerHistory(originalTransactionIds: [], appAccountToken: appAccountToken) {
                originals.insert(record.originalTransactionId)
            }
        }
        return try history.customerHistory(originalTransactionIds: originals.sorted(), appAccountToken: appAccountToken).map {
            (record) throws(NotificationStoreError) -> StoredNotification in
            guard let row = record.row else {
                throw NotificationStoreError(.schema, "the customer history record \(record.key) holds a token that cannot be decoded")
            }
            return row
        }
    }
}
