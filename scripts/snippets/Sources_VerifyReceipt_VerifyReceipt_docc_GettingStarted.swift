// Values the article assumes.
let receiptBytes: [UInt8] = placeholder()
