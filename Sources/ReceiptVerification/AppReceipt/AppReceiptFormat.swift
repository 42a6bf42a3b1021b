@_spi(RawParsing) import ASN1
public import Foundation
import Internals
public import ReceiptCrypto
public import Receipts

/// What an app receipt must say, beyond being validly signed. Every property left `nil` is not
/// checked and is listed in ``Verdict/unchecked``.
public struct ReceiptExpectations: Sendable, Hashable {
    /// The app's bundle identifier (field 2), compared exactly.
    public var bundleIdentifier: String?
    /// The app version (field 3), compared exactly.
    public var appVersion: String?
    /// The device the receipt must be bound to: SHA-1(identifier ‖ opaque value ‖ bundle id) must
    /// equal field 5. A 16-byte vendor UUID (iOS) or a 6-byte MAC address (macOS).
    public var deviceIdentifier: DeviceIdentifier?
    /// The environments the receipt type (field 0) may name.
    public var allowedEnvironments: Set<ReceiptEnvironment>?
    /// The exact receipt type strings (field 0) allowed, for example `["Production", "ProductionVPP"]`.
    public var allowedReceiptTypes: Set<String>?
    /// When true (the default), a receipt with an expiration date (field 21) must not have expired
    /// at the validation time: the same instant the certificate chain is checked at.
    public var requireNotExpired: Bool

    /// Creates expectations; every argument defaults to "not checked" except ``requireNotExpired``.
    public init(
        bundleIdentifier: String? = nil, appVersion: String? = nil, deviceIdentifier: DeviceIdentifier? = nil,
        allowedEnvironments: Set<ReceiptEnvironment>? = nil, allowedReceiptTypes: Set<String>? = nil,
        requireNotExpired: Bool = true
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.appVersion = appVersion
        self.deviceIdentifier = deviceIdentifier
        self.allowedEnvironments = allowedEnvironments
        self.allowedReceiptTypes = allowedReceiptTypes
        self.requireNotExpired = requireNotExpired
    }

    /// Checks nothing about the receipt's content (only its expiration date, if it has one).
    public static let none = ReceiptExpectations()
}

/// App Store (and Xcode StoreKit testing) app receipts as a ``SignedFormat``: a PKCS#7 SignedData
/// whose payload is the receipt, read by `Receipts.AppReceipt`.
///
/// The format's own checks, cheapest and most structural first: content type id-data → exactly
/// one SignerInfo → digest (known, not MD5, allowed, listed in SignedData) → the signer
/// certificate among the embedded certificates by issuer and serial number (or subject key
/// identifier) → signature algorithm consistent with key and digest, key size → signed attributes
/// (content type, messageDigest = H(payload)) → the signature over exactly the payload the parser
/// read. The other embedded certificates are the chain's untrusted candidates.
public struct AppReceiptFormat: SignedFormat {
    /// The chain policy.
    public var policy: VerificationPolicy
    /// Bounds applied while parsing untrusted receipts.
    public var limits: ReceiptLimits
    /// The digests accepted in the SignerInfo. MD5 is refused even when listed.
    public var allowedDigests: Set<DigestAlgorithm> {
        get { storedDigests }
        set {
            storedDigests = newValue.subtracting([.md5])
            allowedDigestBits = Self.bits(of: storedDigests)
        }
    }
    /// The smallest RSA modulus accepted for the signer key. Values below 2048 are raised to 2048.
    public var minimumRSAKeyBits: Int {
        get { storedMinimumRSAKeyBits }
        set { storedMinimumRSAKeyBits = max(Self.rsaFloor, newValue) }
    }
    private var storedDigests: Set<DigestAlgorithm>
    /// ``allowedDigests`` as one bit per digest, so each verification tests a bit instead of
    /// hashing the digest's name for the set.
    private var allowedDigestBits: UInt8
    private var storedMinimumRSAKeyBits: Int

    static let rsaFloor = 2048
    static let ecFloor = 256

    /// Creates the format. SHA-1 stays allowed by default because real receipts until 2023 use it.
    public init(
        policy: VerificationPolicy = .appStore, limits: ReceiptLimits = .default,
        allowedDigests: Set<DigestAlgorithm> = [.sha1, .sha256, .sha384, .sha512], minimumRSAKeyBits: Int = 2048
    ) {
        self.policy = policy
        self.limits = limits
        storedDigests = allowedDigests.subtracting([.md5])
        allowedDigestBits = Self.bits(of: storedDigests)
        storedMinimumRSAKeyBits = max(Self.rsaFloor, minimumRSAKeyBits)
    }

    /// DER or BER PKCS#7, base64 text of it, or a verifyReceipt request body with `receipt-data`.
    public func parse(_ bytes: [UInt8]) -> Result<AppReceipt, FormatParseFailure> {
        do throws(ReceiptError) {
            let receipt = try AppReceipt(bytes, limits: limits)
            guard receipt.envelope != nil else { return .failure(FormatParseFailure("the input holds no PKCS#7 envelope")) }
            return .success(receipt)
        } catch {
            return .failure(FormatParseFailure("\(error)"))
        }
    }

    /// `DER PKCS#7 with a 4251-byte payload`.
    public func describe(_ receipt: AppReceipt) -> String {
        guard let envelope = receipt.envelope else { return "a receipt without an envelope" }
        return "\(envelope.usesBERForms ? "BER" : "DER") PKCS#7 with a \(envelope.payload.count)-byte payload"
    }

    /// The receipt creation date (field 12).
    public func signedDate(of receipt: AppReceipt) -> Date? { receipt.creationDate }

    /// `the receipt creation date`.
    public var signedDateName: String { "the receipt creation date" }

    /// Content type, signer count, digest, signer certificate, algorithm, key, signed attributes
    /// and the signature.
    public var requiredChecks: [VerificationCheck.Name] { Self.ownChecks }

    private static let ownChecks: [VerificationCheck.Name] = [
        .contentType, .signerCount, .digestAlgorithm, .signerCertificate, .signatureAlgorithm, .signerKey, .signedAttributes, .signature,
    ]

    // MARK: - The signature

    /// The PKCS#7 checks, recorded in `run`.
    public func checkSignature(of receipt: AppReceipt, in run: inout VerificationRun) -> SignedBy? {
        guard let envelope = receipt.envelope else {
            run.record(.contentType, false, "the receipt was not parsed from a PKCS#7 envelope")
            return nil
        }
        let contentType = envelope.contentType
        if contentType == ReceiptOID.data {
            run.record(.contentType, true, "id-data")  // a constant reason: no closure to allocate
        } else {
            run.record(.contentType, false, "the signed content type is \(contentType), not id-data (1.2.840.113549.1.7.1)")
        }

        // Exactly one SignerInfo.
        let signerCount = envelope.signers.count
        guard signerCount == 1, let signer = envelope.signers.first else {
            run.record(.signerCount, false, "the SignedData has \(signerCount) SignerInfos; exactly one is required")
            return nil
        }
        run.record(.signerCount, true, "one SignerInfo")

        // The digest algorithm.
        let (digest, digestReason) = checkDigest(signer, envelope)
        run.record(.digestAlgorithm, digest != nil, written: digestReason)

        // The signer certificate: found by the identifier in Swift, parsed by OpenSSL (or cached).
        let located = locateSigner(signer, in: envelope.certificates)
        guard let signerIndex = located.index, envelope.certificates.indices.contains(signerIndex) else {
            run.record(.signerCertificate, false, written: located.reason)
            return nil
        }
        let parsed: SignerCertificate
        switch run.signerCertificate(envelope.certificates[signerIndex]) {
        case .failure(let error):
            run.record(.signerCertificate, false, "embedded certificate #\(signerIndex), the signer's, cannot be parsed: \(error.reason)")
            return nil
        case .success(let certificate):
            parsed = certificate
        }
        run.record(.signerCertificate, true, template: .embeddedCertificate(signerIndex, parsed.label))
        let algorithm = checkKeyAndSignature(
            signer, key: parsed, digest: digest, payload: envelope.payload, contentType: contentType, in: &run)
        return SignedBy(
            signer: parsed, certificates: envelope.certificates, signerIndex: signerIndex, policy: policy,
            signature: SignatureSummary(algorithm: algorithm ?? .rsaPKCS1v15(digest)))
    }

    /// The SignerInfo's digest: a known digest OID (not a signature OID), not MD5, allowed,
    /// with absent or NULL parameters, listed in SignedData.digestAlgorithms.
    private func checkDigest(_ signer: SignerInfo, _ envelope: ReceiptEnvelope) -> (digest: DigestAlgorithm?, reason: String) {
        let algorithm = signer.digestAlgorithm
        guard let digest = Self.digest(oid: algorithm.oid) else {
            return (nil, "the digest algorithm \(algorithm.oid) is not a known digest")
        }
        guard !digest.isRefusedForSignatures else {
            return (nil, "the digest algorithm is MD5, which is refused")
        }
        guard allowedDigestBits & Self.bit(of: digest) != 0 else {
            return (nil, "the digest algorithm \(digest) is not allowed by this verifier")
        }
        if let parameters = algorithm.parameters, !parameters.elementsEqual([0x05, 0x00]) {
            return (nil, "the digest algorithm \(digest) has parameters other than NULL")
        }
        let listed = envelope.digestAlgorithms
        guard listed.indices.contains(where: { listed[$0].oid == algorithm.oid }) else {
            return (nil, "the digest algorithm \(digest) is not listed in SignedData.digestAlgorithms")
        }
        return (digest, digest.description)
    }

    /// One bit per digest algorithm.
    private static func bit(of digest: DigestAlgorithm) -> UInt8 {
        switch digest {
        case .sha1: 1
        case .sha256: 2
        case .sha384: 4
        case .sha512: 8
        case .md5: 16
        }
    }

    /// The bits of a set of digests.
    private static func bits(of digests: Set<DigestAlgorithm>) -> UInt8 {
        digests.reduce(0) { $0 | bit(of: $1) }
    }

    /// Digest OIDs (not signature OIDs), built once: a handful, so a scan comparing bytes is
    /// cheaper than hashing the OID for a dictionary.
    static let digestsByOID: [KnownOID<DigestAlgorithm>] = DigestAlgorithm.allCases.map { KnownOID(oid: $0.oid, value: $0) }

    /// Signature algorithm OIDs, built once (scanned like ``digestsByOID``).
    static let signatureAlgorithmsByOID: [KnownOID<SignatureAlgorithm>] = {
        var table: [KnownOID<SignatureAlgorithm>] = []
        let digests: [DigestAlgorithm?] = [nil] + DigestAlgorithm.allCases.map { $0 }
        for digest in digests {
            for algorithm in [SignatureAlgorithm.rsaPKCS1v15(digest)] + (digest.map { [SignatureAlgorithm.ecdsa($0)] } ?? []) {
                if let oid = algorithm.oid { table.append(KnownOID(oid: oid, value: algorithm)) }
            }
        }
        return table
    }()

    /// The digest whose OID is `oid`, if known.
    static func digest(oid: ASN1ObjectIdentifier) -> DigestAlgorithm? { KnownOID.find(oid, in: digestsByOID) }

    /// The signature algorithm whose OID is `oid`, if known.
    static func signatureAlgorithm(oid: ASN1ObjectIdentifier) -> SignatureAlgorithm? { KnownOID.find(oid, in: signatureAlgorithmsByOID) }

    /// The index of the one embedded certificate the SignerInfo names, found by reading each
    /// certificate's issuer, serial number and key identifier in Swift.
    private func locateSigner(_ signer: SignerInfo, in certificates: [ArraySlice<UInt8>]) -> (index: Int?, reason: String) {
        guard !certificates.isEmpty else { return (nil, "the receipt embeds no certificates") }
        // The first match, and the first later match that differs from it byte for byte
        // (byte-identical duplicates are harmless; two different certificates with one name are
        // not). Every certificate is read: one that is not a certificate fails first.
        var first: Int?
        var conflict: Int?
        let identifier = signer.signerIdentifier
        // Taken apart once, not once per certificate.
        var byIssuer = false
        var issuer: ArraySlice<UInt8> = []
        var serialNumber: ArraySlice<UInt8> = []
        if case .issuerAndSerialNumber(let named, let serial) = identifier {
            byIssuer = true
            issuer = named
            serialNumber = serial
        }
        for index in certificates.indices {
            do throws(ASN1Error) {
                let matched =
                    if byIssuer {
                        try CertificateIdentity.certificate(certificates[index], issuer: issuer, serialNumber: serialNumber)
                    } else {
                        try CertificateIdentity.certificate(certificates[index], matches: identifier)
                    }
                if matched {
                    if let first {
                        if conflict == nil, !bytesEqual(certificates[index], certificates[first]) { conflict = index }
                    } else {
                        first = index
                    }
                }
            } catch {
                return (nil, "embedded certificate #\(index - certificates.startIndex) is not a DER X.509 certificate: \(error.reason)")
            }
        }
        guard let first else {
            let named: String
            switch signer.signerIdentifier {
            case .issuerAndSerialNumber(_, let serial): named = "issuer and serial number \(Hex.encode(serial))"
            case .subjectKeyIdentifier(let identifier): named = "subject key identifier \(Hex.encode(identifier))"
            }
            return (nil, "no embedded certificate matches the signer's \(named)")
        }
        if let other = conflict {
            return (nil, "embedded certificates #\(first) and #\(other) differ but both match the signer identifier")
        }
        return (first, "")
    }

    /// Signature algorithm, key strength, signed attributes and the signature itself. Returns the
    /// algorithm when the signature verified.
    private func checkKeyAndSignature(
        _ signer: SignerInfo, key: SignerCertificate, digest: DigestAlgorithm?, payload: ArraySlice<UInt8>,
        contentType: ASN1ObjectIdentifier, in run: inout VerificationRun
    ) -> SignatureAlgorithm? {
        guard let publicKey = key.publicKey, let kind = key.keyKind else {
            run.record(.signerKey, false, "OpenSSL cannot decode the signer certificate's public key")
            return nil
        }
        // Signature algorithm: known, same key family, same digest when it names one.
        let algorithmOID = signer.signatureAlgorithm.oid
        var algorithm: SignatureAlgorithm?
        if let named = Self.signatureAlgorithm(oid: algorithmOID) {
            let consistent: Bool
            switch (named, kind) {
            case (.rsaPKCS1v15(let namedDigest), .rsa): consistent = namedDigest == nil || namedDigest == digest
            case (.ecdsa(let namedDigest), .ec): consistent = namedDigest == digest
            default: consistent = false
            }
            let keyFamilyFits: Bool
            switch (named, kind) {
            case (.rsaPKCS1v15, .rsa), (.ecdsa, .ec): keyFamilyFits = true
            default: keyFamilyFits = false
            }
            if consistent {
                run.record(.signatureAlgorithm, true, template: .algorithm(named))
                algorithm = named
            } else {
                run.record(
                    .signatureAlgorithm, false,
                    keyFamilyFits
                        ? "\(named) names a different digest than the SignerInfo (\(digest.map { "\($0)" } ?? "none"))"
                        : "\(named) does not fit the signer's \(kind) key")
            }
        } else {
            run.record(.signatureAlgorithm, false, "the signature algorithm \(algorithmOID) is not supported")
        }
        // Key strength.
        switch kind {
        case .rsa(let bits):
            let minimum = minimumRSAKeyBits
            if bits >= minimum {
                run.record(.signerKey, true, template: .rsaKey(bits))
            } else {
                run.record(.signerKey, false, "the signer's RSA key has \(bits) bits; at least \(minimum) are required")
            }
        case .ec(let curve):
            let bits = key.keyBits
            let strong = bits >= Self.ecFloor
            run.record(
                .signerKey, strong,
                strong ? "EC \(curve)" : "the signer's EC key on \(curve) has \(bits) bits; at least \(Self.ecFloor) are required")
        case .other(let name):
            run.record(.signerKey, false, "the signer's \(name) key is not supported")
        }
        guard let digest else { return nil }

        // Signed attributes, if present: content type id-data and messageDigest = H(payload).
        var signedBytes: [UInt8]?
        if let attributes = signer.signedAttributesEncoded {
            let result = checkSignedAttributes(signer, digest: digest, payload: payload, contentType: contentType)
            run.record(.signedAttributes, result.passed, written: result.reason)
            guard result.passed, let first = attributes.first, first == 0xA0 else { return nil }
            var retagged = Array(attributes)
            retagged[0] = 0x31  // [0] IMPLICIT → SET OF, as RFC 5652 §5.4 specifies for the signature input
            signedBytes = retagged
        } else {
            run.record(.signedAttributes, true, "none; the signature covers the payload directly")
        }

        let verified: Bool
        if let signedBytes {
            verified = publicKey.verify(signature: signer.signature, over: signedBytes[...], digest: digest)
        } else {
            verified = publicKey.verify(signature: signer.signature, over: payload, digest: digest)
        }
        // Written when read: the payload's size, not a String made now.
        let payloadSize = signedBytes == nil ? payload.count : nil
        run.record(.signature, verified, template: .signature(digest, verified: verified, payloadSize: payloadSize))
        return verified ? algorithm : nil
    }

    private func checkSignedAttributes(
        _ signer: SignerInfo, digest: DigestAlgorithm, payload: ArraySlice<UInt8>, contentType: ASN1ObjectIdentifier
    ) -> (passed: Bool, reason: String) {
        // One pass over the attributes (no filtered copies): the contentType and messageDigest
        // attributes, counted.
        var contentTypes = 0
        var digests = 0
        var typeValues: [ArraySlice<UInt8>] = []
        var digestValues: [ArraySlice<UInt8>] = []
        for attribute in signer.signedAttributes {
            if attribute.type == ReceiptOID.contentTypeAttribute {
                contentTypes += 1
                typeValues = attribute.values
            } else if attribute.type == ReceiptOID.messageDigestAttribute {
                digests += 1
                digestValues = attribute.values
            }
        }
        guard contentTypes == 1, typeValues.count == 1, let typeValue = typeValues.first else {
            return (false, "the signed attributes must hold exactly one contentType attribute with one value")
        }
        do throws(ASN1Error) {
            let oid = try AppReceiptFormat.objectIdentifier(typeValue)
            guard oid == contentType else {
                return (false, "the contentType attribute says \(oid), the content is \(contentType)")
            }
        } catch {
            return (false, "the contentType attribute is malformed: \(error.reason)")
        }
        guard digests == 1, digestValues.count == 1, let messageDigest = digestValues.first.flatMap(AppReceiptFormat.octets) else {
            return (false, "the signed attributes must hold exactly one well-formed messageDigest attribute")
        }
        let computed: [UInt8]
        do throws(CryptoError) {
            computed = try Digest.hash(digest, payload)
        } catch {
            return (false, "cannot compute the \(digest) of the payload: \(error.reason)")
        }
        guard bytesEqual(messageDigest, computed[...]) else {
            return (false, "messageDigest \(Hex.encode(messageDigest)) differs from the payload's \(digest) \(Hex.encode(computed))")
        }
        return (true, "contentType id-data and messageDigest = \(digest)(payload)")
    }

    /// The OBJECT IDENTIFIER a signed attribute value holds (the whole DER element, nothing after
    /// it): a short-form element read in place, anything else by the general reader (which
    /// reports what is wrong).
    static func objectIdentifier(_ element: ArraySlice<UInt8>) throws(ASN1Error) -> ASN1ObjectIdentifier {
        let short = element.withUnsafeBytes { raw -> Range<Int>? in
            guard let content = DERFraming.content(raw, tag: 0x06, at: 0, end: raw.count), content.upperBound == raw.count else {
                return nil
            }
            return content
        }
        if let content = short {
            return try ASN1ObjectIdentifier(
                validatingContent: element[(element.startIndex + content.lowerBound)..<(element.startIndex + content.upperBound)])
        }
        var reader = try ASN1Reader(element, rules: .der)
        let oid = try reader.readObjectIdentifier()
        try reader.finish()
        return oid
    }

    /// The octets of a messageDigest value: a DER OCTET STRING and nothing after it (as
    /// `SignerInfo.messageDigest` reads it), or nil.
    static func octets(_ element: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let short = element.withUnsafeBytes { raw -> Range<Int>? in
            guard let content = DERFraming.content(raw, tag: 0x04, at: 0, end: raw.count), content.upperBound == raw.count else {
                return nil
            }
            return content
        }
        if let content = short { return element[(element.startIndex + content.lowerBound)..<(element.startIndex + content.upperBound)] }
        guard var reader = try? ASN1Reader(element, rules: .der), let digest = try? reader.readOctetString(), reader.isAtEnd else {
            return nil
        }
        return digest
    }

    // MARK: - Expectations

    /// Bundle id, version, device hash, environment, receipt type and expiration.
    public func check(_ expectations: ReceiptExpectations, of receipt: AppReceipt, at time: Date?, in run: inout VerificationRun)
        -> [VerificationCheck.Name]
    {
        if expectations.bundleIdentifier == nil, expectations.appVersion == nil, expectations.deviceIdentifier == nil,
            expectations.allowedEnvironments == nil, expectations.allowedReceiptTypes == nil, expectations.requireNotExpired
        {
            // Only the expiration date is checked (the common case): the other names, listed once.
            checkExpiration(of: receipt, at: time, in: &run)
            return Self.uncheckedButExpiration
        }
        var unchecked: [VerificationCheck.Name] = []
        unchecked.reserveCapacity(6)
        if let expected = expectations.bundleIdentifier {
            let actual = receipt.bundleIdentifier
            run.record(
                .bundleIdentifier, actual == expected,
                actual == expected
                    ? expected : "the receipt is for \(VerificationText.quoted(actual)), expected \(VerificationText.quoted(expected))")
        } else {
            unchecked.append(.bundleIdentifier)
        }
        if let expected = expectations.appVersion {
            let actual = receipt.appVersion
            run.record(
                .appVersion, actual == expected,
                actual == expected
                    ? expected
                    : "the receipt is for version \(VerificationText.quoted(actual)), expected \(VerificationText.quoted(expected))")
        } else {
            unchecked.append(.appVersion)
        }
        if let device = expectations.deviceIdentifier {
            if receipt.opaqueValue == nil || receipt.sha1Hash == nil || receipt.bundleIdentifierData == nil {
                run.record(.deviceHash, false, "the receipt lacks the opaque value (4), the hash (5) or the bundle identifier (2)")
            } else {
                let matches = receipt.hashMatches(device: device)
                run.record(
                    .deviceHash, matches,
                    matches ? "bound to \(device)" : "the receipt's hash (field 5) does not match the device \(device)")
            }
        } else {
            unchecked.append(.deviceHash)
        }
        if let allowed = expectations.allowedEnvironments {
            let environment = receipt.environment
            let type = receipt.receiptType
            let ok = allowed.contains(environment)
            run.record(
                .environment, ok,
                ok
                    ? environment.rawValue
                    : "the receipt type \(VerificationText.quoted(type)) is environment \(environment.rawValue), allowed: \(allowed.map(\.rawValue).sorted().joined(separator: ", "))"
            )
        } else {
            unchecked.append(.environment)
        }
        if let allowed = expectations.allowedReceiptTypes {
            let type = receipt.receiptType
            let ok = type.map { allowed.contains($0) } ?? false
            run.record(
                .receiptType, ok,
                ok
                    ? type ?? ""
                    : "the receipt type \(VerificationText.quoted(type)) is not one of \(allowed.sorted().joined(separator: ", "))")
        } else {
            unchecked.append(.receiptType)
        }
        if expectations.requireNotExpired {
            checkExpiration(of: receipt, at: time, in: &run)
        } else {
            unchecked.append(.expirationDate)
        }
        return unchecked
    }

    /// What ``check(_:of:at:in:)`` leaves unchecked when only the expiration date is checked.
    private static let uncheckedButExpiration: [VerificationCheck.Name] = [
        .bundleIdentifier, .appVersion, .deviceHash, .environment, .receiptType,
    ]

    /// The receipt has not expired (field 21) at the validation time.
    private func checkExpiration(of receipt: AppReceipt, at time: Date?, in run: inout VerificationRun) {
        if let expiration = receipt.expirationDate {
            if let time {
                if time < expiration {
                    run.record(.expirationDate, true, template: .dated("expires", expiration))
                } else {
                    run.record(
                        .expirationDate, false,
                        "the receipt expired at \(VerificationText.rfc3339(expiration)), before the validation time \(VerificationText.rfc3339(time))"
                    )
                }
            } else {
                run.record(.expirationDate, false, "no validation time to compare the expiration date (21) with")
            }
        } else {
            run.record(.expirationDate, true, "no expiration date (21)")
        }
    }
}

/// App receipt verification: the machinery configured with ``AppReceiptFormat``.
public typealias AppReceiptVerifier = SignedDataVerifier<AppReceiptFormat>

extension SignedDataVerifier where Format == AppReceiptFormat {
    /// Creates a verifier that trusts exactly `anchors` and enforces `policy`.
    /// - Parameters:
    ///   - anchors: the trust anchors (see ``TrustAnchors`` and ``BundledAnchors``). An empty set
    ///     makes every receipt fail the check ``VerificationCheck/Name/trustAnchors``.
    ///   - policy: ``VerificationPolicy/appStore`` (the default), ``VerificationPolicy/xcode`` or your own.
    ///   - cache: where parsed certificates and validated chains are kept; ``ChainCache/shared``
    ///     by default, nil to validate every time.
    ///   - limits: parser bounds for untrusted input.
    public init(
        anchors: TrustAnchors, policy: VerificationPolicy = .appStore, cache: ChainCache? = .shared, limits: ReceiptLimits = .default
    ) {
        self.init(format: AppReceiptFormat(policy: policy, limits: limits), anchors: anchors, cache: cache)
    }

    /// Creates a verifier that trusts exactly `anchors` (DER certificates already parsed).
    public init(
        anchors: [Certificate], policy: VerificationPolicy = .appStore, cache: ChainCache? = .shared, limits: ReceiptLimits = .default
    ) {
        self.init(anchors: TrustAnchors(anchors), policy: policy, cache: cache, limits: limits)
    }

    /// A verifier for App Store receipts: the bundled Apple roots (Apple Inc. Root, G2, G3) and
    /// ``VerificationPolicy/appStore``.
    /// - Throws: ``TrustAnchorError`` when a bundled anchor is missing or altered.
    public static func appStore(cache: ChainCache? = .shared) throws(TrustAnchorError) -> AppReceiptVerifier {
        AppReceiptVerifier(anchors: try TrustAnchors.appleRoots, policy: .appStore, cache: cache)
    }

    /// A verifier for Xcode StoreKit testing receipts: the bundled StoreKit test certificate and
    /// ``VerificationPolicy/xcode``. Such receipts prove nothing about a real purchase.
    /// - Throws: ``TrustAnchorError`` when the bundled anchor is missing or altered.
    public static func xcode(cache: ChainCache? = .shared) throws(TrustAnchorError) -> AppReceiptVerifier {
        AppReceiptVerifier(anchors: try TrustAnchors.storeKitTest, policy: .xcode, cache: cache)
    }

    /// The chain policy.
    public var policy: VerificationPolicy { format.policy }
    /// Bounds applied while parsing untrusted receipts.
    public var limits: ReceiptLimits { format.limits }

    /// Verifies receipt bytes: DER or BER PKCS#7, base64 text of it, or a verifyReceipt request
    /// body with `receipt-data`.
    /// - Parameters:
    ///   - bytes: the untrusted input. Anything unreadable fails the check ``VerificationCheck/Name/parse``.
    ///   - time: when the chain must be valid; the receipt's creation date by default.
    public func verify(_ bytes: [UInt8], at time: ValidationTime = .signedDate) -> Verdict<AppReceipt> {
        verify(bytes, expecting: .none, at: time)
    }

    /// Verifies a receipt parsed from a PKCS#7 envelope (for example with `AppReceipt(_:)`).
    ///
    /// The checks use the receipt parsed again from the envelope's signed payload, never fields
    /// that may have been changed after parsing: a receipt whose fields differ from its payload
    /// fails the check ``VerificationCheck/Name/parse``, as does one built in code (no envelope).
    public func verify(_ receipt: AppReceipt, expecting expectations: ReceiptExpectations = .none, at time: ValidationTime = .signedDate)
        -> Verdict<AppReceipt>
    {
        guard let envelope = receipt.envelope else {
            return parseFailure("the receipt was not parsed from a PKCS#7 envelope, so there is no signature to verify", at: time)
        }
        let signed: AppReceipt
        do throws(ReceiptError) {
            signed = try AppReceipt(envelope: envelope, limits: format.limits)
        } catch {
            return parseFailure("\(error)", at: time)
        }
        guard signed == receipt else {
            return parseFailure("the receipt's fields differ from its signed payload (changed after parsing)", at: time)
        }
        return verify(parsed: signed, expecting: expectations, at: time)
    }
}

extension Verdict where Payload == AppReceipt {
    /// The receipt parsed from the signed payload (``payload``).
    public var receipt: AppReceipt? { payload }
}

/// An object identifier the verifier knows, with what it stands for.
struct KnownOID<Value: Sendable>: Sendable {
    let oid: ASN1ObjectIdentifier
    let value: Value

    /// The value of `oid` in `table`: compared in place, byte for byte, without copying the
    /// entries.
    static func find(_ oid: ASN1ObjectIdentifier, in table: [KnownOID]) -> Value? {
        table.withUnsafeBufferPointer { entries in
            for index in entries.indices where entries[index].oid == oid { return entries[index].value }
            return nil
        }
    }
}
