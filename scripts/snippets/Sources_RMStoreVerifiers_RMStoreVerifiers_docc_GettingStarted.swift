import RMStore
import ReceiptCrypto
import Receipts

// Values the article assumes: the app's store, its receipt file and its device identifier.
let store: Store = placeholder()
let receiptURL: URL = placeholder()
let device: DeviceIdentifier = placeholder()
let testRoot: Certificate = placeholder()
