import Foundation

/// An `http://host[:port]/path` URL, as OCSP responders are named, checked before any socket is
/// opened: a certificate's Authority Information Access is untrusted text.
struct OCSPResponderURL {
    /// The URL the HTTP client is given (the scheme lower-cased, the fragment dropped).
    let url: URL
    /// The URL as given, escaped, for messages.
    let display: String

    /// Checks `text`: at most 2 KiB, `http://` (other schemes, `https://` included, are refused),
    /// no user information, a host of letters, digits and `.-:_` (or a bracketed IPv6 address),
    /// a port from 1 to 65535, no space or line break in the path.
    static func parse(_ text: String) -> Result<OCSPResponderURL, OCSPTransportFailure> {
        let display = VerificationText.escaped(text)
        func refused(_ why: String) -> Result<OCSPResponderURL, OCSPTransportFailure> {
            .failure(OCSPTransportFailure("the OCSP URL \(display) \(why)", retryable: false))
        }
        guard text.utf8.count <= 2_048, text.lowercased().hasPrefix("http://") else { return refused("is not an http:// URL") }
        let rest = text.dropFirst(7)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var path = String(rest.dropFirst(authority.count).prefix { $0 != "#" })
        if path.isEmpty { path = "/" } else if !path.hasPrefix("/") { path = "/" + path }
        guard !authority.contains("@"), !path.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" }) else {
            return refused("is not usable")
        }
        var host = String(authority)
        var port: UInt16 = 80
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return refused("has an unterminated IPv6 address") }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = UInt16(after.dropFirst()), value > 0 else { return refused("has an invalid port") }
                port = value
            } else if !after.isEmpty {
                return refused("is not usable")
            }
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":") {
            guard let value = UInt16(host[host.index(after: colon)...]), value > 0 else { return refused("has an invalid port") }
            port = value
            host = String(host[..<colon])
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:_".contains($0)) }) else {
            return refused("has no usable host")
        }
        let authorityText = (host.contains(":") ? "[\(host)]" : host) + (port == 80 ? "" : ":\(port)")
        guard let url = URL(string: "http://\(authorityText)\(path)"), url.host != nil else { return refused("is not usable") }
        return .success(OCSPResponderURL(url: url, display: display))
    }
}
