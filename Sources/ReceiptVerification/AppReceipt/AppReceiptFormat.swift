public import Foundation
public import ReceiptCrypto
public import Receipts

/// App Store (and Xcode StoreKit testing) app receipts as a ``SignedFormat``: a PKCS#7 SignedData
/// whose payload is the receipt, read by `Receipts.AppReceipt`.
///
/// The format's own checks are those of the SignedData's one signer, cheapest and most structural
/// first: content type id-data → exactly one SignerInfo → digest (known, not MD5, allowed, listed
/// in SignedData) → the signer certificate among the embedded certificates by issuer and serial
/// number (or subject key identifier) → signature algorithm consistent with key and digest, key
/// size → signed attributes (content type, messageDigest = H(payload)) → the signature over
/// exactly the payload the parser read. The other embedded certificates are the chain's untrusted
/// candidates. Its expectations are ``ReceiptExpectations``.
public struct AppReceiptFormat: SignedFormat {
    /// The chain policy.
    public var policy: VerificationPolicy
    /// Bounds applied while parsing untrusted receipts.
    public var limits: ReceiptLimits
    /// The digests accepted in the SignerInfo. MD5 is refused even when listed.
    public var allowedDigests: Set<DigestAlgorithm> {
        get { signerRules.allowedDigests }
        set { signerRules.allowedDigests = newValue }
    }
    /// The smallest RSA modulus accepted for the signer key. Values below 2048 are raised to 2048.
    public var minimumRSAKeyBits: Int {
        get { signerRules.minimumRSAKeyBits }
        set { signerRules.minimumRSAKeyBits = newValue }
    }
    /// The PKCS#7 signer's rules (digests, key sizes), kept in one place for every format signed
    /// as a SignedData.
    private var signerRules: CMSSignerRules

    /// Creates the format. SHA-1 stays allowed by default because real receipts until 2023 use it.
    public init(
        policy: VerificationPolicy = .appStore, limits: ReceiptLimits = .default,
        allowedDigests: Set<DigestAlgorithm> = [.sha1, .sha256, .sha384, .sha512], minimumRSAKeyBits: Int = 2048
    ) {
        self.policy = policy
        self.limits = limits
        signerRules = CMSSignerRules(allowedDigests: allowedDigests, minimumRSAKeyBits: minimumRSAKeyBits)
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
    public var requiredChecks: [VerificationCheck.Name] { CMSSignerRules.requiredChecks }

    /// The PKCS#7 checks (`PKCS7/CMSSignerRules.swift`), recorded in `run`.
    public func checkSignature(of receipt: AppReceipt, in run: inout VerificationRun) -> SignedBy? {
        guard let envelope = receipt.envelope else {
            run.record(.contentType, false, "the receipt was not parsed from a PKCS#7 envelope")
            return nil
        }
        return signerRules.checkSignature(of: envelope, policy: policy, in: &run)
    }
}
