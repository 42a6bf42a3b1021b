import Foundation
import ReceiptCrypto
import TestSupport
import Testing

/// A serial number with a leading zero octet it does not need is not DER: OpenSSL's `d2i_X509`
/// refuses it, and so must the package's own certificate reader (an anchor file with a padded
/// serial used to load through the own reader while OpenSSL refuses it).
@Suite struct PaddedSerialTests {
    /// One DER length at `index` of `bytes`: (length, octets it took).
    static func length(_ bytes: [UInt8], at index: Int) throws -> (Int, Int) {
        let first = try #require(bytes.indices.contains(index) ? bytes[index] : nil)
        guard first & 0x80 != 0 else { return (Int(first), 1) }
        let count = Int(first & 0x7F)
        var value = 0
        for offset in 1...count { value = value << 8 | Int(bytes[index + offset]) }
        return (value, 1 + count)
    }

    static func encodedLength(_ length: Int) -> [UInt8] {
        if length < 0x80 { return [UInt8(length)] }
        var octets: [UInt8] = []
        var rest = length
        while rest > 0 {
            octets.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(octets.count)] + octets
    }

    /// `der` with its serial number written with one more leading zero octet.
    static func paddingSerial(of der: [UInt8]) throws -> [UInt8] {
        let (_, outerOctets) = try length(der, at: 1)
        let tbsStart = 1 + outerOctets
        let (tbsLength, tbsOctets) = try length(der, at: tbsStart + 1)
        let tbsContent = tbsStart + 1 + tbsOctets
        var index = tbsContent
        try #require(der[index] == 0xA0)  // version [0]
        let (versionLength, versionOctets) = try length(der, at: index + 1)
        index += 1 + versionOctets + versionLength
        try #require(der[index] == 0x02)  // serialNumber INTEGER
        let (serialLength, serialOctets) = try length(der, at: index + 1)
        let serialValue = Array(der[(index + 1 + serialOctets)..<(index + 1 + serialOctets + serialLength)])
        let tbsBody =
            Array(der[tbsContent..<index]) + [0x02] + encodedLength(serialLength + 1) + [0x00] + serialValue
            + Array(der[(index + 1 + serialOctets + serialLength)..<(tbsContent + tbsLength)])
        let tbs = [0x30] + encodedLength(tbsBody.count) + tbsBody
        let rest = Array(der[(tbsContent + tbsLength)...])
        return [0x30] + encodedLength(tbs.count + rest.count) + tbs + rest
    }

    @Test(arguments: ["AppleIncRootCertificate.cer", "AppleWWDRCA-G5.der", "AppleRootCA-G3.cer"])
    func paddedSerialIsRefusedByBothReaders(file: String) throws {
        let der = try Fixtures.certificate(file).derEncoded
        let padded = try Self.paddingSerial(of: der)
        #expect(padded.count == der.count + 1)
        #expect(throws: CryptoError.self) { try Certificate(derEncoded: padded) }
        #expect(throws: CryptoError.self) { try Certificate(deferringOpenSSL: padded) }
        // The unpadded original reads both ways.
        #expect(try Certificate(deferringOpenSSL: der).derEncoded == der)
    }
}
