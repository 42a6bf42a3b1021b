import Foundation
import Internals
import ReceiptCrypto

/// A bounded, thread-safe cache of parsed signer certificates and validated chains, shared by
/// every signed format.
///
/// Apple signs receipts and JWS with the same few certificates for months, so the expensive part
/// of verification (parsing the certificates with OpenSSL and building and checking the path to an
/// anchor) can be done once. What is cached, and under which key:
///
/// - **Key**: the exact DER bytes of the signer (leaf) certificate plus the identity of the
///   verifier's anchor set (SHA-256 over the anchors' fingerprints, computed once per verifier).
/// - **Entry**: the parsed signer certificate and its public key, and every chain OpenSSL
///   validated for it, each with the exact DER bytes of its intermediates and its *validity
///   window*: the intersection of the validity periods of the certificates in that chain
///   (`max(notBefore) ≤ t < min(notAfter)`, OpenSSL's bounds). A cached chain serves any
///   validation time inside that window, so bulk verification at each input's own signed date
///   validates each chain once.
/// - **Hit**: a cached chain is reused only when the validation time lies inside its window and
///   every one of its intermediates is, byte for byte, among the candidate certificates of the
///   input (what it embeds, or what the format pins); so the path is exactly one the input's own
///   certificates build. Anything else validates again with OpenSSL. Extra certificates an input
///   carries do not change the key, so appending junk certificates cannot flood the cache with
///   variants of one chain.
/// - Only successful validations are stored; certificates that never chained to an anchor never
///   enter the cache.
///
/// What is never cached: the signature over the payload (checked on every call with the cached
/// key), the format's other checks, the policies and the expectations. A hit costs a 64-bit
/// non-cryptographic mix of the signer certificate's bytes (it only picks the bucket: equality
/// compares the bytes themselves), a dictionary lookup under a lock and a few byte comparisons,
/// and saves the OpenSSL parsing and path validation.
///
/// Size: at most ``capacity`` entries (default 256); inserting into a full cache evicts the least
/// recently used entry. Each entry keeps at most 4 chains. All access goes through one lock (`Locked`),
/// held only for lookups and insertions, never during OpenSSL work, so the cache may be shared by
/// any number of threads and verifiers.
public final class ChainCache: Sendable {
    /// Counters for tests and monitoring.
    public struct Statistics: Sendable, Hashable {
        /// Lookups that found both the parsed certificates and a chain valid at the requested time.
        public var chainHits: Int
        /// Path validations performed because no cached chain covered the time (or nothing was cached).
        public var chainValidations: Int
        /// Lookups that found the parsed signer certificate (whatever happened to the chain).
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

    /// The signer certificate's exact bytes and the anchor-set identity. Hashing uses a fast
    /// 64-bit mix of the bytes (not a cryptographic hash: it only picks the bucket); equality
    /// compares the bytes themselves, so a collision can never return another certificate's entry.
    ///
    /// A lookup key borrows the receipt's bytes; ``owned()`` copies them before a key is stored,
    /// so the cache never keeps a receipt alive.
    struct Key: Hashable, Sendable {
        let certificate: ArraySlice<UInt8>
        let anchors: [UInt8]
        let mix: UInt64

        init(signer: ArraySlice<UInt8>, anchors: [UInt8]) {
            certificate = signer
            self.anchors = anchors
            mix = Key.mix(signer) ^ Key.mix(anchors[...]) &* 0x9E37_79B9_7F4A_7C15
        }

        private init(certificate: ArraySlice<UInt8>, anchors: [UInt8], mix: UInt64) {
            self.certificate = certificate
            self.anchors = anchors
            self.mix = mix
        }

        /// The same key holding its own copy of the certificate bytes.
        func owned() -> Key { Key(certificate: Array(certificate)[...], anchors: anchors, mix: mix) }

        /// Eight bytes at a time: multiply-xor mixing of each word, then a final avalanche. Only
        /// the last 128 bytes (and the length) are mixed: a certificate ends with its signature
        /// (256 bytes for RSA-2048, about 70 for ECDSA P-256), which differs between any two
        /// certificates, and the mix only picks the bucket (equality compares every byte). Every
        /// verification mixes its signer's certificate, so the fewer words the better.
        static func mix(_ bytes: ArraySlice<UInt8>) -> UInt64 {
            bytes.withUnsafeBytes { raw in
                var h: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(raw.count)
                var i = max(0, raw.count - 128)
                while i + 8 <= raw.count {
                    h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x100_0000_01B3
                    h ^= h >> 29
                    i += 8
                }
                while i < raw.count {
                    h = (h ^ UInt64(raw[i])) &* 0x100_0000_01B3
                    i += 1
                }
                h ^= h >> 33
                h &*= 0xFF51_AFD7_ED55_8CCD
                h ^= h >> 33
                return h
            }
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(mix)
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.mix == rhs.mix && lhs.anchors == rhs.anchors && bytesEqual(lhs.certificate, rhs.certificate)
        }
    }

    struct ValidatedChain: Sendable {
        /// The chain, leaf first and anchor last.
        let chain: [Certificate]
        /// The DER bytes of the certificates between leaf and anchor.
        let intermediates: [[UInt8]]
        let notBefore: Date
        let notAfter: Date
        /// The chain's common names, for messages (rendered the first time they are read).
        let summary: RenderedOnce<String>

        /// Whether the chain may stand for an input whose signature step handed over `signed`
        /// (every intermediate of the chain among its candidates), validated at `time`.
        func applies(at time: Date, to signed: SignedBy) -> Bool {
            guard time >= notBefore, time < notAfter else { return false }
            return intermediates.allSatisfy { signed.hasIntermediate($0[...]) }
        }
    }

    private struct Entry: Sendable {
        var signer: SignerCertificate
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

    private let state = Locked(State())
    static let maximumChainsPerEntry = 4

    /// The parsed signer and the chains validated for it, if cached.
    func lookup(_ key: Key) -> (signer: SignerCertificate, chains: [ValidatedChain])? {
        state.withLock { state in
            guard let index = state.entries.index(forKey: key) else { return nil }
            state.clock &+= 1
            state.entries.values[index].lastUse = state.clock
            state.certificateHits += 1
            let entry = state.entries.values[index]
            return (entry.signer, entry.chains)
        }
    }

    /// Records that a cached chain was used.
    func recordChainHit() {
        state.withLock { $0.chainHits += 1 }
    }

    /// Records that a path validation ran.
    func recordValidation() {
        state.withLock { $0.chainValidations += 1 }
    }

    /// Stores a successfully validated chain for the signer under `key`.
    func store(_ borrowedKey: Key, signer: SignerCertificate, chain: ValidatedChain) {
        let key = borrowedKey.owned()
        state.withLock { state in
            state.clock &+= 1
            var entry = state.entries[key] ?? Entry(signer: signer, chains: [], lastUse: state.clock)
            entry.lastUse = state.clock
            entry.chains.removeAll {
                $0.notBefore == chain.notBefore && $0.notAfter == chain.notAfter && $0.intermediates == chain.intermediates
            }
            entry.chains.append(chain)
            if entry.chains.count > ChainCache.maximumChainsPerEntry {
                entry.chains.removeFirst(entry.chains.count - ChainCache.maximumChainsPerEntry)
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
