import JSON

extension JWSHeader {
    /// The header's `crit` parameter (RFC 7515 §4.1.11): nil when the header has none; otherwise
    /// its entries, as given (untrusted text), with an entry that is not a string — or a `crit`
    /// that is not an array — written as its JSON kind in angle brackets (`<number>`). A verifier
    /// that implements no JWS extension must reject any token that has one.
    public var criticalParameters: [String]? {
        guard let crit = unknownFields.first(where: { $0.0 == "crit" })?.1 else { return nil }
        guard case .array(let entries) = crit else { return ["<\(crit.kindName)>"] }
        return entries.map { entry in
            if case .string(let text) = entry { return text }
            return "<\(entry.kindName)>"
        }
    }
}
