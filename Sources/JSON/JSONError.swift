/// The error every `JSON` API throws: a stable, extensible ``Code``, the byte offset in the parsed
/// text where the problem was found (when there is one), and a reason for people.
///
/// Equality compares the code and the offset only, so tests can match errors without depending on
/// the wording of the reason. New codes may be added later; switch over ``code`` with a `default`.
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable value that can grow without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Kind: UInt8, Sendable {
            case unexpectedEnd = 1
            case unexpectedCharacter
            case invalidString
            case invalidUTF8
            case invalidNumber
            case duplicateKey
            case trailingData
            case depthLimitExceeded
            case memberLimitExceeded
            case inputTooLarge
            case typeMismatch
            case numberDoesNotFit
        }

        let kind: Kind

        /// The text ended inside a value.
        public static let unexpectedEnd = Code(kind: .unexpectedEnd)
        /// A byte that cannot start or continue a value here (including a byte order mark, a
        /// trailing comma, or a bare word).
        public static let unexpectedCharacter = Code(kind: .unexpectedCharacter)
        /// A string holds an unescaped control character or an unknown escape.
        public static let invalidString = Code(kind: .invalidString)
        /// A string holds bytes that are not UTF-8, or a `\u` escape names a lone surrogate.
        public static let invalidUTF8 = Code(kind: .invalidUTF8)
        /// A number breaks RFC 8259's grammar (leading zero, missing digits, `+`, ...).
        public static let invalidNumber = Code(kind: .invalidNumber)
        /// An object names the same key twice (never "last one wins").
        public static let duplicateKey = Code(kind: .duplicateKey)
        /// Something other than whitespace follows the value.
        public static let trailingData = Code(kind: .trailingData)
        /// Objects and arrays are nested deeper than ``JSONParseOptions/maximumDepth``.
        public static let depthLimitExceeded = Code(kind: .depthLimitExceeded)
        /// The document holds more members and elements than ``JSONParseOptions/maximumMembers``.
        public static let memberLimitExceeded = Code(kind: .memberLimitExceeded)
        /// The text is longer than ``JSONParseOptions/maximumInputSize``.
        public static let inputTooLarge = Code(kind: .inputTooLarge)
        /// A value has another JSON type than the one asked for.
        public static let typeMismatch = Code(kind: .typeMismatch)
        /// A number cannot be represented exactly by the type asked for (`1.5` or `1e3` as an
        /// integer, `9223372036854775808` as `Int64`, `1e400` as `Double`).
        public static let numberDoesNotFit = Code(kind: .numberDoesNotFit)

        /// A short stable name such as `duplicateKey`.
        public var description: String {
            switch kind {
            case .unexpectedEnd: "unexpectedEnd"
            case .unexpectedCharacter: "unexpectedCharacter"
            case .invalidString: "invalidString"
            case .invalidUTF8: "invalidUTF8"
            case .invalidNumber: "invalidNumber"
            case .duplicateKey: "duplicateKey"
            case .trailingData: "trailingData"
            case .depthLimitExceeded: "depthLimitExceeded"
            case .memberLimitExceeded: "memberLimitExceeded"
            case .inputTooLarge: "inputTooLarge"
            case .typeMismatch: "typeMismatch"
            case .numberDoesNotFit: "numberDoesNotFit"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// Byte offset of the problem in the parsed text, when one is known (typed accessors on an
    /// already parsed ``JSONValue`` have none).
    public let offset: Int?
    /// A sentence for people; not part of equality.
    public let reason: String

    /// Creates an error.
    public init(code: Code, offset: Int?, reason: String) {
        self.code = code
        self.offset = offset
        self.reason = reason
    }

    /// `"<code> at offset <n>: <reason>"`.
    public var description: String {
        if let offset { return "\(code) at offset \(offset): \(reason)" }
        return "\(code): \(reason)"
    }

    /// Equality as described on the type.
    public static func == (lhs: JSONError, rhs: JSONError) -> Bool {
        lhs.code == rhs.code && lhs.offset == rhs.offset
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(offset)
    }

    @inline(never)
    static func make(_ code: Code, _ offset: Int?, _ reason: String) -> JSONError {
        JSONError(code: code, offset: offset, reason: reason)
    }
}

/// How strictly and how far `parse(_:options:)` (and every other parse in the
/// package) reads JSON text.
///
/// Whatever the options, the parser follows RFC 8259 exactly: UTF-8 only (no byte order mark, no
/// lone surrogates in `\u` escapes), no comments, no trailing commas, no leading zeros, nothing
/// but whitespace after the value. The options add the duplicate-key rule and the limits, all
/// enforced while reading, before anything is allocated for the offending part.
public struct JSONParseOptions: Sendable, Hashable {
    /// Reject an object that names the same key twice. Default `true`.
    public var rejectsDuplicateKeys: Bool
    /// Longest accepted text, in bytes. Default 64 MiB.
    public var maximumInputSize: Int
    /// Deepest nesting of objects and arrays (`[]` has depth 1, `[[]]` depth 2). Default 64;
    /// values above 512 are treated as 512 so that parsing never exhausts the stack.
    public var maximumDepth: Int
    /// Most object members plus array elements in the whole document. Default 1,048,576.
    public var maximumMembers: Int

    /// Creates options; the defaults are listed on each property.
    public init(
        rejectsDuplicateKeys: Bool = true, maximumInputSize: Int = 64 << 20, maximumDepth: Int = 64,
        maximumMembers: Int = 1 << 20
    ) {
        self.rejectsDuplicateKeys = rejectsDuplicateKeys
        self.maximumInputSize = maximumInputSize
        self.maximumDepth = maximumDepth
        self.maximumMembers = maximumMembers
    }

    /// The strict defaults listed on each property.
    public static let strict = JSONParseOptions()

    /// The hard ceiling on ``maximumDepth``.
    public static let depthCeiling = 512
}
