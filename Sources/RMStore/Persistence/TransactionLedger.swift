// The record model shared by both reference persistors, and the operations on it.

public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One persisted transaction (RMStore's `RMStoreTransaction`, as Codable JSON).
public struct TransactionRecord: Codable, Sendable, Hashable {
    /// The id of the purchase this record stands for. For a restored transaction this is the
    /// **original** purchase's id, so that restoring a purchase does not count it twice.
    public var transactionIdentifier: String
    /// The product bought.
    public var productIdentifier: String
    /// When the transaction happened.
    public var date: Date?
    /// Whether the app consumed it (`consume(productIdentifier:)`).
    public var consumed: Bool
    /// The first transaction of a subscription chain (renewals), when known.
    public var originalTransactionIdentifier: String?
    /// When the subscription period ends (auto-renewables).
    public var expirationDate: Date?
    /// The web order line item id (auto-renewables), 64-bit.
    public var webOrderLineItemID: Int64?
    /// How many items were bought.
    public var quantity: Int

    /// Creates a record.
    public init(
        transactionIdentifier: String,
        productIdentifier: String,
        date: Date?,
        consumed: Bool = false,
        originalTransactionIdentifier: String? = nil,
        expirationDate: Date? = nil,
        webOrderLineItemID: Int64? = nil,
        quantity: Int = 1
    ) {
        self.transactionIdentifier = transactionIdentifier
        self.productIdentifier = productIdentifier
        self.date = date
        self.consumed = consumed
        self.originalTransactionIdentifier = originalTransactionIdentifier
        self.expirationDate = expirationDate
        self.webOrderLineItemID = webOrderLineItemID
        self.quantity = quantity
    }

    /// The record of a delivered transaction (not consumed).
    public init(_ transaction: PaymentTransaction) {
        let restored = transaction.state == .restored
        self.init(
            transactionIdentifier: restored ? (transaction.original?.identifier ?? transaction.identifier) : transaction.identifier,
            productIdentifier: transaction.payment.productIdentifier,
            date: restored ? (transaction.original?.date ?? transaction.date) : transaction.date,
            consumed: false,
            originalTransactionIdentifier: restored ? nil : transaction.original?.identifier,
            expirationDate: transaction.expirationDate,
            webOrderLineItemID: transaction.webOrderLineItemID,
            quantity: transaction.payment.quantity
        )
    }
}

/// The API both reference persistors offer (RMStore's keychain and user-defaults persistence).
/// Every method reads the file afresh, so two instances (or an outside change) never diverge,
/// and throws `PersistenceError` rather than resetting a file it cannot read.
public protocol TransactionLedger: TransactionPersistor {
    /// Marks the oldest unconsumed record of the product consumed. Returns `false` when there is
    /// none.
    func consume(productIdentifier: String) throws -> Bool
    /// The number of unconsumed records of the product.
    func count(productIdentifier: String) throws -> Int
    /// Whether the product was ever persisted (true even when every record is consumed, as in
    /// RMStore).
    func isPurchased(productIdentifier: String) throws -> Bool
    /// Every product with at least one record.
    func purchasedProductIdentifiers() throws -> Set<String>
    /// The product's records, oldest first.
    func transactions(forProduct productIdentifier: String) throws -> [TransactionRecord]
    /// Deletes every record (and the file).
    func removeAll() throws
}

/// Product id → records, the content of a ledger file.
typealias LedgerContents = [String: [TransactionRecord]]

/// A ledger file: one lock, one codec, read-modify-write for every change.
struct LedgerFile: Sendable {
    let url: URL
    let permissions: UInt32
    let lock: NSLock
    let decode: @Sendable (Data, URL) throws -> LedgerContents
    let encode: @Sendable (LedgerContents) throws -> Data

    init(
        url: URL,
        permissions: UInt32,
        decode: @escaping @Sendable (Data, URL) throws -> LedgerContents,
        encode: @escaping @Sendable (LedgerContents) throws -> Data
    ) {
        self.url = url
        self.permissions = permissions
        self.lock = PathLocks.shared.lock(for: url)
        self.decode = decode
        self.encode = encode
    }

    /// Reads the contents under the lock.
    func read<T>(_ body: (LedgerContents) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(try load())
    }

    /// Reads, changes and writes back (only when `body` says it changed something) under the lock.
    func modify<T>(_ body: (inout LedgerContents) throws -> (result: T, changed: Bool)) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        var contents = try load()
        let outcome = try body(&contents)
        if outcome.changed {
            try AtomicFile.write(try encode(contents), to: url, permissions: permissions)
        }
        return outcome.result
    }

    func removeFile() throws {
        lock.lock()
        defer { lock.unlock() }
        if unlink(url.path) != 0 && errno != ENOENT {
            throw PersistenceError.io(operation: "unlink", path: url.path, errno: errno)
        }
    }

    private func load() throws -> LedgerContents {
        guard let data = try AtomicFile.read(url) else { return [:] }
        return try decode(data, url)
    }

    // MARK: Operations shared by both persistors

    func persist(_ transaction: PaymentTransaction) throws {
        let record = TransactionRecord(transaction)
        try modify { contents in
            var records = contents[record.productIdentifier] ?? []
            guard !records.contains(where: { $0.transactionIdentifier == record.transactionIdentifier }) else {
                return ((), false)
            }
            records.append(record)
            contents[record.productIdentifier] = records
            return ((), true)
        }
    }

    func consume(productIdentifier: String) throws -> Bool {
        try modify { contents in
            guard var records = contents[productIdentifier],
                let index = records.firstIndex(where: { !$0.consumed })
            else { return (false, false) }
            records[index].consumed = true
            contents[productIdentifier] = records
            return (true, true)
        }
    }

    func count(productIdentifier: String) throws -> Int {
        try read { ($0[productIdentifier] ?? []).filter { !$0.consumed }.count }
    }

    func isPurchased(productIdentifier: String) throws -> Bool {
        try read { !($0[productIdentifier] ?? []).isEmpty }
    }

    func purchasedProductIdentifiers() throws -> Set<String> {
        try read { Set($0.filter { !$0.value.isEmpty }.keys) }
    }

    func transactions(forProduct productIdentifier: String) throws -> [TransactionRecord] {
        try read { $0[productIdentifier] ?? [] }
    }
}

enum LedgerJSON {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    static func decode(_ data: Data, path: String) throws -> LedgerContents {
        do {
            return try decoder().decode(LedgerContents.self, from: data)
        } catch {
            throw PersistenceError.corrupt(path: path, reason: "not a transaction ledger: \(error)")
        }
    }
}
