import Foundation
import FuzzTargets
import TestSupport
import Testing

/// The fuzz corpus (Fuzz/corpus/, including every crash found and fixed, in regressions/) replayed
/// through the same target functions the fuzzer runs. A crash or an oracle violation here aborts
/// the test process, so this suite fails loudly rather than silently.
@Suite struct FuzzCorpusReplayTests {
    static let corpus = Fixtures.packageRoot.appendingPathComponent("Fuzz/corpus")

    static func files(_ directory: String) -> [[UInt8]] {
        let url = corpus.appendingPathComponent(directory)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.sorted().compactMap { FileManager.default.contents(atPath: url.appendingPathComponent($0).path).map { [UInt8]($0) } }
    }

    @Test(arguments: FuzzTargets.all.map(\.name))
    func corpusReplaysWithoutCrash(_ name: String) throws {
        let target = try #require(FuzzTargets.target(named: name))
        let own = Self.files(name)
        // Every target ships a minimized corpus; an empty directory means the replay tests nothing.
        #expect(own.count >= 10, "Fuzz/corpus/\(name) has only \(own.count) inputs")
        for input in own + Self.files("regressions") { target.run(input) }
    }

    @Test func regressionsExist() {
        #expect(!Self.files("regressions").isEmpty)
    }
}
