import RMStore

// Values and functions the article assumes.
let receiptURL: URL = placeholder()
let ledgerURL: URL = placeholder()
let integrityKey: [UInt8] = placeholder()
let vendorUUIDBytes: [UInt8] = placeholder()
func unlock(_ productIdentifier: String) {}
func log(_ error: any Error) {}
