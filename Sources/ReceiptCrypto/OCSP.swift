public import ASN1
internal import COpenSSL
public import Foundation
import Internals

// OCSP (RFC 6960) through OpenSSL's OCSP API: requests are built, and responses parsed, verified
// and searched, by OpenSSL; nothing here encodes or decodes OCSP's ASN.1 itself.

/// Owns one OpenSSL `OCSP_REQUEST`.
///
/// `@unchecked Sendable`: immutable after `init`; later uses only read it (`OCSP_check_nonce`).
final class OCSPRequestHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(owning pointer: OpaquePointer) { self.pointer = pointer }

    deinit { OCSP_REQUEST_free(pointer) }
}

/// An OCSP request for one certificate: its issuer's name and key hashes and its serial number
/// (a `CertID`), and a nonce, DER-encoded by OpenSSL and ready to be POSTed to a responder.
public struct OCSPRequest: Sendable {
    let handle: OCSPRequestHandle
    /// The certificate asked about.
    public let certificate: Certificate
    /// Its issuer.
    public let issuer: Certificate
    /// The request's DER encoding (`application/ocsp-request`).
    public let derEncoded: [UInt8]
    /// The nonce sent (16 random bytes), or nil when none was.
    public let nonce: [UInt8]?

    /// Builds a request for `certificate`, issued by `issuer`.
    /// - Parameters:
    ///   - digest: the hash of the certificate id: SHA-1 (as `openssl ocsp` and most responders
    ///     use) or SHA-256.
    ///   - withNonce: whether to add a random nonce (RFC 8954) the response must echo.
    /// - Throws: ``CryptoError`` when OpenSSL cannot build or encode the request.
    public init(certificate: Certificate, issuer: Certificate, digest: DigestAlgorithm = .sha1, withNonce: Bool = true)
        throws(CryptoError)
    {
        OpenSSLErrorQueue.clear()
        let md = try digest.evpMD()
        guard let request = OCSP_REQUEST_new() else { throw .allocation("OCSP_REQUEST_new") }
        let handle = OCSPRequestHandle(owning: request)
        guard let id = OCSP_cert_to_id(md, certificate.handle.pointer, issuer.handle.pointer) else {
            throw .openSSL(.operationFailed, "OCSP_cert_to_id failed")
        }
        guard OCSP_request_add0_id(request, id) != nil else {
            OCSP_CERTID_free(id)
            throw .openSSL(.operationFailed, "OCSP_request_add0_id failed")
        }
        var nonce: [UInt8]?
        if withNonce {
            var generator = SystemRandomNumberGenerator()
            var bytes = [UInt8](repeating: 0, count: 16)
            for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
            let added = bytes.withUnsafeMutableBufferPointer { buffer in
                OCSP_request_add1_nonce(request, buffer.baseAddress, Int32(buffer.count))
            }
            guard added == 1 else { throw .openSSL(.operationFailed, "OCSP_request_add1_nonce failed") }
            nonce = bytes
        }
        guard let der = encodeDER({ i2d_OCSP_REQUEST(request, $0) }) else {
            throw .openSSL(.operationFailed, "i2d_OCSP_REQUEST failed")
        }
        self.handle = handle
        self.certificate = certificate
        self.issuer = issuer
        self.derEncoded = der
        self.nonce = nonce
    }
}

/// The `responseStatus` of an OCSP response (RFC 6960 section 4.2.1).
public enum OCSPResponseStatus: Sendable, Hashable, CustomStringConvertible {
    /// The response carries an answer.
    case successful
    /// The request was malformed.
    case malformedRequest
    /// The responder failed internally.
    case internalError
    /// The responder asks to be tried again later.
    case tryLater
    /// The responder requires signed requests.
    case signatureRequired
    /// The responder does not answer for this certificate or client.
    case unauthorized
    /// A status RFC 6960 does not define.
    case other(Int)

    init(_ value: Int32) {
        switch value {
        case OCSP_RESPONSE_STATUS_SUCCESSFUL: self = .successful
        case OCSP_RESPONSE_STATUS_MALFORMEDREQUEST: self = .malformedRequest
        case OCSP_RESPONSE_STATUS_INTERNALERROR: self = .internalError
        case OCSP_RESPONSE_STATUS_TRYLATER: self = .tryLater
        case OCSP_RESPONSE_STATUS_SIGREQUIRED: self = .signatureRequired
        case OCSP_RESPONSE_STATUS_UNAUTHORIZED: self = .unauthorized
        default: self = .other(Int(value))
        }
    }

    /// RFC 6960's name, for example `tryLater`.
    public var description: String {
        switch self {
        case .successful: "successful"
        case .malformedRequest: "malformedRequest"
        case .internalError: "internalError"
        case .tryLater: "tryLater"
        case .signatureRequired: "sigRequired"
        case .unauthorized: "unauthorized"
        case .other(let value): "status \(value)"
        }
    }
}

/// A certificate's status as an OCSP responder gave it.
public enum OCSPCertificateStatus: Sendable, Hashable, CustomStringConvertible {
    /// Not revoked.
    case good
    /// Revoked at `date`, for the CRL reason code `reason` when the responder gave one.
    case revoked(date: Date?, reason: Int?)
    /// The responder does not know the certificate.
    case unknown

    /// `good`, `revoked` or `unknown`.
    public var description: String {
        switch self {
        case .good: "good"
        case .revoked: "revoked"
        case .unknown: "unknown"
        }
    }
}

/// How the nonce of a request and of the response that answered it compare.
public enum OCSPNonceOutcome: Sendable, Hashable {
    /// Both carry the same nonce.
    case matches
    /// The request carried one, the response none (many responders serve pre-signed answers).
    case notEchoed
    /// Neither carries one, or no request is known (a response read from a file).
    case absent
    /// The response carries a different nonce: it answers another request.
    case mismatch
}

/// What a verified OCSP response says about one certificate.
public struct OCSPVerifiedAnswer: Sendable {
    /// The certificate's status.
    public let status: OCSPCertificateStatus
    /// When the status was known to be correct.
    public let thisUpdate: Date
    /// When newer information will be available; nil when the responder did not say.
    public let nextUpdate: Date?
    /// When the response was signed.
    public let producedAt: Date?
    /// The subject of the certificate that signed the response (the issuer or a responder it
    /// authorised).
    public let signer: String
    /// How the nonces compared.
    public let nonce: OCSPNonceOutcome
}

/// An OCSP response as received (DER, `application/ocsp-response`), kept as its bytes.
///
/// Parsing, signature and signer checks and the lookup of the certificate's answer are done by
/// OpenSSL in ``answer(for:issuer:chain:at:request:)``; the value itself holds no OpenSSL object,
/// so it may be shared between threads freely.
public struct OCSPResponse: Sendable {
    /// The bytes, exactly as received.
    public let derEncoded: [UInt8]
    /// The responder's `responseStatus`.
    public let status: OCSPResponseStatus

    /// Parses `derEncoded` far enough to read its status.
    /// - Throws: ``CryptoError/Code/emptyInput``, ``CryptoError/Code/malformedInput`` or
    ///   ``CryptoError/Code/trailingBytes``.
    public init(derEncoded: [UInt8]) throws(CryptoError) {
        let response = try Self.parse(derEncoded)
        defer { OCSP_RESPONSE_free(response) }
        self.derEncoded = derEncoded
        status = OCSPResponseStatus(OCSP_response_status(response))
    }

    static func parse(_ der: [UInt8]) throws(CryptoError) -> OpaquePointer {
        guard !der.isEmpty else { throw .plain(.emptyInput, "no OCSP response bytes") }
        OpenSSLErrorQueue.clear()
        let parsed: (OpaquePointer?, Int) = withNonNullBytes(der) { base, count in
            var cursor: UnsafePointer<UInt8>? = base
            let response = d2i_OCSP_RESPONSE(nil, &cursor, count)
            return (response, cursor.map { $0 - base } ?? 0)
        }
        guard let response = parsed.0 else { throw .openSSL(.malformedInput, "the bytes are not a DER-encoded OCSP response") }
        guard parsed.1 == der.count else {
            OCSP_RESPONSE_free(response)
            throw .plain(.trailingBytes, "\(der.count - parsed.1) bytes follow the OCSP response")
        }
        return response
    }

    /// Verifies the response and returns its answer about `certificate`.
    ///
    /// OpenSSL's `OCSP_basic_verify` checks the signature and that the signer is `issuer` itself or
    /// a certificate `issuer` issued with the OCSP-signing extended key usage, the signer's chain
    /// validated at `time` to the last certificate of `chain` (the only one trusted). The answer is
    /// the single response whose certificate id (SHA-1 or SHA-256) names `certificate` and
    /// `issuer`. Freshness (`thisUpdate`, `nextUpdate`) is the caller's to judge.
    /// - Parameters:
    ///   - chain: the validated chain above `certificate`: its issuer first, the anchor last.
    ///   - request: the request this response answers, whose nonce is compared; nil for a
    ///     response read from a file.
    /// - Throws: ``CryptoError/Code/verificationFailed`` (not successful, bad signature, signer
    ///   not authorised), ``CryptoError/Code/notFound`` (no answer for the certificate),
    ///   ``CryptoError/Code/malformedInput``.
    public func answer(for certificate: Certificate, issuer: Certificate, chain: [Certificate], at time: Date, request: OCSPRequest?)
        throws(CryptoError) -> OCSPVerifiedAnswer
    {
        guard status == .successful else { throw .plain(.verificationFailed, "the responder answered \(status)") }
        guard let anchor = chain.last else { throw .plain(.invalidArgument, "no chain to verify the responder against") }
        guard let seconds = TimeConversion.posixSeconds(time) else {
            throw .plain(.invalidArgument, "the time \(time) cannot be expressed as an X.509 time")
        }
        let response = try Self.parse(derEncoded)
        defer { OCSP_RESPONSE_free(response) }
        defer { OpenSSLErrorQueue.clear() }
        guard let basic = OCSP_response_get1_basic(response) else {
            throw .openSSL(.malformedInput, "the response is not a basic OCSP response")
        }
        defer { OCSP_BASICRESP_free(basic) }

        // The nonce first: a response to another request is refused whatever it says.
        var nonce = OCSPNonceOutcome.absent
        if let request {
            switch OCSP_check_nonce(request.handle.pointer, basic) {
            case 1: nonce = .matches
            case 3: nonce = .notEchoed
            case 0: throw .plain(.verificationFailed, "the response's nonce is not the request's")
            default: nonce = .absent
            }
        }

        // The signature and the signer, against the anchor only (the chain's other certificates
        // are untrusted candidates for the signer's path).
        guard let store = X509_STORE_new() else { throw .allocation("X509_STORE_new") }
        defer { X509_STORE_free(store) }
        guard X509_STORE_add_cert(store, anchor.handle.pointer) == 1 else {
            throw .openSSL(.operationFailed, "X509_STORE_add_cert failed")
        }
        guard let parameters = X509_STORE_get0_param(store) else { throw .openSSL(.operationFailed, "X509_STORE_get0_param failed") }
        X509_VERIFY_PARAM_set_time(parameters, time_t(seconds))
        guard let candidates = rmshim_sk_X509_new_null() else { throw .allocation("sk_X509_new_null") }
        defer { rmshim_sk_X509_free(candidates) }
        for certificate in chain.dropLast() where rmshim_sk_X509_push(candidates, certificate.handle.pointer) <= 0 {
            throw .allocation("sk_X509_push")
        }
        guard OCSP_basic_verify(basic, candidates, store, 0) == 1 else {
            throw .openSSL(.verificationFailed, "the response's signature or signer is not acceptable")
        }
        var signerSubject = "the issuer"
        var signer: OpaquePointer?
        if OCSP_resp_get0_signer(basic, &signer, candidates) == 1, let signer, let name = X509_get_subject_name(signer) {
            signerSubject = "\(DistinguishedName(x509Name: name))"
        }

        // The answer about this certificate, under either certificate id hash.
        for digest in [DigestAlgorithm.sha1, .sha256] {
            guard let id = OCSP_cert_to_id(try digest.evpMD(), certificate.handle.pointer, issuer.handle.pointer) else {
                throw .openSSL(.operationFailed, "OCSP_cert_to_id failed")
            }
            defer { OCSP_CERTID_free(id) }
            var state: Int32 = -1
            var reason: Int32 = -1
            var revoked: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
            var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
            var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
            guard OCSP_resp_find_status(basic, id, &state, &reason, &revoked, &thisUpdate, &nextUpdate) == 1 else { continue }
            guard let this = TimeConversion.date(thisUpdate) else { throw .plain(.malformedInput, "the answer has no readable thisUpdate") }
            let next = nextUpdate.map { TimeConversion.date($0) }
            if let next, next == nil { throw .plain(.malformedInput, "the answer's nextUpdate cannot be read") }
            let status: OCSPCertificateStatus
            switch state {
            case V_OCSP_CERTSTATUS_GOOD: status = .good
            case V_OCSP_CERTSTATUS_REVOKED: status = .revoked(date: TimeConversion.date(revoked), reason: reason >= 0 ? Int(reason) : nil)
            default: status = .unknown
            }
            return OCSPVerifiedAnswer(
                status: status, thisUpdate: this, nextUpdate: next ?? nil,
                producedAt: TimeConversion.date(OCSP_resp_get0_produced_at(basic)),
                signer: signerSubject, nonce: nonce)
        }
        throw .plain(.notFound, "the response holds no answer for serial \(certificate.serialNumberHex) of \(issuer.subject)")
    }
}

extension Certificate {
    /// The OCSP responder URLs of the certificate's Authority Information Access extension
    /// (`id-ad-ocsp`), in certificate order; empty when it names none.
    public var ocspURLs: [String] {
        guard let list = X509_get1_ocsp(handle.pointer) else {
            OpenSSLErrorQueue.clear()
            return []
        }
        defer { X509_email_free(list) }
        var urls: [String] = []
        let count = rmshim_sk_OPENSSL_STRING_num(list)
        if count > 0 {
            for index in 0..<count {
                if let text = rmshim_sk_OPENSSL_STRING_value(list, index) { urls.append(String(cString: text)) }
            }
        }
        return urls
    }
}

extension CertificateExtension {
    /// Authority Information Access (1.3.6.1.5.5.7.1.1, non-critical) naming `ocspURL` as the
    /// certificate's OCSP responder (`id-ad-ocsp`, a uniformResourceIdentifier).
    public static func authorityInformationAccess(ocspURL: String) -> CertificateExtension {
        var writer = DERWriter()
        writer.appendSequence { (descriptions: inout DERWriter) in
            descriptions.appendSequence { (description: inout DERWriter) in
                description.appendObjectIdentifier(ASN1ObjectIdentifier(1, 3, 6, 1, 5, 5, 7, 48, 1))
                description.append(.contextSpecific(6, constructed: false), content: Array(ocspURL.utf8))
            }
        }
        return CertificateExtension(oid: ASN1ObjectIdentifier(1, 3, 6, 1, 5, 5, 7, 1, 1), critical: false, value: writer.bytes)
    }

    /// Extended key usage `id-kp-OCSPSigning` (1.3.6.1.5.5.7.3.9), which makes a certificate its
    /// issuer's authorised OCSP responder.
    public static let ocspSigningPurpose = ASN1ObjectIdentifier(1, 3, 6, 1, 5, 5, 7, 3, 9)
}
