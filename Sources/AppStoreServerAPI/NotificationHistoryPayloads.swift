import Foundation
import JSON
import JWS

/// One page of Get Notification History whose `signedPayload`s are NOT verified: for a caller that
/// verifies each one itself, with a notification receiver's own verifier, expectations and
/// validation time, so that one entry that fails is kept (a dead letter) instead of failing the
/// page (``AppStoreServerAPIClient/notificationHistoryPage(_:paginationToken:)`` fails the whole
/// page on one entry). Nothing here is trustworthy until verified.
public struct UnverifiedNotificationHistoryPage: Sendable {
    /// One entry: the token as the server sent it, and the attempts to send it.
    public struct Entry: Sendable {
        /// `signedPayload`, unverified.
        public let signedPayload: String
        /// `sendAttempts`, as the server wrote them.
        public let sendAttempts: [SendAttempt]
    }

    /// `paginationToken`: pass it to get the next page.
    public let paginationToken: String?
    /// `hasMore`.
    public let hasMore: Bool
    /// `notificationHistory`, in the server's order.
    public let entries: [Entry]
}

extension AppStoreServerAPIClient {
    /// Get Notification History, one page, the `signedPayload`s left unverified (see
    /// ``UnverifiedNotificationHistoryPage``): the request, its bearer token, retries, size limit
    /// and the shape of the answer are checked as for every call; the tokens are not. The caller
    /// must verify each token and check that it answers `request` (its `signedDate` in the range).
    public func unverifiedNotificationHistoryPage(
        _ request: NotificationHistoryRequest, paginationToken: String? = nil
    ) async throws(AppStoreServerAPIError) -> UnverifiedNotificationHistoryPage {
        let query = paginationToken.map { [("paginationToken", $0)] } ?? []
        let call = try Call(self, .notificationHistory, arguments: [], query: query, body: request.jsonBody)
        let response = try call.object(try await call.send())
        var entries: [UnverifiedNotificationHistoryPage.Entry] = []
        for (index, item) in try response.objects("notificationHistory").enumerated() {
            let path = "notificationHistory[\(index)]"
            let token = try item.string("signedPayload", required: true, at: path) ?? ""
            entries.append(.init(signedPayload: token, sendAttempts: try Self.sendAttempts(item, at: path)))
        }
        return UnverifiedNotificationHistoryPage(
            paginationToken: try response.string("paginationToken"), hasMore: try response.bool("hasMore", required: true) ?? false,
            entries: entries)
    }
}
