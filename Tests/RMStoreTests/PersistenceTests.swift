// RMStoreKeychainPersistenceTests.m, RMStoreUserDefaultsPersistenceTests.m and
// RMStoreTransactionTests.m (Docs/StoreBehaviour.md §7), run against both reference persistors
// (the keychain tests against SecureTransactionPersistor, the user-defaults tests against
// DefaultsTransactionPersistor; each row runs on both), plus integrity and file-format checks.

import Foundation
import RMStore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

enum PersistorKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case keychainLike = "SecureTransactionPersistor"
    case userDefaultsLike = "DefaultsTransactionPersistor"

    var testDescription: String { rawValue }

    static let key = Array("an app-supplied integrity key of 32 bytes".utf8)

    func make(_ url: URL) throws -> any TransactionLedger {
        switch self {
        case .keychainLike: return try SecureTransactionPersistor(fileURL: url, key: Self.key)
        case .userDefaultsLike: return DefaultsTransactionPersistor(fileURL: url)
        }
    }
}

func purchased(_ product: String, _ id: String, date: TimeInterval = 1_700_000_000) -> PaymentTransaction {
    PaymentTransaction(
        identifier: id, state: .purchased, payment: Payment(productIdentifier: product), date: Date(timeIntervalSince1970: date))
}

@Suite("RMStoreKeychainPersistenceTests.m + RMStoreUserDefaultsPersistenceTests.m")
struct PersistenceTests_m {
    func ledger(_ kind: PersistorKind, _ label: String = #function) throws -> (any TransactionLedger, URL) {
        let url = temporaryDirectory(label).appendingPathComponent("transactions.json")
        return (try kind.make(url), url)
    }

    /// testPersistTransaction
    @Test(arguments: PersistorKind.allCases)
    func persistTransaction_recordsIt(kind: PersistorKind) throws {
        let (ledger, url) = try ledger(kind)
        try ledger.persist(purchased("p", "1"))
        #expect(try ledger.isPurchased(productIdentifier: "p"))
        #expect(FileManager.default.fileExists(atPath: url.path))
    }

    /// testRemoveTransactions
    @Test(arguments: PersistorKind.allCases)
    func removeTransactions_forgetsEverything(kind: PersistorKind) throws {
        let (ledger, url) = try ledger(kind)
        try ledger.persist(purchased("p", "1"))
        try ledger.removeAll()
        #expect(try ledger.purchasedProductIdentifiers().isEmpty)
        #expect(try ledger.count(productIdentifier: "p") == 0)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        try ledger.removeAll()  // removing nothing is fine
    }

    /// testConsumeProductOfIdentifier_YES
    @Test(arguments: PersistorKind.allCases)
    func consumeProductOfIdentifier_YES_whenThereIsOne(kind: PersistorKind) throws {
        let (ledger, _) = try ledger(kind)
        try ledger.persist(purchased("p", "1"))
        #expect(try ledger.consume(productIdentifier: "p"))
        #expect(try ledger.count(productIdentifier: "p") == 0)
    }

    /// testConsumeProductOfIdentifier_NO
    @Test(arguments: PersistorKind.allCases)
    func consumeProductOfIdentifier_NO_whenThereIsNone(kind: PersistorKind) throws {
        let (ledger, _) = try ledger(kind)
        #expect(try !ledger.consume(productIdentifier: "p"))
    }

    /// testConsumeProductOfIdentifier_NO_alreadyConsumed
    @Test(arguments: PersistorKind.allCases)
    func consumeProductOfIdentifier_NO_alreadyConsumed(kind: PersistorKind) throws {
        let (ledger, _) = try ledger(kind)
        try ledger.persist(purchased("p", "1"))
        #expect(try ledger.consume(productIdentifier: "p"))
        #expect(try !ledger.consume(productIdentifier: "p"))
    }

    /// testCountProductOfdentifier_Zero, _One, _Three
    @Test(arguments: PersistorKind.allCases)
    func countProductOfIdentifier_zeroOneThree(kind: PersistorKind) throws {
        let (ledger, _) = try ledger(kind)
        #expect(try ledger.count(productIdentifier: "p") == 0)
        try ledger.persist(purchased("p", "1"))
        #expect(try ledger.count(productIdentifier: "p") == 1)
        try ledger.persist(purchased("p", "2"))
        try ledger.persist(purchased("p", "3"))
        #expect(try ledger.count(productIdentifier: "p") == 3)
        #expect(try ledger.count(productIdentifier: "other") == 0)
    }

    /// testIsPurchasedProductOfIdentifier_YES, _NO (YES stays after consumption, as in RMStore)
    @Test(arguments: PersistorKind.allCases)
    func isPurchasedProductOfIdentifier_yesNoAndAfterConsumption(kind: PersistorKind) throws {
        let (ledger, _) = try ledger(kind)
        #expect(try !ledger.isPurchased(productIdentifier: "p"))
        try ledger.persist(purchased("p", "1"))
        #expect(try ledger.isPurchased(productIdentifier: "p"))
        _ = try ledger.consume(productIdentifier: "p")
        #expect(try ledger.isPurchased(productIdentifier: "p"))
    }

    /// testPurchasedProductIdentifiers_Empty, _One, _Two
    @Test(arguments: PersistorKind.allCases)
    func purchasedProductIdentifiers_zeroOneTwo(kind: PersistorKind) throws {
        let (ledger, _) = try ledger(kind)
        #expect(try ledger.purchasedProductIdentifiers() == [])
        try ledger.persist(purchased("p", "1"))
        try ledger.persist(purchased("p", "2"))
        #expect(try ledger.purchasedProductIdentifiers() == ["p"])
        try ledger.persist(purchased("q", "3"))
        #expect(try ledger.purchasedProductIdentifiers() == ["p", "q"])
    }

    /// testTransactionsForProductOfIdentifier_Zero, _One, _Three (user-defaults only in RMStore)
    @Test(arguments: PersistorKind.allCases)
    func transactionsForProductOfIdentifier_zeroOneThree(kind: PersistorKind) throws {
        let (ledger, _) = try ledger(kind)
        #expect(try ledger.transactions(forProduct: "p").isEmpty)
        try ledger.persist(purchased("p", "1"))
        #expect(try ledger.transactions(forProduct: "p").map(\.transactionIdentifier) == ["1"])
        try ledger.persist(purchased("p", "2"))
        try ledger.persist(purchased("p", "3"))
        #expect(try ledger.transactions(forProduct: "p").map(\.transactionIdentifier) == ["1", "2", "3"])
    }

    /// RMStoreTransactionTests.m testInitWithPaymentTransaction + testCoding: the record copies
    /// the transaction and survives the file round trip field for field.
    @Test(arguments: PersistorKind.allCases)
    func transactionRecord_initFromTransaction_andFileRoundTrip(kind: PersistorKind) throws {
        let (ledger, url) = try ledger(kind)
        var transaction = purchased("sub", "2000000123456789", date: 1_700_000_123)
        transaction.original = OriginalTransaction(identifier: "2000000000000001", date: Date(timeIntervalSince1970: 1_690_000_000))
        transaction.expirationDate = Date(timeIntervalSince1970: 1_702_592_123)
        transaction.webOrderLineItemID = 2_000_000_087_654_321
        transaction.payment.quantity = 2
        let record = TransactionRecord(transaction)
        #expect(record.transactionIdentifier == "2000000123456789")
        #expect(record.productIdentifier == "sub")
        #expect(record.date == Date(timeIntervalSince1970: 1_700_000_123))
        #expect(!record.consumed)
        #expect(record.originalTransactionIdentifier == "2000000000000001")
        #expect(record.quantity == 2)
        try ledger.persist(transaction)
        let reopened = try kind.make(url)
        #expect(try reopened.transactions(forProduct: "sub") == [record])
    }

    /// Restored transactions are recorded under the original purchase's id: persisting the
    /// purchase and then its restore (or two restores) counts once.
    @Test(arguments: PersistorKind.allCases)
    func restoredTransactions_doNotDoubleCount(kind: PersistorKind) throws {
        let (ledger, _) = try ledger(kind)
        try ledger.persist(purchased("p", "100"))
        for restoreID in ["200", "300"] {
            let restored = PaymentTransaction(
                identifier: restoreID, state: .restored, payment: Payment(productIdentifier: "p"),
                date: Date(), original: OriginalTransaction(identifier: "100", date: Date(timeIntervalSince1970: 1_700_000_000))
            )
            try ledger.persist(restored)
        }
        try ledger.persist(purchased("p", "100"))  // the same purchase delivered twice
        #expect(try ledger.count(productIdentifier: "p") == 1)
        #expect(try ledger.transactions(forProduct: "p").map(\.transactionIdentifier) == ["100"])
    }

    /// Two instances on one file see each other's writes (no per-instance cache, Docs/StoreBehaviour.md §6).
    @Test(arguments: PersistorKind.allCases)
    func twoInstances_shareTheFile(kind: PersistorKind) throws {
        let (first, url) = try ledger(kind)
        let second = try kind.make(url)
        try first.persist(purchased("p", "1"))
        #expect(try second.count(productIdentifier: "p") == 1)
        #expect(try second.consume(productIdentifier: "p"))
        #expect(try first.count(productIdentifier: "p") == 0)
    }

    /// Concurrent writers from many threads lose nothing (the per-path lock).
    @Test(arguments: PersistorKind.allCases)
    func concurrentPersists_loseNothing(kind: PersistorKind) async throws {
        let (ledger, url) = try ledger(kind)
        let other = try kind.make(url)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                let target = index.isMultiple(of: 2) ? ledger : other
                group.addTask { try? target.persist(purchased("p", "\(index)")) }
            }
        }
        #expect(try ledger.count(productIdentifier: "p") == 40)
    }

    /// A file that is not a ledger is reported, never reset.
    @Test(arguments: PersistorKind.allCases)
    func corruptFile_isReportedAndLeftAlone(kind: PersistorKind) throws {
        let (ledger, url) = try ledger(kind)
        try ledger.persist(purchased("p", "1"))
        let garbage = Data("{\"p\": [".utf8)
        try garbage.write(to: url)
        #expect(throws: PersistenceError.self) { try ledger.count(productIdentifier: "p") }
        #expect(throws: PersistenceError.self) { try ledger.persist(purchased("p", "2")) }
        #expect(try Data(contentsOf: url) == garbage)
        try Data().write(to: url)
        #expect(throws: PersistenceError.self) { try ledger.isPurchased(productIdentifier: "p") }
    }
}

@Suite("SecureTransactionPersistor integrity")
struct SecurePersistorTests {
    func makeLedger(_ label: String = #function) throws -> (SecureTransactionPersistor, URL) {
        let url = temporaryDirectory(label).appendingPathComponent("secure.ledger")
        return (try SecureTransactionPersistor(fileURL: url, key: PersistorKind.key), url)
    }

    @Test func file_isPrivateToTheUser() throws {
        let (ledger, url) = try makeLedger()
        try ledger.persist(purchased("p", "1"))
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600)
    }

    @Test func tamperedPayload_isDetected() throws {
        let (ledger, url) = try makeLedger()
        try ledger.persist(purchased("p", "1"))
        _ = try ledger.consume(productIdentifier: "p")
        var bytes = Array(try Data(contentsOf: url))
        // Flip "consumed" : true back to false, the obvious attack on a consumable count.
        let text = String(decoding: bytes, as: UTF8.self)
        let tampered = text.replacingOccurrences(of: "\"consumed\" : true", with: "\"consumed\" : false")
        #expect(tampered != text)
        bytes = Array(tampered.utf8)
        try Data(bytes).write(to: url)
        #expect(throws: PersistenceError.integrityCheckFailed(path: url.path)) { try ledger.count(productIdentifier: "p") }
        #expect(throws: PersistenceError.integrityCheckFailed(path: url.path)) { try ledger.persist(purchased("p", "2")) }
        #expect(try Data(contentsOf: url) == Data(bytes))
    }

    @Test func everySingleByteChange_isDetected() throws {
        let (ledger, url) = try makeLedger()
        try ledger.persist(purchased("p", "1"))
        let original = Array(try Data(contentsOf: url))
        for index in stride(from: 0, to: original.count, by: max(1, original.count / 40)) {
            var bytes = original
            bytes[index] ^= 0x01
            try Data(bytes).write(to: url)
            #expect(throws: PersistenceError.self) { try ledger.transactions(forProduct: "p") }
        }
        try Data(original).write(to: url)
        #expect(try ledger.count(productIdentifier: "p") == 1)
    }

    @Test func wrongKey_isDetected() throws {
        let (ledger, url) = try makeLedger()
        try ledger.persist(purchased("p", "1"))
        let other = try SecureTransactionPersistor(fileURL: url, key: Array("another key".utf8))
        #expect(throws: PersistenceError.integrityCheckFailed(path: url.path)) { try other.count(productIdentifier: "p") }
    }

    @Test func truncatedFile_isCorrupt() throws {
        let (ledger, url) = try makeLedger()
        try ledger.persist(purchased("p", "1"))
        let bytes = try Data(contentsOf: url)
        try bytes.prefix(30).write(to: url)
        #expect {
            try ledger.count(productIdentifier: "p")
        } throws: { error in
            if case .corrupt = error as? PersistenceError { return true }
            return false
        }
    }

    @Test func emptyKey_isRejected() {
        #expect(throws: PersistenceError.invalidKey) {
            try SecureTransactionPersistor(fileURL: URL(fileURLWithPath: "/tmp/x"), key: [])
        }
    }
}

@Suite("DefaultsTransactionPersistor format")
struct DefaultsPersistorFormatTests {
    /// The file is one human-readable JSON object: product id → list of records.
    @Test func file_isHumanReadableJSONKeyedByProduct() throws {
        let url = temporaryDirectory().appendingPathComponent("defaults.json")
        let ledger = DefaultsTransactionPersistor(fileURL: url)
        try ledger.persist(purchased("com.example.coins", "2000000000000001"))
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        let records = object?["com.example.coins"] as? [[String: Any]]
        #expect(records?.count == 1)
        #expect(records?.first?["transactionIdentifier"] as? String == "2000000000000001")
        #expect(records?.first?["productIdentifier"] as? String == "com.example.coins")
        #expect(records?.first?["consumed"] as? Bool == false)
        #expect(records?.first?["date"] as? String == "2023-11-14T22:13:20Z")
    }
}
