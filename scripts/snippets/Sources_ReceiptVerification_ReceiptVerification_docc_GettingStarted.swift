// Values the article assumes.
let receiptBytes: [UInt8] = placeholder()
let transactionReceiptBytes: [UInt8] = placeholder()
let tokenBytes: [UInt8] = placeholder()
