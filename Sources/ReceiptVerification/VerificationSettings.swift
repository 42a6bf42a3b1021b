public import Foundation
public import JWS
public import ReceiptCrypto
public import Receipts

/// A trust anchor as people name it: the bundled Apple roots, the bundled Xcode StoreKit test
/// certificate, or a certificate file (DER or PEM).
public enum TrustAnchorName: Sendable, Hashable, CustomStringConvertible {
    /// Apple Inc. Root, Apple Root CA - G2 and G3 (``TrustAnchors/appleRoots``).
    case apple
    /// Xcode's StoreKit test certificate (``TrustAnchors/storeKitTest``).
    case xcode
    /// A certificate file, DER or PEM.
    case file(String)

    /// `apple`, `xcode`, or any other text as a file path.
    public init(name: String) {
        switch name {
        case "apple": self = .apple
        case "xcode": self = .xcode
        default: self = .file(name)
        }
    }

    /// `apple`, `xcode` or the path.
    public var description: String {
        switch self {
        case .apple: "apple"
        case .xcode: "xcode"
        case .file(let path): path
        }
    }
}

extension TrustAnchors {
    /// The anchors `sources` name, together (duplicates removed).
    /// - Throws: ``TrustAnchorError`` for the first that cannot be loaded.
    public static func load(_ sources: [TrustAnchorName]) throws(TrustAnchorError) -> TrustAnchors {
        var anchors = TrustAnchors([])
        for source in sources {
            switch source {
            case .apple: anchors = anchors + (try TrustAnchors.appleRoots)
            case .xcode: anchors = anchors + (try TrustAnchors.storeKitTest)
            case .file(let path): anchors = anchors + (try TrustAnchors(contentsOfFile: path))
            }
        }
        return anchors
    }
}

extension VerificationPolicy {
    /// The policy to use when none is named: ``xcode`` when every anchor is the Xcode StoreKit test
    /// certificate (its signatures are checked only under that policy), ``appStore`` otherwise
    /// (no anchors included).
    public static func standard(for sources: [TrustAnchorName]) -> VerificationPolicy {
        !sources.isEmpty && sources.allSatisfy { $0 == .xcode } ? .xcode : .appStore
    }
}

/// Everything a verification needs besides the input, in one value: the anchors, the chain policy
/// (with its revocation), the validation time, the clock, the caches and the expectations of each
/// format. Build it once and make every verifier from it, so that receipts, transaction receipts
/// and signed data are verified under the same trust.
public struct VerificationSettings: Sendable {
    /// The anchors, as named (for messages and for the default policy).
    public var anchorSources: [TrustAnchorName]
    /// The anchors every chain must end in.
    public var anchors: TrustAnchors
    /// The chain policy of app receipts and signed data, revocation included.
    public var policy: VerificationPolicy
    /// When every chain must be valid.
    public var validationTime: ValidationTime
    /// What ``JWSExpectations/maximumAge`` is measured against, and what
    /// ``ValidationTime/now`` means for callers that ask the settings for the present.
    public var clock: @Sendable () -> Date
    /// Parsed certificates and validated chains, shared by every verifier made from the settings
    /// (nil: validate every time).
    public var chainCache: ChainCache?
    /// Parsed JWS headers, shared by the JWS verifiers made from the settings.
    public var headerCache: JWSHeaderCache?
    /// The intermediate pinned for iOS 6 transaction receipts with version-2 signatures (nil:
    /// the bundled Apple iTunes Store CA).
    public var transactionReceiptIntermediate: Certificate?
    /// The intermediate pinned for version-3 signatures (nil: the bundled Apple WWDR CA 2013).
    public var transactionReceiptVersion3Intermediate: Certificate?
    /// What an app receipt must say.
    public var receiptExpectations: ReceiptExpectations
    /// What an iOS 6 transaction receipt must say.
    public var transactionReceiptExpectations: TransactionReceiptExpectations
    /// What signed data must say (each kind checks those it carries).
    public var jwsExpectations: JWSExpectations

    /// Settings over `anchors` already loaded; `policy` nil chooses
    /// ``VerificationPolicy/standard(for:)`` of `sources`, with `revocation`.
    public init(
        anchors: TrustAnchors, sources: [TrustAnchorName], policy: VerificationPolicy? = nil, revocation: RevocationPolicy = .off,
        validationTime: ValidationTime = .signedDate, clock: @escaping @Sendable () -> Date = { Date() },
        chainCache: ChainCache? = ChainCache(), headerCache: JWSHeaderCache? = JWSHeaderCache()
    ) {
        anchorSources = sources
        self.anchors = anchors
        var chosen = policy ?? .standard(for: sources)
        chosen.revocation = revocation
        self.policy = chosen
        self.validationTime = validationTime
        self.clock = clock
        self.chainCache = chainCache
        self.headerCache = headerCache
        receiptExpectations = ReceiptExpectations()
        transactionReceiptExpectations = TransactionReceiptExpectations()
        jwsExpectations = JWSExpectations()
    }

    /// Settings over the anchors `sources` name (default: the Apple roots).
    /// - Throws: ``TrustAnchorError`` when an anchor cannot be loaded.
    public init(
        sources: [TrustAnchorName] = [.apple], policy: VerificationPolicy? = nil, revocation: RevocationPolicy = .off,
        validationTime: ValidationTime = .signedDate
    ) throws(TrustAnchorError) {
        self.init(
            anchors: try TrustAnchors.load(sources), sources: sources, policy: policy, revocation: revocation,
            validationTime: validationTime)
    }

    /// An app receipt verifier under these settings.
    public func appReceiptVerifier(limits: ReceiptLimits = .default) -> AppReceiptVerifier {
        AppReceiptVerifier(format: AppReceiptFormat(policy: policy, limits: limits), anchors: anchors, cache: chainCache, clock: clock)
    }

    /// A JWS verifier of `Value` under these settings.
    public func jwsVerifier<Value: AppStoreSignedPayload>(of type: Value.Type = Value.self, limits: JWSLimits = .default)
        -> SignedDataVerifier<JWSFormat<Value>>
    {
        SignedDataVerifier<JWSFormat<Value>>(
            anchors: anchors, policy: policy, cache: chainCache, limits: limits, headerCache: headerCache, clock: clock)
    }

    /// An iOS 6 transaction receipt verifier: the pinned intermediates (the bundled ones unless
    /// set) and these anchors. (Transaction receipts have their own chain policies, one per
    /// signature layout; ``policy`` does not apply to them.)
    /// - Throws: ``TrustAnchorError`` when a bundled intermediate is missing or altered.
    public func transactionReceiptVerifier(limits: ReceiptLimits = .default) throws(TrustAnchorError) -> TransactionReceiptVerifier {
        let version2: Certificate
        if let pinned = transactionReceiptIntermediate { version2 = pinned } else { version2 = try BundledAnchors.appleITunesStoreCA }
        let version3: Certificate
        if let pinned = transactionReceiptVersion3Intermediate { version3 = pinned } else { version3 = try BundledAnchors.appleWWDRCA2013 }
        return TransactionReceiptVerifier(
            format: TransactionReceiptFormat(intermediate: version2, version3Intermediate: version3, limits: limits), anchors: anchors,
            cache: chainCache, clock: clock)
    }
}
