extension Base64 {
    /// ``decode(_:rules:)`` over a contiguous buffer: the same rules, results and errors, decoded
    /// four characters at a time without per-byte protocol calls (a JWS carries about 8 KB of
    /// base64 in its header and certificates).
    ///
    /// Rules that skip whitespace, and any input the fast loop does not accept, go through the
    /// general decoder, so errors and their offsets are exactly ``decode(_:rules:)``'s.
    package static func decode(buffer text: UnsafeBufferPointer<UInt8>, rules: Rules) throws(Failure) -> [UInt8] {
        if !rules.skipsWhitespace, let decoded = fastDecode(text, rules: rules) { return decoded }
        return try decodeLoop(text, rules: rules)
    }

    /// ``decode(buffer:rules:)`` for an array slice.
    package static func decode(slice text: ArraySlice<UInt8>, rules: Rules) throws(Failure) -> [UInt8] {
        try text.span.withUnsafeBufferPointer { (buffer) throws(Failure) -> [UInt8] in try decode(buffer: buffer, rules: rules) }
    }

    /// Four tables per alphabet (modp_b64's layout): entry `c` of table `k` is the 6-bit value
    /// of character `c` shifted into place for position `k` of a 4-character group, or
    /// `0x0100_0000` for a character outside the alphabet, so one OR of four loads both decodes
    /// a group and detects any bad character.
    private static let fastStandard: [UInt32] = fastTables("+/")
    private static let fastURL: [UInt32] = fastTables("-_")
    private static let badCharacter: UInt32 = 0x0100_0000

    private static func fastTables(_ last2: String) -> [UInt32] {
        var tables = [UInt32](repeating: badCharacter, count: 1024)
        let alphabet = Array(("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + last2).utf8)
        for (value, char) in alphabet.enumerated() {
            let v = UInt32(value)
            tables[Int(char)] = v << 18
            tables[256 + Int(char)] = v << 12
            tables[512 + Int(char)] = v << 6
            tables[768 + Int(char)] = v
        }
        return tables
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
        // Nothing to decode (also keeps the uninitialised-capacity initialiser below from writing
        // the count of the shared empty-array storage, a race ThreadSanitizer reports).
        if capacity == 0 { return [] }
        let tables = rules.alphabet == .standard ? fastStandard : fastURL
        return tables.withUnsafeBufferPointer { t -> [UInt8]? in
            guard let t0 = t.baseAddress, let src = text.baseAddress else { return capacity == 0 && length == 0 ? [] : nil }
            let t1 = t0 + 256
            let t2 = t0 + 512
            let t3 = t0 + 768
            var ok = true
            let output = [UInt8](unsafeUninitializedCapacity: capacity) { out, count in
                guard let dst = out.baseAddress else {
                    count = 0
                    return
                }
                var i = 0
                var o = 0
                while i < full {
                    let v = t0[Int(src[i])] | t1[Int(src[i + 1])] | t2[Int(src[i + 2])] | t3[Int(src[i + 3])]
                    if v >= badCharacter {
                        ok = false
                        break
                    }
                    dst[o] = UInt8(truncatingIfNeeded: v >> 16)
                    dst[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    dst[o + 2] = UInt8(truncatingIfNeeded: v)
                    i += 4
                    o += 3
                }
                if ok && tail >= 2 {
                    let c = tail == 3 ? t2[Int(src[full + 2])] : 0
                    let v = t0[Int(src[full])] | t1[Int(src[full + 1])] | c
                    if v >= badCharacter {
                        ok = false
                    } else if tail == 2 {
                        if rules.requiresCanonicalTail && v & 0xF000 != 0 { ok = false }
                        dst[o] = UInt8(truncatingIfNeeded: v >> 16)
                        o += 1
                    } else {
                        if rules.requiresCanonicalTail && v & 0xC0 != 0 { ok = false }
                        dst[o] = UInt8(truncatingIfNeeded: v >> 16)
                        dst[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                        o += 2
                    }
                }
                count = ok ? o : 0
            }
            return ok ? output : nil
        }
    }
}
