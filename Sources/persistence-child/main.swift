// persistence-child: the victim of the store's SIGKILL test (Tests/RMStoreTests/CrashSafetyTests.swift).
//
// Usage: persistence-child <defaults|secure> <file> <count> [integrity key, UTF-8; secure only]
// Persists transactions t0, t1, … t<count-1> of product "p", one write each, printing "ready" after
// the first write. The parent kills it with SIGKILL at a random moment and checks that the file
// holds exactly t0…t<k-1> for some k: the old or the new state, never a torn one.

import Foundation
import RMStore

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("persistence-child: \(message)\n".utf8))
    exit(code)
}

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5, let count = Int(arguments[3]), count > 0 else {
    fail("usage: persistence-child <defaults|secure> <file> <count> [key]", code: 64)
}
let url = URL(fileURLWithPath: arguments[2])
let ledger: any TransactionLedger
switch arguments[1] {
case "defaults":
    ledger = DefaultsTransactionPersistor(fileURL: url)
case "secure":
    do {
        let key = arguments.count == 5 ? Array(arguments[4].utf8) : []
        ledger = try SecureTransactionPersistor(fileURL: url, key: key)
    } catch {
        fail("\(error)", code: 1)
    }
default:
    fail("unknown persistor \(arguments[1])", code: 64)
}

for index in 0..<count {
    let transaction = PaymentTransaction(
        identifier: "t\(index)",
        state: .purchased,
        payment: Payment(productIdentifier: "p"),
        date: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)),
        webOrderLineItemID: 2_000_000_000_000_000 + Int64(index)
    )
    do {
        try ledger.persist(transaction)
    } catch {
        fail("write \(index): \(error)", code: 1)
    }
    if index == 0 {
        FileHandle.standardOutput.write(Data("ready\n".utf8))
    }
}
