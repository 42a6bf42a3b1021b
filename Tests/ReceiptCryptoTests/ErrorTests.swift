import ReceiptCrypto
import TestSupport
import Testing

@Suite("Errors")
struct ErrorTests {
    @Test("Errors compare by code only and carry OpenSSL's queue as text")
    func codesAndQueue() throws {
        let a = CryptoError(code: .malformedInput, reason: "one")
        let b = CryptoError(code: .malformedInput, reason: "two")
        #expect(a == b)
        #expect(a != CryptoError(code: .trailingBytes, reason: "one"))
        #expect(Set([a, b]).count == 1)
        #expect(CryptoError.Code.keyMismatch.description == "keyMismatch")

        // A real OpenSSL failure: the queue is drained into strings, and the next error on this
        // thread does not inherit stale entries.
        let failure = #expect(throws: CryptoError.self) { try Certificate(derEncoded: [0x30, 0x03, 0x02, 0x01, 0x01]) }
        let entries = try #require(failure?.openSSLErrors)
        #expect(!entries.isEmpty)
        #expect(entries.allSatisfy { !$0.library.isEmpty && !$0.reason.isEmpty })
        #expect(failure?.description.contains("malformedInput") == true)
        let plain = #expect(throws: CryptoError.self) { try Certificate(derEncoded: []) }
        #expect(plain?.openSSLErrors.isEmpty == true)
    }
}
