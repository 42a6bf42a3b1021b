package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL cluster of its own for one test (or benchmark): `initdb` into a temporary
/// directory, `pg_ctl start` on a free port of 127.0.0.1 with trust authentication, `stop()`
/// removes it. Uses Debian's server binaries (/usr/lib/postgresql/<version>/bin), installed but not
/// running on these machines; `.ci/run` makes sure they are there.
///
/// PostgreSQL refuses to run as root: when the tests run as root (as CI does), every server
/// command runs as the `postgres` system user (Debian's package creates it) through `runuser`, and
/// the cluster directory is handed to that user.
package final class PostgresCluster: @unchecked Sendable {
    /// The directory holding `initdb`, `pg_ctl` and `postgres`, newest version first.
    package static let binDirectory: URL? = {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = root.appendingPathComponent(version).appendingPathComponent("bin")
            if ["initdb", "pg_ctl", "postgres"].allSatisfy({
                FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent($0).path)
            }) {
                return bin
            }
        }
        return nil
    }()

    /// Why a cluster cannot be started here, or nil when it can.
    package static let unavailableReason: String? = {
        guard binDirectory != nil else {
            return "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql; .ci/run does)"
        }
        if geteuid() == 0 {
            guard getpwnam("postgres") != nil else { return "running as root and there is no 'postgres' user to run the server as" }
            guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") else { return "running as root without runuser" }
        }
        return nil
    }()

    /// Whether ``start()`` can work on this machine.
    package static var isAvailable: Bool { unavailableReason == nil }

    /// The cluster's directory (data in `data`, the server log in `server.log`).
    package let directory: URL
    /// The port the server listens on, on 127.0.0.1.
    package let port: UInt16
    private let stopped = NSLock()
    private var isStopped = false

    /// `postgres://postgres@127.0.0.1:<port>/<database>`.
    package func url(database: String = "postgres") -> String { "postgres://postgres@127.0.0.1:\(port)/\(database)" }

    private init(directory: URL, port: UInt16) {
        self.directory = directory
        self.port = port
    }

    /// Creates and starts a cluster.
    /// - Throws: ``PostgresClusterError`` with the command's output when a step fails.
    package static func start(label: String = "cluster") throws -> PostgresCluster {
        guard let bin = binDirectory, unavailableReason == nil else {
            throw PostgresClusterError(unavailableReason ?? "PostgreSQL is not available")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pg-\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if geteuid() == 0, let user = getpwnam("postgres") {
            chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        let data = directory.appendingPathComponent("data").path
        try run(
            bin.appendingPathComponent("initdb").path,
            ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"], in: directory)
        var lastError = ""
        for _ in 0..<5 {
            let port = freePort()
            let cluster = PostgresCluster(directory: directory, port: port)
            do {
                try run(
                    bin.appendingPathComponent("pg_ctl").path,
                    [
                        "-D", data, "-l", directory.appendingPathComponent("server.log").path, "-w", "-t", "60", "-o",
                        "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c max_connections=200", "start",
                    ], in: directory)
                // Stopped and removed even if this process dies before stop() runs.
                var stop = [bin.appendingPathComponent("pg_ctl").path, "-D", data, "-m", "immediate", "-w", "stop"]
                if geteuid() == 0 { stop = ["/usr/sbin/runuser", "-u", "postgres", "--"] + stop }
                runWhenThisProcessEnds("/bin/sh", ["-c", "\"$@\"; rm -rf '\(directory.path)'", "stop"] + stop)
                return cluster
            } catch {
                lastError = "\(error)"
            }
        }
        throw PostgresClusterError("pg_ctl start failed on five ports: \(lastError)")
    }

    /// Creates a database and returns its URL.
    package func createDatabase(_ name: String) throws -> String {
        guard let bin = Self.binDirectory else { throw PostgresClusterError("no binaries") }
        let createdb = bin.appendingPathComponent("createdb")
        let executable =
            FileManager.default.isExecutableFile(atPath: createdb.path) ? createdb.path : "/usr/bin/createdb"
        try Self.run(executable, ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", name], in: directory, asServerUser: false)
        return url(database: name)
    }

    /// Runs `sql` with `psql` on `database` and returns its unaligned, tuples-only output.
    @discardableResult
    package func sql(_ sql: String, database: String = "postgres") throws -> String {
        guard let bin = Self.binDirectory else { throw PostgresClusterError("no binaries") }
        return try Self.run(
            bin.appendingPathComponent("psql").path,
            [
                "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", database, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1",
                "-c", sql,
            ],
            in: directory, asServerUser: false
        ).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the server like a crash (`-m immediate`: no checkpoint, what was not flushed is
    /// lost), keeping its data for ``startAgain()``.
    package func crash() throws {
        guard let bin = Self.binDirectory else { throw PostgresClusterError("no binaries") }
        try Self.run(
            bin.appendingPathComponent("pg_ctl").path,
            ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"],
            in: directory)
    }

    /// Starts the server again on its data and port, after ``crash()`` (recovery replays its WAL).
    package func startAgain() throws {
        guard let bin = Self.binDirectory else { throw PostgresClusterError("no binaries") }
        try Self.run(
            bin.appendingPathComponent("pg_ctl").path,
            [
                "-D", directory.appendingPathComponent("data").path, "-l", directory.appendingPathComponent("server.log").path, "-w", "-t",
                "60", "-o", "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c max_connections=200", "start",
            ], in: directory)
    }

    /// Restarts the server (`pg_ctl restart -m fast`), waiting until it accepts connections again.
    package func restart() throws {
        guard let bin = Self.binDirectory else { throw PostgresClusterError("no binaries") }
        try Self.run(
            bin.appendingPathComponent("pg_ctl").path,
            [
                "-D", directory.appendingPathComponent("data").path, "-l", directory.appendingPathComponent("server.log").path, "-m",
                "fast", "-w", "-t", "60", "restart",
            ],
            in: directory)
    }

    /// Sends `signal` to the server (the postmaster) and every process it started: SIGSTOP
    /// stalls the whole database, SIGCONT resumes it.
    package func signalEveryProcess(_ signal: Int32) throws {
        let pidFile = directory.appendingPathComponent("data").appendingPathComponent("postmaster.pid")
        let text = try String(contentsOf: pidFile, encoding: .utf8)
        guard let first = text.split(separator: "\n").first, let postmaster = Int32(first) else {
            throw PostgresClusterError("no postmaster pid in \(pidFile.path)")
        }
        var targets = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.range(of: ")", options: .backwards)
            else { continue }
            let fields = stat[close.upperBound...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == postmaster { targets.append(pid) }
        }
        if signal == SIGSTOP {
            // The children first, so that the postmaster cannot start new ones meanwhile.
            for pid in targets.reversed() { kill(pid, signal) }
        } else {
            for pid in targets { kill(pid, signal) }
        }
    }

    /// Stops the server at once (`-m immediate`) and removes the directory. Safe to call twice.
    package func stop() {
        stopped.lock()
        let already = isStopped
        isStopped = true
        stopped.unlock()
        guard !already, let bin = Self.binDirectory else { return }
        _ = try? Self.run(
            bin.appendingPathComponent("pg_ctl").path,
            ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"],
            in: directory)
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    /// The server log, for failure messages.
    package var serverLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
    }

    /// Runs a command (as the `postgres` user when this process is root) and waits for it.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], in directory: URL, asServerUser: Bool = true) throws -> String {
        var program = executable
        var argv = arguments
        if asServerUser, geteuid() == 0 {
            program = "/usr/sbin/runuser"
            argv = ["-u", "postgres", "--", executable] + arguments
        }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pg-command-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let status = try spawnAndWait(program, argv, directory: directory, output: log)
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw PostgresClusterError("\(URL(fileURLWithPath: executable).lastPathComponent) exited \(status): \(text)")
        }
        return text
    }
}

/// A step of ``PostgresCluster`` failed.
package struct PostgresClusterError: Error, CustomStringConvertible {
    /// What failed, with the command's output.
    package let description: String
    init(_ description: String) { self.description = description }
}

/// A TCP port of 127.0.0.1 that was free a moment ago (bound to port 0, then released).
package func freePort() -> UInt16 {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return 0 }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { return 0 }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
    }
    return UInt16(bigEndian: address.sin_port)
}
