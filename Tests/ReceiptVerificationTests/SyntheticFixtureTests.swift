import Foundation
import ReceiptCrypto
import ReceiptVerification
import Receipts
import TestSupport
import Testing

/// The fake-PKI receipts of TestReceipts/synthetic (from apple-purchase-receipt-verifier; see its
/// manifest.json): other people's synthetic receipts, checked against their stated outcomes.
///
/// Their fake WWDR intermediate carries no 1.2.840.113635.100.6.2.1 marker (their verifier checks
/// only the leaf's), so they are verified with a custom policy of the same shape: a chain of 3
/// and the leaf marker. Under the full App Store profile they fail `intermediateMarker`.
@Suite struct SyntheticFixtureTests {
    static let policy = VerificationPolicy.custom([ChainLengthPolicy(exactly: 3), CertificateExtensionPolicy.appleReceiptSigningLeaf])

    func verifier(root: String, policy: VerificationPolicy = SyntheticFixtureTests.policy) throws -> AppReceiptVerifier {
        AppReceiptVerifier(
            anchors: try TrustAnchors(contentsOfFile: Fixtures.root.appendingPathComponent("synthetic/" + root).path), policy: policy)
    }

    @Test func theFullAppStoreProfileWantsTheIntermediateMarker() throws {
        let verdict = try verifier(root: "receipt-root.der", policy: .appStore).verify(bytes("receipt.der"))
        #expect(verdict.failures.map(\.name) == [.intermediateMarker], "\(verdict)")
    }

    func bytes(_ name: String) throws -> [UInt8] { try Fixtures.bytes("synthetic/" + name) }

    @Test func receiptVerifiesWithItsRoot() throws {
        let device = try #require(DeviceIdentifier("112233445566778899aabbccddeeff00"))
        let verdict = try verifier(root: "receipt-root.der").verify(
            bytes("receipt.der"),
            expecting: ReceiptExpectations(bundleIdentifier: "com.example.app", appVersion: "1.2.3", deviceIdentifier: device))
        #expect(verdict.isValid, "\(verdict)")
        #expect(verdict.receipt?.inAppPurchases.count == 2)
        #expect(verdict.receipt?.receiptType == "ProductionSandbox")
        #expect(verdict.chain?.count == 3)
    }

    @Test func doubleWrappedPayloadVerifies() throws {
        let verdict = try verifier(root: "receipt-root.der").verify(bytes("receipt-double-wrapped.der"))
        #expect(verdict.isValid, "\(verdict)")
        #expect(verdict.receipt?.appVersion == "1.2.3")
    }

    @Test func foreignReceiptFailsTheChain() throws {
        let verdict = try verifier(root: "receipt-root.der").verify(bytes("receipt-foreign.der"))
        #expect(verdict.firstFailure?.name == .chain, "\(verdict)")
    }

    @Test func receiptWithoutTheSignerMarkerFailsThePolicy() throws {
        let verdict = try verifier(root: "receipt-no-signer-oid-root.der").verify(bytes("receipt-no-signer-oid.der"))
        #expect(verdict.failures.map(\.name) == [.leafMarker], "\(verdict)")
        #expect(verdict.passed(.chain))
    }

    @Test func expiredChainVerifiesOnlyAtItsHistoricalCreationDate() throws {
        let verifier = try verifier(root: "receipt-expired-root.der")
        let historical = verifier.verify(try bytes("receipt-expired-historical.der"))
        #expect(historical.isValid, "\(historical)")
        #expect(historical.validationTime == Date(timeIntervalSince1970: 1_590_969_600))
        let fresh = verifier.verify(try bytes("receipt-expired-fresh.der"))
        #expect(fresh.firstFailure?.name == .chain, "\(fresh)")
        #expect(fresh.check(.chain)?.reason.contains("[expired]") == true)
        #expect(verifier.verify(try bytes("receipt-expired-historical.der"), at: .fixed(today)).failed(.chain))
    }

    @Test func trailingBytesAreAParseFailure() throws {
        let verdict = try verifier(root: "receipt-root.der").verify(bytes("receipt.der") + [1, 2, 3, 4])
        #expect(verdict.checks.map(\.name) == [.parse])
    }

    @Test(arguments: ["receipt-type-production.der", "receipt-type-vpp.der", "receipt-type-vpp-sandbox.der", "receipt-no-type.der"])
    func receiptTypesMapToEnvironments(name: String) throws {
        let verifier = try verifier(root: "receipt-root.der")
        let production = verifier.verify(try bytes(name), expecting: ReceiptExpectations(allowedEnvironments: [.production]))
        let expectedProduction = name == "receipt-type-production.der" || name == "receipt-type-vpp.der"
        #expect(production.isValid == expectedProduction, "\(production)")
        if !expectedProduction { #expect(production.failures.map(\.name) == [.environment]) }
    }
}
