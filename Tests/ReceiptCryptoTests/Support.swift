import ASN1
import Foundation
import Internals
import ReceiptCrypto
import Testing

/// Test fixtures: files under the repository's `TestReceipts/`, dates and a generated test PKI.
enum Fixtures {
    /// `<repo>/TestReceipts`, found from this source file's location.
    static func directory(filePath: String = #filePath) -> URL {
        URL(fileURLWithPath: filePath)
            .deletingLastPathComponent()  // ReceiptCryptoTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository root
            .appendingPathComponent("TestReceipts")
    }

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory().appendingPathComponent(relativePath)))
    }

    static func appleRoot() throws -> Certificate {
        try Certificate(derEncoded: bytes("certs/AppleIncRootCertificate.cer"))
    }

    static func appleWWDRG5() throws -> Certificate {
        try Certificate(derEncoded: bytes("certs/AppleWWDRCA-G5.der"))
    }

    static func appleLeaf2024() throws -> Certificate {
        try Certificate(derEncoded: bytes("certs/leaf-MacAppStoreAndiTunesStoreReceiptSigning-2024-2026.der"))
    }

    static func sandboxReceipt() throws -> [UInt8] {
        try bytes("receipt-sandbox-g5.der")
    }

    /// Creation date (field 12) of receipt-sandbox-g5.
    static let receiptCreationDate = utc(2025, 12, 26, 18, 39, 47)
}

/// A UTC instant from calendar fields.
func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
    let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    return calendar.date(from: components) ?? Date(timeIntervalSince1970: .nan)
}

func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

func bytes(hex text: String) -> [UInt8] {
    var result: [UInt8] = []
    var iterator = text.makeIterator()
    while let high = iterator.next(), let low = iterator.next() {
        if let byte = UInt8(String([high, low]), radix: 16) { result.append(byte) }
    }
    return result
}

/// Garbage inputs from the package's seeded generator.
extension SplitMix64 {
    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

/// Apple's receipt marker OIDs.
enum AppleOID {
    static let receiptSigningLeaf = ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 11, 1)
    static let wwdrIntermediate = ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 2, 1)
}

/// An OID written as text in a test; a malformed literal is a test failure.
func oid(_ dotted: String, sourceLocation: SourceLocation = #_sourceLocation) -> ASN1ObjectIdentifier {
    guard let oid = ASN1ObjectIdentifier(dotted: dotted) else {
        Issue.record("'\(dotted)' is not a dotted OID", sourceLocation: sourceLocation)
        return ASN1ObjectIdentifier(0, 0)
    }
    return oid
}

/// A three-level RSA-2048 PKI shaped like Apple's receipt chain:
/// root (2020-2040) → intermediate with 6.2.1 (2021-2035, pathlen 0) → leaf with 6.11.1 (2024-2027).
struct TestPKI: Sendable {
    let rootKey: PrivateKey
    let root: Certificate
    let intermediateKey: PrivateKey
    let intermediate: Certificate
    let leafKey: PrivateKey
    let leaf: Certificate

    static let rootSubject = [("C", "US"), ("O", "RMStore Test"), ("OU", "Test Certification Authority"), ("CN", "RMStore Test Root CA")]
    static let intermediateSubject = [("C", "US"), ("O", "RMStore Test"), ("OU", "G1"), ("CN", "RMStore Test WWDR CA")]
    static let leafSubject = [("C", "US"), ("O", "RMStore Test"), ("CN", "RMStore Test Receipt Signing")]

    static let inside = utc(2025, 6, 1)

    static func makeRoot(key: PrivateKey, subject: [(String, String)] = rootSubject, serial: UInt64 = 1) throws(CryptoError) -> Certificate
    {
        var builder = CertificateBuilder(
            subject: subject, serialNumber: serial,
            notBefore: utc(2020, 1, 1), notAfter: utc(2040, 1, 1), publicKey: try key.publicKey)
        builder.basicConstraints = .ca()
        builder.keyUsage = [.keyCertSign, .cRLSign]
        return try builder.selfSigned(with: key)
    }

    static func makeIntermediate(
        key: PrivateKey, issuer: Certificate, issuerKey: PrivateKey, serial: UInt64 = 2,
        subject: [(String, String)] = intermediateSubject
    ) throws(CryptoError) -> Certificate {
        var builder = CertificateBuilder(
            subject: subject, serialNumber: serial,
            notBefore: utc(2021, 1, 1), notAfter: utc(2035, 1, 1), publicKey: try key.publicKey)
        builder.basicConstraints = .ca(pathLength: 0)
        builder.keyUsage = [.keyCertSign, .cRLSign]
        builder.customExtensions = [.marker(oid: AppleOID.wwdrIntermediate)]
        return try builder.issued(by: issuer, signingKey: issuerKey)
    }

    static func makeLeaf(
        key: PrivateKey, issuer: Certificate, issuerKey: PrivateKey, serial: UInt64 = 3,
        digest: DigestAlgorithm = .sha256
    ) throws(CryptoError) -> Certificate {
        var builder = CertificateBuilder(
            subject: leafSubject, serialNumber: serial,
            notBefore: utc(2024, 1, 1), notAfter: utc(2027, 1, 1), publicKey: try key.publicKey)
        builder.basicConstraints = .endEntity
        builder.keyUsage = [.digitalSignature]
        builder.digest = digest
        builder.customExtensions = [.marker(oid: AppleOID.receiptSigningLeaf)]
        return try builder.issued(by: issuer, signingKey: issuerKey)
    }

    static func make() throws(CryptoError) -> TestPKI {
        let rootKey = try PrivateKey.generateRSA(bits: 2048)
        let root = try makeRoot(key: rootKey)
        let intermediateKey = try PrivateKey.generateRSA(bits: 2048)
        let intermediate = try makeIntermediate(key: intermediateKey, issuer: root, issuerKey: rootKey)
        let leafKey = try PrivateKey.generateRSA(bits: 2048)
        let leaf = try makeLeaf(key: leafKey, issuer: intermediate, issuerKey: intermediateKey)
        return TestPKI(
            rootKey: rootKey, root: root, intermediateKey: intermediateKey, intermediate: intermediate,
            leafKey: leafKey, leaf: leaf)
    }

    private static let cached = Result { () throws(CryptoError) -> TestPKI in try make() }

    /// One PKI shared by every test in the process (RSA key generation is the slow part).
    static func shared() throws -> TestPKI { try cached.get() }
}
