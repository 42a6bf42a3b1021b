public import ReceiptCrypto
public import Receipts

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
        let limits = format.limits
        return verify(
            given: receipt, reparse: { () throws(ReceiptError) in try AppReceipt(envelope: envelope, limits: limits) },
            describe: { "\($0)" }, changedReason: "the receipt's fields differ from its signed payload (changed after parsing)",
            expecting: expectations, at: time)
    }
}

extension Verdict where Payload == AppReceipt {
    /// The receipt parsed from the signed payload (``payload``).
    public var receipt: AppReceipt? { payload }
}
