import Foundation
import Internals
import JSON
import JWS
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import TestSupport
import Testing

/// JWS on the one verification machinery: every real Apple token, Apple's test-CA and Xcode
/// tokens, and the project's own signed tokens.
@Suite struct JWSVerificationTests {
    enum Kind { case transaction, renewal, notification }

    /// Every real Apple-signed token in TestReceipts/jws, with its kind and signed date (ms).
    static let realTokens: [(file: String, kind: Kind, signed: Int64)] = [
        ("jws/go-iap/sandbox-renewal-info-2000000335310644.jws", .renewal, 1_684_822_778_492),
        ("jws/gopay/sandbox-transaction-2000000184445477.jws", .transaction, 1_667_559_685_499),
        ("jws/gopay/sandbox-transaction-2000000191896422.jws", .transaction, 1_667_561_039_251),
        ("jws/gopay/sandbox-renewal-2000000184445477.jws", .renewal, 1_667_561_039_251),
        ("jws/gopay/sandbox-notification-DID_RENEW.jws", .notification, 1_646_387_008_254),
        ("jws/gopay/sandbox-transaction-2000000004047119.jws", .transaction, 1_646_387_008_254),
        ("jws/gopay/sandbox-renewal-2000000000842607.jws", .renewal, 1_646_387_008_228),
        ("jws/gopay/production-notification-CONSUMPTION_REQUEST.jws", .notification, 1_687_941_512_560),
        ("jws/gopay/production-transaction-510001261072921-nested.jws", .transaction, 1_687_941_512_573),
        ("jws/appstore-iap/sandbox-notification-TEST.jws", .notification, 1_662_122_492_884),
        ("jws/appstore-iap/test-notification-signed-payload.json", .notification, 1_662_122_492_884),
        ("jws/omnimind/noenv-transaction-1000000906235058.jws", .transaction, 1_636_465_081_044),
        ("jws/omnimind/noenv-transaction-1000000906239564.jws", .transaction, 1_636_465_081_044),
        ("jws/omnimind/noenv-transaction-1000000906242618.jws", .transaction, 1_636_465_081_044),
        ("jws/omnimind/noenv-transaction-1000000906245876.jws", .transaction, 1_636_465_081_044),
        ("jws/omnimind/noenv-transaction-1000000906249606.jws", .transaction, 1_636_465_081_044),
        ("jws/omnimind/noenv-transaction-1000000907182138.jws", .transaction, 1_636_464_323_732),
        ("jws/omnimind/noenv-renewal-1000000906235058.jws", .renewal, 1_636_464_323_732),
        ("jws/mimo/sandbox-notification-TEST-original-reconstructed.jws", .notification, 1_706_887_729_389),
    ]

    /// The outcome of verifying any kind, reduced to what the assertions need.
    struct Outcome {
        var valid: Bool
        var time: Date?
        var assurance: VerificationAssurance?
        var chain: [String]
        var failure: VerificationCheck?
        var summary: String
        init<P>(_ verdict: Verdict<P>) {
            valid = verdict.isValid
            time = verdict.validationTime
            assurance = verdict.assurance
            chain = verdict.chain?.map { $0.subject.commonName ?? "" } ?? []
            failure = verdict.firstFailure
            summary = verdict.checks.map(\.description).joined(separator: "\n")
        }
    }

    static func verify(
        _ bytes: [UInt8], _ kind: Kind, anchors: TrustAnchors, policy: VerificationPolicy = .appStore, at time: ValidationTime
    )
        -> Outcome
    {
        switch kind {
        case .transaction:
            Outcome(JWSTransactionVerifier(anchors: anchors, policy: policy, cache: nil).verify(bytes, at: time))
        case .renewal:
            Outcome(JWSRenewalInfoVerifier(anchors: anchors, policy: policy, cache: nil).verify(bytes, at: time))
        case .notification:
            Outcome(NotificationVerifier(anchors: anchors, policy: policy, cache: nil).verify(bytes, at: time))
        }
    }

    @Test(arguments: realTokens.map(\.file))
    func realAppleTokenVerifiesAtItsSignedDate_andNotToday(_ file: String) throws {
        let entry = try #require(Self.realTokens.first { $0.file == file })
        let bytes = try Fixtures.bytes(file)
        let verdict = Self.verify(bytes, entry.kind, anchors: try TrustAnchors.appleRoots, at: .signedDate)
        #expect(verdict.valid, "\(verdict.summary)")
        #expect(verdict.time == Date(timeIntervalSince1970: Double(entry.signed) / 1000))
        #expect(verdict.assurance == .apple)
        #expect(
            verdict.chain == [
                "Prod ECC Mac App Store and iTunes Store Receipt Signing", "Apple Worldwide Developer Relations Certification Authority",
                "Apple Root CA - G3",
            ])
        // Today (2026-12-01) every one of these leaves has expired: the chain fails and names it.
        let today = Self.verify(bytes, entry.kind, anchors: try TrustAnchors.appleRoots, at: .fixed(utc(2026, 12, 1)))
        #expect(!today.valid)
        #expect(today.failure?.name == .chain, "\(today.summary)")
        #expect(today.failure?.reason.contains("Prod ECC Mac App Store and iTunes Store Receipt Signing") == true)
        #expect(today.failure?.reason.contains("expired") == true)
        // Against Apple's test root (or any other anchor) the chain does not build.
        let testCA = TrustAnchors([try Fixtures.certificate("../jws/certs/testCA.der")])
        #expect(Self.verify(bytes, entry.kind, anchors: testCA, at: .signedDate).failure?.name == .chain)
    }

    /// A decoded notification verdict exposes the payload and its nested transaction.
    @Test func productionNotificationChecksAppleIdAndNestedTokens() throws {
        let bytes = try Fixtures.bytes("jws/gopay/production-notification-CONSUMPTION_REQUEST.jws")
        let verifier = try NotificationVerifier.appStoreJWS(cache: nil)
        let matching = verifier.verify(
            bytes,
            expecting: JWSExpectations(bundleIdentifier: "com.jrjj.keysns", appAppleId: 1_601_830_814, environments: [.production]))
        #expect(matching.isValid, "\(matching.summary)")
        #expect(matching.check(.signedTransactionInfo)?.passed == true)
        #expect(matching.check(.nestedAgreement)?.passed == true)
        #expect(matching.unchecked.isEmpty == false)
        let notification = try #require(matching.value() as NotificationPayload?)
        #expect(notification.notificationType == .consumptionRequest)
        #expect(matching.nested.transaction?.value.transactionId == "510001261072921")

        let wrongApp = verifier.verify(bytes, expecting: JWSExpectations(appAppleId: 1))
        #expect(wrongApp.failures.map(\.name) == [.appAppleId])
        let wrongBundle = verifier.verify(bytes, expecting: JWSExpectations(bundleIdentifier: "com.other"))
        #expect(wrongBundle.failures.map(\.name) == [.bundleIdentifier])
        let wrongEnvironment = verifier.verify(bytes, expecting: JWSExpectations(environments: [.sandbox]))
        #expect(wrongEnvironment.failures.map(\.name) == [.environment])
        // Environments compare without regard to case.
        #expect(verifier.verify(bytes, expecting: JWSExpectations(environments: [Environment(rawValue: "PRODUCTION")])).isValid)
        // A sandbox notification: the app Apple id is not checked (as Apple does), and says so.
        let sandbox = verifier.verify(
            try Fixtures.bytes("jws/appstore-iap/sandbox-notification-TEST.jws"), expecting: JWSExpectations(appAppleId: 1))
        #expect(sandbox.isValid, "\(sandbox.summary)")
        #expect(sandbox.unchecked.contains(.appAppleId))
    }

    /// Renewal info names no bundle id: a bundle expectation is refused (`notApplicable`), never
    /// passed nor dropped; restricted to what renewal info carries, it is listed as unchecked.
    @Test func renewalInfoCannotProveABundle() throws {
        let bytes = try Fixtures.bytes("jws/go-iap/sandbox-renewal-info-2000000335310644.jws")
        let verifier = try JWSRenewalInfoVerifier.appStoreJWS(cache: nil)
        let verdict = verifier.verify(bytes, expecting: JWSExpectations(bundleIdentifier: "x"))
        #expect(!verdict.isValid)
        #expect(verdict.failures.map(\.name) == [.notApplicable])
        #expect(verdict.check(.notApplicable)?.reason.hasPrefix("bundleIdentifier does not apply to a renewal info") == true)
        #expect(verdict.check(.bundleIdentifier) == nil)
        #expect(verdict.assurance == nil)
        let restricted = verifier.verify(bytes, expecting: JWSExpectations(bundleIdentifier: "x").applicable(to: JWSRenewalInfo.self))
        #expect(restricted.isValid)
        #expect(restricted.unchecked.contains(.bundleIdentifier))
    }

    /// Payloads from 2021 carry no environment: an environment expectation fails closed.
    @Test func aPayloadWithoutEnvironmentFailsAnEnvironmentExpectation() throws {
        let bytes = try Fixtures.bytes("jws/omnimind/noenv-transaction-1000000906235058.jws")
        let verdict = try JWSTransactionVerifier.appStoreJWS(cache: nil).verify(
            bytes, expecting: JWSExpectations(environments: [.production]))
        #expect(verdict.failures.map(\.name) == [.environment])
        #expect(verdict.check(.environment)?.reason.contains("names no environment") == true)
    }

    /// Apple's test-CA tokens verify against testCA.der and nothing else (two of them carry an
    /// older copy of the test root, with the same name and key, in x5c[2]: never trusted, and not
    /// needed); the one without x5c fails at the certificate count.
    @Test func appleTestCATokens() throws {
        let testCA = TrustAnchors([try Fixtures.certificate("../jws/certs/testCA.der")])
        let renewal = try Fixtures.bytes("jws/apple/mock_signed_data/renewalInfo.jws")
        let signed = JWSRenewalInfoVerifier(anchors: testCA, cache: nil).verify(renewal)
        #expect(signed.isValid, "\(signed.summary)")
        #expect(signed.assurance == .configuredAnchor)
        #expect(try JWSRenewalInfoVerifier.appStoreJWS(cache: nil).verify(renewal).firstFailure?.name == .chain)
        let wrongBundle = try Fixtures.bytes("jws/apple/mock_signed_data/wrongBundleId.jws")
        // No signedDate: verify at a time inside the test chain's validity.
        let notifications = NotificationVerifier(anchors: testCA, cache: nil)
        let atTime = notifications.verify(
            wrongBundle, expecting: JWSExpectations(bundleIdentifier: "com.example"), at: .fixed(utc(2024, 1, 1)))
        #expect(atTime.failures.map(\.name) == [.bundleIdentifier], "\(atTime.summary)")
        #expect(notifications.verify(wrongBundle).firstFailure?.name == .validationTime)
        for file in ["testNotification.jws", "transactionInfo.jws"] {
            let bytes = try Fixtures.bytes("jws/apple/mock_signed_data/" + file)
            let kind: Kind = file.hasPrefix("test") ? .notification : .transaction
            let jws = try CompactJWS(bytes)
            let carried = try Certificate(derEncoded: try #require(jws.header.certificateChain?.last))
            #expect(carried != (try Fixtures.certificate("../jws/certs/testCA.der")), "x5c[2] is another copy of the test root")
            let outcome = Self.verify(bytes, kind, anchors: testCA, at: .signedDate)
            #expect(outcome.valid, "\(file): \(outcome.summary)")
            #expect(Self.verify(bytes, kind, anchors: try TrustAnchors.appleRoots, at: .signedDate).failure?.name == .chain)
            // The copy the token carries is not an anchor unless the caller makes it one.
            #expect(Self.verify(bytes, kind, anchors: TrustAnchors([carried]), at: .signedDate).valid)
        }
        let missing = notifications.verify(try Fixtures.bytes("jws/apple/mock_signed_data/missingX5CHeaderClaim.jws"))
        #expect(missing.firstFailure?.name == .certificateCount)
        #expect(missing.firstFailure?.reason == "the header has no x5c")
    }

    /// Xcode tokens verify under the xcode policy against the certificate they carry, and fail
    /// under the App Store policy.
    @Test(arguments: ["xcode-signed-transaction.jws", "xcode-signed-renewal-info.jws", "xcode-signed-app-transaction.jws"])
    func xcodeTokens(_ file: String) throws {
        let bytes = try Fixtures.bytes("jws/apple/xcode/" + file)
        let jws = try CompactJWS(bytes)
        let certificate = try Certificate(derEncoded: try #require(jws.header.certificateChain?.first))
        let anchors = TrustAnchors([certificate])
        let outcome: (xcode: Outcome, appStore: Outcome)
        switch file {
        case "xcode-signed-transaction.jws":
            outcome = (
                Outcome(JWSTransactionVerifier(anchors: anchors, policy: .xcode, cache: nil).verify(bytes)),
                Outcome(JWSTransactionVerifier(anchors: anchors, policy: .appStore, cache: nil).verify(bytes))
            )
        case "xcode-signed-renewal-info.jws":
            outcome = (
                Outcome(JWSRenewalInfoVerifier(anchors: anchors, policy: .xcode, cache: nil).verify(bytes)),
                Outcome(JWSRenewalInfoVerifier(anchors: anchors, policy: .appStore, cache: nil).verify(bytes))
            )
        default:
            outcome = (
                Outcome(AppTransactionVerifier(anchors: anchors, policy: .xcode, cache: nil).verify(bytes)),
                Outcome(AppTransactionVerifier(anchors: anchors, policy: .appStore, cache: nil).verify(bytes))
            )
        }
        #expect(outcome.xcode.valid, "\(outcome.xcode.summary)")
        #expect(outcome.xcode.assurance == .storeKitTesting)
        #expect(outcome.xcode.chain == ["StoreKit Testing in Xcode"])
        #expect(outcome.appStore.failure?.name == .certificateCount)
    }

    /// Bulk verification with the shared cache validates the chain once, then costs one ES256
    /// verify per token, at each token's own signed date.
    @Test func theChainCacheServesEveryTokenOfOneLeaf() throws {
        let cache = ChainCache()
        let verifier = JWSTransactionVerifier(anchors: try TrustAnchors.appleRoots, cache: cache)
        let files = Self.realTokens.filter { $0.kind == .transaction && $0.file.contains("gopay") }.map(\.file)
        for file in files {
            let verdict = verifier.verify(try Fixtures.bytes(file))
            #expect(verdict.isValid, "\(verdict.summary)")
        }
        #expect(cache.statistics.chainValidations == 1)
        #expect(cache.statistics.chainHits == files.count - 1)
    }
}

/// Forgeries: each invalid, and the failing check named.
@Suite struct JWSForgeryTests {
    static let signedDate: Int64 = 1_733_000_000_000  // 2024-11-30
    static func transactionJSON(bundle: String = "com.example.app", environment: String = "Production", extra: String = "") -> String {
        #"{"transactionId":"42","originalTransactionId":"41","bundleId":"\#(bundle)","productId":"pro","purchaseDate":1733000000000,"signedDate":\#(signedDate),"environment":"\#(environment)","quantity":1\#(extra)}"#
    }

    func verifier(_ pki: TestPKI) -> JWSTransactionVerifier { JWSTransactionVerifier(anchors: [pki.root], cache: nil) }

    func signed(_ pki: TestPKI, _ json: String = transactionJSON()) throws -> String {
        try pki.jwsSigner().sign(payload: Array(json.utf8))
    }

    /// The token as segments, to rebuild forged variants.
    func segments(_ token: String) -> [String] { token.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }

    @Test func baselineIsValid() throws {
        let pki = try PKIs.jws.get()
        let verdict = verifier(pki).verify(token: try signed(pki), expecting: JWSExpectations(bundleIdentifier: "com.example.app"))
        #expect(verdict.isValid, "\(verdict.summary)")
        #expect(
            verdict.checks.map(\.name) == [
                .parse, .trustAnchors, .kind, .algorithm, .crit, .certificateCount, .signerCertificate, .signerKey, .signature,
                .validationTime, .chain, .pinnedAnchor, .chainLength, .leafMarker, .intermediateMarker, .keyUsage, .basicConstraints,
                .bundleIdentifier,
            ])
        #expect(verdict.signature == SignatureSummary(algorithm: .ecdsa(.sha256)))
    }

    @Test func otherAlgorithms() throws {
        let pki = try PKIs.jws.get()
        let token = segments(try signed(pki))
        let x5c = pki.jwsSigner().chain.map { "\"\(Base64.encode($0.derEncoded))\"" }.joined(separator: ",")
        let payload = token[1]
        for alg in ["none", "HS256", "ES384", "es256"] {
            let header = Base64.encode(Array(#"{"alg":"\#(alg)","x5c":[\#(x5c)]}"#.utf8), alphabet: .url)
            var signature = token[2]
            if alg == "HS256" {
                // HMAC keyed with the leaf's public key bytes: the classic algorithm confusion.
                let mac = HMACSHA256.authenticationCode(for: Array("\(header).\(payload)".utf8), key: try pki.leaf.publicKey.derEncoded)
                signature = Base64.encode(mac, alphabet: .url)
            } else if alg == "none" {
                signature = ""
            }
            let verdict = verifier(pki).verify(token: "\(header).\(payload).\(signature)")
            #expect(!verdict.isValid)
            #expect(verdict.firstFailure?.name == .algorithm, "\(alg): \(verdict.summary)")
        }
    }

    @Test(arguments: [0, 1, 2, 4])
    func wrongCertificateCounts(_ count: Int) throws {
        let pki = try PKIs.jws.get()
        var signer = pki.jwsSigner()
        signer.chain = Array((signer.chain + [pki.root]).prefix(count))
        let verdict = verifier(pki).verify(token: try signer.sign(payload: Array(Self.transactionJSON().utf8)))
        #expect(verdict.firstFailure?.name == .certificateCount, "\(verdict.summary)")
    }

    @Test func rogueRootNamedLikeApple_isNotTrusted() throws {
        let rogue = try PKIs.rogueJWS.get()
        #expect(rogue.root.subject.commonName == "Apple Root CA - G3")
        let verdict = try JWSTransactionVerifier.appStoreJWS(cache: nil).verify(token: try signed(rogue))
        #expect(verdict.firstFailure?.name == .chain, "\(verdict.summary)")
        #expect(verdict.check(.signature)?.passed == true, "the forger's own signature is fine; the trust is not")
    }

    @Test func missingMarkers_andASwappedIntermediate() throws {
        let noLeafMarker = try TestPKI.jws { $0.leafMarker = false }
        #expect(verifier(noLeafMarker).verify(token: try signed(noLeafMarker)).firstFailure?.name == .leafMarker)
        let noIntermediateMarker = try TestPKI.jws { $0.intermediateMarker = false }
        #expect(verifier(noIntermediateMarker).verify(token: try signed(noIntermediateMarker)).firstFailure?.name == .intermediateMarker)
        let pki = try PKIs.jws.get()
        var swapped = pki.jwsSigner()
        swapped.chain[1] = try PKIs.otherJWS.get().intermediate
        #expect(verifier(pki).verify(token: try swapped.sign(payload: Array(Self.transactionJSON().utf8))).firstFailure?.name == .chain)
    }

    @Test func changedAfterSigning() throws {
        let pki = try PKIs.jws.get()
        let parts = segments(try signed(pki))
        let otherPayload = Base64.encode(Array(Self.transactionJSON(bundle: "com.example.apq").utf8), alphabet: .url)
        let payloadChanged = verifier(pki).verify(token: "\(parts[0]).\(otherPayload).\(parts[2])")
        #expect(payloadChanged.firstFailure?.name == .signature)
        #expect(payloadChanged.value()?.bundleId == "com.example.apq", "what was parsed is what failed")
        let header = try #require(Base64.decode(Array(parts[0].utf8), rules: .strictURL) as [UInt8]?)
        let otherHeader = Base64.encode(Array(#"{"kid":"x","#.utf8) + header.dropFirst(), alphabet: .url)
        #expect(verifier(pki).verify(token: "\(otherHeader).\(parts[1]).\(parts[2])").firstFailure?.name == .signature)
    }

    @Test func signatureEncodings() throws {
        let pki = try PKIs.jws.get()
        let parts = segments(try signed(pki))
        let raw = try Base64.decode(Array(parts[2].utf8), rules: .strictURL)
        #expect(raw.count == 64)
        let der = try pki.leafKey.sign(Array("\(parts[0]).\(parts[1])".utf8), digest: .sha256)
        #expect(try pki.leaf.publicKey.verify(signature: der, over: Array("\(parts[0]).\(parts[1])".utf8), digest: .sha256))
        for bytes in [der, raw + [0], [0] + raw, Array(raw.dropLast())] {
            let verdict = verifier(pki).verify(token: "\(parts[0]).\(parts[1]).\(Base64.encode(bytes, alphabet: .url))")
            #expect(verdict.firstFailure?.name == .signature, "\(verdict.summary)")
        }
        // Padding, and a non-canonical last character, are not the token.
        #expect(verifier(pki).verify(token: "\(parts[0]).\(parts[1]).\(parts[2])=").firstFailure?.name == .parse)
        var last = Array(parts[2].utf8)
        last[last.count - 1] ^= 0x01
        let twin = verifier(pki).verify(token: "\(parts[0]).\(parts[1]).\(String(decoding: last, as: UTF8.self))")
        #expect(!twin.isValid)
    }

    @Test func duplicateKeys_areNotAPayload() throws {
        let pki = try PKIs.jws.get()
        let json = Self.transactionJSON(extra: #","bundleId":"com.evil""#)
        let verdict = verifier(pki).verify(token: try signed(pki, json))
        #expect(verdict.checks.map(\.name) == [.parse])
        #expect(verdict.firstFailure?.reason.contains("\"bundleId\" appears twice") == true, "\(verdict.summary)")
    }

    @Test func expectationsAndTime() throws {
        let pki = try PKIs.jws.get()
        let token = try signed(pki, Self.transactionJSON(environment: "Sandbox"))
        let v = verifier(pki)
        #expect(
            v.verify(token: token, expecting: JWSExpectations(bundleIdentifier: "com.other")).failures.map(\.name) == [.bundleIdentifier])
        #expect(v.verify(token: token, expecting: JWSExpectations(environments: [.production])).failures.map(\.name) == [.environment])
        #expect(v.verify(token: token, expecting: JWSExpectations(environments: [.sandbox, .production])).isValid)
        // Expired at the validation time: the leaf's validity ends in 2050.
        let late = v.verify(token: token, at: .fixed(utc(2051, 1, 1)))
        #expect(late.firstFailure?.name == .chain)
        #expect(late.firstFailure?.reason.contains("expired") == true)
        // Freshness against the verifier's clock, whatever the validation time.
        let signed = Date(timeIntervalSince1970: Double(Self.signedDate) / 1000)
        func clocked(_ offset: TimeInterval) -> JWSTransactionVerifier {
            JWSTransactionVerifier(anchors: [pki.root], cache: nil, clock: { signed.addingTimeInterval(offset) })
        }
        let fresh = clocked(30).verify(token: token, expecting: JWSExpectations(maximumAge: 60))
        #expect(fresh.isValid, "\(fresh.summary)")
        #expect(fresh.check(.maximumAge)?.passed == true)
        let stale = clocked(61).verify(token: token, expecting: JWSExpectations(maximumAge: 60))
        #expect(stale.failures.map(\.name) == [.maximumAge])
        #expect(stale.check(.maximumAge)?.reason.contains("61 s before the verifier's clock") == true, "\(stale.summary)")
        let future = clocked(-6).verify(token: token, expecting: JWSExpectations(maximumFutureSkew: 5))
        #expect(future.failures.map(\.name) == [.signedDate])
        // The validation time does not move the clock: at the token's own signed date (the
        // default) or at a fixed time right after it, a token signed long ago is still old.
        #expect(clocked(3600).verify(token: token, expecting: JWSExpectations(maximumAge: 60)).failures.map(\.name) == [.maximumAge])
        let fixed = clocked(3600).verify(token: token, expecting: JWSExpectations(maximumAge: 60), at: .fixed(signed.addingTimeInterval(1)))
        #expect(fixed.failures.map(\.name) == [.maximumAge])
        // The system clock by default: signed in 2024, more than an hour ago.
        #expect(v.verify(token: token, expecting: JWSExpectations(maximumAge: 3600)).failures.map(\.name) == [.maximumAge])
        // A limit that is not a number of seconds fails closed.
        #expect(clocked(0).verify(token: token, expecting: JWSExpectations(maximumAge: .nan)).failures.map(\.name) == [.maximumAge])
    }

    /// Every expectation about a claim a kind does not carry is refused with `notApplicable`
    /// naming it; `applicable(to:)` keeps exactly what the kind carries.
    @Test func expectationsAKindDoesNotCarryAreRefused() throws {
        let pki = try PKIs.jws.get()
        let token = try signed(pki, Self.transactionJSON(environment: "Sandbox"))
        let v = verifier(pki)
        // A transaction carries no appAppleId.
        let appleID = v.verify(token: token, expecting: JWSExpectations(appAppleId: 7))
        #expect(appleID.failures.map(\.name) == [.notApplicable])
        #expect(appleID.check(.notApplicable)?.reason.hasPrefix("appAppleId does not apply to a transaction") == true)
        #expect(!appleID.unchecked.contains(.appAppleId))
        // A notification carries neither an app account token nor a device verification.
        let notification =
            #"{"notificationType":"TEST","notificationUUID":"6c2d8c1e-0000-4000-8000-000000000001","data":{"bundleId":"com.example.app","environment":"Sandbox"},"signedDate":1733000000000}"#
        let notificationToken = try signed(pki, notification)
        let notifications = NotificationVerifier(anchors: [pki.root], cache: nil)
        let expectations = JWSExpectations(
            bundleIdentifier: "com.example.app", deviceVerificationID: "3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CD",
            appAccountToken: "7c1e3a52-4b1f-4a8e-9d3c-2f5b6a7e8d90")
        let refused = notifications.verify(token: notificationToken, expecting: expectations)
        #expect(!refused.isValid)
        let reasons = refused.failures.filter { $0.name == .notApplicable }.map(\.reason)
        #expect(
            reasons.count == 2 && reasons[0].hasPrefix("deviceVerificationID ") && reasons[1].hasPrefix("appAccountToken "), "\(reasons)")
        #expect(refused.check(.bundleIdentifier)?.passed == true, "what applies is still checked")
        let restricted = notifications.verify(token: notificationToken, expecting: expectations.applicable(to: NotificationPayload.self))
        #expect(restricted.isValid, "\(restricted.summary)")
        #expect(expectations.applicable(to: JWSTransaction.self) == expectations)
        #expect(expectations.applicable(to: JWSRenewalInfo.self).bundleIdentifier == nil)
        #expect(JWSExpectations(appAppleId: 1).applicable(to: AppTransaction.self).appAppleId == 1)
    }

    /// A caller's own checks appended to a verdict: a failed one makes it invalid, passed ones keep
    /// it as it was.
    @Test func appendingChecksToAVerdict() throws {
        let pki = try PKIs.jws.get()
        let verdict = verifier(pki).verify(token: try signed(pki))
        #expect(verdict.isValid && verdict.assurance == .configuredAnchor)
        let kept = verdict.appending([VerificationCheck(name: .init(rawValue: "mine"), passed: true, reason: "ok")])
        #expect(kept.isValid && kept.assurance == .configuredAnchor && kept.checks.count == verdict.checks.count + 1)
        let refused = verdict.appending([VerificationCheck(name: .notApplicable, passed: false, reason: "--app-version")])
        #expect(!refused.isValid && refused.assurance == nil)
        #expect(refused.firstFailure?.name == .notApplicable && refused.payload != nil && refused.chain != nil)
    }

    @Test func deviceVerification_andAppAccountToken() throws {
        let pki = try PKIs.jws.get()
        let device = "3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CD"
        let nonce = "48C8B92D-CE0D-4229-BEDF-E61B4F9CFC92"
        let digest = try Digest.hash(.sha384, Array((nonce.lowercased() + device.lowercased()).utf8))
        let json =
            #"{"receiptType":"Production","appAppleId":531412,"bundleId":"com.example.app","applicationVersion":"1","receiptCreationDate":1733000000000,"deviceVerification":"\#(Base64.encode(digest))","deviceVerificationNonce":"\#(nonce.lowercased())"}"#
        let token = try pki.jwsSigner().sign(payload: Array(json.utf8))
        let v = AppTransactionVerifier(anchors: [pki.root], cache: nil)
        let bound = v.verify(token: token, expecting: JWSExpectations(appAppleId: 531_412, deviceVerificationID: device.lowercased()))
        #expect(bound.isValid, "\(bound.summary)")
        #expect(bound.check(.deviceVerification)?.passed == true)
        #expect(bound.validationTime == Date(timeIntervalSince1970: 1_733_000_000))
        let other = v.verify(token: token, expecting: JWSExpectations(deviceVerificationID: "00000000-0000-0000-0000-000000000000"))
        #expect(other.failures.map(\.name) == [.deviceVerification])
        #expect(v.verify(token: token, expecting: JWSExpectations(appAppleId: 1)).failures.map(\.name) == [.appAppleId])

        let account = "9E5C1A0E-0B59-4E3A-9C7E-1B2D3C4E5F60"
        let transaction = try pki.jwsSigner().sign(
            payload: Array(JWSForgeryTests.transactionJSON(extra: #","appAccountToken":"\#(account.lowercased())""#).utf8))
        #expect(verifier(pki).verify(token: transaction, expecting: JWSExpectations(appAccountToken: account)).isValid)
        let wrong = verifier(pki).verify(token: transaction, expecting: JWSExpectations(appAccountToken: device))
        #expect(wrong.failures.map(\.name) == [.appAccountToken])
    }

    /// A notification with nested tokens: verified together, and they must agree.
    @Test func nestedTokens() throws {
        let pki = try PKIs.jws.get()
        let other = try PKIs.otherJWS.get()
        func notification(transaction: String, renewal: String?) throws -> String {
            let renewalMember = renewal.map { #","signedRenewalInfo":"\#($0)""# } ?? ""
            let json =
                #"{"notificationType":"DID_RENEW","notificationUUID":"6b9f2e1a-0000-4000-8000-000000000001","data":{"appAppleId":1,"bundleId":"com.example.app","environment":"Production","signedTransactionInfo":"\#(transaction)"\#(renewalMember)},"version":"2.0","signedDate":\#(Self.signedDate)}"#
            return try pki.jwsSigner().sign(payload: Array(json.utf8))
        }
        let renewal = try pki.jwsSigner().sign(
            payload: Array(
                #"{"originalTransactionId":"41","autoRenewStatus":1,"environment":"Production","signedDate":\#(Self.signedDate)}"#.utf8))
        let v = NotificationVerifier(anchors: [pki.root], cache: nil)

        let genuine = v.verify(token: try notification(transaction: try signed(pki), renewal: renewal))
        #expect(genuine.isValid, "\(genuine.summary)")
        #expect(genuine.check(.signedTransactionInfo)?.passed == true)
        #expect(genuine.check(.signedRenewalInfo)?.passed == true)

        // The nested transaction signed by another key: the notification is invalid.
        let forged = v.verify(token: try notification(transaction: try signed(other), renewal: renewal))
        #expect(forged.failures.map(\.name) == [.signedTransactionInfo], "\(forged.summary)")
        #expect(forged.check(.signedTransactionInfo)?.reason.hasPrefix("chain:") == true)
        // A nested token that disagrees with the notification.
        let otherBundle = v.verify(
            token: try notification(transaction: try signed(pki, Self.transactionJSON(bundle: "com.other")), renewal: nil))
        #expect(otherBundle.failures.map(\.name) == [.nestedAgreement])
        let otherEnvironment = v.verify(
            token: try notification(transaction: try signed(pki, Self.transactionJSON(environment: "Sandbox")), renewal: nil))
        #expect(otherEnvironment.failures.map(\.name) == [.nestedAgreement])
        // The renewal info of another original transaction.
        let otherRenewal = try pki.jwsSigner().sign(
            payload: Array(#"{"originalTransactionId":"99","environment":"Production","signedDate":\#(Self.signedDate)}"#.utf8))
        let mismatched = v.verify(token: try notification(transaction: try signed(pki), renewal: otherRenewal))
        #expect(mismatched.failures.map(\.name) == [.nestedAgreement])
        #expect(mismatched.check(.nestedAgreement)?.reason.contains("original transaction 99") == true)
    }
}
