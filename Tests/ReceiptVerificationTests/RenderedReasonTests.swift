import Foundation
import ReceiptCrypto
import ReceiptVerification
import TestSupport
import Testing

/// The certificate names in verdict reasons (the signer's label, the chain summary, the pinned
/// anchor's subject) are rendered only when read; what they read is exactly what the
/// certificates' own accessors give, on a first verification and from the chain cache.
@Suite struct RenderedReasonTests {
    static func summary(_ chain: [Certificate]) -> String {
        "valid: " + chain.map { $0.subject.commonName ?? $0.subject.description }.joined(separator: " → ")
    }

    static func label(_ certificate: Certificate) -> String { "\(certificate.subject), serial \(certificate.serialNumberHex)" }

    @Test func receiptReasonsNameTheCertificates() throws {
        let anchor = try BundledAnchors.appleIncRoot
        let verifier = AppReceiptVerifier(anchors: [anchor], cache: ChainCache())
        let receipt = try Fixtures.bytes("receipt-sandbox-g5.der")
        let first = verifier.verify(receipt)
        let chain = try #require(first.chain)
        let leaf = try #require(chain.first)
        #expect(first.isValid)
        #expect(first.check(.chain)?.reason == Self.summary(chain))
        #expect(first.check(.pinnedAnchor)?.reason == "ends at the configured anchor \(anchor.subject)")
        let signer = try #require(first.check(.signerCertificate)?.reason)
        #expect(signer.hasPrefix("embedded certificate #") && signer.hasSuffix(": \(Self.label(leaf))"))
        // Read again: the same text.
        #expect(first.check(.chain)?.reason == Self.summary(chain))
        let second = verifier.verify(receipt)
        #expect(second.check(.chain)?.reason == Self.summary(chain) + " (cached)")
        #expect(second.check(.signerCertificate)?.reason == signer)
        #expect(second.check(.pinnedAnchor)?.reason == first.check(.pinnedAnchor)?.reason)
    }

    @Test func jwsReasonsNameTheCertificates() throws {
        let anchors = try TrustAnchors.appleRoots
        let token = try Fixtures.bytes("jws/gopay/sandbox-transaction-2000000184445477.jws")
        let verdict = JWSTransactionVerifier(anchors: anchors, policy: .appStore, cache: nil).verify(token, at: .signedDate)
        let chain = try #require(verdict.chain)
        let leaf = try #require(chain.first)
        let root = try #require(chain.last)
        #expect(verdict.isValid)
        #expect(verdict.check(.chain)?.reason == Self.summary(chain))
        #expect(verdict.check(.pinnedAnchor)?.reason == "ends at the configured anchor \(root.subject)")
        #expect(verdict.check(.signerCertificate)?.reason == "x5c[0]: \(Self.label(leaf))")
        #expect(Self.summary(chain).contains("Apple Root CA - G3"))
    }
}
