import AppStoreServerAPI
import Foundation
import JSON

// Values the page assumes: the key's issuer id and key id from App Store Connect, the .p8 text.
let issuer: String = placeholder()
let keyID: String = placeholder()
let pem: String = placeholder()
// Retention Messaging: an image's identifier and its PNG bytes.
let imageID: UUID = placeholder()
let png: [UInt8] = placeholder()
// Advanced Commerce: the App Store Connect key that signs in-app requests, and the request's JSON.
let key: AppStoreConnectKey = placeholder()
let requestJSON: JSONValue = placeholder()
