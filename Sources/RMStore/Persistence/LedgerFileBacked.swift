// The TransactionLedger API of both reference persistors, written once over their LedgerFile.

/// A reference persistor whose records live in a ``LedgerFile`` (its lock and codec): the
/// ``TransactionLedger`` methods below are the file's, so both persistors share them by
/// composition and differ only in how their file is encoded.
protocol LedgerFileBacked: TransactionLedger {
    /// The file and its codec.
    var file: LedgerFile { get }
}

extension LedgerFileBacked {
    /// Adds an unconsumed record of `transaction` and rewrites the file, unless a record with the
    /// same transaction identifier is already there (a restore or a redelivery counts once).
    /// Throws `PersistenceError` when the file cannot be read, decoded or written, or (for a
    /// ``SecureTransactionPersistor``) when its tag does not match.
    public func persist(_ transaction: PaymentTransaction) throws { try file.persist(transaction) }
    /// Marks the oldest unconsumed record of the product consumed and rewrites the file. Returns
    /// `false`, changing nothing, when every record is consumed or there is none.
    public func consume(productIdentifier: String) throws -> Bool { try file.consume(productIdentifier: productIdentifier) }
    /// The number of unconsumed records of the product. Reads the file afresh (and checks the tag
    /// of a ``SecureTransactionPersistor``'s file).
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
