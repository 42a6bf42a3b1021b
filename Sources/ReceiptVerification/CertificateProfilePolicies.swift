public import ReceiptCrypto

/// Key usage as Apple's certificate profile has it (RFC 5280 §4.2.1.3): a leaf whose keyUsage
/// extension is present includes digitalSignature (a leaf with only keyCertSign or only
/// keyAgreement may not sign data), and every certificate above it whose keyUsage is present
/// includes keyCertSign. An absent extension places no restriction, as RFC 5280 says: Apple's real
/// signing leaves and intermediates all carry it, but the certificates of Apple's own test CA
/// (app-store-server-library) do not. Reported as ``VerificationCheck/Name/keyUsage``.
public struct KeyUsagePolicy: ChainPolicy {
    /// Creates the policy.
    public init() {}

    /// ``VerificationCheck/Name/keyUsage``.
    public var name: VerificationCheck.Name { .keyUsage }

    /// Reads each certificate's keyUsage bits.
    public func evaluate(chain: [Certificate]) -> PolicyResult {
        guard let leaf = chain.first else { return .fails("the chain is empty") }
        if let usage = leaf.keyUsage, !usage.contains(.digitalSignature) {
            return .fails("the leaf's (\(leaf.subject)) keyUsage is \(Self.describe(usage)), without digitalSignature")
        }
        for index in chain.indices.dropFirst() {
            if let usage = chain[index].keyUsage, !usage.contains(.keyCertSign) {
                return .fails("certificate #\(index) (\(chain[index].subject)) has keyUsage \(Self.describe(usage)), without keyCertSign")
            }
        }
        return .meets
    }

    /// `keyCertSign, cRLSign` or `(none)`.
    static func describe(_ usage: KeyUsage) -> String {
        let names: [(KeyUsage, String)] = [
            (.digitalSignature, "digitalSignature"), (.nonRepudiation, "nonRepudiation"), (.keyEncipherment, "keyEncipherment"),
            (.dataEncipherment, "dataEncipherment"), (.keyAgreement, "keyAgreement"), (.keyCertSign, "keyCertSign"),
            (.cRLSign, "cRLSign"), (.encipherOnly, "encipherOnly"), (.decipherOnly, "decipherOnly"),
        ]
        let set = names.filter { usage.contains($0.0) }.map(\.1)
        return set.isEmpty ? "(none)" : set.joined(separator: ", ")
    }
}

/// Basic constraints as Apple's certificate profile has them (RFC 5280 §4.2.1.9): the leaf is not
/// a CA, every intermediate is (cA TRUE; the anchor is trusted by configuration, and a version-1
/// root has no extensions), and no pathLenConstraint (the anchor's included) is smaller than the
/// number of intermediates between its certificate and the leaf. Reported as
/// ``VerificationCheck/Name/basicConstraints``. (A chain of one, a self-signed testing
/// certificate that is its own anchor, has no leaf apart from its anchor: use the policy only for
/// chains of two or more.)
public struct BasicConstraintsPolicy: ChainPolicy {
    /// Creates the policy.
    public init() {}

    /// ``VerificationCheck/Name/basicConstraints``.
    public var name: VerificationCheck.Name { .basicConstraints }

    /// Reads each certificate's basicConstraints.
    public func evaluate(chain: [Certificate]) -> PolicyResult {
        guard let leaf = chain.first else { return .fails("the chain is empty") }
        guard chain.count > 1 else { return .fails("a chain of one certificate has no leaf apart from its anchor") }
        if leaf.isCA { return .fails("the leaf (\(leaf.subject)) is a CA (basicConstraints cA TRUE)") }
        for index in chain.indices.dropFirst() {
            guard chain[index].isCA || index == chain.count - 1 else {
                return .fails("certificate #\(index) (\(chain[index].subject)) issues certificates but is not a CA")
            }
            // The CAs between this one and the leaf.
            let below = index - 1
            if let limit = chain[index].pathLengthConstraint, below > limit {
                return .fails(
                    "certificate #\(index) (\(chain[index].subject)) allows \(limit) CA\(limit == 1 ? "" : "s") below it; the chain has \(below)"
                )
            }
        }
        return .meets
    }
}
