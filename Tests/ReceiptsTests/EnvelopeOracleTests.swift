import ASN1
import Foundation
import ReceiptSigning
import TestSupport
import Testing

@testable import Receipts

/// The envelope reader (the raw cursor, DER or BER rules) reads what the plain reference reader
/// (``ReceiptEnvelope/readReference(_:limits:)``, the element reader under BER) reads.
@Suite struct EnvelopeOracleTests {
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
        var strict = 0
        for bytes in try Self.inputs() {
            let reference = try ReceiptEnvelope.readReference(bytes, limits: .default)
            #expect(Self.same(try ReceiptEnvelope(bytes).storage, reference))
            if let der = try? ReceiptEnvelope.read(bytes, rules: .der, limits: .default) {
                strict += 1
                #expect(Self.same(der, reference))
            } else {
                #expect(reference.usesBERForms)  // only BER inputs need BER rules
            }
        }
        #expect(strict >= Fixtures.appStoreReceipts.count)
    }

    /// Single-byte changes in the envelope's structure (the first bytes and around the signer
    /// information): the reader accepts exactly what the reference accepts, and reads the same.
    @Test func changedInputsAgree() throws {
        var accepted = 0
        var refused = 0
        for bytes in try Self.inputs() {
            let tail = max(0, bytes.count - 700)
            let positions = Array(0..<min(120, bytes.count)) + Array(tail..<bytes.count).filter { $0 % 3 == 0 }
            for index in positions {
                for value: UInt8 in [0x00, 0x02, 0x04, 0x30, 0x31, 0x80, 0x81, 0xA0, 0xA1, 0xFF, bytes[index] ^ 0x01] {
                    var changed = bytes
                    changed[index] = value
                    let read = try? ReceiptEnvelope(changed)
                    let reference = try? ReceiptEnvelope.readReference(changed, limits: .default)
                    #expect((read == nil) == (reference == nil), "byte \(index) = \(value)")
                    if let read, let reference {
                        accepted += 1
                        #expect(Self.same(read.storage, reference), "byte \(index) = \(value)")
                    } else {
                        refused += 1
                    }
                }
            }
        }
        #expect(accepted > 100 && refused > 100)
    }

    /// A depth limit the envelope exceeds stops both rules and the reference.
    @Test func limitsApply() throws {
        let bytes = try Fixtures.bytes("receipt-sandbox-g5.der")
        var limits = ReceiptLimits.default
        limits.maximumDepth = 3
        #expect(throws: ReceiptError.self) { _ = try ReceiptEnvelope.read(bytes, rules: .der, limits: limits) }
        #expect(throws: ReceiptError.self) { _ = try ReceiptEnvelope.read(bytes, rules: .ber, limits: limits) }
        #expect(throws: ReceiptError.self) { _ = try ReceiptEnvelope.readReference(bytes, limits: limits) }
        #expect(throws: ReceiptError.self) { _ = try ReceiptEnvelope(bytes, limits: limits) }
    }
}
