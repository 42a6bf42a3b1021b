import Foundation
import ReceiptCrypto
import Synchronization

/// A bounded, thread-safe cache of parsed receipt certificates and validated chains.
///
/// App Store receipts repeat the same three certificates for months, so the expensive part of
/// verification (parsing the certificates with OpenSSL and building and checking the path to an
/// anchor) can be done once. What is cached, and under which key:
///
/// - **Key**: the exact DER bytes of every certificate embedded in the receipt, in order, plus
///   the identity of the verifier's anchor set (SHA-256 over the anchors' fingerprints). Two
///   receipts share an entry only if they embed byte-identical certificates and are checked
///   against the same anchors.
/// - **Entry**: the parsed certificates, the signer-identity fields of each, the public keys,
///   and every chain that OpenSSL validated for them, each with its *validity window*: the
///   intersection of the validity periods of the certificates in that chain
///   (`max(notBefore) ≤ t < min(notAfter)`, OpenSSL's bounds). Any validation time inside a
///   window reuses that chain; a time outside every window validates again. Failed validations
///   are not cached.
///
/// What is never cached: the signature over the payload (checked on every call with the cached
/// key), the signed attributes, the policies and the receipt checks. A cache hit therefore costs a
/// hash of the certificate bytes, one dictionary lookup under a lock, and saves the OpenSSL
/// parsing and path validation.
///
/// Size: at most ``capacity`` entries (default 256); inserting into a full cache evicts the least
/// recently used entry. Each entry also keeps at most 4 windows. All access goes through one
/// `Mutex`, held only for lookups and insertions, never during OpenSSL work, so the cache may be
/// shared by any number of threads and verifiers.
public final class ChainCache: Sendable {
    /// Counters for tests and monitoring.
    public struct Statistics: Sendable, Hashable {
        /// Lookups that found both the parsed certificates and a chain valid at the requested time.
        public var chainHits: Int
        /// Path validations performed because no cached chain covered the time (or nothing was cached).
        public var chainValidations: Int
        /// Lookups that found the parsed certificates (whatever happened to the chain).
        public var certificateHits: Int
        /// Entries evicted because the cache was full.
        public var evictions: Int
        /// Entries currently held.
        public var count: Int
    }

    /// The most entries the cache holds.
    public let capacity: Int

    /// The cache verifiers use unless given another one.
    public static let shared = ChainCache()

    /// Creates an empty cache holding at most `capacity` entries (at least 1).
    public init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
    }

    /// The current counters.
    public var statistics: Statistics {
        state.withLock { state in
            Statistics(
                chainHits: state.chainHits, chainValidations: state.chainValidations,
                certificateHits: state.certificateHits, evictions: state.evictions, count: state.entries.count)
        }
    }

    /// Drops every entry (counters are kept).
    public func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }

    // MARK: Internals

    /// The exact certificate bytes and the anchor-set identity, framed into one buffer (each
    /// certificate preceded by its 4-byte length, then the anchors' identity). Hashing uses a
    /// SHA-256 of that buffer (computed once, by OpenSSL); equality compares the bytes themselves.
    struct Key: Hashable, Sendable {
        let framed: [UInt8]
        let digest: [UInt8]

        init(certificates: [ArraySlice<UInt8>], anchors: [UInt8]) {
            var framed: [UInt8] = []
            framed.reserveCapacity(certificates.reduce(anchors.count) { $0 + $1.count + 4 })
            for certificate in certificates {
                let count = UInt32(clamping: certificate.count)
                framed.append(UInt8(truncatingIfNeeded: count >> 24))
                framed.append(UInt8(truncatingIfNeeded: count >> 16))
                framed.append(UInt8(truncatingIfNeeded: count >> 8))
                framed.append(UInt8(truncatingIfNeeded: count))
                framed.append(contentsOf: certificate)
            }
            framed.append(contentsOf: anchors)
            self.framed = framed
            // Without a digest every key hashes alike: slower, still exact.
            digest = (try? Digest.hash(.sha256, framed)) ?? []
        }

        func hash(into hasher: inout Hasher) {
            digest.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            guard lhs.digest == rhs.digest, lhs.framed.count == rhs.framed.count else { return false }
            return lhs.framed.withUnsafeBytes { left in
                rhs.framed.withUnsafeBytes { right in
                    guard let l = left.baseAddress, let r = right.baseAddress else { return left.count == right.count }
                    return memcmp(l, r, left.count) == 0
                }
            }
        }
    }

    /// The parsed form of the certificates embedded in a receipt.
    struct ParsedCertificates: Sendable {
        let certificates: [Certificate]
        let identities: [CertificateIdentity]
        /// The public key of each certificate, nil when OpenSSL cannot decode it.
        let keys: [PublicKey?]
        /// Each certificate's subject, rendered once for messages.
        let subjects: [String]
    }

    struct ValidatedChain: Sendable {
        let signerIndex: Int
        let chain: [Certificate]
        let notBefore: Date
        let notAfter: Date
        /// The chain's common names, rendered once for messages.
        let summary: String

        func covers(_ time: Date) -> Bool { time >= notBefore && time < notAfter }
    }

    private struct Entry: Sendable {
        var parsed: ParsedCertificates
        var chains: [ValidatedChain]
        var lastUse: UInt64
    }

    private struct State: Sendable {
        var entries: [Key: Entry] = [:]
        var clock: UInt64 = 0
        var chainHits = 0
        var chainValidations = 0
        var certificateHits = 0
        var evictions = 0
    }

    private let state = Mutex(State())
    static let maximumChainsPerEntry = 4

    /// The parsed certificates for `key` and the chains validated for them, if cached.
    func lookup(_ key: Key) -> (parsed: ParsedCertificates, chains: [ValidatedChain])? {
        state.withLock { state in
            guard let index = state.entries.index(forKey: key) else { return nil }
            state.clock &+= 1
            state.entries.values[index].lastUse = state.clock
            state.certificateHits += 1
            let entry = state.entries.values[index]
            return (entry.parsed, entry.chains)
        }
    }

    /// Records that a lookup found a chain (counted separately so misses before validation are visible).
    func recordChainHit() {
        state.withLock { $0.chainHits += 1 }
    }

    /// Records that a path validation ran.
    func recordValidation() {
        state.withLock { $0.chainValidations += 1 }
    }

    /// Stores parsed certificates (and optionally a validated chain) under `key`.
    func store(_ key: Key, parsed: ParsedCertificates, chain: ValidatedChain?) {
        state.withLock { state in
            state.clock &+= 1
            var entry = state.entries[key] ?? Entry(parsed: parsed, chains: [], lastUse: state.clock)
            entry.lastUse = state.clock
            if let chain {
                entry.chains.removeAll { $0.signerIndex == chain.signerIndex && $0.notBefore == chain.notBefore && $0.notAfter == chain.notAfter }
                entry.chains.append(chain)
                if entry.chains.count > ChainCache.maximumChainsPerEntry {
                    entry.chains.removeFirst(entry.chains.count - ChainCache.maximumChainsPerEntry)
                }
            }
            if state.entries[key] == nil, state.entries.count >= capacity {
                // Evict the least recently used entry: a linear scan, bounded by `capacity`, and
                // only when inserting into a full cache.
                if let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                    state.entries.removeValue(forKey: oldest)
                    state.evictions += 1
                }
            }
            state.entries[key] = entry
        }
    }
}
