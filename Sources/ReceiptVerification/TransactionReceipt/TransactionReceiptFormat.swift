public import Foundation
public import ReceiptCrypto
public import Receipts

/// What a transaction receipt must say, beyond being validly signed. Every property left `nil` is
/// not checked and is listed in ``Verdict/unchecked``.
public struct TransactionReceiptExpectations: Sendable, Hashable {
    /// The app's bundle identifier (`bid`), compared exactly.
    public var bundleIdentifier: String?
    /// The app's bundle version at purchase time (`bvrs`), compared exactly.
    public var bundleVersion: String?
    /// The product identifiers (`product-id`) the receipt may name.
    public var productIdentifiers: Set<String>?
    /// The environments the receipt's `environment` value may name. That value sits outside the
    /// signed purchase-info, so this check guards against mistakes, not against forgery.
    public var allowedEnvironments: Set<ReceiptEnvironment>?

    /// Creates expectations; every argument defaults to "not checked".
    public init(
        bundleIdentifier: String? = nil, bundleVersion: String? = nil, productIdentifiers: Set<String>? = nil,
        allowedEnvironments: Set<ReceiptEnvironment>? = nil
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.bundleVersion = bundleVersion
        self.productIdentifiers = productIdentifiers
        self.allowedEnvironments = allowedEnvironments
    }

    /// Checks nothing about the receipt's content.
    public static let none = TransactionReceiptExpectations()
}

/// Legacy iOS 6 transaction receipts as a ``SignedFormat``, verified offline as Apple's 2012
/// `VerificationController` sample did, with explicit anchors and time:
///
/// 1. the receipt parses and carries a `signature` blob that decodes;
/// 2. the blob's version has a policy: 2 (a 128-byte signature, RSA 1024) or 3 (a 256-byte
///    signature, RSA 2048), both confirmed on real receipts (see Docs/Formats.md §6.3);
/// 3. the leaf certificate in the blob has an RSA key of the signature's size, and the signature
///    verifies with SHA-1 over `version byte ‖ decoded purchase-info`;
/// 4. the leaf chains through the version's **pinned** intermediate (it is not in the blob) to one
///    of the anchors (Apple Inc. Root) at the validation time — by default the purchase date
///    (`purchase-date-ms`), since every real leaf has expired;
/// 5. the version's policy: version 2, leaf → Apple iTunes Store CA → root with the leaf marked
///    1.2.840.113635.100.6.5.1; version 3, leaf → Apple WWDR CA (2013) → root with the leaf marked
///    1.2.840.113635.100.6.11.1;
/// 6. the expectations: `bid`, `bvrs`, `product-id`, environment.
public struct TransactionReceiptFormat: SignedFormat {
    /// The chain policy for each signature blob version; a blob of any other version fails
    /// ``VerificationCheck/Name/signatureVersion``.
    public var policies: [UInt8: VerificationPolicy]
    /// Bounds for parsing receipts given as bytes.
    public var limits: ReceiptLimits

    /// Creates the format with a policy per blob version.
    public init(policies: [UInt8: VerificationPolicy], limits: ReceiptLimits = .default) {
        self.policies = policies
        self.limits = limits
    }

    /// Creates the format with Apple's policies around the pinned intermediates: `intermediate`
    /// (Apple iTunes Store CA) for version 2 and, when given, `version3Intermediate` (Apple WWDR
    /// CA 2013) for version 3.
    public init(intermediate: Certificate, version3Intermediate: Certificate? = nil, limits: ReceiptLimits = .default) {
        var policies: [UInt8: VerificationPolicy] = [2: .transactionReceiptVersion2(intermediate: intermediate)]
        if let version3Intermediate { policies[3] = .transactionReceiptVersion3(intermediate: version3Intermediate) }
        self.init(policies: policies, limits: limits)
    }

    /// Property-list text or base64 of it.
    public func parse(_ bytes: [UInt8]) -> Result<TransactionReceipt, FormatParseFailure> {
        do throws(ReceiptError) {
            return .success(try TransactionReceipt(bytes, limits: limits))
        } catch {
            return .failure(FormatParseFailure("not a transaction receipt: \(error)"))
        }
    }

    /// `old-style property list, 12 purchase-info keys`.
    public func describe(_ receipt: TransactionReceipt) -> String {
        "old-style property list, \(receipt.purchaseInfo.entries.count) purchase-info keys"
    }

    /// The purchase date (`purchase-date-ms`).
    public func signedDate(of receipt: TransactionReceipt) -> Date? { receipt.purchaseInfo.purchaseDate }

    /// `the purchase date`.
    public var signedDateName: String { "the purchase date" }

    /// Blob, version, leaf certificate and signature.
    public var requiredChecks: [VerificationCheck.Name] { [.signatureBlob, .signatureVersion, .leafCertificate, .signature] }

    /// The blob, its version, the leaf and the SHA-1 signature over version ‖ purchase-info.
    public func checkSignature(of receipt: TransactionReceipt, in run: inout VerificationRun) -> SignedBy? {
        let blob: TransactionReceiptSignature
        do throws(ReceiptError) {
            blob = try receipt.signature()
        } catch {
            run.record(.signatureBlob, false, error.reason)
            return nil
        }
        let version = blob.version
        let signatureCount = blob.signature.count
        let certificateCount = blob.certificate.count
        run.record(
            .signatureBlob, true, "version \(version), \(signatureCount)-byte signature, \(certificateCount)-byte certificate")

        guard let policy = policies[version] else {
            let known = policies.keys.sorted().map(String.init).joined(separator: ", ")
            run.record(.signatureVersion, false, "version \(version) has no policy (known: \(known))")
            return nil
        }
        run.record(.signatureVersion, true, "version \(version): \(signatureCount)-byte RSA signature, SHA-1, \(policy.name) policy")

        let leaf: SignerCertificate
        switch run.signerCertificate(blob.certificate[...]) {
        case .failure(let error):
            run.record(.leafCertificate, false, "the blob's certificate does not parse: \(error.reason)")
            return nil
        case .success(let parsed):
            leaf = parsed
        }
        guard let key = leaf.publicKey, case .rsa = key.kind, key.bits == signatureCount * 8 else {
            let described = leaf.publicKey.map { "\($0.kind) (\($0.bits) bits)" } ?? "undecodable"
            run.record(
                .leafCertificate, false, "the leaf key is \(described); a version \(version) signature needs RSA \(signatureCount * 8)")
            return nil
        }
        let bits = key.bits
        run.record(.leafCertificate, true, "\(leaf.label), RSA \(bits)")

        let signed = blob.signedData(purchaseInfoData: receipt.purchaseInfoData)
        let verified = key.verify(signature: blob.signature, over: signed, digest: .sha1)
        let infoCount = receipt.purchaseInfoData.count
        run.record(
            .signature, verified,
            verified
                ? "RSA PKCS#1 v1.5 with SHA-1 over version ‖ \(infoCount) purchase-info bytes"
                : "the RSA signature does not verify with SHA-1 over version ‖ purchase-info")
        let pinned = policy.chainPolicies.compactMap { ($0 as? PinnedCertificatePolicy)?.certificate.derEncoded[...] }
        return SignedBy(
            signer: leaf, intermediates: pinned, policy: policy,
            signature: SignatureSummary(algorithm: .rsaPKCS1v15(.sha1), layoutVersion: Int(version)))
    }

    /// `bid`, `bvrs`, `product-id` and the environment.
    public func check(
        _ expectations: TransactionReceiptExpectations, of receipt: TransactionReceipt, at time: Date?, in run: inout VerificationRun
    ) -> [VerificationCheck.Name] {
        var unchecked: [VerificationCheck.Name] = []
        let info = receipt.purchaseInfo
        if let expected = expectations.bundleIdentifier {
            let actual = info.bundleIdentifier
            run.record(
                .bundleIdentifier, actual == expected,
                "bid \(VerificationText.quoted(actual)), expected \(VerificationText.quoted(expected))")
        } else {
            unchecked.append(.bundleIdentifier)
        }
        if let expected = expectations.bundleVersion {
            let actual = info.bundleVersion
            run.record(
                .bundleVersion, actual == expected, "bvrs \(VerificationText.quoted(actual)), expected \(VerificationText.quoted(expected))"
            )
        } else {
            unchecked.append(.bundleVersion)
        }
        if let expected = expectations.productIdentifiers {
            let actual = info.productIdentifier
            run.record(
                .productIdentifier, actual.map(expected.contains) ?? false,
                "product-id \(VerificationText.quoted(actual)), expected one of \(expected.sorted().map(VerificationText.quoted).joined(separator: ", "))"
            )
        } else {
            unchecked.append(.productIdentifier)
        }
        if let allowed = expectations.allowedEnvironments {
            let kind = receipt.environmentKind
            let environment = receipt.environment
            run.record(
                .environment, allowed.contains(kind),
                "environment \(VerificationText.quoted(environment)) (\(kind.rawValue.lowercased())); not covered by the signature")
        } else {
            unchecked.append(.environment)
        }
        return unchecked
    }
}

/// iOS 6 transaction receipt verification: the machinery configured with
/// ``TransactionReceiptFormat``.
public typealias TransactionReceiptVerifier = SignedDataVerifier<TransactionReceiptFormat>

extension SignedDataVerifier where Format == TransactionReceiptFormat {
    /// Creates a verifier that trusts `anchors` through the pinned `intermediate` (version 2) and,
    /// when given, `version3Intermediate` (version 3).
    public init(
        intermediate: Certificate, version3Intermediate: Certificate? = nil, anchors: TrustAnchors, cache: ChainCache? = .shared,
        limits: ReceiptLimits = .default
    ) {
        self.init(
            format: TransactionReceiptFormat(intermediate: intermediate, version3Intermediate: version3Intermediate, limits: limits),
            anchors: anchors, cache: cache)
    }

    /// Creates a verifier that trusts `anchors` (parsed certificates) through the pinned
    /// intermediates.
    public init(
        intermediate: Certificate, version3Intermediate: Certificate? = nil, anchors: [Certificate], cache: ChainCache? = .shared,
        limits: ReceiptLimits = .default
    ) {
        self.init(
            intermediate: intermediate, version3Intermediate: version3Intermediate, anchors: TrustAnchors(anchors), cache: cache,
            limits: limits)
    }

    /// The verifier for Apple's transaction receipts: the bundled Apple iTunes Store Certification
    /// Authority (version 2) and Apple WWDR CA 2013 (version 3) pinned as intermediates and the
    /// bundled Apple Inc. Root as the only anchor.
    /// - Throws: ``TrustAnchorError`` when a bundled certificate is missing or altered.
    public static func apple(cache: ChainCache? = .shared) throws(TrustAnchorError) -> TransactionReceiptVerifier {
        TransactionReceiptVerifier(
            intermediate: try BundledAnchors.appleITunesStoreCA, version3Intermediate: try BundledAnchors.appleWWDRCA2013,
            anchors: TrustAnchors([try BundledAnchors.appleIncRoot]), cache: cache)
    }

    /// Bounds applied while parsing untrusted receipts.
    public var limits: ReceiptLimits { format.limits }

    /// Parses and verifies a transaction receipt given as property-list text or base64 of it.
    public func verify(_ bytes: [UInt8], at time: ValidationTime = .signedDate) -> Verdict<TransactionReceipt> {
        verify(bytes, expecting: .none, at: time)
    }

    /// Verifies a parsed transaction receipt: parsed again from its own text, so the checks see
    /// exactly the bytes that were signed.
    public func verify(
        _ receipt: TransactionReceipt, expecting expectations: TransactionReceiptExpectations = .none, at time: ValidationTime = .signedDate
    ) -> Verdict<TransactionReceipt> {
        let limits = format.limits
        return verify(
            given: receipt, reparse: { () throws(ReceiptError) in try TransactionReceipt(text: receipt.text, limits: limits) },
            describe: { "not a transaction receipt: \($0)" },
            changedReason: "the receipt's fields differ from its text (changed after parsing)", expecting: expectations, at: time)
    }
}

extension Verdict where Payload == TransactionReceipt {
    /// The parsed transaction receipt (``payload``). Trust its fields only when ``isValid`` is
    /// true; `environment`, `pod` and `signing-status` are never covered by the signature.
    public var receipt: TransactionReceipt? { payload }
}
