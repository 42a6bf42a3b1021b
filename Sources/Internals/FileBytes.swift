#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The package's one reader of untrusted inputs: files, FIFOs and process substitutions
/// (`<(cat r.der)`), standard input, character devices, and the entries of a directory.
///
/// Every read stops at the limit: at most `maximumSize + 1` bytes are ever read, so an endless
/// source (`/dev/zero`, a pipe that never closes) fails with ``Failure/tooLarge`` after reading
/// `maximumSize + 1` bytes, and a regular file larger than the limit is refused from its size
/// before a byte is read. Memory grows with what was read, never beyond the limit plus one byte
/// (the buffer's capacity is kept at or under it).
///
/// Paths are bytes (``Path``): Linux file names need not be UTF-8, and a name that is not can be
/// opened, listed and shown (escaped, see ``escaped(_:)``).
///
/// Uses `open`/`read` rather than Foundation: `FileManager.contents(atPath:)` and
/// `Data(contentsOf:)` read without a limit and leak their buffer on some paths (an empty file, a
/// failed read), which LeakSanitizer reports.
package enum FileBytes {
    /// Why an input could not be read.
    package enum Failure: Error, Sendable, Equatable {
        /// No file at the path (`ENOENT`, also a dangling symbolic link).
        case missing
        /// The path names a directory.
        case isDirectory
        /// Only regular files were accepted (a directory scan) and this is something else.
        case notRegularFile(kind: String)
        /// The input has more than the allowed number of bytes.
        case tooLarge
        /// A system call failed with `errno`.
        case unreadable(errno: Int32)

        /// A short phrase for people: "no such file", "input too large (more than 64 MiB)", …
        package func reason(limit: Int) -> String {
            switch self {
            case .missing: "no such file"
            case .isDirectory: "is a directory"
            case .notRegularFile(let kind): "not a regular file (\(kind))"
            case .tooLarge: "input too large (more than \(FileBytes.describeSize(limit)))"
            case .unreadable(let number): FileBytes.describe(errno: number)
            }
        }
    }

    /// A file system path as the kernel takes it: bytes without NUL, not necessarily UTF-8.
    package struct Path: Sendable, Hashable {
        /// The bytes of the path (no terminating NUL).
        package let bytes: [UInt8]

        /// A path from its bytes.
        package init(bytes: [UInt8]) { self.bytes = bytes }

        /// A path from a string (its UTF-8 bytes).
        package init(_ string: String) { bytes = Array(string.utf8) }

        /// The path for people: UTF-8 as is, other bytes and control characters as `\xNN`.
        package var display: String { FileBytes.escaped(bytes) }

        /// Whether the path is valid UTF-8 without control characters (shown exactly as it is).
        package var isPrintable: Bool { FileBytes.escaped(bytes).utf8.elementsEqual(bytes) }

        /// This path followed by `/` and `name` (no second `/` when the path already ends in one).
        package func appending(_ name: [UInt8]) -> Path {
            var joined = bytes
            if joined.last != UInt8(ascii: "/") { joined.append(UInt8(ascii: "/")) }
            joined += name
            return Path(bytes: joined)
        }

        /// Calls `body` with the path as a NUL-terminated C string; `nil` when the path contains a
        /// NUL byte (no file has such a name).
        func withCString<R>(_ body: (UnsafePointer<CChar>?) -> R) -> R {
            guard !bytes.contains(0) else { return body(nil) }
            return (bytes + [0]).withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress) }
            }
        }
    }

    // MARK: - Reading

    /// The file's bytes; at most `maximumSize` (default 1 GiB).
    /// - Throws: ``Failure``: `.missing`, `.isDirectory`, `.tooLarge`, `.unreadable`.
    package static func read(_ path: String, maximumSize: Int = 1 << 30) throws(Failure) -> [UInt8] {
        try read(Path(path), maximumSize: maximumSize)
    }

    /// The bytes at `path` (a regular file, a FIFO, a character device, `/dev/fd/N`…), read up to
    /// `maximumSize`. With `regularFilesOnly`, anything but a regular file is refused without
    /// reading, and opening never blocks (a FIFO met in a directory scan has no writer to wait for).
    /// - Throws: ``Failure``.
    package static func read(_ path: Path, maximumSize: Int, regularFilesOnly: Bool = false) throws(Failure) -> [UInt8] {
        let flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | (regularFilesOnly ? O_NONBLOCK : 0)
        let fd = path.withCString { name in name.map { open($0, flags) } ?? -1 }
        guard fd >= 0 else { throw failure(errno: path.bytes.contains(0) ? ENOENT : errno) }
        defer { close(fd) }
        return try read(fileDescriptor: fd, maximumSize: maximumSize, regularFilesOnly: regularFilesOnly)
    }

    /// Standard input, read up to `maximumSize` (a redirected regular file is checked by size first).
    /// - Throws: ``Failure``.
    package static func readStandardInput(maximumSize: Int) throws(Failure) -> [UInt8] {
        try read(fileDescriptor: STDIN_FILENO, maximumSize: maximumSize)
    }

    /// Everything left to read from `fd`, up to `maximumSize` bytes; never reads more than
    /// `maximumSize + 1`. A regular file's remaining size is checked before reading.
    /// - Throws: ``Failure``.
    package static func read(fileDescriptor fd: Int32, maximumSize: Int, regularFilesOnly: Bool = false) throws(Failure) -> [UInt8] {
        // At most Int.max - 1, so that `limit + 1` cannot overflow.
        let limit = min(max(0, maximumSize), Int.max - 1)
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw failure(errno: errno) }
        let type = status.st_mode & S_IFMT
        if type == S_IFDIR { throw .isDirectory }
        var expected = 0
        if type == S_IFREG {
            let size = Int(status.st_size)
            let position = Int(lseek(fd, 0, SEEK_CUR))
            let remaining = position >= 0 && position <= size ? size - position : size
            guard remaining <= limit else { throw .tooLarge }
            expected = remaining
        } else if regularFilesOnly {
            throw .notRegularFile(kind: kind(of: status.st_mode))
        }
        var bytes: [UInt8] = []
        // Room for the expected size and one more byte (to see the end); growth never goes past
        // the limit plus one byte.
        bytes.reserveCapacity(min(limit, expected) + 1)
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let wanted = min(chunk.count, limit + 1 - bytes.count)
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, wanted) }
            if count == 0 { return bytes }
            if count < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK:
                    // A non-blocking descriptor (inherited standard input): wait until readable.
                    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    _ = poll(&descriptor, 1, -1)
                    continue
                default: throw failure(errno: errno)
                }
            }
            if bytes.count + count > limit { throw .tooLarge }
            if bytes.count + count > bytes.capacity {
                bytes.reserveCapacity(min(max(bytes.capacity * 2, bytes.count + count), limit + 1))
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// Reads lines (ended by LF, or by the end of the input) from a descriptor, each at most
    /// `maximumLineLength` bytes without its LF. Holds at most one line and one read's worth of
    /// the next in memory, so input of any length streams through.
    package struct LineReader {
        let fd: Int32
        /// The longest line accepted, without its LF.
        package let maximumLineLength: Int
        private var buffer: [UInt8] = []
        private var start = 0
        private var atEnd = false
        private var chunk = [UInt8](repeating: 0, count: 64 << 10)
        /// The number of the last line returned (1 for the first).
        package private(set) var lineNumber = 0

        /// A reader of `fd` (not closed by the reader).
        package init(fileDescriptor fd: Int32, maximumLineLength: Int) {
            self.fd = fd
            self.maximumLineLength = min(max(0, maximumLineLength), Int.max - 1)
        }

        /// The next line without its LF, or `nil` at the end of the input.
        /// - Throws: ``Failure/tooLarge`` when a line is longer than the maximum (the reader is then
        ///   at an unknown place and must not be used again); ``Failure/unreadable(errno:)``.
        package mutating func next() throws(Failure) -> [UInt8]? {
            var searched = start
            while true {
                if let newline = Self.firstNewline(in: buffer, from: searched) {
                    guard newline - start <= maximumLineLength else { throw .tooLarge }
                    let line = Array(buffer[start..<newline])
                    start = newline + 1
                    lineNumber += 1
                    return line
                }
                let pending = buffer.count - start
                guard pending <= maximumLineLength else { throw .tooLarge }
                if atEnd {
                    guard pending > 0 else { return nil }
                    let line = Array(buffer[start...])
                    start = buffer.count
                    lineNumber += 1
                    return line
                }
                if start > 0 {
                    buffer.removeSubrange(0..<start)
                    start = 0
                }
                searched = buffer.count
                let wanted = min(chunk.count, maximumLineLength + 1 - pending)
                let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, wanted) }
                if count == 0 {
                    atEnd = true
                } else if count > 0 {
                    buffer.append(contentsOf: chunk[..<count])
                } else {
                    switch errno {
                    case EINTR: continue
                    case EAGAIN, EWOULDBLOCK:
                        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                        _ = poll(&descriptor, 1, -1)
                    default: throw FileBytes.failure(errno: errno)
                    }
                }
            }
        }

        /// The index of the first LF in `bytes` at or after `start` (`memchr`, fast in any build).
        static func firstNewline(in bytes: [UInt8], from start: Int) -> Int? {
            guard start < bytes.count else { return nil }
            return bytes.withUnsafeBytes { raw -> Int? in
                guard let base = raw.baseAddress, let found = memchr(base + start, 0x0A, raw.count - start) else { return nil }
                return base.distance(to: UnsafeRawPointer(found))
            }
        }
    }

    // MARK: - Looking at paths

    /// What is at a path given by a person.
    package enum Kind: Sendable, Equatable {
        /// A directory (symbolic links followed).
        case directory
        /// Anything that can be opened and read: a regular file, a FIFO, a device.
        case readable
        /// Nothing can be read there; why.
        case unreadable(Failure)
    }

    /// What `path` names, following symbolic links.
    package static func kind(of path: Path) -> Kind {
        var status = stat()
        let result = path.withCString { name in name.map { stat($0, &status) } ?? -1 }
        guard result == 0 else { return .unreadable(failure(errno: path.bytes.contains(0) ? ENOENT : errno)) }
        return status.st_mode & S_IFMT == S_IFDIR ? .directory : .readable
    }

    /// One entry found by ``walk(_:)``.
    package struct Entry: Sendable, Equatable {
        /// The entry's path: the directory given, then the names below it.
        package let path: Path
        /// `nil` for a regular file (or a symbolic link to one) to read; otherwise why the entry
        /// cannot be read: a dangling symbolic link, a symbolic link loop, a link to a directory
        /// (not followed), a FIFO or device, a subdirectory that cannot be listed.
        package let problem: String?
    }

    /// Every entry below `directory`, in byte order of their paths: regular files (and symbolic
    /// links to regular files) to read, and every other entry with the reason it cannot be read,
    /// so that nothing is left out silently. Names starting with `.` are skipped; subdirectories
    /// are entered, symbolic links to directories are not (so no loop can form). Uses a work list,
    /// not recursion, however deep the tree.
    /// - Throws: ``Failure`` when `directory` itself cannot be listed.
    package static func walk(_ directory: Path) throws(Failure) -> [Entry] {
        var entries: [Entry] = []
        // Depth-first over a stack; sorted at the end, so the order of discovery does not matter.
        var pending = try list(directory).map { directory.appending($0) }
        while let path = pending.popLast() {
            var status = stat()
            let linked = path.withCString { name in name.map { lstat($0, &status) } ?? -1 }
            guard linked == 0 else {
                entries.append(Entry(path: path, problem: failure(errno: errno).reason(limit: 0)))
                continue
            }
            var type = status.st_mode & S_IFMT
            if type == S_IFLNK {
                var target = stat()
                let followed = path.withCString { name in name.map { stat($0, &target) } ?? -1 }
                guard followed == 0 else {
                    let number = errno
                    let problem =
                        switch number {
                        case ENOENT: "dangling symbolic link"
                        case ELOOP: "symbolic link loop"
                        default: "symbolic link: " + describe(errno: number)
                        }
                    entries.append(Entry(path: path, problem: problem))
                    continue
                }
                type = target.st_mode & S_IFMT
                if type == S_IFDIR {
                    entries.append(Entry(path: path, problem: "symbolic link to a directory (not followed)"))
                    continue
                }
                status = target
            }
            switch type {
            case S_IFREG:
                entries.append(Entry(path: path, problem: nil))
            case S_IFDIR:
                do throws(Failure) {
                    pending += try list(path).map { path.appending($0) }
                } catch {
                    entries.append(Entry(path: path, problem: "cannot list the directory: " + error.reason(limit: 0)))
                }
            default:
                entries.append(Entry(path: path, problem: "not a regular file (\(kind(of: status.st_mode)))"))
            }
        }
        entries.sort { $0.path.bytes.lexicographicallyPrecedes($1.path.bytes) }
        return entries
    }

    /// The names in `directory`, without `.`, `..` and hidden names (starting with `.`).
    static func list(_ directory: Path) throws(Failure) -> [[UInt8]] {
        guard let stream = directory.withCString({ name in name.flatMap { opendir($0) } }) else {
            throw failure(errno: directory.bytes.contains(0) ? ENOENT : errno)
        }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw failure(errno: errno) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            guard let first = name.first, first != UInt8(ascii: ".") else { continue }
            names.append(name)
        }
    }

    // MARK: - Names for people

    /// `bytes` for people: valid UTF-8 as it is, every byte of an invalid sequence and every
    /// control character (U+0000–U+001F, U+007F) as `\xNN` (uppercase hex).
    package static func escaped(_ bytes: [UInt8]) -> String {
        var output = ""
        var index = 0
        func escape(_ byte: UInt8) {
            let digits = Array("0123456789ABCDEF".unicodeScalars)
            output += "\\x"
            output.unicodeScalars.append(digits[Int(byte >> 4)])
            output.unicodeScalars.append(digits[Int(byte & 0x0F)])
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                if byte < 0x20 || byte == 0x7F { escape(byte) } else { output.unicodeScalars.append(Unicode.Scalar(byte)) }
                index += 1
                continue
            }
            if let (scalar, length) = decodeScalar(bytes, at: index) {
                output.unicodeScalars.append(scalar)
                index += length
            } else {
                escape(byte)
                index += 1
            }
        }
        return output
    }

    /// The scalar of the well-formed UTF-8 sequence (of two to four bytes) at `index`, if any.
    static func decodeScalar(_ bytes: [UInt8], at index: Int) -> (Unicode.Scalar, Int)? {
        let lead = bytes[index]
        let length: Int
        var value: UInt32
        switch lead {
        case 0xC2...0xDF:
            length = 2
            value = UInt32(lead & 0x1F)
        case 0xE0...0xEF:
            length = 3
            value = UInt32(lead & 0x0F)
        case 0xF0...0xF4:
            length = 4
            value = UInt32(lead & 0x07)
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        for offset in 1..<length {
            let next = bytes[index + offset]
            guard next & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(next & 0x3F)
        }
        // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
        let smallest: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard value >= smallest, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }

    /// `64 MiB`, `1 GiB`, `512 bytes`: a limit for people.
    package static func describeSize(_ bytes: Int) -> String {
        if bytes >= 1 << 30, bytes % (1 << 30) == 0 { return "\(bytes >> 30) GiB" }
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }

    /// `strerror` in lowercase words ("permission denied").
    package static func describe(errno number: Int32) -> String {
        guard let text = strerror(number) else { return "error \(number)" }
        return String(cString: text).lowercased()
    }

    static func failure(errno number: Int32) -> Failure {
        switch number {
        case ENOENT: .missing
        case EISDIR: .isDirectory
        default: .unreadable(errno: number)
        }
    }

    static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "fifo"
        case S_IFCHR: "character device"
        case S_IFBLK: "block device"
        case S_IFSOCK: "socket"
        case S_IFDIR: "directory"
        case S_IFLNK: "symbolic link"
        default: "special file"
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
