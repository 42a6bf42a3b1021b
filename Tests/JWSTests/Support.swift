import Foundation
import Internals
import JSON
import JWS
import Testing

/// The JWS vectors live in TestReceipts/jws/ at the package root (see its README.md).
enum Vectors {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("TestReceipts")

    struct Missing: Error, CustomStringConvertible {
        let path: String
        var description: String { "missing test vector \(path)" }
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        let path = root.appendingPathComponent(name).path
        guard let data = FileManager.default.contents(atPath: path) else { throw Missing(path: path) }
        return [UInt8](data)
    }

    static func json(_ name: String) throws -> JSONValue { try JSONValue.parse(bytes(name)) }

    static func token(_ name: String) throws -> CompactJWS { try CompactJWS(bytes(name)) }

    /// Every file of `directory` (relative to TestReceipts) whose name ends with `suffix`.
    static func files(in directory: String, suffix: String) -> [String] {
        let url = root.appendingPathComponent(directory)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { directory + "/" + $0 }
    }

    /// The real Apple-signed tokens with a `.expected.json` next to them.
    static var expectedFiles: [String] {
        ["jws/go-iap", "jws/gopay", "jws/appstore-iap", "jws/omnimind", "jws/mimo"].flatMap { files(in: $0, suffix: ".expected.json") }
    }
}

/// Builds tokens for the negative tests: base64url of the given header and payload bytes, and a
/// signature (64 bytes by default).
enum TokenBuilder {
    static func segment(_ bytes: [UInt8]) -> String { Base64.encode(bytes, alphabet: .url) }

    static func token(header: String = #"{"alg":"ES256"}"#, payload: String = #"{"a":1}"#, signature: [UInt8] = Array(0..<64)) -> String {
        segment(Array(header.utf8)) + "." + segment(Array(payload.utf8)) + "." + segment(signature)
    }

    static func token(headerBytes: [UInt8], payloadBytes: [UInt8], signature: [UInt8] = Array(0..<64)) -> String {
        segment(headerBytes) + "." + segment(payloadBytes) + "." + segment(signature)
    }

    /// The token offset of decoded byte `index` of the segment that starts at `start`.
    static func offset(ofDecodedByte index: Int, inSegmentAt start: Int) -> Int { start + index / 3 * 4 + index % 3 }
}

/// The ``JWSError`` a throwing call produced, or `nil` (any other error is recorded as an issue).
func jwsError(_ body: () throws -> Void) -> JWSError? {
    do {
        try body()
        return nil
    } catch let error as JWSError {
        return error
    } catch {
        Issue.record("untyped error \(error)")
        return nil
    }
}
