import Foundation
import HTTPServer
import JSON

/// `serve`'s log on standard error, one line per event: `--log-format text` (default,
/// `serve: POST /notifications → 200 accepted: …`) or `json` (one JSON object per line with
/// `time`, `level`, `message` or `method`, `path`, `status`, `outcome`, `detail`,
/// `remoteAddress`). Request-derived text is escaped in both: JSON strings by the writer, and in
/// text every control character is written `\u{…}`, so that no input can start a log line of its
/// own.
struct ServeLog: Sendable {
    enum Format: String, Sendable {
        case text
        case json
    }

    let format: Format

    /// The format `--log-format` names (nil: text).
    init(format name: String?) throws(UsageError) {
        guard let name else {
            format = .text
            return
        }
        guard let format = Format(rawValue: name.lowercased()) else { throw UsageError("--log-format must be text or json, found \(name)") }
        self.format = format
    }

    /// A server message (a protocol error, a refused connection).
    func message(_ text: String) {
        switch format {
        case .text: printError("serve: \(Self.escapedControls(text))")
        case .json:
            var json = start(level: "info")
            json.string("message", text)
            json.endObject()
            printError(json.text)
        }
    }

    /// One answered request: `status` the HTTP status (nil: not shown in text, as for verifyReceipt
    /// whose `outcome` is its own status), `outcome` what the endpoint did.
    func request(_ request: HTTPRequest, status: Int?, outcome: String, detail: String) {
        switch format {
        case .text:
            let head = [status.map(String.init), outcome].compactMap { $0 }.joined(separator: " ")
            printError("serve: \(request.method) \(Self.escapedControls(request.path)) → \(head): \(Self.escapedControls(detail))")
        case .json:
            var json = start(level: "info")
            json.string("method", request.method)
            json.string("path", request.path)
            if let status { json.number("status", String(status)) }
            json.string("outcome", outcome)
            json.string("detail", detail)
            if let address = request.remoteAddress { json.string("remoteAddress", address) }
            json.endObject()
            printError(json.text)
        }
    }

    private func start(level: String) -> JSONWriter {
        var json = JSONWriter(indent: 0)
        json.beginObject()
        var style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        style.timeZone = .gmt
        json.string("time", Date().formatted(style))
        json.string("level", level)
        return json
    }

    /// `text` with every control character (C0, DEL, C1, line and paragraph separators) written
    /// `\u{XX}`.
    static func escapedControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
