// The user-defaults-style reference persistor: one human-readable JSON file.

public import Foundation

/// Persists transactions in one human-readable JSON file (RMStore's
/// `RMStoreUserDefaultsPersistence`, with JSON in place of NSKeyedArchiver and a file in place of
/// `NSUserDefaults`).
///
/// The file is an object mapping each product id to its list of records:
/// `{"com.example.coins": [{"consumed": false, "date": "…", "productIdentifier": "…",
/// "transactionIdentifier": "…", …}]}`. Writes are atomic and durable (temporary file, fsync,
/// rename, directory fsync). A file that is not valid JSON makes every call throw
/// `PersistenceError.corrupt`; it is never reset silently.
///
/// Thread safety: every call takes a lock shared by all persistors of this process on the same
/// path, and reads the file afresh. Different processes writing the same file are not
/// coordinated.
public final class DefaultsTransactionPersistor: TransactionLedger {
    /// The JSON file.
    public let fileURL: URL
    private let file: LedgerFile

    /// Creates a persistor over `fileURL` (created at the first write; its directory must exist).
    public init(fileURL: URL) {
        self.fileURL = fileURL
        file = LedgerFile(url: fileURL, permissions: 0o644) { data, url in
            try LedgerJSON.decode(data, path: url.path)
        } encode: { contents in
            try LedgerJSON.encoder().encode(contents)
        }
    }

    /// Adds an unconsumed record of `transaction` and rewrites the file, unless a record with the
    /// same transaction identifier is already there (a restore or a redelivery counts once).
    /// Throws `PersistenceError` when the file cannot be read, decoded or written.
    public func persist(_ transaction: PaymentTransaction) throws { try file.persist(transaction) }
    /// Marks the oldest unconsumed record of the product consumed and rewrites the file. Returns
    /// `false`, changing nothing, when every record is consumed or there is none.
    public func consume(productIdentifier: String) throws -> Bool { try file.consume(productIdentifier: productIdentifier) }
    /// The number of unconsumed records of the product. Reads the file afresh.
    public func count(productIdentifier: String) throws -> Int { try file.count(productIdentifier: productIdentifier) }
    /// Whether the product has any record, consumed or not (RMStore's meaning of "purchased").
    public func isPurchased(productIdentifier: String) throws -> Bool { try file.isPurchased(productIdentifier: productIdentifier) }
    /// Every product with at least one record, consumed or not.
    public func purchasedProductIdentifiers() throws -> Set<String> { try file.purchasedProductIdentifiers() }
    /// The product's records in the order they were persisted; empty for an unknown product.
    public func transactions(forProduct productIdentifier: String) throws -> [TransactionRecord] {
        try file.transactions(forProduct: productIdentifier)
    }
    /// Deletes the file and with it every record. A file that does not exist is not an error.
    public func removeAll() throws { try file.removeFile() }
}
