public import Foundation
import Internals
public import ReceiptCrypto

/// Signs payloads as compact JWS the way the App Store does (StoreKit 2 transactions, renewal
/// info, app transactions, App Store Server Notifications V2): header `{"alg":"ES256","x5c":[…]}`
/// with the chain leaf first, the ES256 signature in its raw `r ‖ s` form, every segment
/// base64url without padding.
///
/// For tests, fixtures, `receipt-tool make --jws` and the simulated App Store. Nothing it signs is
/// trusted unless a verifier is given the chain's root as an anchor.
public struct JWSSigner: Sendable {
    /// The leaf's P-256 private key.
    public var key: PrivateKey
    /// The certificates for `x5c`, leaf first (Apple: leaf, WWDR G6, Apple Root CA - G3; Xcode:
    /// one self-signed certificate).
    public var chain: [Certificate]
    /// An optional `kid` header member (Xcode writes `Apple_Xcode_Key`).
    public var keyIdentifier: String?
    /// An optional `typ` header member (Xcode writes `JWT`).
    public var type: String?

    /// Creates a signer.
    public init(key: PrivateKey, chain: [Certificate], keyIdentifier: String? = nil, type: String? = nil) {
        self.key = key
        self.chain = chain
        self.keyIdentifier = keyIdentifier
        self.type = type
    }

    /// The header JSON: `kid` and `typ` when set, then `alg` and `x5c`, as Xcode and Apple order them.
    public var headerJSON: [UInt8] {
        var text = "{"
        if let keyIdentifier { text += "\"kid\":\(Self.quoted(keyIdentifier))," }
        if let type { text += "\"typ\":\(Self.quoted(type))," }
        text += "\"alg\":\"ES256\",\"x5c\":["
        text += chain.map { "\"\(Base64.encode($0.derEncoded))\"" }.joined(separator: ",")
        text += "]}"
        return Array(text.utf8)
    }

    /// Signs `payload` (exact JSON bytes, written as given) with a header built from ``chain``.
    /// - Throws: `CryptoError` when the key cannot sign ES256 (it must be a P-256 key).
    public func sign(payload: [UInt8]) throws(CryptoError) -> String {
        try sign(payload: payload, header: headerJSON)
    }

    /// Signs `payload` under a header given as exact bytes (for tests that forge headers).
    public func sign(payload: [UInt8], header: [UInt8]) throws(CryptoError) -> String {
        let signingInput = Base64.encodedBytes(header, alphabet: .url) + [UInt8(ascii: ".")] + Base64.encodedBytes(payload, alphabet: .url)
        let signature = try key.signRawECDSA(signingInput, digest: .sha256)
        return String(decoding: signingInput, as: UTF8.self) + "." + Base64.encode(signature, alphabet: .url)
    }

    /// A JSON string literal for a header value.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension TestPKI {
    /// A JWS signer with this PKI's leaf and `x5c` = leaf, intermediate, root (Apple's order).
    public func jwsSigner() -> JWSSigner {
        JWSSigner(key: leafKey, chain: [leaf, intermediate, root])
    }

    /// A self-signed P-256 certificate like the one Xcode's StoreKit testing signs JWS with
    /// (`CN=StoreKit Testing in Xcode`, valid one year from `notBefore`), and a signer whose `x5c`
    /// holds only it, with Xcode's `kid` and `typ`.
    public static func xcodeJWS(notBefore: Date = Date(timeIntervalSince1970: 1_696_118_400)) throws(CryptoError) -> JWSSigner {
        let key = try PrivateKey.generateP256()
        var builder = CertificateBuilder(
            subject: [("CN", "StoreKit Testing in Xcode")], serialNumber: TestPKI.randomSerial(), notBefore: notBefore,
            notAfter: notBefore.addingTimeInterval(365 * 86_400), publicKey: try key.publicKey)
        builder.basicConstraints = .ca()
        builder.keyUsage = [.digitalSignature, .keyCertSign]
        let certificate = try builder.selfSigned(with: key)
        return JWSSigner(key: key, chain: [certificate], keyIdentifier: "Apple_Xcode_Key", type: "JWT")
    }
}
