import Internals
import Testing

/// The contiguous fast path decodes exactly like the general decoder: same bytes, same error
/// offsets, under every rule set, for valid text and for text broken in every way.
@Suite struct Base64BufferTests {
    static let rules: [Base64.Rules] = [.lenient, .strictStandard, .strictURL]

    func both(_ text: [UInt8], _ rules: Base64.Rules) -> (Result<[UInt8], Base64.Failure>, Result<[UInt8], Base64.Failure>) {
        let general = Result { () throws(Base64.Failure) -> [UInt8] in try Base64.decode(text, rules: rules) }
        let fast = text.withUnsafeBufferPointer { buffer in
            Result { () throws(Base64.Failure) -> [UInt8] in try Base64.decode(buffer: buffer, rules: rules) }
        }
        return (general, fast)
    }

    @Test func agreesOnRandomValidAndBrokenText() {
        var generator = SplitMix64(seed: 64)
        let noise = Array("=-_+/ \n.A0".utf8) + [0x00, 0x80, 0xFF]
        var checked = 0
        for _ in 0..<3000 {
            let length = Int(generator.next() % 40)
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            for rules in Self.rules {
                var text = Array(Base64.encode(bytes, alphabet: rules.alphabet).utf8)
                if rules.alphabet == .url || generator.next() % 2 == 0 {
                    while text.last == UInt8(ascii: "=") { text.removeLast() }
                }
                // Half the time, break it: replace, insert or drop a character.
                if generator.next() % 2 == 0 {
                    let position = text.isEmpty ? 0 : Int(generator.next() % UInt64(text.count + 1))
                    let byte = noise[Int(generator.next() % UInt64(noise.count))]
                    switch generator.next() % 3 {
                    case 0 where position < text.count: text[position] = byte
                    case 1: text.insert(byte, at: position)
                    default: if position < text.count { text.remove(at: position) }
                    }
                }
                let (general, fast) = both(text, rules)
                #expect(general == fast, "\(String(decoding: text, as: UTF8.self))")
                checked += 1
            }
        }
        #expect(checked == 9000)
    }

    @Test func knownValues() throws {
        for (text, expected) in [("", ""), ("QQ", "A"), ("QUI", "AB"), ("QUJD", "ABC"), ("QQ==", "A"), ("QUI=", "AB")] {
            let decoded = try Array(text.utf8).withUnsafeBufferPointer { try Base64.decode(buffer: $0, rules: .strictStandard) }
            #expect(decoded == Array(expected.utf8))
        }
        let (general, fast) = both(Array("QR==".utf8), .strictStandard)
        #expect(general == fast)
        if case .failure(let failure) = fast { #expect(failure.offset == 1) } else { Issue.record("QR== decoded") }
    }
}
