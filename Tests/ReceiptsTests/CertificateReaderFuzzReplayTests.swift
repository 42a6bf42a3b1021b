import CryptoBaselines
import Foundation
import FuzzTargets
import Internals
import ReceiptCrypto
import TestSupport
import Testing

/// The `certificate` and `public-key` fuzz targets' oracles (ReceiptCrypto's own certificate
/// reader and key import against `d2i_X509` and `d2i_PUBKEY`) on their corpus and on a few
/// thousand seeded mutations of it, so that `swift test` exercises them without libFuzzer.
@Suite struct CertificateReaderFuzzReplayTests {
    static func corpus(_ name: String) -> [[UInt8]] { FuzzCorpusReplayTests.files(name) }

    /// One mutation of `input`: a bit flipped, a byte replaced by a random or boundary value, a
    /// byte inserted or removed, or the input truncated.
    static func mutate(_ input: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        guard !input.isEmpty else { return [UInt8.random(in: 0...255, using: &random)] }
        var bytes = input
        let index = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0: bytes[index] ^= 1 << UInt8.random(in: 0...7, using: &random)
        case 1: bytes[index] = UInt8.random(in: 0...255, using: &random)
        case 2: bytes[index] = [0x00, 0x01, 0x7F, 0x80, 0xFF].randomElement(using: &random) ?? 0
        case 3: bytes.insert(UInt8.random(in: 0...255, using: &random), at: index)
        case 4: bytes.remove(at: index)
        default: bytes.removeSubrange(index...)
        }
        return bytes
    }

    /// `count` mutants of the seeds through `oracle` (a disagreement is a test failure), each
    /// one it passes also through the fuzz target, whose API-level oracle stops the process on a
    /// violation. Returns how many mutants `accepts` (the own code read them, so the oracle
    /// compared rather than skipped).
    static func checkMutants(
        of seeds: [[UInt8]], count: Int, seed: UInt64, target: String, oracle: ([UInt8]) -> String?, accepts: ([UInt8]) -> Bool
    ) throws -> Int {
        let run = try #require(FuzzTargets.target(named: target)).run
        var random = SplitMix64(seed: seed)
        var accepted = 0
        for round in 0..<count {
            var input = seeds[round % seeds.count]
            for _ in 0...Int.random(in: 0...2, using: &random) { input = mutate(input, &random) }
            let disagreement = oracle(input)
            #expect(disagreement == nil, "\(target) mutant \(round): \(disagreement ?? "")")
            if accepts(input) { accepted += 1 }
            if disagreement == nil { run(input) }
        }
        return accepted
    }

    @Test func certificateReaderAgreesWithOpenSSLOnMutants() throws {
        let corpus = Self.corpus("certificate")
        // Every input agrees; the seeds are those the own reader accepts (the real and test
        // certificates, and what libFuzzer kept), so that the oracle compares fields.
        for input in corpus { #expect(OwnReaderDifferential.certificateDisagreement(input) == nil) }
        let seeds = corpus.filter { CertificateFields.parse($0) != nil }
        #expect(seeds.count >= 30)
        let accepted = try Self.checkMutants(
            of: seeds, count: 3_000, seed: 26, target: "certificate", oracle: OwnReaderDifferential.certificateDisagreement,
            accepts: { CertificateFields.parse($0) != nil })
        // Mutations of signatures, serials and string contents keep a certificate readable: the
        // oracle must have compared many of them, not only refusals.
        #expect(accepted >= 300, "only \(accepted) mutants were accepted by the own reader")
    }

    @Test func keyImportAgreesWithOpenSSLOnMutants() throws {
        let seeds = Self.corpus("public-key")
        #expect(seeds.count >= 30)
        let imported = seeds.filter { PublicKeyImport.key(subjectPublicKeyInfo: $0[...]) != nil }
        #expect(imported.count >= 30, "EC P-256/P-384/P-521 and RSA seeds are imported")
        for seed in seeds { #expect(OwnReaderDifferential.publicKeyDisagreement(seed) == nil) }
        let accepted = try Self.checkMutants(
            of: imported, count: 2_000, seed: 26, target: "public-key", oracle: OwnReaderDifferential.publicKeyDisagreement,
            accepts: { PublicKeyImport.key(subjectPublicKeyInfo: $0[...]) != nil })
        // Mutated RSA moduli stay importable; mutated EC points mostly leave the curve.
        #expect(accepted >= 100, "only \(accepted) mutants were imported")
    }

    /// The disagreements the oracles found (Fuzz/corpus/regressions, certificate-* and
    /// public-key-*): each is now refused by the own reader or the key import, which leaves it
    /// to OpenSSL.
    @Test func foundDisagreementsAreLeftToOpenSSL() {
        let directory = FuzzCorpusReplayTests.corpus.appendingPathComponent("regressions")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
        let certificates = names.filter { $0.hasPrefix("certificate-") }
        let keys = names.filter { $0.hasPrefix("public-key-") }
        #expect(certificates.count >= 4 && keys.count >= 1)
        func bytes(_ name: String) -> [UInt8] {
            FileManager.default.contents(atPath: directory.appendingPathComponent(name).path).map { [UInt8]($0) } ?? []
        }
        for name in certificates { #expect(CertificateFields.parse(bytes(name)) == nil, "\(name)") }
        for name in keys { #expect(PublicKeyImport.key(subjectPublicKeyInfo: bytes(name)[...]) == nil, "\(name)") }
    }

    /// keyUsage is a DER BIT STRING: unused bits must be zero. OpenSSL masks them off, so a reader
    /// that counted them would see keyCertSign where OpenSSL sees none.
    @Test func keyUsageWithUnusedBitsSetIsLeftToOpenSSL() throws {
        let seeds = Self.corpus("certificate")
        var found = 0
        for seed in seeds {
            guard let fields = CertificateFields.parse(seed),
                let usage = fields.extensions.first(where: { seed[$0.oid].elementsEqual([0x55, 0x1D, 0x0F]) }),
                usage.value.count == 4
            else { continue }
            // 03 02 <unused> <bits>: set the lowest unused bit.
            let unused = seed[usage.value.lowerBound + 2]
            guard unused > 0 else { continue }
            var mutant = seed
            mutant[usage.value.lowerBound + 3] |= 1 << (unused - 1)
            #expect(CertificateFields.parse(mutant) == nil)
            #expect(OwnReaderDifferential.certificateDisagreement(mutant) == nil)
            found += 1
        }
        #expect(found > 0)
    }
}

/// `NameDifference` (chain validation's fast path's shortcut before `X509_NAME_cmp`) never finds
/// names different that OpenSSL finds equal, on seeded pairs of names that differ by case, white
/// space, string type, value, attribute type or RDN structure.
@Suite struct NameDifferenceTests {
    static let types: [[UInt8]] = [[0x55, 0x04, 0x03], [0x55, 0x04, 0x0A], [0x55, 0x04, 0x0B], [0x55, 0x04, 0x06]]
    static let values = ["Apple Root CA", "apple root ca", "  APPLE   Root CA ", "Apple\tRoot\nCA", "Apple Root CB", "US", "us", "", " "]
    static let tags: [UInt8] = [0x0C, 0x13, 0x14, 0x16, 0x1A, 0x12, 0x1E]

    struct Attribute {
        var type: [UInt8]
        var tag: UInt8
        var value: String
    }

    static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        let length: [UInt8] =
            content.count < 0x80
            ? [UInt8(content.count)]
            : content.count < 0x100 ? [0x81, UInt8(content.count)] : [0x82, UInt8(content.count >> 8), UInt8(content.count & 0xFF)]
        return [tag] + length + content
    }

    static func encode(_ rdns: [[Attribute]]) -> [UInt8] {
        element(
            0x30,
            rdns.flatMap { rdn in
                element(
                    0x31,
                    rdn.flatMap { attribute in
                        let bytes =
                            attribute.tag == 0x1E
                            ? attribute.value.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } : Array(attribute.value.utf8)
                        return element(0x30, element(0x06, attribute.type) + element(attribute.tag, bytes))
                    })
            })
    }

    static func randomAttribute(_ random: inout SplitMix64) -> Attribute {
        Attribute(
            type: types.randomElement(using: &random) ?? [], tag: tags.randomElement(using: &random) ?? 0x0C,
            value: values.randomElement(using: &random) ?? "")
    }

    /// `rdns` changed in one way.
    static func variant(_ rdns: [[Attribute]], _ random: inout SplitMix64) -> [[Attribute]] {
        var result = rdns
        let index = Int.random(in: 0..<result.count, using: &random)
        let inner = Int.random(in: 0..<result[index].count, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0: result[index][inner].value = result[index][inner].value.uppercased()
        case 1: result[index][inner].value = " " + result[index][inner].value.replacingOccurrences(of: " ", with: " \t ") + "  "
        case 2: result[index][inner].tag = tags.randomElement(using: &random) ?? 0x13
        case 3: result[index][inner].value = values.randomElement(using: &random) ?? ""
        case 4: result[index][inner].type = types.randomElement(using: &random) ?? []
        default:
            if Bool.random(using: &random) {
                result[index].append(randomAttribute(&random))
            } else {
                result.append([randomAttribute(&random)])
            }
        }
        return result
    }

    @Test func neverContradictsOpenSSL() {
        var random = SplitMix64(seed: 26)
        var certain = 0
        var uncertainOrEqual = 0
        for round in 0..<3_000 {
            let rdns = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                (0..<(Int.random(in: 0..<8, using: &random) == 0 ? 2 : 1)).map { _ in Self.randomAttribute(&random) }
            }
            let lhs = Self.encode(rdns)
            let rhs = Self.encode(Self.variant(rdns, &random))
            let disagreement = OwnReaderDifferential.nameDisagreement(lhs, rhs)
            #expect(disagreement == nil, "pair \(round): \(disagreement ?? "") \(Hex.encode(lhs)) \(Hex.encode(rhs))")
            if NameDifference.certain(lhs[...], rhs[...]) { certain += 1 } else { uncertainOrEqual += 1 }
        }
        // Both answers are exercised: the shortcut decides most pairs, OpenSSL the rest.
        #expect(certain >= 500 && uncertainOrEqual >= 500, "certain \(certain), left to OpenSSL \(uncertainOrEqual)")
    }

    @Test func caseAndWhiteSpaceAreLeftToOpenSSL() {
        let name = Self.encode([[Attribute(type: [0x55, 0x04, 0x03], tag: 0x13, value: "Apple Root CA")]])
        let folded = Self.encode([[Attribute(type: [0x55, 0x04, 0x03], tag: 0x0C, value: " apple  ROOT\tca ")]])
        let other = Self.encode([[Attribute(type: [0x55, 0x04, 0x03], tag: 0x13, value: "Apple Root CB")]])
        #expect(!NameDifference.certain(name[...], folded[...]))
        #expect(NameDifference.certain(name[...], other[...]))
        #expect(
            NameDifference.certain(name[...], Self.encode([[Attribute(type: [0x55, 0x04, 0x0A], tag: 0x13, value: "Apple Root CA")]])[...]))
    }
}
