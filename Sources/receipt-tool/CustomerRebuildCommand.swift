import AppStoreServerAPI
import Foundation
import Internals
import JSON
import ReceiptServer
import ReceiptVerification
import ServerNotifications

/// `receipt-tool notifications backfill --original-transaction-id ID`: one customer rebuilt from
/// Get Transaction History and Get All Subscription Statuses (see `BackfillCommand`).
enum CustomerRebuildCommand {
    static let help = """
        backfill --original-transaction-id <id> --db <location>|--config <file> [API options]
                  Rebuilds one customer: every transaction of Get Transaction History and each
                  subscription's latest transaction and renewal info of Get All Subscription
                  Statuses, each verified, are kept in the store's customer_history table (they
                  are not notifications), which `entitlements` reads beside the notifications.
                  Prints one line per value (kind, id, product, new or already stored); --json:
                  one object per line, then a summary.
        """

    static func run(
        original: String, client: AppStoreServerAPIClient, location: String, json: Bool
    ) throws -> Int32 {
        let store = try NotificationsCommand.open(location, options: NotificationStoreOptions(create: true))
        defer { store.close() }
        guard let history = NotificationStores.customerHistory(of: store) else {
            throw ToolFailure("the store \(NotificationStores.displayed(location)) keeps no customer history")
        }
        let before = try existingKeys(history, original: original)
        let rebuild = CustomerHistoryRebuild(client: client, store: history)
        let outcome: Result<CustomerHistoryRebuild.Report, NotificationStoreError> = try APICommand.blocking {
            do throws(NotificationStoreError) {
                return .success(try await rebuild.run(transactionId: original))
            } catch {
                return .failure(error)
            }
        }
        let report: CustomerHistoryRebuild.Report
        switch outcome {
        case .success(let value): report = value
        case .failure(let error):
            printError(
                "rebuild of \(ManagementRequests.quoted(original)) failed, nothing stored: \(TerminalEscaping.escaped(error.description))")
            return ExitStatus.failure
        }
        for record in report.records {
            let row = record.row
            let isNew = !before.contains(record.key)
            if json {
                var writer = JSONWriter(indent: 0)
                writer.beginObject()
                writer.string("event", "stored")
                writer.string("kind", record.kind.rawValue)
                NotificationsCommand.string(&writer, "transactionId", row?.transactionId)
                writer.string("originalTransactionId", record.originalTransactionId)
                NotificationsCommand.string(&writer, "productId", row?.productId)
                NotificationsCommand.integer(&writer, "signedDate", record.signedDate)
                writer.bool("new", isNew)
                writer.endObject()
                printOut(writer.text)
            } else {
                var line =
                    record.kind == .transaction ? "transaction \(ManagementRequests.quoted(row?.transactionId ?? "-"))" : "renewalInfo"
                line += " original=\(ManagementRequests.quoted(record.originalTransactionId))"
                line += " product=\(ManagementRequests.quoted(row?.productId ?? "-")) \(isNew ? "new" : "already stored")"
                printOut(line)
            }
        }
        if json {
            var writer = JSONWriter(indent: 0)
            writer.beginObject()
            writer.string("event", "summary")
            writer.number("records", String(report.records.count))
            writer.number("new", String(report.newRecords))
            writer.endObject()
            printOut(writer.text)
        }
        printError("customer of \(ManagementRequests.quoted(original)): \(report.records.count) signed values, \(report.newRecords) new")
        return ExitStatus.success
    }

    /// The keys already stored for the customer's original transaction (to say which are new).
    static func existingKeys(_ history: any CustomerHistoryStore, original: String) throws(ToolFailure) -> Set<String> {
        do throws(NotificationStoreError) {
            return Set(try history.customerHistory(originalTransactionIds: [original], appAccountToken: nil).map(\.key))
        } catch {
            throw ToolFailure("cannot read the customer history: \(error.reason)")
        }
    }
}
