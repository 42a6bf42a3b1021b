// Whom the store verifiers trust and when: one value an app configures once and gives to each of
// its verifiers.

public import ReceiptVerification

/// Whom a store verifier trusts, and at what time: the anchors, the chain policy, the instant the
/// chain must be valid at, and where validated chains are cached.
///
/// Configure it once and give the same value to ``AppReceiptStoreVerifier/Configuration`` and
/// ``JWSTransactionStoreVerifier/Configuration`` (for example when a ``CombinedStoreVerifier``
/// runs both), so that the receipt and the signed transaction are held to the same trust. The
/// defaults are Apple's: the bundled Apple roots, the App Store policy, each format's own signed
/// date, the shared chain cache. What a format may read (its limits) stays in its own
/// configuration.
///
/// ``TransactionReceiptStoreVerifier`` does not take it: the legacy transaction receipt pins an
/// intermediate certificate, so its offline method takes a `TransactionReceiptVerifier` built
/// with its anchors.
public struct StoreVerifierTrust: Sendable {
    /// The certificates trusted. Default: the bundled Apple roots
    /// (``TrustAnchorSource/bundledAppleRoots``; Apple Root CA - G3 signs every App Store JWS).
    public var anchors: TrustAnchorSource
    /// The chain policy. Default `.appStore` (leaf, WWDR intermediate, root, with Apple's marker
    /// OIDs); `.xcode` for Xcode's self-signed StoreKit testing certificate.
    public var policy: VerificationPolicy
    /// The instant the chain must be valid at. Default `.signedDate`: the format's own signed date
    /// (the app receipt's creation date, the JWS's `signedDate`), which whoever signed chooses;
    /// `.clock` with a clock you trust when that matters.
    public var validationTime: ValidationTime
    /// Where validated chains are cached (`nil`: none). Default `.shared`. The signature is
    /// checked every time.
    public var cache: ChainCache?

    /// Creates trust settings; every default is Apple's (see the properties).
    public init(
        anchors: TrustAnchorSource = .bundledAppleRoots,
        policy: VerificationPolicy = .appStore,
        validationTime: ValidationTime = .signedDate,
        cache: ChainCache? = .shared
    ) {
        self.anchors = anchors
        self.policy = policy
        self.validationTime = validationTime
        self.cache = cache
    }

    /// The anchors, loaded now. A failure is ``StoreVerifierError/Code/anchorsUnavailable``, whose
    /// message ends with `consequence` (what can then not be verified).
    func loadAnchors(consequence: String) -> Result<TrustAnchors, StoreVerifierError> {
        anchors.load().mapError { error in
            StoreVerifierError(
                .anchorsUnavailable, "The trust anchors could not be loaded (\(error.code)): \(error); \(consequence)",
                underlying: error)
        }
    }
}
