import ASN1
import Foundation
import Internals
public import ReceiptCrypto
public import Receipts

/// Verifies App Store (and Xcode StoreKit testing) app receipts: the PKCS#7 signature over exactly
/// the payload the parser read, the certificate chain to a pinned anchor at an explicit time, the
/// chain policy, and what the receipt says (bundle id, version, device, environment, expiry).
///
/// The result is always a ``ReceiptVerdict`` listing every check that ran, with a reason; nothing
/// throws and no input crashes. Verification fails closed: the verdict is valid only when every
/// check the configuration requires ran and passed.
///
/// Order of work, cheapest and most structural first: parse (DER, BER, base64 or a verifyReceipt
/// request body) → content type id-data → exactly one SignerInfo → digest (known, not MD5, listed
/// in SignedData) → signer certificate among the embedded certificates by issuer and serial number
/// (or subject key identifier) → signature algorithm consistent with key and digest, key size →
/// signed attributes (content type, messageDigest = H(payload)) → the signature → the chain,
/// validated by OpenSSL against the anchors only, with the receipt's other certificates as
/// untrusted intermediates → the chain ends at a pinned anchor byte for byte → chain policies →
/// receipt expectations.
///
/// Speed: the parsed certificates and validated chains are kept in a ``ChainCache`` (shared by
/// default), so verifying the next receipt signed by the same certificates costs the payload parse,
/// one digest and one signature verification. The signature is checked on every call.
///
/// `Sendable`: a verifier may be used from any number of threads at once.
public struct AppReceiptVerifier: Sendable {
    /// The anchors: the only certificates trusted.
    public let anchors: TrustAnchors
    /// The policy.
    public let policy: ReceiptPolicy
    /// The cache of parsed certificates and validated chains, or nil for none.
    public let cache: ChainCache?
    /// Bounds applied while parsing untrusted receipts.
    public let limits: ReceiptLimits

    private let trustStore: TrustStore
    private let anchorSubjects: [String]
    private let requiredChecks: [ReceiptCheck.Name]

    /// Creates a verifier that trusts exactly `anchors` and enforces `policy`.
    /// - Parameters:
    ///   - anchors: the trust anchors (see ``TrustAnchors`` and ``BundledAnchors``). An empty set
    ///     makes every receipt fail the check ``ReceiptCheck/Name/trustAnchors``.
    ///   - policy: ``ReceiptPolicy/appStore`` (the default), ``ReceiptPolicy/xcode`` or your own.
    ///   - cache: where parsed certificates and validated chains are kept; ``ChainCache/shared``
    ///     by default, nil to validate every time.
    ///   - limits: parser bounds for untrusted input.
    public init(
        anchors: TrustAnchors, policy: ReceiptPolicy = .appStore, cache: ChainCache? = .shared,
        limits: ReceiptLimits = .default
    ) {
        self.anchors = anchors
        self.policy = policy
        self.cache = cache
        self.limits = limits
        trustStore = TrustStore(anchors: anchors.certificates)
        anchorSubjects = anchors.certificates.map { "\($0.subject)" }
        requiredChecks =
            [
                .parse, .trustAnchors, .contentType, .signerCount, .digestAlgorithm, .signerCertificate,
                .signatureAlgorithm, .signerKey, .signedAttributes, .signature, .validationTime, .chain, .pinnedAnchor,
            ] + policy.chainPolicies.map(\.name)
    }

    /// Creates a verifier that trusts exactly `anchors` (DER certificates already parsed).
    public init(
        anchors: [Certificate], policy: ReceiptPolicy = .appStore, cache: ChainCache? = .shared,
        limits: ReceiptLimits = .default
    ) {
        self.init(anchors: TrustAnchors(anchors), policy: policy, cache: cache, limits: limits)
    }

    /// A verifier for App Store receipts: the bundled Apple roots (Apple Inc. Root, G2, G3) and
    /// ``ReceiptPolicy/appStore``.
    /// - Throws: ``TrustAnchorError`` when a bundled anchor is missing or altered.
    public static func appStore(cache: ChainCache? = .shared) throws(TrustAnchorError) -> AppReceiptVerifier {
        AppReceiptVerifier(anchors: try TrustAnchors.appleRoots, policy: .appStore, cache: cache)
    }

    /// A verifier for Xcode StoreKit testing receipts: the bundled StoreKit test certificate and
    /// ``ReceiptPolicy/xcode``. Such receipts prove nothing about a real purchase.
    /// - Throws: ``TrustAnchorError`` when the bundled anchor is missing or altered.
    public static func xcode(cache: ChainCache? = .shared) throws(TrustAnchorError) -> AppReceiptVerifier {
        AppReceiptVerifier(anchors: try TrustAnchors.storeKitTest, policy: .xcode, cache: cache)
    }

    // MARK: - Entry points

    /// Verifies receipt bytes: DER or BER PKCS#7, base64 text of it, or a verifyReceipt request
    /// body with `receipt-data`.
    /// - Parameters:
    ///   - bytes: the untrusted input. Anything unreadable fails the check ``ReceiptCheck/Name/parse``.
    ///   - expectations: what the receipt must say (nothing by default, except not being expired).
    ///   - time: when the chain must be valid; the receipt's creation date by default.
    public func verify(
        _ bytes: [UInt8], expecting expectations: ReceiptExpectations = .none, at time: ValidationTime = .creationDate
    ) -> ReceiptVerdict {
        let receipt: AppReceipt
        do throws(ReceiptError) {
            receipt = try AppReceipt(bytes, limits: limits)
        } catch {
            return parseFailure("\(error)")
        }
        guard let envelope = receipt.envelope else {
            return parseFailure("the input holds no PKCS#7 envelope")
        }
        return run(receipt, envelope: envelope, expectations: expectations, time: time)
    }

    /// Verifies a receipt parsed from a PKCS#7 envelope (for example with `AppReceipt(_:)`).
    ///
    /// The checks use the receipt parsed again from the envelope's signed payload, never fields
    /// that may have been changed after parsing: a receipt whose fields differ from its payload
    /// fails the check ``ReceiptCheck/Name/parse``, as does one built in code (no envelope).
    public func verify(
        _ receipt: AppReceipt, expecting expectations: ReceiptExpectations = .none,
        at time: ValidationTime = .creationDate
    ) -> ReceiptVerdict {
        guard let envelope = receipt.envelope else {
            return parseFailure("the receipt was not parsed from a PKCS#7 envelope, so there is no signature to verify")
        }
        let signed: AppReceipt
        do throws(ReceiptError) {
            signed = try AppReceipt(envelope: envelope, limits: limits)
        } catch {
            return parseFailure("\(error)")
        }
        guard signed == receipt else {
            return parseFailure("the receipt's fields differ from its signed payload (changed after parsing)")
        }
        return run(signed, envelope: envelope, expectations: expectations, time: time)
    }

    private func parseFailure(_ reason: String) -> ReceiptVerdict {
        ReceiptVerdict(
            checks: [ReceiptCheck(name: .parse, passed: false, reason: reason)], required: requiredChecks,
            unchecked: [], receipt: nil, chain: nil, validationTime: nil)
    }

    // MARK: - The checks

    private func run(
        _ receipt: AppReceipt, envelope: ReceiptEnvelope, expectations: ReceiptExpectations, time requestedTime: ValidationTime
    ) -> ReceiptVerdict {
        var checks: [ReceiptCheck] = []
        checks.reserveCapacity(24)
        func record(_ name: ReceiptCheck.Name, _ passed: Bool, _ reason: @autoclosure () -> String) {
            checks.append(ReceiptCheck(name: name, passed: passed, reason: reason()))
        }

        record(
            .parse, true,
            "\(envelope.usesBERForms ? "BER" : "DER") PKCS#7 with a \(envelope.payload.count)-byte payload")
        record(
            .trustAnchors, !anchors.certificates.isEmpty,
            anchors.certificates.isEmpty
                ? "no trust anchors are configured, so nothing can be trusted"
                : "\(anchors.certificates.count) anchor\(anchors.certificates.count == 1 ? "" : "s")")
        let isData = envelope.contentType == ReceiptOID.data
        record(
            .contentType, isData,
            isData ? "id-data" : "the signed content type is \(envelope.contentType), not id-data (1.2.840.113549.1.7.1)")

        // Exactly one SignerInfo.
        var signer: SignerInfo?
        if envelope.signers.count == 1 {
            signer = envelope.signers.first
            record(.signerCount, true, "one SignerInfo")
        } else {
            record(.signerCount, false, "the SignedData has \(envelope.signers.count) SignerInfos; exactly one is required")
        }

        // The digest algorithm.
        var digest: DigestAlgorithm?
        if let signer {
            let result = checkDigest(signer, envelope)
            digest = result.digest
            record(.digestAlgorithm, result.digest != nil, result.reason)
        }

        // Validation time (needed for the chain and the expiration check).
        var validationTime: Date?
        switch requestedTime {
        case .creationDate:
            if let creationDate = receipt.creationDate {
                validationTime = creationDate
                record(.validationTime, true, "the receipt creation date \(ReceiptDate.rfc3339(creationDate))")
            } else {
                record(.validationTime, false, "the receipt has no creation date (field 12) to validate the chain at")
            }
        case .now:
            let now = Date()
            validationTime = now
            record(.validationTime, true, "now, \(ReceiptDate.rfc3339(now))")
        case .fixed(let date):
            if Self.isRepresentable(date) {
                validationTime = date
                record(.validationTime, true, "the fixed time \(ReceiptDate.rfc3339(date))")
            } else {
                record(.validationTime, false, "the fixed time \(date.timeIntervalSince1970) s is not between the years 1 and 9999")
            }
        }

        // The signer certificate: found by the identifier in Swift, parsed by OpenSSL (or cached).
        var validatedChain: [Certificate]?
        if let signer {
            let located = locateSigner(signer, in: envelope.certificates)
            if let signerIndex = located.index, envelope.certificates.indices.contains(signerIndex) {
                let signerDER = envelope.certificates[signerIndex]
                let key = cache.map { _ in ChainCache.Key(signer: signerDER, anchors: anchors.identity) }
                let cached = key.flatMap { cache?.lookup($0) }
                switch cached.map({ .success($0.signer) }) ?? parseSigner(signerDER, index: signerIndex) {
                case .failure(let reason):
                    record(.signerCertificate, false, reason)
                case .success(let parsedSigner):
                    record(.signerCertificate, true, "embedded certificate #\(signerIndex): \(parsedSigner.label)")
                    checkKeyAndSignature(
                        signer, publicKey: parsedSigner.publicKey, digest: digest, payload: envelope.payload,
                        contentType: envelope.contentType, record: record)
                    if let validationTime {
                        let outcome = validateChain(
                            key: key, signer: parsedSigner, cachedChains: cached?.chains, signerIndex: signerIndex,
                            embedded: envelope.certificates, at: validationTime)
                        record(.chain, outcome.chain != nil, outcome.reason)
                        validatedChain = outcome.chain
                    }
                }
            } else {
                record(.signerCertificate, false, located.reason)
            }
        }

        // Pinned anchor and chain policies, on the validated chain.
        if let chain = validatedChain, let last = chain.last {
            // Byte for byte, never by name: the embedded copy of a root is not what is trusted.
            let anchorIndex = anchors.certificates.firstIndex {
                $0.derEncoded.count == last.derEncoded.count && $0.derEncoded == last.derEncoded
            }
            record(
                .pinnedAnchor, anchorIndex != nil,
                anchorIndex.map { "ends at the configured anchor \(anchorSubjects[$0])" }
                    ?? "the chain ends at \(last.subject), which is not one of the configured anchors")
            if anchorIndex != nil {
                for chainPolicy in policy.chainPolicies {
                    let result = chainPolicy.evaluate(chain: chain, receipt: receipt)
                    switch result {
                    case .meets: record(chainPolicy.name, true, "met (\(policy.name) policy)")
                    case .fails(let reason): record(chainPolicy.name, false, reason)
                    }
                    if !result.isMet { break }
                }
            }
        }

        // What the receipt says.
        let unchecked = checkExpectations(expectations, receipt: receipt, time: validationTime, record: record)

        var required = requiredChecks
        for (name, requested) in [
            (ReceiptCheck.Name.bundleIdentifier, expectations.bundleIdentifier != nil),
            (.appVersion, expectations.appVersion != nil), (.deviceHash, expectations.deviceIdentifier != nil),
            (.environment, expectations.allowedEnvironments != nil), (.receiptType, expectations.allowedReceiptTypes != nil),
            (.expirationDate, expectations.requireNotExpired),
        ] where requested {
            required.append(name)
        }
        let passedChain = checks.contains { $0.name == .chain && $0.passed } ? validatedChain : nil
        return ReceiptVerdict(
            checks: checks, required: required, unchecked: unchecked, receipt: receipt, chain: passedChain,
            validationTime: validationTime)
    }

    /// The SignerInfo's digest: a known digest OID (not a signature OID), not MD5, allowed by the
    /// policy, with absent or NULL parameters, listed in SignedData.digestAlgorithms.
    private func checkDigest(_ signer: SignerInfo, _ envelope: ReceiptEnvelope) -> (digest: DigestAlgorithm?, reason: String) {
        guard let digest = Self.digestsByOID[signer.digestAlgorithm.oid] else {
            return (nil, "the digest algorithm \(signer.digestAlgorithm.oid) is not a known digest")
        }
        guard !digest.isRefusedForSignatures else {
            return (nil, "the digest algorithm is MD5, which is refused")
        }
        guard policy.allowedDigests.contains(digest) else {
            return (nil, "the digest algorithm \(digest) is not allowed by the \(policy.name) policy")
        }
        if let parameters = signer.digestAlgorithm.parameters, !parameters.elementsEqual([0x05, 0x00]) {
            return (nil, "the digest algorithm \(digest) has parameters other than NULL")
        }
        guard envelope.digestAlgorithms.contains(where: { $0.oid == signer.digestAlgorithm.oid }) else {
            return (nil, "the digest algorithm \(digest) is not listed in SignedData.digestAlgorithms")
        }
        return (digest, "\(digest)")
    }

    /// Digest OIDs (not signature OIDs) by value, built once.
    static let digestsByOID: [ASN1ObjectIdentifier: DigestAlgorithm] = {
        var table: [ASN1ObjectIdentifier: DigestAlgorithm] = [:]
        for digest in DigestAlgorithm.allCases {
            table[digest.oid] = digest
        }
        return table
    }()

    /// Signature algorithm OIDs by value, built once.
    static let signatureAlgorithmsByOID: [ASN1ObjectIdentifier: SignatureAlgorithm] = {
        var table: [ASN1ObjectIdentifier: SignatureAlgorithm] = [:]
        let digests: [DigestAlgorithm?] = [nil] + DigestAlgorithm.allCases.map { $0 }
        for digest in digests {
            for algorithm in [SignatureAlgorithm.rsaPKCS1v15(digest)] + (digest.map { [SignatureAlgorithm.ecdsa($0)] } ?? []) {
                if let oid = algorithm.oid { table[oid] = algorithm }
            }
        }
        return table
    }()

    private enum SignerOutcome {
        case success(ChainCache.Signer)
        case failure(String)
    }

    /// Parses the signer certificate and its key with OpenSSL.
    private func parseSigner(_ der: ArraySlice<UInt8>, index: Int) -> SignerOutcome {
        do throws(CryptoError) {
            let certificate = try Certificate(derEncoded: Array(der))
            return .success(
                ChainCache.Signer(
                    certificate: certificate, publicKey: try? certificate.publicKey,
                    label: "\(certificate.subject), serial \(certificate.serialNumberHex)"))
        } catch {
            return .failure("embedded certificate #\(index), the signer's, cannot be parsed: \(error.reason)")
        }
    }

    /// The index of the one embedded certificate the SignerInfo names, found by reading each
    /// certificate's issuer, serial number and key identifier in Swift.
    private func locateSigner(_ signer: SignerInfo, in certificates: [ArraySlice<UInt8>]) -> (index: Int?, reason: String) {
        guard !certificates.isEmpty else { return (nil, "the receipt embeds no certificates") }
        var matches: [Int] = []
        for (index, der) in certificates.enumerated() {
            do throws(ASN1Error) {
                if try CertificateIdentity.certificate(der, matches: signer.signerIdentifier) { matches.append(index) }
            } catch {
                return (nil, "embedded certificate #\(index) is not a DER X.509 certificate: \(error.reason)")
            }
        }
        guard let first = matches.first else {
            let named: String
            switch signer.signerIdentifier {
            case .issuerAndSerialNumber(_, let serial): named = "issuer and serial number \(Hex.encode(Array(serial)))"
            case .subjectKeyIdentifier(let identifier): named = "subject key identifier \(Hex.encode(Array(identifier)))"
            }
            return (nil, "no embedded certificate matches the signer's \(named)")
        }
        // Byte-identical duplicates are harmless; two different certificates with one name are not.
        for other in matches.dropFirst() where !bytesEqual(certificates[other], certificates[first]) {
            return (nil, "embedded certificates #\(first) and #\(other) differ but both match the signer identifier")
        }
        return (first, "")
    }

    /// Signature algorithm, key strength, signed attributes and the signature itself.
    private func checkKeyAndSignature(
        _ signer: SignerInfo, publicKey: PublicKey?, digest: DigestAlgorithm?,
        payload: ArraySlice<UInt8>, contentType: ASN1ObjectIdentifier,
        record: (ReceiptCheck.Name, Bool, @autoclosure () -> String) -> Void
    ) {
        guard let publicKey else {
            record(.signerKey, false, "OpenSSL cannot decode the signer certificate's public key")
            return
        }
        let kind = publicKey.kind
        // Signature algorithm: known, same key family, same digest when it names one.
        let algorithmOID = signer.signatureAlgorithm.oid
        var algorithmConsistent = false
        if let algorithm = Self.signatureAlgorithmsByOID[algorithmOID] {
            switch (algorithm, kind) {
            case (.rsaPKCS1v15(let named), .rsa):
                algorithmConsistent = named == nil || named == digest
                record(
                    .signatureAlgorithm, algorithmConsistent,
                    algorithmConsistent
                        ? "\(algorithm)" : "\(algorithm) names a different digest than the SignerInfo (\(digest.map { "\($0)" } ?? "none"))"
                )
            case (.ecdsa(let named), .ec):
                algorithmConsistent = named == digest
                record(
                    .signatureAlgorithm, algorithmConsistent,
                    algorithmConsistent
                        ? "\(algorithm)" : "\(algorithm) names a different digest than the SignerInfo (\(digest.map { "\($0)" } ?? "none"))"
                )
            default:
                record(.signatureAlgorithm, false, "\(algorithm) does not fit the signer's \(kind) key")
            }
        } else {
            record(.signatureAlgorithm, false, "the signature algorithm \(algorithmOID) is not supported")
        }
        // Key strength.
        switch kind {
        case .rsa(let bits):
            let strong = bits >= policy.minimumRSAKeyBits
            record(
                .signerKey, strong,
                strong ? "RSA \(bits) bits" : "the signer's RSA key has \(bits) bits; at least \(policy.minimumRSAKeyBits) are required")
        case .ec(let curve):
            let bits = publicKey.bits
            let strong = bits >= ReceiptPolicy.ecFloor
            record(
                .signerKey, strong,
                strong ? "EC \(curve)" : "the signer's EC key on \(curve) has \(bits) bits; at least \(ReceiptPolicy.ecFloor) are required")
        case .other(let name):
            record(.signerKey, false, "the signer's \(name) key is not supported")
        }
        guard let digest else { return }

        // Signed attributes, if present: content type id-data and messageDigest = H(payload).
        var signedBytes: [UInt8]?
        if let attributes = signer.signedAttributesEncoded {
            let result = checkSignedAttributes(signer, digest: digest, payload: payload, contentType: contentType)
            record(.signedAttributes, result.passed, result.reason)
            guard result.passed, let first = attributes.first, first == 0xA0 else { return }
            var retagged = Array(attributes)
            retagged[0] = 0x31  // [0] IMPLICIT → SET OF, as RFC 5652 §5.4 specifies for the signature input
            signedBytes = retagged
        } else {
            record(.signedAttributes, true, "none; the signature covers the payload directly")
        }

        let verified: Bool
        if let signedBytes {
            verified = publicKey.verify(signature: signer.signature, over: signedBytes[...], digest: digest)
        } else {
            verified = publicKey.verify(signature: signer.signature, over: payload, digest: digest)
        }
        let over = signedBytes == nil ? "the \(payload.count)-byte payload" : "the signed attributes"
        record(
            .signature, verified,
            verified
                ? "\(digest) signature over \(over) verified with the signer's key"
                : "the signature over \(over) does not verify with the signer's key (\(digest))")
    }

    private func checkSignedAttributes(
        _ signer: SignerInfo, digest: DigestAlgorithm, payload: ArraySlice<UInt8>, contentType: ASN1ObjectIdentifier
    ) -> (passed: Bool, reason: String) {
        let contentTypes = signer.signedAttributes.filter { $0.type == ReceiptOID.contentTypeAttribute }
        guard contentTypes.count == 1, let typeValue = contentTypes.first?.values.first, contentTypes.first?.values.count == 1
        else {
            return (false, "the signed attributes must hold exactly one contentType attribute with one value")
        }
        do throws(ASN1Error) {
            var reader = try ASN1Reader(typeValue, rules: .der)
            let oid = try reader.readObjectIdentifier()
            try reader.finish()
            guard oid == contentType else {
                return (false, "the contentType attribute says \(oid), the content is \(contentType)")
            }
        } catch {
            return (false, "the contentType attribute is malformed: \(error.reason)")
        }
        let digests = signer.signedAttributes.filter { $0.type == ReceiptOID.messageDigestAttribute }
        guard digests.count == 1, let messageDigest = signer.messageDigest else {
            return (false, "the signed attributes must hold exactly one well-formed messageDigest attribute")
        }
        let computed: [UInt8]
        do throws(CryptoError) {
            computed = try Digest.hash(digest, payload)
        } catch {
            return (false, "cannot compute the \(digest) of the payload: \(error.reason)")
        }
        guard messageDigest.elementsEqual(computed) else {
            return (
                false,
                "messageDigest \(Hex.encode(Array(messageDigest))) differs from the payload's \(digest) \(Hex.encode(computed))"
            )
        }
        return (true, "contentType id-data and messageDigest = \(digest)(payload)")
    }

    /// The chain from the cache when a cached chain applies (time inside its window, its
    /// intermediates among the receipt's certificates), else validated by OpenSSL with the
    /// receipt's other certificates as untrusted intermediates (and cached when valid).
    private func validateChain(
        key: ChainCache.Key?, signer: ChainCache.Signer, cachedChains: [ChainCache.ValidatedChain]?, signerIndex: Int,
        embedded: [ArraySlice<UInt8>], at time: Date
    ) -> (chain: [Certificate]?, reason: String) {
        if let hit = cachedChains?.first(where: { $0.applies(at: time, embedded: embedded) }) {
            cache?.recordChainHit()
            return (hit.chain, hit.summary + " (cached)")
        }
        cache?.recordValidation()
        var others: [Certificate] = []
        for (index, der) in embedded.enumerated() where index != signerIndex {
            do throws(CryptoError) {
                others.append(try Certificate(derEncoded: Array(der)))
            } catch {
                return (nil, "embedded certificate #\(index) cannot be parsed: \(error.reason)")
            }
        }
        switch trustStore.validate(leaf: signer.certificate, intermediates: others, at: time) {
        case .invalid(let failure):
            return (nil, Self.describe(failure, at: time))
        case .valid(let chain):
            // Second line behind OpenSSL, and the window the result may be reused in.
            guard let notBefore = chain.map(\.notBefore).max(), let notAfter = chain.map(\.notAfter).min(),
                time >= notBefore, time < notAfter, chain.count >= 1
            else {
                return (nil, "OpenSSL accepted a chain that is not valid at \(ReceiptDate.rfc3339(time)) by its validity dates")
            }
            let summary = Self.describe(chain)
            if let key {
                let intermediates = chain.dropFirst().dropLast().map(\.derEncoded)
                cache?.store(
                    key, signer: signer,
                    chain: ChainCache.ValidatedChain(
                        chain: chain, intermediates: Array(intermediates), notBefore: notBefore, notAfter: notAfter,
                        summary: summary))
            }
            return (chain, summary)
        }
    }

    private static func describe(_ chain: [Certificate]) -> String {
        "valid: " + chain.map { $0.subject.commonName ?? $0.subject.description }.joined(separator: " → ")
    }

    private static func describe(_ failure: ChainValidationFailure, at time: Date) -> String {
        var text = "\(failure.message)"
        if let certificate = failure.certificate {
            text += ": \(certificate.subject)"
            switch failure.reason {
            case .expired:
                text += " expired at \(ReceiptDate.rfc3339(certificate.notAfter))"
            case .notYetValid:
                text += " is valid only from \(ReceiptDate.rfc3339(certificate.notBefore))"
            default:
                break
            }
            if let depth = failure.depth { text += " (depth \(depth))" }
        }
        return text + "; validation time \(ReceiptDate.rfc3339(time)) [\(failure.reason)]"
    }

    /// The receipt checks; returns the names of the expectations that were not requested.
    private func checkExpectations(
        _ expectations: ReceiptExpectations, receipt: AppReceipt, time: Date?,
        record: (ReceiptCheck.Name, Bool, @autoclosure () -> String) -> Void
    ) -> [ReceiptCheck.Name] {
        var unchecked: [ReceiptCheck.Name] = []
        if let expected = expectations.bundleIdentifier {
            let actual = receipt.bundleIdentifier
            record(
                .bundleIdentifier, actual == expected,
                actual == expected ? expected : "the receipt is for \(Self.quoted(actual)), expected \(Self.quoted(expected))")
        } else {
            unchecked.append(.bundleIdentifier)
        }
        if let expected = expectations.appVersion {
            let actual = receipt.appVersion
            record(
                .appVersion, actual == expected,
                actual == expected ? expected : "the receipt is for version \(Self.quoted(actual)), expected \(Self.quoted(expected))")
        } else {
            unchecked.append(.appVersion)
        }
        if let device = expectations.deviceIdentifier {
            if receipt.opaqueValue == nil || receipt.sha1Hash == nil || receipt.bundleIdentifierData == nil {
                record(.deviceHash, false, "the receipt lacks the opaque value (4), the hash (5) or the bundle identifier (2)")
            } else {
                let matches = receipt.hashMatches(device: device)
                record(
                    .deviceHash, matches,
                    matches ? "bound to \(device)" : "the receipt's hash (field 5) does not match the device \(device)")
            }
        } else {
            unchecked.append(.deviceHash)
        }
        if let allowed = expectations.allowedEnvironments {
            let environment = receipt.environment
            let ok = allowed.contains(environment)
            record(
                .environment, ok,
                ok
                    ? environment.rawValue
                    : "the receipt type \(Self.quoted(receipt.receiptType)) is environment \(environment.rawValue), allowed: \(allowed.map(\.rawValue).sorted().joined(separator: ", "))"
            )
        } else {
            unchecked.append(.environment)
        }
        if let allowed = expectations.allowedReceiptTypes {
            let ok = receipt.receiptType.map { allowed.contains($0) } ?? false
            record(
                .receiptType, ok,
                ok
                    ? receipt.receiptType ?? ""
                    : "the receipt type \(Self.quoted(receipt.receiptType)) is not one of \(allowed.sorted().joined(separator: ", "))")
        } else {
            unchecked.append(.receiptType)
        }
        if expectations.requireNotExpired {
            if let expiration = receipt.expirationDate {
                if let time {
                    let ok = time < expiration
                    record(
                        .expirationDate, ok,
                        ok
                            ? "expires \(ReceiptDate.rfc3339(expiration))"
                            : "the receipt expired at \(ReceiptDate.rfc3339(expiration)), before the validation time \(ReceiptDate.rfc3339(time))"
                    )
                } else {
                    record(.expirationDate, false, "no validation time to compare the expiration date (21) with")
                }
            } else {
                record(.expirationDate, true, "no expiration date (21)")
            }
        } else {
            unchecked.append(.expirationDate)
        }
        return unchecked
    }

    /// Whether `date` is finite and within the years 1-9999 (what X.509 and RFC 3339 can express).
    static func isRepresentable(_ date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970
        return seconds.isFinite && seconds >= -62_135_596_800 && seconds <= 253_402_300_799
    }

    private static func quoted(_ text: String?) -> String {
        text.map { "\"\($0)\"" } ?? "(none)"
    }
}
