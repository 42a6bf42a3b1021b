import Foundation
import ReceiptCrypto
import Receipts
import Testing

/// Test receipts and certificates live in TestReceipts/ at the package root.
enum Vectors {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("TestReceipts")

    struct Missing: Error, CustomStringConvertible {
        let path: String
        var description: String { "missing fixture \(path)" }
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        let path = root.appendingPathComponent(name).path
        guard let data = FileManager.default.contents(atPath: path) else { throw Missing(path: path) }
        return [UInt8](data)
    }

    static func certificate(_ name: String) throws -> Certificate {
        try Certificate(derEncoded: bytes("certs/" + name))
    }

    static var appleRoot: Certificate { get throws { try certificate("AppleIncRootCertificate.cer") } }
    static var iTunesStoreCA: Certificate { get throws { try certificate("AppleiTunesStoreCertificationAuthority.der") } }
    static var wrongAnchor: Certificate { get throws { try certificate("frank4dd-cacert.der") } }

    /// The four real legacy transaction receipts, with their bundle id, bvrs and product id.
    static let legacyReceipts: [(file: String, bid: String, bvrs: String, product: String)] = [
        ("legacy/venice-legacy-transaction-receipt.b64", "com.mindmobapp.MindMob", "20120427", "com.mindmobapp.download"),
        ("legacy/itunes-iap-legacy-transaction-receipt.b64", "com.vanillabreeze.igunbattle", "1.0", "BattleGold50"),
        ("legacy/base64encoded_unsupportedReceipt1.b64", "com.mbaasy.ios.demo", "1", "yearly"),
        ("legacy/base64encoded_unsupportedReceipt2.b64", "com.es.Purchaser", "3", "purchaser.consumableFeature"),
    ]

    static let legacyFiles = legacyReceipts.map(\.file)
    static let mockLegacyReceipt = "legacy/app-store-server-library-legacyTransaction.b64"

    /// The receipt with `"quantity" = "1"` changed to `"2"` in its purchase-info and the signature
    /// kept: a one-byte tampering that still parses.
    static func withQuantityTwo(_ receipt: TransactionReceipt) throws -> TransactionReceipt {
        let text = String(decoding: receipt.purchaseInfoData, as: UTF8.self)
            .replacingOccurrences(of: "\"quantity\" = \"1\"", with: "\"quantity\" = \"2\"")
        return try TransactionReceipt(
            signatureBlob: receipt.signatureBlob, purchaseInfoData: Array(text.utf8), environment: receipt.environment)
    }
}
