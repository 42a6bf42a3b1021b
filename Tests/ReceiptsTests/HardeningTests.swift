import ASN1
import Foundation
import ReceiptSigning
import Synchronization
import TestSupport
import Testing

@testable import Receipts

/// The generated malformed-input corpus of issue 7, run in the normal suite: every truncation of
/// every TestReceipts file, bit flips, length boundaries, nesting, indefinite lengths in DER,
/// missing end-of-contents, huge declared counts; and work that grows linearly with the input.
@Suite struct HardeningTests {
    static func allTestReceiptFiles() -> [String] {
        let root = Fixtures.root.path
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        var files: [String] = []
        while let path = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue,
                !path.hasSuffix(".md")
            {
                files.append(path)
            }
        }
        return files.sorted()
    }

    /// Every strict prefix of every binary file (DER receipts and certificates) fails to parse as
    /// an app receipt with a typed error (no crash); only whole receipts parse. Text files (base64,
    /// JSON, plists), whose detection re-reads the whole prefix, get their first and last 256
    /// prefixes and every 211th in between, so the test stays linear.
    @Test func everyTruncationOfEveryTestReceiptsFile() throws {
        let files = Self.allTestReceiptFiles()
        #expect(files.count > 60)
        let contents = try files.map { try Fixtures.bytes($0) }
        // Files run on every core; problems are collected and checked once at the end (an
        // #expect per prefix would cost more than the parse).
        let results = Mutex<(prefixes: Int, problems: [String])>((0, []))
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            let bytes = contents[index]
            let whole = try? AppReceipt(bytes)
            let binary = bytes.first == 0x30
            var problems: [String] = []
            var count = 0
            for length in 0..<bytes.count where binary || length < 256 || length > bytes.count - 256 || length % 211 == 0 {
                do {
                    let receipt = try AppReceipt(Array(bytes[..<length]))
                    // Text forms (base64, JSON) can stop at a shorter valid form only if they
                    // decode to the very same receipt; binary prefixes never parse.
                    if binary || (whole != nil && receipt != whole) { problems.append("\(files[index]): prefix \(length) parsed") }
                } catch is ReceiptError {
                } catch {
                    problems.append("\(files[index]): prefix \(length): untyped error \(error)")
                }
                count += 1
            }
            results.withLock {
                $0.prefixes += count
                $0.problems += problems
            }
        }
        let (prefixes, problems) = results.withLock { $0 }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(prefixes > 200_000)
    }

    /// One bit flipped at every byte of a small receipt: a typed error or a receipt, never a crash;
    /// and whatever parses re-encodes and parses to the same model.
    @Test func singleBitFlipsAtEveryByte() throws {
        let bytes = try Fixtures.bytes("receipt-xcode-with-purchases.der")
        var parsed = 0
        for index in bytes.indices {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[index] ^= UInt8(1 << bit)
                guard let receipt = try? AppReceipt(flipped) else { continue }
                parsed += 1
                let again = try AppReceipt(payload: receipt.encodedPayload(options: ReceiptEncodingOptions(sortAttributes: false))[...])
                #expect(again == receipt, "flip \(index).\(bit)")
            }
        }
        #expect(parsed > 0)
    }

    static func payload(withStringOfLength length: Int) -> [UInt8] {
        var value = DERWriter()
        value.appendUTF8String(String(repeating: "a", count: length))
        var attribute = DERWriter()
        attribute.appendSequence {
            $0.appendInteger(2)
            $0.appendInteger(1)
            $0.appendOctetString(value.bytes)
        }
        var set = DERWriter()
        set.append(.set, content: attribute.bytes)
        return set.bytes
    }

    /// Lengths at every boundary of the short and long forms parse exactly.
    @Test(arguments: [0, 1, 0x7F, 0x80, 0x81, 0xFF, 0x100, 0x101, 0xFFFF, 0x1_0000])
    func lengthBoundariesParse(_ length: Int) throws {
        let payload = Self.payload(withStringOfLength: length)
        let receipt = try AppReceipt(payload: payload[...], limits: ReceiptLimits(maximumStringLength: 1 << 20))
        #expect(receipt.bundleIdentifier?.utf8.count == length)
    }

    /// Declared lengths of 2^31, 2^32 − 1, 2^63 − 1 and 2^63, and one byte over the input, are
    /// typed errors.
    @Test(
        arguments: [
            [0x84, 0x80, 0x00, 0x00, 0x00], [0x84, 0xFF, 0xFF, 0xFF, 0xFF], [0x88, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            [0x88, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], [0x82, 0x01, 0x00],
        ] as [[UInt8]])
    func hugeAndOverlongLengthsAreTypedErrors(_ lengthOctets: [UInt8]) {
        let payload: [UInt8] = [0x31] + lengthOctets + [0x30, 0x03, 0x02, 0x01, 0x02]
        #expect(receiptErrorCode { _ = try AppReceipt(payload: payload[...]) } == .malformedPayload)
        let envelope: [UInt8] = [0x30] + lengthOctets + [0x06, 0x00]
        #expect(receiptErrorCode { _ = try AppReceipt(envelope) } == .malformedEnvelope)
    }

    /// Indefinite lengths in the (DER) payload, and nesting past the limit, are typed errors.
    @Test func indefiniteLengthInDERAndNestingPastTheLimit() throws {
        let indefinite: [UInt8] = [0x31, 0x80, 0x30, 0x08, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01, 0x04, 0x00, 0x00, 0x00]
        do {
            _ = try AppReceipt(payload: indefinite[...])
            Issue.record("indefinite length accepted in the payload")
        } catch {
            #expect(error.underlying?.code == .indefiniteLength)
        }
        var nested: [UInt8] = [0x04, 0x00]
        for _ in 0..<60 {
            var w = DERWriter()
            w.append(.set, content: nested)
            nested = w.bytes
        }
        #expect(receiptErrorCode { _ = try AppReceipt(payload: nested[...]) } != nil)
    }

    /// A SET that declares far more content than it holds, and one with more attributes than the
    /// limit, fail fast with typed errors and bounded memory.
    @Test func hugeDeclaredSetCounts() throws {
        let declared: [UInt8] = [0x31, 0x84, 0x7F, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0x30, count: 16)
        #expect(receiptErrorCode { _ = try AppReceipt(payload: declared[...]) } == .malformedPayload)
        let attribute: [UInt8] = [0x30, 0x08, 0x02, 0x01, 0x63, 0x02, 0x01, 0x01, 0x04, 0x00]
        var set = DERWriter()
        set.append(.set, content: Array((0..<20_000).map { _ in attribute }.joined()))
        #expect(
            receiptErrorCode { _ = try AppReceipt(payload: set.bytes[...], limits: ReceiptLimits(maximumAttributes: 10_000)) }
                == .limitExceeded)
        #expect(try AppReceipt(payload: set.bytes[...]).unknownAttributes.count == 20_000)
    }

    /// Work (element headers decoded) grows at most about 2× when the input doubles.
    @Test func workGrowsLinearlyWithTheInput() throws {
        func headers(_ body: () throws -> Void) rethrows -> Int {
            let counter = ASN1Instrumentation.Counter()
            try ASN1Instrumentation.$counter.withValue(counter) { try body() }
            return counter.headers
        }
        // A receipt of N and 2N purchases.
        let small = SyntheticReceipts.receipt(purchases: 200).encodedPayload()
        let large = SyntheticReceipts.receipt(purchases: 400).encodedPayload()
        let a = try headers { _ = try AppReceipt(payload: small[...]) }
        let b = try headers { _ = try AppReceipt(payload: large[...]) }
        #expect(a > 1000)
        #expect(Double(b) / Double(a) < 2.1 && Double(b) / Double(a) > 1.9)

        // The adversarial BER shape: nested indefinite lengths 49 deep around a growing body, where
        // a naive end-of-contents search rescans the body at every level.
        func nestedIndefinite(_ children: Int) -> [UInt8] {
            var body: [UInt8] = Array(repeating: [0x05, 0x00], count: children).flatMap { $0 }
            for _ in 0..<49 { body = [0x30, 0x80] + body + [0x00, 0x00] }
            return body
        }
        let n1 = try headers { _ = try ASN1Tree.depthFirstNodes(nestedIndefinite(2000)[...], rules: .ber) }
        let n2 = try headers { _ = try ASN1Tree.depthFirstNodes(nestedIndefinite(4000)[...], rules: .ber) }
        #expect(n1 > 2000)
        #expect(Double(n2) / Double(n1) < 2.1, "work grew \(Double(n2) / Double(n1))×")
    }
}
