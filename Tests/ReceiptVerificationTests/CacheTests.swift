import Dispatch
import Foundation
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import Synchronization
import TestSupport
import Testing

/// The chain cache: hits within the validity window, misses outside it, never skips the signature,
/// stays bounded, and is safe to share between threads.
@Suite struct CacheTests {
    let realReceipt: [UInt8]
    let appleRoot: Certificate

    init() throws {
        realReceipt = try Fixtures.bytes("receipt-sandbox-g5.der")
        appleRoot = try BundledAnchors.appleIncRoot
    }

    @Test func secondVerificationIsACacheHit() throws {
        let cache = ChainCache()
        let verifier = AppReceiptVerifier(anchors: [appleRoot], cache: cache)
        let first = verifier.verify(realReceipt)
        let second = verifier.verify(realReceipt)
        #expect(first.isValid && second.isValid)
        #expect(cache.statistics.chainValidations == 1)
        #expect(cache.statistics.chainHits == 1)
        #expect(cache.statistics.count == 1)
        #expect(second.check(.chain)?.reason.hasSuffix("(cached)") == true)
        #expect(first.chain == second.chain)
    }

    @Test func aCacheHitNeverSkipsTheSignatureOverThePayload() throws {
        let cache = ChainCache()
        let verifier = AppReceiptVerifier(anchors: [appleRoot], cache: cache)
        #expect(verifier.verify(realReceipt).isValid)
        // Same certificates, altered payload: the chain comes from the cache, the signature fails.
        var tampered = realReceipt
        let needle = Array("dev.bonzer.weeka.app".utf8)
        let offset = try #require(tampered.firstRange(of: needle)?.lowerBound)
        tampered[offset] = UInt8(ascii: "e")
        let verdict = verifier.verify(tampered)
        #expect(cache.statistics.chainHits == 1, "the chain was served from the cache")
        #expect(verdict.passed(.chain))
        #expect(verdict.failures.map(\.name) == [.signature], "\(verdict)")
        #expect(verdict.isValid == false)
        // And a flipped signature bit, also with a cached chain.
        var flipped = realReceipt
        flipped[flipped.count - 1] ^= 0x80
        #expect(verifier.verify(flipped).failures.map(\.name) == [.signature])
        #expect(cache.statistics.chainHits == 2)
    }

    @Test func anyTimeInsideTheValidityWindowHitsAndOutsideValidatesAgain() throws {
        let cache = ChainCache()
        let verifier = AppReceiptVerifier(anchors: [appleRoot], cache: cache)
        // The G5 receipt's chain: leaf 2024-07-24 → 2026-08-23, WWDR G5 2020-12-16 → 2030-12-10, root to 2035.
        #expect(verifier.verify(realReceipt, at: .fixed(utc(2025, 1, 1))).isValid)
        #expect(verifier.verify(realReceipt, at: .fixed(utc(2024, 7, 25))).isValid)
        #expect(verifier.verify(realReceipt, at: .fixed(utc(2026, 8, 22))).isValid)
        #expect(cache.statistics.chainValidations == 1)
        #expect(cache.statistics.chainHits == 2)
        let expired = verifier.verify(realReceipt, at: .fixed(today))
        #expect(expired.failed(.chain))
        #expect(cache.statistics.chainValidations == 2, "outside the window the chain is validated again")
        #expect(verifier.verify(realReceipt, at: .fixed(utc(2024, 1, 1))).failed(.chain), "before the leaf's notBefore")
        #expect(cache.statistics.chainHits == 2)
    }

    @Test func anotherAnchorSetDoesNotShareEntries() throws {
        let cache = ChainCache()
        let apple = AppReceiptVerifier(anchors: [appleRoot], cache: cache)
        let wrong = AppReceiptVerifier(anchors: [try Fixtures.certificate("frank4dd-cacert.der")], cache: cache)
        #expect(apple.verify(realReceipt).isValid)
        let verdict = wrong.verify(realReceipt)
        #expect(verdict.failed(.chain))
        #expect(cache.statistics.chainHits == 0)
        #expect(cache.statistics.count == 1, "failed validations are not stored")
        // Two anchor sets with the right root among them are another key.
        let both = AppReceiptVerifier(anchors: [appleRoot, try Fixtures.certificate("frank4dd-cacert.der")], cache: cache)
        #expect(both.verify(realReceipt).isValid)
        #expect(cache.statistics.count == 2)
        #expect(cache.statistics.chainHits == 0)
    }

    @Test func theCacheIsBoundedAndEvictsTheLeastRecentlyUsed() throws {
        let cache = ChainCache(capacity: 2)
        let verifier = AppReceiptVerifier(anchors: [appleRoot], cache: cache)
        let a = try Fixtures.bytes("receipt-sandbox-g5.der")  // leaf 2024, WWDR G5
        let b = try Fixtures.bytes("receipt-sandbox-legacy.der")  // leaf 2015, WWDR 2013
        let c = try Fixtures.bytes("kvitto-receipt.der")  // leaf 2010, WWDR 2008
        #expect(verifier.verify(a).isValid && verifier.verify(b).isValid)
        #expect(verifier.verify(a).isValid)  // a is now the most recently used
        #expect(verifier.verify(c).isValid)  // evicts b
        #expect(cache.statistics.count == 2)
        #expect(cache.statistics.evictions == 1)
        let validations = cache.statistics.chainValidations
        #expect(verifier.verify(a).isValid)
        #expect(cache.statistics.chainValidations == validations, "a stayed")
        #expect(verifier.verify(b).isValid)
        #expect(cache.statistics.chainValidations == validations + 1, "b was evicted")
        cache.removeAll()
        #expect(cache.statistics.count == 0)
    }

    @Test func extraCertificatesShareTheEntryButAMissingIntermediateDoesNot() throws {
        let pki = try PKIs.apple.get()
        let cache = ChainCache()
        let verifier = AppReceiptVerifier(anchors: [pki.root], cache: cache)
        #expect(verifier.verify(try pki.signer().sign(sampleReceipt())).isValid)
        // The same leaf and intermediate plus unrelated certificates: the cached chain applies.
        // (Not another test PKI's leaf: those share issuer and serial with this one, which the
        // verifier rightly refuses as an ambiguous signer.)
        var padded = pki.signer()
        padded.chain = [
            pki.intermediate, pki.root, try Fixtures.certificate("AppleWWDRCA-G5.der"), try Fixtures.certificate("frank4dd-cacert.der"),
        ]
        let paddedVerdict = verifier.verify(try padded.sign(sampleReceipt()))
        #expect(paddedVerdict.isValid, "\(paddedVerdict)")
        #expect(cache.statistics.chainHits == 1)
        #expect(cache.statistics.count == 1)
        // The same leaf without its intermediate: the warm cache must not vouch for it.
        var orphan = pki.signer()
        orphan.chain = [try PKIs.other.get().intermediate, pki.root]
        let orphanVerdict = verifier.verify(try orphan.sign(sampleReceipt()))
        #expect(orphanVerdict.failures.map(\.name) == [.chain], "\(orphanVerdict)")
        #expect(cache.statistics.chainHits == 1)
        #expect(cache.statistics.chainValidations == 2)
        var bare = pki.signer()
        bare.chain = []
        #expect(verifier.verify(try bare.sign(sampleReceipt())).failures.map(\.name) == [.chain])
    }

    @Test func withoutACacheEveryVerificationValidates() throws {
        let verifier = AppReceiptVerifier(anchors: [appleRoot], cache: nil)
        #expect(verifier.verify(realReceipt).isValid)
        #expect(verifier.verify(realReceipt).check(.chain)?.reason.hasSuffix("(cached)") == false)
    }

    @Test func sharedAcrossThreads() throws {
        let cache = ChainCache()
        let apple = AppReceiptVerifier(anchors: [appleRoot], cache: cache)
        let receipts = try Fixtures.appStoreReceipts.map { try Fixtures.bytes($0) }
        let failures = Mutex(0)
        let iterations = 8 * receipts.count
        DispatchQueue.concurrentPerform(iterations: iterations) { index in
            let verdict = apple.verify(receipts[index % receipts.count])
            if !verdict.isValid { failures.withLock { $0 += 1 } }
        }
        #expect(failures.withLock { $0 } == 0)
        let statistics = cache.statistics
        #expect(statistics.chainHits + statistics.chainValidations == iterations)
        #expect(statistics.chainHits > 0)
    }

    /// Not a timed assertion: prints what a warm verification costs next to a cold one and next to
    /// its floor (one RSA verification plus one digest), for the report.
    @Test func warmVerificationCostsAboutOneSignatureCheck() throws {
        let rounds = 200
        let clock = ContinuousClock()
        let warm = AppReceiptVerifier(anchors: [appleRoot], cache: ChainCache())
        let cold = AppReceiptVerifier(anchors: [appleRoot], cache: nil)
        #expect(warm.verify(realReceipt).isValid)
        var valid = 0
        let warmTime = clock.measure { for _ in 0..<rounds where warm.verify(realReceipt).isValid { valid += 1 } }
        let coldTime = clock.measure { for _ in 0..<rounds where cold.verify(realReceipt).isValid { valid += 1 } }
        let envelope = try ReceiptEnvelope(realReceipt)
        let key = try Certificate(derEncoded: Array(envelope.certificates[0])).publicKey
        let signature = envelope.signers[0].signature
        let floorTime = clock.measure {
            for _ in 0..<rounds {
                if key.verify(signature: signature, over: envelope.payload, digest: .sha256) { valid += 1 }
            }
        }
        let parseTime = clock.measure { for _ in 0..<rounds where (try? AppReceipt(realReceipt)) != nil { valid += 1 } }
        #expect(valid == 4 * rounds)
        func perCall(_ duration: Duration) -> String {
            let microseconds = Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
            return String(format: "%.1f µs", microseconds / Double(rounds))
        }
        print(
            "receipt-sandbox-g5 (\(realReceipt.count) bytes), per verification: warm \(perCall(warmTime)), cold \(perCall(coldTime)); "
                + "RSA verify + digest alone \(perCall(floorTime)); parse alone \(perCall(parseTime))")
    }
}
