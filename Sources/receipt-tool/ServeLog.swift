import Foundation
import HTTPServer
import Internals
import JSON

/// `serve`'s log on standard error, one line per event: `--log-format text` (default,
/// `serve: POST /notifications → 200 accepted: …`) or `json` (one JSON object per line with
/// `time`, `level`, `message` or `method`, `path`, `status`, `outcome`, `detail`,
/// `remoteAddress`). Request-derived text is escaped in both: JSON strings by the writer, and in
/// text by the one terminal escaping rule (`TerminalEscaping`), so that no input can start a log
/// line of its own.
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
        case .text: printError("serve: \(TerminalEscaping.escaped(text))")
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
            printError("serve: \(request.method) \(TerminalEscaping.escaped(request.path)) → \(head): \(TerminalEscaping.escaped(detail))")
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
}
