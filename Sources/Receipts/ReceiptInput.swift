import Internals
import JSON

/// What a blob of receipt input turned out to be, after undoing transport encodings.
public enum ReceiptInput: Sendable, Equatable {
    /// A PKCS#7 app receipt (DER or BER bytes).
    case appReceipt([UInt8])
    /// A legacy iOS 6 transaction receipt: old-style property-list text.
    case transactionReceipt([UInt8])

    /// Detects the form of `bytes` and decodes it:
    /// - DER/BER bytes (first byte `0x30`) → ``appReceipt(_:)``;
    /// - old-style plist text (first non-space byte `{` followed by `"`) → ``transactionReceipt(_:)``;
    /// - a JSON object with a `"receipt-data"` string (a verifyReceipt request body) → its content;
    /// - base64 text (whitespace allowed) → decoded, then detected again (once).
    ///
    /// - Throws: ``ReceiptError/Code/notAReceipt`` when none of these match, ``ReceiptError/Code/invalidBase64``
    ///   for broken base64, ``ReceiptError/Code/inputTooLarge`` beyond `limits`.
    public static func detect(_ bytes: [UInt8], limits: ReceiptLimits = .default) throws(ReceiptError) -> ReceiptInput {
        try detect(bytes, limits: limits, allowBase64: true, allowJSON: true)
    }

    static func detect(_ bytes: [UInt8], limits: ReceiptLimits, allowBase64: Bool, allowJSON: Bool) throws(ReceiptError)
        -> ReceiptInput
    {
        guard bytes.count <= limits.maximumInputSize * 2 else {
            throw ReceiptError.make(.inputTooLarge, nil, "input of \(bytes.count) bytes exceeds the limit")
        }
        guard let first = bytes.first else {
            throw ReceiptError.make(.notAReceipt, 0, "input is empty")
        }
        if first == 0x30 {
            guard bytes.count <= limits.maximumInputSize else {
                throw ReceiptError.make(.inputTooLarge, nil, "input of \(bytes.count) bytes exceeds \(limits.maximumInputSize)")
            }
            return .appReceipt(bytes)
        }
        let start = bytes.firstIndex { !isSpace($0) } ?? bytes.endIndex
        if start < bytes.endIndex, bytes[start] == UInt8(ascii: "{") {
            let next = bytes[(start + 1)...].first { !isSpace($0) }
            if next == UInt8(ascii: "\""), isPlistAssignment(bytes[(start + 1)...]) {
                return .transactionReceipt(bytes)
            }
            if allowJSON, let data = receiptDataField(bytes) {
                return try detect(Array(data.utf8), limits: limits, allowBase64: true, allowJSON: false)
            }
        }
        if allowBase64, Base64.looksLikeBase64(bytes) {
            let decoded: [UInt8]
            do throws(Base64.Failure) {
                decoded = try Base64.decode(bytes)
            } catch {
                throw .base64(error)
            }
            return try detect(decoded, limits: limits, allowBase64: false, allowJSON: false)
        }
        throw ReceiptError.make(
            .notAReceipt, 0,
            "input is neither a PKCS#7 receipt (DER/BER), base64 text, a JSON body with \"receipt-data\", nor a transaction receipt"
                + " (App Store signed data is a JWS, text starting eyJ, or a JSON body with \"signedPayload\")")
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

    /// Whether the text after `{` reads `"key" =` (old-style plist) rather than `"key":` (JSON).
    static func isPlistAssignment(_ bytes: ArraySlice<UInt8>) -> Bool {
        var i = bytes.startIndex
        while i < bytes.endIndex, isSpace(bytes[i]) { i += 1 }
        guard i < bytes.endIndex, bytes[i] == UInt8(ascii: "\"") else { return false }
        i += 1
        while i < bytes.endIndex, bytes[i] != UInt8(ascii: "\"") {
            if bytes[i] == UInt8(ascii: "\\") { i += 1 }
            i += 1
        }
        i += 1
        while i < bytes.endIndex, isSpace(bytes[i]) { i += 1 }
        return i < bytes.endIndex && bytes[i] == UInt8(ascii: "=")
    }

    /// The string value of the top-level `"receipt-data"` key of a JSON object, if any.
    static func receiptDataField(_ bytes: [UInt8]) -> String? {
        guard case .object(let members)? = try? JSONValue.parse(bytes) else { return nil }
        for (key, value) in members where key == "receipt-data" {
            if case .string(let text) = value { return text }
        }
        return nil
    }
}
