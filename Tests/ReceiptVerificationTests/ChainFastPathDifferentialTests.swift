import ASN1
import Foundation
import JWS
import ReceiptCrypto
import ReceiptSigning
import Receipts
import TestSupport
import Testing

/// Issue 26: chain validation without OpenSSL's certificate parser (`ChainFastPath`, taken by
/// `TrustStore.validate` for certificates read by the package's own reader) against OpenSSL's
/// `X509_verify_cert` (`TrustStore.validateWithOpenSSL`, the oracle), on every test PKI and
/// forgery shape and on every real chain in TestReceipts and ../shared/vectors. The fast path
/// only ever says "valid": whenever it does, OpenSSL must say valid with the same chain; and it
/// must say so exactly when OpenSSL does, except for the shapes it leaves to OpenSSL by design
/// (marked `leftToOpenSSL`).
@Suite("Chain fast path agrees with X509_verify_cert")
struct ChainFastPathDifferentialTests {
    struct Case {
        var name: String
        var leaf: Certificate
        var intermediates: [Certificate]
        var anchors: [Certificate]
        var times: [Date]
        var maximumIntermediates = 8
        /// A valid chain the fast path declines by design (OpenSSL decides it).
        var leftToOpenSSL = false
    }

    /// The disagreements of one case, as sentences; empty when the fast path and OpenSSL agree.
    static func disagreements(_ test: Case) throws -> [String] {
        func deferred(_ certificate: Certificate) throws -> Certificate { try Certificate(deferringOpenSSL: certificate.derEncoded) }
        func eager(_ certificate: Certificate) throws -> Certificate { try Certificate(derEncoded: certificate.derEncoded) }
        var fastStore = TrustStore(anchors: try test.anchors.map(deferred))
        fastStore.maximumIntermediates = test.maximumIntermediates
        var oracleStore = TrustStore(anchors: try test.anchors.map(eager))
        oracleStore.maximumIntermediates = test.maximumIntermediates
        var found: [String] = []
        for time in test.times {
            let fast = fastStore.fastPathChain(
                leaf: try deferred(test.leaf), intermediates: try test.intermediates.map(deferred), at: time)
            let oracle = oracleStore.validateWithOpenSSL(
                leaf: try eager(test.leaf), intermediates: try test.intermediates.map(eager), at: time)
            let at = "\(test.name) at \(time.timeIntervalSince1970)"
            if let fast {
                if oracle.chain != fast { found.append("\(at): the fast path accepted, OpenSSL says \(oracle)") }
            } else if oracle.isValid, !test.leftToOpenSSL, !outsideFastPath(oracle.chain ?? []) {
                found.append("\(at): OpenSSL accepts, the fast path declined")
            } else if test.leftToOpenSSL, !oracle.isValid {
                found.append("\(at): marked leftToOpenSSL, but OpenSSL rejects it")
            }
            // The public entry point gives OpenSSL's verdict either way.
            let combined = fastStore.validate(leaf: try deferred(test.leaf), intermediates: try test.intermediates.map(deferred), at: time)
            if combined.isValid != oracle.isValid || (combined.isValid && combined.chain != oracle.chain) {
                found.append("\(at): TrustStore.validate says \(combined), OpenSSL \(oracle)")
            }
            if let failure = oracle.failure, combined.failure?.reason != failure.reason {
                found.append("\(at): failure reasons differ: \(String(describing: combined.failure?.reason)) vs \(failure.reason)")
            }
        }
        return found
    }

    /// Whether a valid chain has a shape the fast path leaves to OpenSSL by design: a certificate
    /// below the anchor signed with anything but ecdsa-with-SHA256/384 or
    /// sha256/384WithRSAEncryption (in the real data, SHA-1), or a version 1 certificate (the own
    /// reader reads version 3 only; app-store-server-library's mock root is version 1).
    static func outsideFastPath(_ chain: [Certificate]) -> Bool {
        let verified: Set<SignatureAlgorithm> = [.ecdsa(.sha256), .ecdsa(.sha384), .rsaPKCS1v15(.sha256), .rsaPKCS1v15(.sha384)]
        return chain.dropLast().contains { $0.signatureAlgorithm.map { !verified.contains($0) } ?? true }
            || chain.contains { $0.version != 3 }
    }

    /// Around every validity boundary of `certificates`, and inside.
    static func times(_ certificates: [Certificate], inside: Date? = nil) -> [Date] {
        var times: [Date] = inside.map { [$0] } ?? []
        for certificate in certificates {
            times += [
                certificate.notBefore.addingTimeInterval(-1), certificate.notBefore, certificate.notAfter.addingTimeInterval(-1),
                certificate.notAfter, certificate.notAfter.addingTimeInterval(0.5),
            ]
        }
        return times
    }

    static func syntheticCases() throws -> [Case] {
        var cases: [Case] = []
        for (name, pki) in [("apple RSA", try PKIs.apple.get()), ("JWS EC", try PKIs.jws.get()), ("weak RSA-1024", try PKIs.weak.get())] {
            let chain = [pki.leaf, pki.intermediate, pki.root]
            cases.append(Case(name: name, leaf: pki.leaf, intermediates: [pki.intermediate], anchors: [pki.root], times: times(chain)))
            cases.append(
                Case(name: "\(name), no intermediate", leaf: pki.leaf, intermediates: [], anchors: [pki.root], times: times(chain)))
            cases.append(
                Case(
                    name: "\(name), intermediate as anchor", leaf: pki.leaf, intermediates: [], anchors: [pki.intermediate],
                    times: times(chain)))
            cases.append(
                Case(
                    name: "\(name), wrong anchor", leaf: pki.leaf, intermediates: [pki.intermediate], anchors: [try PKIs.other.get().root],
                    times: times(chain)))
            cases.append(
                Case(
                    name: "\(name), limit 0", leaf: pki.leaf, intermediates: [pki.intermediate], anchors: [pki.root], times: times(chain),
                    maximumIntermediates: 0))
        }
        let jws = try PKIs.jws.get()
        let rogue = try PKIs.rogueJWS.get()
        cases.append(
            Case(
                name: "rogue root with G3's name", leaf: rogue.leaf, intermediates: [rogue.intermediate, rogue.root],
                anchors: [try Fixtures.certificate("AppleRootCA-G3.cer"), jws.root], times: times([rogue.leaf])))
        let expiring = try PKIs.expiringLeaf.get()
        cases.append(
            Case(
                name: "expired leaf", leaf: expiring.leaf, intermediates: [expiring.intermediate], anchors: [expiring.root],
                times: times([expiring.leaf], inside: utc(2025, 6, 1))))
        let storeKit = try PKIs.storeKit.get()
        cases.append(
            Case(
                name: "StoreKit certificate as its own anchor", leaf: storeKit.certificate, intermediates: [],
                anchors: [storeKit.certificate],
                times: [utc(2025, 6, 1)], leftToOpenSSL: true))
        cases += try forgeryCases()
        return cases
    }

    /// The shapes of ChainTests and the forgery suites, on the fixed RSA test PKI.
    static func forgeryCases() throws -> [Case] {
        let pki = try FixedTestPKI.shared()
        let inside = [FixedTestPKI.inside]
        var cases: [Case] = []
        func add(_ name: String, _ leaf: Certificate, _ intermediates: [Certificate], anchors: [Certificate]? = nil, left: Bool = false) {
            cases.append(
                Case(
                    name: name, leaf: leaf, intermediates: intermediates, anchors: anchors ?? [pki.root], times: inside, leftToOpenSSL: left
                ))
        }
        add("fixed PKI", pki.leaf, [pki.intermediate])
        add(
            "fixed PKI, noisy candidates", pki.leaf,
            [try FixedTestPKI.makeRoot(key: pki.leafKey, subject: [("CN", "Stranger")]), pki.root, pki.intermediate])
        // Impostor root with the anchor's subject and another key.
        let impostorKey = try PrivateKey.generateP256()
        let impostorRoot = try FixedTestPKI.makeRoot(key: impostorKey)
        let impostorIntermediateKey = try PrivateKey.generateP256()
        let impostorIntermediate = try FixedTestPKI.makeIntermediate(
            key: impostorIntermediateKey, issuer: impostorRoot, issuerKey: impostorKey)
        let impostorLeaf = try FixedTestPKI.makeLeaf(
            key: impostorIntermediateKey, issuer: impostorIntermediate, issuerKey: impostorIntermediateKey)
        add("impostor root carried", impostorLeaf, [impostorIntermediate, impostorRoot])
        add("impostor root bare", impostorLeaf, [impostorIntermediate])
        add("impostor root trusted", impostorLeaf, [impostorIntermediate], anchors: [impostorRoot])
        // A namesake intermediate (same name, other key), with and without key identifiers.
        let twinKey = try PrivateKey.generateP256()
        let twin = try FixedTestPKI.makeIntermediate(key: twinKey, issuer: pki.root, issuerKey: pki.rootKey, serial: 99)
        let twinLeaf = try FixedTestPKI.makeLeaf(key: twinKey, issuer: twin, issuerKey: twinKey)
        add("namesake intermediate", twinLeaf, [pki.intermediate])
        add("namesake intermediate, real issuer present", twinLeaf, [pki.intermediate, twin])
        var anonymous = CertificateBuilder(
            subject: FixedTestPKI.leafSubject, serialNumber: 5, notBefore: utc(2024, 1, 1), notAfter: utc(2027, 1, 1),
            publicKey: try twinKey.publicKey)
        anonymous.includeKeyIdentifiers = false
        add("namesake intermediate, no key identifiers", try anonymous.issued(by: twin, signingKey: twinKey), [pki.intermediate])
        // CA:FALSE issuer, path length, self-signed leaf.
        let child = try FixedTestPKI.makeLeaf(key: twinKey, issuer: pki.leaf, issuerKey: pki.leafKey)
        add("issued by a non-CA", child, [pki.leaf, pki.intermediate])
        let sub = try FixedTestPKI.makeIntermediate(
            key: twinKey, issuer: pki.intermediate, issuerKey: pki.intermediateKey, serial: 10, subject: [("CN", "Sub CA")])
        add(
            "below a pathlen-0 intermediate", try FixedTestPKI.makeLeaf(key: twinKey, issuer: sub, issuerKey: twinKey),
            [sub, pki.intermediate])
        add("self-signed leaf", try FixedTestPKI.makeRoot(key: twinKey, subject: [("CN", "Lonely")]), [])
        // Issuers shaped by hand: keyUsage, basicConstraints, extensions, digests.
        func intermediate(_ configure: (inout CertificateBuilder) -> Void) throws -> Certificate {
            var builder = CertificateBuilder(
                subject: [("CN", "Shaped CA")], serialNumber: 20, notBefore: utc(2021, 1, 1), notAfter: utc(2035, 1, 1),
                publicKey: try twinKey.publicKey)
            builder.basicConstraints = .ca(pathLength: 0)
            builder.keyUsage = [.keyCertSign]
            configure(&builder)
            return try builder.issued(by: pki.root, signingKey: pki.rootKey)
        }
        func leaf(under issuer: Certificate, _ configure: (inout CertificateBuilder) -> Void = { _ in }) throws -> Certificate {
            var builder = CertificateBuilder(
                subject: [("CN", "Shaped leaf")], serialNumber: 21, notBefore: utc(2024, 1, 1), notAfter: utc(2027, 1, 1),
                publicKey: try pki.leafKey.publicKey)
            builder.basicConstraints = .endEntity
            builder.keyUsage = [.digitalSignature]
            configure(&builder)
            return try builder.issued(by: issuer, signingKey: twinKey)
        }
        let unknownCritical = CertificateExtension(
            oid: ASN1ObjectIdentifier(1, 3, 6, 1, 4, 1, 99_999, 1), critical: true, value: [0x05, 0x00])
        let unknownPlain = CertificateExtension(
            oid: ASN1ObjectIdentifier(1, 3, 6, 1, 4, 1, 99_999, 1), critical: false, value: [0x05, 0x00])
        let shapes: [(String, (inout CertificateBuilder) -> Void, Bool)] = [
            ("an EC intermediate", { _ in }, false),
            ("intermediate keyUsage without keyCertSign", { $0.keyUsage = [.digitalSignature] }, false),
            ("intermediate without keyUsage", { $0.keyUsage = nil }, false),
            ("intermediate without basicConstraints", { $0.basicConstraints = nil }, false),
            ("intermediate with cA FALSE", { $0.basicConstraints = .endEntity }, false),
            ("intermediate with an unknown critical extension", { $0.customExtensions = [unknownCritical] }, false),
            ("intermediate with an unknown extension", { $0.customExtensions = [unknownPlain] }, true),
            (
                "intermediate with an extended key usage", { $0.extendedKeyUsageOIDs = [ASN1ObjectIdentifier(1, 3, 6, 1, 5, 5, 7, 3, 1)] },
                false
            ),
            ("intermediate valid only from 2026", { $0.notBefore = utc(2026, 1, 1) }, false),
            ("intermediate expired in 2025", { $0.notAfter = utc(2025, 1, 1) }, false),
        ]
        for (name, configure, left) in shapes {
            let shaped = try intermediate(configure)
            add(name, try leaf(under: shaped), [shaped], left: left)
        }
        let plain = try intermediate { _ in }
        let leafShapes: [(String, (inout CertificateBuilder) -> Void, Bool)] = [
            ("leaf with an unknown critical extension", { $0.customExtensions = [unknownCritical] }, false),
            ("leaf keyUsage keyCertSign only", { $0.keyUsage = [.keyCertSign] }, false),
            (
                "leaf without keyUsage or basicConstraints",
                { builder in
                    builder.keyUsage = nil
                    builder.basicConstraints = nil
                }, false
            ),
            ("leaf that is a CA", { $0.basicConstraints = .ca() }, false),
            ("leaf signed with SHA-1", { $0.digest = .sha1 }, false),
            ("leaf signed with SHA-384", { $0.digest = .sha384 }, false),
            ("leaf not yet valid", { $0.notBefore = utc(2026, 1, 1) }, false),
        ]
        for (name, configure, left) in leafShapes { add(name, try leaf(under: plain, configure), [plain], left: left) }
        // A chain deeper than the intermediate limit allows.
        var deep: [Certificate] = []
        var issuer = pki.root
        var issuerKey = pki.rootKey
        for level in 0..<3 {
            var builder = CertificateBuilder(
                subject: [("CN", "Level \(level)")], serialNumber: UInt64(30 + level), notBefore: utc(2021, 1, 1),
                notAfter: utc(2035, 1, 1),
                publicKey: try twinKey.publicKey)
            builder.basicConstraints = .ca()
            builder.keyUsage = [.keyCertSign]
            let next = try builder.issued(by: issuer, signingKey: issuerKey)
            deep.insert(next, at: 0)
            issuer = next
            issuerKey = twinKey
        }
        let deepLeaf = try leaf(under: issuer)
        add("three intermediates", deepLeaf, deep)
        cases.append(
            Case(
                name: "three intermediates, limit 2", leaf: deepLeaf, intermediates: deep, anchors: [pki.root], times: inside,
                maximumIntermediates: 2))
        return cases
    }

    @Test("Every test PKI and forgery shape: the fast path accepts exactly what OpenSSL accepts")
    func syntheticChains() throws {
        let cases = try Self.syntheticCases()
        #expect(cases.count > 40)
        var problems: [String] = []
        for test in cases { problems += try Self.disagreements(test) }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// A version-1 certificate (which the own reader leaves to OpenSSL) named like `namesake`,
    /// made by the `openssl` command line, valid for a day from now.
    static func version1Namesake(of namesake: Certificate) throws -> Certificate {
        let directory = temporaryDirectory("v1-namesake")
        try Data(namesake.derEncoded).write(to: directory.appendingPathComponent("namesake.der"))
        let printed = directory.appendingPathComponent("subject.txt")
        let printing = try spawnAndWait(
            "/usr/bin/openssl", ["x509", "-inform", "DER", "-in", "namesake.der", "-noout", "-subject", "-nameopt", "compat"],
            directory: directory, output: printed)
        try #require(printing == 0)
        // `subject=/C=US/O=…/CN=…`, in the name's own order.
        let subject = try String(contentsOf: printed, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "subject=", with: "")
        try #require(subject.hasPrefix("/"), "\(subject)")
        for arguments in [
            ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "key.pem"],
            ["req", "-new", "-key", "key.pem", "-subj", subject, "-out", "request.csr"],
            ["x509", "-req", "-in", "request.csr", "-signkey", "key.pem", "-days", "1", "-outform", "DER", "-out", "v1.der"],
        ] {
            let status = try spawnAndWait(
                "/usr/bin/openssl", arguments, directory: directory, output: directory.appendingPathComponent("openssl.log"))
            try #require(status == 0, "openssl \(arguments.joined(separator: " "))")
        }
        let der = try [UInt8](Data(contentsOf: directory.appendingPathComponent("v1.der")))
        try #require(der.count > 20)
        return try Certificate(derEncoded: der)
    }

    /// An untrusted candidate the own reader cannot read, listed before the real intermediate and
    /// named like it: OpenSSL's issuer search takes it first and the chain fails; the fast path
    /// must not skip it and accept the chain through the real intermediate.
    @Test func anUnreadableCandidateIsLeftToOpenSSL() throws {
        let pki = try PKIs.jws.get()
        let namesake = try Self.version1Namesake(of: pki.intermediate)
        let now = Date()
        let test = Case(
            name: "v1 namesake before the intermediate", leaf: pki.leaf, intermediates: [namesake, pki.intermediate], anchors: [pki.root],
            times: [now])
        let problems = try Self.disagreements(test)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        // The shape matters only if OpenSSL does pick the namesake: it rejects the chain.
        let oracle = TrustStore(anchors: [pki.root]).validateWithOpenSSL(
            leaf: pki.leaf, intermediates: [namesake, pki.intermediate], at: now)
        #expect(!oracle.isValid, "\(oracle)")
    }

    /// Every JWS x5c chain and receipt certificate set in TestReceipts and ../shared/vectors.
    static func realChains() throws -> [(name: String, certificates: [Certificate])] {
        let roots = [Fixtures.root, Fixtures.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/vectors")]
        var chains: [(String, [Certificate])] = []
        var seen: Set<[[UInt8]]> = []
        let tokenPattern = try NSRegularExpression(pattern: "eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+")
        for root in roots {
            guard let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.fileSizeKey]) else { continue }
            for case let url as URL in files {
                guard let size = try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize, size > 0, size < 2_000_000,
                    let data = try? Data(contentsOf: url)
                else { continue }
                let bytes = [UInt8](data)
                var sets: [[[UInt8]]] = []
                if let envelope = try? ReceiptEnvelope(bytes) { sets.append(envelope.certificates.map { Array($0) }) }
                if let text = String(data: data, encoding: .utf8) {
                    let range = NSRange(text.startIndex..., in: text)
                    for match in tokenPattern.matches(in: text, range: range).prefix(200) {
                        guard let tokenRange = Range(match.range, in: text), let jws = try? CompactJWS(String(text[tokenRange])),
                            let chain = jws.header.certificateChain
                        else { continue }
                        sets.append(chain)
                    }
                }
                for set in sets where !set.isEmpty && seen.insert(set).inserted {
                    let certificates = set.compactMap { try? Certificate(derEncoded: $0) }
                    if certificates.count == set.count { chains.append((url.lastPathComponent, certificates)) }
                }
            }
        }
        return chains
    }

    @Test("Every real chain: the fast path accepts exactly what OpenSSL accepts, at every validity boundary")
    func realChainsAgree() throws {
        let chains = try Self.realChains()
        let appleRoots = try ["AppleIncRootCertificate.cer", "AppleRootCA-G2.cer", "AppleRootCA-G3.cer"].map {
            try Fixtures.certificate($0)
        }
        var problems: [String] = []
        var acceptedByFastPath = 0
        for (name, certificates) in chains {
            // Each certificate as the leaf, the others as candidates; Apple's roots and the set's
            // own self-issued certificates as anchors.
            let ownRoots = certificates.filter { $0.subject == $0.issuer }
            for leaf in certificates where leaf.subject != leaf.issuer {
                let test = Case(
                    name: "\(name) leaf \(leaf.subject)", leaf: leaf, intermediates: certificates.filter { $0 != leaf },
                    anchors: appleRoots + ownRoots, times: Self.times(certificates))
                problems += try Self.disagreements(test)
                for time in test.times
                where TrustStore(anchors: try test.anchors.map { try Certificate(deferringOpenSSL: $0.derEncoded) }).fastPathChain(
                    leaf: try Certificate(deferringOpenSSL: leaf.derEncoded), intermediates: test.intermediates, at: time) != nil
                {
                    acceptedByFastPath += 1
                }
            }
        }
        #expect(chains.count >= 20, "found \(chains.count) real chains")
        #expect(acceptedByFastPath > 0)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("The first verification of Apple's chains takes the fast path")
    func appleChainsTakeTheFastPath() throws {
        let root = try Certificate(deferringOpenSSL: try Fixtures.appleRoot().derEncoded)
        let intermediate = try Certificate(deferringOpenSSL: try Fixtures.appleWWDRG5().derEncoded)
        let leaf = try Certificate(deferringOpenSSL: try Fixtures.appleLeaf2024().derEncoded)
        let chain = TrustStore(anchors: [root]).fastPathChain(leaf: leaf, intermediates: [intermediate], at: Fixtures.receiptCreationDate)
        #expect(chain == [leaf, intermediate, root])
        // What the certificates read by the own reader report matches OpenSSL's reading.
        for certificate in [root, intermediate, leaf] {
            let openSSL = try Certificate(derEncoded: certificate.derEncoded)
            #expect(certificate.subject == openSSL.subject)
            #expect(certificate.issuer == openSSL.issuer)
            #expect(certificate.serialNumber == openSSL.serialNumber)
            #expect(certificate.notBefore == openSSL.notBefore)
            #expect(certificate.notAfter == openSSL.notAfter)
            #expect(certificate.extensionOIDs == openSSL.extensionOIDs)
            #expect(certificate.isCA == openSSL.isCA)
            #expect(certificate.pathLengthConstraint == openSSL.pathLengthConstraint)
            #expect(certificate.keyUsage == openSSL.keyUsage)
            #expect(certificate.signatureAlgorithmOID == openSSL.signatureAlgorithmOID)
            #expect(try certificate.publicKey == openSSL.publicKey)
            #expect(try certificate.publicKey.kind == openSSL.publicKey.kind)
            #expect(certificate.isSelfSigned == openSSL.isSelfSigned)
        }
    }
}
