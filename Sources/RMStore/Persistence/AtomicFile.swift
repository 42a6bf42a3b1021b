// Crash-safe whole-file replacement: write a temporary file in the same directory, fsync it,
// rename it over the target, fsync the directory. A reader (or a process started after a crash)
// sees either the old file or the new one, never a torn or empty file.

package import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a persistor could not read or write its file.
public enum PersistenceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file exists but is not in the expected format (truncated, not JSON, wrong header).
    /// The persistor does not reset it: the caller decides what to do.
    case corrupt(path: String, reason: String)
    /// The integrity tag does not match the contents: the file was modified outside the
    /// persistor, or the key is not the one it was written with.
    case integrityCheckFailed(path: String)
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// The integrity key is unusable (empty).
    case invalidKey

    /// One line naming the file and what failed (for `io`, the system call and `errno`).
    public var description: String {
        switch self {
        case .corrupt(let path, let reason): return "corrupt transaction file \(path): \(reason)"
        case .integrityCheckFailed(let path): return "integrity check failed for \(path)"
        case .io(let operation, let path, let code): return "\(operation) failed for \(path): errno \(code)"
        case .invalidKey: return "the integrity key is empty"
        }
    }
}

/// Atomic, durable file replacement and reading.
package enum AtomicFile {
    /// Replaces the file at `url` with `data`, atomically and durably. The new file gets
    /// `permissions` (for example `0o600`) regardless of the umask.
    package static func write(_ data: Data, to url: URL, permissions: UInt32) throws {
        let path = url.path
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/." + url.lastPathComponent + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(permissions))
        guard fd >= 0 else { throw PersistenceError.io(operation: "open", path: temporary, errno: errno) }
        var closed = false
        defer {
            if !closed { close(fd) }
        }
        do {
            guard fchmod(fd, mode_t(permissions)) == 0 else {
                throw PersistenceError.io(operation: "fchmod", path: temporary, errno: errno)
            }
            try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
                var offset = 0
                while offset < buffer.count {
                    guard let base = buffer.baseAddress else { break }
                    let written = systemWrite(fd, base + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw PersistenceError.io(operation: "write", path: temporary, errno: errno)
                    }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw PersistenceError.io(operation: "fsync", path: temporary, errno: errno) }
            closed = true
            guard close(fd) == 0 else { throw PersistenceError.io(operation: "close", path: temporary, errno: errno) }
            guard rename(temporary, path) == 0 else {
                throw PersistenceError.io(operation: "rename", path: path, errno: errno)
            }
        } catch {
            unlink(temporary)
            throw error
        }
        // Make the rename itself durable.
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw PersistenceError.io(operation: "open", path: directory, errno: errno) }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw PersistenceError.io(operation: "fsync", path: directory, errno: errno) }
    }

    /// The contents of the file at `url`, or `nil` when there is no file.
    ///
    /// Read with `open`/`read` rather than `Data(contentsOf:)`, which leaks its buffer when the
    /// read fails (seen under LeakSanitizer, for example on a directory).
    package static func read(_ url: URL) throws -> Data? {
        let path = url.path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw PersistenceError.io(operation: "open", path: path, errno: errno)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw PersistenceError.io(operation: "read", path: path, errno: errno)
            }
            bytes.append(contentsOf: chunk[..<count])
        }
        return Data(bytes)
    }
}

/// `write(2)` under a name that does not clash with other `write` functions in scope.
@inline(__always)
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        return Glibc.write(fd, buffer, count)
    #elseif canImport(Musl)
        return Musl.write(fd, buffer, count)
    #else
        return Darwin.write(fd, buffer, count)
    #endif
}

/// One lock per file path, shared by every persistor of this process, so that two persistor
/// instances on the same file do not interleave their read-modify-write cycles.
final class PathLocks: @unchecked Sendable {
    static let shared = PathLocks()

    private let lock = NSLock()
    private var locks: [String: NSLock] = [:]

    func lock(for url: URL) -> NSLock {
        let key = url.standardizedFileURL.path
        lock.lock()
        defer { lock.unlock() }
        if let existing = locks[key] { return existing }
        let created = NSLock()
        locks[key] = created
        return created
    }
}
