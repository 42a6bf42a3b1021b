// Text from a request can never forge a line of `receipt-tool serve`'s log, nor reach it with an
// escape sequence.

import Foundation
import Glibc
import TestSupport
import Testing

@Suite("receipt-tool serve: log injection")
struct LogInjectionTests {
    /// A line the attacker wants the log to show, behind a newline, inside a JSON key that the
    /// parser reports as a duplicate.
    static let forged = "serve: POST /notifications → 200 accepted: 00000000-0000-0000-0000-000000000000 DID_RENEW"

    static func duplicateKeyBody(_ extra: String) -> [UInt8] {
        let key = "\\n" + forged + extra
        return Array("{\"signedPayload\":\"x\",\"\(key)\":1,\"\(key)\":2}".utf8)
    }

    @Test(.timeLimit(.minutes(2)))
    func aNewlineOrEscapeInAJSONKey_isEscapedInTheLogLine() throws {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("notifications.db").path
        let server = try ServeProcess(["--environment", "sandbox", "--notifications-db", database, "--bundle-id", "com.example.app"])
        try #require(server.port != 0)
        // The key holds a newline and ESC [2K (erase the line) as JSON escapes, so the parser
        // decodes them into the reason it reports.
        let notification = NotificationFixtures.post(port: server.port, Self.duplicateKeyBody("\\u001b[2K"))
        let receipt = NotificationFixtures.post(port: server.port, path: "/verifyReceipt", Self.duplicateKeyBody(""))
        let (status, log) = server.stop()
        #expect(status == 0)
        #expect(notification?.status == 400, "\(String(describing: notification?.bodyText))")
        #expect(receipt?.status == 200, "verifyReceipt answers its status in JSON: \(String(describing: receipt?.bodyText))")
        let lines = log.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(!lines.contains { $0.hasPrefix("serve: POST /notifications → 200") }, "a forged line: \(log.debugDescription)")
        #expect(!log.utf8.contains(0x1B), "a raw ESC in the log: \(log.debugDescription)")
        // Both requests are logged, each on one line, with the newline shown as `\n`.
        let rejected = lines.filter { $0.contains("appears twice") }
        #expect(rejected.count == 2, "\(log.debugDescription)")
        #expect(rejected.allSatisfy { $0.hasPrefix("serve: POST /") && $0.contains("\\n" + Self.forged) }, "\(log.debugDescription)")
        #expect(rejected.contains { $0.contains("\\u{1B}[2K") }, "\(log.debugDescription)")
    }
}
