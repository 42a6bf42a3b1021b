import Foundation
import Receipts
import TestSupport
import Testing

@testable import ReceiptVerification

/// The short-form reading of certificate serials and issuers decides exactly what the general
/// reader decides, or leaves the decision to it.
@Suite struct SignerLookupTests {
    /// The general reader's outcome: a match, no match, or an error.
    static func general(_ der: ArraySlice<UInt8>, _ issuer: ArraySlice<UInt8>, _ serial: ArraySlice<UInt8>) -> Bool? {
        try? CertificateIdentity.generalMatch(der, issuer: issuer, serialNumber: serial)
    }

    static func identifiers() throws -> [(issuer: ArraySlice<UInt8>, serial: ArraySlice<UInt8>, certificates: [ArraySlice<UInt8>])] {
        try Fixtures.realAppReceipts.compactMap { name in
            let envelope = try ReceiptEnvelope(Fixtures.bytes(name))
            guard case .issuerAndSerialNumber(let issuer, let serial)? = envelope.signers.first?.signerIdentifier else { return nil }
            return (issuer, serial, envelope.certificates)
        }
    }

    @Test func realEnvelopesAgree() throws {
        var matches = 0
        for (issuer, serial, certificates) in try Self.identifiers() {
            for der in certificates {
                let quick = CertificateIdentity.quickMatch(der, issuer: issuer, serialNumber: serial)
                #expect(quick != nil)  // real certificates are in the short forms
                #expect(quick == Self.general(der, issuer, serial))
                if quick == true { matches += 1 }
            }
        }
        #expect(matches >= Fixtures.realAppReceipts.count - 2)
    }

    /// Every single-byte change in the first 400 bytes of real certificates: where the quick
    /// reading answers, the general reader gives the same answer (and never an error).
    @Test func changedCertificatesAgree() throws {
        var answered = 0
        var deferred = 0
        for (issuer, serial, certificates) in try Self.identifiers().prefix(3) {
            for der in certificates {
                let bytes = Array(der)
                for index in 0..<min(400, bytes.count) {
                    for value: UInt8 in [0x00, 0x01, 0x02, 0x30, 0x7F, 0x80, 0x81, 0x82, 0xA0, 0xFF, bytes[index] ^ 0x01] {
                        var changed = bytes
                        changed[index] = value
                        let quick = CertificateIdentity.quickMatch(changed[...], issuer: issuer, serialNumber: serial)
                        if let quick {
                            answered += 1
                            #expect(quick == Self.general(changed[...], issuer, serial), "byte \(index) = \(value)")
                        } else {
                            deferred += 1
                        }
                    }
                }
            }
        }
        #expect(answered > 0 && deferred > 0)
    }
}
