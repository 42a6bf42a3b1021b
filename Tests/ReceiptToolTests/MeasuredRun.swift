import Foundation
import Glibc
import Testing

/// Runs `receipt-tool` under GNU time (`/usr/bin/time -f %M`, installed by `.ci/run` when missing)
/// with `posix_spawn`, and measures it: peak resident memory and wall time. Arguments are bytes,
/// so names that are not UTF-8 can be passed; standard output and standard error go to temporary
/// files (output of any size, no pipe to block on). Used by the hostile-input tests to hold
/// generous safety limits on memory.
///
/// Why GNU time: Linux carries `ru_maxrss` over from the parent across `exec`, so a child spawned
/// straight from the test process (hundreds of MiB) would report at least the test process's own
/// peak. GNU time is a small process whose child starts from its own few MiB.
enum MeasuredRun {
    /// What the run got on standard input.
    enum Input {
        /// `/dev/null`.
        case none
        /// `count` zero bytes through a pipe (the writer stops when the tool closes its end).
        case zeros(Int)
        /// These bytes through a pipe.
        case bytes([UInt8])
    }

    struct Result {
        let status: Int32
        /// Standard output, when it is at most 1 MiB (otherwise empty; see `stdoutLines`).
        let stdout: String
        let stderr: String
        /// Newlines on standard output.
        let stdoutLines: Int
        /// Peak resident memory of the tool, in KiB.
        let maximumResidentKiB: Int
        let seconds: Double
    }

    static func run(_ arguments: [String], stdin: Input = .none) throws -> Result {
        try run(arguments.map { Array($0.utf8) }, stdin: stdin)
    }

    static func run(_ arguments: [[UInt8]], stdin: Input = .none) throws -> Result {
        let executable = try #require(ReceiptTool.executable, "receipt-tool was not built next to the tests")
        let time = "/usr/bin/time"
        try #require(FileManager.default.isExecutableFile(atPath: time), "GNU time is missing: apt-get install time (.ci/run does)")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("MeasuredRun-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outPath = scratch.appendingPathComponent("stdout").path
        let errPath = scratch.appendingPathComponent("stderr").path
        let timePath = scratch.appendingPathComponent("time").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipeFDs: [Int32] = [-1, -1]
        switch stdin {
        case .none:
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .zeros, .bytes:
            guard pipe(&pipeFDs) == 0 else { throw TestFailure("pipe: errno \(errno)") }
            // Close-on-exec, so that other processes the tests start do not keep the pipe open.
            for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[0], 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        let argv =
            [Array(time.utf8), Array("-f".utf8), Array("%M".utf8), Array("-o".utf8), Array(timePath.utf8), Array(executable.path.utf8)]
            + arguments
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { bytes in
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte) }
            pointer[bytes.count] = 0
            return pointer
        }
        cArguments.append(nil)
        defer { for pointer in cArguments { pointer?.deallocate() } }

        let start = ContinuousClock.now
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, time, &actions, nil, cArguments, environ)
        guard spawned == 0 else { throw TestFailure("posix_spawn: \(spawned)") }

        var writer: Thread?
        let done = DispatchSemaphore(value: 0)
        if pipeFDs[0] >= 0 {
            close(pipeFDs[0])
            let writeFD = pipeFDs[1]
            let payload: [UInt8]
            var repeats = 1
            switch stdin {
            case .zeros(let count):
                payload = [UInt8](repeating: 0, count: min(count, 1 << 20))
                repeats = (count + payload.count - 1) / max(1, payload.count)
            case .bytes(let bytes): payload = bytes
            case .none: payload = []
            }
            let rounds = repeats
            let thread = Thread {
                // SIGPIPE is blocked on this thread only: a write after the tool exits fails with
                // EPIPE instead of killing the test process (the pending signal dies with the thread).
                var set = sigset_t()
                sigemptyset(&set)
                sigaddset(&set, SIGPIPE)
                pthread_sigmask(SIG_BLOCK, &set, nil)
                outer: for _ in 0..<rounds {
                    var offset = 0
                    while offset < payload.count {
                        let written = payload.withUnsafeBytes { write(writeFD, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
                        if written < 0, errno == EINTR { continue }
                        guard written > 0 else { break outer }
                        offset += written
                    }
                }
                close(writeFD)
                done.signal()
            }
            thread.start()
            writer = thread
        }

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw TestFailure("waitpid: errno \(errno)") }
        }
        let elapsed = start.duration(to: .now)
        if writer != nil { done.wait() }

        let exitStatus: Int32 = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let stderr = String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self)
        let (lines, small) = try countLines(outPath)
        // The last line of GNU time's report is the figure (a line before it names a signal).
        let report = String(decoding: try Data(contentsOf: URL(fileURLWithPath: timePath)), as: UTF8.self)
        let peak = try #require(report.split(separator: "\n").last.flatMap { Int($0) }, "GNU time said: \(report)")
        let (seconds, attoseconds) = elapsed.components
        return Result(
            status: exitStatus, stdout: small, stderr: stderr, stdoutLines: lines, maximumResidentKiB: peak,
            seconds: Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Newlines in the file, and its text when it is at most 1 MiB.
    static func countLines(_ path: String) throws -> (Int, String) {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var lines = 0
        var total = 0
        var head = Data()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            lines += chunk.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                var count = 0
                var position = base
                let end = base + raw.count
                while position < end, let found = memchr(position, 0x0A, end - position) {
                    count += 1
                    position = UnsafeRawPointer(found) + 1
                }
                return count
            }
            if total < 1 << 20 { head.append(chunk) }
            total += chunk.count
        }
        return (lines, total <= 1 << 20 ? String(decoding: head, as: UTF8.self) : "")
    }
}

/// A failure of the test machinery itself.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
