import Foundation
import Internals
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import TestSupport
import Testing

/// The one verification machinery: both receipt formats give the same verdict shape, read time the
/// same way, name checks in one namespace, share the chain cache, and report the same assurance.
@Suite struct MachineryTests {
    static let legacyPurchase = Date(timeIntervalSince1970: 1_500_000_000)

    func legacyReceipt(_ pki: TestPKI, purchase: Date = Self.legacyPurchase) throws -> TransactionReceipt {
        let info = try PurchaseInfo(entries: [
            .init(key: "transaction-id", value: .string("7")),
            .init(key: "purchase-date-ms", value: .string(String(Int64(purchase.timeIntervalSince1970 * 1000)))),
        ])
        return try pki.transactionReceiptSigner().sign(info)
    }

    /// The same required steps, in the same order, for both formats: parse, anchors, the format's
    /// own checks ending in the signature, then time, chain, pinned anchor and policy.
    @Test func bothFormatsRunTheSameSteps() throws {
        let pki = try PKIs.apple.get()
        let app = AppReceiptVerifier(anchors: [pki.root]).verify(try pki.signer().sign(sampleReceipt()))
        let legacyPKI = try TestPKI.transactionReceiptPKI()
        let legacy = TransactionReceiptVerifier(intermediate: legacyPKI.intermediate, anchors: [legacyPKI.root])
            .verify(try legacyReceipt(legacyPKI))
        for names in [app.checks.map(\.name), legacy.checks.map(\.name)] {
            #expect(names.prefix(2) == [.parse, .trustAnchors])
            let signature = try #require(names.firstIndex(of: .signature))
            #expect(Array(names[(signature + 1)...].prefix(4)) == [.validationTime, .chain, .pinnedAnchor, .chainLength])
        }
        #expect(app.isValid && legacy.isValid)
        // Verdict<AppReceipt> and Verdict<TransactionReceipt> are one generic type.
        func summary<P>(_ verdict: Verdict<P>) -> String {
            "\(verdict.isValid) \(verdict.checks.count) \(verdict.assurance?.rawValue ?? "-")"
        }
        #expect(summary(app) == "true \(app.checks.count) configuredAnchor")
        #expect(summary(legacy) == "true \(legacy.checks.count) configuredAnchor")
    }

    /// `.signedDate` means each format's own date; `.fixed`, `.clock` and `.now` mean the same for both.
    @Test func validationTimeMeansTheSameForEveryFormat() throws {
        let pki = try PKIs.apple.get()
        let created = utc(2024, 8, 6, 12)
        let appVerifier = AppReceiptVerifier(anchors: [pki.root], cache: nil)
        let appBytes = try pki.signer().sign(sampleReceipt(creationDate: created))
        let legacyPKI = try TestPKI.transactionReceiptPKI()
        let legacyVerifier = TransactionReceiptVerifier(intermediate: legacyPKI.intermediate, anchors: [legacyPKI.root], cache: nil)
        let legacy = try legacyReceipt(legacyPKI)

        #expect(appVerifier.verify(appBytes).validationTime == created)
        #expect(appVerifier.verify(appBytes).check(.validationTime)?.reason.hasPrefix("the receipt creation date") == true)
        #expect(legacyVerifier.verify(legacy).validationTime == Self.legacyPurchase)
        #expect(legacyVerifier.verify(legacy).check(.validationTime)?.reason.hasPrefix("the purchase date") == true)

        let instant = utc(2025, 1, 2, 3, 4, 5)
        let counter = Counter()
        for time in [
            ValidationTime.fixed(instant),
            .clock({
                counter.increment()
                return instant
            }),
        ] {
            let appVerdict = appVerifier.verify(appBytes, at: time)
            let legacyVerdict = legacyVerifier.verify(legacy, at: time)
            #expect(appVerdict.validationTime == instant)
            #expect(legacyVerdict.validationTime == instant)
        }
        #expect(counter.value == 2, "a clock is read once per verification, when it runs")
        let before = Date()
        let now = legacyVerifier.verify(legacy, at: .now)
        #expect(try #require(now.validationTime) >= before)

        // A time outside what X.509 can express is a failed check, not a crash, for both.
        let absurd = ValidationTime.fixed(Date(timeIntervalSince1970: 1e15))
        #expect(appVerifier.verify(appBytes, at: absurd).failed(.validationTime))
        #expect(legacyVerifier.verify(legacy, at: absurd).failed(.validationTime))
        #expect(!legacyVerifier.verify(legacy, at: .clock { .distantFuture }).isValid)
    }

    /// The chain cache serves transaction receipts too: the second verification of a receipt
    /// signed by the same leaf reuses the validated chain, at any time inside its window.
    @Test func transactionReceiptsShareTheChainCache() throws {
        let pki = try TestPKI.transactionReceiptPKI()
        let cache = ChainCache()
        let verifier = TransactionReceiptVerifier(intermediate: pki.intermediate, anchors: [pki.root], cache: cache)
        #expect(verifier.verify(try legacyReceipt(pki)).isValid)
        let later = try legacyReceipt(pki, purchase: Self.legacyPurchase.addingTimeInterval(86_400 * 30))
        let second = verifier.verify(later)
        #expect(second.isValid)
        #expect(second.check(.chain)?.reason.hasSuffix("(cached)") == true)
        #expect(cache.statistics.chainValidations == 1)
        #expect(cache.statistics.chainHits == 1)
        // The signature is still checked on every call.
        var changed = later.purchaseInfoData
        let seven = try #require(changed.firstRange(of: Array("\"7\"".utf8)))
        changed[seven.lowerBound + 1] = UInt8(ascii: "8")
        let forged = try TransactionReceipt(signatureBlob: later.signatureBlob, purchaseInfoData: changed)
        #expect(verifier.verify(forged).firstFailure?.name == .signature)
    }

    /// The assurance says what a valid verdict means: Apple's roots, StoreKit testing, or your own anchor.
    @Test func assuranceNamesWhatTheChainEndedAt() throws {
        let apple = try AppReceiptVerifier.appStore().verify(try Fixtures.bytes("receipt-sandbox-g5.der"))
        #expect(apple.isValid, "\(apple.summary)")
        #expect(apple.assurance == .apple)
        let xcode = try AppReceiptVerifier.xcode().verify(try Fixtures.bytes("receipt-xcode.der"))
        #expect(xcode.isValid, "\(xcode.summary)")
        #expect(xcode.assurance == .storeKitTesting)
        let pki = try PKIs.apple.get()
        let own = AppReceiptVerifier(anchors: [pki.root]).verify(try pki.signer().sign(sampleReceipt()))
        #expect(own.assurance == .configuredAnchor)
        // An invalid verdict carries none.
        let invalid = AppReceiptVerifier(anchors: [pki.root]).verify(try pki.signer().sign(sampleReceipt()), at: .fixed(utc(1999, 1, 1)))
        #expect(!invalid.isValid)
        #expect(invalid.assurance == nil)
    }

    /// Reasons are written when read: a verdict's checks can be read many times with the same text.
    @Test func reasonsAreStableWhenReadAgain() throws {
        let pki = try PKIs.apple.get()
        let verdict = AppReceiptVerifier(anchors: [pki.root]).verify(try pki.signer().sign(sampleReceipt()))
        let first = verdict.checks.map(\.reason)
        #expect(first == verdict.checks.map(\.reason))
        #expect(first.allSatisfy { !$0.isEmpty })
        #expect(verdict.description.hasPrefix("valid\n  ✓ parse: DER PKCS#7"))
    }

    /// A transaction receipt changed after parsing is re-read from its own text before it is checked.
    @Test func aParsedTransactionReceiptIsCheckedAgainstItsOwnText() throws {
        let pki = try TestPKI.transactionReceiptPKI()
        let verifier = TransactionReceiptVerifier(intermediate: pki.intermediate, anchors: [pki.root])
        let receipt = try legacyReceipt(pki)
        #expect(verifier.verify(receipt).isValid)
        #expect(verifier.verify(Array(receipt.text)).isValid)
        #expect(verifier.verify([0x7B, 0x7D]).checks.map(\.name) == [.parse])
    }
}

/// A thread-safe counter for clocks.
final class Counter: Sendable {
    private let count = Locked(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
