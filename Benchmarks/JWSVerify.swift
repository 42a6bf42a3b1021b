import Foundation
import JWS
import ReceiptCrypto
import ReceiptVerification

/// `jws-verify-warm`: a whole warm JWS verification (split, header from the header cache, payload
/// decode, ES256 signature, chain from the shared chain cache, policy, verdict) of one token at its
/// signed date, beside `es256-verify`, one bare OpenSSL ES256 verify of the same signing input with
/// the key already parsed; and warm verification of a batch on every core (tokens per second).
struct JWSVerifyBench {
    /// The token as given (a compact JWS or a notification body).
    let bytes: [UInt8]
    /// The token, split.
    let jws: CompactJWS
    /// Verifies the token once; true when the verdict is valid.
    let verify: @Sendable ([UInt8]) -> Bool
    /// The payload kind, for the notes.
    let kind: AppStorePayloadKind

    /// A warm verifier of the token's kind (shared chain cache, a header cache) trusting
    /// `anchors`; the xcode policy when `x5c` holds one certificate.
    init(bytes: [UInt8], anchors: TrustAnchors) throws {
        guard let input = try SignedDataInput.detect(bytes) else { throw BenchmarkError(description: "not a JWS or notification body") }
        self.bytes = bytes
        jws = input.jws
        kind = AppStorePayloadKind.of(jsonPayload: jws.unverifiedPayload)
        let policy: VerificationPolicy = jws.header.certificateChain?.count == 1 ? .xcode : .appStore
        let headers = JWSHeaderCache()
        switch kind {
        case .transaction:
            let verifier = JWSTransactionVerifier(anchors: anchors, policy: policy, cache: .shared, headerCache: headers)
            verify = { verifier.verify($0).isValid }
        case .renewalInfo:
            let verifier = JWSRenewalInfoVerifier(anchors: anchors, policy: policy, cache: .shared, headerCache: headers)
            verify = { verifier.verify($0).isValid }
        case .appTransaction:
            let verifier = AppTransactionVerifier(anchors: anchors, policy: policy, cache: .shared, headerCache: headers)
            verify = { verifier.verify($0).isValid }
        case .notification:
            let verifier = NotificationVerifier(anchors: anchors, policy: policy, cache: .shared, headerCache: headers)
            verify = { verifier.verify($0).isValid }
        case .realtimeRequest, .unknown:
            throw BenchmarkError(description: "the payload is a \(kind.rawValue); jws-verify-warm verifies App Store payload kinds")
        }
    }

    func measure(with harness: Harness, into report: inout Report) throws {
        let bytes = bytes
        let verify = verify
        guard verify(bytes) else { throw BenchmarkError(description: "jws-verify-warm: the token does not verify at its signed date") }
        report.results.append(
            try harness.measure(
                Measurement(name: "jws-verify-warm", bytes: bytes.count, expected: 1) {
                    verify(bytes) ? 1 : 0
                }))
        guard let leafDER = jws.header.certificateChain?.first else { return }
        let key = try Certificate(derEncoded: leafDER).publicKey
        let signature = JWSDecodeBench.derSignature(jws.signature)
        let input = Array(jws.signingInput)
        if report["es256-verify"] == nil {
            report.results.append(
                try harness.measure(
                    Measurement(name: "es256-verify", bytes: input.count, expected: 1) {
                        key.verify(signature: signature, over: input, digest: .sha256) ? 1 : 0
                    }))
        }
        report.ratio("jws-verify-warm vs es256-verify (target ≤ 1.3×)", "jws-verify-warm", "es256-verify")
        if kind == .notification, let nested = (try? jws.decodePayloadToVerify(as: NotificationPayload.self))?.nestedTokens,
            !nested.isEmpty
        {
            report.notes.append(
                "the notification carries \(nested.count) nested token(s): jws-verify-warm verifies them too (one ES256 verify each)")
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let batch = 1000
        let name = "jws-verify-warm parallel batch of \(batch)"
        report.results.append(
            try harness.measure(
                Measurement(name: name, bytes: bytes.count * batch, expected: batch) {
                    let counter = Counter()
                    DispatchQueue.concurrentPerform(iterations: cores) { worker in
                        var local = 0
                        for _ in stride(from: worker, to: batch, by: cores) where verify(bytes) { local += 1 }
                        counter.add(local)
                    }
                    return counter.value
                }))
        if let r = report[name] {
            report.notes.append(
                String(format: "parallel warm JWS verify: %.0f tokens/s on %d cores", Double(batch) / r.nsPerOp * 1e9, cores))
        }
        if let single = report["jws-verify-warm"], let parallel = report[name] {
            report.notes.append(
                String(format: "parallel speed-up over one core: %.2f×", single.nsPerOp * Double(batch) / parallel.nsPerOp))
        }
    }
}
