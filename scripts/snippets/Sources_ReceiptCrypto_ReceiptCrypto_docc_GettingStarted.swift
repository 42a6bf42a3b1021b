// Values the article assumes.
let appleRootDER: [UInt8] = placeholder()
let chainPEM: [UInt8] = placeholder()
let validationDate: Date = placeholder()
