import Foundation
import Receipts
for path in CommandLine.arguments.dropFirst() {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    do {
        let r = try AppReceipt(bytes)
        print(path, r.receiptType ?? "-", r.bundleIdentifier ?? "-", r.appVersion ?? "-", r.originalAppVersion ?? "-", r.creationDate.map { ReceiptDate.rfc3339($0) } ?? "-", r.inAppPurchases.count, r.unknownAttributes.map { $0.type }, r.envelope?.usesBERForms ?? false)
    } catch { print(path, "ERROR", error) }
}
