public import Foundation
import Internals
public import ReceiptCrypto

/// Whether, and how, the certificates of a validated chain are checked for revocation: a value of
/// ``VerificationPolicy/revocation``.
///
/// ``off`` (the default) never opens a socket: verification stays offline. ``ocsp(_:checker:)``
/// asks each certificate's OCSP responder (or the responses an ``OCSPChecker`` was given) about
/// every certificate below the anchor, after the chain and its policies passed, and records the
/// check ``VerificationCheck/Name/revocation``.
///
/// Revocation is judged at the validation time when one is given explicitly
/// (``ValidationTime/fixed(_:)``, ``ValidationTime/clock(_:)``, ``ValidationTime/now``) and at the
/// system clock otherwise (``ValidationTime/signedDate``: a revocation after the signed date
/// matters).
public enum RevocationPolicy: Sendable {
    /// No revocation check (no network, no check recorded).
    case off
    /// OCSP for every certificate below the anchor, through `checker` (the shared checker, with
    /// the shared response cache, by default).
    case ocsp(RevocationFailureMode, checker: OCSPChecker = .shared)

    /// Whether revocation is checked.
    public var isOn: Bool {
        if case .off = self { return false }
        return true
    }
}

/// What a revocation check does when a certificate's status cannot be had (the responder is
/// unreachable, answers late or with an error, its answer cannot be trusted, the certificate names
/// no responder).
public enum RevocationFailureMode: String, Sendable, Hashable, CustomStringConvertible {
    /// The check fails; a failure a retry could cure is marked retryable
    /// (``RevocationReport/isRetryable``), distinct from a revoked certificate.
    case hardFail
    /// The check passes, listing each certificate whose status is unavailable and why. A revoked
    /// or unknown certificate still fails.
    case softFail

    /// `hard-fail` or `soft-fail`.
    public var description: String { self == .hardFail ? "hard-fail" : "soft-fail" }
}

/// The revocation status of one certificate, as a check found it.
public enum RevocationStatus: Sendable, Hashable, CustomStringConvertible {
    /// A fresh, verified answer says the certificate is not revoked.
    case good
    /// A fresh, verified answer says the certificate was revoked (at `date`, for CRL reason code
    /// `reason`, when the responder said).
    case revoked(date: Date?, reason: Int?)
    /// A fresh, verified answer says the responder does not know the certificate.
    case unknown
    /// No trustworthy answer: why, and whether trying again could give one.
    case unavailable(reason: String, retryable: Bool)

    /// `good`, `revoked`, `unknown` or `unavailable` (the name used in JSON).
    public var name: String {
        switch self {
        case .good: "good"
        case .revoked: "revoked"
        case .unknown: "unknown"
        case .unavailable: "unavailable"
        }
    }

    /// The name, with the revocation date or the reason.
    public var description: String {
        switch self {
        case .good, .unknown: name
        case .revoked(let date, let reason):
            "revoked" + (date.map { " at \(VerificationText.rfc3339($0))" } ?? "") + (reason.map { " (reason \($0))" } ?? "")
        case .unavailable(let reason, let retryable): "unavailable: \(reason)" + (retryable ? " (retryable)" : "")
        }
    }
}

/// Where a certificate's status came from.
public enum RevocationSource: String, Sendable, Hashable {
    /// A request to the responder during this verification.
    case network
    /// A response an earlier verification fetched, still fresh (``OCSPResponseCache``).
    case cache
    /// A response given to the checker (``OCSPChecker/init(responses:maximumAgeWithoutNextUpdate:)``, `--ocsp-response`).
    case offlineResponse = "offline"
}

/// The revocation status of one certificate of a chain, and who said so.
public struct CertificateRevocation: Sendable, CustomStringConvertible {
    /// The certificate checked.
    public let certificate: Certificate
    /// The certificate's subject (written when read: a warm verification with cached answers
    /// never formats it).
    public var subject: String { "\(certificate.subject)" }
    /// Its serial number in upper-case hex (read when asked for).
    public var serialNumberHex: String { certificate.serialNumberHex }
    /// The status.
    public let status: RevocationStatus
    /// The responder URL asked (or that answered a cached response), nil when none was.
    public let responderURL: String?
    /// The subject of the certificate that signed the answer.
    public let signer: String?
    /// The answer's `thisUpdate` and `nextUpdate`.
    public let thisUpdate: Date?
    /// The answer's `nextUpdate`, when it has one.
    public let nextUpdate: Date?
    /// Where the answer came from, nil when there was none.
    public let source: RevocationSource?

    /// `subject (serial HEX): status [via URL, signed by …, valid …]`.
    public var description: String {
        var text = "\(subject) (serial \(serialNumberHex)): \(status)"
        var details: [String] = []
        if let responderURL { details.append("responder \(responderURL)") }
        if let source, source != .network { details.append(source == .cache ? "cached" : "offline response") }
        if let signer { details.append("signed by \(signer)") }
        if let thisUpdate {
            details.append(
                "this update \(VerificationText.rfc3339(thisUpdate))"
                    + (nextUpdate.map { ", next update \(VerificationText.rfc3339($0))" } ?? ""))
        }
        if !details.isEmpty { text += " [" + details.joined(separator: "; ") + "]" }
        return text
    }
}

/// What a revocation check asked and found: the reason of the check
/// ``VerificationCheck/Name/revocation`` and its details (``VerificationCheck/revocationReport``).
public struct RevocationReport: Sendable, CustomStringConvertible {
    /// The mode asked for.
    public let mode: RevocationFailureMode
    /// The instant the answers had to be fresh at.
    public let time: Date
    /// One entry per certificate below the anchor, leaf first.
    public let certificates: [CertificateRevocation]
    /// Whether the check passed.
    public let passed: Bool

    /// Whether the check failed only for want of answers that a retry could bring (no certificate
    /// revoked or unknown, every missing answer retryable).
    public var isRetryable: Bool {
        guard !passed else { return false }
        return certificates.allSatisfy { entry in
            switch entry.status {
            case .good: true
            case .unavailable(_, let retryable): retryable
            case .revoked, .unknown: false
            }
        } && certificates.contains { if case .unavailable = $0.status { true } else { false } }
    }

    /// Builds the report and decides the outcome: under hard-fail every certificate must be good;
    /// under soft-fail none may be revoked or unknown.
    init(mode: RevocationFailureMode, time: Date, certificates: [CertificateRevocation]) {
        self.mode = mode
        self.time = time
        self.certificates = certificates
        passed = certificates.allSatisfy { entry in
            switch entry.status {
            case .good: true
            case .unavailable: mode == .softFail
            case .revoked, .unknown: false
            }
        }
    }

    /// `OCSP (hard-fail) at <time>: <certificate>; <certificate>`.
    public var description: String {
        let head = "OCSP (\(mode)) at \(VerificationText.rfc3339(time))"
        guard !certificates.isEmpty else { return head + ": no certificate below the anchor to check" }
        return head + ": " + certificates.map(\.description).joined(separator: "; ") + (isRetryable ? "; retryable" : "")
    }
}

extension VerificationText {
    /// `text` for people: URL passwords masked, then escaped by the one terminal rule.
    static func escaped(_ text: String) -> String {
        TerminalEscaping.escaped(Redaction.redacted(text))
    }
}
