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
public final class DefaultsTransactionPersistor: LedgerFileBacked {
    /// The JSON file.
    public let fileURL: URL
    let file: LedgerFile

    /// Creates a persistor over `fileURL` (created at the first write; its directory must exist).
    public init(fileURL: URL) {
        self.fileURL = fileURL
        file = LedgerFile(url: fileURL, permissions: 0o644) { data, url in
            try LedgerJSON.decode(data, path: url.path)
        } encode: { contents in
            try LedgerJSON.encoder().encode(contents)
        }
    }
}
