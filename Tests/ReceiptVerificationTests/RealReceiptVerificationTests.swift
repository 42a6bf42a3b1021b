import CryptoBaselines
import Foundation
import Internals
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import TestSupport
import Testing

/// The 22 real receipts against Apple's bundled anchors, at their creation date and today.
@Suite struct RealReceiptVerificationTests {
    static let appleVerifier: Result<AppReceiptVerifier, TrustAnchorError> = {
        do throws(TrustAnchorError) {
            return .success(AppReceiptVerifier(anchors: [try BundledAnchors.appleIncRoot], policy: .appStore))
        } catch {
            return .failure(error)
        }
    }()

    @Test(arguments: Fixtures.appStoreReceipts)
    func appStoreReceiptVerifiesAtItsCreationDate(name: String) throws {
        let verdict = try Self.appleVerifier.get().verify(Fixtures.bytes(name))
        #expect(verdict.isValid, "\(name):\n\(verdict.summary)")
        let chain = try #require(verdict.chain)
        #expect(chain.count == 3)
        #expect(chain.last == (try BundledAnchors.appleIncRoot))
        #expect(chain.first?.hasExtension(oid: TestPKI.leafMarkerOID) == true)
        #expect(verdict.validationTime == verdict.receipt?.creationDate)
        for name in [VerificationCheck.Name.signature, .chain, .pinnedAnchor, .chainLength, .leafMarker, .intermediateMarker] {
            #expect(verdict.passed(name), "\(name)")
        }
    }

    @Test(arguments: Fixtures.appStoreReceipts)
    func appStoreReceiptFailsTodayNamingTheExpiredCertificate(name: String) throws {
        let verdict = try Self.appleVerifier.get().verify(Fixtures.bytes(name), at: .fixed(today))
        #expect(!verdict.isValid)
        let chain = try #require(verdict.check(.chain), "\(verdict.summary)")
        #expect(!chain.passed)
        #expect(chain.reason.contains("certificate has expired"), "\(chain.reason)")
        #expect(chain.reason.contains("CN="), "the expired certificate is named: \(chain.reason)")
        #expect(chain.reason.contains("[expired]"))
        // The signature itself is still fine; only the chain is out of date.
        #expect(verdict.passed(.signature))
        #expect(verdict.chain == nil)
    }

    @Test func g5ReceiptNamesItsExpiredLeafToday() throws {
        let verdict = try Self.appleVerifier.get().verify(Fixtures.bytes("receipt-sandbox-g5.der"), at: .fixed(today))
        let reason = try #require(verdict.check(.chain)).reason
        #expect(reason.contains("Mac App Store and iTunes Store Receipt Signing"), "\(reason)")
        #expect(reason.contains("2026-08-23"), "\(reason)")
    }

    @Test(arguments: Fixtures.xcodeReceipts)
    func xcodeReceiptVerifiesAgainstStoreKitTestCertificate(name: String) throws {
        let verifier = try AppReceiptVerifier.xcode()
        let verdict = verifier.verify(try Fixtures.bytes(name))
        #expect(verdict.isValid, "\(name):\n\(verdict.summary)")
        #expect(verdict.chain?.count == 1)
        #expect(verdict.receipt?.receiptType == "Xcode")
        // Valid until 2040, so today too.
        #expect(verifier.verify(try Fixtures.bytes(name), at: .fixed(today)).isValid)
        // An Xcode receipt is no App Store receipt.
        #expect(!(try Self.appleVerifier.get().verify(Fixtures.bytes(name))).isValid)
    }

    @Test(arguments: Fixtures.realAppReceipts)
    func realReceiptFailsAgainstWrongAnchors(name: String) throws {
        let bytes = try Fixtures.bytes(name)
        let frank = AppReceiptVerifier(anchors: [try Fixtures.certificate("frank4dd-cacert.der")])
        let fresh = AppReceiptVerifier(anchors: [try PKIs.other.get().root])
        let frankXcode = AppReceiptVerifier(anchors: [try Fixtures.certificate("frank4dd-cacert.der")], policy: .xcode)
        for verifier in [frank, fresh, frankXcode] {
            let verdict = verifier.verify(bytes)
            #expect(!verdict.isValid)
            #expect(verdict.failed(.chain), "\(name):\n\(verdict.summary)")
            #expect(verdict.passed(.signature), "the signature is fine; the trust is not")
        }
    }

    @Test func appleRootsBundleVerifiesTheSameReceipts() throws {
        let verifier = try AppReceiptVerifier.appStore()
        #expect(verifier.anchors.certificates.count == 3)
        for name in Fixtures.appStoreReceipts {
            #expect(verifier.verify(try Fixtures.bytes(name)).isValid, "\(name)")
        }
    }

    static let knownDevices: [(String, DeviceIdentifier?)] = [
        ("hannes_mac_mindnode_receipt.der", DeviceIdentifier("6c4008b5945e")),
        (
            "purchasing_experiments_sandbox_receipt.der",
            (try? Base64.decode(Array("5hgQmGLdQz+7lGddOBXSYw==".utf8))).map(DeviceIdentifier.init(bytes:))
        ),
        ("mindnode_mac_sha256_receipt.der", DeviceIdentifier("f8:ff:c2:1e:91:82")),
        ("mindnode_ios_michaelsandbox_receipt1.der", DeviceIdentifier("3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CD")),
        ("receipt-sandbox-g5.der", DeviceIdentifier("956328D9-CC6A-47F4-BE40-6953FB0AB6C7")),
    ]

    @Test(arguments: knownDevices)
    func deviceHashMatchesTheKnownDeviceAndNoOther(name: String, device: DeviceIdentifier?) throws {
        let device = try #require(device)
        let verifier = try Self.appleVerifier.get()
        let bytes = try Fixtures.bytes(name)
        let good = verifier.verify(bytes, expecting: ReceiptExpectations(deviceIdentifier: device))
        #expect(good.isValid, "\(good.summary)")
        #expect(good.passed(.deviceHash))
        #expect(!good.unchecked.contains(.deviceHash))
        var other = device.bytes
        other[other.count - 1] ^= 0x01
        let bad = verifier.verify(bytes, expecting: ReceiptExpectations(deviceIdentifier: DeviceIdentifier(bytes: other)))
        #expect(!bad.isValid)
        #expect(bad.failed(.deviceHash))
        #expect(bad.failures.map(\.name) == [.deviceHash])
        let zero = verifier.verify(
            bytes,
            expecting: ReceiptExpectations(deviceIdentifier: DeviceIdentifier(bytes: [UInt8](repeating: 0, count: device.bytes.count))))
        #expect(zero.failed(.deviceHash))
    }

    @Test func receiptExpectationsPassForTheirOwnValues() throws {
        let verifier = try Self.appleVerifier.get()
        let verdict = verifier.verify(
            try Fixtures.bytes("receipt-sandbox-g5.der"),
            expecting: ReceiptExpectations(
                bundleIdentifier: "dev.bonzer.weeka.app", appVersion: "2", allowedEnvironments: [.sandbox],
                allowedReceiptTypes: ["ProductionSandbox"]))
        #expect(verdict.isValid, "\(verdict.summary)")
        for name in [VerificationCheck.Name.bundleIdentifier, .appVersion, .environment, .receiptType, .expirationDate] {
            #expect(verdict.passed(name), "\(name)")
        }
        #expect(verdict.unchecked == [.deviceHash])
        let production = verifier.verify(
            try Fixtures.bytes("receipt-sandbox-g5.der"), expecting: ReceiptExpectations(allowedEnvironments: [.production]))
        #expect(production.failures.map(\.name) == [.environment])
    }

    /// Our verdict agrees with OpenSSL's own PKCS7_verify for every real receipt, at the creation
    /// date and today, with the right and a wrong anchor.
    @Test(arguments: Fixtures.realAppReceipts)
    func verdictAgreesWithOpenSSL(name: String) throws {
        let bytes = try Fixtures.bytes(name)
        let isXcode = Fixtures.xcodeReceipts.contains(name)
        let right = isXcode ? try BundledAnchors.storeKitTest : try BundledAnchors.appleIncRoot
        let wrong = try Fixtures.certificate("frank4dd-cacert.der")
        let creation = try #require(try AppReceipt(bytes).creationDate)
        for anchor in [right, wrong] {
            let verifier = AppReceiptVerifier(anchors: [anchor], policy: isXcode ? .xcode : .appStore)
            for time in [creation, today] {
                let ours = verifier.verify(bytes, at: .fixed(time))
                let openSSL = OpenSSLPKCS7Verifier.verify(pkcs7: bytes, anchors: [anchor], at: time)
                #expect(
                    ours.isValid == openSSL.isValid,
                    "\(name) at \(time): ours \(ours.summary) / OpenSSL \(openSSL.failureReason ?? "valid")")
                if ours.isValid { #expect(openSSL.content == ours.receipt.map { Array($0.payload) }) }
            }
        }
    }
}
