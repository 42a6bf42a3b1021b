internal import COpenSSL
package import Foundation
package import ReceiptCrypto

/// Owns one OpenSSL `PKCS7` for the duration of a call.
final class PKCS7Handle {
    let pointer: UnsafeMutablePointer<PKCS7>

    /// Parses DER or BER (OpenSSL's `d2i_PKCS7` accepts indefinite lengths and constructed
    /// OCTET STRINGs). Rejects trailing bytes when `allowTrailingBytes` is false.
    init(berEncoded bytes: [UInt8], allowTrailingBytes: Bool = false) throws(CryptoError) {
        guard !bytes.isEmpty else { throw .plain(.emptyInput, "no PKCS#7 bytes") }
        OpenSSLErrorQueue.clear()
        let parsed: (UnsafeMutablePointer<PKCS7>?, Int) = bytes.withUnsafeBufferPointer { buffer in
            // Not empty (checked above), so the base address exists.
            guard let base = buffer.baseAddress else { return (nil, 0) }
            var cursor: UnsafePointer<UInt8>? = base
            let p7 = d2i_PKCS7(nil, &cursor, buffer.count)
            return (p7, cursor.map { $0 - base } ?? 0)
        }
        guard let p7 = parsed.0 else {
            throw .openSSL(.malformedInput, "the bytes are not a PKCS#7 ContentInfo")
        }
        guard allowTrailingBytes || parsed.1 == bytes.count else {
            PKCS7_free(p7)
            throw .plain(.trailingBytes, "\(bytes.count - parsed.1) bytes follow the PKCS#7 ContentInfo")
        }
        pointer = p7
    }

    deinit { PKCS7_free(pointer) }

    /// The encapsulated `data` content, or nil when this is not SignedData over attached data.
    var signedContent: UnsafeMutablePointer<ASN1_OCTET_STRING>? {
        rmshim_PKCS7_signed_data_octets(pointer)
    }
}

/// An `X509_STORE` holding only the given anchors, configured for a verification at `time`.
/// Created and freed within one call.
final class AnchorStore {
    let pointer: OpaquePointer

    init(anchors: [Certificate], time: Date) throws(CryptoError) {
        guard !anchors.isEmpty else { throw .plain(.invalidArgument, "no trust anchors") }
        guard let seconds = TimeConversion.posixSeconds(time) else {
            throw .plain(.invalidArgument, "the validation time \(time) is out of range")
        }
        OpenSSLErrorQueue.clear()
        guard let store = X509_STORE_new() else { throw .allocation("a certificate store") }
        pointer = store
        for anchor in anchors {
            guard X509_STORE_add_cert(store, anchor.x509) == 1 else {
                throw .openSSL(.operationFailed, "X509_STORE_add_cert failed")
            }
        }
        guard let parameters = X509_STORE_get0_param(store) else {
            throw .openSSL(.operationFailed, "X509_STORE_get0_param failed")
        }
        X509_VERIFY_PARAM_set_time(parameters, time_t(seconds))
        _ = X509_VERIFY_PARAM_clear_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        X509_VERIFY_PARAM_set_depth(parameters, 8)
        // PKCS7_verify calls X509_STORE_CTX_set_default(ctx, "smime_sign"), whose purpose check
        // rejects a signer whose extendedKeyUsage lacks emailProtection (or whose keyUsage lacks
        // digitalSignature and nonRepudiation). Apple's receipt leaves have no extendedKeyUsage and
        // pass it, but receipt verification has nothing to do with S/MIME: purpose "any" set on the
        // store is inherited by the context first, so the "smime_sign" default no longer applies.
        guard X509_VERIFY_PARAM_set_purpose(parameters, X509_PURPOSE_ANY) == 1 else {
            throw .openSSL(.operationFailed, "X509_VERIFY_PARAM_set_purpose failed")
        }
    }

    deinit { X509_STORE_free(pointer) }
}

/// The result of ``OpenSSLPKCS7Verifier/verify(pkcs7:anchors:at:)``.
package struct PKCS7VerificationOutcome: Sendable, Hashable {
    /// True only when the signature and the signer's chain to one of the anchors both verified.
    package var isValid: Bool
    /// The encapsulated content, present only when ``isValid`` is true.
    package var content: [UInt8]?
    /// Why verification failed (OpenSSL's messages), nil when valid.
    package var failureReason: String?

    /// Creates an outcome.
    package init(isValid: Bool, content: [UInt8]?, failureReason: String?) {
        self.isValid = isValid
        self.content = content
        self.failureReason = failureReason
    }
}

/// OpenSSL's own PKCS#7 verification, used as a cross-check for the package's Swift PKCS#7 code
/// and as a benchmark baseline. It checks a signature and a chain, nothing about receipts (no
/// marker OIDs, no policy): the package's verifier is ReceiptVerification's, which never uses this.
package enum OpenSSLPKCS7Verifier {
    /// Verifies a PKCS#7 SignedData with attached content using `PKCS7_verify`.
    ///
    /// The store holds only `anchors` (never the system store, no partial chains), the time is
    /// `time`, the purpose is "any", and chain verification is on (no `PKCS7_NOVERIFY`). The signer
    /// certificate and intermediates come from the message, which is how receipts carry them; they
    /// are trusted only if they chain to an anchor.
    ///
    /// - Parameters:
    ///   - der: DER or BER bytes of a ContentInfo. Trailing bytes are refused.
    ///   - anchors: the trusted roots.
    ///   - time: the validation time for every certificate in the chain.
    package static func verify(pkcs7 der: [UInt8], anchors: [Certificate], at time: Date) -> PKCS7VerificationOutcome {
        defer { OpenSSLErrorQueue.clear() }
        do throws(CryptoError) {
            let message = try PKCS7Handle(berEncoded: der)
            guard rmshim_PKCS7_type_is_signed(message.pointer) == 1 else {
                return PKCS7VerificationOutcome(isValid: false, content: nil, failureReason: "not a PKCS#7 SignedData")
            }
            let store = try AnchorStore(anchors: anchors, time: time)
            let output = try MemoryBIO()
            OpenSSLErrorQueue.clear()
            guard PKCS7_verify(message.pointer, nil, store.pointer, nil, output.pointer, 0) == 1 else {
                let reason = OpenSSLErrorQueue.drainedMessage()
                return PKCS7VerificationOutcome(
                    isValid: false, content: nil, failureReason: reason.isEmpty ? "PKCS7_verify failed" : reason)
            }
            return PKCS7VerificationOutcome(isValid: true, content: output.contents(), failureReason: nil)
        } catch {
            return PKCS7VerificationOutcome(isValid: false, content: nil, failureReason: error.description)
        }
    }
}

/// Produces PKCS#7 SignedData with OpenSSL, for tests that cross-check the package's own PKCS#7
/// builder and parser.
package enum CMSSigner {
    /// Signs `content` and returns DER PKCS#7 SignedData (version 1) with the content encapsulated.
    ///
    /// - Parameters:
    ///   - content: the bytes to encapsulate (as `data`) and sign, unchanged (binary mode).
    ///   - signer: the signing certificate; it is included first in `certificates`.
    ///   - key: the signer's private key (RSA or EC).
    ///   - extraCertificates: further certificates to include after the signer, in this order.
    ///   - digest: the message digest (not MD5).
    ///   - signedAttributes: whether to add authenticated attributes (content type, signing time,
    ///     message digest). Without them the signature covers the content directly, as in App Store
    ///     receipts. S/MIME capabilities are never added.
    /// - Throws: ``CryptoError/Code/keyMismatch`` if `key` does not belong to `signer`,
    ///   ``CryptoError/Code/unsupportedAlgorithm`` for MD5, ``CryptoError/Code/operationFailed``
    ///   if OpenSSL fails.
    package static func sign(
        content: [UInt8],
        signer: Certificate,
        key: PrivateKey,
        extraCertificates: [Certificate] = [],
        digest: DigestAlgorithm = .sha256,
        signedAttributes: Bool = true
    ) throws(CryptoError) -> [UInt8] {
        guard !digest.isRefusedForSignatures else {
            throw .plain(.unsupportedAlgorithm, "refusing to sign with \(digest)")
        }
        let md = try digest.evpMD()
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard X509_check_private_key(signer.x509, key.evpKey) == 1 else {
            throw .openSSL(.keyMismatch, "the key does not belong to the signer certificate")
        }
        var flags = Int32(PKCS7_BINARY | PKCS7_NOSMIMECAP | PKCS7_PARTIAL)
        if !signedAttributes { flags |= Int32(PKCS7_NOATTR) }

        guard let p7 = PKCS7_sign(nil, nil, nil, nil, flags) else {
            throw .openSSL(.operationFailed, "PKCS7_sign failed")
        }
        defer { PKCS7_free(p7) }
        guard PKCS7_sign_add_signer(p7, signer.x509, key.evpKey, md, flags) != nil else {
            throw .openSSL(.operationFailed, "PKCS7_sign_add_signer failed")
        }
        for certificate in extraCertificates {
            guard PKCS7_add_certificate(p7, certificate.x509) == 1 else {
                throw .openSSL(.operationFailed, "PKCS7_add_certificate failed")
            }
        }
        let finalized = try withReadOnlyBIO(content) { bio throws(CryptoError) in
            PKCS7_final(p7, bio, flags)
        }
        guard finalized == 1 else { throw .openSSL(.operationFailed, "PKCS7_final failed") }
        guard let der = encodeDER({ i2d_PKCS7(p7, $0) }) else {
            throw .openSSL(.operationFailed, "i2d_PKCS7 failed")
        }
        return der
    }
}
