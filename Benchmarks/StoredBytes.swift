import Foundation
import ServerNotifications
import TestSupport

/// `Benchmarks --stored-bytes [--db DIRECTORY]`: bytes per stored notification
/// (`notification-stored-bytes`), for the real Apple DID_RENEW notification of the test vectors
/// (TestReceipts/jws/gopay/sandbox-notification-DID_RENEW.jws, 18,042 bytes: the outer token and
/// its nested transaction and renewal info each carry the same three certificates).
///
/// Two figures, one JSON line: the payload's row bytes plus its share of the certificate rows when
/// `count` notifications share them (the format's cost, as ``StoredPayloadSize`` computes it), and
/// the SQLite database file's size divided by `count` after storing `count` notifications of that
/// payload under distinct UUIDs (what the disk pays, with the other columns, indexes and pages).
enum StoredBytesBenchmark {
    static let source = "jws/gopay/sandbox-notification-DID_RENEW.jws"

    static func run(count: Int, directory: String?) throws {
        let token = String(decoding: try Fixtures.bytes(source), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let size = StoredPayloadSize(signedPayload: token)
        let folder = URL(fileURLWithPath: directory ?? ".build/stored-bytes-bench")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("stored-\(UUID().uuidString.prefix(8)).db").path
        let store = try SQLiteNotificationStore(path: path)
        for index in 0..<count {
            let row = StoredNotification(
                notificationUUID: String(format: "c0000000-0000-4000-8000-%012d", index), notificationType: "DID_RENEW",
                receivedDate: 1_700_000_000_000, signedPayload: token)
            _ = try store.store(row)
        }
        let readBack = try store.notifications(NotificationQuery(limit: 1)).first?.signedPayload
        store.close()
        let fileBytes = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        try? FileManager.default.removeItem(atPath: path)
        guard readBack == token else { throw BenchmarkError(description: "the stored notification did not come back byte for byte") }
        let perNotification = size.bytesPerNotification(sharingCertificatesWith: count)
        print(
            "{\"name\":\"notification-stored-bytes\",\"source\":\"\(source)\",\"raw_bytes\":\(size.originalBytes),"
                + "\"compact\":\(size.isCompact),\"row_bytes\":\(size.rowBytes),\"certificate_bytes\":\(size.certificateBytes.reduce(0, +)),"
                + "\"notifications\":\(count),\"bytes_per_notification\":\(String(format: "%.1f", perNotification)),"
                + "\"sqlite_file_bytes_per_notification\":\(String(format: "%.1f", Double(fileBytes) / Double(max(1, count))))}")
    }
}
