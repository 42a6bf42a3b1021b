import Dispatch
import Foundation
import Internals
import JWS
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import TestSupport
import Testing

/// Revocation by OCSP against real `openssl ocsp` responders on 127.0.0.1 (``OCSPTestBed``).
@Suite struct RevocationTests {
    static func transactionJSON(id: Int = 42) -> String {
        #"{"transactionId":"\#(id)","originalTransactionId":"41","bundleId":"com.example.app","productId":"pro","purchaseDate":1733000000000,"signedDate":1733000000000,"environment":"Production","quantity":1}"#
    }

    /// A JWS verifier of `bed`'s PKI checking revocation as `mode` with a checker of its own.
    static func jwsVerifier(
        _ bed: OCSPTestBed, _ mode: RevocationFailureMode, checker: OCSPChecker = OCSPChecker(cache: OCSPResponseCache())
    )
        -> JWSTransactionVerifier
    {
        JWSTransactionVerifier(anchors: [bed.pki.root], policy: .appStore.with(revocation: .ocsp(mode, checker: checker)), cache: nil)
    }

    static func token(_ bed: OCSPTestBed, id: Int = 42) throws -> String {
        try bed.pki.jwsSigner().sign(payload: Array(transactionJSON(id: id).utf8))
    }

    /// Runs blocking verification off the cooperative pool.
    static func verify(_ verifier: JWSTransactionVerifier, _ token: String, at time: ValidationTime = .signedDate) async throws
        -> Verdict<SignedJWS<JWSTransaction>>
    {
        try await onThread { verifier.verify(token: token, at: time) }
    }

    @Test func goodLeafJWSIsValidWithRevocationChecked() async throws {
        let bed = try OCSPTestBed()
        let verdict = try await Self.verify(Self.jwsVerifier(bed, .hardFail), Self.token(bed))
        await bed.stop()
        #expect(verdict.isValid, "\(verdict.summary)")
        let report = try #require(verdict.revocationReport)
        #expect(report.passed)
        #expect(report.certificates.map(\.status) == [.good, .good])
        #expect(report.certificates.map(\.responderURL) == [bed.leafProxy.url, bed.intermediateProxy.url])
        #expect(report.certificates[0].serialNumberHex == bed.pki.leaf.serialNumberHex)
        #expect(verdict.checks.last?.name == .revocation)
        #expect(bed.leafProxy.forwarded == 1 && bed.intermediateProxy.forwarded == 1)
    }

    @Test func goodLeafAppReceiptIsValidWithRevocationChecked() async throws {
        let bed = try OCSPTestBed(jws: false)
        let receipt = try bed.pki.signer().sign(sampleReceipt())
        let verifier = AppReceiptVerifier(
            anchors: [bed.pki.root], policy: .appStore.with(revocation: .ocsp(.hardFail, checker: OCSPChecker(cache: OCSPResponseCache()))),
            cache: nil)
        let verdict = try await onThread { verifier.verify(receipt, expecting: ReceiptExpectations()) }
        await bed.stop()
        #expect(verdict.isValid, "\(verdict.summary)")
        #expect(verdict.revocationReport?.certificates.map(\.status) == [.good, .good])
    }

    @Test func revokedLeafIsInvalidNamingTheCertificate() async throws {
        let bed = try OCSPTestBed(revoked: ["leaf"])
        let verdict = try await Self.verify(Self.jwsVerifier(bed, .softFail), Self.token(bed))
        await bed.stop()
        #expect(!verdict.isValid)
        #expect(verdict.firstFailure?.name == .revocation)
        let reason = verdict.check(.revocation)?.reason ?? ""
        #expect(
            reason.contains(bed.pki.leaf.subject.commonName ?? "?") && reason.contains(bed.pki.leaf.serialNumberHex)
                && reason.contains("revoked"))
        guard case .revoked = verdict.revocationReport?.certificates.first?.status else {
            Issue.record("the leaf is not reported revoked: \(reason)")
            return
        }
        #expect(!verdict.isRetryable)
    }

    @Test func revokedIntermediateIsInvalid() async throws {
        let bed = try OCSPTestBed(revoked: ["intermediate"])
        let verdict = try await Self.verify(Self.jwsVerifier(bed, .hardFail), Self.token(bed))
        await bed.stop()
        #expect(!verdict.isValid)
        #expect(verdict.firstFailure?.name == .revocation)
        #expect(verdict.revocationReport?.certificates.first?.status == .good)
        guard case .revoked = verdict.revocationReport?.certificates.last?.status else {
            Issue.record("the intermediate is not reported revoked: \(verdict.summary)")
            return
        }
    }

    @Test func responderDownFailsRetryablyUnderHardFailAndIsListedUnderSoftFail() async throws {
        let bed = try OCSPTestBed()
        bed.leafProxy.mode = .down
        let hard = try await Self.verify(Self.jwsVerifier(bed, .hardFail), Self.token(bed))
        let soft = try await Self.verify(Self.jwsVerifier(bed, .softFail), Self.token(bed))
        await bed.stop()
        #expect(!hard.isValid && hard.isRetryable, "\(hard.summary)")
        #expect(hard.revocationReport?.isRetryable == true)
        #expect(soft.isValid, "\(soft.summary)")
        #expect(soft.check(.revocation)?.reason.contains("unavailable") == true)
        guard case .unavailable(_, let retryable) = soft.revocationReport?.certificates.first?.status else {
            Issue.record("the failure is not listed: \(soft.summary)")
            return
        }
        #expect(retryable)

        // Nothing listening at all (connection refused).
        let port = try freeLoopbackPort()
        let pki = try TestPKI.jws {
            $0.leafOCSPURL = "http://127.0.0.1:\(port)/"
            $0.intermediateOCSPURL = "http://127.0.0.1:\(port)/"
        }
        let token = try pki.jwsSigner().sign(payload: Array(Self.transactionJSON().utf8))
        let verifier = JWSTransactionVerifier(anchors: [pki.root], policy: .appStore.with(revocation: .ocsp(.hardFail)), cache: nil)
        let refused = try await onThread { verifier.verify(token: token) }
        #expect(!refused.isValid && refused.isRetryable, "\(refused.summary)")
    }

    @Test func responseSignedByAWrongKeyIsRejected() async throws {
        let bed = try OCSPTestBed()
        let other = try PKIs.otherJWS.get()
        try Data(other.intermediate.pemEncoded.utf8).write(to: bed.directory.appendingPathComponent("other.pem"))
        try Data(try other.intermediateKey.pemEncoded.utf8).write(to: bed.directory.appendingPathComponent("other-key.pem"))
        let request = try OCSPRequest(certificate: bed.pki.leaf, issuer: bed.pki.intermediate, withNonce: false).derEncoded
        let forged = try bed.craftedResponse(to: request, ca: "intermediate.pem", signer: "other.pem", key: "other-key.pem")
        let genuine = try bed.craftedResponse(to: request, ca: "intermediate.pem", signer: "intermediate.pem", key: "intermediate-key.pem")

        bed.leafProxy.mode = .replay(genuine)
        let control = try await Self.verify(Self.jwsVerifier(bed, .hardFail), Self.token(bed))
        bed.leafProxy.mode = .replay(forged)
        let verdict = try await Self.verify(Self.jwsVerifier(bed, .hardFail), Self.token(bed))
        await bed.stop()
        #expect(control.isValid, "a replayed genuine response without nonce is accepted: \(control.summary)")
        #expect(!verdict.isValid && !verdict.isRetryable)
        #expect(verdict.check(.revocation)?.reason.contains("rejected") == true, "\(verdict.summary)")
    }

    @Test func staleResponseIsRejected() async throws {
        let bed = try OCSPTestBed()
        // The responders' answers have nextUpdate one day after now; validate two days later.
        let later = Date(timeIntervalSinceNow: 2 * 86_400)
        let verdict = try await Self.verify(Self.jwsVerifier(bed, .hardFail), Self.token(bed), at: .fixed(later))
        await bed.stop()
        #expect(!verdict.isValid)
        #expect(verdict.check(.revocation)?.reason.contains("stale") == true, "\(verdict.summary)")
    }

    @Test func nonceMismatchIsRejected() async throws {
        let bed = try OCSPTestBed()
        let otherRequest = try OCSPRequest(certificate: bed.pki.leaf, issuer: bed.pki.intermediate, withNonce: true).derEncoded
        bed.leafProxy.mode = .replay(
            try bed.craftedResponse(to: otherRequest, ca: "intermediate.pem", signer: "intermediate.pem", key: "intermediate-key.pem"))
        let verdict = try await Self.verify(Self.jwsVerifier(bed, .hardFail), Self.token(bed))
        await bed.stop()
        #expect(!verdict.isValid)
        #expect(verdict.check(.revocation)?.reason.contains("nonce") == true, "\(verdict.summary)")
    }

    @Test func twoHundredVerificationsSharingAChainAskEachCertificateAtMostTwice() async throws {
        let bed = try OCSPTestBed()
        let checker = OCSPChecker(cache: OCSPResponseCache())
        let verifier = Self.jwsVerifier(bed, .hardFail, checker: checker)
        let tokens = try (0..<200).map { try Self.token(bed, id: 1_000 + $0) }
        let valid = try await onThread { () -> Int in
            let count = Locked(0)
            DispatchQueue.concurrentPerform(iterations: tokens.count) { index in
                if verifier.verify(token: tokens[index]).isValid { count.withLock { $0 += 1 } }
            }
            return count.withLock { $0 }
        }
        await bed.stop()
        #expect(valid == 200)
        #expect(bed.leafProxy.forwarded >= 1 && bed.leafProxy.forwarded <= 2, "leaf requests: \(bed.leafProxy.forwarded)")
        #expect(
            bed.intermediateProxy.forwarded >= 1 && bed.intermediateProxy.forwarded <= 2,
            "intermediate requests: \(bed.intermediateProxy.forwarded)")
        #expect(checker.requestCount <= 4)
    }

    @Test func offlineResponsesVerifyWithoutNetworkAndAStaleOneFails() async throws {
        let bed = try OCSPTestBed()
        try bed.openssl([
            "ocsp", "-index", "index.txt", "-CA", "intermediate.pem", "-rsigner", "intermediate.pem", "-rkey", "intermediate-key.pem",
            "-issuer", "intermediate.pem", "-cert", "leaf.pem", "-respout", "leaf-ocsp.der", "-ndays", "1",
        ])
        try bed.openssl([
            "ocsp", "-index", "index.txt", "-CA", "root.pem", "-rsigner", "root.pem", "-rkey", "root-key.pem", "-issuer", "root.pem",
            "-cert", "intermediate.pem", "-respout", "intermediate-ocsp.der", "-ndays", "1",
        ])
        let responses = try ["leaf-ocsp.der", "intermediate-ocsp.der"].map { name in
            try OCSPResponse(derEncoded: Array(Data(contentsOf: bed.directory.appendingPathComponent(name))))
        }
        let token = try Self.token(bed)
        let pki = bed.pki
        await bed.stop()  // the network is gone: the proxies and responders are stopped.
        let checker = OCSPChecker(responses: responses)
        let verifier = JWSTransactionVerifier(
            anchors: [pki.root], policy: .appStore.with(revocation: .ocsp(.hardFail, checker: checker)), cache: nil)
        let verdict = try await onThread { verifier.verify(token: token, at: .now) }
        #expect(verdict.isValid, "\(verdict.summary)")
        #expect(verdict.revocationReport?.certificates.map(\.source) == [.offlineResponse, .offlineResponse])
        let stale = try await onThread { verifier.verify(token: token, at: .fixed(Date(timeIntervalSinceNow: 2 * 86_400))) }
        #expect(!stale.isValid && !stale.isRetryable)
        #expect(stale.check(.revocation)?.reason.contains("stale") == true, "\(stale.summary)")
        #expect(checker.requestCount == 0)
    }

    @Test func revocationOffOpensNoSocket() async throws {
        let bed = try OCSPTestBed()
        let verifier = JWSTransactionVerifier(anchors: [bed.pki.root], cache: nil)
        let receiptVerifier = AppReceiptVerifier(anchors: [bed.pki.root], cache: nil)
        let token = try Self.token(bed)
        let verdict = try await onThread { verifier.verify(token: token, at: .now) }
        let notification = try await onThread { receiptVerifier.verify([0x30, 0x00], expecting: ReceiptExpectations()) }
        let connections = (bed.leafProxy.connections, bed.intermediateProxy.connections)
        await bed.stop()
        #expect(verdict.isValid, "\(verdict.summary)")
        #expect(verdict.check(.revocation) == nil)
        #expect(!notification.isValid)
        #expect(connections == (0, 0), "revocation off must open no socket")
        #expect(VerificationPolicy.appStore.revocation.isOn == false)
    }
}
