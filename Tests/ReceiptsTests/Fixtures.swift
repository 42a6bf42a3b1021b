import Foundation
import Internals
import Receipts
import Testing

/// Test receipts live in TestReceipts/ at the package root.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("TestReceipts")

    static func bytes(_ name: String) throws -> [UInt8] {
        let url = root.appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw FixtureError.missing(url.path)
        }
        return [UInt8](data)
    }

    static func receipt(_ name: String) throws -> AppReceipt { try AppReceipt(bytes(name)) }

    enum FixtureError: Error { case missing(String) }

    /// Every real app receipt copied from shared/vectors (22 distinct receipts).
    static let realAppReceipts = [
        "base64encoded_sandboxReceipt2.der", "base64encoded_sandboxReceipt3.der", "base64encodedreceiptsample1.der",
        "hannes_mac_mindnode_2_receipt.der", "hannes_mac_mindnode_receipt.der", "kvitto-demo-newReceipt.der",
        "kvitto-receipt.der", "kvitto-sandboxReceipt.der", "kvitto-storeKitTestReceipt.der",
        "mac_mindnode_rebought_receipt.der", "mindnode_ios_michaelsandbox_receipt1.der",
        "mindnode_ios_michaelsandbox_receipt2.der", "mindnode_mac_sha256_receipt.der",
        "purchasing_experiments_sandbox_receipt.der", "receipt-crash.der", "receipt-no-orig-purchase-date.der",
        "receipt-sandbox-g5.der", "receipt-sandbox-legacy.der", "receipt-watch.der", "receipt-xcode-with-purchases.der",
        "receipt-xcode.der", "xcode-app-receipt-empty.der",
    ]

    static let xcodeReceipts = [
        "kvitto-storeKitTestReceipt.der", "receipt-no-orig-purchase-date.der", "receipt-xcode-with-purchases.der",
        "receipt-xcode.der", "xcode-app-receipt-empty.der",
    ]
}

func date(_ rfc3339: String) -> Date {
    (try? ReceiptDate.parse(rfc3339)).flatMap { $0 } ?? Date(timeIntervalSince1970: -1)
}

func seconds(_ epoch: Int) -> Date { Date(timeIntervalSince1970: TimeInterval(epoch)) }

func base64(_ text: String) -> [UInt8] { (try? Base64.decode(Array(text.utf8))) ?? [] }

/// The code of the ReceiptError `body` throws, or nil.
func receiptErrorCode(_ body: () throws -> Void) -> ReceiptError.Code? {
    do {
        try body()
        return nil
    } catch let error as ReceiptError {
        return error.code
    } catch {
        Issue.record("unexpected error type \(type(of: error)): \(error)")
        return nil
    }
}
