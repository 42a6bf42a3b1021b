import Foundation
import ReceiptSigning
import TestSupport
import Testing

@testable import Receipts

/// The envelope's DER path reads what the general reader reads, or leaves the input to it.
@Suite struct EnvelopePathTests {
    static func same(_ a: ArraySlice<UInt8>?, _ b: ArraySlice<UInt8>?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.startIndex == b.startIndex && a.endIndex == b.endIndex && a.elementsEqual(b)
    }

    static func same(_ a: ReceiptEnvelope.Storage, _ b: ReceiptEnvelope.Storage) -> Bool {
        guard a.encodedBytes == b.encodedBytes, a.usesBERForms == b.usesBERForms, a.version == b.version,
            a.digestAlgorithms == b.digestAlgorithms, a.contentType == b.contentType, same(a.payload, b.payload),
            a.payloadOffset == b.payloadOffset, a.certificates.count == b.certificates.count, a.signers.count == b.signers.count
        else { return false }
        for (x, y) in zip(a.certificates, b.certificates) where !same(x, y) { return false }
        for (x, y) in zip(a.signers, b.signers) {
            guard x.version == y.version, x.signerIdentifier == y.signerIdentifier, x.digestAlgorithm == y.digestAlgorithm,
                same(x.signedAttributesEncoded, y.signedAttributesEncoded), x.signatureAlgorithm == y.signatureAlgorithm,
                same(x.signature, y.signature), same(x.encodedBytes, y.encodedBytes),
                x.signedAttributes.count == y.signedAttributes.count
            else { return false }
            for (p, q) in zip(x.signedAttributes, y.signedAttributes) {
                guard p.type == q.type, p.values.count == q.values.count, zip(p.values, q.values).allSatisfy({ same($0, $1) }) else {
                    return false
                }
            }
        }
        return true
    }

    static func inputs() throws -> [[UInt8]] {
        var inputs = try Fixtures.realAppReceipts.map { try Fixtures.bytes($0) }
        let pki = try TestPKI.generate()
        for layout in [ReceiptLayout.appStore, .xcode] {
            inputs.append(try pki.signer().sign(SyntheticReceipts.receipt(purchases: 3), layout: layout))
        }
        return inputs
    }

    @Test func fixturesAgree() throws {
        var fast = 0
        for bytes in try Self.inputs() {
            let general = try ReceiptEnvelope.readGeneral(bytes, limits: .default)
            if let der = ReceiptEnvelope.readDER(bytes, limits: .default) {
                fast += 1
                #expect(Self.same(der, general))
            } else {
                #expect(general.usesBERForms)  // only BER inputs need the general reader
            }
        }
        #expect(fast >= Fixtures.appStoreReceipts.count)
    }

    /// Single-byte changes in the envelope's structure (the first bytes and around the
    /// signer information): where the DER path answers, the general reader gives the same envelope.
    @Test func changedInputsAgree() throws {
        var answered = 0
        var compared = 0
        for bytes in try Self.inputs().prefix(4) {
            let tail = max(0, bytes.count - 700)
            let positions = Array(0..<min(120, bytes.count)) + Array(tail..<bytes.count).filter { $0 % 3 == 0 }
            for index in positions {
                for value: UInt8 in [0x00, 0x02, 0x04, 0x30, 0x31, 0x80, 0x81, 0xA0, 0xA1, 0xFF, bytes[index] ^ 0x01] {
                    var changed = bytes
                    changed[index] = value
                    guard let der = ReceiptEnvelope.readDER(changed, limits: .default) else { continue }
                    answered += 1
                    let general = try? ReceiptEnvelope.readGeneral(changed, limits: .default)
                    #expect(general != nil, "byte \(index) = \(value)")
                    if let general {
                        compared += 1
                        #expect(Self.same(der, general), "byte \(index) = \(value)")
                    }
                }
            }
        }
        #expect(answered > 100 && compared == answered)
    }

    /// A depth limit the envelope exceeds stops both paths.
    @Test func limitsApplyToBoth() throws {
        let bytes = try Fixtures.bytes("receipt-sandbox-g5.der")
        var limits = ReceiptLimits.default
        limits.maximumDepth = 3
        #expect(ReceiptEnvelope.readDER(bytes, limits: limits) == nil)
        #expect(throws: ReceiptError.self) { _ = try ReceiptEnvelope(bytes, limits: limits) }
    }
}
