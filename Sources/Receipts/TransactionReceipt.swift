import Internals

/// A legacy iOS 6 transaction receipt: what `SKPaymentTransaction.transactionReceipt` returned
/// (iOS 3–6, deprecated in iOS 7).
///
/// The receipt is an old-style property list (usually base64-encoded again for transport):
///
/// ```
/// {
///     "signature" = "<base64 of the signature blob>";
///     "purchase-info" = "<base64 of an inner old-style property list>";
///     "environment" = "Sandbox";
///     "pod" = "100";
///     "signing-status" = "0";
/// }
/// ```
///
/// Only `purchase-info` is signed (see ``TransactionReceiptSignature``): `environment`, `pod` and
/// `signing-status` sit outside the signature and can be changed by anyone holding the receipt.
/// Parsing never trusts the receipt; verify it with `ReceiptVerification` before relying on it.
public struct TransactionReceipt: Sendable, Equatable {
    /// The property-list text that was parsed (after base64 decoding), or the text
    /// written by ``init(signatureBlob:purchaseInfoData:environment:pod:signingStatus:compact:)``.
    public let text: [UInt8]
    /// Every entry of the outer dictionary, in document order.
    public let entries: [OldStylePropertyList.Entry]
    /// The decoded `signature` value: the signature blob; `nil` when the key is absent.
    public let signatureBlob: [UInt8]?
    /// The decoded `purchase-info` value, byte for byte: the data the signature covers.
    public let purchaseInfoData: [UInt8]
    /// The parsed `purchase-info`.
    public let purchaseInfo: PurchaseInfo
    /// `environment` (`"Sandbox"` in every sample; production receipts may omit it). Unsigned.
    public let environment: String?
    /// `pod`: the App Store pod that signed the receipt (`"100"` in every sample). Unsigned.
    public let pod: String?
    /// `signing-status` (`"0"` in every sample). Unsigned.
    public let signingStatus: String?

    /// The outer keys this type models.
    public static let knownKeys: Set<String> = ["signature", "purchase-info", "environment", "pod", "signing-status"]

    /// Entries of the outer dictionary other than the five known keys, in order.
    public var unknownEntries: [OldStylePropertyList.Entry] {
        entries.filter { !TransactionReceipt.knownKeys.contains($0.key) }
    }

    /// Parses a transaction receipt from its property-list text or base64 of it (also accepted: a
    /// verifyReceipt request body whose `receipt-data` holds one).
    /// - Throws: ``ReceiptError/Code/malformedTransactionReceipt`` with the offset of the problem
    ///   (in the decoded text; inside `purchase-info` the offset is relative to the decoded
    ///   purchase-info and the reason says so), ``ReceiptError/Code/invalidBase64``,
    ///   ``ReceiptError/Code/limitExceeded``, or ``ReceiptError/Code/notAReceipt`` for an app
    ///   receipt or other input.
    public init(_ bytes: [UInt8], limits: ReceiptLimits = .default) throws(ReceiptError) {
        switch try ReceiptInput.detect(bytes, limits: limits) {
        case .transactionReceipt(let text):
            try self.init(text: text, limits: limits)
        case .appReceipt:
            throw ReceiptError.make(.notAReceipt, 0, "this is an app receipt (PKCS#7), not a transaction receipt; use AppReceipt")
        }
    }

    /// Parses the property-list text itself (no base64 or JSON detection).
    public init(text: [UInt8], limits: ReceiptLimits = .default) throws(ReceiptError) {
        let root = try OldStylePropertyList.parse(text, limits: limits)
        guard let entries = root.entries else {
            throw ReceiptError.make(.malformedTransactionReceipt, 0, "a transaction receipt is a dictionary, found a \(root.kindName)")
        }
        func string(_ key: String) throws(ReceiptError) -> (String, Int)? {
            guard let entry = entries.first(where: { $0.key == key }) else { return nil }
            guard case .string(let value) = entry.value else {
                throw ReceiptError.make(
                    .malformedTransactionReceipt, entry.valueOffset, "\"\(key)\" must be a string, found a \(entry.value.kindName)")
            }
            return (value, entry.valueOffset ?? 0)
        }
        func base64(_ value: String, _ offset: Int, _ key: String) throws(ReceiptError) -> [UInt8] {
            do throws(Base64.Failure) {
                return try Base64.decode(value.utf8)
            } catch {
                throw ReceiptError(
                    code: .invalidBase64, offset: offset,
                    reason: "\"\(key)\" is not base64 (character \(error.offset) of the value): \(error.reason)")
            }
        }
        guard let (info, infoOffset) = try string("purchase-info") else {
            throw ReceiptError.make(.malformedTransactionReceipt, 0, "the receipt has no \"purchase-info\"")
        }
        let infoData = try base64(info, infoOffset, "purchase-info")
        var signature: [UInt8]?
        if let (blob, blobOffset) = try string("signature") {
            signature = try base64(blob, blobOffset, "signature")
        }
        self.text = text
        self.entries = entries
        self.signatureBlob = signature
        self.purchaseInfoData = infoData
        self.purchaseInfo = try PurchaseInfo(data: infoData, limits: limits)
        self.environment = try string("environment")?.0
        self.pod = try string("pod")?.0
        self.signingStatus = try string("signing-status")?.0
    }

    /// Builds a receipt in code (for tests and signing tools): the entries are written in Apple's
    /// order (`signature`, `purchase-info`, `environment`, `pod`, `signing-status`), absent values
    /// omitted, and the result parsed back.
    /// - Throws: the errors of ``init(text:limits:)`` when `purchaseInfoData` is not a valid
    ///   purchase-info property list.
    public init(
        signatureBlob: [UInt8]?, purchaseInfoData: [UInt8], environment: String? = "Sandbox", pod: String? = "100",
        signingStatus: String? = "0", compact: Bool = false
    ) throws(ReceiptError) {
        var entries: [OldStylePropertyList.Entry] = []
        if let signatureBlob { entries.append(.init(key: "signature", value: .string(Base64.encode(signatureBlob)))) }
        entries.append(.init(key: "purchase-info", value: .string(Base64.encode(purchaseInfoData))))
        if let environment { entries.append(.init(key: "environment", value: .string(environment))) }
        if let pod { entries.append(.init(key: "pod", value: .string(pod))) }
        if let signingStatus { entries.append(.init(key: "signing-status", value: .string(signingStatus))) }
        try self.init(text: OldStylePropertyList.encode(entries, compact: compact))
    }

    /// The receipt's property-list text as parsed.
    public var textString: String { String(decoding: text, as: UTF8.self) }

    /// The receipt as verifyReceipt's `receipt-data` carries it: base64 of ``text``.
    public var base64Encoded: String { Base64.encode(text) }

    /// Which environment the (unsigned) `environment` value names: `Sandbox` → sandbox, absent or
    /// `Production` → production (no production sample exists; absent-means-production is an
    /// assumption), anything else → unknown.
    public var environmentKind: ReceiptEnvironment {
        switch environment {
        case nil, "Production": .production
        case "Sandbox": .sandbox
        default: .unknown
        }
    }

    /// The parsed signature blob.
    /// - Throws: ``ReceiptError/Code/malformedTransactionReceipt`` when the key is absent or the blob
    ///   is malformed (offsets are positions in the blob).
    public func signature() throws(ReceiptError) -> TransactionReceiptSignature {
        guard let signatureBlob else {
            throw ReceiptError.make(.malformedTransactionReceipt, nil, "the receipt has no \"signature\"")
        }
        return try TransactionReceiptSignature(blob: signatureBlob)
    }
}

/// The signature blob of a transaction receipt (the decoded `signature` value):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | version: 2 (every real sample) or 3 |
/// | 1 | 128 (v2) / 256 (v3) | RSA PKCS#1 v1.5 signature over `version ‖ purchase-info bytes` |
/// | 129 / 257 | 4 | certificate length, big-endian |
/// | 133 / 261 | n | the signing (leaf) certificate, DER |
///
/// Nothing may follow the certificate.
public struct TransactionReceiptSignature: Sendable, Equatable {
    /// The version byte.
    public let version: UInt8
    /// The RSA signature.
    public let signature: [UInt8]
    /// The leaf certificate, DER (untrusted until its chain is validated).
    public let certificate: [UInt8]

    /// The signature length each known version uses.
    public static func signatureLength(version: UInt8) -> Int? {
        switch version {
        case 2: 128
        case 3: 256
        default: nil
        }
    }

    /// Decodes a blob.
    /// - Throws: ``ReceiptError/Code/malformedTransactionReceipt`` for an unknown version, a blob
    ///   shorter than its fields, a zero or overlong certificate length, or trailing bytes; the
    ///   offset is the position in the blob.
    public init(blob: [UInt8]) throws(ReceiptError) {
        func fail(_ offset: Int, _ reason: String) -> ReceiptError {
            ReceiptError.make(.malformedTransactionReceipt, offset, "signature blob: \(reason)")
        }
        guard let version = blob.first else { throw fail(0, "empty") }
        guard let length = TransactionReceiptSignature.signatureLength(version: version) else {
            throw fail(0, "unsupported version \(version) (known: 2 and 3)")
        }
        let lengthOffset = 1 + length
        guard blob.count >= lengthOffset + 4 else {
            throw fail(
                blob.count,
                "\(blob.count) bytes is too short for a version \(version) blob (\(lengthOffset + 4) bytes before the certificate)")
        }
        let certificateLength =
            Int(blob[lengthOffset]) << 24 | Int(blob[lengthOffset + 1]) << 16
            | Int(blob[lengthOffset + 2]) << 8 | Int(blob[lengthOffset + 3])
        let certificateOffset = lengthOffset + 4
        let available = blob.count - certificateOffset
        guard certificateLength > 0 else { throw fail(lengthOffset, "certificate length is zero") }
        guard certificateLength <= available else {
            throw fail(lengthOffset, "certificate length \(certificateLength) exceeds the \(available) bytes that follow")
        }
        guard certificateLength == available else {
            throw fail(certificateOffset + certificateLength, "\(available - certificateLength) bytes follow the certificate")
        }
        self.version = version
        self.signature = Array(blob[1..<lengthOffset])
        self.certificate = Array(blob[certificateOffset...])
    }

    /// Builds a blob from its parts (for signing tools and tests); the inverse of ``init(blob:)``.
    public static func encode(version: UInt8, signature: [UInt8], certificate: [UInt8]) -> [UInt8] {
        let length = UInt32(truncatingIfNeeded: certificate.count)
        return [version] + signature + [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + certificate
    }

    /// The bytes the signature covers: the version byte followed by the decoded purchase-info.
    public func signedData(purchaseInfoData: [UInt8]) -> [UInt8] {
        [version] + purchaseInfoData
    }
}
