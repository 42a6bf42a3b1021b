import Foundation
import JWS
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification

/// `--ocsp`: what revocation costs a warm JWS verification once the OCSP answers are at hand.
/// A JWS test PKI names OCSP responders; `openssl ocsp -respout` answers for its leaf and
/// intermediate from the PKI's CA index (the only use of the `openssl` command here), and the
/// verifier checks them through an ``OCSPChecker`` given those responses, so no network is used
/// and every verification after the first reads its answers from the checker's cache. The pair
/// `jws-verify-warm-ocsp` / `jws-verify-warm-same-pki` is timed interleaved; the issue's target
/// is at most 1.1×.
enum OCSPOverheadBench {
    static func run(harness: Harness) throws -> Report {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ocsp-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try TestPKI.jws {
            $0.leafOCSPURL = "http://127.0.0.1:9/leaf"
            $0.intermediateOCSPURL = "http://127.0.0.1:9/ca"
        }
        try pki.write(to: directory)
        try Data(pki.opensslIndex().utf8).write(to: directory.appendingPathComponent("index.txt"))
        var responses: [OCSPResponse] = []
        for (issuer, subject) in [("intermediate", "leaf"), ("root", "intermediate")] {
            let output = "\(subject)-ocsp.der"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = [
                "ocsp", "-index", "index.txt", "-CA", "\(issuer).pem", "-rsigner", "\(issuer).pem", "-rkey", "\(issuer)-key.pem",
                "-issuer", "\(issuer).pem", "-cert", "\(subject).pem", "-respout", output, "-ndays", "1",
            ]
            process.currentDirectoryURL = directory
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw BenchmarkError(description: "openssl ocsp failed for \(subject)") }
            responses.append(try OCSPResponse(derEncoded: Array(try Data(contentsOf: directory.appendingPathComponent(output)))))
        }
        let payload = Array(
            #"{"transactionId":"42","originalTransactionId":"41","bundleId":"com.example.app","productId":"pro","purchaseDate":1733000000000,"signedDate":1733000000000,"environment":"Production","quantity":1}"#
                .utf8)
        let token = Array(try pki.jwsSigner().sign(payload: payload).utf8)
        let headers = JWSHeaderCache()
        let plain = JWSTransactionVerifier(anchors: [pki.root], policy: .appStore, cache: .shared, headerCache: headers)
        let checked = JWSTransactionVerifier(
            anchors: [pki.root], policy: .appStore.with(revocation: .ocsp(.hardFail, checker: OCSPChecker(responses: responses))),
            cache: .shared, headerCache: headers)
        // Revocation is judged at the clock: the responses are fresh now.
        let withOCSP = Measurement(name: "jws-verify-warm-ocsp", bytes: token.count, expected: 1) {
            checked.verify(token, at: .now).isValid ? 1 : 0
        }
        let without = Measurement(name: "jws-verify-warm-same-pki", bytes: token.count, expected: 1) {
            plain.verify(token, at: .now).isValid ? 1 : 0
        }
        let (a, b, ratio) = try harness.measurePair(withOCSP, without)
        var report = Report()
        report.results = [a, b]
        report.ratios.append(("jws-verify-warm-ocsp vs jws-verify-warm-same-pki (target ≤ 1.1×)", ratio))
        report.notes.append("OCSP answers from captured responses (openssl ocsp -respout), cached by the checker after the first use")
        return report
    }
}
