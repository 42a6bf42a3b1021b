public import Foundation
import Internals
public import ReceiptCrypto
import Receipts

/// A signed format the verification machinery can check: how to parse it, how its signature is
/// made, what its signed date is, which chain policy applies and what its payload can be expected
/// to say. App receipts (``AppReceiptFormat``) and iOS 6 transaction receipts
/// (``TransactionReceiptFormat``) are two such formats; a new format is one more conformance,
/// never new verdict code.
///
/// The machinery (``SignedDataVerifier``) runs every format through the same steps and records each
/// as a ``VerificationCheck``:
///
/// 1. ``VerificationCheck/Name/parse`` — ``parse(_:)``;
/// 2. ``VerificationCheck/Name/trustAnchors`` — at least one anchor;
/// 3. the format's own checks, ending with ``VerificationCheck/Name/signature`` —
///    ``checkSignature(of:in:)``, which returns the signer certificate, the certificates that may
///    complete its chain and the policy the chain must meet;
/// 4. ``VerificationCheck/Name/validationTime`` — from the requested ``ValidationTime`` and
///    ``signedDate(of:)``;
/// 5. ``VerificationCheck/Name/chain`` — OpenSSL validates the chain against the anchors only, at
///    that time (through the ``ChainCache``);
/// 6. ``VerificationCheck/Name/pinnedAnchor`` — the chain ends at an anchor, byte for byte;
/// 7. the policy's ``ChainPolicy`` checks, in order, stopping at the first failure;
/// 8. the expectations — ``check(_:of:at:in:)``.
///
/// Conformances must be pure: no clock, no I/O, nothing trusted that the input carries.
public protocol SignedFormat: Sendable {
    /// The parsed form of one input. It must keep the exact bytes that were signed.
    associatedtype Payload: Sendable
    /// What the payload must say beyond being validly signed.
    associatedtype Expectations: Sendable

    /// Parses untrusted bytes, or says why they are not this format.
    func parse(_ bytes: [UInt8]) -> Result<Payload, FormatParseFailure>

    /// The reason of a passed ``VerificationCheck/Name/parse`` check, for example
    /// `DER PKCS#7 with a 4251-byte payload`.
    func describe(_ payload: Payload) -> String

    /// The format's own checks, in order, recorded in `run` and ending with
    /// ``VerificationCheck/Name/signature`` when they get that far. Returns what the chain step
    /// needs, or nil when no signer certificate could be found.
    func checkSignature(of payload: Payload, in run: inout VerificationRun) -> SignedBy?

    /// The names of the format's own checks that must have run and passed for a valid verdict
    /// (``VerificationCheck/Name/signature`` among them). Read once, when a verifier of the
    /// format is made.
    var requiredChecks: [VerificationCheck.Name] { get }

    /// The date ``ValidationTime/signedDate`` means for this payload, if it has one.
    func signedDate(of payload: Payload) -> Date?

    /// What ``signedDate(of:)`` is called in this format, for check reasons (for example
    /// `the receipt creation date`).
    var signedDateName: String { get }

    /// Checks `expectations` against the payload at the validation time (nil when it could not be
    /// determined), recording one check per requested expectation; returns the names of the
    /// expectations that were not requested.
    func check(_ expectations: Expectations, of payload: Payload, at time: Date?, in run: inout VerificationRun)
        -> [VerificationCheck.Name]
}

/// Why bytes are not a format's payload: the reason of the failed ``VerificationCheck/Name/parse``
/// check.
public struct FormatParseFailure: Error, Sendable, CustomStringConvertible {
    /// A sentence for people, with the byte offset where the input went wrong when known.
    public let reason: String

    /// Wraps a reason.
    public init(_ reason: String) { self.reason = reason }

    /// The reason.
    public var description: String { reason }
}

/// What a format's signature step hands the chain step.
///
/// Its fields are kept in one reference-counted box, so passing it along costs one retain.
public struct SignedBy: Sendable {
    final class Storage: Sendable {
        let signer: SignerCertificate
        /// The candidates, except the one at `excluded` when it is set (a PKCS#7 envelope's
        /// certificates: the signer's own is not a candidate), so that an envelope's list is
        /// shared rather than copied without the signer on every verification.
        let candidates: [ArraySlice<UInt8>]
        let excluded: Int?
        let policy: VerificationPolicy
        let signature: SignatureSummary

        init(
            signer: SignerCertificate, candidates: [ArraySlice<UInt8>], excluded: Int?, policy: VerificationPolicy,
            signature: SignatureSummary
        ) {
            self.signer = signer
            self.candidates = candidates
            self.excluded = excluded
            self.policy = policy
            self.signature = signature
        }
    }

    let storage: Storage

    /// The signer certificate (parsed once and cached by ``VerificationRun/signerCertificate(_:)``).
    public var signer: SignerCertificate { storage.signer }
    /// The certificates that may complete the chain between the signer and an anchor, untrusted
    /// (the other certificates a PKCS#7 envelope embeds, a JWS `x5c`'s intermediate, or a pinned
    /// intermediate the input does not carry). Never trusted by themselves: only anchors are.
    public var intermediates: [ArraySlice<UInt8>] {
        guard let excluded = storage.excluded, storage.candidates.indices.contains(excluded) else { return storage.candidates }
        var others = storage.candidates
        others.remove(at: excluded)
        return others
    }
    /// The policy the validated chain must meet.
    public var policy: VerificationPolicy { storage.policy }
    /// How the signature was made.
    public var signature: SignatureSummary { storage.signature }

    /// Creates the hand-over.
    public init(signer: SignerCertificate, intermediates: [ArraySlice<UInt8>], policy: VerificationPolicy, signature: SignatureSummary) {
        storage = Storage(signer: signer, candidates: intermediates, excluded: nil, policy: policy, signature: signature)
    }

    /// The hand-over of a signer found at `signerIndex` among `certificates`: the others are the
    /// intermediates.
    init(
        signer: SignerCertificate, certificates: [ArraySlice<UInt8>], signerIndex: Int, policy: VerificationPolicy,
        signature: SignatureSummary
    ) {
        storage = Storage(signer: signer, candidates: certificates, excluded: signerIndex, policy: policy, signature: signature)
    }

    /// Whether one of ``intermediates`` is, byte for byte, `certificate` (without making the list).
    func hasIntermediate(_ certificate: ArraySlice<UInt8>) -> Bool {
        let excluded = storage.excluded
        return storage.candidates.withUnsafeBufferPointer { candidates in
            for index in candidates.indices where index != excluded && bytesEqual(candidates[index], certificate) { return true }
            return false
        }
    }
}

/// A signer certificate parsed by OpenSSL, with its key, as kept by the ``ChainCache``.
///
/// Its fields are kept in one reference-counted box, so a copy (out of the cache) costs one retain.
public struct SignerCertificate: Sendable {
    final class Storage: Sendable {
        let certificate: Certificate
        let publicKey: PublicKey?
        let label: RenderedOnce<String>
        /// The key's kind and size, asked of OpenSSL once (the cache keeps this object, and every
        /// verification checks them).
        let keyKind: PublicKey.Kind?
        let keyBits: Int

        init(certificate: Certificate, publicKey: PublicKey?) {
            self.certificate = certificate
            self.publicKey = publicKey
            label = RenderedOnce { "\(certificate.subject), serial \(certificate.serialNumberHex)" }
            keyKind = publicKey?.kind
            keyBits = publicKey?.bits ?? 0
        }
    }

    let storage: Storage

    init(certificate: Certificate, publicKey: PublicKey?) {
        storage = Storage(certificate: certificate, publicKey: publicKey)
    }

    /// The certificate.
    public var certificate: Certificate { storage.certificate }
    /// Its public key, nil when OpenSSL cannot decode it.
    public var publicKey: PublicKey? { storage.publicKey }
    /// Subject and serial number, for messages (rendered the first time it is read).
    public var label: String { storage.label.value }
    /// The kind of ``publicKey``, read once.
    var keyKind: PublicKey.Kind? { storage.keyKind }
    /// The size of ``publicKey`` in bits, read once (0 without a key).
    var keyBits: Int { storage.keyBits }
    /// The exact DER bytes the certificate was parsed from.
    public var derEncoded: [UInt8] { certificate.derEncoded }
}

/// The checks of one verification as they are recorded, and the machinery's services to a
/// ``SignedFormat``: parsing (and caching) signer certificates.
public struct VerificationRun: Sendable {
    /// The checks recorded so far, in order.
    public private(set) var checks: [VerificationCheck] = []
    /// The validation time the caller asked for (nested verifications use it too).
    public let requestedTime: ValidationTime
    let machinery: ChainMachinery
    /// The nested tokens a format verified in this run, handed to the verdict.
    var verifiedNested = VerifiedNestedTokens.none
    /// The signer looked up or parsed last, with the chains the cache holds for it.
    var signerEntry: (key: ChainCache.Key?, chains: [ChainCache.ValidatedChain])?

    init(machinery: ChainMachinery, requestedTime: ValidationTime) {
        self.machinery = machinery
        self.requestedTime = requestedTime
        checks.reserveCapacity(24)
    }

    /// Records a check; the reason is written only if someone reads it. Returns `passed`.
    @discardableResult
    public mutating func record(
        _ name: VerificationCheck.Name, _ passed: Bool, _ reason: @autoclosure @escaping @Sendable () -> String
    ) -> Bool {
        checks.append(VerificationCheck(name: name, passed: passed, reason: reason))
        return passed
    }

    /// Records a check whose reason is already written (kept as it is, no closure). Returns `passed`.
    @discardableResult
    public mutating func record(_ name: VerificationCheck.Name, _ passed: Bool, written reason: String) -> Bool {
        checks.append(VerificationCheck(name: name, passed: passed, reason: reason))
        return passed
    }

    /// Records a check made elsewhere (the revocation step's, which carries its report).
    mutating func append(_ check: VerificationCheck) { checks.append(check) }

    /// Records a check with one of the machinery's common reasons (written when read, nothing
    /// allocated now). Returns `passed`.
    @discardableResult
    mutating func record(_ name: VerificationCheck.Name, _ passed: Bool, template reason: CheckReason) -> Bool {
        checks.append(VerificationCheck(name: name, passed: passed, template: reason))
        return passed
    }

    /// The verifier's clock, read now: the present time expectations such as
    /// ``JWSExpectations/maximumAge`` are measured against (never the validation time, which may
    /// be the input's own signed date).
    public func clockTime() -> Date { machinery.clock() }

    /// The signer certificate with these exact DER bytes: from the ``ChainCache`` when it holds it
    /// (with the chains validated for it), else parsed by OpenSSL.
    public mutating func signerCertificate(_ der: ArraySlice<UInt8>) -> Result<SignerCertificate, CryptoError> {
        let key = machinery.cache.map { _ in ChainCache.Key(signer: der, anchors: machinery.anchors.identity) }
        if let key, let cached = machinery.cache?.lookup(key) {
            signerEntry = (key, cached.chains)
            return .success(cached.signer)
        }
        do throws(CryptoError) {
            let certificate = try Certificate(deferringOpenSSL: Array(der))
            signerEntry = (key, [])
            return .success(SignerCertificate(certificate: certificate, publicKey: try? certificate.publicKey))
        } catch {
            return .failure(error)
        }
    }
}

/// The reason of a chain check: written (a failure), or the validated chain's summary, rendered
/// when read.
enum ChainReason: Sendable {
    case written(String)
    case summary(RenderedOnce<String>, cached: Bool)
}

/// The part of a verifier every format shares: the anchors, the trust store OpenSSL validates
/// against, and the chain cache. A class, so that each verification's ``VerificationRun`` holds it
/// with one reference instead of copying (and retaining) each of its fields.
final class ChainMachinery: Sendable {
    let anchors: TrustAnchors
    let cache: ChainCache?
    let trustStore: TrustStore
    /// The anchors' subjects, for the reason of a passed ``VerificationCheck/Name/pinnedAnchor``
    /// check (rendered the first time one is read).
    let anchorSubjects: RenderedOnce<[String]>
    /// The reason of the ``VerificationCheck/Name/trustAnchors`` check, written once.
    let trustAnchorsReason: String
    /// The indices of the anchors that are Apple's public roots (by their pinned SHA-256).
    let appleAnchorIndices: Set<Int>
    /// The verifier's clock: what ages (``JWSExpectations/maximumAge``) are measured against,
    /// whatever the validation time.
    let clock: @Sendable () -> Date

    init(anchors: TrustAnchors, cache: ChainCache?, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.anchors = anchors
        self.cache = cache
        self.clock = clock
        trustStore = TrustStore(anchors: anchors.certificates)
        anchorSubjects = RenderedOnce { [certificates = anchors.certificates] in certificates.map { "\($0.subject)" } }
        let anchorCount = anchors.certificates.count
        trustAnchorsReason =
            anchorCount == 0
            ? "no trust anchors are configured, so nothing can be trusted" : "\(anchorCount) anchor\(anchorCount == 1 ? "" : "s")"
        let appleRoots = Set([BundledAnchor.appleIncRoot, .appleRootCAG2, .appleRootCAG3].map(\.sha256Fingerprint))
        appleAnchorIndices = Set(anchors.fingerprints.indices.filter { appleRoots.contains(Hex.encode(anchors.fingerprints[$0])) })
    }

    /// The chain from the cache when a cached chain applies (time inside its window, its
    /// intermediates among the candidates), else validated by OpenSSL with the candidates as
    /// untrusted intermediates (and cached when valid).
    func validateChain(_ signed: SignedBy, cached: (key: ChainCache.Key?, chains: [ChainCache.ValidatedChain])?, at time: Date) -> (
        chain: [Certificate]?, reason: ChainReason
    ) {
        if let hit = cached?.chains.first(where: { $0.applies(at: time, to: signed) }) {
            cache?.recordChainHit()
            return (hit.chain, .summary(hit.summary, cached: true))
        }
        cache?.recordValidation()
        var others: [Certificate] = []
        for (index, der) in signed.intermediates.enumerated() {
            // A copy of an anchor (receipts embed their root) could only stand for the anchor it
            // already is in the trust store: it is not parsed again.
            if anchors.certificates.contains(where: { bytesEqual($0.derEncoded[...], der) }) { continue }
            do throws(CryptoError) {
                others.append(try Certificate(deferringOpenSSL: Array(der)))
            } catch {
                return (nil, .written("intermediate candidate #\(index) cannot be parsed: \(error.reason)"))
            }
        }
        switch trustStore.validate(leaf: signed.signer.certificate, intermediates: others, at: time) {
        case .invalid(let failure):
            return (nil, .written(Self.describe(failure, at: time)))
        case .valid(let chain):
            // Second line behind OpenSSL, and the window the result may be reused in.
            guard let notBefore = chain.map(\.notBefore).max(), let notAfter = chain.map(\.notAfter).min(),
                time >= notBefore, time < notAfter, !chain.isEmpty
            else {
                return (nil, .written("OpenSSL accepted a chain that is not valid at \(Self.rfc3339(time)) by its validity dates"))
            }
            let summary = RenderedOnce { Self.describe(chain) }
            if let key = cached?.key {
                let intermediates = chain.dropFirst().dropLast().map(\.derEncoded)
                cache?.store(
                    key, signer: signed.signer,
                    chain: ChainCache.ValidatedChain(
                        chain: chain, intermediates: Array(intermediates), notBefore: notBefore, notAfter: notAfter, summary: summary))
            }
            return (chain, .summary(summary, cached: false))
        }
    }

    /// The configured anchor the chain ends at, byte for byte, if any.
    func anchorIndex(of last: Certificate) -> Int? {
        anchors.certificates.firstIndex { bytesEqual($0.derEncoded[...], last.derEncoded[...]) }
    }

    static func describe(_ chain: [Certificate]) -> String {
        "valid: " + chain.map { $0.subject.commonName ?? $0.subject.description }.joined(separator: " → ")
    }

    static func describe(_ failure: ChainValidationFailure, at time: Date) -> String {
        var text = "\(failure.message)"
        if let certificate = failure.certificate {
            text += ": \(certificate.subject)"
            switch failure.reason {
            case .expired:
                text += " expired at \(rfc3339(certificate.notAfter))"
            case .notYetValid:
                text += " is valid only from \(rfc3339(certificate.notBefore))"
            default:
                break
            }
            if let depth = failure.depth { text += " (depth \(depth))" }
        }
        return text + "; validation time \(rfc3339(time)) [\(failure.reason)]"
    }

    static func rfc3339(_ date: Date) -> String { VerificationText.rfc3339(date) }
}

/// The verification machinery: one implementation of signature, time, chain, anchor, policy and
/// expectation checks for every ``SignedFormat``.
///
/// The result is always a ``Verdict`` listing every check that ran, with a reason; nothing throws
/// and no input crashes. Verification fails closed: the verdict is valid only when every check the
/// format and its policy require ran and passed.
///
/// Speed: parsed signer certificates and validated chains are kept in a ``ChainCache`` (shared by
/// default), so verifying the next input signed by the same certificates costs its parse, the
/// format's signature check and a cache lookup. The signature is checked on every call.
///
/// `Sendable`: a verifier may be used from any number of threads at once.
public struct SignedDataVerifier<Format: SignedFormat>: Sendable {
    /// The format and its configuration (policy, parser limits).
    public let format: Format
    let machinery: ChainMachinery
    /// The checks every verdict requires apart from the policy's: parse, trust anchors, the
    /// format's own checks, validation time, chain and pinned anchor (listed once, not per input).
    let requiredChecks: [VerificationCheck.Name]

    /// The anchors: the only certificates trusted.
    public var anchors: TrustAnchors { machinery.anchors }
    /// The cache of parsed certificates and validated chains, or nil for none.
    public var cache: ChainCache? { machinery.cache }

    /// Creates a verifier of `format` that trusts exactly `anchors`.
    /// - Parameters:
    ///   - format: the format with its configuration.
    ///   - anchors: the trust anchors (see ``TrustAnchors`` and ``BundledAnchors``). An empty set
    ///     makes every input fail the check ``VerificationCheck/Name/trustAnchors``.
    ///   - cache: where parsed certificates and validated chains are kept; ``ChainCache/shared``
    ///     by default, nil to validate every time.
    ///   - clock: the verifier's clock, read when an expectation needs the present time (the age
    ///     of a signed date, ``JWSExpectations/maximumAge``), whatever the validation time; the
    ///     system clock by default.
    public init(format: Format, anchors: TrustAnchors, cache: ChainCache? = .shared, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.init(format: format, machinery: ChainMachinery(anchors: anchors, cache: cache, clock: clock))
    }

    /// A verifier of `format` sharing another verifier's anchors, trust store and cache.
    init(format: Format, machinery: ChainMachinery) {
        self.format = format
        self.machinery = machinery
        var required: [VerificationCheck.Name] = [.parse, .trustAnchors]
        required += format.requiredChecks
        required += [.validationTime, .chain, .pinnedAnchor]
        requiredChecks = required
    }

    /// Parses and verifies untrusted bytes.
    /// - Parameters:
    ///   - bytes: the input. Anything unreadable fails the check ``VerificationCheck/Name/parse``.
    ///   - expectations: what the payload must say.
    ///   - time: when the chain must be valid; the format's own signed date by default.
    public func verify(_ bytes: [UInt8], expecting expectations: Format.Expectations, at time: ValidationTime = .signedDate)
        -> Verdict<Format.Payload>
    {
        switch format.parse(bytes) {
        case .success(let payload): verify(parsed: payload, expecting: expectations, at: time)
        case .failure(let failure): parseFailure(failure.reason, at: time)
        }
    }

    /// A verdict with one failed ``VerificationCheck/Name/parse`` check.
    func parseFailure(_ reason: String, at time: ValidationTime) -> Verdict<Format.Payload> {
        Verdict(
            checks: [VerificationCheck(name: .parse, passed: false, reason: reason)], required: [.parse], unchecked: [], payload: nil,
            chain: nil, validationTime: nil, requestedTime: time, signature: nil, assurance: nil)
    }

    /// Verifies a payload a caller passed already parsed: `reparse` reads it again from the bytes
    /// it was parsed from (a failure is the reason the parse check fails), and a payload whose
    /// fields differ from those bytes fails the parse check with `changedReason`, so the checks
    /// see only what was signed.
    func verify<Failure: Error>(
        given payload: Format.Payload, reparse: () throws(Failure) -> Format.Payload, describe: (Failure) -> String,
        changedReason: String, expecting expectations: Format.Expectations, at time: ValidationTime
    ) -> Verdict<Format.Payload> where Format.Payload: Equatable {
        let signed: Format.Payload
        do throws(Failure) {
            signed = try reparse()
        } catch {
            return parseFailure(describe(error), at: time)
        }
        guard signed == payload else { return parseFailure(changedReason, at: time) }
        return verify(parsed: signed, expecting: expectations, at: time)
    }

    /// Verifies a payload the format parsed from the input's exact bytes.
    func verify(parsed payload: Format.Payload, expecting expectations: Format.Expectations, at requestedTime: ValidationTime)
        -> Verdict<Format.Payload>
    {
        var run = VerificationRun(machinery: machinery, requestedTime: requestedTime)
        // The reason's closure holds the format and the payload, not the whole verifier.
        let format = format
        run.record(.parse, true, format.describe(payload))
        run.record(.trustAnchors, !machinery.anchors.certificates.isEmpty, written: machinery.trustAnchorsReason)

        let signed = format.checkSignature(of: payload, in: &run)

        // The validation time (needed for the chain and for time-dependent expectations).
        var validationTime: Date?
        switch requestedTime {
        case .signedDate:
            if let date = format.signedDate(of: payload) {
                validationTime = date
                run.record(.validationTime, true, template: .dated(format.signedDateName, date))
            } else {
                let name = format.signedDateName
                run.record(.validationTime, false, "the input has no \(name) to validate the chain at")
            }
        case .now:
            let now = Date()
            validationTime = now
            run.record(.validationTime, true, template: .dated("now,", now))
        case .fixed(let date):
            if VerificationText.isRepresentable(date) {
                validationTime = date
                run.record(.validationTime, true, template: .dated("the fixed time", date))
            } else {
                run.record(.validationTime, false, "the fixed time \(date.timeIntervalSince1970) s is not between the years 1 and 9999")
            }
        case .clock(let clock):
            let date = clock()
            if VerificationText.isRepresentable(date) {
                validationTime = date
                run.record(.validationTime, true, template: .dated("the clock's time", date))
            } else {
                run.record(.validationTime, false, "the clock's time \(date.timeIntervalSince1970) s is not between the years 1 and 9999")
            }
        }

        // The chain, the pinned anchor and the policy.
        var validatedChain: [Certificate]?
        var pinnedAnchorIndex: Int?
        if let signed, let time = validationTime {
            let outcome = machinery.validateChain(signed, cached: run.signerEntry, at: time)
            switch outcome.reason {
            case .written(let reason): run.record(.chain, outcome.chain != nil, written: reason)
            case .summary(let summary, let cached): run.record(.chain, outcome.chain != nil, template: .chain(summary, cached: cached))
            }
            if let chain = outcome.chain, let last = chain.last {
                validatedChain = chain
                // Byte for byte, never by name: a copy of a root the input carries is not what is trusted.
                let anchorIndex = machinery.anchorIndex(of: last)
                pinnedAnchorIndex = anchorIndex
                if let anchorIndex {
                    run.record(.pinnedAnchor, true, template: .pinnedAnchor(machinery.anchorSubjects, anchorIndex))
                } else {
                    run.record(.pinnedAnchor, false, "the chain ends at \(last.subject), which is not one of the configured anchors")
                }
                if anchorIndex != nil {
                    var policiesMet = true
                    let policyName = signed.policy.name
                    // In place: each policy is evaluated where the array holds it, not copied out.
                    signed.policy.chainPolicies.withUnsafeBufferPointer { policies in
                        for index in policies.indices {
                            switch policies[index].evaluate(chain: chain) {
                            case .meets:
                                run.record(policies[index].name, true, template: .policyMet(policyName))
                                continue
                            case .fails(let reason):
                                run.record(policies[index].name, false, reason)
                                policiesMet = false
                            }
                            break
                        }
                    }
                    if policiesMet { RevocationStep.run(signed.policy.revocation, chain: chain, validatedAt: time, in: &run) }
                }
            }
        }

        // What the payload says.
        let unchecked = format.check(expectations, of: payload, at: validationTime, in: &run)

        var assurance: VerificationAssurance?
        if let signed, let index = pinnedAnchorIndex {
            assurance =
                signed.policy.isStoreKitTesting
                ? .storeKitTesting : machinery.appleAnchorIndices.contains(index) ? .apple : .configuredAnchor
        }
        return Verdict(
            checks: run.checks, required: requiredChecks, requiredPolicies: signed?.policy.requiredNames ?? [], unchecked: unchecked,
            payload: payload, chain: validatedChain,
            validationTime: validationTime, requestedTime: requestedTime, signature: signed?.signature,
            assurance: assurance, nested: run.verifiedNested)
    }
}

/// Text helpers for check reasons.
enum VerificationText {
    /// RFC 3339 in UTC with milliseconds when they are not zero.
    static func rfc3339(_ date: Date) -> String { ReceiptDate.rfc3339(date) }

    /// Whether `date` is finite and within the years 1-9999 (what X.509 and RFC 3339 can express).
    static func isRepresentable(_ date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970
        return seconds.isFinite && seconds >= -62_135_596_800 && seconds <= 253_402_300_799
    }

    /// `"text"` or `(none)`.
    static func quoted(_ text: String?) -> String {
        text.map { "\"\($0)\"" } ?? "(none)"
    }
}
