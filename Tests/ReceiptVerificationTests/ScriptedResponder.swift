import Foundation
import Internals
import TestSupport

/// A scripted peer (``ScriptedPeer``) that answers each request with bytes a test scripts,
/// verbatim (any framing, malformed heads, a body without length), or not at all; then closes the
/// connection.
final class ScriptedResponder: Sendable {
    /// One answer.
    enum Reply: Sendable {
        /// These bytes, then the connection is closed.
        case bytes([UInt8])
        /// Nothing: the connection stays open until the client closes it or ``stop()``.
        case silence
    }

    private let peer: ScriptedPeer
    private let received = Locked([ScriptedPeerConnection.Request]())

    /// Starts listening; `script` answers the n-th request (0-based).
    init(_ script: @escaping @Sendable (Int) -> Reply) throws {
        let received = received
        peer = try ScriptedPeer { connection in
            var buffer: [UInt8] = []
            guard let request = connection.readRequest(&buffer) else { return }
            let index = received.withLock { requests -> Int in
                requests.append(request)
                return requests.count - 1
            }
            switch script(index) {
            case .bytes(let bytes): _ = connection.write(bytes)
            case .silence: connection.drain()
            }
        }
    }

    /// The port listened on.
    var port: UInt16 { peer.port }
    /// `http://127.0.0.1:<port>/ocsp`.
    var url: String { "http://127.0.0.1:\(port)/ocsp" }
    /// The requests read so far.
    var requests: [ScriptedPeerConnection.Request] { received.withLock { $0 } }
    /// The connections accepted so far.
    var connections: Int { peer.acceptedConnections }

    /// Closes the listener and every connection.
    func stop() { peer.stop() }
}
