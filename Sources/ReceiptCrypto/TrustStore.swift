internal import COpenSSL
public import Foundation

/// A set of trust anchors and X.509 path validation against them.
///
/// **The anchors are the only source of trust.** The system trust store is never consulted,
/// partial chains are not accepted (every path must end at one of the anchors, byte for byte as a
/// certificate in the store), and a certificate is never trusted because the message or the caller
/// supplies it as an intermediate. In particular a self-signed root that copies an anchor's subject
/// name but has a different key does not validate.
///
/// A chain whose every certificate the package's own reader accepts, with the algorithms and
/// extensions it knows, is first validated without OpenSSL's certificate parser (`ChainFastPath`:
/// the same path search and checks, OpenSSL verifying every signature); it only ever establishes
/// a chain, and everything else, including every failure and its reason, comes from OpenSSL:
///
/// Validation uses OpenSSL's `X509_verify_cert` with an `X509_STORE` holding only the anchors,
/// created per call (so the type is trivially thread-safe), the given time
/// (`X509_VERIFY_PARAM_set_time`), purpose "any" (no extended key usage is required; Apple's
/// receipt-signing leaves carry none), and a maximum of ``maximumIntermediates`` intermediates. Revocation is not
/// checked.
///
/// Validity bounds follow OpenSSL, not RFC 5280 to the letter: a certificate is valid from its
/// `notBefore` second inclusive up to, but excluding, its `notAfter` second (OpenSSL's
/// `X509_cmp_time` treats "equal" as "earlier"). RFC 5280 calls `notAfter` inclusive; the
/// difference is one second.
public struct TrustStore: Sendable {
    /// The trust anchors, without duplicates, in the order given.
    public let anchors: [Certificate]

    /// The maximum number of intermediates between leaf and anchor (OpenSSL's verify depth).
    public var maximumIntermediates: Int = 8

    /// Creates a store that trusts exactly `anchors`. An empty list trusts nothing: every
    /// validation fails with ``ChainValidationFailure/Reason/noTrustAnchors``.
    public init(anchors: [Certificate]) {
        // Compared in place: sets of anchors are small, and hashing each encoding cost more.
        var unique: [Certificate] = []
        unique.reserveCapacity(anchors.count)
        for anchor in anchors where !unique.contains(where: { $0.derEncoded == anchor.derEncoded }) { unique.append(anchor) }
        self.anchors = unique
    }

    /// Validates `leaf` up to one of the anchors at `time`, using `intermediates` as untrusted
    /// candidates for the path.
    ///
    /// - Parameters:
    ///   - leaf: the end-entity certificate.
    ///   - intermediates: untrusted certificates that may complete the path, in any order. Extra
    ///     certificates are ignored; an anchor found here is used only as the anchor it already is.
    ///   - time: the validation time. Every certificate in the path must be valid at this instant.
    /// - Returns: ``ChainValidationResult/valid(chain:)`` with the path leaf first and anchor last,
    ///   or ``ChainValidationResult/invalid(_:)`` naming the first failure OpenSSL found.
    public func validate(leaf: Certificate, intermediates: [Certificate], at time: Date) -> ChainValidationResult {
        guard !anchors.isEmpty else {
            return .invalid(
                ChainValidationFailure(
                    reason: .noTrustAnchors, depth: nil, certificate: nil,
                    message: "the trust store has no anchors"))
        }
        guard TimeConversion.posixSeconds(time) != nil else {
            return .invalid(
                ChainValidationFailure(
                    reason: .invalidTime, depth: nil, certificate: nil,
                    message: "the validation time \(time) is out of range"))
        }
        if let chain = fastPathChain(leaf: leaf, intermediates: intermediates, at: time) { return .valid(chain: chain) }
        return validateWithOpenSSL(leaf: leaf, intermediates: intermediates, at: time)
    }

    /// The chain ``ChainFastPath`` establishes without OpenSSL's certificate parser, or nil when
    /// it cannot (OpenSSL then decides). Package-visible for the differential tests.
    package func fastPathChain(leaf: Certificate, intermediates: [Certificate], at time: Date) -> [Certificate]? {
        guard !anchors.isEmpty, let seconds = TimeConversion.posixSeconds(time) else { return nil }
        let chain = ChainFastPath.validate(
            leaf: leaf, intermediates: intermediates, anchors: anchors, at: seconds, maximumIntermediates: maximumIntermediates)
        OpenSSLErrorQueue.clear()
        return chain
    }

    /// ``validate(leaf:intermediates:at:)`` by OpenSSL's `X509_verify_cert` alone: the path every
    /// chain the fast path does not establish takes, and the differential tests' oracle.
    package func validateWithOpenSSL(leaf: Certificate, intermediates: [Certificate], at time: Date) -> ChainValidationResult {
        guard !anchors.isEmpty else {
            return .invalid(
                ChainValidationFailure(
                    reason: .noTrustAnchors, depth: nil, certificate: nil,
                    message: "the trust store has no anchors"))
        }
        guard let seconds = TimeConversion.posixSeconds(time) else {
            return .invalid(
                ChainValidationFailure(
                    reason: .invalidTime, depth: nil, certificate: nil,
                    message: "the validation time \(time) is out of range"))
        }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }

        guard let store = X509_STORE_new() else { return .internalFailure("X509_STORE_new failed") }
        defer { X509_STORE_free(store) }
        for anchor in anchors {
            guard X509_STORE_add_cert(store, anchor.handle.pointer) == 1 else {
                return .internalFailure("X509_STORE_add_cert failed: \(OpenSSLErrorQueue.drainedMessage())")
            }
        }

        guard let untrusted = rmshim_sk_X509_new_null() else { return .internalFailure("sk_X509_new_null failed") }
        defer { rmshim_sk_X509_free(untrusted) }
        for certificate in intermediates {
            guard rmshim_sk_X509_push(untrusted, certificate.handle.pointer) > 0 else {
                return .internalFailure("sk_X509_push failed")
            }
        }

        guard let context = X509_STORE_CTX_new() else { return .internalFailure("X509_STORE_CTX_new failed") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.handle.pointer, untrusted) == 1 else {
            return .internalFailure("X509_STORE_CTX_init failed: \(OpenSSLErrorQueue.drainedMessage())")
        }
        guard let parameters = X509_STORE_CTX_get0_param(context) else {
            return .internalFailure("X509_STORE_CTX_get0_param failed")
        }
        // Explicit time (also sets X509_V_FLAG_USE_CHECK_TIME), never a partial chain, bounded depth.
        X509_VERIFY_PARAM_set_time(parameters, time_t(seconds))
        _ = X509_VERIFY_PARAM_clear_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        X509_VERIFY_PARAM_set_depth(parameters, Int32(max(0, min(maximumIntermediates, 32))))
        guard X509_STORE_CTX_set_purpose(context, X509_PURPOSE_ANY) == 1 else {
            return .internalFailure("X509_STORE_CTX_set_purpose failed: \(OpenSSLErrorQueue.drainedMessage())")
        }

        let verified = X509_verify_cert(context)
        guard verified == 1 else {
            return .invalid(failure(of: context))
        }
        return validatedChain(of: context)
    }

    private func failure(of context: OpaquePointer) -> ChainValidationFailure {
        let code = X509_STORE_CTX_get_error(context)
        let depth = Int(X509_STORE_CTX_get_error_depth(context))
        var certificate: Certificate?
        if let current = X509_STORE_CTX_get_current_cert(context), X509_up_ref(current) == 1 {
            certificate = try? Certificate(owning: current)
        }
        let message = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "verification failed"
        return ChainValidationFailure(
            reason: ChainValidationFailure.Reason(openSSLCode: code, message: message),
            depth: depth,
            certificate: certificate,
            message: message
        )
    }

    private func validatedChain(of context: OpaquePointer) -> ChainValidationResult {
        guard let stack = X509_STORE_CTX_get1_chain(context) else {
            return .internalFailure("X509_STORE_CTX_get1_chain returned no chain")
        }
        defer { rmshim_sk_X509_pop_free(stack) }
        let count = rmshim_sk_X509_num(stack)
        var chain: [Certificate] = []
        if count > 0 {
            for index in 0..<count {
                guard let x509 = rmshim_sk_X509_value(stack, index), X509_up_ref(x509) == 1 else {
                    return .internalFailure("could not read the validated chain")
                }
                do {
                    chain.append(try Certificate(owning: x509))
                } catch {
                    return .internalFailure("could not re-encode the validated chain: \(error)")
                }
            }
        }
        // Belt and braces: the path must end at one of our anchors.
        guard let last = chain.last, anchors.contains(last) else {
            return .internalFailure("OpenSSL accepted a chain that does not end at an anchor")
        }
        return .valid(chain: chain)
    }
}

/// The outcome of ``TrustStore/validate(leaf:intermediates:at:)``.
public enum ChainValidationResult: Sendable, Hashable {
    /// The leaf chains to an anchor; `chain` runs leaf first, anchor last.
    case valid(chain: [Certificate])
    /// No valid path was found.
    case invalid(ChainValidationFailure)

    /// Whether the result is ``valid(chain:)``.
    public var isValid: Bool {
        if case .valid = self { return true }
        return false
    }

    /// The validated chain, or nil.
    public var chain: [Certificate]? {
        if case .valid(let chain) = self { return chain }
        return nil
    }

    /// The failure, or nil.
    public var failure: ChainValidationFailure? {
        if case .invalid(let failure) = self { return failure }
        return nil
    }

    static func internalFailure(_ message: String) -> ChainValidationResult {
        .invalid(ChainValidationFailure(reason: .other(message), depth: nil, certificate: nil, message: message))
    }
}

/// Why a chain did not validate, and where.
public struct ChainValidationFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// A certificate's notAfter is before the validation time.
        case expired
        /// A certificate's notBefore is after the validation time.
        case notYetValid
        /// No path to an anchor: an issuer is missing or the top of the path is not an anchor.
        case untrustedIssuer
        /// The path ends at a self-signed certificate that is not an anchor (including a
        /// self-signed leaf).
        case selfSignedInChain
        /// A certificate's signature does not verify with its issuer's key.
        case signatureFailure
        /// An issuer is not a CA (basicConstraints or keyUsage forbid signing certificates).
        case invalidCA
        /// The path is longer than a pathLenConstraint or the store's maximum allows.
        case pathLength
        /// A key or signature algorithm is unknown, undecodable or inconsistent.
        case unsupportedAlgorithm
        /// A key is too small or a digest too weak for the configured security level.
        case keyTooSmall
        /// A certificate has a critical extension OpenSSL does not handle.
        case unhandledCriticalExtension
        /// A certificate's extensions are malformed or inconsistent.
        case invalidExtension
        /// A validity field cannot be parsed.
        case malformedCertificate
        /// The store has no anchors.
        case noTrustAnchors
        /// The validation time cannot be represented.
        case invalidTime
        /// Anything else, with OpenSSL's message.
        case other(String)

        init(openSSLCode code: Int32, message: String) {
            switch code {
            case X509_V_ERR_CERT_HAS_EXPIRED:
                self = .expired
            case X509_V_ERR_CERT_NOT_YET_VALID:
                self = .notYetValid
            case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
                X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_UNTRUSTED,
                X509_V_ERR_CERT_REJECTED:
                self = .untrustedIssuer
            case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
                self = .selfSignedInChain
            case X509_V_ERR_CERT_SIGNATURE_FAILURE, X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE:
                self = .signatureFailure
            case X509_V_ERR_INVALID_CA, X509_V_ERR_KEYUSAGE_NO_CERTSIGN, X509_V_ERR_INVALID_NON_CA:
                self = .invalidCA
            case X509_V_ERR_PATH_LENGTH_EXCEEDED, X509_V_ERR_CERT_CHAIN_TOO_LONG:
                self = .pathLength
            case X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY, X509_V_ERR_NO_ISSUER_PUBLIC_KEY,
                X509_V_ERR_UNSUPPORTED_SIGNATURE_ALGORITHM, X509_V_ERR_SIGNATURE_ALGORITHM_MISMATCH,
                X509_V_ERR_SIGNATURE_ALGORITHM_INCONSISTENCY, X509_V_ERR_EC_KEY_EXPLICIT_PARAMS:
                self = .unsupportedAlgorithm
            case X509_V_ERR_EE_KEY_TOO_SMALL, X509_V_ERR_CA_KEY_TOO_SMALL, X509_V_ERR_CA_MD_TOO_WEAK:
                self = .keyTooSmall
            case X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION:
                self = .unhandledCriticalExtension
            case X509_V_ERR_INVALID_EXTENSION, X509_V_ERR_INVALID_POLICY_EXTENSION,
                X509_V_ERR_PATHLEN_INVALID_FOR_NON_CA, X509_V_ERR_KU_KEY_CERT_SIGN_INVALID_FOR_NON_CA:
                self = .invalidExtension
            case X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD, X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD:
                self = .malformedCertificate
            default:
                self = .other(message)
            }
        }

        /// A one-line rendering for logs.
        public var description: String {
            switch self {
            case .expired: "expired"
            case .notYetValid: "notYetValid"
            case .untrustedIssuer: "untrustedIssuer"
            case .selfSignedInChain: "selfSignedInChain"
            case .signatureFailure: "signatureFailure"
            case .invalidCA: "invalidCA"
            case .pathLength: "pathLength"
            case .unsupportedAlgorithm: "unsupportedAlgorithm"
            case .keyTooSmall: "keyTooSmall"
            case .unhandledCriticalExtension: "unhandledCriticalExtension"
            case .invalidExtension: "invalidExtension"
            case .malformedCertificate: "malformedCertificate"
            case .noTrustAnchors: "noTrustAnchors"
            case .invalidTime: "invalidTime"
            case .other(let message): "other(\(message))"
            }
        }
    }

    /// The kind of failure.
    public var reason: Reason
    /// The position in the path of the failing certificate (0 = leaf), when known.
    public var depth: Int?
    /// The certificate OpenSSL was examining when it failed, when known.
    public var certificate: Certificate?
    /// OpenSSL's description of the failure.
    public var message: String

    /// The failing certificate's subject, when known.
    public var subject: DistinguishedName? { certificate?.subject }

    /// Creates a failure value.
    public init(reason: Reason, depth: Int?, certificate: Certificate?, message: String) {
        self.reason = reason
        self.depth = depth
        self.certificate = certificate
        self.message = message
    }

    /// A one-line rendering for logs.
    public var description: String {
        var text = "\(reason)"
        if let depth { text += " at depth \(depth)" }
        if let subject { text += " (\(subject))" }
        return text + ": \(message)"
    }
}
