// Every expectation a caller passes is checked or refused, never dropped: each format checks its
// own (``ReceiptExpectations``, ``TransactionReceiptExpectations``, ``JWSExpectations``) and
// refuses, under `notApplicable`, one that does not apply; a caller adds its own checks to a
// verdict with ``Verdict/appending(_:)``.

extension VerificationCheck.Name {
    /// An expectation was given that does not apply to the kind of input verified (an app account
    /// token for a notification, a bundle id for renewal info; in `receipt-tool verify`, an option
    /// such as `--app-version` for a JWS): refused, so the verdict is invalid. The reason names the
    /// expectation.
    public static let notApplicable = VerificationCheck.Name(rawValue: "notApplicable", id: 52)
}

extension Verdict {
    /// This verdict with `checks` appended after its own: a caller's own checks (for example
    /// ``VerificationCheck/Name/notApplicable`` for an option that does not apply to the kind of
    /// input verified). The result is valid only when this verdict is and every appended check
    /// passed; its ``assurance`` and ``nested`` values are then this verdict's.
    public func appending(_ checks: [VerificationCheck]) -> Verdict<Payload> {
        Verdict(appending: checks, to: self)
    }

    private init(appending extra: [VerificationCheck], to verdict: Verdict<Payload>) {
        let valid = verdict.isValid && extra.allSatisfy(\.passed)
        isValid = valid
        checks = verdict.checks + extra
        unchecked = verdict.unchecked
        payload = verdict.payload
        chain = verdict.chain
        validationTime = verdict.validationTime
        requestedTime = verdict.requestedTime
        signature = verdict.signature
        assurance = valid ? verdict.assurance : nil
        nested = valid ? verdict.nested : .none
    }
}
