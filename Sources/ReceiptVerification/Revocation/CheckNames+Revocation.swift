import Foundation
import ReceiptCrypto

extension VerificationCheck.Name {
    /// No certificate of the chain is revoked, by OCSP (``VerificationPolicy/revocation``;
    /// details in ``VerificationCheck/revocationReport``); in the store's signed-transaction
    /// matching, the signed transaction carries no `revocationDate` (not refunded or revoked).
    public static let revocation = VerificationCheck.Name(rawValue: "revocation", id: 43)
}

/// The machinery's revocation step: after the chain, the pinned anchor and every chain policy
/// passed, the certificates below the anchor are checked as ``VerificationPolicy/revocation``
/// asks (nothing happens, and no socket is opened, when it is ``RevocationPolicy/off``).
enum RevocationStep {
    /// Records the check ``VerificationCheck/Name/revocation`` when revocation is on. The time is
    /// the validation time when the caller gave one, the system clock for
    /// ``ValidationTime/signedDate``.
    static func run(_ policy: RevocationPolicy, chain: [Certificate], validatedAt time: Date, in run: inout VerificationRun) {
        guard case .ocsp(let mode, let checker) = policy else { return }
        let revocationTime: Date
        if case .signedDate = run.requestedTime { revocationTime = Date() } else { revocationTime = time }
        let report = checker.check(chain: chain, mode: mode, at: revocationTime)
        run.record(revocation: report)
    }
}

extension VerificationRun {
    /// Records a ``VerificationCheck/Name/revocation`` check with its report.
    mutating func record(revocation report: RevocationReport) {
        append(VerificationCheck(revocation: report))
    }
}

extension VerificationPolicy {
    /// This policy with revocation checked as `revocation` (for example
    /// `.appStore.with(revocation: .ocsp(.hardFail))`).
    public func with(revocation: RevocationPolicy) -> VerificationPolicy {
        var copy = self
        copy.revocation = revocation
        return copy
    }
}

extension Verdict {
    /// The report of the ``VerificationCheck/Name/revocation`` check, when certificates were
    /// checked by OCSP.
    public var revocationReport: RevocationReport? { check(.revocation)?.revocationReport }

    /// Whether the verdict is invalid only because revocation could not be checked in a way a
    /// retry could cure (a responder unreachable or answering late under
    /// ``RevocationFailureMode/hardFail``): never for a revoked certificate or any other failure.
    public var isRetryable: Bool {
        guard !isValid else { return false }
        let failed = failures
        return !failed.isEmpty && failed.allSatisfy { $0.revocationReport?.isRetryable == true }
    }
}
