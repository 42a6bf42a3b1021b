import Foundation
import Glibc
import Internals
import TestSupport
import Testing

/// Issue 21 against `receipt-tool serve` and `notifications`: real files, real faults (deleted,
/// replaced, truncated files, read-only files and directories, a full tmpfs), real PostgreSQL
/// clusters restarted, stalled and crashed.
@Suite(.serialized) struct StoreReliabilityTests {
    typealias F = NotificationFixtures

    /// `/bin/sh -c command`; its exit status (output in `log` when given).
    @discardableResult
    static func sh(_ command: String) throws -> Int32 {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("sh-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        return try spawnAndWait("/bin/sh", ["-c", command], output: log)
    }

    /// The status of `GET /health`, nil without an answer.
    static func health(_ port: UInt16, timeout: TimeInterval = 10) -> Int? {
        guard let connection = try? RawHTTPConnection(port: port, timeout: timeout) else { return nil }
        return (try? connection.sendAndRead("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))?.status
    }

    static func checksum(_ path: String) throws -> String {
        hex(SHA256.hash(Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
    }

    // MARK: 3. The store knows its file

    /// Deleting, truncating or replacing the SQLite file, or deleting its -wal, under a running
    /// `serve`: `/health` says 503 at once, and no notification gets 200 unless the store found at
    /// the path afterwards holds it.
    @Test(.timeLimit(.minutes(3))) func faultsUnderServe() throws {
        let bodies = try F.bodies(48)
        for (round, fault) in ["delete", "truncate", "replace", "delete-wal"].enumerated() {
            let directory = temporaryDirectory("fault-\(fault)")
            let database = directory.appendingPathComponent("n.db").path
            let server = try ServeProcess(try F.serveArguments(database: database) + ["--quiet"])
            try #require(server.port != 0, "\(server.firstLine)")
            let mine = Array(bodies[(round * 12)..<(round * 12 + 12)])
            for (_, body) in mine.prefix(3) { #expect(F.post(port: server.port, body)?.status == 200) }
            switch fault {
            case "delete": try FileManager.default.removeItem(atPath: database)
            case "truncate": #expect(truncate(database, 0) == 0)
            case "replace":
                try FileManager.default.copyItem(atPath: database, toPath: database + ".copy")
                #expect(rename(database + ".copy", database) == 0)
            default: try FileManager.default.removeItem(atPath: database + "-wal")
            }
            #expect(Self.health(server.port) == 503, "\(fault): /health right after the fault")
            var acknowledged: [String] = []
            for (uuid, body) in mine.dropFirst(3) where F.post(port: server.port, body)?.status == 200 { acknowledged.append(uuid) }
            _ = server.stop(signal: SIGKILL)
            let listed = try ReceiptTool.run(["notifications", "list", "--db", database, "--json"])
            let found = Set(
                listed.stdout.split(separator: "\n").compactMap { line in
                    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["notificationUUID"] as? String
                })
            #expect(
                Set(acknowledged).isSubset(of: found), "\(fault): 200 for \(Set(acknowledged).subtracting(found).count) not in the store")
            if fault == "delete" || fault == "delete-wal" {
                #expect(!acknowledged.isEmpty, "\(fault): the store did not reopen its path")
            }
        }
    }

    // MARK: 4. A clean stop checkpoints

    /// After SIGTERM, a copy of the `.db` file alone holds every acknowledged notification.
    @Test(.timeLimit(.minutes(2))) func sigtermLeavesEverythingInTheDatabaseFile() throws {
        let database = temporaryDirectory().appendingPathComponent("n.db").path
        let server = try ServeProcess(try F.serveArguments(database: database) + ["--quiet"])
        try #require(server.port != 0, "\(server.firstLine)")
        let bodies = try F.bodies(40)
        for (_, body) in bodies { #expect(F.post(port: server.port, body)?.status == 200) }
        #expect(server.stop(signal: SIGTERM).status == 0)
        let copy = temporaryDirectory("copy").appendingPathComponent("backup.db").path
        try FileManager.default.copyItem(atPath: database, toPath: copy)
        #expect(try F.list(copy).count == 40)
    }

    // MARK: 5. /health writes; a failed store heals

    /// A store read-only at start (its file immutable; its directory a read-only mount) and a full
    /// disk (a small tmpfs): `/health` and notifications both get 503; fixing the cause brings
    /// 200 back without a restart.
    @Test(.enabled(if: geteuid() == 0, "needs root for chattr and mount"), .timeLimit(.minutes(3))) func healthSaysWhatACommitWould()
        throws
    {
        let bodies = try F.bodies(30)
        var next = 0
        func post(_ port: UInt16) -> Int? {
            defer { next += 1 }
            return F.post(port: port, bodies[next].body)?.status
        }
        // A store created, then made immutable before `serve` starts.
        let database = temporaryDirectory("immutable").appendingPathComponent("n.db").path
        do {
            let first = try ServeProcess(try F.serveArguments(database: database) + ["--quiet"])
            #expect(post(first.port) == 200)
            #expect(first.stop().status == 0)
        }
        try #require(try Self.sh("chattr +i '\(database)'") == 0)
        defer { _ = try? Self.sh("chattr -i '\(database)'") }
        let server = try ServeProcess(try F.serveArguments(database: database) + ["--quiet"])
        try #require(server.port != 0, "read-only at start: \(server.firstLine)")
        #expect(Self.health(server.port) == 503 && post(server.port) == 503, "immutable file")
        try Self.sh("chattr -i '\(database)'")
        #expect(Self.health(server.port) == 200 && post(server.port) == 200, "writable again")
        #expect(server.stop().status == 0)

        // A directory mounted read-only, then read-write again.
        let mount = temporaryDirectory("ro-mount")
        guard try Self.sh("mount -t tmpfs -o size=8m tmpfs '\(mount.path)'") == 0 else {
            Issue.record("cannot mount a tmpfs here")
            return
        }
        defer { _ = try? Self.sh("umount -l '\(mount.path)'") }
        let inMount = mount.appendingPathComponent("n.db").path
        do {
            let first = try ServeProcess(try F.serveArguments(database: inMount) + ["--quiet"])
            #expect(post(first.port) == 200)
            #expect(first.stop().status == 0)
        }
        try #require(try Self.sh("mount -o remount,ro '\(mount.path)'") == 0)
        let readOnly = try ServeProcess(try F.serveArguments(database: inMount) + ["--quiet"])
        try #require(readOnly.port != 0, "read-only directory at start: \(readOnly.firstLine)")
        #expect(Self.health(readOnly.port) == 503 && post(readOnly.port) == 503, "read-only directory")
        // Remounting read-write is refused while files are open read-only? It is not: try it.
        try #require(try Self.sh("mount -o remount,rw '\(mount.path)'") == 0)
        #expect(Self.health(readOnly.port) == 200 && post(readOnly.port) == 200, "directory writable again")
        #expect(readOnly.stop().status == 0)

        // A full disk: a 1 MiB tmpfs filled up while `serve` runs, then freed.
        let small = temporaryDirectory("full")
        try #require(try Self.sh("mount -t tmpfs -o size=1m tmpfs '\(small.path)'") == 0)
        defer { _ = try? Self.sh("umount -l '\(small.path)'") }
        let onSmall = small.appendingPathComponent("n.db").path
        let full = try ServeProcess(try F.serveArguments(database: onSmall) + ["--quiet"])
        try #require(full.port != 0, "\(full.firstLine)")
        #expect(post(full.port) == 200)
        try Self.sh("dd if=/dev/zero of='\(small.path)/filler' bs=4k")
        #expect(Self.health(full.port) == 503 && post(full.port) == 503, "full disk")
        try FileManager.default.removeItem(atPath: small.path + "/filler")
        #expect(Self.health(full.port) == 200 && post(full.port) == 200, "space again")
        #expect(full.stop().status == 0)
    }

    /// A PostgreSQL database turned read-only while `serve` runs: `/health` 503 like the
    /// notifications; read-write again: 200 without a restart.
    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(2)))
    func readOnlyPostgres() throws {
        let cluster = try PostgresCluster.start(label: "readonly")
        defer { cluster.stop() }
        let url = try cluster.createDatabase("notifications")
        let server = try ServeProcess(try F.serveArguments(database: url) + ["--quiet"])
        try #require(server.port != 0, "\(server.firstLine)")
        let bodies = try F.bodies(4)
        #expect(F.post(port: server.port, bodies[0].body)?.status == 200)
        try cluster.sql("ALTER SYSTEM SET default_transaction_read_only = on")
        try cluster.sql("SELECT pg_reload_conf()")
        usleep(500_000)
        #expect(Self.health(server.port) == 503)
        #expect(F.post(port: server.port, bodies[1].body)?.status == 503)
        try cluster.sql("ALTER SYSTEM RESET default_transaction_read_only")
        try cluster.sql("SELECT pg_reload_conf()")
        usleep(500_000)
        #expect(Self.health(server.port) == 200)
        #expect(F.post(port: server.port, bodies[2].body)?.status == 200)
        #expect(server.stop().status == 0)
    }

    // MARK: 6. PostgreSQL restarted and stalled

    /// PostgreSQL restarted after eight senders filled the pool: the first notification sent after
    /// it is back gets 200 (the first stale connection found discards all the others, so the
    /// retry runs on a new connection).
    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(2)))
    func postgresRestartedUnderLoad() throws {
        let cluster = try PostgresCluster.start(label: "restart")
        defer { cluster.stop() }
        let url = try cluster.createDatabase("notifications")
        let server = try ServeProcess(try F.serveArguments(database: url) + ["--quiet"])
        try #require(server.port != 0, "\(server.firstLine)")
        let bodies = try F.bodies(400)
        let port = server.port
        let stop = Locked(false)
        let next = Locked(0)
        let group = DispatchGroup()
        for _ in 0..<8 {
            group.enter()
            Thread {
                defer { group.leave() }
                while !stop.withLock({ $0 }) {
                    let index = next.withLock { value -> Int in
                        value += 1
                        return value - 1
                    }
                    guard index < 390 else { return }
                    _ = F.post(port: port, bodies[index].body, timeout: 5)
                }
            }.start()
        }
        usleep(400_000)
        // The pool now holds a connection per sender; the restart makes every one of them stale.
        stop.withLock { $0 = true }
        group.wait()
        try cluster.restart()
        for attempt in 0..<3 {
            let response = F.post(port: port, bodies[390 + attempt].body)
            #expect(response?.status == 200, "request \(attempt) after the restart: \(response?.bodyText ?? "no answer")")
        }
        #expect(Self.health(port) == 200)
        #expect(server.stop().status == 0)
    }

    /// Every PostgreSQL process stopped (SIGSTOP) for 25 s with `--request-timeout 10`: every
    /// notification and `/health` is answered 503 within 12 s; afterwards 200 again.
    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(2)))
    func postgresStalled() throws {
        let cluster = try PostgresCluster.start(label: "stalled")
        defer { cluster.stop() }
        let url = try cluster.createDatabase("notifications")
        let server = try ServeProcess(try F.serveArguments(database: url) + ["--quiet", "--request-timeout", "10"])
        try #require(server.port != 0, "\(server.firstLine)")
        let port = server.port
        let bodies = try F.bodies(40)
        for index in 0..<4 { #expect(F.post(port: port, bodies[index].body)?.status == 200) }
        try cluster.signalEveryProcess(SIGSTOP)
        var resumed = false
        defer { if !resumed { try? cluster.signalEveryProcess(SIGCONT) } }
        let stalledAt = ContinuousClock.now
        let answers = Locked([(String, Int?, Duration)]())
        let group = DispatchGroup()
        for thread in 0..<6 {
            group.enter()
            Thread {
                defer { group.leave() }
                for round in 0..<2 {
                    let start = ContinuousClock.now
                    if thread == 0 {
                        let status = Self.health(port, timeout: 20)
                        answers.withLock { $0.append(("health \(round)", status, ContinuousClock.now - start)) }
                    } else {
                        let status = F.post(port: port, bodies[4 + thread * 2 + round].body, timeout: 20)?.status
                        answers.withLock { $0.append(("notification \(thread).\(round)", status, ContinuousClock.now - start)) }
                    }
                }
            }.start()
        }
        group.wait()
        let remaining = Duration.seconds(25) - (ContinuousClock.now - stalledAt)
        if remaining > .zero { usleep(UInt32(remaining.components.seconds * 1_000_000)) }
        try cluster.signalEveryProcess(SIGCONT)
        resumed = true
        for (label, status, elapsed) in answers.withLock({ $0 }) {
            #expect(status == 503, "\(label): \(status.map(String.init) ?? "no answer")")
            #expect(elapsed < .seconds(12), "\(label) took \(elapsed)")
        }
        #expect(answers.withLock { $0.count } == 12)
        var back = false
        for index in 20..<30 where !back {
            back = F.post(port: port, bodies[index].body)?.status == 200
            if !back { usleep(200_000) }
        }
        #expect(back, "no 200 after the database resumed")
        #expect(server.stop().status == 0)
    }

    // MARK: 7. Durability pinned per session

    /// `ALTER DATABASE … SET synchronous_commit=off` and a crash (immediate shutdown) right after
    /// a burst: every acknowledged notification is there after recovery.
    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(2)))
    func synchronousCommitPinned() throws {
        let cluster = try PostgresCluster.start(label: "durable")
        defer { cluster.stop() }
        let url = try cluster.createDatabase("notifications")
        try cluster.sql("ALTER DATABASE notifications SET synchronous_commit = off")
        let server = try ServeProcess(try F.serveArguments(database: url) + ["--quiet"])
        try #require(server.port != 0, "\(server.firstLine)")
        let port = server.port
        let bodies = try F.bodies(240)
        let acknowledged = Locked(Set<String>())
        concurrentlyRun(12) { thread in
            for index in stride(from: thread, to: bodies.count, by: 12) where F.post(port: port, bodies[index].body)?.status == 200 {
                acknowledged.withLock { _ = $0.insert(bodies[index].uuid) }
            }
        }
        try cluster.crash()
        _ = server.stop(signal: SIGKILL)
        try cluster.startAgain()
        let stored = Set(try F.list(url).compactMap { $0["notificationUUID"] as? String })
        let lost = acknowledged.withLock { $0 }.subtracting(stored)
        #expect(acknowledged.withLock { $0.count } == 240)
        #expect(lost.isEmpty, "\(lost.count) acknowledged notifications lost")
    }

    // MARK: 2. No password in any output

    @Test(.timeLimit(.minutes(2))) func noPasswordInAnyOutput() throws {
        let secret = "S3CRETpw"
        let locations = [
            "postgres://rm:\(secret)@127.0.0.1:1/notifications",
            "postgresql://127.0.0.1:1/notifications?user=rm&password=\(secret)",
            // libpq's own message quotes the whole URI.
            "postgres://rm:\(secret)@[::1",
        ]
        for location in locations {
            for arguments in [
                ["notifications", "list", "--db", location], ["notifications", "status", "--db", location, "1"],
                ["serve", "--port", "0"] + (try F.serveArguments(database: location)),
            ] {
                let result = try ReceiptTool.run(arguments)
                #expect(result.status != 0, "\(arguments.prefix(2))")
                #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "\(arguments.prefix(2)): \(result.stderr)")
                #expect(result.stderr.contains(Redaction.mask), "\(arguments.prefix(2)): \(result.stderr)")
            }
        }
    }

    /// `api --base-url http://user:PASSWORD@…`: refused or failing, never printing the password.
    @MainActor
    @Test(.timeLimit(.minutes(1))) func noPasswordFromTheAPIBaseURL() async throws {
        let world = try APIToolWorld(pageSize: 2)
        var arguments = world.common
        let option = try #require(arguments.firstIndex(of: "--base-url"))
        for base in ["http://rm:S3CRETpw@127.0.0.1:1", "http://rm:S3CRETpw@", "ftp://rm:S3CRETpw@127.0.0.1"] {
            arguments[option + 1] = base
            let result = try await tool(["api", "history", "1"] + arguments + ["--timeout", "2", "--max-attempts", "1"])
            #expect(result.status != 0, "\(base)")
            #expect(!result.stdout.contains("S3CRETpw") && !result.stderr.contains("S3CRETpw"), "\(base): \(result.stderr)")
        }
        await world.finish()
    }

    // MARK: 10. --notifications-path

    @Test func notificationsPathMustBeAnAbsolutePath() throws {
        let database = temporaryDirectory().appendingPathComponent("n.db").path
        for path in ["/hooks/apple?token=abc", "/hooks#x", "hooks", "/a b", "/health"] {
            let server = try ServeProcess(try F.serveArguments(database: database) + ["--notifications-path", path])
            #expect(server.port == 0, "\(path): serve started")
            #expect(server.stop(signal: 0, timeout: 10).status == 64, "\(path)")
        }
        #expect(!FileManager.default.fileExists(atPath: database))
    }

    // MARK: 13. Read-only commands change nothing

    /// `notifications list` on another program's SQLite database, on an empty file, and on a store
    /// the user may only read (as `nobody`): the bytes are unchanged, and the readable store is
    /// listed.
    @Test(
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs the sqlite3 command"),
        .timeLimit(.minutes(2))) func readOnlyCommandsChangeNothing() throws
    {
        let directory = temporaryDirectory()
        let foreign = directory.appendingPathComponent("other-app.db").path
        try #require(try Self.sh("/usr/bin/sqlite3 '\(foreign)' 'CREATE TABLE t (x); INSERT INTO t VALUES (1);'") == 0)
        let empty = directory.appendingPathComponent("empty.db").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        for path in [foreign, empty] {
            let before = try Self.checksum(path)
            for action in [["list"], ["status", "1"]] {
                let result = try ReceiptTool.run(["notifications"] + action + ["--db", path])
                #expect(result.status == 1, "\(path): \(result.stderr)")
                #expect(result.stderr.contains("no notification store"), "\(result.stderr)")
            }
            #expect(try Self.checksum(path) == before, "\(path) changed")
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }
        #expect(try Self.sh("/usr/bin/sqlite3 '\(foreign)' 'PRAGMA journal_mode'") == 0)

        // A store written by `serve`, then readable only.
        let store = directory.appendingPathComponent("n.db").path
        let server = try ServeProcess(try F.serveArguments(database: store) + ["--quiet"])
        for (_, body) in try F.bodies(3) { #expect(F.post(port: server.port, body)?.status == 200) }
        #expect(server.stop().status == 0)
        let before = try Self.checksum(store)
        #expect(try F.list(store).count == 3)
        #expect(try Self.checksum(store) == before)
        if geteuid() == 0, let executable = ReceiptTool.executable {
            let output = directory.appendingPathComponent("nobody.out")
            let status = try spawnAndWait(
                "/usr/sbin/runuser", ["-u", "nobody", "--", executable.path, "notifications", "list", "--db", store, "--json"],
                output: output)
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            #expect(status == 0, "as nobody: \(text)")
            #expect(text.split(separator: "\n").count == 3, "as nobody: \(text)")
            #expect(try Self.checksum(store) == before)
        }
    }
}
