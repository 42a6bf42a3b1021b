public import Foundation
import Internals
import JSON
import JWS
public import ReceiptCrypto

/// Promotional offer signatures, version 1: ECDSA P-256 with SHA-256 over
/// `bundleId ⁣ keyId ⁣ productId ⁣ offerId ⁣ appAccountToken ⁣ nonce ⁣ timestamp`, the parts joined by
/// U+2063 (INVISIBLE SEPARATOR), the app account token and nonce lower-cased; the signature is
/// DER (`Ecdsa-Sig-Value`) in standard base64, as StoreKit's `SKPaymentDiscount` takes it.
public struct PromotionalOfferSignatureCreator: Sendable {
    /// U+2063 INVISIBLE SEPARATOR.
    public static let separator = "\u{2063}"

    /// The subscription key from App Store Connect (P-256).
    public let privateKey: PrivateKey
    /// Its key id.
    public let keyID: String
    /// The app's bundle id.
    public let bundleID: String

    /// Creates a signature creator.
    /// - Throws: ``AppStoreServerAPIError/Code/invalidConfiguration`` when the key is not P-256.
    public init(privateKey: PrivateKey, keyID: String, bundleID: String) throws(AppStoreServerAPIError) {
        guard (try? privateKey.publicKey.ecCoordinateByteCount) == 32 else {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "the key is \(privateKey.kind), not EC P-256")
        }
        self.privateKey = privateKey
        self.keyID = keyID
        self.bundleID = bundleID
    }

    /// The text that is signed (its UTF-8 bytes).
    public static func payload(
        bundleID: String, keyID: String, productID: String, offerID: String, appAccountToken: String, nonce: String, timestamp: Int64
    ) -> String {
        [bundleID, keyID, productID, offerID, appAccountToken.lowercased(), nonce.lowercased(), String(timestamp)]
            .joined(separator: separator)
    }

    /// The text this creator signs for an offer.
    public func payload(productID: String, offerID: String, appAccountToken: String, nonce: UUID, timestamp: Int64) -> String {
        Self.payload(
            bundleID: bundleID, keyID: keyID, productID: productID, offerID: offerID, appAccountToken: appAccountToken,
            nonce: nonce.uuidString, timestamp: timestamp)
    }

    /// The signature: base64 of the DER ECDSA signature over ``payload(productID:offerID:appAccountToken:nonce:timestamp:)``.
    /// - Parameters:
    ///   - productID: the subscription's product id.
    ///   - offerID: the promotional offer's id from App Store Connect.
    ///   - appAccountToken: the payment's `applicationUsername` (a UUID, or empty); lower-cased here.
    ///   - nonce: the payment discount's nonce; written lower-cased.
    ///   - timestamp: milliseconds since 1970, as given to StoreKit.
    /// - Throws: ``AppStoreServerAPIError/Code/invalidConfiguration`` when signing fails.
    public func signature(
        productID: String, offerID: String, appAccountToken: String, nonce: UUID, timestamp: Int64
    ) throws(AppStoreServerAPIError) -> String {
        let text = payload(productID: productID, offerID: offerID, appAccountToken: appAccountToken, nonce: nonce, timestamp: timestamp)
        do throws(CryptoError) {
            return Base64.encode(try privateKey.sign(Array(text.utf8), digest: .sha256))
        } catch {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "the offer could not be signed: \(error)")
        }
    }

    /// Whether `signature` (base64 of a DER ECDSA signature) verifies over `payload` with `publicKey`.
    public static func verify(signature: String, payload: String, publicKey: PublicKey) -> Bool {
        guard let der = try? Base64.decode(Array(signature.utf8), rules: .strictStandard), !der.isEmpty else { return false }
        return publicKey.ecCoordinateByteCount == 32 && publicKey.verify(signature: der, over: Array(payload.utf8), digest: .sha256)
    }
}

/// What a JWS signature for an offer says: the claims every one carries and the `aud` of its kind.
public struct OfferJWSExpectations: Sendable, Hashable {
    /// `kid` in the header.
    public var keyID: String
    /// `iss`.
    public var issuerID: String
    /// `bid`.
    public var bundleID: String
    /// `aud`: ``JWSSignatureCreator/promotionalOfferAudience`` or
    /// ``JWSSignatureCreator/introductoryOfferEligibilityAudience``.
    public var audience: String

    /// Creates expectations.
    public init(keyID: String, issuerID: String, bundleID: String, audience: String) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.audience = audience
    }
}

/// Signs the JWS signatures StoreKit takes for offers: promotional offers (version 2) and
/// introductory-offer eligibility. Each is an ES256 JWT (header `alg`, `kid`, `typ` JWT) with the
/// claims `iss`, `iat`, `aud`, `bid`, `nonce` (a fresh lower-cased UUID) and the offer's own claims.
public struct JWSSignatureCreator: Sendable {
    /// `promotional-offer`.
    public static let promotionalOfferAudience = "promotional-offer"
    /// `introductory-offer-eligibility`.
    public static let introductoryOfferEligibilityAudience = "introductory-offer-eligibility"

    /// The key (issuer id, key id, P-256 private key).
    public let key: AppStoreConnectKey
    /// The app's bundle id (`bid`).
    public let bundleID: String
    /// The clock `iat` is read from.
    public let clock: @Sendable () -> Date

    /// Creates a creator.
    public init(key: AppStoreConnectKey, bundleID: String, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.key = key
        self.bundleID = bundleID
        self.clock = clock
    }

    /// A promotional offer signature (version 2): claims `productId`, `offerIdentifier` and, when
    /// given, `transactionId`.
    /// - Throws: ``AppStoreServerAPIError/Code/invalidConfiguration`` when signing fails.
    public func promotionalOffer(productID: String, offerIdentifier: String, transactionID: String? = nil) throws(AppStoreServerAPIError)
        -> String
    {
        var claims: [(String, JSONValue)] = [("productId", .string(productID)), ("offerIdentifier", .string(offerIdentifier))]
        if let transactionID { claims.append(("transactionId", .string(transactionID))) }
        return try sign(audience: Self.promotionalOfferAudience, claims)
    }

    /// An introductory-offer eligibility signature: claims `productId`, `allowIntroductoryOffer`
    /// and `transactionId`.
    /// - Throws: ``AppStoreServerAPIError/Code/invalidConfiguration`` when signing fails.
    public func introductoryOfferEligibility(
        productID: String, allowIntroductoryOffer: Bool, transactionID: String
    ) throws(AppStoreServerAPIError) -> String {
        try sign(
            audience: Self.introductoryOfferEligibilityAudience,
            [
                ("productId", .string(productID)), ("allowIntroductoryOffer", .bool(allowIntroductoryOffer)),
                ("transactionId", .string(transactionID)),
            ])
    }

    func sign(audience: String, _ specific: [(String, JSONValue)]) throws(AppStoreServerAPIError) -> String {
        let iat = Int64(exactly: clock().timeIntervalSince1970.rounded(.down)) ?? 0
        let claims: [(String, JSONValue)] =
            [
                ("iss", .string(key.issuerID)), ("iat", .number(String(iat))), ("aud", .string(audience)), ("bid", .string(bundleID)),
                ("nonce", .string(UUID().uuidString.lowercased())),
            ] + specific
        do throws(CryptoError) {
            return try SignedJWT.sign(claims: claims, keyID: key.keyID, key: key.privateKey)
        } catch {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "the signature could not be made: \(error)")
        }
    }

    /// The reasons an offer JWS is not what `expectations` describe, verified with `publicKey`;
    /// empty when it verifies and every claim matches.
    public static func problems(with token: String, publicKey: PublicKey, expecting expectations: OfferJWSExpectations) -> [String] {
        let jwt: SignedJWT
        do {
            jwt = try SignedJWT(token)
        } catch {
            return ["not a JWT: \(error)"]
        }
        var problems: [String] = []
        if jwt.algorithm != .es256 { problems.append("alg is \(jwt.algorithm), not ES256") }
        if jwt.type != "JWT" { problems.append("typ is \(jwt.type ?? "absent"), not JWT") }
        if jwt.keyID != expectations.keyID { problems.append("kid is \(jwt.keyID ?? "absent"), not \(expectations.keyID)") }
        if !jwt.verifiesSignature(with: publicKey) { problems.append("the ES256 signature does not verify with the key") }
        for (name, expected) in [("iss", expectations.issuerID), ("bid", expectations.bundleID), ("aud", expectations.audience)] {
            let actual = jwt.string(name)
            if actual != expected { problems.append("\(name) is \(actual ?? "absent"), not \(expected)") }
        }
        if jwt.integer("iat") == nil { problems.append("iat is not an integer") }
        let nonce = jwt.string("nonce")
        if nonce.flatMap({ UUID(uuidString: $0) }) == nil || nonce != nonce?.lowercased() {
            problems.append("nonce is not a lower-cased UUID")
        }
        return problems
    }
}
