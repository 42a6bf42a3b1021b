/// Exact conversions of JSON number text. Numbers are kept as written (``JSONValue/number(_:)``);
/// a typed accessor converts only when the value fits the type exactly, so an identifier such as
/// `9223372036854775808` or a date such as `1697679936049.7297` is never silently rounded.
package enum JSONNumber {
    /// The result of reading integer text.
    package enum IntegerResult: Equatable {
        case value(Int64)
        /// A fraction or an exponent, `-0`, or not number text at all.
        case notInteger
        /// Integer text beyond `Int64`.
        case overflow
    }

    /// Reads `-?(0|[1-9][0-9]*)` as `Int64`. Any other spelling (`1.0`, `1e3`, `-0`, `+1`, `01`)
    /// is ``IntegerResult/notInteger``, so every accepted value has exactly one text and writing
    /// it back reproduces the input.
    package static func int64(_ text: UnsafeBufferPointer<UInt8>) -> IntegerResult {
        var i = 0
        let count = text.count
        guard count > 0 else { return .notInteger }
        let negative = text[0] == UInt8(ascii: "-")
        if negative { i = 1 }
        guard i < count, text[i] >= 0x30 && text[i] <= 0x39 else { return .notInteger }
        if text[i] == 0x30 {
            // "0" alone; "-0" and "01" are other spellings.
            return !negative && count == 1 ? .value(0) : .notInteger
        }
        var value: Int64 = 0
        var overflow = false
        while i < count {
            let digit = text[i]
            guard digit >= 0x30 && digit <= 0x39 else { return .notInteger }
            if !overflow {
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let d = Int64(digit - 0x30)
                let (next, o2) = negative ? times10.subtractingReportingOverflow(d) : times10.addingReportingOverflow(d)
                if o1 || o2 { overflow = true } else { value = next }
            }
            i += 1
        }
        return overflow ? .overflow : .value(value)
    }

    /// ``int64(_:)-(UnsafeBufferPointer<UInt8>)`` for text in a String.
    package static func int64(_ text: String) -> IntegerResult {
        var text = text
        return text.withUTF8 { int64($0) }
    }

    /// The nearest `Double` of valid JSON number text, or `nil` when it is not finite (`1e400`).
    package static func double(_ text: String) -> Double? {
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// Whether `text` is a number as RFC 8259 writes one.
    package static func isValid(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBufferPointer { buffer in
            guard var reader = try? JSONReader(buffer, options: .strict),
                (try? reader.scanNumber()) != nil
            else { return false }
            return reader.position == buffer.count
        }
    }
}
