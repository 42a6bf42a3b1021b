import Foundation
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import RMStore
import RMStoreVerifiers
import StoreTesting

// Values the README's examples assume.
let bytes: [UInt8] = placeholder()
let serverNow: Date = placeholder()
let jwsRepresentation: String = placeholder()
let requestBody: [UInt8] = placeholder()
let xcodeCertificateDER: [UInt8] = placeholder()
let receiptBytes: [UInt8] = placeholder()
let subscriptionKey: PrivateKey = placeholder()
let ms: Int64 = placeholder()
let catalog: StoreCatalog = placeholder()
let receiptURL: URL = placeholder()
let pki: TestPKI = placeholder()
let jwsPKI: TestPKI = placeholder()
let device: DeviceIdentifier = placeholder()
let ledgerURL: URL = placeholder()
let integrityKey: [UInt8] = placeholder()
