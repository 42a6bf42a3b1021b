import Foundation
import HTTPServer
import Internals
import JSON
import ReceiptServer

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

    /// One endpoint outcome, as the endpoint reported it (verifyReceipt's status is its outcome,
    /// so the HTTP status is not shown in text).
    func outcome(_ outcome: EndpointOutcome) {
        let status = outcome.route == .verifyReceipt ? nil : outcome.status
        switch format {
        case .text:
            let head = [status.map(String.init), outcome.outcome].compactMap { $0 }.joined(separator: " ")
            printError(
                "serve: \(outcome.method) \(TerminalEscaping.escaped(outcome.path)) → \(head): \(TerminalEscaping.escaped(outcome.detail))")
        case .json:
            var json = start(level: "info")
            json.string("method", outcome.method)
            json.string("path", outcome.path)
            if let status { json.number("status", String(status)) }
            json.string("outcome", outcome.outcome)
            json.string("detail", outcome.detail)
            if let address = outcome.remoteAddress { json.string("remoteAddress", address) }
            json.endObject()
            printError(json.text)
        }
    }

    /// The hook that logs every outcome.
    var hook: OutcomeHook { OutcomeHook { outcome($0) } }

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
