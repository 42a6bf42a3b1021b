// Kills a writer with SIGKILL in the middle of its writes, many times at random moments, and checks
// that the file always holds a complete earlier or later state: never torn, never empty.

import Foundation
import RMStore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The persistence-child executable, built next to the test binary.
func persistenceChildURL() throws -> URL {
    let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var directory = testBinary.deletingLastPathComponent()
    // On Linux the test binary is `<build>/RMStorePackageTests.xctest`; on Darwin it is inside a
    // bundle (`<build>/X.xctest/Contents/MacOS/X`).
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("persistence-child")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory.deleteLastPathComponent()
    }
    throw TestError("persistence-child not found near \(testBinary.path); build it with `swift build --target persistence-child`")
}

@Suite("Crash safety (SIGKILL during writes)", .serialized)
struct CrashSafetyTests {
    @Test(arguments: PersistorKind.allCases)
    func sigkillDuringWrites_leavesOldOrNewStateNeverATornFile(kind: PersistorKind) throws {
        let child = try persistenceChildURL()
        var generator = SystemRandomNumberGenerator()
        var interrupted = 0
        let rounds = 12
        for round in 0..<rounds {
            let directory = temporaryDirectory("crash-\(kind.rawValue)-\(round)")
            let file = directory.appendingPathComponent("ledger")
            let process = Process()
            process.executableURL = child
            process.arguments =
                kind == .keychainLike
                ? ["secure", file.path, "100000", String(decoding: PersistorKind.key, as: UTF8.self)]
                : ["defaults", file.path, "100000"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.runRetryingBadDescriptor()

            // Wait for the first complete write, then let it run a random while (0-40 ms) so that
            // the kill lands at an arbitrary point of a later write.
            let deadline = Date().addingTimeInterval(10)
            while !FileManager.default.fileExists(atPath: file.path), Date() < deadline, process.isRunning {
                usleep(500)
            }
            usleep(UInt32.random(in: 0...40_000, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal, process.terminationStatus == SIGKILL {
                interrupted += 1
            }

            // The file is there, complete, verifies, and holds t0…t(k-1) for some k ≥ 1.
            let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
            #expect(size > 0, "round \(round): empty file")
            let ledger = try kind.make(file)
            let records = try ledger.transactions(forProduct: "p")
            #expect(!records.isEmpty, "round \(round)")
            #expect(records.map(\.transactionIdentifier) == (0..<records.count).map { "t\($0)" }, "round \(round)")
            #expect(records.last?.webOrderLineItemID == 2_000_000_000_000_000 + Int64(records.count - 1))
            // A later writer can go on from that state.
            try ledger.persist(purchased("p", "after-crash"))
            #expect(try ledger.count(productIdentifier: "p") == records.count + 1)
        }
        // The kills really interrupted running writers.
        #expect(interrupted == rounds)
    }
}
