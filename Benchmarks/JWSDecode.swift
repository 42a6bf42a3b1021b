import Foundation
import JSON
import JWS
import ReceiptCrypto
import ReceiptVerification
import TestSupport

/// `jws-decode`: a real Apple-signed transaction (gopay's sandbox-transaction-2000000184445477,
/// 5.2 KB with three certificates in its header) split, base64url-decoded, its header and x5c
/// parsed and its payload decoded into a `JWSTransaction`; then the parts on their own, one bare
/// OpenSSL ES256 verify of the same signing input as the yardstick, and the whole warm verification
/// (`jws-verify-warm`, see ``JWSVerifyBench``).
enum JWSDecodeBench {
    static let tokenPath = "jws/gopay/sandbox-transaction-2000000184445477.jws"

    static func measure(with harness: Harness, into report: inout Report) throws {
        let path = Fixtures.root.appendingPathComponent(tokenPath).path
        guard let data = FileManager.default.contents(atPath: path) else {
            report.notes.append("\(tokenPath) not found; jws-decode skipped")
            return
        }
        let token = [UInt8](data)
        let jws = try CompactJWS(token)
        let transaction = try jws.decodePayloadToVerify(as: JWSTransaction.self)
        let payload = jws.unverifiedPayload
        let expected = (transaction.transactionId?.utf8.count ?? 0) + (transaction.quantity ?? 0)
        report.results.append(
            try harness.measure(
                Measurement(name: "jws-decode", bytes: token.count, expected: expected) {
                    let t = try CompactJWS(token).decodePayloadToVerify(as: JWSTransaction.self)
                    return (t.transactionId?.utf8.count ?? 0) + (t.quantity ?? 0)
                }))
        let cache = JWSHeaderCache()
        report.results.append(
            try harness.measure(
                Measurement(name: "jws-decode (header cache)", bytes: token.count, expected: expected) {
                    let t = try CompactJWS(token, headerCache: cache).decodePayloadToVerify(as: JWSTransaction.self)
                    return (t.transactionId?.utf8.count ?? 0) + (t.quantity ?? 0)
                }))
        report.results.append(
            try harness.measure(
                Measurement(name: "jws-decode/split+header", bytes: token.count, expected: 3) {
                    try CompactJWS(token).header.certificateChain?.count ?? 0
                }))
        report.results.append(
            try harness.measure(
                Measurement(name: "jws-decode/payload", bytes: payload.count, expected: expected) {
                    let t = try JWSTransaction(jsonPayload: payload)
                    return (t.transactionId?.utf8.count ?? 0) + (t.quantity ?? 0)
                }))
        report.results.append(
            try harness.measure(
                Measurement(name: "jws-decode/payload as JSONValue", bytes: payload.count, expected: 16) {
                    try JSONValue.parse(payload).objectValue?.count ?? 0
                }))
        guard let leafDER = jws.header.certificateChain?.first else { return }
        let key = try Certificate(derEncoded: leafDER).publicKey
        let signature = derSignature(jws.signature)
        let input = Array(jws.signingInput)
        report.results.append(
            try harness.measure(
                Measurement(name: "es256-verify", bytes: input.count, expected: 1) {
                    key.verify(signature: signature, over: input, digest: .sha256) ? 1 : 0
                }))
        report.ratio("jws-decode vs one bare ES256 verify", "jws-decode", "es256-verify")
        report.ratio("jws-decode (header cache) vs one bare ES256 verify", "jws-decode (header cache)", "es256-verify")
        // The whole warm verification of the same token against the bundled Apple roots.
        try JWSVerifyBench(bytes: token, anchors: try TrustAnchors.appleRoots).measure(with: harness, into: &report)
    }

    /// `r ‖ s` (32 + 32 bytes) as the DER `ECDSA-Sig-Value` OpenSSL verifies.
    static func derSignature(_ raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var body = Array(bytes.drop { $0 == 0 })
            if body.isEmpty || body[0] & 0x80 != 0 { body.insert(0, at: 0) }
            return [0x02, UInt8(body.count)] + body
        }
        let half = raw.count / 2
        let content = integer(raw[..<half]) + integer(raw[half...])
        return [0x30, UInt8(content.count)] + content
    }
}
