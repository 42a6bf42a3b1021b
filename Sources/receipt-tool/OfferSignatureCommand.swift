import AppStoreServerAPI
import Foundation
import ReceiptCrypto

/// `receipt-tool offer-signature`: a promotional offer signature, version 1.
enum OfferSignatureCommand {
    static let subcommand = Subcommand(
        name: "offer-signature",
        summary: "Sign a promotional offer (version 1, for SKPaymentDiscount).",
        help: """
            USAGE: receipt-tool offer-signature --bundle-id <bid> --key-id <kid> --product-id <id> --offer-id <id>
                                                --nonce <uuid> --timestamp <ms> --private-key <file.p8>
                                                [--app-account-token <uuid>]

            OPTIONS:
              --bundle-id <bid>           The app's bundle id.
              --key-id <kid>              The id of the subscription key in App Store Connect.
              --product-id <id>           The subscription's product id.
              --offer-id <id>             The promotional offer's id.
              --app-account-token <uuid>  The payment's applicationUsername (default: empty).
              --nonce <uuid>              The payment discount's nonce.
              --timestamp <ms>            Milliseconds since 1970, used as given.
              --private-key <file>        The key's .p8 file (PKCS#8, EC P-256).
              -h, --help                  Show help information.

            Signs bundleId, keyId, productId, offerId, appAccountToken, nonce and timestamp joined
            by U+2063 (UUIDs lower-cased) with ECDSA P-256 SHA-256. Prints what was signed, then
            the signature (base64 of the DER signature) as the last line.
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(
            arguments,
            valued: [
                "--bundle-id", "--key-id", "--product-id", "--offer-id", "--app-account-token", "--nonce", "--timestamp", "--private-key",
            ],
            flagNames: [])
        try args.requireNoOperands("offer-signature")
        let bundleID = try args.required("--bundle-id")
        let keyID = try args.required("--key-id")
        let productID = try args.required("--product-id")
        let offerID = try args.required("--offer-id")
        let keyFile = try args.required("--private-key")
        let nonceText = try args.required("--nonce")
        guard let nonce = UUID(uuidString: nonceText) else { throw UsageError("--nonce must be a UUID, found \(nonceText)") }
        let timestampText = try args.required("--timestamp")
        guard let timestamp = Int64(timestampText), timestamp >= 0 else {
            throw UsageError("--timestamp must be milliseconds since 1970, found \(timestampText)")
        }
        let token = args.value("--app-account-token") ?? ""
        if !token.isEmpty, UUID(uuidString: token) == nil { throw UsageError("--app-account-token must be a UUID, found \(token)") }
        let pem = String(decoding: try readInput(keyFile, limit: 64 << 10), as: UTF8.self)
        let key: PrivateKey
        do throws(CryptoError) {
            key = try PrivateKey(pemEncoded: pem)
        } catch {
            throw ToolFailure("\(keyFile): \(error)")
        }
        let creator = try PromotionalOfferSignatureCreator(privateKey: key, keyID: keyID, bundleID: bundleID)
        let payload = creator.payload(productID: productID, offerID: offerID, appAccountToken: token, nonce: nonce, timestamp: timestamp)
        let signature = try creator.signature(
            productID: productID, offerID: offerID, appAccountToken: token, nonce: nonce, timestamp: timestamp)
        printOut(
            [
                "Signed (joined by U+2063): \(payload.replacingOccurrences(of: PromotionalOfferSignatureCreator.separator, with: " | "))",
                "Nonce: \(nonce.uuidString.lowercased())", "Timestamp: \(timestamp)", signature,
            ].joined(separator: "\n"))
        return ExitStatus.success
    }
}
