import ASN1
import CryptoBaselines
import Foundation
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts

/// Verification measurements for one receipt: cold (a fresh cache), warm (chain cache hot),
/// RMStore's OpenSSL way (PKCS7_verify + attribute walk), the floor (one RSA verify with its digest
/// of the payload), and receipts per second on every core.
struct VerificationBench {
    let name: String
    let bytes: [UInt8]
    let anchor: Certificate
    let time: Date
    let purchases: Int

    func measure(with harness: Harness, into report: inout Report, suffix: String) throws {
        let anchors = [anchor]
        let at = ValidationTime.fixed(time)
        let expected = purchases
        report.results.append(
            try harness.measure(
                Measurement(name: "verify-cold\(suffix)", bytes: bytes.count, expected: expected) {
                    let verifier = AppReceiptVerifier(anchors: anchors, policy: .appStore, cache: ChainCache())
                    let verdict = verifier.verify(bytes, at: at)
                    return verdict.isValid ? (verdict.receipt?.inAppPurchases.count ?? -2) : -1
                }))
        let warm = AppReceiptVerifier(anchors: anchors, policy: .appStore, cache: ChainCache())
        report.results.append(
            try harness.measure(
                Measurement(name: "verify-warm\(suffix)", bytes: bytes.count, expected: expected) {
                    let verdict = warm.verify(bytes, at: at)
                    return verdict.isValid ? (verdict.receipt?.inAppPurchases.count ?? -2) : -1
                }))
        try measureFloor(with: harness, into: &report, suffix: suffix)
        report.results.append(
            try harness.measure(
                Measurement(name: "openssl-rmstore-verify\(suffix)", bytes: bytes.count, expected: expected) {
                    OpenSSLBaselines.rmstoreStyleVerifyAndParse(bytes, anchor: anchors[0], at: time) ?? -1
                }))
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let batch = 1000
        report.results.append(
            try harness.measure(
                Measurement(name: "verify-warm parallel batch of \(batch)\(suffix)", bytes: bytes.count * batch, expected: batch) {
                    let counter = Counter()
                    DispatchQueue.concurrentPerform(iterations: cores) { worker in
                        var local = 0
                        for _ in stride(from: worker, to: batch, by: cores) where warm.verify(bytes, at: at).isValid { local += 1 }
                        counter.add(local)
                    }
                    return counter.value
                }))
        if let r = report["verify-warm parallel batch of \(batch)\(suffix)"] {
            report.notes.append(
                String(format: "parallel warm verify%@: %.0f receipts/s on %d cores", suffix, Double(batch) / r.nsPerOp * 1e9, cores))
        }
        report.ratio("openssl-rmstore-verify vs verify-warm\(suffix)", "openssl-rmstore-verify\(suffix)", "verify-warm\(suffix)")
        report.ratio("verify-warm vs rsa-verify-floor\(suffix)", "verify-warm\(suffix)", "rsa-verify-floor\(suffix)")
        report.ratio("verify-cold vs verify-warm\(suffix)", "verify-cold\(suffix)", "verify-warm\(suffix)")
    }

    /// The floor: the leaf's RSA signature over the payload, digest included, key already parsed.
    func measureFloor(with harness: Harness, into report: inout Report, suffix: String) throws {
        let floor = try RSAFloor(bytes)
        report.results.append(
            try harness.measure(
                Measurement(name: "rsa-verify-floor\(suffix)", bytes: bytes.count, expected: 1) {
                    floor.verify() ? 1 : 0
                }))
    }
}

/// One RSA verify with its digest of a receipt's payload, the leaf's key parsed beforehand: the
/// least work verifying the receipt can be.
struct RSAFloor {
    let key: PublicKey
    let signature: ArraySlice<UInt8>
    let payload: ArraySlice<UInt8>
    let digest: DigestAlgorithm

    init(_ bytes: [UInt8]) throws {
        let envelope = try ReceiptEnvelope(bytes)
        guard let signer = envelope.signers.first, let leafDER = envelope.certificates.first,
            let digest = DigestAlgorithm(oid: signer.digestAlgorithm.oid)
        else { throw BenchmarkError(description: "no signer") }
        key = try Certificate(derEncoded: Array(leafDER)).publicKey
        signature = signer.signature
        payload = envelope.payload
        self.digest = digest
    }

    func verify() -> Bool { key.verify(signature: signature, over: payload, digest: digest) }
}
