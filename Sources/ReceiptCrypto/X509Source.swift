internal import COpenSSL
import Foundation

/// Where a ``Certificate``'s OpenSSL `X509` comes from: parsed at once (``Certificate/init(derEncoded:)``)
/// or, for a certificate read by the package's own reader
/// (``Certificate/init(deferringOpenSSL:)``), parsed by `d2i_X509` the first time something
/// needs it, and its public key built once with `EVP_PKEY_fromdata`.
///
/// `@unchecked Sendable`: the lazily made values are created under `lock` and never change once
/// set; everything else is immutable.
final class X509Source: @unchecked Sendable {
    /// The own reader's fields; nil for a certificate OpenSSL parsed at once.
    let fields: CertificateFields?
    private let lock = NSLock()
    private var parsed: X509Handle?
    /// What ``handle(_:)`` gives when `d2i_X509` fails: ``empty`` (for a certificate OpenSSL
    /// parsed at once, its own `X509`, which is always there).
    private let fallback: X509Handle
    private var key: PublicKey?
    /// basicConstraints' cA and pathLenConstraint, and keyUsage, read once when the source is
    /// made: chain policies ask for them on every verification.
    let isCA: Bool
    let pathLength: Int?
    let keyUsage: KeyUsage?

    /// One empty `X509` (no names, no extensions, no key: every OpenSSL validation of it fails),
    /// made once per process and shared; nil only if OpenSSL could not allocate it, in which case
    /// ``Certificate/init(deferringOpenSSL:)`` refuses to defer.
    static let empty: X509Handle? = X509_new().map { X509Handle(owning: $0) }

    init(handle: X509Handle) {
        fields = nil
        parsed = handle
        fallback = handle
        let flags = X509_get_extension_flags(handle.pointer)
        isCA = flags & UInt32(EXFLAG_CA) != 0 && flags & UInt32(EXFLAG_INVALID) == 0
        let length = X509_get_pathlen(handle.pointer)
        pathLength = length >= 0 ? Int(length) : nil
        keyUsage = flags & UInt32(EXFLAG_KUSAGE) != 0 ? KeyUsage(openSSLBits: X509_get_key_usage(handle.pointer)) : nil
    }

    init(fields: CertificateFields, fallback: X509Handle) {
        self.fields = fields
        self.fallback = fallback
        isCA = fields.isCA
        pathLength = fields.pathLength
        keyUsage = fields.keyUsage
    }

    /// The `X509`, parsed from `der` on first use. Bytes the own reader accepted but OpenSSL does
    /// not (the `certificate` fuzz target's oracle finds none; `d2i_X509` may also fail for want
    /// of memory) yield ``empty``, which every OpenSSL validation refuses: failing closed, never
    /// trapping.
    func handle(_ der: [UInt8]) -> X509Handle {
        lock.lock()
        defer { lock.unlock() }
        if let parsed { return parsed }
        OpenSSLErrorQueue.clear()
        let x509 = withNonNullBytes(der) { base, count in
            var cursor: UnsafePointer<UInt8>? = base
            return d2i_X509(nil, &cursor, count)
        }
        let handle = x509.map { X509Handle(owning: $0) } ?? fallback
        OpenSSLErrorQueue.clear()
        parsed = handle
        return handle
    }

    /// The public key of `subjectPublicKeyInfo` (the certificate's own), built once: with
    /// `EVP_PKEY_fromdata` for the EC and RSA forms ``PublicKeyImport`` reads, else by OpenSSL's
    /// SubjectPublicKeyInfo decoder.
    func publicKey(_ subjectPublicKeyInfo: ArraySlice<UInt8>) throws(CryptoError) -> PublicKey {
        lock.lock()
        defer { lock.unlock() }
        if let key { return key }
        let made: PublicKey
        if let imported = PublicKeyImport.key(subjectPublicKeyInfo: subjectPublicKeyInfo) {
            made = imported
        } else {
            do throws(CryptoError) {
                made = try PublicKey(subjectPublicKeyInfoDER: Array(subjectPublicKeyInfo))
            } catch {
                throw .plain(.unsupportedAlgorithm, "OpenSSL cannot decode the certificate's public key: \(error.reason)")
            }
        }
        key = made
        return made
    }
}

extension DistinguishedName {
    /// The name whose DER encoding is `der`, read by OpenSSL (`d2i_X509_NAME`, which involves no
    /// key decoder); no components when OpenSSL cannot read it.
    init(derEncoded der: ArraySlice<UInt8>) {
        OpenSSLErrorQueue.clear()
        let name = withNonNullBytes(der) { base, count in
            var cursor: UnsafePointer<UInt8>? = base
            return d2i_X509_NAME(nil, &cursor, count)
        }
        defer { if let name { X509_NAME_free(name) } }
        self.init(x509Name: name)
        OpenSSLErrorQueue.clear()
    }
}
