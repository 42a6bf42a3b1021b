import Foundation
import Glibc
import Internals
import Testing

/// A fresh temporary directory for one test.
private func scratchDirectory() -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("FileBytesTests-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A pipe whose write end has `bytes` written into it (they must fit in the pipe buffer) and
/// then, unless `keepOpen`, is closed.
private func pipe(holding bytes: [UInt8], keepOpen: Bool = false) -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    _ = Glibc.pipe(&fds)
    _ = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
    if !keepOpen { close(fds[1]) }
    return (fds[0], fds[1])
}

/// Bytes still waiting in a pipe (read without blocking).
private func drain(_ fd: Int32) -> Int {
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    var total = 0
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return total }
        total += count
    }
}

@Suite("FileBytes: the bounded reader")
struct FileBytesTests {
    @Test func aStreamIsReadUpToTheLimit_andNeverPastTheLimitPlusOneByte() throws {
        let limit = 1000
        // Exactly the limit: read whole.
        let exact = pipe(holding: [UInt8](repeating: 7, count: limit))
        defer { close(exact.read) }
        #expect(try FileBytes.read(fileDescriptor: exact.read, maximumSize: limit).count == limit)

        // Ten bytes too many: refused, and only limit + 1 bytes were taken from the pipe.
        let over = pipe(holding: [UInt8](repeating: 7, count: limit + 10))
        defer { close(over.read) }
        #expect(throws: FileBytes.Failure.tooLarge) { try FileBytes.read(fileDescriptor: over.read, maximumSize: limit) }
        #expect(drain(over.read) == 9)
    }

    @Test func aRegularFileOverTheLimitIsRefusedFromItsSize_withoutReading() throws {
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/sparse"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, 3 << 30) == 0, "a 3 GiB sparse file")
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        #expect(throws: FileBytes.Failure.tooLarge) { try FileBytes.read(fileDescriptor: fd, maximumSize: 64 << 20) }
        #expect(lseek(fd, 0, SEEK_CUR) == 0, "nothing was read")
        #expect(throws: FileBytes.Failure.tooLarge) { try FileBytes.read(path, maximumSize: 64 << 20) }

        // At the limit it is read; what remains after the current offset is what counts.
        #expect(truncate(path, 100) == 0)
        #expect(try FileBytes.read(path, maximumSize: 100).count == 100)
        #expect(lseek(fd, 50, SEEK_SET) == 50)
        #expect(try FileBytes.read(fileDescriptor: fd, maximumSize: 50).count == 50)
    }

    @Test func endlessDevicesFailAtTheLimit() throws {
        #expect(throws: FileBytes.Failure.tooLarge) { try FileBytes.read("/dev/zero", maximumSize: 1 << 20) }
        #expect(try FileBytes.read("/dev/null", maximumSize: 1 << 20).isEmpty)
    }

    @Test func failuresAreNamed() throws {
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: FileBytes.Failure.missing) { try FileBytes.read(directory + "/none", maximumSize: 10) }
        #expect(throws: FileBytes.Failure.isDirectory) { try FileBytes.read(directory, maximumSize: 10) }
        #expect(throws: FileBytes.Failure.missing) { try FileBytes.read(FileBytes.Path(bytes: [0x61, 0, 0x62]), maximumSize: 10) }
        #expect(mkfifo(directory + "/fifo", 0o600) == 0)
        // In a directory scan a FIFO is refused without waiting for a writer.
        #expect(throws: FileBytes.Failure.notRegularFile(kind: "fifo")) {
            try FileBytes.read(FileBytes.Path(directory + "/fifo"), maximumSize: 10, regularFilesOnly: true)
        }
        #expect(FileBytes.Failure.tooLarge.reason(limit: 64 << 20) == "input too large (more than 64 MiB)")
        #expect(FileBytes.Failure.missing.reason(limit: 0) == "no such file")
        #expect(FileBytes.Failure.unreadable(errno: EACCES).reason(limit: 0) == "permission denied")
    }

    @Test func linesStreamWithALimitPerLine() throws {
        let input = pipe(holding: Array("one\n\ntwo\r\nthree".utf8))
        defer { close(input.read) }
        var reader = FileBytes.LineReader(fileDescriptor: input.read, maximumLineLength: 5)
        var lines: [String] = []
        while let line = try reader.next() { lines.append(String(decoding: line, as: UTF8.self)) }
        #expect(lines == ["one", "", "two\r", "three"])
        #expect(reader.lineNumber == 4)

        // A line longer than the limit: refused after reading at most the limit + 1 bytes of it.
        let long = pipe(holding: Array("ok\n".utf8) + [UInt8](repeating: 0x41, count: 100))
        defer { close(long.read) }
        var bounded = FileBytes.LineReader(fileDescriptor: long.read, maximumLineLength: 10)
        #expect(try bounded.next() == Array("ok".utf8))
        #expect(throws: FileBytes.Failure.tooLarge) { try bounded.next() }
        #expect(drain(long.read) >= 100 - 11)
    }

    @Test func namesThatAreNotUTF8AreEscaped() {
        #expect(FileBytes.escaped(Array("café.der".utf8)) == "café.der")
        #expect(FileBytes.escaped([0x63, 0x61, 0x66, 0xE9, 0x2E]) == "caf\\xE9.")
        #expect(FileBytes.escaped([0x61, 0x0A, 0x09, 0x7F]) == "a\\x0A\\x09\\x7F")
        // Overlong forms, surrogates, truncated sequences and bytes past U+10FFFF are not UTF-8.
        #expect(FileBytes.escaped([0xC0, 0xAF]) == "\\xC0\\xAF")
        #expect(FileBytes.escaped([0xED, 0xA0, 0x80]) == "\\xED\\xA0\\x80")
        #expect(FileBytes.escaped([0xE2, 0x82]) == "\\xE2\\x82")
        #expect(FileBytes.escaped([0xF4, 0x90, 0x80, 0x80]) == "\\xF4\\x90\\x80\\x80")
        #expect(FileBytes.escaped([0xF0, 0x9F, 0x98, 0x80]) == "😀")
        #expect(FileBytes.Path(bytes: [0x61, 0xFF]).display == "a\\xFF")
        #expect(!FileBytes.Path(bytes: [0x61, 0xFF]).isPrintable)
        #expect(FileBytes.Path("a b").isPrintable)
    }

    @Test func aDirectoryWalkReportsEveryEntryItCannotRead() throws {
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = FileBytes.Path(directory)
        let latin1 = root.appending([0x63, 0x61, 0x66, 0xE9, 0x2E, 0x64, 0x65, 0x72])  // "caf\xE9.der"
        #expect(createFile(latin1, contents: [1, 2, 3]))
        #expect(FileManager.default.createFile(atPath: directory + "/a.der", contents: Data([4])))
        #expect(symlink("nowhere", directory + "/dangling") == 0)
        #expect(symlink("loop2", directory + "/loop1") == 0)
        #expect(symlink("loop1", directory + "/loop2") == 0)
        #expect(mkdir(directory + "/sub", 0o755) == 0)
        #expect(FileManager.default.createFile(atPath: directory + "/sub/b.der", contents: Data([5])))
        #expect(FileManager.default.createFile(atPath: directory + "/.hidden", contents: Data([6])))
        #expect(symlink("sub", directory + "/sublink") == 0)
        #expect(symlink("a.der", directory + "/z-link.der") == 0)
        #expect(mkfifo(directory + "/fifo", 0o600) == 0)

        let entries = try FileBytes.walk(root)
        let shown = entries.map { (String($0.path.display.dropFirst(directory.count + 1)), $0.problem ?? "file") }
        #expect(shown.map(\.0) == ["a.der", "caf\\xE9.der", "dangling", "fifo", "loop1", "loop2", "sub/b.der", "sublink", "z-link.der"])
        #expect(
            shown.map(\.1) == [
                "file", "file", "dangling symbolic link", "not a regular file (fifo)", "symbolic link loop", "symbolic link loop", "file",
                "symbolic link to a directory (not followed)", "file",
            ])
        #expect(try FileBytes.read(latin1, maximumSize: 10) == [1, 2, 3], "a name that is not UTF-8 opens by its bytes")
        #expect(FileBytes.kind(of: latin1) == .readable)
        #expect(FileBytes.kind(of: root) == .directory)
        #expect(FileBytes.kind(of: FileBytes.Path(directory + "/loop1")) == .unreadable(.unreadable(errno: ELOOP)))
        #expect(throws: FileBytes.Failure.missing) { try FileBytes.walk(FileBytes.Path(directory + "/none")) }
    }

    /// Creates a file at a path given as bytes.
    private func createFile(_ path: FileBytes.Path, contents: [UInt8]) -> Bool {
        let fd = (path.bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { name in name.baseAddress.map { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) } ?? -1
            }
        }
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return contents.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == contents.count
    }
}
