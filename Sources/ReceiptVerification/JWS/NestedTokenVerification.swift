public import JWS

/// The tokens a payload carries (a notification's signed transaction, renewal info and app
/// transaction), as they were verified in the same call as the payload: typed, with the tokens
/// they were decoded from. A verdict holds them only when it is valid
/// (``Verdict/nested``), so nothing needs to decode a nested token again.
///
/// The tokens are kept in one reference-counted box, absent when there are none: every verdict
/// carries this value (an app receipt's too), and three typed tokens inline made each verdict and
/// each verification run a large value to copy (about 700 instructions of `memcpy` per receipt
/// verification).
public struct VerifiedNestedTokens: Sendable {
    final class Storage: Sendable {
        let transaction: SignedJWS<JWSTransaction>?
        let renewalInfo: SignedJWS<JWSRenewalInfo>?
        let appTransaction: SignedJWS<AppTransaction>?

        init(transaction: SignedJWS<JWSTransaction>?, renewalInfo: SignedJWS<JWSRenewalInfo>?, appTransaction: SignedJWS<AppTransaction>?) {
            self.transaction = transaction
            self.renewalInfo = renewalInfo
            self.appTransaction = appTransaction
        }
    }

    /// Nil when no nested token was kept.
    let storage: Storage?

    /// The tokens kept (none when all three are nil).
    init(transaction: SignedJWS<JWSTransaction>?, renewalInfo: SignedJWS<JWSRenewalInfo>?, appTransaction: SignedJWS<AppTransaction>?) {
        storage =
            transaction == nil && renewalInfo == nil && appTransaction == nil
            ? nil : Storage(transaction: transaction, renewalInfo: renewalInfo, appTransaction: appTransaction)
    }

    private init() { storage = nil }

    /// `data.signedTransactionInfo`, verified.
    public var transaction: SignedJWS<JWSTransaction>? { storage?.transaction }
    /// `data.signedRenewalInfo`, verified.
    public var renewalInfo: SignedJWS<JWSRenewalInfo>? { storage?.renewalInfo }
    /// `appData.signedAppTransactionInfo`, verified.
    public var appTransaction: SignedJWS<AppTransaction>? { storage?.appTransaction }

    /// No nested tokens.
    public static let none = VerifiedNestedTokens()

    /// Whether no nested token was kept.
    public var isEmpty: Bool { storage == nil }
}

/// The kind and `crit` checks of every JWS verification.
enum JWSKindCheck {
    /// Records ``VerificationCheck/Name/kind``: the payload's top-level members fit `kind`.
    static func record(_ kind: AppStorePayloadKind, of payload: some AppStoreSignedPayload, in run: inout VerificationRun) {
        if let mismatch = payload.kindMismatch {
            run.record(.kind, false, written: mismatch.description)
        } else {
            run.record(.kind, true, written: kind.displayName)
        }
    }

    /// Records ``VerificationCheck/Name/crit``: the header names no critical extension (this
    /// verifier implements none). Returns whether it passed.
    static func recordCrit(of header: JWSHeader, in run: inout VerificationRun) -> Bool {
        guard let entries = header.criticalParameters else {
            return run.record(.crit, true, written: "the header has no crit")
        }
        // Quoted with control characters escaped (the text comes from the input).
        let named = entries.map { String(reflecting: $0) }.joined(separator: ", ")
        return run.record(
            .crit, false, written: "the header's crit names \(named.isEmpty ? "nothing" : named); this verifier implements no JWS extension"
        )
    }
}

extension JWSClaimChecks {
    /// Verifies each nested token with the same machinery, policy, limits and requested time as
    /// its own kind (a renewal info or a notification where a transaction belongs fails, naming
    /// the kind found), records one check per token, keeps the verified values in `run`, then
    /// records their agreement with the outer payload. A nested transaction or app transaction
    /// must carry a bundle id (and agree with the notification's).
    static func verifyNested<Outer: AppStoreSignedPayload>(
        _ tokens: [NestedToken], outer: AppStoreClaims, format: JWSFormat<Outer>, expectations: JWSExpectations,
        in run: inout VerificationRun
    ) {
        var problems: [String] = []
        func agree(_ name: String, _ inner: AppStoreClaims) {
            if inner.carried.contains(.bundleIdentifier), let a = inner.bundleIdentifier, let b = outer.bundleIdentifier, a != b {
                problems.append("the \(name) is for \(a), the notification for \(b)")
            }
            if let a = inner.environment, let b = outer.environment, a.rawValue.lowercased() != b.rawValue.lowercased() {
                problems.append("the \(name) is in \(a.rawValue), the notification in \(b.rawValue)")
            }
        }
        var transaction: SignedJWS<JWSTransaction>?
        var renewalInfo: SignedJWS<JWSRenewalInfo>?
        var appTransaction: SignedJWS<AppTransaction>?
        for token in tokens {
            switch token {
            case .transaction(let nested):
                let verdict = nestedVerdict(nested, format: format, in: &run)
                if record(.signedTransactionInfo, verdict, in: &run), let signed = verdict.payload {
                    transaction = signed
                    agree("signed transaction", signed.value.claims)
                }
            case .renewalInfo(let nested):
                let verdict = nestedVerdict(nested, format: format, in: &run)
                if record(.signedRenewalInfo, verdict, in: &run), let signed = verdict.payload {
                    renewalInfo = signed
                    agree("signed renewal info", signed.value.claims)
                }
            case .appTransaction(let nested):
                let verdict = nestedVerdict(nested, format: format, in: &run)
                if record(.signedAppTransactionInfo, verdict, in: &run), let signed = verdict.payload {
                    appTransaction = signed
                    agree("signed app transaction", signed.value.claims)
                }
            }
        }
        if let transaction = transaction?.value, let renewal = renewalInfo?.value,
            let a = renewal.originalTransactionId, let b = transaction.originalTransactionId, a != b
        {
            problems.append("the renewal info is for original transaction \(a), the transaction for \(b)")
        }
        run.verifiedNested = VerifiedNestedTokens(transaction: transaction, renewalInfo: renewalInfo, appTransaction: appTransaction)
        let count = tokens.count
        let found = problems
        run.record(
            .nestedAgreement, found.isEmpty,
            found.isEmpty
                ? count == 1 ? "the nested token agrees with the notification" : "\(count) nested tokens agree with the notification"
                : found.joined(separator: "; "))
    }

    /// The nested token verified as `Inner` (its bundle id is compared with the notification's
    /// in ``VerificationCheck/Name/nestedAgreement``; ``record(_:_:in:)`` requires one).
    static func nestedVerdict<Inner: AppStoreSignedPayload, Outer: AppStoreSignedPayload>(
        _ nested: NestedJWS<Inner>, format: JWSFormat<Outer>, in run: inout VerificationRun
    ) -> Verdict<SignedJWS<Inner>> {
        let verifier = SignedDataVerifier(
            format: JWSFormat<Inner>(policy: format.policy, limits: format.limits, headerCache: format.headerCache),
            machinery: run.machinery)
        return verifier.verify(Array(nested.token.utf8), expecting: .none, at: run.requestedTime)
    }

    /// Records the nested check from the nested verdict (its first failure, named, as the reason:
    /// `kind: the payload is a renewal info, not a transaction…`). Returns whether it passed.
    @discardableResult
    static func record<Inner: AppStoreSignedPayload>(
        _ name: VerificationCheck.Name, _ verdict: Verdict<SignedJWS<Inner>>, in run: inout VerificationRun
    ) -> Bool {
        guard verdict.isValid else {
            let failure = verdict.firstFailure
            return run.record(name, false, failure.map { "\($0.name): \($0.reason)" } ?? "a required check did not run")
        }
        let claims = verdict.payload?.value.claims
        if let claims, claims.carried.contains(.bundleIdentifier), claims.bundleIdentifier == nil {
            return run.record(
                name, false, written: "\(VerificationCheck.Name.bundleIdentifier): the nested \(Inner.payloadName) has no bundleId")
        }
        let time = verdict.validationTime.map { " at \(VerificationText.rfc3339($0))" } ?? ""
        return run.record(name, true, "verified (\(Inner.payloadKind.withArticle), \(verdict.checks.count) checks\(time))")
    }
}
