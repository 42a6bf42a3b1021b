public import JSON

/// The error every `JWS` API throws: a stable, extensible ``Code``, the byte offset of the problem
/// in the token (or in the JSON text, when a payload is decoded on its own), a reason, and the
/// `JSON.JSONError` behind a JSON problem.
///
/// Offsets inside the header or payload point at the base64url character that encodes the
/// offending decoded byte, so they always index the text the caller passed in. Equality compares
/// the code and the offset only. New codes may be added later; switch over ``code`` with a
/// `default` branch.
public struct JWSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable value that can grow without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Kind: UInt8, Sendable {
            case tokenTooLarge = 1
            case wrongSegmentCount
            case invalidBase64URL
            case headerTooLarge
            case invalidHeader
            case tooManyCertificates
            case certificateTooLarge
            case invalidCertificateEncoding
            case signatureTooLarge
            case invalidJSON
            case invalidField
            case notAJWS
        }

        let kind: Kind

        /// The token is longer than ``JWSLimits/maximumTokenSize``.
        public static let tokenTooLarge = Code(kind: .tokenTooLarge)
        /// The token does not have exactly three dot-separated segments.
        public static let wrongSegmentCount = Code(kind: .wrongSegmentCount)
        /// A segment is not strict base64url: a character outside the URL-safe alphabet (including
        /// whitespace and `=` padding), a dangling character, or non-zero unused bits in the last
        /// character.
        public static let invalidBase64URL = Code(kind: .invalidBase64URL)
        /// The decoded header is longer than ``JWSLimits/maximumHeaderSize``.
        public static let headerTooLarge = Code(kind: .headerTooLarge)
        /// The header is JSON but not a JOSE header this library reads: not an object, no `alg`,
        /// or `alg`, `kid`, `typ` or `x5c` of the wrong type.
        public static let invalidHeader = Code(kind: .invalidHeader)
        /// `x5c` holds more than ``JWSLimits/maximumCertificates`` certificates.
        public static let tooManyCertificates = Code(kind: .tooManyCertificates)
        /// A certificate in `x5c` is longer than ``JWSLimits/maximumCertificateSize``.
        public static let certificateTooLarge = Code(kind: .certificateTooLarge)
        /// A certificate in `x5c` is not strict standard base64 (RFC 7515 §4.1.6), or is empty.
        public static let invalidCertificateEncoding = Code(kind: .invalidCertificateEncoding)
        /// The signature is longer than ``JWSLimits/maximumSignatureSize``.
        public static let signatureTooLarge = Code(kind: .signatureTooLarge)
        /// The header or payload is not strict JSON (see ``JWSError/underlying`` for the JSON code:
        /// duplicate key, invalid UTF-8, trailing data, limits, ...).
        public static let invalidJSON = Code(kind: .invalidJSON)
        /// A payload field has the wrong JSON type or a value its type cannot hold (an integer
        /// beyond 64 bits, a fraction where an integer belongs, a date out of range).
        public static let invalidField = Code(kind: .invalidField)
        /// The input is none of the accepted forms (a compact JWS, or a notification body
        /// `{"signedPayload": "…"}`).
        public static let notAJWS = Code(kind: .notAJWS)

        /// A short stable name such as `wrongSegmentCount`.
        public var description: String {
            switch kind {
            case .tokenTooLarge: "tokenTooLarge"
            case .wrongSegmentCount: "wrongSegmentCount"
            case .invalidBase64URL: "invalidBase64URL"
            case .headerTooLarge: "headerTooLarge"
            case .invalidHeader: "invalidHeader"
            case .tooManyCertificates: "tooManyCertificates"
            case .certificateTooLarge: "certificateTooLarge"
            case .invalidCertificateEncoding: "invalidCertificateEncoding"
            case .signatureTooLarge: "signatureTooLarge"
            case .invalidJSON: "invalidJSON"
            case .invalidField: "invalidField"
            case .notAJWS: "notAJWS"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// Byte offset of the problem: in the token for ``CompactJWS`` and the payload decoders it
    /// calls, in the JSON text for a payload decoded from JSON on its own.
    public let offset: Int?
    /// A sentence for people; not part of equality.
    public let reason: String
    /// The JSON error behind ``Code/invalidJSON`` and ``Code/invalidField`` (its offset is in the
    /// decoded JSON text).
    public let underlying: JSONError?

    /// Creates an error.
    public init(code: Code, offset: Int?, reason: String, underlying: JSONError? = nil) {
        self.code = code
        self.offset = offset
        self.reason = reason
        self.underlying = underlying
    }

    /// `"<code> at offset <n>: <reason>"`.
    public var description: String {
        if let offset { return "\(code) at offset \(offset): \(reason)" }
        return "\(code): \(reason)"
    }

    /// Equality as described on the type.
    public static func == (lhs: JWSError, rhs: JWSError) -> Bool {
        lhs.code == rhs.code && lhs.offset == rhs.offset
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(offset)
    }

    @inline(never)
    static func make(_ code: Code, _ offset: Int?, _ reason: String) -> JWSError {
        JWSError(code: code, offset: offset, reason: reason)
    }

    /// A JSON error in decoded text: ``Code/invalidField`` for type and range problems, otherwise
    /// ``Code/invalidJSON``; the offset stays in the JSON text (see ``mapped(toSegmentAt:)``).
    @inline(never)
    static func json(_ error: JSONError, context: String) -> JWSError {
        let code: Code = error.code == .typeMismatch || error.code == .numberDoesNotFit ? .invalidField : .invalidJSON
        return JWSError(code: code, offset: error.offset, reason: "\(context): \(error.reason)", underlying: error)
    }

    /// This error with its offset (one in decoded bytes of a base64url segment) moved to the
    /// character of the token that encodes that byte.
    func mapped(toSegmentAt start: Int) -> JWSError {
        guard let offset else { return self }
        return JWSError(code: code, offset: start + offset / 3 * 4 + offset % 3, reason: reason, underlying: underlying)
    }
}
