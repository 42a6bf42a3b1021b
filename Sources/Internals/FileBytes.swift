#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads whole files with `open`/`read`, for the package's own file inputs (anchors, receipts
/// given on the command line). Foundation's `FileManager.contents(atPath:)` and
/// `Data(contentsOf:)` leak their buffer on some paths (an empty file, a failed read), which
/// LeakSanitizer reports.
package enum FileBytes {
    /// Why a file could not be read.
    package enum Failure: Error, Sendable, Equatable {
        case missing
        case isDirectory
        case unreadable(errno: Int32)
        case tooLarge
    }

    /// The file's bytes; files larger than `maximumSize` are refused.
    package static func read(_ path: String, maximumSize: Int = 1 << 30) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw errno == ENOENT ? .missing : .unreadable(errno: errno) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .unreadable(errno: errno) }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw .isDirectory }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(errno: errno)
            }
            guard bytes.count + count <= maximumSize else { throw .tooLarge }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}

/// `read(2)` from the platform's C library (a name of its own, since `FileBytes.read` shadows it).
@inline(__always)
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
    #else
        Darwin.read(fd, buffer, count)
    #endif
}
