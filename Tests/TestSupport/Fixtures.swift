package import Foundation
package import ReceiptCrypto
package import Receipts

/// Files under the repository's `TestReceipts/`, found from this source file's location, and what
/// the tests know about them (see TestReceipts/README.md for their provenance).
package enum Fixtures {
    /// The repository root (the directory holding Package.swift).
    package static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // TestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// `<repository>/TestReceipts`.
    package static let root = packageRoot.appendingPathComponent("TestReceipts")

    /// A fixture file that is not there.
    package struct Missing: Error, CustomStringConvertible {
        /// The path looked for.
        package let path: String
        /// A one-line rendering for failure messages.
        package var description: String { "missing fixture \(path)" }
    }

    /// The path of `name` (relative to TestReceipts/).
    package static func path(_ name: String) -> String {
        root.appendingPathComponent(name).path
    }

    /// The bytes of `name` (relative to TestReceipts/).
    package static func bytes(_ name: String) throws -> [UInt8] {
        let path = path(name)
        guard let data = FileManager.default.contents(atPath: path) else { throw Missing(path: path) }
        return [UInt8](data)
    }

    /// The certificate in TestReceipts/certs/`name` (DER).
    package static func certificate(_ name: String) throws -> Certificate {
        try Certificate(derEncoded: bytes("certs/" + name))
    }

    /// The app receipt in `name`, parsed.
    package static func receipt(_ name: String) throws -> AppReceipt { try AppReceipt(bytes(name)) }

    // MARK: - Apple's certificates

    /// Apple Inc. Root (2006-2035).
    package static func appleRoot() throws -> Certificate { try certificate("AppleIncRootCertificate.cer") }
    /// Apple Worldwide Developer Relations CA G5.
    package static func appleWWDRG5() throws -> Certificate { try certificate("AppleWWDRCA-G5.der") }
    /// The receipt-signing leaf of 2024-2026 (signed receipt-sandbox-g5).
    package static func appleLeaf2024() throws -> Certificate {
        try certificate("leaf-MacAppStoreAndiTunesStoreReceiptSigning-2024-2026.der")
    }
    /// The iTunes Store Certification Authority, issuer of iOS 6 transaction receipts' signers.
    package static func iTunesStoreCA() throws -> Certificate { try certificate("AppleiTunesStoreCertificationAuthority.der") }
    /// A root that has nothing to do with Apple.
    package static func wrongAnchor() throws -> Certificate { try certificate("frank4dd-cacert.der") }

    // MARK: - App receipts

    /// receipt-sandbox-g5.der: a real sandbox receipt with two purchases, signed by the 2024 leaf.
    package static func sandboxReceipt() throws -> [UInt8] { try bytes("receipt-sandbox-g5.der") }

    /// Creation date (field 12) of receipt-sandbox-g5: 2025-12-26T18:39:47Z.
    package static let receiptCreationDate = utc(2025, 12, 26, 18, 39, 47)

    /// The 5 distinct real Xcode (StoreKit testing) receipts.
    package static let xcodeReceipts = [
        "kvitto-storeKitTestReceipt.der", "receipt-no-orig-purchase-date.der", "receipt-xcode-with-purchases.der",
        "receipt-xcode.der", "xcode-app-receipt-empty.der",
    ]

    /// The 17 real App Store-signed receipts.
    package static let appStoreReceipts = [
        "base64encoded_sandboxReceipt2.der", "base64encoded_sandboxReceipt3.der", "base64encodedreceiptsample1.der",
        "hannes_mac_mindnode_2_receipt.der", "hannes_mac_mindnode_receipt.der", "kvitto-demo-newReceipt.der",
        "kvitto-receipt.der", "kvitto-sandboxReceipt.der", "mac_mindnode_rebought_receipt.der",
        "mindnode_ios_michaelsandbox_receipt1.der", "mindnode_ios_michaelsandbox_receipt2.der",
        "mindnode_mac_sha256_receipt.der", "purchasing_experiments_sandbox_receipt.der", "receipt-crash.der",
        "receipt-sandbox-g5.der", "receipt-sandbox-legacy.der", "receipt-watch.der",
    ]

    /// Every real app receipt copied from shared/vectors (22 distinct receipts), in name order.
    package static let realAppReceipts = (appStoreReceipts + xcodeReceipts).sorted()

    // MARK: - iOS 6 transaction receipts

    /// The four real legacy transaction receipts, with their bundle id, bvrs and product id.
    package static let legacyReceipts: [(file: String, bid: String, bvrs: String, product: String)] = [
        ("legacy/venice-legacy-transaction-receipt.b64", "com.mindmobapp.MindMob", "20120427", "com.mindmobapp.download"),
        ("legacy/itunes-iap-legacy-transaction-receipt.b64", "com.vanillabreeze.igunbattle", "1.0", "BattleGold50"),
        ("legacy/base64encoded_unsupportedReceipt1.b64", "com.mbaasy.ios.demo", "1", "yearly"),
        ("legacy/base64encoded_unsupportedReceipt2.b64", "com.es.Purchaser", "3", "purchaser.consumableFeature"),
    ]

    /// The files of ``legacyReceipts``.
    package static let legacyFiles = legacyReceipts.map(\.file)

    /// The App Store Server Library's mock legacy receipt (its signature is not Apple's).
    package static let mockLegacyReceipt = "legacy/app-store-server-library-legacyTransaction.b64"

    /// The receipt with `"quantity" = "1"` changed to `"2"` in its purchase-info and the signature
    /// kept: a one-byte tampering that still parses.
    package static func withQuantityTwo(_ receipt: TransactionReceipt) throws -> TransactionReceipt {
        let text = String(decoding: receipt.purchaseInfoData, as: UTF8.self)
            .replacingOccurrences(of: "\"quantity\" = \"1\"", with: "\"quantity\" = \"2\"")
        return try TransactionReceipt(
            signatureBlob: receipt.signatureBlob, purchaseInfoData: Array(text.utf8), environment: receipt.environment)
    }
}
