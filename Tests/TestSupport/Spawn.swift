package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a command to completion with `posix_spawn`, its standard output and error appended to
/// `output`, standard input from /dev/null, and **no other descriptor inherited** (Foundation's
/// `Process` hands children a descriptor it watches to learn that they exited, so a command that
/// leaves a daemon behind, such as `pg_ctl start` or a script starting servers, would never be
/// seen to exit).
/// - Returns: the exit status (128 + the signal when it was killed).
/// - Throws: ``SpawnError`` when the command cannot be started.
@discardableResult
package func spawnAndWait(
    _ executable: String, _ arguments: [String], directory: URL? = nil, environment: [String: String]? = nil, output: URL
) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    // glibc 2.34's closefrom and 2.29's chdir actions, looked up at run time (Swift does not import
    // these GNU extensions).
    guard let closeFrom = GNUSpawnActions.closeFrom else {
        throw SpawnError("posix_spawn_file_actions_addclosefrom_np is missing (glibc < 2.34)")
    }
    _ = closeFrom(&actions, 3)
    if let directory {
        guard let changeDirectory = GNUSpawnActions.changeDirectory else {
            throw SpawnError("posix_spawn_file_actions_addchdir_np is missing")
        }
        _ = changeDirectory(&actions, directory.path)
    }
    let argv = ([executable] + arguments).map { strdup($0) }
    defer { for pointer in argv { free(pointer) } }
    let variables = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") }
    defer { for pointer in variables { free(pointer) } }
    var pid = pid_t()
    let status = posix_spawn(&pid, executable, &actions, nil, argv + [nil], variables + [nil])
    guard status == 0 else { throw SpawnError("cannot start \(executable): \(String(cString: strerror(status)))") }
    var result: Int32 = 0
    while waitpid(pid, &result, 0) < 0 && errno == EINTR {}
    // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import (macros).
    let signal = result & 0x7F
    return signal == 0 ? (result >> 8) & 0xFF : 128 + signal
}

/// Starts a watchdog that runs `executable arguments` once this process has ended, however it
/// ends (a crash, or a test abandoned at its time limit whose `defer` never ran), so a server the
/// tests started as a daemon (a PostgreSQL cluster, nginx) does not outlive them. The watchdog is
/// a shell that checks once a second whether this process still exists; it inherits no descriptor
/// and is not waited for. After a normal stop the command finds nothing to stop, harmlessly.
package func runWhenThisProcessEnds(_ executable: String, _ arguments: [String]) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    guard let closeFrom = GNUSpawnActions.closeFrom else { return }
    _ = closeFrom(&actions, 3)
    let script = "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; exec \"$@\""
    let argv = (["/bin/sh", "-c", script, "watchdog", executable] + arguments).map { strdup($0) }
    defer { for pointer in argv { free(pointer) } }
    var pid = pid_t()
    _ = posix_spawn(&pid, "/bin/sh", &actions, nil, argv + [nil], environ)
}

/// glibc's GNU posix_spawn file actions, found with `dlsym`.
enum GNUSpawnActions {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    static let closeFrom: CloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: CloseFrom.self) }
    static let changeDirectory: ChangeDirectory? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
        .map { unsafeBitCast($0, to: ChangeDirectory.self) }
}

/// A command could not be started.
package struct SpawnError: Error, CustomStringConvertible {
    /// Why.
    package let description: String
    init(_ description: String) { self.description = description }
}
