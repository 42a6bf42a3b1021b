public import Foundation
import Internals
public import JSON
public import JWS
public import ReceiptCrypto

/// An ES256 JSON Web Token signed with a bare key (no certificate chain): the bearer tokens of the
/// App Store Server API and the JWS signatures of promotional offers and introductory-offer
/// eligibility. Whoever holds the public key of the `.p8` can check one with
/// ``verifiesSignature(with:)``.
public struct SignedJWT: Sendable {
    /// The token, split.
    public let jws: CompactJWS
    /// The claims: the payload as a strict JSON object.
    public let claims: JSONValue

    /// Splits `token` and reads its payload as a JSON object; verifies nothing.
    /// - Throws: `JWSError` when the token is not a compact JWS, `JSONError` when its payload
    ///   is not a strict JSON object.
    public init(_ token: String, limits: JWSLimits = .default) throws {
        jws = try CompactJWS(token, limits: limits)
        claims = try JSONValue.parse(jws.unverifiedPayload, options: limits.jsonOptions)
        guard case .object = claims else {
            throw JSONError(code: .typeMismatch, offset: 0, reason: "the claims are \(claims.kindName), not an object")
        }
    }

    /// The header's `alg`.
    public var algorithm: JWSAlgorithm { jws.header.algorithm }
    /// The header's `kid`.
    public var keyID: String? { jws.header.keyID }
    /// The header's `typ`.
    public var type: String? { jws.header.type }

    /// Whether the header says ES256 and the 64-byte `r ‖ s` signature verifies over
    /// `header.payload` with `publicKey` (a P-256 key).
    public func verifiesSignature(with publicKey: PublicKey) -> Bool {
        algorithm == .es256 && publicKey.ecCoordinateByteCount == 32
            && publicKey.verify(rawECDSASignature: jws.signature[...], over: jws.signingInput, digest: .sha256)
    }

    /// A string claim.
    public func string(_ name: String) -> String? { claims[name]?.stringValue }
    /// An integer claim (`iat`, `exp`).
    public func integer(_ name: String) -> Int64? { claims[name]?.int64Value }

    /// Signs `claims` (members in the order given) as an ES256 JWT with the header
    /// `{"alg":"ES256","kid":keyID,"typ":"JWT"}`.
    /// - Throws: `CryptoError` when `key` cannot sign ES256 (it must be a P-256 key).
    public static func sign(claims: [(String, JSONValue)], keyID: String, key: PrivateKey) throws(CryptoError) -> String {
        var header = JSONWriter(indent: 0)
        header.beginObject()
        header.string("alg", "ES256")
        header.string("kid", keyID)
        header.string("typ", "JWT")
        header.endObject()
        let payload = JSONValue.object(claims).jsonBytes()
        let signingInput =
            Base64.encodedBytes(header.output, alphabet: .url) + [UInt8(ascii: ".")] + Base64.encodedBytes(payload, alphabet: .url)
        let signature = try key.signRawECDSA(signingInput, digest: .sha256)
        return String(decoding: signingInput, as: UTF8.self) + "." + Base64.encode(signature, alphabet: .url)
    }
}

/// The developer's App Store Connect API key: the issuer id and key id shown in App Store Connect
/// and the private key of the downloaded `.p8` file (PKCS#8, EC P-256).
public struct AppStoreConnectKey: Sendable {
    /// The issuer id (`iss`).
    public let issuerID: String
    /// The key id (`kid`).
    public let keyID: String
    /// The private key.
    public let privateKey: PrivateKey

    /// A key from an already-read private key.
    /// - Throws: ``AppStoreServerAPIError/Code/invalidConfiguration`` when the key is not EC P-256
    ///   or an identifier is empty.
    public init(issuerID: String, keyID: String, privateKey: PrivateKey) throws(AppStoreServerAPIError) {
        guard !issuerID.isEmpty, !keyID.isEmpty else {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "the issuer id and the key id must not be empty")
        }
        guard (try? privateKey.publicKey.ecCoordinateByteCount) == 32 else {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "the key is \(privateKey.kind), not EC P-256 (ES256)")
        }
        self.issuerID = issuerID
        self.keyID = keyID
        self.privateKey = privateKey
    }

    /// A key from the text of a `.p8` file (`-----BEGIN PRIVATE KEY-----`, PKCS#8).
    /// - Throws: ``AppStoreServerAPIError/Code/invalidConfiguration`` when the text holds no
    ///   unencrypted P-256 private key.
    public init(issuerID: String, keyID: String, p8 text: String) throws(AppStoreServerAPIError) {
        let key: PrivateKey
        do throws(CryptoError) {
            key = try PrivateKey(pemEncoded: text)
        } catch {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "the .p8 text holds no readable private key: \(error)")
        }
        try self.init(issuerID: issuerID, keyID: keyID, privateKey: key)
    }
}

/// A bearer token for the App Store Server API and its lifetime.
public struct APIToken: Sendable, Hashable {
    /// The compact JWT.
    public let text: String
    /// `iat`, whole seconds since 1970.
    public let issuedAt: Int64
    /// `exp`, whole seconds since 1970.
    public let expiresAt: Int64
}

/// Makes App Store Server API bearer tokens: header `alg` ES256, `kid`, `typ` JWT; claims `iss`,
/// `iat`, `exp`, `aud` = `appstoreconnect-v1`, `bid`.
public struct APITokenSigner: Sendable {
    /// `appstoreconnect-v1`.
    public static let audience = "appstoreconnect-v1"
    /// The longest lifetime Apple accepts: 60 minutes.
    public static let maximumLifetime: TimeInterval = 3600

    /// The API key.
    public let key: AppStoreConnectKey
    /// `bid`.
    public let bundleID: String
    /// Seconds from `iat` to `exp` (whole seconds, at most ``maximumLifetime``).
    public let lifetime: TimeInterval

    /// Creates a signer.
    /// - Parameters:
    ///   - key: the App Store Connect key that signs.
    ///   - bundleID: the app's bundle id (`bid`).
    ///   - lifetime: seconds a token lives, 1 to 3600 (Apple's libraries use 300).
    /// - Throws: ``AppStoreServerAPIError/Code/invalidConfiguration`` for a lifetime out of range or
    ///   an empty bundle id.
    public init(key: AppStoreConnectKey, bundleID: String, lifetime: TimeInterval = 300) throws(AppStoreServerAPIError) {
        guard lifetime >= 1, lifetime <= Self.maximumLifetime else {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "a token lifetime must be 1 to 3600 seconds, not \(lifetime)")
        }
        guard !bundleID.isEmpty else {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "the bundle id must not be empty")
        }
        self.key = key
        self.bundleID = bundleID
        self.lifetime = lifetime.rounded(.down)
    }

    /// A token issued at `date` (rounded down to the second).
    /// - Throws: ``AppStoreServerAPIError/Code/invalidConfiguration`` when signing fails.
    public func token(issuedAt date: Date) throws(AppStoreServerAPIError) -> APIToken {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard let iat = Int64(exactly: seconds), let life = Int64(exactly: lifetime) else {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "the clock reads \(date), which a token cannot carry")
        }
        let exp = iat + life
        let claims: [(String, JSONValue)] = [
            ("iss", .string(key.issuerID)), ("iat", .number(String(iat))), ("exp", .number(String(exp))),
            ("aud", .string(Self.audience)), ("bid", .string(bundleID)),
        ]
        do throws(CryptoError) {
            let text = try SignedJWT.sign(claims: claims, keyID: key.keyID, key: key.privateKey)
            return APIToken(text: text, issuedAt: iat, expiresAt: exp)
        } catch {
            throw AppStoreServerAPIError(code: .invalidConfiguration, reason: "the token could not be signed: \(error)")
        }
    }
}

/// One token reused until shortly before it expires, then replaced; safe from any thread.
final class TokenCache: Sendable {
    let signer: APITokenSigner
    /// Seconds before `exp` at which a new token is made.
    let refreshMargin: TimeInterval
    let current = Locked<APIToken?>(nil)

    init(signer: APITokenSigner, refreshMargin: TimeInterval) {
        self.signer = signer
        self.refreshMargin = min(max(0, refreshMargin), signer.lifetime / 2)
    }

    /// The cached token when it is still good at `now` (issued no later than now and expiring
    /// more than the margin after it), else a new one.
    func token(now: Date) throws(AppStoreServerAPIError) -> APIToken {
        let seconds = now.timeIntervalSince1970
        if let token = current.withLock({ $0 }), Double(token.issuedAt) <= seconds + 1,
            Double(token.expiresAt) - refreshMargin > seconds
        {
            return token
        }
        let fresh = try signer.token(issuedAt: now)
        current.withLock { $0 = fresh }
        return fresh
    }
}
