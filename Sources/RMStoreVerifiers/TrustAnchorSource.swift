// Where a store verifier's trust anchors come from, and how a failure to load them is reported.

public import Foundation
public import ReceiptVerification

/// Where a store verifier gets the certificates it trusts.
///
/// Anchors only ever come from bytes given here (or bundled with `ReceiptVerification`), never
/// from the system trust store or from the receipt. The source is loaded **once**, when the
/// verifier is created. If loading fails (a missing or unreadable file, bytes that hold no
/// certificate, an empty set), the verifier does not fall back to anything: it rejects every
/// transaction with ``StoreVerifierError/Code/anchorsUnavailable`` (RMStore skipped the signature
/// check when its root certificate was missing, Docs/StoreBehaviour.md §4.8).
public enum TrustAnchorSource: Sendable {
    /// Apple Inc. Root, Apple Root CA - G2 and G3, bundled with `ReceiptVerification` and checked
    /// against their pinned fingerprints.
    case bundledAppleRoots
    /// Exactly these anchors.
    case anchors(TrustAnchors)
    /// The certificates in a file: DER, or PEM with one or more certificates.
    case file(URL)
    /// The certificates in these bytes: DER, or PEM text with one or more certificates (RMStore
    /// PR #198: pass the certificate as data so that it cannot be swapped in the bundle).
    case bytes([UInt8])

    /// The anchors, or why they could not be loaded. An empty set is an error too.
    func load() -> Result<TrustAnchors, TrustAnchorError> {
        let anchors: TrustAnchors
        let source: String
        do throws(TrustAnchorError) {
            switch self {
            case .bundledAppleRoots:
                source = "bundled Apple roots"
                anchors = try TrustAnchors.appleRoots
            case .anchors(let given):
                source = "given anchors"
                anchors = given
            case .file(let url):
                source = url.path
                anchors = try TrustAnchors(contentsOfFile: url.path)
            case .bytes(let bytes):
                source = "anchor bytes"
                anchors = try TrustAnchors(derOrPEM: bytes, source: source)
            }
        } catch {
            return .failure(error)
        }
        guard !anchors.certificates.isEmpty else {
            return .failure(TrustAnchorError(code: .empty, source: source, reason: "no trust anchor was given"))
        }
        return .success(anchors)
    }
}
