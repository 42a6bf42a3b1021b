import Foundation
import Internals

/// Turns rows read from a store into notifications: raw rows as they are, compact rows rebuilt
/// (``CompactPayload``) with the certificates they reference, which are fetched from the store's
/// `notification_certificates` table once and then kept here (at most ``cacheLimit`` of them,
/// each checked against its digest before it is kept).
final class CompactRows: @unchecked Sendable {
    /// The most certificates kept between reads (Apple signs with a handful at a time).
    static let cacheLimit = 1024

    private let lock = NSLock()
    private var cache: [[UInt8]: [UInt8]] = [:]

    /// The notifications of `rows`, in their order.
    /// - Parameter fetch: the DER of each digest asked that the store holds (absent when it has none).
    /// - Throws: ``NotificationStoreError/Code/corrupt`` when a row names a format this version does
    ///   not know, its compact form is damaged, a certificate is missing or altered, or the bytes
    ///   rebuilt are not the bytes stored; the fetch's own errors.
    func notifications(
        _ rows: [NotificationColumns.ReadRow], fetch: ([[UInt8]]) throws(NotificationStoreError) -> [[UInt8]: [UInt8]]
    ) throws(NotificationStoreError) -> [StoredNotification] {
        // Each compact row inflated once: its digests first (to fetch what is not cached), then
        // its token rebuilt from the same inflated bytes.
        var inflated: [CompactPayload.Inflated?] = []
        inflated.reserveCapacity(rows.count)
        var wanted: [[UInt8]] = []
        for row in rows {
            guard let compact = row.compact else {
                inflated.append(nil)
                continue
            }
            let form = try Self.naming(row) { () throws(NotificationStoreError) in try CompactPayload.Inflated(body: compact.body) }
            inflated.append(form)
            wanted += form.digests
        }
        var known = cached(wanted)
        var altered: Set<[UInt8]> = []
        let missing = Array(Set(wanted.filter { known[$0] == nil }))
        if !missing.isEmpty {
            let fetched = try fetch(missing)
            let checked = remember(fetched)
            known.merge(checked) { first, _ in first }
            altered = Set(fetched.keys).subtracting(checked.keys)
        }
        var notifications: [StoredNotification] = []
        notifications.reserveCapacity(rows.count)
        for (row, form) in zip(rows, inflated) {
            guard var notification = row.notification else {
                throw Self.failure(row, NotificationStoreError(.corrupt, "its payload columns name no format this version reads"))
            }
            if let compact = row.compact, let form {
                let bytes = try Self.naming(row) { () throws(NotificationStoreError) in
                    try CompactPayload.rebuild(form, digest: compact.digest) { (wanted) throws(NotificationStoreError) in
                        guard !altered.contains(wanted) else {
                            throw NotificationStoreError(.corrupt, "certificate \(Hex.encode(wanted)) does not match its digest")
                        }
                        return known[wanted]
                    }
                }
                notification.signedPayload = String(decoding: bytes, as: UTF8.self)
            }
            notifications.append(notification)
        }
        return notifications
    }

    private func cached(_ digests: [[UInt8]]) -> [[UInt8]: [UInt8]] {
        lock.lock()
        defer { lock.unlock() }
        var found: [[UInt8]: [UInt8]] = [:]
        for digest in digests { found[digest] = cache[digest] }
        return found
    }

    /// Keeps the certificates that match their digest and returns them (the others stay out, and
    /// fail their rows): the one place a certificate read from the store is checked.
    private func remember(_ certificates: [[UInt8]: [UInt8]]) -> [[UInt8]: [UInt8]] {
        let checked = certificates.filter { SHA256.hash($0.value) == $0.key }
        lock.lock()
        defer { lock.unlock() }
        for (digest, der) in checked {
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[digest] = der
        }
        return checked
    }

    /// Runs `body`, naming `row` in its error.
    private static func naming<T>(_ row: NotificationColumns.ReadRow, _ body: () throws(NotificationStoreError) -> T)
        throws(NotificationStoreError) -> T
    {
        do throws(NotificationStoreError) {
            return try body()
        } catch {
            throw failure(row, error)
        }
    }

    private static func failure(_ row: NotificationColumns.ReadRow, _ error: NotificationStoreError) -> NotificationStoreError {
        NotificationStoreError(error.code, "notification \(TerminalEscaping.quoted(row.uuid)) is damaged: \(error.reason)")
    }
}
