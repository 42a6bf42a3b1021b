import Internals
import Testing

@Suite("UTF-8 well-formedness")
struct UTF8SequenceTests {
    func valid(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { UTF8Sequence.isValid($0) } }

    @Test func agreesWithTheStandardLibraryOnRandomAndEdgeBytes() {
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<20_000 {
            let count = Int(generator.next() % 6)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next() | (generator.next() & 1 == 0 ? 0x80 : 0)) }
            #expect(valid(bytes) == (String(validating: bytes, as: UTF8.self) != nil), "\(bytes)")
        }
        // Overlong, surrogate, past U+10FFFF, truncated, and the extremes that are fine.
        for bad: [UInt8] in [[0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80]] {
            #expect(!valid(bad), "\(bad)")
        }
        for good: [UInt8] in [[0xC2, 0x80], [0xEF, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF], Array("café 😀".utf8)] {
            #expect(valid(good), "\(good)")
        }
    }

    @Test func namesTheProblem() {
        func problem(_ bytes: [UInt8]) -> UTF8Sequence.Problem? {
            bytes.withUnsafeBytes { raw in
                if case .failure(let problem) = UTF8Sequence.length(raw, at: 0) { return problem }
                return nil
            }
        }
        #expect(problem([0xFF]) == .invalidLead)
        #expect(problem([0xE2, 0x82]) == .truncated)
        #expect(problem([0xE2, 0x28, 0xA1]) == .invalidContinuation)
        #expect(problem([0xE2, 0x82, 0xAC]) == nil)
    }
}
