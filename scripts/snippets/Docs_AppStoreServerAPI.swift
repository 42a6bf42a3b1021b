// Values the page assumes: the key's issuer id and key id from App Store Connect, the .p8 text.
let issuer: String = placeholder()
let keyID: String = placeholder()
let pem: String = placeholder()
