import Foundation
import JSON
import ReceiptCrypto
import ReceiptVerification
import Receipts

/// `--revocation off|ocsp|ocsp-soft` and `--ocsp-response FILE ...`: whether the certificates of a
/// validated chain are checked by OCSP (off by default: verification stays offline), and the
/// responses captured earlier (`openssl ocsp -respout`) to use instead of the network.
enum RevocationOption {
    /// The options' names, for the argument parsers.
    static let valued: Set<String> = ["--revocation", "--ocsp-response"]

    /// Help text shared by the commands that take the options.
    static let help = """
          --revocation <mode>     off (default: no network, no revocation check), ocsp (every
                                  certificate below the anchor must be known good to its OCSP
                                  responder; an unreachable responder fails, marked retryable) or
                                  ocsp-soft (revoked or unknown fails; an unreachable responder is
                                  listed and tolerated). Judged at --at when a date is given, at
                                  the clock otherwise.
          --ocsp-response <file>  A DER OCSP response to use instead of asking the responder
                                  (repeatable; with --revocation ocsp or ocsp-soft). Nothing is
                                  fetched then: a stale or missing response fails.
        """

    /// The revocation policy the options ask for.
    static func parse(_ args: Arguments) throws -> RevocationPolicy {
        let files = args.values("--ocsp-response")
        let mode: RevocationFailureMode
        switch args.value("--revocation")?.lowercased() {
        case nil, "off":
            guard files.isEmpty else { throw UsageError("--ocsp-response needs --revocation ocsp or ocsp-soft") }
            return .off
        case "ocsp": mode = .hardFail
        case "ocsp-soft": mode = .softFail
        case let other?: throw UsageError("--revocation must be off, ocsp or ocsp-soft, found \(terminalQuoted(other))")
        }
        guard !files.isEmpty else { return .ocsp(mode) }
        var responses: [OCSPResponse] = []
        for file in files {
            let bytes = try readInput(file, limit: 1 << 20)
            do throws(CryptoError) {
                responses.append(try OCSPResponse(derEncoded: bytes))
            } catch {
                throw ToolFailure("--ocsp-response \(terminalQuoted(file)) is not a DER OCSP response: \(error.reason)")
            }
        }
        return .ocsp(mode, checker: OCSPChecker(responses: responses))
    }

    /// The revocation check's details in `--json`: per certificate its subject, hex serial,
    /// `status` (good, revoked, unknown, unavailable), responder URL and source, and `retryable`.
    static func write(_ report: RevocationReport, into writer: inout JSONWriter) {
        writer.beginObject("revocation")
        writer.string("mode", report.mode.description)
        writer.string("time", ReceiptDate.rfc3339(report.time))
        writer.bool("passed", report.passed)
        writer.bool("retryable", report.isRetryable)
        writer.beginArray("certificates")
        for entry in report.certificates {
            writer.beginObject()
            writer.string("subject", entry.subject)
            writer.string("serial", entry.serialNumberHex)
            writer.string("status", entry.status.name)
            if case .unavailable(let reason, let retryable) = entry.status {
                writer.string("reason", reason)
                writer.bool("retryable", retryable)
            }
            if let url = entry.responderURL { writer.string("responder", url) }
            if let source = entry.source { writer.string("source", source.rawValue) }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }
}
