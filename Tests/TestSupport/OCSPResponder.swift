package import Foundation
import Glibc
import HTTPServer
import Internals
import ReceiptCrypto
package import ReceiptSigning

/// A test PKI whose leaf and intermediate name OCSP responders (Authority Information Access),
/// served by real `openssl ocsp` responders on 127.0.0.1 behind counting proxies:
///
/// - the leaf names the proxy `leafProxy`, which forwards to a responder signing with the
///   intermediate (the leaf's issuer);
/// - the intermediate names `intermediateProxy`, forwarding to a responder signing with the root.
///
/// The proxies count what reaches the responders, and can instead replay fixed bytes (crafted
/// responses) or refuse (``OCSPProxy/Mode/down``). ``stop()`` ends both responders and proxies;
/// a watchdog ends the responders if the test process dies first.
package final class OCSPTestBed: @unchecked Sendable {
    /// The PKI (JWS-shaped or receipt-shaped).
    package let pki: TestPKI
    /// Where the PEM files, the index and the logs are.
    package let directory: URL
    /// The proxy the leaf's AIA names.
    package let leafProxy: OCSPProxy
    /// The proxy the intermediate's AIA names.
    package let intermediateProxy: OCSPProxy
    private let responders: [OpenSSLOCSPResponder]

    /// Generates the PKI (`jws`: Apple's JWS shape, else RSA receipts), writes its files and an
    /// index with `revoked` (`"leaf"`, `"intermediate"`) revoked, and starts everything.
    package init(jws: Bool = true, revoked: Set<String> = [], days: Int = 1) throws {
        directory = temporaryDirectory("ocsp")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        leafProxy = try OCSPProxy()
        intermediateProxy = try OCSPProxy()
        var options = TestPKI.Options()
        if jws {
            options.keys = .appleJWS
            options.digest = .sha384
        } else {
            options.keyBits = 2048
        }
        options.leafOCSPURL = leafProxy.url
        options.intermediateOCSPURL = intermediateProxy.url
        pki = try TestPKI.generate(options)
        try pki.write(to: directory)
        var entries: [TestPKI.IndexEntry] = []
        let revokedAt = Date(timeIntervalSinceNow: -3_600)
        entries.append(TestPKI.IndexEntry(pki.intermediate, revokedAt: revoked.contains("intermediate") ? revokedAt : nil))
        entries.append(TestPKI.IndexEntry(pki.leaf, revokedAt: revoked.contains("leaf") ? revokedAt : nil))
        try Data(TestPKI.opensslIndex(entries).utf8).write(to: directory.appendingPathComponent("index.txt"))
        let (leafResponder, leafPort) = try OpenSSLOCSPResponder.start(
            directory: directory, ca: "intermediate.pem", signer: "intermediate.pem", key: "intermediate-key.pem",
            days: days, log: "leaf-responder.log")
        let (intermediateResponder, intermediatePort) = try OpenSSLOCSPResponder.start(
            directory: directory, ca: "root.pem", signer: "root.pem", key: "root-key.pem", days: days,
            log: "intermediate-responder.log")
        responders = [leafResponder, intermediateResponder]
        leafProxy.mode = .forward(leafPort)
        intermediateProxy.mode = .forward(intermediatePort)
    }

    /// Runs `openssl` with `arguments` in ``directory``; throws when it fails.
    package func openssl(_ arguments: [String]) throws {
        let status = try spawnAndWait(
            "/usr/bin/openssl", arguments, directory: directory, output: directory.appendingPathComponent("openssl.log"))
        guard status == 0 else {
            let log = (try? String(contentsOf: directory.appendingPathComponent("openssl.log"), encoding: .utf8)) ?? ""
            throw SpawnError("openssl \(arguments.joined(separator: " ")) exited \(status): \(log.suffix(400))")
        }
    }

    /// A response made by `openssl ocsp` from the DER request `request` with this PKI's index,
    /// answering as `ca` and signed by `signer`/`key` (PEM file names in ``directory``), with a
    /// `nextUpdate` `minutes` after now.
    package func craftedResponse(to request: [UInt8], ca: String, signer: String, key: String, minutes: Int = 60) throws -> [UInt8] {
        let name = "request-\(UUID().uuidString).der"
        try Data(request).write(to: directory.appendingPathComponent(name))
        let output = "response-\(UUID().uuidString).der"
        try openssl([
            "ocsp", "-index", "index.txt", "-CA", ca, "-rsigner", signer, "-rkey", key, "-reqin", name, "-respout", output, "-nmin",
            String(minutes),
        ])
        return Array(try Data(contentsOf: directory.appendingPathComponent(output)))
    }

    /// Stops the responders and the proxies, and removes the files.
    package func stop() async {
        for responder in responders { responder.stop() }
        await leafProxy.shutdown()
        await intermediateProxy.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// An HTTP server on 127.0.0.1 standing in front of an OCSP responder: it counts requests and
/// forwards them, replays fixed bytes, or answers 503.
package final class OCSPProxy: @unchecked Sendable {
    /// What the proxy does with a request.
    package enum Mode: Sendable {
        /// Forwards to the responder on this port.
        case forward(UInt16)
        /// Answers with these bytes.
        case replay([UInt8])
        /// Answers 503 Service Unavailable.
        case down
    }

    private let state: Locked<(mode: Mode, forwarded: Int)>
    private let server: LocalServer

    /// Starts the proxy (answering 503 until ``mode`` is set).
    package init() throws {
        let state = Locked<(mode: Mode, forwarded: Int)>((.down, 0))
        self.state = state
        server = try LocalServer(
            ScriptedHandler { request in
                let mode = state.withLock { current -> Mode in
                    if case .forward = current.mode { current.forwarded += 1 }
                    return current.mode
                }
                switch mode {
                case .down: return HTTPResponse(status: 503)
                case .replay(let bytes):
                    return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "application/ocsp-response")], body: bytes)
                case .forward(let port):
                    do {
                        let connection = try RawHTTPConnection(port: port, timeout: 10)
                        let head =
                            "POST / HTTP/1.0\r\nContent-Type: application/ocsp-request\r\nContent-Length: \(request.body.count)\r\n\r\n"
                        guard connection.send(Array(head.utf8) + request.body) else { return HTTPResponse(status: 502) }
                        let response = try connection.readResponse()
                        return HTTPResponse(
                            status: response.status, headers: [HTTPHeader("Content-Type", "application/ocsp-response")], body: response.body
                        )
                    } catch {
                        return HTTPResponse(status: 502)
                    }
                }
            })
    }

    /// The URL certificates name.
    package var url: String { "http://127.0.0.1:\(server.server.port)/ocsp" }
    /// What the proxy does now.
    package var mode: Mode {
        get { state.withLock { $0.mode } }
        set { state.withLock { $0.mode = newValue } }
    }
    /// Requests forwarded to the responder so far.
    package var forwarded: Int { state.withLock { $0.forwarded } }
    /// Connections the proxy accepted so far (whatever it did with them).
    package var connections: Int { server.server.statistics.connections }

    /// Stops the proxy.
    package func shutdown() async { await server.shutdown() }
}

/// One `openssl ocsp -port` responder process, started with `posix_spawn` (no descriptor
/// inherited) and stopped with SIGTERM and `waitpid`.
package final class OpenSSLOCSPResponder: @unchecked Sendable {
    private let pid: pid_t
    private let stopped = Locked(false)

    /// Starts `openssl ocsp -index index.txt -CA ca -rsigner signer -rkey key -port port -ndays
    /// days` in `directory` and waits until it listens.
    package init(port: UInt16, directory: URL, ca: String, signer: String, key: String, days: Int, log: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let logPath = directory.appendingPathComponent(log).path
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        guard let closeFrom = GNUSpawnActions.closeFrom, let changeDirectory = GNUSpawnActions.changeDirectory else {
            throw SpawnError("glibc's posix_spawn file actions are missing")
        }
        _ = closeFrom(&actions, 3)
        _ = changeDirectory(&actions, directory.path)
        let arguments = [
            "/usr/bin/openssl", "ocsp", "-index", "index.txt", "-CA", ca, "-rsigner", signer, "-rkey", key, "-port", String(port),
            "-ndays", String(days),
        ]
        let argv = arguments.map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        // The calling thread may block signals (dispatch's threads do); the child must not, or
        // SIGTERM from a watchdog would never end it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var child = pid_t()
        let status = posix_spawn(&child, "/usr/bin/openssl", &actions, &attributes, argv + [nil], environ)
        guard status == 0 else { throw SpawnError("cannot start openssl: \(String(cString: strerror(status)))") }
        pid = child
        runWhenThisProcessEnds("/bin/kill", ["\(child)"])
        let deadline = Date().addingTimeInterval(15)
        while !isListening(port: port) {
            var exitStatus: Int32 = 0
            if waitpid(child, &exitStatus, WNOHANG) == child {
                // It ended (a port taken in between, say) and is reaped: nothing left to stop.
                stopped.withLock { $0 = true }
                throw SpawnError("openssl ocsp exited before it listened on port \(port)")
            }
            guard Date() < deadline else {
                stop()
                throw SpawnError("openssl ocsp did not listen on port \(port)")
            }
            usleep(20_000)
        }
    }

    /// Starts a responder on a free port, trying another port when the first is taken before
    /// `openssl` binds it (another test may get the same free port in between); its log is in
    /// the error when every attempt fails.
    package static func start(directory: URL, ca: String, signer: String, key: String, days: Int, log: String) throws -> (
        OpenSSLOCSPResponder, UInt16
    ) {
        var failure: any Error = SpawnError("openssl ocsp was not started")
        for _ in 0..<4 {
            let port = try freeLoopbackPort()
            do {
                return (
                    try OpenSSLOCSPResponder(port: port, directory: directory, ca: ca, signer: signer, key: key, days: days, log: log), port
                )
            } catch {
                failure = error
            }
        }
        let text = (try? String(contentsOf: directory.appendingPathComponent(log), encoding: .utf8)) ?? ""
        throw SpawnError("\(failure); its log: \(text.suffix(400))")
    }

    /// Ends the responder (once) and waits for it.
    package func stop() {
        guard
            stopped.withLock({ done in
                defer { done = true }
                return !done
            })
        else { return }
        kill(pid, SIGKILL)
        var result: Int32 = 0
        while waitpid(pid, &result, 0) < 0 && errno == EINTR {}
    }

    deinit { stop() }
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
package func freeLoopbackPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw SpawnError("socket failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw SpawnError("bind failed: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw SpawnError("getsockname failed") }
    return UInt16(bigEndian: address.sin_port)
}

/// Whether some socket listens on TCP `port` (read from /proc/net/tcp and tcp6, without
/// connecting: a probe connection would be a request to a single-threaded responder).
package func isListening(port: UInt16) -> Bool {
    let suffix = String(format: ":%04X", port)
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count > 3, fields[1].hasSuffix(suffix), fields[3] == "0A" { return true }
        }
    }
    return false
}
