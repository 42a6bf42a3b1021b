// Values the article assumes.
let bytes: [UInt8] = placeholder()
