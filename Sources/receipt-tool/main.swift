import Foundation
import Receipts
let path = CommandLine.arguments[1]
let r = try AppReceipt([UInt8](FileManager.default.contents(atPath: path)!))
FileManager.default.createFile(atPath: "/tmp/a.der", contents: Data(r.payload))
FileManager.default.createFile(atPath: "/tmp/b.der", contents: Data(r.encodedPayload()))
