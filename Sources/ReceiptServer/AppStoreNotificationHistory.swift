public import AppStoreServerAPI
public import Foundation
public import ServerNotifications

/// Get Notification History through the App Store Server API client, as a backfill's
/// `NotificationHistorySource`: each page is read with
/// `AppStoreServerAPIClient.unverifiedNotificationHistoryPage(_:paginationToken:)`, so that the
/// backfill verifies every entry with the receiver's own configuration and keeps what fails as a
/// dead letter (the client's verifying call fails a whole page on one entry). The request's
/// other filters (type, transaction, only failures) are left out: a backfill wants every
/// notification of the range.
public struct AppStoreNotificationHistory: NotificationHistorySource {
    /// The client (its key, bundle id, environment, timeouts, retries and response size limit).
    public let client: AppStoreServerAPIClient

    /// Creates a source.
    public init(client: AppStoreServerAPIClient) { self.client = client }

    /// One page of Get Notification History for [`start`, `end`).
    public func page(start: Date, end: Date, paginationToken: String?) async throws(NotificationStoreError) -> NotificationHistorySourcePage
    {
        do throws(AppStoreServerAPIError) {
            let page = try await client.unverifiedNotificationHistoryPage(
                NotificationHistoryRequest(startDate: start, endDate: end), paginationToken: paginationToken)
            return NotificationHistorySourcePage(
                signedPayloads: page.entries.map(\.signedPayload), paginationToken: page.paginationToken, hasMore: page.hasMore)
        } catch {
            throw NotificationStoreError(.historyUnavailable, "Get Notification History: \(error)")
        }
    }
}
