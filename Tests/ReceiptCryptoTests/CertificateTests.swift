import Foundation
import Internals
import ReceiptCrypto
import TestSupport
import Testing

@Suite("Certificates")
struct CertificateTests {
    @Test("Apple Inc. Root: fingerprint, names, dates, CA, key")
    func appleRoot() throws {
        let root = try Fixtures.appleRoot()
        #expect(hex(try root.sha256Fingerprint) == "b0b1730ecbc7ff4505142c49f1295e6eda6bcaed7e2c68c5be91b5a11001f024")
        #expect(hex(try root.sha1Fingerprint) == hex(try Digest.hash(.sha1, root.derEncoded)))
        #expect(root.subject.rfc2253String == "CN=Apple Root CA,OU=Apple Certification Authority,O=Apple Inc.,C=US")
        #expect(root.subject.components.map(\.shortName) == ["C", "O", "OU", "CN"])
        #expect(root.subject.components.first?.oid == oid("2.5.4.6"))
        #expect(root.subject == root.issuer)
        #expect(root.subject.commonName == "Apple Root CA")
        #expect(root.serialNumber == [0x02])
        #expect(root.version == 3)
        #expect(root.notBefore == utc(2006, 4, 25, 21, 40, 36))
        #expect(root.notAfter == utc(2035, 2, 9, 21, 40, 36))
        #expect(root.signatureAlgorithmOID == oid("1.2.840.113549.1.1.5"))
        #expect(root.signatureAlgorithm == .rsaPKCS1v15(.sha1))
        #expect(root.isCA)
        #expect(root.isSelfSigned)
        #expect(root.keyUsage == [.keyCertSign, .cRLSign])
        #expect(root.isExtensionCritical(oid: oid("2.5.29.19")) == true)
        #expect(!root.hasInvalidExtensions)
        let key = try root.publicKey
        #expect(key.kind == .rsa(bits: 2048))
        #expect(key.bits == 2048)
    }

    @Test("WWDR G5 and the 2024-2026 receipt-signing leaf carry Apple's marker extensions")
    func appleIntermediateAndLeaf() throws {
        let intermediate = try Fixtures.appleWWDRG5()
        let leaf = try Fixtures.appleLeaf2024()
        #expect(intermediate.hasExtension(oid: AppleOID.wwdrIntermediate))
        #expect(intermediate.extensionValue(oid: AppleOID.wwdrIntermediate) == [0x05, 0x00])
        #expect(!intermediate.hasExtension(oid: AppleOID.receiptSigningLeaf))
        #expect(leaf.hasExtension(oid: AppleOID.receiptSigningLeaf))
        #expect(leaf.extensionValue(oid: AppleOID.receiptSigningLeaf) == [0x05, 0x00])
        #expect(!leaf.hasExtension(oid: AppleOID.wwdrIntermediate))
        #expect(leaf.extensionOIDs.contains(oid("2.5.29.15")))
        #expect(leaf.extensionValue(oid: oid("1.2.3.4")) == nil)
        #expect(intermediate.isCA)
        #expect(intermediate.pathLengthConstraint == 0)
        #expect(!leaf.isCA)
        #expect(leaf.keyUsage == [.digitalSignature])
        #expect(leaf.serialNumberHex == "7D3920094EBEF3F8EFCA6C10EA8E4303")
        #expect(intermediate.serialNumberHex == "3B7E800AEED302A1E6ECDB97D9CAAC289CF16994")
        #expect(leaf.notAfter == utc(2026, 8, 23, 14, 50, 2))
        #expect(leaf.signatureAlgorithmOID == oid("1.2.840.113549.1.1.11"))
        #expect(leaf.subject.commonName == "Mac App Store and iTunes Store Receipt Signing")
        #expect(leaf.issuer == intermediate.subject)
        #expect(intermediate.issuer == (try Fixtures.appleRoot()).subject)
        #expect(intermediate.subject.value(for: "OU") == "G5")
        #expect(!leaf.isSelfSigned)
        #expect(leaf.isWithinValidityPeriod(at: Fixtures.receiptCreationDate))
        #expect(!leaf.isWithinValidityPeriod(at: utc(2026, 11, 29)))
    }

    @Test("DER and PEM (one or several blocks) load the same certificates")
    func pemAndDER() throws {
        let root = try Fixtures.appleRoot()
        let leaf = try Fixtures.appleLeaf2024()
        func pem(_ certificate: Certificate) -> String {
            "-----BEGIN CERTIFICATE-----\n"
                + Data(certificate.derEncoded).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
                + "\n-----END CERTIFICATE-----\n"
        }
        #expect(try Certificate(pemEncoded: pem(root)) == root)
        #expect(try Certificate.load(root.derEncoded) == [root])
        let bundle = "leading text\n" + pem(leaf) + "between\n" + pem(root)
        #expect(try Certificate.load(Array(bundle.utf8)) == [leaf, root])
        // Blank lines before the first block are fine; a BEGIN marker that does not start a line is not
        // recognised by OpenSSL. init(pemEncoded:) wants exactly one block.
        #expect(try Certificate.load(Array(("\n\n" + pem(root)).utf8)) == [root])
        let indented = #expect(throws: CryptoError.self) { try Certificate.load(Array(("  " + pem(root)).utf8)) }
        #expect(indented?.code == .emptyInput)
        let several = #expect(throws: CryptoError.self) { try Certificate(pemEncoded: bundle) }
        #expect(several?.code == .invalidArgument)
        let none = #expect(throws: CryptoError.self) { try Certificate(pemEncoded: "no pem here") }
        #expect(none?.code == .emptyInput)
        // A private-key block alone is not a certificate.
        let keyOnly = #expect(throws: CryptoError.self) {
            try Certificate.load(Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8))
        }
        #expect(keyOnly?.code == .emptyInput)
        // Corrupt base64 inside a certificate block is an error, not an empty result.
        let corrupt = #expect(throws: CryptoError.self) {
            try Certificate.load(Array("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n".utf8))
        }
        #expect(corrupt?.code == .malformedInput)
        #expect(corrupt?.openSSLErrors.isEmpty == false)
    }

    @Test("Certificates are Hashable by their DER bytes")
    func hashing() throws {
        let root = try Fixtures.appleRoot()
        let again = try Certificate(derEncoded: root.derEncoded)
        let leaf = try Fixtures.appleLeaf2024()
        #expect(root == again)
        #expect(Set([root, again, leaf]).count == 2)
        #expect(root != leaf)
    }

    @Test("Empty, trailing, truncated and random bytes are errors, never crashes")
    func hostileInput() throws {
        let empty = #expect(throws: CryptoError.self) { try Certificate(derEncoded: []) }
        #expect(empty?.code == .emptyInput)
        let loadEmpty = #expect(throws: CryptoError.self) { try Certificate.load([]) }
        #expect(loadEmpty?.code == .emptyInput)

        let der = try Fixtures.appleLeaf2024().derEncoded
        let trailing = #expect(throws: CryptoError.self) { try Certificate(derEncoded: der + [0x00]) }
        #expect(trailing?.code == .trailingBytes)

        // Every proper prefix fails to parse.
        for length in 1..<der.count {
            let error = #expect(throws: CryptoError.self) { try Certificate(derEncoded: Array(der.prefix(length))) }
            #expect(error?.code == .malformedInput)
        }

        // Random bytes, and the real certificate with single bytes flipped, never crash. Flips that
        // still parse must keep the input bytes verbatim.
        var random = SplitMix64(seed: 0xC0FFEE)
        for _ in 0..<500 {
            let garbage = random.bytes(Int.random(in: 1...300, using: &random))
            #expect(throws: CryptoError.self) { try Certificate(derEncoded: garbage) }
        }
        var parsedFlips = 0
        for _ in 0..<500 {
            var mutated = der
            let index = Int.random(in: 0..<mutated.count, using: &random)
            mutated[index] ^= UInt8.random(in: 1...255, using: &random)
            if let certificate = try? Certificate(derEncoded: mutated) {
                parsedFlips += 1
                #expect(certificate.derEncoded == mutated)
                _ = certificate.subject.rfc2253String
                _ = certificate.extensionOIDs
                _ = certificate.isSelfSigned
            }
        }
        #expect(parsedFlips < 500)
    }

    @Test("Every Apple certificate in the shared fixtures parses and round-trips")
    func everyFixtureCertificate() throws {
        for name in ["AppleIncRootCertificate.cer", "AppleWWDRCA-G5.der", "leaf-MacAppStoreAndiTunesStoreReceiptSigning-2024-2026.der"] {
            let der = try Fixtures.bytes("certs/" + name)
            let certificate = try Certificate(derEncoded: der)
            #expect(certificate.derEncoded == der)
            #expect(!certificate.hasInvalidExtensions)
            #expect(certificate.notBefore < certificate.notAfter)
        }
    }
}
