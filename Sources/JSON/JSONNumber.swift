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
    package static func int64<C: Collection<UInt8>>(_ text: C) -> IntegerResult {
        var iterator = text.makeIterator()
        guard var byte = iterator.next() else { return .notInteger }
        let negative = byte == UInt8(ascii: "-")
        if negative {
            guard let next = iterator.next() else { return .notInteger }
            byte = next
        }
        guard byte >= 0x30 && byte <= 0x39 else { return .notInteger }
        if byte == 0x30 {
            // "0" alone; "-0" and "01" are other spellings.
            return !negative && iterator.next() == nil ? .value(0) : .notInteger
        }
        var value: Int64 = 0
        var overflow = false
        var current: UInt8? = byte
        while let digit = current {
            guard digit >= 0x30 && digit <= 0x39 else { return .notInteger }
            if !overflow {
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let d = Int64(digit - 0x30)
                let (next, o2) = negative ? times10.subtractingReportingOverflow(d) : times10.addingReportingOverflow(d)
                if o1 || o2 { overflow = true } else { value = next }
            }
            current = iterator.next()
        }
        return overflow ? .overflow : .value(value)
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
