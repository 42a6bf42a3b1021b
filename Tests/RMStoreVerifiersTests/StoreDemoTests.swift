// `swift run store-demo` works: the built example exits 0, quickly, having printed each
// notification and each verified signed transaction as it happened, and the summary.

import Foundation
import TestSupport
import Testing

/// Runs the built `store-demo` executable (the test target depends on it, so it sits next to the
/// tests) on a thread of its own, so no cooperative thread blocks on its pipe.
enum StoreDemo {
    struct Outcome: Sendable {
        let status: Int32
        let output: String
        let duration: Duration
    }

    static let executable: URL? = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("store-demo"),
            Bundle.main.bundleURL.appendingPathComponent("store-demo"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("store-demo"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    static func run() async throws -> Outcome {
        let url = try #require(executable, "store-demo was not built next to the tests")
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Outcome, any Error>) in
            Thread {
                let process = Process()
                process.executableURL = url
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = pipe
                let start = ContinuousClock.now
                do {
                    try process.runRetryingBadDescriptor()
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(
                    returning: Outcome(
                        status: process.terminationStatus, output: String(decoding: data, as: UTF8.self),
                        duration: ContinuousClock.now - start))
            }.start()
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct StoreDemoTests {
    @Test func storeDemo_buysRenewsRefreshesRestores_printsNotificationsAndSummary_andExitsZero() async throws {
        let outcome = try await StoreDemo.run()

        #expect(outcome.status == 0, "\(outcome.output)")
        // Alone it takes about 0.4 s (debug build); the bound leaves room for a loaded machine
        // running the other tests in parallel, and still catches a demo that hangs.
        #expect(outcome.duration < .seconds(30))
        let lines = outcome.output.split(separator: "\n").map(String.init)
        let finished = lines.filter { $0.contains("▸ PaymentTransactionFinished") }
        #expect(finished.filter { $0.contains("(purchased)") }.count == 6)  // 2 coins, level, pack, monthly, renewal
        #expect(finished.filter { $0.contains("(restored)") }.count == 4)
        #expect(lines.contains { $0.contains("▸ DownloadFinished") })
        #expect(lines.contains { $0.contains("▸ RefreshReceiptFinished") })
        #expect(lines.contains { $0.contains("▸ RestoreTransactionsFinished") && $0.contains("4 restored, 0 failed") })
        #expect(!lines.contains { $0.contains("PaymentTransactionFailed") })
        #expect(lines.contains { $0.contains("subscription active now:") && $0.hasSuffix("true (2 periods in the receipt)") })
        #expect(lines.contains { $0.contains("transactions finished:") && $0.contains("(unfinished: 0)") })
        // Notifications are printed as they happen: the renewal comes between the purchases and
        // the refresh.
        let renewal = try #require(lines.firstIndex { $0.contains("the subscription renews") })
        let refresh = try #require(lines.firstIndex { $0.contains("▸ RefreshReceiptFinished") })
        #expect(lines[(renewal + 1)..<refresh].contains { $0.contains("▸ PaymentTransactionFinished") && $0.contains("monthly") })
        // Every transaction's signed transaction verified too (alongside the receipt), and printed:
        // six purchases (a renewal among them) and four restores, each restore carrying the JWS
        // of a purchase printed before.
        let signed = lines.filter { $0.contains("✓ JWS ") }
        #expect(signed.filter { $0.contains("(for purchased ") }.count == 6)
        #expect(signed.filter { $0.contains("(for restored ") }.count == 4)
        #expect(signed.filter { $0.contains(", RENEWAL, ") }.count == 2)  // the renewal, bought and restored
        #expect(signed.allSatisfy { $0.contains(", Sandbox (for ") })
        func signedID(_ line: String) -> String? {
            line.components(separatedBy: "✓ JWS ").last?.split(separator: " ").first { $0.allSatisfy(\.isNumber) }.map(String.init)
        }
        let purchasedIDs = Set(signed.filter { $0.contains("(for purchased ") }.compactMap(signedID))
        #expect(purchasedIDs.count == 6)
        #expect(signed.filter { $0.contains("(for restored ") }.allSatisfy { signedID($0).map(purchasedIDs.contains) == true })
        #expect(
            lines.contains {
                $0.contains("the JWS chain:")
                    && $0.hasSuffix("RMStore Test Root CA - G3, checked at 2023-11-14 22:13:20 +0000 (the signedDate), 19 checks")
            })
        #expect(lines.contains { $0.contains("signed transactions (JWS):") && $0.contains("10 verified") })
        #expect(lines.contains { $0.contains("subscription status (JWS):") && $0.contains("active, renewal info verified: auto-renew on") })
        #expect(lines.last?.hasSuffix("Done") == true)
    }
}
