// The keychain-like reference persistor: a private file with an integrity tag.

public import Foundation
import Internals

/// Persists transactions in a private file protected by an HMAC-SHA256 tag (the role of RMStore's
/// `RMStoreKeychainPersistence` on a system without a keychain).
///
/// File format (version 1):
/// ```
/// RMSTORE-SECURE-LEDGER 1\n
/// <64 lowercase hex digits: HMAC-SHA256(key, first line ‖ payload)>\n
/// <payload: the same JSON object as DefaultsTransactionPersistor>
/// ```
/// The file has mode 0600 and is replaced atomically and durably (temporary file in the same
/// directory, fsync, rename, directory fsync).
///
/// A file that was truncated, emptied or edited, or that was written with another key, makes
/// every call throw (`PersistenceError.corrupt` or `.integrityCheckFailed`): it is never reset
/// silently, so tampering cannot be used to reset consumption counts and is visible to the app.
/// The tag proves integrity, not secrecy: the payload stays readable.
///
/// Thread safety: as `DefaultsTransactionPersistor` (a per-path lock, a fresh read per call).
public final class SecureTransactionPersistor: LedgerFileBacked {
    /// The file.
    public let fileURL: URL
    let file: LedgerFile

    static let header = Array("RMSTORE-SECURE-LEDGER 1\n".utf8)

    /// Creates a persistor over `fileURL` with the app's integrity key (at least one byte;
    /// 32 random bytes kept out of the file's directory are recommended).
    public init(fileURL: URL, key: [UInt8]) throws {
        guard !key.isEmpty else { throw PersistenceError.invalidKey }
        self.fileURL = fileURL
        file = LedgerFile(url: fileURL, permissions: 0o600) { data, url in
            try SecureTransactionPersistor.open(Array(data), key: key, path: url.path)
        } encode: { contents in
            SecureTransactionPersistor.seal(try LedgerJSON.encoder().encode(contents), key: key)
        }
    }

    static func seal(_ payload: Data, key: [UInt8]) -> Data {
        let tag = HMACSHA256.authenticationCode(for: header + Array(payload), key: key)
        var out = Data(header)
        out.append(contentsOf: Array(Hex.encode(tag).utf8))
        out.append(0x0A)
        out.append(payload)
        return out
    }

    static func open(_ bytes: [UInt8], key: [UInt8], path: String) throws -> LedgerContents {
        let tagLine = 64 + 1
        guard bytes.count >= header.count + tagLine else {
            throw PersistenceError.corrupt(path: path, reason: "file too short (\(bytes.count) bytes)")
        }
        guard Array(bytes[0..<header.count]) == header else {
            throw PersistenceError.corrupt(path: path, reason: "missing header")
        }
        let tagText = bytes[header.count..<(header.count + 64)]
        guard bytes[header.count + 64] == 0x0A, let storedTag = Hex.decode(tagText) else {
            throw PersistenceError.corrupt(path: path, reason: "malformed integrity tag")
        }
        let payload = Array(bytes[(header.count + tagLine)...])
        let expected = HMACSHA256.authenticationCode(for: header + payload, key: key)
        guard HMACSHA256.constantTimeEqual(storedTag, expected) else {
            throw PersistenceError.integrityCheckFailed(path: path)
        }
        return try LedgerJSON.decode(Data(payload), path: path)
    }
}
