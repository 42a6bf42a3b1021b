/// What a `signedPayload` costs in a store (schema version 3): the bytes of its row's payload
/// columns, and the certificate rows it shares with every other notification signed by the same
/// chain. Computed by the same compaction the stores run, without a store.
public struct StoredPayloadSize: Sendable, Hashable {
    /// The payload's own length in bytes (UTF-8).
    public let originalBytes: Int
    /// Whether a store keeps it compact (its tokens taken apart, certificates apart, the rest
    /// deflated) rather than as its text.
    public let isCompact: Bool
    /// The bytes of the row's payload columns: the compact body and its 32-byte SHA-256, or the
    /// text of a raw row.
    public let rowBytes: Int
    /// For each distinct certificate a compact row references, its DER length plus its 32-byte
    /// digest: the bytes of its row in `notification_certificates`.
    public let certificateBytes: [Int]

    /// The size of `signedPayload` as a store keeps it.
    public init(signedPayload: String) {
        originalBytes = signedPayload.utf8.count
        if let compact = CompactPayload(signedPayload: signedPayload) {
            isCompact = true
            rowBytes = compact.body.count + compact.digest.count
            certificateBytes = compact.certificates.map { $0.der.count + $0.digest.count }
        } else {
            isCompact = false
            rowBytes = originalBytes
            certificateBytes = []
        }
    }

    /// The bytes one notification costs when `count` notifications share its certificates: its
    /// row's payload bytes plus `1/count` of the certificate rows.
    public func bytesPerNotification(sharingCertificatesWith count: Int) -> Double {
        Double(rowBytes) + Double(certificateBytes.reduce(0, +)) / Double(max(1, count))
    }
}
