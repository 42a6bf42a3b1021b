public import JWS
public import Receipts

/// Every signed format this package verifies, told apart once: an app receipt, an iOS 6
/// transaction receipt, or App Store signed data (a compact JWS or a notification body), each
/// with its transport encodings (base64, a verifyReceipt request body, whitespace) undone.
///
/// Detect once and hand the result on: the verifiers and models read the detected bytes without
/// guessing again (an app receipt's DER starts `0x30`, a transaction receipt's text `{"`, a
/// token `eyJ`).
public enum SignedInput: Sendable, Equatable {
    /// A PKCS#7 app receipt: its DER or BER bytes (decoded when the input was base64 or a
    /// `{"receipt-data": …}` body).
    case appReceipt([UInt8])
    /// A legacy iOS 6 transaction receipt: its old-style property-list text (decoded when the
    /// input was base64 or a request body).
    case transactionReceipt([UInt8])
    /// App Store signed data, with the kind its payload's members suggest (`AppStorePayloadKind.unknown`
    /// when they name none; unverified, for routing only).
    case signedData(SignedDataInput, kind: AppStorePayloadKind)

    /// `an app receipt`, `an iOS 6 transaction receipt`, `signed data (a transaction)`.
    public var described: String {
        switch self {
        case .appReceipt: "an app receipt"
        case .transactionReceipt: "an iOS 6 transaction receipt"
        case .signedData(_, let kind): "signed data (\(kind.withArticle))"
        }
    }

    /// The bytes a verifier of the detected format reads: the receipt's DER or text, or the
    /// compact token (a notification body's `signedPayload`).
    public var verifiableBytes: [UInt8] {
        switch self {
        case .appReceipt(let bytes), .transactionReceipt(let bytes): bytes
        case .signedData(let input, _): input.jws.token
        }
    }

    /// Detects what `bytes` are. Signed data is recognised by its shape (text starting `eyJ` with
    /// a dot, or a JSON object with a string `signedPayload`); receipts as
    /// `ReceiptInput.detect(_:limits:)` reads them (DER/BER, old-style property list, base64 of
    /// either, a `{"receipt-data": …}` body).
    /// - Throws: ``SignedInputError`` with ``SignedInputError/Code/notRecognised`` (naming what
    ///   was tried) when the input has none of these shapes, ``SignedInputError/Code/malformedSignedData``
    ///   when it has a JWS shape but does not split, ``SignedInputError/Code/invalidBase64`` or
    ///   ``SignedInputError/Code/inputTooLarge``; offsets index `bytes` (a body's token: its
    ///   `signedPayload` string).
    public static func detect(
        _ bytes: [UInt8], receiptLimits: ReceiptLimits = .default, jwsLimits: JWSLimits = .default
    ) throws(SignedInputError) -> SignedInput {
        do throws(JWSError) {
            if let signed = try SignedDataInput.detect(bytes, limits: jwsLimits) {
                return .signedData(signed, kind: AppStorePayloadKind.of(jsonPayload: signed.jws.unverifiedPayload))
            }
        } catch {
            let code: SignedInputError.Code = error.code == .tokenTooLarge ? .inputTooLarge : .malformedSignedData
            throw SignedInputError(code: code, offset: error.offset, reason: "signed data that does not read: \(error)", jws: error)
        }
        do throws(ReceiptError) {
            switch try ReceiptInput.detect(bytes, limits: receiptLimits) {
            case .appReceipt(let der): return .appReceipt(der)
            case .transactionReceipt(let text): return .transactionReceipt(text)
            }
        } catch {
            switch error.code {
            case .invalidBase64:
                throw SignedInputError(
                    code: .invalidBase64, offset: error.offset, reason: "base64 text that does not decode: \(error.reason)", receipt: error)
            case .inputTooLarge:
                throw SignedInputError(code: .inputTooLarge, offset: error.offset, reason: error.reason, receipt: error)
            default:
                throw SignedInputError(
                    code: .notRecognised, offset: error.offset ?? 0,
                    reason: bytes.isEmpty ? "the input is empty" : SignedInputError.tried, receipt: error)
            }
        }
    }
}

/// Why ``SignedInput/detect(_:receiptLimits:jwsLimits:)`` recognised no signed format.
public struct SignedInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a stable value that can grow without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A short stable name such as `notRecognised`.
        public let description: String

        /// The input is none of the signed formats (see ``SignedInputError/tried``).
        public static let notRecognised = Code(description: "notRecognised")
        /// The input is shaped like signed data (a token, a notification body) but does not split
        /// or decode (see ``SignedInputError/jws``).
        public static let malformedSignedData = Code(description: "malformedSignedData")
        /// Text that reads as base64 holds other characters or bad padding.
        public static let invalidBase64 = Code(description: "invalidBase64")
        /// The input is larger than the limits allow.
        public static let inputTooLarge = Code(description: "inputTooLarge")
    }

    /// What was tried, in the order tried, for messages.
    public static let tried =
        "not recognised: tried App Store signed data (a JWS, text starting eyJ, or a JSON body with \"signedPayload\"),"
        + " an app receipt (PKCS#7 DER/BER, base64 text, or a JSON body with \"receipt-data\") and an iOS 6 transaction receipt"

    /// What went wrong.
    public let code: Code
    /// Byte offset of the problem, when one is known.
    public let offset: Int?
    /// A sentence for people; not part of equality.
    public let reason: String
    /// The receipt reader's error, when the receipt reading failed.
    public let receipt: ReceiptError?
    /// The JWS reader's error, when signed data did not read.
    public let jws: JWSError?

    /// Creates an error.
    public init(code: Code, offset: Int?, reason: String, receipt: ReceiptError? = nil, jws: JWSError? = nil) {
        self.code = code
        self.offset = offset
        self.reason = reason
        self.receipt = receipt
        self.jws = jws
    }

    /// `"<code> at offset <n>: <reason>"`.
    public var description: String {
        var text = "\(code)"
        if let offset { text += " at offset \(offset)" }
        return text + ": " + reason
    }

    /// Errors are equal when their code and offset are.
    public static func == (lhs: SignedInputError, rhs: SignedInputError) -> Bool {
        lhs.code == rhs.code && lhs.offset == rhs.offset
    }

    /// Hashes the code and offset, the fields `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(offset)
    }
}
