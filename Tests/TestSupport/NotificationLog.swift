package import Foundation
import RMStore

/// Records every notification of one store, in order, through the `StoreObserver` protocol, in a
/// timeline that tests can add their own events to (callbacks, verifier steps).
///
/// Timeline entries are the notification's short name (`PaymentTransactionFinished`); download
/// updates and completions say whether the download was self-hosted or store-hosted
/// (`DownloadFinished(hosted)`).
@MainActor
package final class NotificationLog: StoreObserver {
    /// Every notification, in order.
    package private(set) var notifications: [Notification] = []
    /// The names of ``notifications``.
    package var names: [Notification.Name] { notifications.map(\.name) }
    /// Notifications (by short name) and other events, in one order.
    package var timeline: [String] = []

    /// An empty log.
    package init() {}

    /// The first notification called `name`.
    package func first(_ name: Notification.Name) -> Notification? { notifications.first { $0.name == name } }
    /// Every notification called `name`.
    package func all(_ name: Notification.Name) -> [Notification] { notifications.filter { $0.name == name } }

    /// Forgets everything recorded so far.
    package func clear() {
        notifications = []
        timeline = []
    }

    /// Adds an event of the test's own to the timeline.
    package func note(_ event: String) {
        timeline.append(event)
    }

    private func record(_ notification: Notification) {
        notifications.append(notification)
        var entry = notification.name.short
        if notification.name == .rmDownloadUpdated || notification.name == .rmDownloadFinished {
            entry += notification.rm.download == nil ? "(self-hosted)" : "(hosted)"
        }
        timeline.append(entry)
    }

    package func storeProductsRequestFinished(_ notification: Notification) { record(notification) }
    package func storeProductsRequestFailed(_ notification: Notification) { record(notification) }
    package func storePaymentTransactionFinished(_ notification: Notification) { record(notification) }
    package func storePaymentTransactionFailed(_ notification: Notification) { record(notification) }
    package func storePaymentTransactionDeferred(_ notification: Notification) { record(notification) }
    package func storeRestoreTransactionsFinished(_ notification: Notification) { record(notification) }
    package func storeRestoreTransactionsFailed(_ notification: Notification) { record(notification) }
    package func storeRefreshReceiptFinished(_ notification: Notification) { record(notification) }
    package func storeRefreshReceiptFailed(_ notification: Notification) { record(notification) }
    package func storeDownloadUpdated(_ notification: Notification) { record(notification) }
    package func storeDownloadFinished(_ notification: Notification) { record(notification) }
    package func storeDownloadFailed(_ notification: Notification) { record(notification) }
    package func storeDownloadCanceled(_ notification: Notification) { record(notification) }
    package func storeDownloadPaused(_ notification: Notification) { record(notification) }
}

extension Notification.Name {
    /// The name without RMStore's `RMSK` prefix (`PaymentTransactionFinished`).
    package var short: String { rawValue.replacingOccurrences(of: "RMSK", with: "") }
}
