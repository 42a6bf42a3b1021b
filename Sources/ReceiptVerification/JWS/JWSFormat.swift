public import Foundation
import Internals
public import JWS
public import ReceiptCrypto

/// A JWS and the payload decoded from exactly its signed bytes.
public struct SignedJWS<Value: AppStoreSignedPayload>: Sendable {
    /// The token, split and decoded (its `CompactJWS.signingInput` is what the signature covers).
    public let jws: CompactJWS
    /// The payload decoded from the token's payload segment. Trust it only when the verdict it came
    /// with is valid.
    public let value: Value
}

/// What an App Store payload says that a verifier checks: the claims Apple's own verifier reads,
/// and those this package adds. A claim a payload type does not carry is listed in ``carried``
/// as absent, so an expectation about it is reported as unchecked rather than failed.
public struct AppStoreClaims: Sendable {
    /// The claims a payload type can carry.
    public enum Kind: Sendable, Hashable {
        /// `bundleId`.
        case bundleIdentifier
        /// `appAppleId`.
        case appAppleId
        /// `environment` (an app transaction's `receiptType`).
        case environment
        /// `appAccountToken`.
        case appAccountToken
        /// `deviceVerification` and `deviceVerificationNonce`.
        case deviceVerification
    }

    /// The claims this payload type carries (whether or not this payload has a value for them).
    public var carried: Set<Kind>
    /// The bundle identifier.
    public var bundleIdentifier: String?
    /// The app's Apple id.
    public var appAppleId: Int64?
    /// The environment.
    public var environment: Environment?
    /// The app account token (a UUID string).
    public var appAccountToken: String?
    /// `deviceVerification`: base64 of SHA-384(nonce ‖ device verification id).
    public var deviceVerification: String?
    /// `deviceVerificationNonce` (a UUID string).
    public var deviceVerificationNonce: String?
    /// The date the payload says it was signed.
    public var signedDate: JWSDate?

    /// Creates claims.
    public init(
        carried: Set<Kind>, bundleIdentifier: String? = nil, appAppleId: Int64? = nil, environment: Environment? = nil,
        appAccountToken: String? = nil, deviceVerification: String? = nil, deviceVerificationNonce: String? = nil,
        signedDate: JWSDate? = nil
    ) {
        self.carried = carried
        self.bundleIdentifier = bundleIdentifier
        self.appAppleId = appAppleId
        self.environment = environment
        self.appAccountToken = appAccountToken
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.signedDate = signedDate
    }
}

/// A JWS token nested in another payload (a notification's signed transaction, renewal info or app
/// transaction), verified in the same call as the payload that carries it.
public enum NestedToken: Sendable {
    /// `data.signedTransactionInfo`.
    case transaction(NestedJWS<JWSTransaction>)
    /// `data.signedRenewalInfo`.
    case renewalInfo(NestedJWS<JWSRenewalInfo>)
    /// `appData.signedAppTransactionInfo`.
    case appTransaction(NestedJWS<AppTransaction>)
}

/// An App Store JWS payload type the verifier knows how to check.
public protocol AppStoreSignedPayload: JWSPayload {
    /// What the payload is, for messages (`transaction`).
    static var payloadName: String { get }
    /// The kind a verifier of this type requires (`AppStorePayloadKind.mismatch(memberNames:)`
    /// decides whether a payload is of it).
    static var payloadKind: AppStorePayloadKind { get }
    /// What ``ValidationTime/signedDate`` means for this type, for messages (`the signedDate`).
    static var validationDateName: String { get }
    /// The date ``ValidationTime/signedDate`` means for this payload.
    var validationDate: JWSDate? { get }
    /// The claims the expectations are checked against.
    var claims: AppStoreClaims { get }
    /// The tokens nested in this payload, verified with it.
    var nestedTokens: [NestedToken] { get }
    /// The claims every payload of this type carries (``AppStoreClaims/carried``): an expectation
    /// about any other claim does not apply to it and fails ``VerificationCheck/Name/notApplicable``.
    static var carriedClaims: Set<AppStoreClaims.Kind> { get }
    /// Why the payload is not of ``payloadKind``, or nil when it is (``VerificationCheck/Name/kind``).
    /// The default walks `jsonPayload` (`AppStorePayloadKind.mismatch(jsonPayload:)`);
    /// the package's models answer from the member names their decoding read, the same answer
    /// without a second walk.
    var kindMismatch: KindMismatch? { get }
}

extension AppStoreSignedPayload {
    /// The kind's name (``AppStorePayloadKind/displayName``): `transaction`, `renewal info`, …
    public static var payloadName: String { payloadKind.displayName }
    /// Walks the JSON payload's members (`AppStorePayloadKind.mismatch(jsonPayload:)`).
    public var kindMismatch: KindMismatch? { Self.payloadKind.mismatch(jsonPayload: jsonPayload) }
    /// No nested tokens.
    public var nestedTokens: [NestedToken] { [] }
    /// `the signedDate`.
    public static var validationDateName: String { "the signedDate" }
}

extension AppStoreSignedPayload where Self: PurchasePayload {
    /// `signedDate`.
    public var validationDate: JWSDate? { signedDate }

    /// The claims of a transaction or renewal info (``carriedClaims``): the fields they share, and
    /// `bundleIdentifier` (a transaction's `bundleId`; renewal info names none).
    func purchaseClaims(bundleIdentifier: String?) -> AppStoreClaims {
        AppStoreClaims(
            carried: Self.carriedClaims, bundleIdentifier: bundleIdentifier, environment: environment, appAccountToken: appAccountToken,
            deviceVerification: deviceVerification, deviceVerificationNonce: deviceVerificationNonce, signedDate: signedDate)
    }
}

extension JWSTransaction: AppStoreSignedPayload {
    /// ``AppStorePayloadKind/transaction``.
    public static var payloadKind: AppStorePayloadKind { .transaction }
    /// From the member names the decoding read.
    public var kindMismatch: KindMismatch? { Self.payloadKind.mismatch(decoded: self) }
    /// Bundle id, environment, app account token and device verification.
    public var claims: AppStoreClaims { purchaseClaims(bundleIdentifier: bundleId) }
}

extension JWSRenewalInfo: AppStoreSignedPayload {
    /// ``AppStorePayloadKind/renewalInfo``.
    public static var payloadKind: AppStorePayloadKind { .renewalInfo }
    /// From the member names the decoding read.
    public var kindMismatch: KindMismatch? { Self.payloadKind.mismatch(decoded: self) }
    /// Environment, app account token and device verification (renewal info names no bundle id,
    /// so it cannot be tied to an app by itself: verify it with its transaction).
    public var claims: AppStoreClaims { purchaseClaims(bundleIdentifier: nil) }
}

extension AppTransaction: AppStoreSignedPayload {
    /// ``AppStorePayloadKind/appTransaction``.
    public static var payloadKind: AppStorePayloadKind { .appTransaction }
    /// From the member names the decoding read.
    public var kindMismatch: KindMismatch? { Self.payloadKind.mismatch(decoded: self) }
    /// `the receiptCreationDate`.
    public static var validationDateName: String { "the receiptCreationDate" }
    /// `receiptCreationDate`, as Apple's verifier uses.
    public var validationDate: JWSDate? { receiptCreationDate }
    /// Bundle id, app Apple id, `receiptType` as the environment, and device verification.
    public var claims: AppStoreClaims {
        AppStoreClaims(
            carried: Self.carriedClaims, bundleIdentifier: bundleId,
            appAppleId: appAppleId, environment: receiptType, deviceVerification: deviceVerification,
            deviceVerificationNonce: deviceVerificationNonce, signedDate: receiptCreationDate)
    }
}

extension NotificationPayload: AppStoreSignedPayload {
    /// ``AppStorePayloadKind/notification``.
    public static var payloadKind: AppStorePayloadKind { .notification }
    /// From the member names the decoding read.
    public var kindMismatch: KindMismatch? { Self.payloadKind.mismatch(decoded: self) }
    /// `the signedDate (or, for early-2022 notifications that have none, the signed transaction's)`.
    public static var validationDateName: String { "the signedDate" }

    /// `signedDate`; for early-2022 notifications that carry none, the `signedDate` of the signed
    /// transaction they carry (the same signature covers that token's text).
    ///
    /// That fallback reads the nested token's `signedDate` before anything is verified, only to
    /// choose the validation time; the nested token is verified afterwards like any other.
    public var validationDate: JWSDate? {
        if let signedDate { return signedDate }
        guard let token = data?.signedTransactionInfo?.token, let jws = try? CompactJWS(token) else { return nil }
        return (try? JWSTransaction(jsonPayload: jws.unverifiedPayload, limits: .default))?.signedDate
    }

    /// Bundle id, app Apple id and environment, from `data`, `summary`, `externalPurchaseToken`
    /// (sandbox when its id starts with `SANDBOX`, production otherwise) or `appData`.
    public var claims: AppStoreClaims {
        if let data { return claims(of: data) }
        if let summary { return claims(of: summary) }
        if let token = externalPurchaseToken {
            let environment: Environment? = token.externalPurchaseId.map { $0.hasPrefix("SANDBOX") ? .sandbox : .production }
            return claims(bundleIdentifier: token.bundleId, appAppleId: token.appAppleId, environment: environment)
        }
        if let appData { return claims(of: appData) }
        return claims(bundleIdentifier: nil, appAppleId: nil, environment: nil)
    }

    /// The claims of the app and environment `app` names.
    private func claims(of app: some NotificationApp) -> AppStoreClaims {
        claims(bundleIdentifier: app.bundleId, appAppleId: app.appAppleId, environment: app.environment)
    }

    /// ``carriedClaims`` with these values and the notification's `signedDate`.
    private func claims(bundleIdentifier: String?, appAppleId: Int64?, environment: Environment?) -> AppStoreClaims {
        AppStoreClaims(
            carried: Self.carriedClaims, bundleIdentifier: bundleIdentifier, appAppleId: appAppleId, environment: environment,
            signedDate: signedDate)
    }

    /// `data.signedTransactionInfo`, `data.signedRenewalInfo` and `appData.signedAppTransactionInfo`.
    public var nestedTokens: [NestedToken] {
        var tokens: [NestedToken] = []
        if let token = data?.signedTransactionInfo { tokens.append(.transaction(token)) }
        if let token = data?.signedRenewalInfo { tokens.append(.renewalInfo(token)) }
        if let token = appData?.signedAppTransactionInfo { tokens.append(.appTransaction(token)) }
        return tokens
    }
}

/// What an App Store JWS must say, beyond being validly signed. Every property left `nil` is not
/// checked and is listed in ``Verdict/unchecked``. An expectation about a claim the payload type
/// does not carry (a bundle id of renewal info, an app account token of a notification) is
/// refused: the verdict fails ``VerificationCheck/Name/notApplicable`` naming it. One type serves
/// every JWS kind, so ``applicable(to:)`` keeps only what a kind carries.
public struct JWSExpectations: Sendable, Hashable {
    /// The bundle identifier, compared exactly.
    public var bundleIdentifier: String?
    /// The app's Apple id, checked on production payloads only, as Apple does (sandbox and Xcode
    /// payloads carry none or a placeholder).
    public var appAppleId: Int64?
    /// The environments allowed (`Production`, `Sandbox`, `Xcode`, `LocalTesting`), compared
    /// without regard to case.
    public var environments: Set<Environment>?
    /// The most seconds the signed date may lie before the verifier's clock (the present, or the
    /// clock given to the verifier), whatever the validation time: check
    /// ``VerificationCheck/Name/maximumAge``.
    public var maximumAge: TimeInterval?
    /// The most seconds the signed date may lie after the verifier's clock: check
    /// ``VerificationCheck/Name/signedDate``.
    public var maximumFutureSkew: TimeInterval?
    /// The device verification id (a UUID, any case) the payload's `deviceVerification` must be
    /// bound to: base64(SHA-384(lower-cased nonce ‖ lower-cased id)).
    public var deviceVerificationID: String?
    /// The app account token (a UUID, any case) the payload must carry.
    public var appAccountToken: String?

    /// Creates expectations; every argument defaults to "not checked".
    public init(
        bundleIdentifier: String? = nil, appAppleId: Int64? = nil, environments: Set<Environment>? = nil,
        maximumAge: TimeInterval? = nil, maximumFutureSkew: TimeInterval? = nil, deviceVerificationID: String? = nil,
        appAccountToken: String? = nil
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.appAppleId = appAppleId
        self.environments = environments
        self.maximumAge = maximumAge
        self.maximumFutureSkew = maximumFutureSkew
        self.deviceVerificationID = deviceVerificationID
        self.appAccountToken = appAccountToken
    }

    /// Checks nothing about the payload.
    public static let none = JWSExpectations()
}

/// App Store signed data (StoreKit 2 transactions, renewal info, app transactions, App Store
/// Server Notifications V2) as a ``SignedFormat``: a compact JWS whose header `x5c` carries the
/// chain and whose ES256 signature covers exactly `header.payload` as it appears in the token.
///
/// The format's own checks: `alg` is ES256 → `x5c` holds as many certificates as the policy's
/// chain (3 for ``VerificationPolicy/appStore``: leaf, intermediate, root; 1 for
/// ``VerificationPolicy/xcode``) → the leaf parses → its key is P-256 → the 64-byte `r ‖ s`
/// signature verifies over the signing input. The chain is then built from the leaf through the
/// certificates between it and the last one (never the last: the root a token carries is not
/// trusted; the chain must end at a pinned anchor) and the policy applies, as for every format.
/// A notification's nested tokens are verified in the same call, with the same anchors, policy
/// and validation time, and must agree with it.
public struct JWSFormat<Value: AppStoreSignedPayload>: SignedFormat {
    /// The chain policy (``VerificationPolicy/appStore`` or ``VerificationPolicy/xcode``).
    public var policy: VerificationPolicy
    /// Bounds applied while reading tokens.
    public var limits: JWSLimits
    /// An optional memo of parsed headers (Apple's headers repeat for months).
    public var headerCache: JWSHeaderCache?

    /// Creates the format.
    public init(policy: VerificationPolicy = .appStore, limits: JWSLimits = .default, headerCache: JWSHeaderCache? = nil) {
        self.policy = policy
        self.limits = limits
        self.headerCache = headerCache
    }

    /// The number of `x5c` certificates the policy requires: its ``ChainLengthPolicy`` length, or
    /// nil when it sets none (then any non-empty chain is read).
    var requiredCertificateCount: Int? {
        policy.chainPolicies.lazy.compactMap { ($0 as? ChainLengthPolicy)?.length }.first
    }

    /// A compact JWS (whitespace around it allowed) or a notification body `{"signedPayload": …}`,
    /// whose payload decodes as `Value`.
    public func parse(_ bytes: [UInt8]) -> Result<SignedJWS<Value>, FormatParseFailure> {
        let jws: CompactJWS
        if let token = Self.compactToken(bytes),
            let split = try? CompactJWS(token.count == bytes.count ? bytes : Array(token), limits: limits, headerCache: headerCache)
        {
            // What detection would find, split once (through the header cache when there is one:
            // the same result, without decoding a header seen before). Errors take the detection
            // path below, which reports them with their offsets in `bytes`.
            jws = split
        } else {
            let input: SignedDataInput?
            do throws(JWSError) {
                input = try SignedDataInput.detect(bytes, limits: limits)
            } catch {
                return .failure(FormatParseFailure("not a JWS: \(error)"))
            }
            guard let input else { return .failure(FormatParseFailure("not a compact JWS or a notification body")) }
            jws = input.jws
        }
        do throws(JWSError) {
            return .success(SignedJWS(jws: jws, value: try jws.decodePayloadToVerify(as: Value.self)))
        } catch {
            return .failure(FormatParseFailure("the payload is not a \(Value.payloadName): \(error)"))
        }
    }

    /// The input without the ASCII whitespace around it, when that starts with `eyJ`, as
    /// ``SignedDataInput/detect(_:limits:)`` trims a compact token; nil otherwise. (Detection also
    /// wants a `.`; a token without one fails to split here and takes the detection path.)
    static func compactToken(_ bytes: [UInt8]) -> ArraySlice<UInt8>? {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return nil
        }
        let trimmed = bytes[first...last]
        return trimmed.starts(with: [0x65, 0x79, 0x4A]) ? trimmed : nil
    }

    /// `JWS (ES256, 3 certificates) with a 548-byte transaction`.
    public func describe(_ signed: SignedJWS<Value>) -> String {
        let count = signed.jws.header.certificateChain?.count ?? 0
        return
            "JWS (\(signed.jws.header.algorithm), \(count) certificate\(count == 1 ? "" : "s")) with a \(signed.jws.unverifiedPayload.count)-byte \(Value.payloadName)"
    }

    /// ``AppStoreSignedPayload/validationDate``.
    public func signedDate(of signed: SignedJWS<Value>) -> Date? { signed.value.validationDate?.date }

    /// `the signedDate` (an app transaction: `the receiptCreationDate`).
    public var signedDateName: String { Value.validationDateName }

    /// Kind, algorithm, `crit`, certificate count, signer certificate, key and signature.
    public var requiredChecks: [VerificationCheck.Name] {
        [.kind, .algorithm, .crit, .certificateCount, .signerCertificate, .signerKey, .signature]
    }

    /// The payload's kind, the header, the leaf and the ES256 signature.
    public func checkSignature(of signed: SignedJWS<Value>, in run: inout VerificationRun) -> SignedBy? {
        JWSKindCheck.record(Value.payloadKind, of: signed.value, in: &run)
        let header = signed.jws.header
        let algorithm = header.algorithm
        guard algorithm == .es256 else {
            run.record(.algorithm, false, "the header's alg is \"\(algorithm)\"; App Store JWS are ES256")
            return nil
        }
        run.record(.algorithm, true, "ES256")
        guard JWSKindCheck.recordCrit(of: header, in: &run) else { return nil }

        let chain = header.certificateChain ?? []
        let count = chain.count
        let required = requiredCertificateCount
        guard count > 0, required.map({ count == $0 }) ?? true, let leafDER = chain.first else {
            let wanted = required.map { "exactly \($0)" } ?? "at least one"
            run.record(
                .certificateCount, false,
                header.certificateChain == nil
                    ? "the header has no x5c"
                    : "x5c holds \(count) certificate\(count == 1 ? "" : "s"); the \(policy.name) policy needs \(wanted)"
            )
            return nil
        }
        run.record(.certificateCount, true, "\(count) certificate\(count == 1 ? "" : "s") in x5c")

        let leaf: SignerCertificate
        switch run.signerCertificate(leafDER[...]) {
        case .failure(let error):
            run.record(.signerCertificate, false, "x5c[0] does not parse: \(error.reason)")
            return nil
        case .success(let parsed):
            leaf = parsed
        }
        run.record(.signerCertificate, true, "x5c[0]: \(leaf.label)")
        guard let key = leaf.publicKey, key.ecCoordinateByteCount == 32 else {
            let described = leaf.publicKey.map { "\($0.kind)" } ?? "undecodable"
            run.record(.signerKey, false, "the leaf key is \(described); ES256 needs P-256")
            return nil
        }
        run.record(.signerKey, true, "EC P-256")

        let signature = signed.jws.signature
        let verified = key.verify(rawECDSASignature: signature[...], over: signed.jws.signingInput, digest: .sha256)
        let inputCount = signed.jws.signingInput.count
        let signatureCount = signature.count
        run.record(
            .signature, verified,
            verified
                ? "ES256 over the \(inputCount)-byte signing input verified with the leaf's key"
                : signatureCount == 64
                    ? "the ES256 signature does not verify with the leaf's key"
                    : "the signature is \(signatureCount) bytes; ES256 is 64 (r ‖ s)"
        )
        // Candidates: what lies between the leaf and the last certificate (the root the token
        // carries is never used: the chain must end at a pinned anchor).
        let intermediates = count > 2 ? chain[1..<(count - 1)].map { $0[...] } : []
        return SignedBy(signer: leaf, intermediates: intermediates, policy: policy, signature: SignatureSummary(algorithm: .ecdsa(.sha256)))
    }

    /// The claims, freshness, device binding, account token and nested tokens.
    public func check(_ expectations: JWSExpectations, of signed: SignedJWS<Value>, at time: Date?, in run: inout VerificationRun)
        -> [VerificationCheck.Name]
    {
        let claims = signed.value.claims
        var unchecked = JWSClaimChecks.check(expectations, claims, payloadName: Value.payloadName, at: time, in: &run)
        let nested = signed.value.nestedTokens
        if !nested.isEmpty {
            JWSClaimChecks.verifyNested(nested, outer: claims, format: self, expectations: expectations, in: &run)
        }
        unchecked.sort { $0.rawValue < $1.rawValue }
        return unchecked
    }
}

/// The expectation checks every JWS payload type shares.
enum JWSClaimChecks {
    static func check(
        _ expectations: JWSExpectations, _ claims: AppStoreClaims, payloadName: String, at time: Date?, in run: inout VerificationRun
    ) -> [VerificationCheck.Name] {
        var unchecked: [VerificationCheck.Name] = []
        // An expectation about a claim this payload type does not carry is refused, never dropped.
        let refused = ExpectationRefusal.refusals(expectations, carried: claims.carried, payloadName: payloadName)
        for refusal in refused { run.record(.notApplicable, false, written: refusal) }
        // Bundle id.
        if let expected = expectations.bundleIdentifier, claims.carried.contains(.bundleIdentifier) {
            let actual = claims.bundleIdentifier
            run.record(
                .bundleIdentifier, actual == expected,
                actual == expected
                    ? expected
                    : "the \(payloadName) is for \(VerificationText.quoted(actual)), expected \(VerificationText.quoted(expected))")
        } else if expectations.bundleIdentifier == nil {
            unchecked.append(.bundleIdentifier)
        }
        // Environment.
        let environment = claims.environment
        if let allowed = expectations.environments, claims.carried.contains(.environment) {
            let ok = environment.map { value in allowed.contains { $0.rawValue.lowercased() == value.rawValue.lowercased() } } ?? false
            let names = allowed.map(\.rawValue).sorted().joined(separator: ", ")
            run.record(
                .environment, ok,
                ok
                    ? environment?.rawValue ?? ""
                    : environment.map { "the \(payloadName) is for \($0.rawValue), allowed: \(names)" }
                        ?? "the \(payloadName) names no environment, allowed: \(names)")
        } else if expectations.environments == nil {
            unchecked.append(.environment)
        }
        // App Apple id, on production payloads only (as Apple does: sandbox payloads carry none
        // or a placeholder, so there it is listed as unchecked).
        if let expected = expectations.appAppleId, claims.carried.contains(.appAppleId),
            environment?.rawValue.lowercased() == Environment.production.rawValue.lowercased()
        {
            let actual = claims.appAppleId
            run.record(
                .appAppleId, actual == expected,
                actual == expected
                    ? "\(expected)" : "the \(payloadName) is for app \(actual.map(String.init) ?? "(none)"), expected \(expected)")
        } else if expectations.appAppleId == nil || claims.carried.contains(.appAppleId) {
            unchecked.append(.appAppleId)
        }
        // Freshness, against the verifier's clock (never the validation time: at the default, the
        // payload's own signed date, every payload would be 0 s old).
        if expectations.maximumAge != nil || expectations.maximumFutureSkew != nil {
            checkFreshness(expectations, claims, payloadName: payloadName, in: &run)
        } else {
            unchecked.append(.signedDate)
        }
        // Device verification.
        if let id = expectations.deviceVerificationID, claims.carried.contains(.deviceVerification) {
            if let nonce = claims.deviceVerificationNonce, let actual = claims.deviceVerification {
                let expected = deviceVerification(nonce: nonce, id: id)
                run.record(
                    .deviceVerification, expected == actual,
                    expected == actual
                        ? "bound to device \(id.lowercased())" : "deviceVerification does not match the device \(id.lowercased())")
            } else {
                run.record(.deviceVerification, false, "the \(payloadName) has no deviceVerification and nonce")
            }
        } else if expectations.deviceVerificationID == nil {
            unchecked.append(.deviceVerification)
        }
        // App account token.
        if let expected = expectations.appAccountToken, claims.carried.contains(.appAccountToken) {
            let actual = claims.appAccountToken
            let ok = actual?.lowercased() == expected.lowercased()
            run.record(
                .appAccountToken, ok,
                ok
                    ? expected.lowercased()
                    : "the \(payloadName)'s appAccountToken is \(VerificationText.quoted(actual)), expected \(expected.lowercased())")
        } else if expectations.appAccountToken == nil {
            unchecked.append(.appAccountToken)
        }
        return unchecked
    }

    /// base64(SHA-384(lower-cased nonce ‖ lower-cased device verification id)), as Apple documents.
    static func deviceVerification(nonce: String, id: String) -> String? {
        guard let digest = try? Digest.hash(.sha384, Array((nonce.lowercased() + id.lowercased()).utf8)) else { return nil }
        return Base64.encode(digest)
    }
}

/// App Store transaction verification: the machinery configured with ``JWSFormat`` of
/// `JWSTransaction`.
public typealias JWSTransactionVerifier = SignedDataVerifier<JWSFormat<JWSTransaction>>
/// Renewal info verification.
public typealias JWSRenewalInfoVerifier = SignedDataVerifier<JWSFormat<JWSRenewalInfo>>
/// App transaction verification.
public typealias AppTransactionVerifier = SignedDataVerifier<JWSFormat<AppTransaction>>
/// App Store Server Notification V2 verification (nested tokens included).
public typealias NotificationVerifier = SignedDataVerifier<JWSFormat<NotificationPayload>>

extension SignedDataVerifier {
    /// A JWS verifier that trusts exactly `anchors` under `policy`.
    /// `clock` is what ``JWSExpectations/maximumAge`` is measured against (the system clock by
    /// default).
    public init<Value: AppStoreSignedPayload>(
        anchors: TrustAnchors, policy: VerificationPolicy = .appStore, cache: ChainCache? = .shared, limits: JWSLimits = .default,
        headerCache: JWSHeaderCache? = nil, clock: @escaping @Sendable () -> Date = { Date() }
    ) where Format == JWSFormat<Value> {
        self.init(format: JWSFormat(policy: policy, limits: limits, headerCache: headerCache), anchors: anchors, cache: cache, clock: clock)
    }

    /// A JWS verifier that trusts exactly `anchors` (parsed certificates) under `policy`.
    public init<Value: AppStoreSignedPayload>(
        anchors: [Certificate], policy: VerificationPolicy = .appStore, cache: ChainCache? = .shared, limits: JWSLimits = .default,
        headerCache: JWSHeaderCache? = nil, clock: @escaping @Sendable () -> Date = { Date() }
    ) where Format == JWSFormat<Value> {
        self.init(anchors: TrustAnchors(anchors), policy: policy, cache: cache, limits: limits, headerCache: headerCache, clock: clock)
    }

    /// A JWS verifier for the App Store: the bundled Apple roots (Apple Root CA - G3 signs every
    /// JWS) and ``VerificationPolicy/appStore``.
    /// - Throws: ``TrustAnchorError`` when a bundled anchor is missing or altered.
    public static func appStoreJWS<Value: AppStoreSignedPayload>(cache: ChainCache? = .shared, headerCache: JWSHeaderCache? = nil)
        throws(TrustAnchorError) -> SignedDataVerifier<JWSFormat<Value>> where Format == JWSFormat<Value>
    {
        SignedDataVerifier<JWSFormat<Value>>(
            anchors: try TrustAnchors.appleRoots, policy: .appStore, cache: cache, headerCache: headerCache)
    }

    /// Verifies a token with no expectations.
    public func verify<Value: AppStoreSignedPayload>(_ bytes: [UInt8], at time: ValidationTime = .signedDate) -> Verdict<SignedJWS<Value>>
    where Format == JWSFormat<Value> {
        verify(bytes, expecting: .none, at: time)
    }

    /// Verifies a token given as text.
    public func verify<Value: AppStoreSignedPayload>(
        token: String, expecting expectations: JWSExpectations = .none, at time: ValidationTime = .signedDate
    ) -> Verdict<SignedJWS<Value>> where Format == JWSFormat<Value> {
        verify(Array(token.utf8), expecting: expectations, at: time)
    }
}

extension Verdict {
    /// The decoded payload of a JWS verdict (``SignedJWS/value``); trust it only when ``isValid``.
    public func value<Value>() -> Value? where Payload == SignedJWS<Value> { payload?.value }
}
