/// The error every `ASN1` API throws: a stable, extensible ``Code``, the absolute byte offset in the
/// input where decoding failed, and a human-readable reason.
///
/// Equality compares the code and the offset only, so tests can match errors without depending on
/// the wording of the reason. New codes may be added in later versions; switch over ``code`` with a
/// `default` branch.
public struct ASN1Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable value that can grow without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        @usableFromInline enum Kind: UInt8, Sendable {
            case truncated = 1
            case invalidLength
            case indefiniteLength
            case missingEndOfContents
            case invalidTag
            case depthLimitExceeded
            case inputTooLarge
            case trailingBytes
            case unexpectedTag
            case invalidInteger
            case integerOverflow
            case invalidBoolean
            case invalidNull
            case invalidObjectIdentifier
            case invalidBitString
            case invalidString
            case invalidTime
            case invalidConstruction
        }

        @usableFromInline let kind: Kind

        @inlinable init(_ kind: Kind) { self.kind = kind }

        /// The input ended inside a header or before the declared content length.
        public static let truncated = Code(.truncated)
        /// A length field is malformed: reserved form, more than 8 length octets, a value that does not
        /// fit in `Int`, or (DER) a non-minimal encoding.
        public static let invalidLength = Code(.invalidLength)
        /// The indefinite length form where it is not allowed: in DER, or on a primitive element.
        public static let indefiniteLength = Code(.indefiniteLength)
        /// A BER indefinite-length element without its mandatory end-of-contents marker (`00 00`).
        public static let missingEndOfContents = Code(.missingEndOfContents)
        /// A malformed identifier: non-minimal high tag number, tag number too large, or an
        /// end-of-contents marker where an element was expected.
        public static let invalidTag = Code(.invalidTag)
        /// Constructed elements are nested deeper than ``ASN1Limits/maximumDepth``.
        public static let depthLimitExceeded = Code(.depthLimitExceeded)
        /// The input is larger than ``ASN1Limits/maximumInputSize``.
        public static let inputTooLarge = Code(.inputTooLarge)
        /// Bytes follow the element that should have ended the input or the enclosing structure.
        public static let trailingBytes = Code(.trailingBytes)
        /// Well-formed ASN.1 of the wrong shape: a different tag than the schema expects, or a
        /// missing element (structural, not syntactic, error).
        public static let unexpectedTag = Code(.unexpectedTag)
        /// An INTEGER with no content octets, or (DER) with superfluous leading octets.
        public static let invalidInteger = Code(.invalidInteger)
        /// An INTEGER that does not fit the requested Swift integer type.
        public static let integerOverflow = Code(.integerOverflow)
        /// A BOOLEAN whose content is not one octet, or (DER) not `00` / `FF`.
        public static let invalidBoolean = Code(.invalidBoolean)
        /// A NULL with content octets.
        public static let invalidNull = Code(.invalidNull)
        /// An OBJECT IDENTIFIER that is empty, truncated or non-minimally encoded.
        public static let invalidObjectIdentifier = Code(.invalidObjectIdentifier)
        /// A BIT STRING with a bad unused-bits count or (DER) non-zero padding bits.
        public static let invalidBitString = Code(.invalidBitString)
        /// A character string whose bytes are not valid for its type (for example invalid UTF-8 in a
        /// UTF8String, or a non-ASCII byte in an IA5String). Never replaced silently.
        public static let invalidString = Code(.invalidString)
        /// A UTCTime or GeneralizedTime that is not a valid time in the accepted syntax.
        public static let invalidTime = Code(.invalidTime)
        /// A primitive element encoded as constructed (or the reverse) where that is not allowed.
        public static let invalidConstruction = Code(.invalidConstruction)

        /// A short stable name, such as `truncated`.
        public var description: String {
            switch kind {
            case .truncated: "truncated"
            case .invalidLength: "invalidLength"
            case .indefiniteLength: "indefiniteLength"
            case .missingEndOfContents: "missingEndOfContents"
            case .invalidTag: "invalidTag"
            case .depthLimitExceeded: "depthLimitExceeded"
            case .inputTooLarge: "inputTooLarge"
            case .trailingBytes: "trailingBytes"
            case .unexpectedTag: "unexpectedTag"
            case .invalidInteger: "invalidInteger"
            case .integerOverflow: "integerOverflow"
            case .invalidBoolean: "invalidBoolean"
            case .invalidNull: "invalidNull"
            case .invalidObjectIdentifier: "invalidObjectIdentifier"
            case .invalidBitString: "invalidBitString"
            case .invalidString: "invalidString"
            case .invalidTime: "invalidTime"
            case .invalidConstruction: "invalidConstruction"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// The absolute byte offset in the decoded input where the problem was found (for values decoded
    /// from a concatenated BER string: the offset of the element that held them).
    public let offset: Int
    /// A sentence for people; not part of equality and not stable across versions.
    public let reason: String

    /// Creates an error. Library code uses the factory functions; this initializer exists for callers
    /// that build their own decoders on ``ASN1Reader``.
    public init(code: Code, offset: Int, reason: String) {
        self.code = code
        self.offset = offset
        self.reason = reason
    }

    /// `"<code> at offset <n>: <reason>"`.
    public var description: String { "\(code) at offset \(offset): \(reason)" }

    /// Errors are equal when their codes and offsets are (the reason is not compared).
    public static func == (lhs: ASN1Error, rhs: ASN1Error) -> Bool {
        lhs.code == rhs.code && lhs.offset == rhs.offset
    }

    /// Hashes the code and the offset.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(offset)
    }

    /// Cold-path constructor; never inlined so the hot decoding paths stay small.
    @usableFromInline @inline(never)
    static func make(_ code: Code, _ offset: Int, _ reason: String) -> ASN1Error {
        ASN1Error(code: code, offset: offset, reason: reason)
    }

    /// The error for a tag other than the one the schema expects.
    @usableFromInline @inline(never)
    static func unexpected(_ found: ASN1Identifier?, expected: ASN1Identifier, at offset: Int) -> ASN1Error {
        let what = found.map { "found \($0)" } ?? "found nothing"
        return ASN1Error(code: .unexpectedTag, offset: offset, reason: "expected \(expected), \(what)")
    }
}
