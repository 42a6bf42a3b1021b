import Internals

/// One page of a paged answer of the simulated App Store Server (transaction history, refund
/// history, notification history): which items it holds, and the token of the page after it. A
/// token is `<offset>-<fingerprint>`, the fingerprint a short digest of the request's filters, so
/// that a token is only good with the filters it was made for.
struct SimulatedPage {
    /// The page's items: offsets into the whole list.
    let range: Range<Int>
    /// Whether items follow the page.
    let hasMore: Bool
    /// The token of the page after this one.
    let nextToken: String

    /// The page of a list of `count` items that `token` starts (nil: the first page), at least one
    /// item and at most `size`; throws `invalid` for a token not made for `filters` (or past the
    /// list's end).
    init(count: Int, size: Int, filters: String, token: String?, invalid: RouteError) throws(RouteError) {
        let fingerprint = Self.fingerprint(filters)
        var offset = 0
        if let token {
            guard let parsed = Self.offset(of: token, fingerprint: fingerprint, count: count) else { throw invalid }
            offset = parsed
        }
        let end = offset + min(max(1, size), max(0, count - offset))
        range = offset..<end
        hasMore = end < count
        nextToken = "\(end)-\(fingerprint)"
    }

    /// A short digest of a request's filters.
    static func fingerprint(_ text: String) -> String {
        String(Hex.encode(SHA256.hash(Array(text.utf8))).prefix(16))
    }

    /// The offset a paging token names, if it is one of ours for these filters.
    static func offset(of token: String, fingerprint: String, count: Int) -> Int? {
        let parts = token.split(separator: "-", maxSplits: 1)
        guard parts.count == 2, parts[1] == fingerprint, let offset = Int(parts[0]), offset >= 0, offset <= count else { return nil }
        return offset
    }
}
