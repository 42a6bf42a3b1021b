public import ASN1
public import Foundation
public import ReceiptCrypto
public import Receipts

extension ReceiptCheck.Name {
    /// The transaction receipt has a `signature` whose blob decodes (version byte, signature,
    /// certificate length within bounds, certificate, nothing after it).
    public static let signatureBlob = ReceiptCheck.Name(rawValue: "signatureBlob")
    /// The blob's version is one this verifier accepts: 2 (confirmed on real receipts) or, only when
    /// ``LegacyReceiptVerifier/acceptsUnconfirmedVersion3`` is set, 3.
    public static let signatureVersion = ReceiptCheck.Name(rawValue: "signatureVersion")
    /// The blob's certificate is a DER X.509 certificate with an RSA key whose size matches the
    /// signature length.
    public static let leafCertificate = ReceiptCheck.Name(rawValue: "leafCertificate")
    /// The chain's middle certificate is, byte for byte, the pinned Apple iTunes Store CA.
    public static let pinnedIntermediate = ReceiptCheck.Name(rawValue: "pinnedIntermediate")
    /// The leaf carries Apple's purchase-receipt marker 1.2.840.113635.100.6.5.1.
    public static let purchaseReceiptMarker = ReceiptCheck.Name(rawValue: "purchaseReceiptMarker")
    /// `bvrs` equals the expected bundle version.
    public static let bundleVersion = ReceiptCheck.Name(rawValue: "bundleVersion")
    /// `product-id` is one of the expected product identifiers.
    public static let productIdentifier = ReceiptCheck.Name(rawValue: "productIdentifier")
}

/// What a transaction receipt must say, beyond being validly signed. Every property left `nil` is
/// not checked and is listed in ``TransactionReceiptVerdict/unchecked``.
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

/// How far a valid verdict can be trusted to mean what Apple meant.
public enum VerificationAssurance: Sendable, Hashable, CustomStringConvertible {
    /// The layout and digest were confirmed against real Apple receipts (signature version 2).
    case confirmed
    /// The layout is accepted but no real receipt confirms it (signature version 3: no sample
    /// exists, so the digest was found by trial against the leaf key).
    case unconfirmed

    /// `confirmed` or `unconfirmed`.
    public var description: String { self == .confirmed ? "confirmed" : "unconfirmed" }
}

/// The outcome of verifying one transaction receipt: every check that ran, with its reason.
public struct TransactionReceiptVerdict: Sendable {
    /// True only when every check ran and passed.
    public let isValid: Bool
    /// The checks in the order they ran. Checks that could not run because an earlier one failed
    /// are absent; the verdict is then invalid.
    public let checks: [ReceiptCheck]
    /// Expectations that were not requested, so callers see what a valid verdict did not cover.
    public let unchecked: [ReceiptCheck.Name]
    /// The parsed receipt, when parsing succeeded. Trust its fields only when ``isValid`` is true;
    /// `environment`, `pod` and `signing-status` are never covered by the signature.
    public let receipt: TransactionReceipt?
    /// The signature blob's version, when the blob decoded.
    public let signatureVersion: UInt8?
    /// The digest the signature verified with, when it did.
    public let digest: DigestAlgorithm?
    /// ``VerificationAssurance/unconfirmed`` for version 3 blobs.
    public let assurance: VerificationAssurance
    /// The validated chain (leaf, iTunes Store CA, anchor), when the chain check passed.
    public let chain: [Certificate]?
    /// The instant the chain was validated at, when it could be determined.
    public let validationTime: Date?

    /// The checks that failed, in order.
    public var failures: [ReceiptCheck] { checks.filter { !$0.passed } }

    /// The first check that failed, if any.
    public var firstFailure: ReceiptCheck? { checks.first { !$0.passed } }

    /// The outcome of the check named `name`, if it ran.
    public func check(_ name: ReceiptCheck.Name) -> ReceiptCheck? { checks.first { $0.name == name } }
}

/// Verifies legacy iOS 6 transaction receipts offline, as Apple's 2012 `VerificationController`
/// sample did, but with explicit anchors and time:
///
/// 1. the receipt parses and carries a `signature` blob that decodes;
/// 2. the blob's version is 2 (128-byte signature) — or 3 (256-byte signature), accepted only when
///    ``acceptsUnconfirmedVersion3`` is set and reported as ``VerificationAssurance/unconfirmed``;
/// 3. the leaf certificate in the blob has an RSA key of the signature's size, and the signature
///    verifies over `version byte ‖ decoded purchase-info` with SHA-1 (version 2) or, for version 3,
///    SHA-256 and then SHA-1;
/// 4. the leaf chains through the **pinned** Apple iTunes Store Certification Authority (it is not in
///    the blob) to one of the anchors (Apple Inc. Root) at the validation time — by default the
///    purchase date (`purchase-date-ms`), since every real leaf expired in 2014 or 2016;
/// 5. the chain is exactly leaf → pinned intermediate → anchor, and the leaf carries Apple's marker
///    1.2.840.113635.100.6.5.1;
/// 6. the expectations: `bid`, `bvrs`, `product-id`, environment.
///
/// Anchors and the intermediate are inputs (bytes the caller passes); nothing is read from the
/// system trust store or trusted because the receipt carries it. Verification never throws.
public struct LegacyReceiptVerifier: Sendable {
    /// Apple's marker extension on purchase-receipt signing leaves.
    public static let leafMarkerOID = ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 5, 1)

    /// The pinned intermediate (Apple iTunes Store Certification Authority, 2009-2016).
    public let intermediate: Certificate
    /// The trust anchors (Apple Inc. Root). Empty trusts nothing.
    public let anchors: [Certificate]
    /// Accept signature version 3 blobs (no real sample exists; off by default, so such receipts
    /// fail ``ReceiptCheck/Name/signatureVersion``). When on, a valid version 3 receipt is valid with
    /// ``VerificationAssurance/unconfirmed``.
    public var acceptsUnconfirmedVersion3: Bool
    /// Bounds for parsing receipts given as bytes.
    public var limits: ReceiptLimits

    /// Creates a verifier that trusts `anchors` through the pinned `intermediate`.
    public init(
        intermediate: Certificate, anchors: [Certificate], acceptsUnconfirmedVersion3: Bool = false,
        limits: ReceiptLimits = .default
    ) {
        self.intermediate = intermediate
        var seen = Set<Certificate>()
        self.anchors = anchors.filter { seen.insert($0).inserted }
        self.acceptsUnconfirmedVersion3 = acceptsUnconfirmedVersion3
        self.limits = limits
    }

    /// Creates a verifier that trusts `anchors` through the pinned `intermediate`.
    public init(
        intermediate: Certificate, anchors: TrustAnchors, acceptsUnconfirmedVersion3: Bool = false,
        limits: ReceiptLimits = .default
    ) {
        self.init(
            intermediate: intermediate, anchors: anchors.certificates, acceptsUnconfirmedVersion3: acceptsUnconfirmedVersion3,
            limits: limits)
    }

    /// The verifier for Apple's transaction receipts: the bundled Apple iTunes Store Certification
    /// Authority pinned as the intermediate and the bundled Apple Inc. Root as the only anchor.
    /// - Throws: ``TrustAnchorError`` when a bundled certificate is missing or altered.
    public static func apple(acceptsUnconfirmedVersion3: Bool = false) throws(TrustAnchorError) -> LegacyReceiptVerifier {
        LegacyReceiptVerifier(
            intermediate: try BundledAnchors.appleITunesStoreCA, anchors: [try BundledAnchors.appleIncRoot],
            acceptsUnconfirmedVersion3: acceptsUnconfirmedVersion3)
    }

    /// Parses and verifies a transaction receipt given as property-list text or base64 of it.
    /// A parse failure is a verdict with one failed ``ReceiptCheck/Name/parse`` check.
    public func verify(
        _ bytes: [UInt8], expecting expectations: TransactionReceiptExpectations = .none, at time: ValidationTime = .creationDate
    ) -> TransactionReceiptVerdict {
        do throws(ReceiptError) {
            let receipt = try TransactionReceipt(bytes, limits: limits)
            return verify(receipt, expecting: expectations, at: time)
        } catch {
            var run = Run(expectations: expectations)
            run.record(.parse, false, "not a transaction receipt: \(error)")
            return run.verdict(receipt: nil)
        }
    }

    /// Verifies a parsed transaction receipt.
    public func verify(
        _ receipt: TransactionReceipt, expecting expectations: TransactionReceiptExpectations = .none,
        at time: ValidationTime = .creationDate
    ) -> TransactionReceiptVerdict {
        var run = Run(expectations: expectations)
        run.record(.parse, true, "old-style property list, \(receipt.purchaseInfo.entries.count) purchase-info keys")
        guard run.record(.trustAnchors, !anchors.isEmpty, anchors.isEmpty ? "no trust anchors configured" : "\(anchors.count) anchor(s)")
        else {
            return run.verdict(receipt: receipt)
        }

        // 1. The blob.
        let blob: TransactionReceiptSignature
        do throws(ReceiptError) {
            blob = try receipt.signature()
        } catch {
            run.record(.signatureBlob, false, error.reason)
            return run.verdict(receipt: receipt)
        }
        run.record(
            .signatureBlob, true,
            "version \(blob.version), \(blob.signature.count)-byte signature, \(blob.certificate.count)-byte certificate")
        run.signatureVersion = blob.version

        // 2. The version.
        if blob.version == 3 {
            run.assurance = .unconfirmed
            guard
                run.record(
                    .signatureVersion, acceptsUnconfirmedVersion3,
                    acceptsUnconfirmedVersion3
                        ? "version 3 accepted: no real version 3 receipt exists, so its layout and digest are unconfirmed"
                        : "version 3 is unconfirmed (no real sample exists) and acceptsUnconfirmedVersion3 is off")
            else { return run.verdict(receipt: receipt) }
        } else {
            run.record(.signatureVersion, true, "version \(blob.version): 128-byte RSA signature, SHA-1 (confirmed on real receipts)")
        }

        // 3. The leaf and the signature.
        let leaf: Certificate
        let key: PublicKey
        do throws(CryptoError) {
            leaf = try Certificate(derEncoded: blob.certificate)
            key = try leaf.publicKey
        } catch {
            run.record(.leafCertificate, false, "the blob's certificate does not parse: \(error.reason)")
            return run.verdict(receipt: receipt)
        }
        let expectedBits = blob.signature.count * 8
        guard case .rsa = key.kind, key.bits == expectedBits else {
            run.record(
                .leafCertificate, false,
                "the leaf key is \(key.kind) (\(key.bits) bits); a version \(blob.version) signature needs RSA \(expectedBits)")
            return run.verdict(receipt: receipt)
        }
        run.record(.leafCertificate, true, "\(leaf.subject.commonName ?? "leaf"), serial \(leaf.serialNumberHex), RSA \(key.bits)")

        let signed = blob.signedData(purchaseInfoData: receipt.purchaseInfoData)
        let digests: [DigestAlgorithm] = blob.version == 3 ? [.sha256, .sha1] : [.sha1]
        guard let digest = digests.first(where: { key.verify(signature: blob.signature, over: signed, digest: $0) }) else {
            run.record(
                .signature, false,
                "the RSA signature does not verify over version ‖ purchase-info with \(digests.map(\.description).joined(separator: " or "))"
            )
            return run.verdict(receipt: receipt)
        }
        run.digest = digest
        run.record(
            .signature, true,
            "RSA PKCS#1 v1.5 with \(digest) over version ‖ \(receipt.purchaseInfoData.count) purchase-info bytes"
                + (blob.version == 3 ? " (digest found by trial; unconfirmed)" : ""))

        // 4. The chain at the validation time.
        let instant: Date
        switch time {
        case .creationDate:
            guard let purchase = receipt.purchaseInfo.purchaseDate else {
                run.record(.validationTime, false, "the purchase-info has no purchase date to validate the chain at")
                return run.verdict(receipt: receipt)
            }
            instant = purchase
            run.record(.validationTime, true, "the purchase date \(ReceiptDate.rfc3339(purchase))")
        case .now:
            instant = Date()
            run.record(.validationTime, true, "now (\(ReceiptDate.rfc3339(instant)))")
        case .fixed(let date):
            instant = date
            run.record(.validationTime, true, "fixed \(ReceiptDate.rfc3339(date))")
        }
        run.validationTime = instant

        let result = TrustStore(anchors: anchors).validate(leaf: leaf, intermediates: [intermediate], at: instant)
        guard let chain = result.chain else {
            run.record(.chain, false, result.failure.map { "\($0)" } ?? "chain validation failed")
            return run.verdict(receipt: receipt)
        }
        run.record(.chain, true, chain.map { $0.subject.commonName ?? "?" }.joined(separator: " → "))

        // 5. Shape, pins and marker.
        guard run.record(.chainLength, chain.count == 3, "\(chain.count) certificates (leaf, iTunes Store CA, root required)") else {
            return run.verdict(receipt: receipt)
        }
        guard
            run.record(
                .pinnedIntermediate, chain[1] == intermediate,
                chain[1] == intermediate
                    ? "the pinned \(intermediate.subject.commonName ?? "intermediate")"
                    : "the chain's intermediate is not the pinned certificate")
        else { return run.verdict(receipt: receipt) }
        guard let last = chain.last, run.record(.pinnedAnchor, anchors.contains(last), "\(last.subject.commonName ?? "anchor")") else {
            return run.verdict(receipt: receipt)
        }
        guard
            run.record(
                .purchaseReceiptMarker, leaf.hasExtension(oid: LegacyReceiptVerifier.leafMarkerOID),
                leaf.hasExtension(oid: LegacyReceiptVerifier.leafMarkerOID)
                    ? "the leaf carries \(LegacyReceiptVerifier.leafMarkerOID)" : "the leaf lacks \(LegacyReceiptVerifier.leafMarkerOID)")
        else { return run.verdict(receipt: receipt) }
        run.chain = chain

        // 6. Expectations.
        let info = receipt.purchaseInfo
        if let expected = expectations.bundleIdentifier {
            run.record(
                .bundleIdentifier, info.bundleIdentifier == expected, "bid \(quoted(info.bundleIdentifier)), expected \(quoted(expected))")
        }
        if let expected = expectations.bundleVersion {
            run.record(.bundleVersion, info.bundleVersion == expected, "bvrs \(quoted(info.bundleVersion)), expected \(quoted(expected))")
        }
        if let expected = expectations.productIdentifiers {
            run.record(
                .productIdentifier, info.productIdentifier.map(expected.contains) ?? false,
                "product-id \(quoted(info.productIdentifier)), expected one of \(expected.sorted().map(quoted).joined(separator: ", "))")
        }
        if let allowed = expectations.allowedEnvironments {
            let kind = receipt.environmentKind
            run.record(
                .environment, allowed.contains(kind),
                "environment \(quoted(receipt.environment)) (\(kind.rawValue.lowercased())); not covered by the signature")
        }
        return run.verdict(receipt: receipt)
    }

    func quoted(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "absent" }

    /// The checks of one verification, collected in order.
    struct Run {
        let expectations: TransactionReceiptExpectations
        var checks: [ReceiptCheck] = []
        var signatureVersion: UInt8?
        var digest: DigestAlgorithm?
        var assurance = VerificationAssurance.confirmed
        var chain: [Certificate]?
        var validationTime: Date?

        init(expectations: TransactionReceiptExpectations) { self.expectations = expectations }

        @discardableResult
        mutating func record(_ name: ReceiptCheck.Name, _ passed: Bool, _ reason: String) -> Bool {
            checks.append(ReceiptCheck(name: name, passed: passed, reason: reason))
            return passed
        }

        func verdict(receipt: TransactionReceipt?) -> TransactionReceiptVerdict {
            var unchecked: [ReceiptCheck.Name] = []
            if expectations.bundleIdentifier == nil { unchecked.append(.bundleIdentifier) }
            if expectations.bundleVersion == nil { unchecked.append(.bundleVersion) }
            if expectations.productIdentifiers == nil { unchecked.append(.productIdentifier) }
            if expectations.allowedEnvironments == nil { unchecked.append(.environment) }
            // Every structural check must have run and passed; expectations only when requested.
            let required: [ReceiptCheck.Name] = [
                .parse, .trustAnchors, .signatureBlob, .signatureVersion, .leafCertificate, .signature, .validationTime,
                .chain, .chainLength, .pinnedIntermediate, .pinnedAnchor, .purchaseReceiptMarker,
            ]
            let passed = Set(checks.lazy.filter(\.passed).map(\.name))
            let valid = checks.allSatisfy(\.passed) && required.allSatisfy { passed.contains($0) }
            return TransactionReceiptVerdict(
                isValid: valid, checks: checks, unchecked: unchecked, receipt: receipt, signatureVersion: signatureVersion,
                digest: digest, assurance: assurance, chain: chain, validationTime: validationTime)
        }
    }
}
