import Foundation
import ReceiptCrypto
import ReceiptSigning
import Receipts

let path = "/tmp/bench/r1000.der"
if !FileManager.default.fileExists(atPath: path) {
    let pki = try TestPKI.generate()
    let bytes = try pki.signer().sign(SyntheticReceipts.receipt(purchases: 1000))
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}
let bytes = [UInt8](FileManager.default.contents(atPath: path)!)
var total = 0
let n = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 50 : 50
let start = ContinuousClock.now
for _ in 0..<n {
    let r = try AppReceipt(bytes)
    total &+= r.inAppPurchases.count
}
let d = ContinuousClock.now - start
print(total, d / n)
