import Internals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Parsed headers remembered by the exact text of their header segment, so that tokens from the
/// same signer (every App Store token signed by one leaf carries the same 4.4 KB header) skip
/// decoding the header and its certificates again.
///
/// Parsing is a pure function of the segment text and the limits, so a hit returns exactly what
/// parsing would return: an entry matches only the same bytes read under the same ``JWSLimits``.
/// Nothing is trusted because it is cached: the header is as unverified as ever. Thread-safe;
/// bounded to `capacity` entries (the least recently used goes first).
public final class JWSHeaderCache: Sendable {
    struct Entry {
        var segment: [UInt8]
        var limits: JWSLimits
        var header: JWSHeader
    }

    let entries: Locked<[Entry]>
    /// The most entries kept.
    public let capacity: Int

    /// An empty cache of at most `capacity` headers (at least one).
    public init(capacity: Int = 8) {
        self.capacity = max(capacity, 1)
        self.entries = Locked([])
    }

    /// The number of headers held.
    public var count: Int { entries.withLock { $0.count } }

    func header(for segment: UnsafeBufferPointer<UInt8>, limits: JWSLimits) -> JWSHeader? {
        entries.withLock { entries -> JWSHeader? in
            for index in entries.indices where entries[index].segment.count == segment.count && entries[index].limits == limits {
                let equal = entries[index].segment.withUnsafeBufferPointer { stored in
                    guard let a = stored.baseAddress, let b = segment.baseAddress else { return stored.count == 0 }
                    return memcmp(a, b, stored.count) == 0
                }
                guard equal else { continue }
                let entry = entries[index]
                if index != 0 {
                    entries.remove(at: index)
                    entries.insert(entry, at: 0)
                }
                return entry.header
            }
            return nil
        }
    }

    func insert(_ header: JWSHeader, for segment: UnsafeBufferPointer<UInt8>, limits: JWSLimits) {
        let entry = Entry(segment: Array(segment), limits: limits, header: header)
        entries.withLock { entries in
            entries.insert(entry, at: 0)
            if entries.count > capacity { entries.removeLast(entries.count - capacity) }
        }
    }
}
