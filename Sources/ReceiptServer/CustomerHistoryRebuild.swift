public import AppStoreServerAPI
import JWS
import ReceiptVerification
public import ServerNotifications

/// Rebuilds one customer from the App Store Server API: every transaction of Get Transaction
/// History and every subscription's latest transaction and renewal info of Get All Subscription
/// Statuses, each verified by the client (its anchors, bundle id and environment; one value that
/// fails fails the call, and nothing is stored), kept as `CustomerHistoryRecord`s that the
/// entitlement query reads beside the notifications. Records already stored (same value, same
/// signed date) are not stored twice.
public struct CustomerHistoryRebuild: Sendable {
    /// The API client.
    public let client: AppStoreServerAPIClient
    /// Where the records go (the notification store).
    public let store: any CustomerHistoryStore

    /// Creates a rebuild.
    public init(client: AppStoreServerAPIClient, store: any CustomerHistoryStore) {
        self.client = client
        self.store = store
    }

    /// What a rebuild stored.
    public struct Report: Sendable {
        /// Every record read (once each), transactions in history order, then the statuses'
        /// renewal infos.
        public var records: [CustomerHistoryRecord]
        /// How many of them were new to the store.
        public var newRecords: Int
    }

    /// Reads and stores the history of the customer of `transactionId` (any of the customer's
    /// transaction ids; Apple answers with the customer's whole history).
    /// - Throws: `NotificationStoreError`: `historyUnavailable` when
    ///   a call failed or a value did not verify, or the store's error.
    public func run(transactionId: String) async throws(NotificationStoreError) -> Report {
        let history: TransactionHistory
        let statuses: SubscriptionStatuses
        do throws(AppStoreServerAPIError) {
            history = try await client.transactionHistory(transactionID: transactionId)
            statuses = try await client.subscriptionStatuses(transactionID: transactionId)
        } catch {
            throw NotificationStoreError(.historyUnavailable, "\(error)")
        }
        var records: [CustomerHistoryRecord] = []
        for signed in history.transactions {
            guard let record = CustomerHistoryRecord(verifiedTransaction: signed.value, signedPayload: signed.jws.text) else {
                throw NotificationStoreError(
                    .historyUnavailable, "a transaction of the history has no transactionId or originalTransactionId")
            }
            records.append(record)
        }
        for last in statuses.groups.flatMap(\.lastTransactions) {
            if let record = CustomerHistoryRecord(verifiedTransaction: last.transaction.value, signedPayload: last.transaction.jws.text) {
                records.append(record)
            }
            guard let renewal = CustomerHistoryRecord(verifiedRenewalInfo: last.renewalInfo.value, signedPayload: last.renewalInfo.jws.text)
            else {
                throw NotificationStoreError(.historyUnavailable, "a renewal info of the statuses has no originalTransactionId")
            }
            records.append(renewal)
        }
        var keys: Set<String> = []
        records = records.filter { keys.insert($0.key).inserted }
        let added = try store.storeCustomerHistory(records)
        return Report(records: records, newRecords: added)
    }
}
