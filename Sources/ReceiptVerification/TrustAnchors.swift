public import Foundation
import Internals
public import ReceiptCrypto
import Receipts

/// Why a trust anchor could not be loaded.
///
/// Loading an anchor never falls back to anything: a missing file, unreadable bytes, a file that
/// holds no certificate, or a bundled file whose fingerprint differs from the one this module
/// pins is an error, and a verifier built without anchors fails every receipt (check
/// ``VerificationCheck/Name/trustAnchors``).
public struct TrustAnchorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a stable value that can grow without breaking callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String

        /// The file or bundled resource does not exist.
        public static let missing = Code(name: "missing")
        /// The file exists but could not be read.
        public static let unreadable = Code(name: "unreadable")
        /// The bytes are neither a DER certificate nor PEM text holding one.
        public static let malformed = Code(name: "malformed")
        /// A bundled anchor's bytes differ from the pinned SHA-256 fingerprint.
        public static let fingerprintMismatch = Code(name: "fingerprintMismatch")
        /// No anchor was given.
        public static let empty = Code(name: "empty")

        /// The code's stable name, for example `missing`.
        public var description: String { name }
    }

    /// What went wrong.
    public let code: Code
    /// The file path or bundled anchor name involved.
    public let source: String
    /// A sentence for people; not part of equality.
    public let reason: String

    /// Creates an error.
    public init(code: Code, source: String, reason: String) {
        self.code = code
        self.source = source
        self.reason = reason
    }

    /// `"<source>: <reason>"`.
    public var description: String { "\(source): \(reason)" }

    /// Errors are equal when code and source are equal.
    public static func == (lhs: TrustAnchorError, rhs: TrustAnchorError) -> Bool {
        lhs.code == rhs.code && lhs.source == rhs.source
    }

    /// Hashes code and source.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(source)
    }
}

/// The certificates a verifier trusts, and nothing else.
///
/// Anchors come only from bytes the caller supplies (a file, a byte array, or the certificates
/// bundled with this module); never from the system trust store and never from the receipt.
/// Duplicates are removed; order is kept.
public struct TrustAnchors: Sendable, Hashable {
    /// The anchors, without duplicates.
    public let certificates: [Certificate]

    /// A short value that identifies the set (SHA-256 over the sorted anchor fingerprints), used
    /// to key cached chains.
    let identity: [UInt8]

    /// The SHA-256 fingerprint of each anchor, in order (empty for one whose digest OpenSSL could
    /// not compute), computed once for ``identity`` and for telling Apple's roots apart.
    let fingerprints: [[UInt8]]

    /// Trusts exactly `certificates`. An empty list trusts nothing.
    public init(_ certificates: [Certificate]) {
        // Duplicates by their bytes, compared in place: sets of anchors are small, and hashing
        // every certificate's encoding cost more than comparing a few of them.
        var unique: [Certificate] = []
        unique.reserveCapacity(certificates.count)
        for certificate in certificates where !unique.contains(where: { bytesEqual($0.derEncoded[...], certificate.derEncoded[...]) }) {
            unique.append(certificate)
        }
        self.certificates = unique
        fingerprints = unique.map { (try? $0.sha256Fingerprint) ?? [] }
        identity = TrustAnchors.identity(of: unique, fingerprints: fingerprints)
    }

    /// Reads every certificate in `bytes`: one DER certificate, or PEM text with one or more
    /// `CERTIFICATE` blocks.
    /// - Parameters:
    ///   - bytes: the certificate bytes, DER or PEM; nothing is trusted until they parse.
    ///   - source: a name for error messages (for example the file name).
    /// - Throws: ``TrustAnchorError/Code/malformed`` when no certificate can be read.
    public init(derOrPEM bytes: [UInt8], source: String = "anchor bytes") throws(TrustAnchorError) {
        guard !bytes.isEmpty else { throw TrustAnchorError(code: .malformed, source: source, reason: "no bytes") }
        do throws(CryptoError) {
            self.init(try Certificate.load(bytes, deferringOpenSSL: true))
        } catch {
            throw TrustAnchorError(code: .malformed, source: source, reason: "not a DER or PEM certificate: \(error.reason)")
        }
    }

    /// Reads the certificates in a file (DER, or PEM with one or more certificates).
    /// - Throws: ``TrustAnchorError/Code/missing`` when the file does not exist,
    ///   ``TrustAnchorError/Code/unreadable`` when it cannot be read (or is a directory),
    ///   ``TrustAnchorError/Code/malformed`` when it holds no certificate.
    public init(contentsOfFile path: String) throws(TrustAnchorError) {
        try self.init(derOrPEM: try TrustAnchors.readFile(path), source: path)
    }

    /// Both sets together (duplicates removed).
    public static func + (lhs: TrustAnchors, rhs: TrustAnchors) -> TrustAnchors {
        TrustAnchors(lhs.certificates + rhs.certificates)
    }

    /// Apple Inc. Root, Apple Root CA - G2 and Apple Root CA - G3 from the module's resources: the
    /// anchors for App Store receipts.
    /// - Throws: ``TrustAnchorError`` when a bundled file is missing or altered.
    public static var appleRoots: TrustAnchors {
        get throws(TrustAnchorError) {
            TrustAnchors([
                try BundledAnchors.certificate(.appleIncRoot), try BundledAnchors.certificate(.appleRootCAG2),
                try BundledAnchors.certificate(.appleRootCAG3),
            ])
        }
    }

    /// Xcode's StoreKit test certificate from the module's resources: the anchor for receipts
    /// made by Xcode's StoreKit testing (use it only for those).
    /// - Throws: ``TrustAnchorError`` when the bundled file is missing or altered.
    public static var storeKitTest: TrustAnchors {
        get throws(TrustAnchorError) { TrustAnchors([try BundledAnchors.certificate(.storeKitTest)]) }
    }

    /// The whole content of the file at `path`.
    static func readFile(_ path: String) throws(TrustAnchorError) -> [UInt8] {
        do {
            return try FileBytes.read(path, maximumSize: 1 << 20)
        } catch .missing {
            throw TrustAnchorError(code: .missing, source: path, reason: "no such file")
        } catch .isDirectory {
            throw TrustAnchorError(code: .unreadable, source: path, reason: "is a directory, not a certificate file")
        } catch .tooLarge {
            throw TrustAnchorError(code: .unreadable, source: path, reason: "larger than 1 MiB, not a certificate file")
        } catch {
            throw TrustAnchorError(code: .unreadable, source: path, reason: "cannot be read")
        }
    }

    static func identity(of certificates: [Certificate], fingerprints unsorted: [[UInt8]]) -> [UInt8] {
        guard unsorted.allSatisfy({ !$0.isEmpty }) else {
            // No digest available: fall back to the encodings themselves (still exact).
            return certificates.map(\.derEncoded).sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 }
        }
        let fingerprints = unsorted.sorted { $0.lexicographicallyPrecedes($1) }
        return (try? Digest.hash(.sha256, fingerprints.flatMap { $0 })) ?? fingerprints.flatMap { $0 }
    }
}

/// One of the certificates bundled with this module (see `Anchors/PROVENANCE.md`).
public enum BundledAnchor: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Apple Inc. Root (`CN=Apple Root CA`, valid to 2035-02-09): the root of every App Store
    /// receipt seen so far.
    case appleIncRoot
    /// Apple Root CA - G2 (RSA 4096, valid to 2039-04-30).
    case appleRootCAG2
    /// Apple Root CA - G3 (ECC P-384, valid to 2039-04-30).
    case appleRootCAG3
    /// Xcode's StoreKit test certificate (valid to 2040-03-27); trust it only for Xcode receipts.
    case storeKitTest
    /// Apple iTunes Store Certification Authority (2009-2016), the pinned intermediate for legacy
    /// iOS 6 transaction receipts. Not an anchor for app receipts.
    case appleITunesStoreCA
    /// Apple Worldwide Developer Relations Certification Authority (2013-2023, serial
    /// 01DEBCC4396DA010), the pinned intermediate for iOS 6 transaction receipts with version-3
    /// signature blobs. Not an anchor.
    case appleWWDRCA2013

    /// The resource file name under `Anchors/`.
    public var fileName: String {
        switch self {
        case .appleIncRoot: "AppleIncRootCertificate.cer"
        case .appleRootCAG2: "AppleRootCA-G2.cer"
        case .appleRootCAG3: "AppleRootCA-G3.cer"
        case .storeKitTest: "StoreKitTestCertificate.cer"
        case .appleITunesStoreCA: "AppleiTunesStoreCertificationAuthority.der"
        case .appleWWDRCA2013: "AppleWWDRCA-2013.der"
        }
    }

    /// The SHA-256 of the file, lower-case hex; a bundled file with any other digest is refused.
    public var sha256Fingerprint: String {
        switch self {
        case .appleIncRoot: "b0b1730ecbc7ff4505142c49f1295e6eda6bcaed7e2c68c5be91b5a11001f024"
        case .appleRootCAG2: "c2b9b042dd57830e7d117dac55ac8ae19407d38e41d88f3215bc3a890444a050"
        case .appleRootCAG3: "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179"
        case .storeKitTest: "ff0ba36e721d2db741d2aa11e6112ef78bf7131b46c7f035b00891d045c864fe"
        case .appleITunesStoreCA: "447ad65484610f20fdc33804c8597a1e208fbe4ef9c5653485cc7d3df730c016"
        case .appleWWDRCA2013: "ce057691d730f89ca25e916f7335f4c8a15713dcd273a658c024023f8eb809c2"
        }
    }

    /// The case name, for example `appleIncRoot`.
    public var description: String { rawValue }
}

/// The certificates bundled with this module as package resources, each checked against its
/// pinned SHA-256 fingerprint when first loaded (then kept for the life of the process).
///
/// The resource bundle (`RMStore_ReceiptVerification.resources`) is looked up next to the running
/// executable (for `swift test`, next to the test bundle), without SwiftPM's generated
/// `Bundle.module`, which stops the process when the bundle is missing. A missing bundle or file
/// is a ``TrustAnchorError``. Deployments that place the files elsewhere can load them with
/// ``certificate(_:in:)``.
public enum BundledAnchors {
    /// Apple Inc. Root. - Throws: ``TrustAnchorError``.
    public static var appleIncRoot: Certificate { get throws(TrustAnchorError) { try certificate(.appleIncRoot) } }
    /// Apple Root CA - G2. - Throws: ``TrustAnchorError``.
    public static var appleRootCAG2: Certificate { get throws(TrustAnchorError) { try certificate(.appleRootCAG2) } }
    /// Apple Root CA - G3. - Throws: ``TrustAnchorError``.
    public static var appleRootCAG3: Certificate { get throws(TrustAnchorError) { try certificate(.appleRootCAG3) } }
    /// Xcode's StoreKit test certificate. - Throws: ``TrustAnchorError``.
    public static var storeKitTest: Certificate { get throws(TrustAnchorError) { try certificate(.storeKitTest) } }
    /// Apple iTunes Store Certification Authority (legacy transaction receipts). - Throws: ``TrustAnchorError``.
    public static var appleITunesStoreCA: Certificate {
        get throws(TrustAnchorError) { try certificate(.appleITunesStoreCA) }
    }
    /// Apple WWDR CA 2013 (version-3 transaction receipts). - Throws: ``TrustAnchorError``.
    public static var appleWWDRCA2013: Certificate {
        get throws(TrustAnchorError) { try certificate(.appleWWDRCA2013) }
    }

    /// The bundled certificate `anchor`, loaded when first asked for (each file on its own: a
    /// process that needs the three Apple roots parses no other bundled certificate) and checked
    /// against its fingerprint; the result, certificate or error, is kept for the life of the process.
    public static func certificate(_ anchor: BundledAnchor) throws(TrustAnchorError) -> Certificate {
        if let result = loaded.withLock({ $0[anchor] }) { return try result.get() }
        let result: Result<Certificate, TrustAnchorError>
        if let directory = locatedDirectory {
            do throws(TrustAnchorError) {
                result = .success(try certificate(anchor, in: directory))
            } catch {
                result = .failure(error)
            }
        } else {
            result = .failure(
                TrustAnchorError(
                    code: .missing, source: anchor.fileName,
                    reason: "the resource bundle \(bundleName) was not found next to the executable"))
        }
        // Two threads may load the same file at once; the first result stored is the one kept.
        return try loaded.withLock { loaded in
            if let earlier = loaded[anchor] { return earlier }
            loaded[anchor] = result
            return result
        }.get()
    }

    /// Loads `anchor` from `directory` (a folder holding the files under their ``BundledAnchor/fileName``),
    /// checking the pinned fingerprint. Not cached.
    public static func certificate(_ anchor: BundledAnchor, in directory: URL) throws(TrustAnchorError) -> Certificate {
        let path = directory.appendingPathComponent(anchor.fileName).path
        let bytes = try TrustAnchors.readFile(path)
        let digest: [UInt8]
        do throws(CryptoError) {
            digest = try Digest.hash(.sha256, bytes)
        } catch {
            throw TrustAnchorError(code: .unreadable, source: path, reason: "cannot compute the fingerprint: \(error.reason)")
        }
        guard Hex.encode(digest) == anchor.sha256Fingerprint else {
            throw TrustAnchorError(
                code: .fingerprintMismatch, source: path,
                reason: "SHA-256 \(Hex.encode(digest)) differs from the pinned \(anchor.sha256Fingerprint)")
        }
        do throws(CryptoError) {
            return try Certificate(deferringOpenSSL: bytes)
        } catch {
            throw TrustAnchorError(code: .malformed, source: path, reason: "not a DER certificate: \(error.reason)")
        }
    }

    /// The `Anchors` folder inside the module's resource bundle, if it can be found.
    public static var resourceDirectory: URL? { locatedDirectory }

    static let bundleName = "RMStore_ReceiptVerification.resources"

    private static let locatedDirectory: URL? = {
        var candidates: [URL] = [Bundle.main.bundleURL]
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        if let resources = Bundle.main.resourceURL { candidates.append(resources) }
        for base in candidates {
            let directory = base.appendingPathComponent(bundleName).appendingPathComponent("Anchors")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue {
                return directory
            }
        }
        return nil
    }()

    /// The bundled certificates loaded so far, by ``certificate(_:)``.
    private static let loaded = Locked<[BundledAnchor: Result<Certificate, TrustAnchorError>]>([:])
}
