extension Base64 {
    /// ``decode(_:rules:)`` over a contiguous buffer: the same rules, results and errors, decoded
    /// four characters at a time without per-byte protocol calls (a JWS carries about 8 KB of
    /// base64 in its header and certificates).
    ///
    /// Rules that skip whitespace, and any input the fast loop does not accept, go through
    /// ``decode(_:rules:)`` itself, so errors and their offsets are exactly that function's.
    package static func decode(buffer text: UnsafeBufferPointer<UInt8>, rules: Rules) throws(Failure) -> [UInt8] {
        if !rules.skipsWhitespace, let decoded = fastDecode(text, rules: rules) { return decoded }
        return try decode(text, rules: rules)
    }

    /// ``decode(buffer:rules:)`` for an array slice.
    package static func decode(slice text: ArraySlice<UInt8>, rules: Rules) throws(Failure) -> [UInt8] {
        try text.span.withUnsafeBufferPointer { (buffer) throws(Failure) -> [UInt8] in try decode(buffer: buffer, rules: rules) }
    }

    private static let fastStandard: [UInt8] = fastTable("+/")
    private static let fastURL: [UInt8] = fastTable("-_")

    private static func fastTable(_ last2: String) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array(("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + last2).utf8)
        for (value, char) in alphabet.enumerated() { table[Int(char)] = UInt8(value) }
        return table
    }

    /// The decoded bytes when `text` is valid under `rules` (whitespace not skipped); `nil` for
    /// anything else, which the general decoder then reports.
    private static func fastDecode(_ text: UnsafeBufferPointer<UInt8>, rules: Rules) -> [UInt8]? {
        var length = text.count
        var padding = 0
        if rules.allowsPadding {
            while padding < 2, length > 0, text[length - 1] == UInt8(ascii: "=") {
                length -= 1
                padding += 1
            }
            // Padding completes a quad; anything else is for the general decoder to report.
            if padding > 0 && (length + padding) % 4 != 0 { return nil }
        }
        let tail = length % 4
        if tail == 1 { return nil }
        if padding > 0 && padding != (4 - tail) % 4 { return nil }
        let full = length - tail
        let capacity = full / 4 * 3 + (tail == 0 ? 0 : tail - 1)
        let table = rules.alphabet == .standard ? fastStandard : fastURL
        return table.withUnsafeBufferPointer { t -> [UInt8]? in
            var ok = true
            let output = [UInt8](unsafeUninitializedCapacity: capacity) { out, count in
                var i = 0
                var o = 0
                while i < full {
                    let a = t[Int(text[i])]
                    let b = t[Int(text[i + 1])]
                    let c = t[Int(text[i + 2])]
                    let d = t[Int(text[i + 3])]
                    if (a | b | c | d) & 0xC0 != 0 {
                        ok = false
                        break
                    }
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: v)
                    i += 4
                    o += 3
                }
                if ok && tail >= 2 {
                    let a = t[Int(text[full])]
                    let b = t[Int(text[full + 1])]
                    let c = tail == 3 ? t[Int(text[full + 2])] : 0
                    if (a | b | c) & 0xC0 != 0 {
                        ok = false
                    } else if tail == 2 {
                        if rules.requiresCanonicalTail && b & 0xF != 0 { ok = false }
                        out[o] = a << 2 | b >> 4
                        o += 1
                    } else {
                        if rules.requiresCanonicalTail && c & 0x3 != 0 { ok = false }
                        out[o] = a << 2 | b >> 4
                        out[o + 1] = b << 4 | c >> 2
                        o += 2
                    }
                }
                count = ok ? o : 0
            }
            return ok ? output : nil
        }
    }
}
