/// The one rule that keeps secrets of connection strings and URLs out of messages, logs and the
/// terminal: every text that may hold a location (a `postgres://` URL, a libpq keyword string, an
/// HTTP base URL, or a message quoting one) passes through ``redacted(_:)`` before it is shown.
///
/// What it masks, wherever it occurs in the text:
/// - the password of a URL's user information: `scheme://user:SECRET@host` becomes
///   `scheme://user:***@host` (the user information ends at the token's last `@`, a token ending
///   at white space, a quote or an angle bracket, so a password holding `/`, `?` or `#` is masked
///   whole; an `@` later in the token masks more than the password, never less);
/// - the value of every parameter whose key ends in `password` (case-insensitive, after
///   percent-decoding the key): `?password=SECRET`, `&sslpassword=SECRET`, libpq's
///   `password=SECRET` and `password='SEC RET'`, `PGPASSWORD=SECRET`.
///
/// Nothing else changes, so a redacted message still says which host, port, database and user it
/// was about.
package enum Redaction {
    /// What replaces a secret.
    package static let mask = "***"

    /// `text` with every password of a URL or connection string replaced by ``mask``.
    package static func redacted(_ text: String) -> String {
        var scalars = Array(text.unicodeScalars)
        guard scalars.contains(where: { $0 == "@" || $0 == "=" }) else { return text }
        scalars = maskingUserInformation(scalars)
        scalars = maskingPasswordParameters(scalars)
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars)
        return String(result)
    }

    private static let maskScalars = Array(mask.unicodeScalars)

    /// Whether `scalar` ends a token (a URL or a `key=value`) in a message.
    private static func endsToken(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar == "\"" || scalar == "'" || scalar == "<" || scalar == ">" || scalar == "`"
    }

    /// Masks the password of `scheme://user:password@` everywhere in `input`.
    private static func maskingUserInformation(_ input: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var output: [Unicode.Scalar] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let isSchemeEnd = index + 2 < input.count && input[index] == ":" && input[index + 1] == "/" && input[index + 2] == "/"
            guard isSchemeEnd else {
                output.append(input[index])
                index += 1
                continue
            }
            output.append(contentsOf: input[index..<(index + 3)])
            let start = index + 3
            var end = start
            while end < input.count, !endsToken(input[end]) { end += 1 }
            guard let at = input[start..<end].lastIndex(of: "@"), let colon = input[start..<at].firstIndex(of: ":") else {
                index = start
                continue
            }
            output.append(contentsOf: input[start...colon])
            if colon + 1 < at { output.append(contentsOf: maskScalars) }
            index = at
        }
        return output
    }

    /// Whether `scalar` separates a parameter's key from what precedes it.
    private static func startsKey(_ scalar: Unicode.Scalar) -> Bool {
        endsToken(scalar) || scalar == "?" || scalar == "&" || scalar == ";" || scalar == "," || scalar == "(" || scalar == "{"
    }

    /// Masks the value of every `…password=value` parameter in `input`.
    private static func maskingPasswordParameters(_ input: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var output: [Unicode.Scalar] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let scalar = input[index]
            output.append(scalar)
            index += 1
            guard scalar == "=" else { continue }
            var keyStart = index - 1
            while keyStart > 0, !startsKey(input[keyStart - 1]) { keyStart -= 1 }
            guard isPasswordKey(input[keyStart..<(index - 1)]) else { continue }
            var end = index
            if end < input.count, input[end] == "'" {
                // libpq's quoted value: up to the next unescaped quote.
                end += 1
                while end < input.count, input[end] != "'" { end += input[end] == "\\" ? 2 : 1 }
                end = min(end + 1, input.count)
            } else {
                while end < input.count, !endsToken(input[end]), input[end] != "&" { end += 1 }
            }
            if end > index { output.append(contentsOf: maskScalars) }
            index = end
        }
        return output
    }

    /// Whether a key, percent-decoded and compared without case, ends in `password`.
    private static func isPasswordKey(_ key: ArraySlice<Unicode.Scalar>) -> Bool {
        var decoded: [UInt8] = []
        var index = key.startIndex
        while index < key.endIndex {
            let scalar = key[index]
            if scalar == "%", index + 2 < key.endIndex, let high = hexValue(key[index + 1]), let low = hexValue(key[index + 2]) {
                decoded.append(high << 4 | low)
                index += 3
                continue
            }
            if scalar.isASCII { decoded.append(UInt8(scalar.value)) } else { decoded.append(0x80) }
            index += 1
        }
        let lowered = decoded.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        return lowered.count >= 8 && Array(lowered.suffix(8)) == Array("password".utf8)
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0x30...0x39: UInt8(scalar.value - 0x30)
        case 0x41...0x46: UInt8(scalar.value - 0x41 + 10)
        case 0x61...0x66: UInt8(scalar.value - 0x61 + 10)
        default: nil
        }
    }
}
