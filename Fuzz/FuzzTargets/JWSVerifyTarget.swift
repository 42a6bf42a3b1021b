import Foundation
import Internals
import JWS
import ReceiptCrypto
import ReceiptVerification

/// The `jws-verify` target: JWS verification of arbitrary bytes against anchors whose signing
/// leaves are known, with the oracle "a valid verdict only ever reports a payload that the
/// anchored leaf signed".
///
/// The fuzzer cannot make new ES256 signatures, so every signing input a leaf ever signed is known
/// in advance: those of the tokens in `TestReceipts/jws` and of the seeds signed with the fixed
/// test PKI in `Fuzz/jws-verify` (nested tokens included), each kept only when its signature
/// verifies with its own `x5c[0]` key through a path independent of the verifier's (the DER
/// signature is built here, not by ReceiptCrypto's raw-ECDSA code). A valid verdict must then
/// (1) end at an anchor whose leaf is known to chain to it (Apple's production leaves to Apple
/// Root CA - G3, the fixed PKI's leaf to its root, each Xcode certificate to itself), and
/// (2) report a signing input that this leaf signed; (3) with a bundle expectation, report that
/// bundle.
enum JWSVerifyFuzz {
    /// The anchors, verifiers and oracle tables, built once.
    struct Setup: Sendable {
        let appStore: Verifiers
        let xcode: Verifiers
        /// (leaf DER, anchor DER) pairs a valid chain may have.
        let knownPairs: Set<[UInt8]>
        /// Leaf DER → the signing inputs it signed.
        let signedBy: [[UInt8]: Set<[UInt8]>]
    }

    /// One verifier per payload kind, sharing anchors and caches.
    struct Verifiers: Sendable {
        let transactions: JWSTransactionVerifier
        let renewals: JWSRenewalInfoVerifier
        let appTransactions: AppTransactionVerifier
        let notifications: NotificationVerifier

        init(anchors: [Certificate], policy: VerificationPolicy) {
            let cache = ChainCache(capacity: 64)
            let headers = JWSHeaderCache()
            transactions = JWSTransactionVerifier(anchors: anchors, policy: policy, cache: cache, headerCache: headers)
            renewals = JWSRenewalInfoVerifier(anchors: anchors, policy: policy, cache: cache, headerCache: headers)
            appTransactions = AppTransactionVerifier(anchors: anchors, policy: policy, cache: cache, headerCache: headers)
            notifications = NotificationVerifier(anchors: anchors, policy: policy, cache: cache, headerCache: headers)
        }
    }

    /// The bundle id the fixed PKI's seeds carry; the expectation half the inputs are checked with.
    static let seedBundle = "com.example.fuzz"

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func read(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: packageRoot.appendingPathComponent(relative).path).map { [UInt8]($0) }
    }

    /// Every regular file below `relative`.
    static func files(below relative: String) -> [[UInt8]] {
        let base = packageRoot.appendingPathComponent(relative)
        guard let enumerator = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var result: [[UInt8]] = []
        for case let path as String in enumerator {
            if let data = FileManager.default.contents(atPath: base.appendingPathComponent(path).path) { result.append([UInt8](data)) }
        }
        return result
    }

    static func certificate(_ relative: String) -> Certificate? {
        read(relative).flatMap { try? Certificate.load($0).first }
    }

    static func pair(_ leaf: [UInt8], _ anchor: [UInt8]) -> [UInt8] {
        // Length-prefixed so that no two pairs concatenate to the same bytes.
        let count = UInt32(leaf.count)
        return [UInt8(count >> 24), UInt8((count >> 16) & 0xFF), UInt8((count >> 8) & 0xFF), UInt8(count & 0xFF)] + leaf + anchor
    }

    static let setup: Setup? = {
        guard let fuzzRoot = certificate("Fuzz/jws-verify/root.pem"), let fuzzLeaf = certificate("Fuzz/jws-verify/leaf.pem"),
            let fuzzXcode = certificate("Fuzz/jws-verify/xcode-jws.pem"), let appleG3 = try? BundledAnchors.appleRootCAG3,
            let appleRoots = try? TrustAnchors.appleRoots
        else { return nil }
        // The known tokens: real and test ones from TestReceipts/jws, and the fixed PKI's seeds.
        var tokens: [CompactJWS] = []
        for bytes in files(below: "TestReceipts/jws") + files(below: "Fuzz/jws-verify/tokens") {
            guard let input = try? SignedDataInput.detect(bytes) else { continue }
            tokens.append(input.jws)
            if let notification = try? input.jws.decodePayloadToVerify(as: NotificationPayload.self) {
                let nested = [
                    notification.data?.signedTransactionInfo?.token, notification.data?.signedRenewalInfo?.token,
                    notification.appData?.signedAppTransactionInfo?.token,
                ]
                tokens += nested.compactMap { $0.flatMap { try? CompactJWS($0) } }
            }
        }
        var signedBy: [[UInt8]: Set<[UInt8]>] = [:]
        var xcodeCertificates = [fuzzXcode]
        for token in tokens {
            guard let leafDER = token.header.certificateChain?.first, let leaf = try? Certificate(derEncoded: leafDER),
                let key = try? leaf.publicKey, let der = derSignature(token.signature),
                key.verify(signature: der, over: Array(token.signingInput), digest: .sha256)
            else { continue }
            signedBy[leafDER, default: []].insert(Array(token.signingInput))
            if token.header.certificateChain?.count == 1, leaf.subject.commonName == "StoreKit Testing in Xcode",
                !xcodeCertificates.contains(leaf)
            {
                xcodeCertificates.append(leaf)
            }
        }
        var knownPairs: Set<[UInt8]> = [pair(fuzzLeaf.derEncoded, fuzzRoot.derEncoded)]
        for name in [
            "leaf-ProdECC-MacAppStore-iTunesStore-ReceiptSigning-2021-08-25_2023-09-24.der",
            "leaf-ProdECC-MacAppStore-iTunesStore-ReceiptSigning-2023-09-12_2025-10-11.der",
            "Prod-ECC-Mac-App-Store-and-iTunes-Store-Receipt-Signing.der",
        ] {
            if let leaf = certificate("TestReceipts/jws/certs/" + name) { knownPairs.insert(pair(leaf.derEncoded, appleG3.derEncoded)) }
        }
        for certificate in xcodeCertificates { knownPairs.insert(pair(certificate.derEncoded, certificate.derEncoded)) }
        return Setup(
            appStore: Verifiers(anchors: appleRoots.certificates + [fuzzRoot], policy: .appStore),
            xcode: Verifiers(anchors: xcodeCertificates, policy: .xcode), knownPairs: knownPairs, signedBy: signedBy)
    }()

    /// `r ‖ s` as a DER `ECDSA-Sig-Value`, written here (independently of ReceiptCrypto's
    /// conversion); nil unless the signature is 64 bytes.
    static func derSignature(_ raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64 else { return nil }
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var body = Array(bytes.drop { $0 == 0 })
            if body.first.map({ $0 & 0x80 != 0 }) ?? true { body.insert(0, at: 0) }
            return [0x02, UInt8(body.count)] + body
        }
        let content = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(content.count)] + content
    }

    /// Verifies `bytes` under both policies as the kind the payload names (or as a transaction
    /// when it names none); inputs of odd length are checked with a bundle expectation too.
    static func run(_ bytes: [UInt8]) {
        guard let setup else { FuzzTargets.violated("the jws-verify fixtures (Fuzz/jws-verify, TestReceipts/jws) are missing") }
        let kind = (try? SignedDataInput.detect(bytes))?.map { AppStorePayloadKind.of(jsonPayload: $0.jws.unverifiedPayload) }
        let bundle = bytes.count % 2 == 1 ? seedBundle : nil
        let expectations = JWSExpectations(bundleIdentifier: bundle)
        for verifiers in [setup.appStore, setup.xcode] {
            switch kind {
            case .renewalInfo?:
                check(verifiers.renewals.verify(bytes, expecting: expectations), setup, bundle: bundle)
            case .appTransaction?:
                check(verifiers.appTransactions.verify(bytes, expecting: expectations), setup, bundle: bundle)
            case .notification?:
                check(verifiers.notifications.verify(bytes, expecting: expectations), setup, bundle: bundle)
            default:
                check(verifiers.transactions.verify(bytes, expecting: expectations), setup, bundle: bundle)
            }
        }
    }

    static func check<Value>(_ verdict: Verdict<SignedJWS<Value>>, _ setup: Setup, bundle: String?) {
        _ = verdict.checks.map(\.reason)
        guard verdict.isValid else { return }
        guard let signed = verdict.payload, let chain = verdict.chain, let leaf = chain.first, let anchor = chain.last else {
            FuzzTargets.violated("a valid JWS verdict without its payload or chain")
        }
        guard setup.knownPairs.contains(pair(leaf.derEncoded, anchor.derEncoded)) else {
            FuzzTargets.violated("a JWS verified through a leaf not known to chain to its anchor (\(leaf.subject))")
        }
        guard setup.signedBy[leaf.derEncoded]?.contains(Array(signed.jws.signingInput)) == true else {
            FuzzTargets.violated("a JWS payload the anchored leaf never signed verified as valid")
        }
        if let bundle, signed.value.claims.carried.contains(.bundleIdentifier), signed.value.claims.bundleIdentifier != bundle {
            FuzzTargets.violated("a JWS for another bundle met the bundle expectation")
        }
    }
}
