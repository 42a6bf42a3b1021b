import Foundation
public import JWS

// The JWS expectations: one that does not apply to the kind of token verified fails
// `notApplicable`, naming it; the age of a signed date is measured against the verifier's clock,
// whatever the validation time.

/// The refusals of expectations that do not apply.
enum ExpectationRefusal {
    /// One reason per expectation of `expectations` about a claim not in `carried`, naming the
    /// expectation and the payload (`appAccountToken does not apply to a notification: it carries
    /// no appAccountToken`).
    static func refusals(_ expectations: JWSExpectations, carried: Set<AppStoreClaims.Kind>, payloadName: String) -> [String] {
        var refused: [String] = []
        func refuse(_ expectation: String, _ claim: AppStoreClaims.Kind, _ member: String) {
            guard !carried.contains(claim) else { return }
            refused.append("\(expectation) does not apply to \(article(payloadName)) \(payloadName): it carries no \(member)")
        }
        if expectations.bundleIdentifier != nil { refuse("bundleIdentifier", .bundleIdentifier, "bundleId") }
        if expectations.appAppleId != nil { refuse("appAppleId", .appAppleId, "appAppleId") }
        if expectations.environments != nil { refuse("environments", .environment, "environment") }
        if expectations.deviceVerificationID != nil { refuse("deviceVerificationID", .deviceVerification, "deviceVerification") }
        if expectations.appAccountToken != nil { refuse("appAccountToken", .appAccountToken, "appAccountToken") }
        return refused
    }

    /// `an` before a vowel, `a` otherwise.
    static func article(_ noun: String) -> String {
        guard let first = noun.first else { return "a" }
        return "aeiou".contains(first) ? "an" : "a"
    }
}

extension JWSClaimChecks {
    /// ``JWSExpectations/maximumAge`` (check ``VerificationCheck/Name/maximumAge``) and
    /// ``JWSExpectations/maximumFutureSkew`` (check ``VerificationCheck/Name/signedDate``), both
    /// against the verifier's clock.
    static func checkFreshness(
        _ expectations: JWSExpectations, _ claims: AppStoreClaims, payloadName: String, in run: inout VerificationRun
    ) {
        let now = run.clockTime()
        let signed = claims.signedDate?.date
        let readable = now.timeIntervalSince1970.isFinite && VerificationText.isRepresentable(now)
        let nowText = readable ? VerificationText.rfc3339(now) : "\(now.timeIntervalSince1970) s"
        func record(_ name: VerificationCheck.Name, _ limit: TimeInterval, tooFar: (TimeInterval) -> Bool, _ direction: String) {
            guard limit >= 0 else {
                run.record(name, false, written: "the limit \(limit) is not a number of seconds (0 or more)")
                return
            }
            guard readable else {
                run.record(name, false, written: "the verifier's clock reads \(nowText), not a date between the years 1 and 9999")
                return
            }
            guard let signed else {
                run.record(name, false, written: "the \(payloadName) has no signedDate to compare with the verifier's clock")
                return
            }
            let age = now.timeIntervalSince(signed)
            let signedText = VerificationText.rfc3339(signed)
            if tooFar(age) {
                run.record(
                    name, false,
                    written:
                        "signed \(signedText), \(Self.seconds(age.magnitude)) s \(direction) the verifier's clock \(nowText), more than \(Self.seconds(limit)) s"
                )
            } else {
                run.record(name, true, written: "signed \(signedText), within \(Self.seconds(limit)) s of the verifier's clock \(nowText)")
            }
        }
        if let maximum = expectations.maximumAge {
            record(.maximumAge, maximum, tooFar: { $0 > maximum }, "before")
        }
        if let skew = expectations.maximumFutureSkew {
            record(.signedDate, skew, tooFar: { -$0 > skew }, "after")
        }
    }
}

extension JWSClaimChecks {
    /// Whole seconds as text, without trapping on values `Int` cannot hold.
    static func seconds(_ value: TimeInterval) -> String {
        guard value.isFinite, value.magnitude < 1e15 else { return "\(value)" }
        return "\(Int(value))"
    }
}

extension JWSExpectations {
    /// These expectations without those about claims `Value` does not carry: what to pass when one
    /// set of an app's expectations (bundle id, app Apple id, environment) is applied to every kind
    /// of token a response carries. Passed as they are, the others fail
    /// ``VerificationCheck/Name/notApplicable``.
    public func applicable<Value: AppStoreSignedPayload>(to type: Value.Type) -> JWSExpectations {
        let carried = Value.carriedClaims
        var kept = self
        if !carried.contains(.bundleIdentifier) { kept.bundleIdentifier = nil }
        if !carried.contains(.appAppleId) { kept.appAppleId = nil }
        if !carried.contains(.environment) { kept.environments = nil }
        if !carried.contains(.deviceVerification) { kept.deviceVerificationID = nil }
        if !carried.contains(.appAccountToken) { kept.appAccountToken = nil }
        return kept
    }
}

extension JWSTransaction {
    /// Bundle id, environment, app account token and device verification.
    public static var carriedClaims: Set<AppStoreClaims.Kind> { [.bundleIdentifier, .environment, .appAccountToken, .deviceVerification] }
}

extension JWSRenewalInfo {
    /// Environment, app account token and device verification (no bundle id).
    public static var carriedClaims: Set<AppStoreClaims.Kind> { [.environment, .appAccountToken, .deviceVerification] }
}

extension AppTransaction {
    /// Bundle id, app Apple id, environment (`receiptType`) and device verification.
    public static var carriedClaims: Set<AppStoreClaims.Kind> { [.bundleIdentifier, .appAppleId, .environment, .deviceVerification] }
}

extension NotificationPayload {
    /// Bundle id, app Apple id and environment.
    public static var carriedClaims: Set<AppStoreClaims.Kind> { [.bundleIdentifier, .appAppleId, .environment] }
}
