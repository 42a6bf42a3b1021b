public import ASN1
import Internals

/// The error every `Receipts` API throws: a stable, extensible ``Code``, the byte offset where the
/// problem was found, the receipt attribute involved (if any), and the underlying `ASN1.ASN1Error` for
/// malformed encodings.
///
/// Offsets are positions in the decoded receipt bytes (after base64 decoding). For Xcode receipts,
/// whose payload is a segmented (BER constructed) OCTET STRING, errors inside the payload give
/// the offset within the concatenated payload and say so in ``reason``.
public struct ReceiptError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable value that can grow without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Kind: UInt8, Sendable {
            case notAReceipt = 1
            case invalidBase64
            case malformedEnvelope
            case unsupportedEnvelope
            case missingPayload
            case malformedPayload
            case invalidAttributeValue
            case invalidString
            case invalidDate
            case duplicateAttribute
            case limitExceeded
            case inputTooLarge
            case malformedTransactionReceipt
        }

        let kind: Kind

        /// The input is none of the accepted forms (DER/BER PKCS#7, base64 of it, a JSON body with
        /// `receipt-data`, or a transaction receipt).
        public static let notAReceipt = Code(kind: .notAReceipt)
        /// Text that should be base64 holds other characters or bad padding.
        public static let invalidBase64 = Code(kind: .invalidBase64)
        /// The PKCS#7 ContentInfo/SignedData is not well-formed ASN.1 (see ``ReceiptError/underlying``).
        public static let malformedEnvelope = Code(kind: .malformedEnvelope)
        /// Well-formed ASN.1 that is not a PKCS#7 SignedData this library reads (for example another
        /// content type, or an unsupported signer identifier form).
        public static let unsupportedEnvelope = Code(kind: .unsupportedEnvelope)
        /// The SignedData carries no encapsulated content (a detached signature).
        public static let missingPayload = Code(kind: .missingPayload)
        /// The payload is not a well-formed SET of receipt attributes (see ``ReceiptError/underlying``).
        public static let malformedPayload = Code(kind: .malformedPayload)
        /// An attribute's value has the wrong ASN.1 type or an out-of-range number.
        public static let invalidAttributeValue = Code(kind: .invalidAttributeValue)
        /// A string attribute holds invalid UTF-8 (never replaced silently).
        public static let invalidString = Code(kind: .invalidString)
        /// A date attribute is not an RFC 3339 date in an accepted form.
        public static let invalidDate = Code(kind: .invalidDate)
        /// A single-valued attribute (such as the bundle id) occurs twice; never "last one wins".
        public static let duplicateAttribute = Code(kind: .duplicateAttribute)
        /// A count or length is beyond ``ReceiptLimits``.
        public static let limitExceeded = Code(kind: .limitExceeded)
        /// The input is larger than ``ReceiptLimits/maximumInputSize``.
        public static let inputTooLarge = Code(kind: .inputTooLarge)
        /// A legacy transaction receipt (old-style property list) is malformed.
        public static let malformedTransactionReceipt = Code(kind: .malformedTransactionReceipt)

        /// A short stable name such as `duplicateAttribute`.
        public var description: String {
            switch kind {
            case .notAReceipt: "notAReceipt"
            case .invalidBase64: "invalidBase64"
            case .malformedEnvelope: "malformedEnvelope"
            case .unsupportedEnvelope: "unsupportedEnvelope"
            case .missingPayload: "missingPayload"
            case .malformedPayload: "malformedPayload"
            case .invalidAttributeValue: "invalidAttributeValue"
            case .invalidString: "invalidString"
            case .invalidDate: "invalidDate"
            case .duplicateAttribute: "duplicateAttribute"
            case .limitExceeded: "limitExceeded"
            case .inputTooLarge: "inputTooLarge"
            case .malformedTransactionReceipt: "malformedTransactionReceipt"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// Byte offset of the problem, when one is known.
    public let offset: Int?
    /// The receipt attribute type involved (for example 2 for the bundle id, 1702 for a product id).
    public let attributeType: Int?
    /// A sentence for people; not part of equality.
    public let reason: String
    /// The ASN.1 decoding error behind a malformed envelope or payload.
    public let underlying: ASN1Error?

    /// Creates an error.
    public init(code: Code, offset: Int?, attributeType: Int? = nil, reason: String, underlying: ASN1Error? = nil) {
        self.code = code
        self.offset = offset
        self.attributeType = attributeType
        self.reason = reason
        self.underlying = underlying
    }

    /// `"<code> at offset <n> (attribute <t>): <reason>"`.
    public var description: String {
        var text = "\(code)"
        if let offset { text += " at offset \(offset)" }
        if let attributeType { text += " (attribute \(attributeType))" }
        return text + ": " + reason
    }

    /// Errors are equal when their code, offset and attribute type are; the reason text and the
    /// underlying error are explanation only and are not compared.
    public static func == (lhs: ReceiptError, rhs: ReceiptError) -> Bool {
        lhs.code == rhs.code && lhs.offset == rhs.offset && lhs.attributeType == rhs.attributeType
    }

    /// Hashes the code, offset and attribute type, the same fields `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(offset)
        hasher.combine(attributeType)
    }

    @inline(never)
    static func make(_ code: Code, _ offset: Int?, attribute: Int? = nil, _ reason: String) -> ReceiptError {
        ReceiptError(code: code, offset: offset, attributeType: attribute, reason: reason)
    }

    /// Text that is not base64, as ``Code/invalidBase64`` at the offending offset.
    @inline(never)
    static func base64(_ failure: Base64.Failure) -> ReceiptError {
        make(.invalidBase64, failure.offset, failure.reason)
    }

    @inline(never)
    static func wrap(_ error: ASN1Error, as code: Code, attribute: Int? = nil, context: String) -> ReceiptError {
        ReceiptError(
            code: code, offset: error.offset, attributeType: attribute, reason: "\(context): \(error.reason)",
            underlying: error)
    }
}

/// Bounds applied to untrusted receipts so no input costs unbounded memory or time.
public struct ReceiptLimits: Sendable, Hashable {
    /// Largest accepted input (after base64 decoding), in bytes. Default 64 MiB.
    public var maximumInputSize: Int
    /// Deepest ASN.1 nesting. Default 50.
    public var maximumDepth: Int
    /// Most attributes in one receipt, counting those of every in-app record. Default 4,000,000.
    public var maximumAttributes: Int
    /// Most in-app purchase records. Default 200,000.
    public var maximumInAppPurchases: Int
    /// Longest string attribute value, in bytes. Default 64 KiB.
    public var maximumStringLength: Int

    /// Creates limits.
    public init(
        maximumInputSize: Int = 64 << 20, maximumDepth: Int = 50, maximumAttributes: Int = 4_000_000,
        maximumInAppPurchases: Int = 200_000, maximumStringLength: Int = 64 << 10
    ) {
        self.maximumInputSize = maximumInputSize
        self.maximumDepth = maximumDepth
        self.maximumAttributes = maximumAttributes
        self.maximumInAppPurchases = maximumInAppPurchases
        self.maximumStringLength = maximumStringLength
    }

    /// The defaults listed on each property.
    public static let `default` = ReceiptLimits()

    var asn1: ASN1Limits { ASN1Limits(maximumDepth: maximumDepth, maximumInputSize: maximumInputSize) }
}
