import Foundation
import Internals
import JSON
import JWS
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import TestSupport
import Testing

/// Each JWS verifier accepts only its kind (top level and nested), and every chain meets Apple's
/// certificate profile (keyUsage, basicConstraints) and every JWS header Apple's `crit` rule.
@Suite struct KindConfusionTests {
    static let signedDate: Int64 = 1_733_000_000_000  // 2024-11-30
    static let transaction =
        #"{"transactionId":"42","originalTransactionId":"41","bundleId":"com.example.app","productId":"pro","purchaseDate":1733000000000,"signedDate":1733000000000,"environment":"Production","quantity":1}"#
    static let renewal =
        #"{"originalTransactionId":"41","productId":"pro","autoRenewProductId":"pro","autoRenewStatus":1,"environment":"Production","signedDate":1733000000000}"#

    func sign(_ json: String, _ pki: TestPKI) throws -> String { try pki.jwsSigner().sign(payload: Array(json.utf8)) }

    /// A genuine renewal info given to the transaction verifier, and a genuine transaction given to
    /// the renewal verifier: both invalid, the check `kind` naming the kind found.
    @Test func realRenewalInfoAndTransactionAreNotEachOther() throws {
        let renewal = try Fixtures.bytes("jws/go-iap/sandbox-renewal-info-2000000335310644.jws")
        let transaction = try Fixtures.bytes("jws/gopay/sandbox-transaction-2000000184445477.jws")
        let asTransaction = try JWSTransactionVerifier.appStoreJWS(cache: nil).verify(renewal)
        #expect(!asTransaction.isValid)
        #expect(asTransaction.failures.map(\.name) == [.kind], "\(asTransaction)")
        #expect(asTransaction.check(.kind)?.reason.contains("is a renewal info, not a transaction") == true)
        let asRenewal = try JWSRenewalInfoVerifier.appStoreJWS(cache: nil).verify(transaction)
        #expect(!asRenewal.isValid)
        #expect(asRenewal.failures.map(\.name) == [.kind], "\(asRenewal)")
        #expect(asRenewal.check(.kind)?.reason.contains("is a transaction, not a renewal info") == true)
        // Each is valid as its own kind, and says so.
        let own = try JWSRenewalInfoVerifier.appStoreJWS(cache: nil).verify(renewal)
        #expect(own.isValid)
        #expect(own.check(.kind)?.reason == "renewal info")
        #expect(try JWSTransactionVerifier.appStoreJWS(cache: nil).verify(transaction).isValid)
        // A notification is neither; an app transaction verifier takes neither.
        let notification = try Fixtures.bytes("jws/appstore-iap/sandbox-notification-TEST.jws")
        #expect(try JWSTransactionVerifier.appStoreJWS(cache: nil).verify(notification).firstFailure?.name == .kind)
        #expect(try AppTransactionVerifier.appStoreJWS(cache: nil).verify(transaction).firstFailure?.name == .kind)
        #expect(try NotificationVerifier.appStoreJWS(cache: nil).verify(renewal).firstFailure?.name == .kind)
    }

    /// Apple's minimal mock renewal info (only environment and signedDate) verifies as renewal
    /// info under Apple's test CA, and as nothing else.
    /// A payload type from outside the package gets the kind check that walks its JSON: its own
    /// model cannot tell the check which members the payload has.
    @Test func anOutsidePayloadTypeIsCheckedByItsJSON() throws {
        let asRenewal = try OutsideTransaction(jsonPayload: Array(Self.renewal.utf8))
        #expect(asRenewal.kindMismatch != nil)
        #expect(asRenewal.kindMismatch == AppStorePayloadKind.transaction.mismatch(jsonPayload: asRenewal.jsonPayload))
        #expect(try OutsideTransaction(jsonPayload: Array(Self.transaction.utf8)).kindMismatch == nil)
    }

    @Test func applesMinimalRenewalInfoIsRenewalInfoOnly() throws {
        let testCA = TrustAnchors([try Fixtures.certificate("../jws/certs/testCA.der")])
        let bytes = try Fixtures.bytes("jws/apple/mock_signed_data/renewalInfo.jws")
        #expect(JWSRenewalInfoVerifier(anchors: testCA, cache: nil).verify(bytes).isValid)
        let asTransaction = JWSTransactionVerifier(anchors: testCA, cache: nil).verify(bytes)
        #expect(asTransaction.failures.map(\.name) == [.kind])
        #expect(asTransaction.check(.kind)?.reason.contains("none of transactionId, bundleId") == true)
    }

    /// Inside a notification, `signedTransactionInfo` holding a renewal info or a notification, or
    /// a transaction without bundleId, fails the nested check, whose reason names what was found;
    /// a valid notification hands out its nested values verified and typed.
    @Test func nestedTokensAreCheckedForTheirKindAndBundle() throws {
        let pki = try PKIs.jws.get()
        let verifier = NotificationVerifier(anchors: [pki.root], cache: nil)
        func notification(transaction: String, renewal: String? = nil) throws -> String {
            let renewalMember = renewal.map { #","signedRenewalInfo":"\#($0)""# } ?? ""
            return try sign(
                #"{"notificationType":"DID_RENEW","notificationUUID":"6b9f2e1a-0000-4000-8000-000000000002","data":{"appAppleId":1,"bundleId":"com.example.app","environment":"Production","signedTransactionInfo":"\#(transaction)"\#(renewalMember)},"version":"2.0","signedDate":\#(Self.signedDate)}"#,
                pki)
        }
        let genuine = verifier.verify(
            token: try notification(transaction: try sign(Self.transaction, pki), renewal: try sign(Self.renewal, pki)))
        #expect(genuine.isValid, "\(genuine)")
        #expect(genuine.nested.transaction?.value.transactionId == "42")
        #expect(genuine.nested.renewalInfo?.value.autoRenewProductId == "pro")
        #expect(genuine.check(.signedTransactionInfo)?.reason.hasPrefix("verified (a transaction, ") == true)

        let renewalAsTransaction = verifier.verify(token: try notification(transaction: try sign(Self.renewal, pki)))
        #expect(renewalAsTransaction.failures.map(\.name) == [.signedTransactionInfo], "\(renewalAsTransaction)")
        #expect(renewalAsTransaction.check(.signedTransactionInfo)?.reason.hasPrefix("kind: the payload is a renewal info") == true)
        #expect(renewalAsTransaction.nested.isEmpty)

        let inner = try notification(transaction: try sign(Self.transaction, pki))
        let notificationAsTransaction = verifier.verify(token: try notification(transaction: inner))
        #expect(notificationAsTransaction.failures.map(\.name) == [.signedTransactionInfo])
        #expect(notificationAsTransaction.check(.signedTransactionInfo)?.reason.hasPrefix("kind: the payload is a notification") == true)

        let noBundle = Self.transaction.replacingOccurrences(of: #""bundleId":"com.example.app","#, with: "")
        let bundleless = verifier.verify(token: try notification(transaction: try sign(noBundle, pki)))
        #expect(bundleless.failures.map(\.name) == [.signedTransactionInfo], "\(bundleless)")
        #expect(bundleless.check(.signedTransactionInfo)?.reason.contains("has no bundleId") == true)

        let transactionAsRenewal = verifier.verify(
            token: try notification(transaction: try sign(Self.transaction, pki), renewal: try sign(Self.transaction, pki)))
        #expect(transactionAsRenewal.failures.map(\.name) == [.signedRenewalInfo])
        #expect(transactionAsRenewal.check(.signedRenewalInfo)?.reason.hasPrefix("kind: the payload is a transaction") == true)
    }
}

@Suite struct CertificateProfileTests {
    static let transaction = KindConfusionTests.transaction

    /// A leaf issued under the pinned test PKI's intermediate, with the receipt-signing marker and
    /// the given key usage and basic constraints.
    static func leaf(
        _ pki: TestPKI, keyUsage: KeyUsage?, basicConstraints: BasicConstraints?, key: PrivateKey
    ) throws -> Certificate {
        var builder = CertificateBuilder(
            subject: [("CN", "Odd Leaf")], serialNumber: 77, notBefore: utc(2020, 1, 1), notAfter: utc(2040, 1, 1),
            publicKey: try key.publicKey)
        builder.digest = .sha384
        builder.basicConstraints = basicConstraints
        builder.keyUsage = keyUsage
        builder.customExtensions = [.marker(oid: TestPKI.leafMarkerOID)]
        return try builder.issued(by: pki.intermediate, signingKey: pki.intermediateKey)
    }

    @Test(arguments: [
        ("keyCertSign only", KeyUsage.keyCertSign, BasicConstraints.endEntity, "keyUsage"),
        ("keyAgreement only", KeyUsage.keyAgreement, BasicConstraints.endEntity, "keyUsage"),
        ("CA:TRUE", KeyUsage.digitalSignature, BasicConstraints.ca(), "basicConstraints"),
    ])
    func jwsLeavesOutsideTheProfileAreRejected(_ label: String, _ usage: KeyUsage, _ constraints: BasicConstraints, _ check: String)
        throws
    {
        let pki = try PKIs.jws.get()
        let key = try PrivateKey.generateP256()
        let leaf = try Self.leaf(pki, keyUsage: usage, basicConstraints: constraints, key: key)
        let token = try JWSSigner(key: key, chain: [leaf, pki.intermediate, pki.root]).sign(payload: Array(Self.transaction.utf8))
        let verdict = JWSTransactionVerifier(anchors: [pki.root], cache: nil).verify(token: token)
        #expect(!verdict.isValid, "\(label)")
        #expect(verdict.failures.map(\.name.rawValue) == [check], "\(label): \(verdict)")
        // The same leaf with the profile's usage verifies (the test is about the bits alone).
        let good = try Self.leaf(pki, keyUsage: .digitalSignature, basicConstraints: .endEntity, key: key)
        let fine = try JWSSigner(key: key, chain: [good, pki.intermediate, pki.root]).sign(payload: Array(Self.transaction.utf8))
        #expect(JWSTransactionVerifier(anchors: [pki.root], cache: nil).verify(token: fine).isValid)
    }

    /// Receipts' leaves likewise.
    @Test func receiptLeavesOutsideTheProfileAreRejected() throws {
        let pki = try PKIs.apple.get()
        for (usage, constraints, check) in [
            (KeyUsage.keyCertSign, BasicConstraints.endEntity, VerificationCheck.Name.keyUsage),
            (KeyUsage.digitalSignature, BasicConstraints.ca(), .basicConstraints),
        ] {
            let key = try PrivateKey.generateRSA(bits: 2048)
            var builder = CertificateBuilder(
                subject: [("CN", "Odd Receipt Leaf")], serialNumber: 78, notBefore: utc(2020, 1, 1), notAfter: utc(2040, 1, 1),
                publicKey: try key.publicKey)
            builder.basicConstraints = constraints
            builder.keyUsage = usage
            builder.customExtensions = [.marker(oid: TestPKI.leafMarkerOID)]
            let leaf = try builder.issued(by: pki.intermediate, signingKey: pki.intermediateKey)
            let receipt = SyntheticReceipts.receipt(purchases: 1)
            let bytes = try ReceiptSigner(key: key, certificate: leaf, chain: [pki.intermediate, pki.root]).sign(receipt)
            let verdict = AppReceiptVerifier(anchors: [pki.root], cache: nil).verify(bytes)
            #expect(verdict.failures.map(\.name) == [check], "\(verdict)")
        }
    }

    /// A header whose crit names an extension the verifier does not implement is rejected.
    @Test func unknownCritIsRejected() throws {
        let pki = try PKIs.jws.get()
        let signer = pki.jwsSigner()
        let x5c = signer.chain.map { "\"\(Base64.encode($0.derEncoded))\"" }.joined(separator: ",")
        let header = #"{"alg":"ES256","crit":["exp\u0007"],"exp\u0007":1,"x5c":[\#(x5c)]}"#
        let token = try signer.sign(payload: Array(Self.transaction.utf8), header: Array(header.utf8))
        let verdict = JWSTransactionVerifier(anchors: [pki.root], cache: nil).verify(token: token)
        #expect(verdict.failures.map(\.name) == [.crit], "\(verdict)")
        let reason = try #require(verdict.check(.crit)?.reason)
        #expect(reason.contains(#""exp\u{07}""#), "\(reason)")
        #expect(!reason.contains("\u{07}"))
    }

    /// Real Apple vectors still verify under the full profile: every check passes.
    @Test func realAppleChainsMeetTheProfile() throws {
        let token = try JWSTransactionVerifier.appStoreJWS(cache: nil).verify(
            try Fixtures.bytes("jws/gopay/sandbox-transaction-2000000184445477.jws"))
        #expect(token.isValid)
        #expect(token.check(.keyUsage)?.passed == true && token.check(.basicConstraints)?.passed == true)
        #expect(token.check(.crit)?.passed == true)
    }
}

/// A transaction type of the test's own: it keeps the JSON and claims nothing of it.
private struct OutsideTransaction: AppStoreSignedPayload {
    static var payloadKind: AppStorePayloadKind { .transaction }
    static var carriedClaims: Set<AppStoreClaims.Kind> { [] }
    let jsonPayload: [UInt8]
    init(jsonPayload: [UInt8], limits: JWSLimits) throws(JWSError) { self.jsonPayload = jsonPayload }
    func jsonValue() -> JSONValue { .object([]) }
    var validationDate: JWSDate? { nil }
    var claims: AppStoreClaims { AppStoreClaims(carried: []) }
}
