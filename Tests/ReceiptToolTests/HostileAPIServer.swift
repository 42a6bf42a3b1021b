import Foundation
import Internals
import TestSupport

/// A scripted peer (``ScriptedPeer``) that answers HTTP/1.1 requests the way a hostile or broken
/// App Store Server API might: an encoded body the client did not ask for, a body that never
/// ends, page after page.
final class HostileAPIServer: Sendable {
    /// One answer.
    enum Reply: Sendable {
        /// This head (status line and header fields, no blank line) and body; `Content-Length`
        /// is added.
        case fixed(status: Int, headers: [(String, String)], body: [UInt8])
        /// This head, then zeros until the client goes away (no length: the body ends with the
        /// connection).
        case endless(status: Int, headers: [(String, String)])
        /// Waits, then answers.
        indirect case delayed(TimeInterval, Reply)
    }

    private let peer: ScriptedPeer
    private let received = Locked([ScriptedPeerConnection.Request]())

    /// Starts listening on a free port of 127.0.0.1; `script` answers the n-th request (0-based).
    init(_ script: @escaping @Sendable (ScriptedPeerConnection.Request, Int) -> Reply) throws {
        let received = received
        peer = try ScriptedPeer { connection in
            var buffer: [UInt8] = []
            while let request = connection.readRequest(&buffer) {
                let index = received.withLock { requests -> Int in
                    requests.append(request)
                    return requests.count - 1
                }
                guard Self.answer(script(request, index), on: connection) else { return }
            }
        }
    }

    var baseURL: String { "http://127.0.0.1:\(peer.port)" }

    /// The requests received so far.
    var requests: [ScriptedPeerConnection.Request] { received.withLock { $0 } }

    /// Closes the listener and every connection.
    func stop() { peer.stop() }

    /// Writes `reply`; false when the connection is done.
    private static func answer(_ reply: Reply, on connection: ScriptedPeerConnection) -> Bool {
        switch reply {
        case .delayed(let seconds, let next):
            Thread.sleep(forTimeInterval: seconds)
            return answer(next, on: connection)
        case .fixed(let status, let headers, let body):
            return connection.write(head(status, headers + [("Content-Length", String(body.count))])) && connection.write(body)
        case .endless(let status, let headers):
            guard connection.write(head(status, headers + [("Connection", "close")])) else { return false }
            let zeros = [UInt8](repeating: 0x30, count: 64 << 10)
            while connection.write(zeros) {}
            return false
        }
    }

    private static func head(_ status: Int, _ headers: [(String, String)]) -> [UInt8] {
        Array(("HTTP/1.1 \(status) Scripted\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n").utf8)
    }
}
