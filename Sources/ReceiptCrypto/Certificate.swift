public import ASN1
internal import COpenSSL
public import Foundation
import Internals

/// Owns one OpenSSL `X509`.
///
/// `@unchecked Sendable`: immutable after `init`. `init` forces OpenSSL to compute its lazily
/// cached extension data (`X509_check_purpose(x, -1, 0)`), so later readers on other threads only
/// read. Every use after that is a const getter, an encoder, or a reference taken by a per-call
/// `X509_STORE`/`X509_STORE_CTX`, which OpenSSL 3 supports concurrently.
final class X509Handle: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of one reference to `pointer`.
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
        _ = X509_check_purpose(pointer, -1, 0)
        OpenSSLErrorQueue.clear()
    }

    deinit { X509_free(pointer) }
}

/// An X.509 certificate parsed by OpenSSL.
///
/// Equality and hashing use the DER encoding only. Values are immutable and `Sendable`; any
/// accessor may be called from any thread.
public struct Certificate: Sendable, Hashable, CustomStringConvertible {
    /// The OpenSSL `X509`, parsed when this value was made or, for a certificate made with
    /// ``init(deferringOpenSSL:)``, when first needed.
    let source: X509Source

    var handle: X509Handle { source.handle(derEncoded) }

    /// The OpenSSL `X509` behind this value, for CryptoBaselines' comparisons with OpenSSL. It stays
    /// valid while this value (or a copy) is alive; callers must not free or modify it.
    package var x509: OpaquePointer { handle.pointer }

    /// The certificate's DER encoding, exactly as given to ``init(derEncoded:)`` (or as re-encoded
    /// by OpenSSL for certificates it produced).
    public let derEncoded: [UInt8]

    /// The start of the validity period.
    public let notBefore: Date

    /// The end of the validity period (inclusive, as RFC 5280 defines it).
    public let notAfter: Date

    /// The OIDs of the extensions, in certificate order, read once when the certificate is parsed
    /// (``hasExtension(oid:)`` runs on every receipt verification). An extension whose OID has an
    /// arc beyond 64 bits, which `ASN1ObjectIdentifier` cannot hold, is not listed.
    public let extensionOIDs: [ASN1ObjectIdentifier]

    /// Parses one DER-encoded certificate.
    ///
    /// - Throws: ``CryptoError/Code/emptyInput`` for no bytes, ``CryptoError/Code/malformedInput``
    ///   when OpenSSL cannot decode the bytes or the validity dates, and
    ///   ``CryptoError/Code/trailingBytes`` when bytes follow the certificate.
    public init(derEncoded: [UInt8]) throws(CryptoError) {
        guard !derEncoded.isEmpty else { throw .plain(.emptyInput, "no certificate bytes") }
        OpenSSLErrorQueue.clear()
        let parsed: (OpaquePointer?, Int) = withNonNullBytes(derEncoded) { base, count in
            var cursor: UnsafePointer<UInt8>? = base
            let x509 = d2i_X509(nil, &cursor, count)
            let consumed = cursor.map { $0 - base } ?? 0
            return (x509, consumed)
        }
        guard let x509 = parsed.0 else {
            throw .openSSL(.malformedInput, "the bytes are not a DER-encoded X.509 certificate")
        }
        guard parsed.1 == derEncoded.count else {
            X509_free(x509)
            throw .plain(.trailingBytes, "\(derEncoded.count - parsed.1) bytes follow the certificate")
        }
        try self.init(handle: X509Handle(owning: x509), derEncoded: derEncoded)
    }

    /// Parses one DER-encoded certificate with the package's own reader (``CertificateFields``),
    /// leaving OpenSSL's parser for when something needs the `X509` (most verifications never
    /// do: ``TrustStore`` validates such certificates without it when it can). Bytes the reader
    /// does not accept are parsed by OpenSSL at once, with the errors of ``init(derEncoded:)``;
    /// ``CryptoError/Code/operationFailed`` if OpenSSL could not allocate the empty `X509` that
    /// stands in, should `d2i_X509` later fail, for a certificate every validation then refuses.
    package init(deferringOpenSSL derEncoded: [UInt8]) throws(CryptoError) {
        guard let fields = CertificateFields.parse(derEncoded) else {
            try self.init(derEncoded: derEncoded)
            return
        }
        guard let empty = X509Source.empty else { throw .plain(.operationFailed, "OpenSSL could not allocate an X509") }
        self.init(
            source: X509Source(fields: fields, fallback: empty), derEncoded: derEncoded,
            notBefore: Date(timeIntervalSince1970: TimeInterval(fields.notBefore)),
            notAfter: Date(timeIntervalSince1970: TimeInterval(fields.notAfter)),
            extensionOIDs: fields.extensions.compactMap { try? ASN1ObjectIdentifier(validatingContent: derEncoded[$0.oid]) })
    }

    private init(source: X509Source, derEncoded: [UInt8], notBefore: Date, notAfter: Date, extensionOIDs: [ASN1ObjectIdentifier]) {
        self.source = source
        self.derEncoded = derEncoded
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.extensionOIDs = extensionOIDs
    }

    /// The own reader's fields, for a certificate made with ``init(deferringOpenSSL:)``.
    package var fields: CertificateFields? { source.fields }

    /// Parses exactly one PEM `CERTIFICATE` block (text around the block is ignored).
    ///
    /// - Throws: ``CryptoError/Code/emptyInput`` if the text holds no certificate block,
    ///   ``CryptoError/Code/invalidArgument`` if it holds more than one, and the errors of
    ///   ``init(derEncoded:)`` for the block's contents.
    public init(pemEncoded: String) throws(CryptoError) {
        let certificates = try Certificate.loadPEM(Array(pemEncoded.utf8))
        guard let first = certificates.first else {
            throw .plain(.emptyInput, "no PEM CERTIFICATE block found")
        }
        guard certificates.count == 1 else {
            throw .plain(.invalidArgument, "expected one PEM certificate, found \(certificates.count)")
        }
        self = first
    }

    /// Loads certificates from bytes that are either one DER certificate or PEM text with one or
    /// more `CERTIFICATE` blocks (other PEM block types and text between blocks are skipped).
    ///
    /// Bytes that start with a SEQUENCE tag (`0x30`) are DER; anything else is read as PEM text.
    /// OpenSSL's PEM reader requires each `-----BEGIN` marker to start a line.
    ///
    /// - Throws: ``CryptoError/Code/emptyInput`` if no certificate is found, otherwise the errors of
    ///   ``init(derEncoded:)``.
    public static func load(_ bytes: [UInt8]) throws(CryptoError) -> [Certificate] {
        try load(bytes, deferringOpenSSL: false)
    }

    /// ``load(_:)``, with DER certificates made by ``init(deferringOpenSSL:)`` when `deferring`.
    package static func load(_ bytes: [UInt8], deferringOpenSSL deferring: Bool) throws(CryptoError) -> [Certificate] {
        guard let first = bytes.first else { throw .plain(.emptyInput, "no certificate bytes") }
        if first != 0x30 {
            let certificates = try loadPEM(bytes)
            guard !certificates.isEmpty else { throw .plain(.emptyInput, "no PEM CERTIFICATE block found") }
            return certificates
        }
        return [deferring ? try Certificate(deferringOpenSSL: bytes) : try Certificate(derEncoded: bytes)]
    }

    /// Wraps an `X509` of which the caller hands over one reference (for example an element of a
    /// stack returned by a `get1` function after `X509_up_ref`).
    init(owning x509: OpaquePointer) throws(CryptoError) {
        let handle = X509Handle(owning: x509)
        guard let der = encodeDER({ i2d_X509(x509, $0) }) else {
            throw .openSSL(.operationFailed, "i2d_X509 failed")
        }
        try self.init(handle: handle, derEncoded: der)
    }

    private init(handle: X509Handle, derEncoded: [UInt8]) throws(CryptoError) {
        guard let notBefore = TimeConversion.date(X509_get0_notBefore(handle.pointer)),
            let notAfter = TimeConversion.date(X509_get0_notAfter(handle.pointer))
        else {
            throw .plain(.malformedInput, "the certificate's validity dates cannot be parsed")
        }
        self.source = X509Source(handle: handle)
        self.derEncoded = derEncoded
        self.notBefore = notBefore
        self.notAfter = notAfter
        let count = max(0, Int(X509_get_ext_count(handle.pointer)))
        var oids: [ASN1ObjectIdentifier] = []
        oids.reserveCapacity(count)
        for index in 0..<count {
            guard let ext = X509_get_ext(handle.pointer, Int32(index)),
                let oid = objectIdentifier(X509_EXTENSION_get_object(ext))
            else { continue }
            oids.append(oid)
        }
        extensionOIDs = oids
    }

    // MARK: Names and numbers

    /// The subject name.
    public var subject: DistinguishedName {
        if let fields { return DistinguishedName(derEncoded: derEncoded[fields.subject]) }
        return DistinguishedName(x509Name: X509_get_subject_name(handle.pointer))
    }

    /// The issuer name.
    public var issuer: DistinguishedName {
        if let fields { return DistinguishedName(derEncoded: derEncoded[fields.issuer]) }
        return DistinguishedName(x509Name: X509_get_issuer_name(handle.pointer))
    }

    /// The serial number's magnitude as big-endian bytes without leading zero padding (the
    /// form `openssl x509 -serial` prints). A negative serial (non-conforming) yields its magnitude.
    public var serialNumber: [UInt8] {
        if let fields { return Array(derEncoded[fields.serial].drop { $0 == 0 }) }
        guard let serial = X509_get0_serialNumber(handle.pointer) else { return [] }
        return asn1StringBytes(serial)
    }

    /// ``serialNumber`` as upper-case hexadecimal, for example `"7D3920094EBEF3F8EFCA6C10EA8E4303"`.
    public var serialNumberHex: String { Hex.encode(serialNumber, uppercase: true) }

    /// The X.509 version number as written on the wire plus one: 1, 2 or 3.
    public var version: Int { fields == nil ? Int(X509_get_version(handle.pointer)) + 1 : 3 }

    /// The OID of the certificate's outer `signatureAlgorithm` (nil only for an OID with an arc
    /// beyond 64 bits, which no known algorithm has).
    public var signatureAlgorithmOID: ASN1ObjectIdentifier? {
        if let fields { return try? ASN1ObjectIdentifier(validatingContent: derEncoded[fields.algorithmOID]) }
        var algorithm: UnsafePointer<X509_ALGOR>?
        X509_get0_signature(nil, &algorithm, handle.pointer)
        var object: OpaquePointer?
        X509_ALGOR_get0(&object, nil, nil, algorithm)
        return objectIdentifier(object)
    }

    /// ``signatureAlgorithmOID`` decoded, or nil for algorithms this module does not know.
    public var signatureAlgorithm: SignatureAlgorithm? { signatureAlgorithmOID.flatMap { SignatureAlgorithm(oid: $0) } }

    // MARK: Extensions

    /// Whether the certificate carries an extension with the OID `oid`.
    public func hasExtension(oid: ASN1ObjectIdentifier) -> Bool {
        // By index: comparing in place, without copying (and retaining) each identifier.
        // In place, lengths first: only identifiers of the same length are compared (and
        // retained for the comparison), not every extension of the certificate.
        let length = oid.encodedContent.count
        return extensionOIDs.withUnsafeBufferPointer { oids in
            for index in oids.indices where oids[index].encodedContent.count == length && oids[index] == oid { return true }
            return false
        }
    }

    /// The contents of the `extnValue` OCTET STRING of the first extension with the OID `oid`
    /// (that is, the DER encoding of the extension's value), or nil if absent. Apple's receipt
    /// marker extensions return `[0x05, 0x00]` (DER NULL).
    public func extensionValue(oid: ASN1ObjectIdentifier) -> [UInt8]? {
        extensions().first { $0.oid == oid }?.value
    }

    /// Whether the first extension with the OID `oid` is marked critical; nil if absent.
    public func isExtensionCritical(oid: ASN1ObjectIdentifier) -> Bool? {
        extensions().first { $0.oid == oid }?.critical
    }

    private struct RawExtension {
        var oid: ASN1ObjectIdentifier?
        var critical: Bool
        var value: [UInt8]
    }

    private func extensions() -> [RawExtension] {
        if let fields {
            return fields.extensions.map {
                RawExtension(
                    oid: try? ASN1ObjectIdentifier(validatingContent: derEncoded[$0.oid]), critical: $0.critical,
                    value: Array(derEncoded[$0.value]))
            }
        }
        let count = X509_get_ext_count(handle.pointer)
        guard count > 0 else { return [] }
        var result: [RawExtension] = []
        result.reserveCapacity(Int(count))
        for index in 0..<count {
            guard let ext = X509_get_ext(handle.pointer, index) else { continue }
            let oid = objectIdentifier(X509_EXTENSION_get_object(ext))
            let critical = X509_EXTENSION_get_critical(ext) > 0
            let value = asn1StringBytes(X509_EXTENSION_get_data(ext))
            result.append(RawExtension(oid: oid, critical: critical, value: value))
        }
        return result
    }

    /// Whether basicConstraints says `cA: TRUE`. False when the extension is absent, or when
    /// OpenSSL found the certificate's extensions invalid.
    public var isCA: Bool { source.isCA }

    /// basicConstraints' `pathLenConstraint`, or nil when absent.
    public var pathLengthConstraint: Int? { source.pathLength }

    /// The keyUsage extension's bits, or nil when the certificate has no keyUsage extension.
    public var keyUsage: KeyUsage? { source.keyUsage }

    /// Whether OpenSSL flagged the certificate's extensions as invalid (for example duplicated or
    /// undecodable). Chain validation refuses such certificates.
    public var hasInvalidExtensions: Bool {
        X509_get_extension_flags(handle.pointer) & UInt32(EXFLAG_INVALID) != 0
    }

    // MARK: Keys and fingerprints

    /// The subject public key.
    ///
    /// Its ``PublicKey/derEncoded`` is the certificate's own SubjectPublicKeyInfo, re-encoded from
    /// the parsed structure (`i2d_X509_PUBKEY`), not through OpenSSL 3's key encoders, whose set-up
    /// cost more than the rest of a cold receipt verification's bookkeeping.
    /// - Throws: ``CryptoError/Code/unsupportedAlgorithm`` if OpenSSL cannot decode the key type.
    public var publicKey: PublicKey {
        get throws(CryptoError) {
            if let fields { return try source.publicKey(derEncoded[fields.subjectPublicKeyInfo]) }
            OpenSSLErrorQueue.clear()
            guard let key = X509_get_pubkey(handle.pointer) else {
                throw .openSSL(.unsupportedAlgorithm, "OpenSSL cannot decode the certificate's public key")
            }
            guard let info = X509_get_X509_PUBKEY(handle.pointer), let der = encodeDER({ i2d_X509_PUBKEY(info, $0) }) else {
                EVP_PKEY_free(key)
                throw .openSSL(.operationFailed, "i2d_X509_PUBKEY failed")
            }
            return PublicKey(owning: key, subjectPublicKeyInfo: der)
        }
    }

    /// SHA-256 of ``derEncoded``.
    public var sha256Fingerprint: [UInt8] {
        get throws(CryptoError) { try Digest.hash(.sha256, derEncoded) }
    }

    /// SHA-1 of ``derEncoded``.
    public var sha1Fingerprint: [UInt8] {
        get throws(CryptoError) { try Digest.hash(.sha1, derEncoded) }
    }

    /// Whether the subject equals the issuer and the certificate's signature verifies with its own
    /// public key. Being self-signed says nothing about trust.
    public var isSelfSigned: Bool {
        let result = X509_self_signed(handle.pointer, 1)
        OpenSSLErrorQueue.clear()
        return result == 1
    }

    /// Whether `date` lies within `notBefore...notAfter` (both inclusive, as RFC 5280 defines).
    /// Informational; ``TrustStore`` performs the authoritative check, in which OpenSSL already
    /// counts the `notAfter` second itself as expired.
    public func isWithinValidityPeriod(at date: Date) -> Bool {
        notBefore <= date && date <= notAfter
    }

    // MARK: Hashable, description

    /// Certificates are equal when their DER encodings are equal.
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        lhs.derEncoded == rhs.derEncoded
    }

    /// Hashes the DER encoding.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derEncoded)
    }

    /// A one-line rendering for logs.
    public var description: String {
        "Certificate(subject: \(subject), issuer: \(issuer), serial: \(serialNumberHex))"
    }

    // MARK: PEM

    private static func loadPEM(_ bytes: [UInt8]) throws(CryptoError) -> [Certificate] {
        try withReadOnlyBIO(bytes) { bio throws(CryptoError) in
            var certificates: [Certificate] = []
            while true {
                OpenSSLErrorQueue.clear()
                var name: UnsafeMutablePointer<CChar>?
                var header: UnsafeMutablePointer<CChar>?
                var data: UnsafeMutablePointer<UInt8>?
                var length = 0
                let ok = PEM_read_bio(bio, &name, &header, &data, &length)
                defer {
                    rmshim_OPENSSL_free(name)
                    rmshim_OPENSSL_free(header)
                    rmshim_OPENSSL_free(data)
                }
                guard ok == 1 else {
                    let last = ERR_peek_last_error()
                    if rmshim_ERR_GET_LIB(last) == ERR_LIB_PEM && rmshim_ERR_GET_REASON(last) == PEM_R_NO_START_LINE {
                        OpenSSLErrorQueue.clear()
                        return certificates
                    }
                    throw .openSSL(.malformedInput, "malformed PEM block")
                }
                let label = name.map { String(cString: $0) } ?? ""
                guard label == "CERTIFICATE" || label == "X509 CERTIFICATE" else { continue }
                guard let data, length > 0 else { throw .plain(.malformedInput, "empty PEM CERTIFICATE block") }
                let der = Array(UnsafeBufferPointer(start: data, count: length))
                certificates.append(try Certificate(derEncoded: der))
            }
        }
    }
}

// MARK: - Distinguished names

/// An X.509 distinguished name as an ordered list of attribute components.
///
/// Components keep the order of the encoding (most general first, for Apple certificates
/// `C, O, OU, CN`). ``rfc2253String`` renders them in RFC 2253 order (most specific first).
/// Multi-valued RDNs are flattened into consecutive components.
public struct DistinguishedName: Sendable, Hashable, CustomStringConvertible {
    /// One attribute of a name.
    public struct Component: Sendable, Hashable {
        /// OpenSSL's short name for the attribute type (`CN`, `O`, `OU`, `C`, `emailAddress`, ...),
        /// or the dotted OID when it has none.
        public var shortName: String
        /// The attribute type's OID (nil only for an OID with an arc beyond 64 bits).
        public var oid: ASN1ObjectIdentifier?
        /// The value as a Swift string; values that are not valid text are rendered as `#` and the
        /// hexadecimal of their bytes.
        public var value: String

        /// Creates a component.
        public init(shortName: String, oid: ASN1ObjectIdentifier?, value: String) {
            self.shortName = shortName
            self.oid = oid
            self.value = value
        }
    }

    /// The components in encoding order.
    public var components: [Component]

    /// Creates a name from components in encoding order.
    public init(components: [Component]) {
        self.components = components
    }

    init(x509Name: OpaquePointer?) {
        guard let x509Name else {
            self.components = []
            return
        }
        let count = X509_NAME_entry_count(x509Name)
        var components: [Component] = []
        if count > 0 {
            for index in 0..<count {
                guard let entry = X509_NAME_get_entry(x509Name, index) else { continue }
                let object = X509_NAME_ENTRY_get_object(entry)
                let oid = objectIdentifier(object)
                let nid = OBJ_obj2nid(object)
                let shortName = (nid != NID_undef ? OBJ_nid2sn(nid).map { String(cString: $0) } : nil) ?? Self.dotted(object)
                components.append(Component(shortName: shortName, oid: oid, value: Self.text(X509_NAME_ENTRY_get_data(entry))))
            }
        }
        self.components = components
    }

    /// OpenSSL's dotted rendering of an attribute type (which, unlike ``ASN1ObjectIdentifier``,
    /// has no limit on arc size), for names OpenSSL has no short name for.
    private static func dotted(_ object: OpaquePointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let needed = Int(OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1))
        guard needed > 0 else { return "" }
        if needed >= buffer.count {
            // Long OIDs: OBJ_obj2txt returns the full length; retry with a buffer that fits (bounded).
            guard needed < 4096 else { return "" }
            buffer = [CChar](repeating: 0, count: needed + 1)
            guard OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1) > 0 else { return "" }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func text(_ string: UnsafeMutablePointer<ASN1_STRING>?) -> String {
        guard let string else { return "" }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, string)
        defer { rmshim_OPENSSL_free(utf8) }
        guard length >= 0, let utf8 else {
            OpenSSLErrorQueue.clear()
            return "#" + Hex.encode(asn1StringBytes(string))
        }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    /// The value of the first component whose short name (or dotted OID) is `name`.
    public func value(for name: String) -> String? {
        components.first { $0.shortName == name || $0.oid?.description == name }?.value
    }

    /// The first common name (`CN`), if any.
    public var commonName: String? { value(for: "CN") }

    /// A one-line rendering in RFC 2253 style: most specific component first, `type=value` joined by
    /// commas, with `,+"\<>;` escaped, for example
    /// `CN=Apple Root CA,OU=Apple Certification Authority,O=Apple Inc.,C=US`.
    public var rfc2253String: String {
        components.reversed().map { "\($0.shortName)=\(Self.escape($0.value))" }.joined(separator: ",")
    }

    /// A one-line rendering for logs.
    public var description: String { rfc2253String }

    private static func escape(_ value: String) -> String {
        var result = ""
        let characters = Array(value)
        for (index, character) in characters.enumerated() {
            switch character {
            case ",", "+", "\"", "\\", "<", ">", ";":
                result.append("\\")
            case "#" where index == 0, " " where index == 0 || index == characters.count - 1:
                result.append("\\")
            default:
                break
            }
            result.append(character)
        }
        return result
    }
}

// MARK: - Key usage

/// The bits of the X.509 keyUsage extension (RFC 5280 section 4.2.1.3).
public struct KeyUsage: OptionSet, Sendable, Hashable {
    /// Bit n set means RFC 5280 keyUsage bit n is set.
    public let rawValue: UInt16

    /// Creates a set from raw bits (bit n = RFC 5280 keyUsage bit n).
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// digitalSignature (bit 0).
    public static let digitalSignature = KeyUsage(rawValue: 1 << 0)
    /// nonRepudiation / contentCommitment (bit 1).
    public static let nonRepudiation = KeyUsage(rawValue: 1 << 1)
    /// keyEncipherment (bit 2).
    public static let keyEncipherment = KeyUsage(rawValue: 1 << 2)
    /// dataEncipherment (bit 3).
    public static let dataEncipherment = KeyUsage(rawValue: 1 << 3)
    /// keyAgreement (bit 4).
    public static let keyAgreement = KeyUsage(rawValue: 1 << 4)
    /// keyCertSign (bit 5).
    public static let keyCertSign = KeyUsage(rawValue: 1 << 5)
    /// cRLSign (bit 6).
    public static let cRLSign = KeyUsage(rawValue: 1 << 6)
    /// encipherOnly (bit 7).
    public static let encipherOnly = KeyUsage(rawValue: 1 << 7)
    /// decipherOnly (bit 8).
    public static let decipherOnly = KeyUsage(rawValue: 1 << 8)

    /// The RFC 5280 bit numbers that are set, ascending.
    var bitNumbers: [Int] { (0..<9).filter { rawValue & (1 << $0) != 0 } }

    /// Maps OpenSSL's `KU_*` flags (first octet in the low byte, decipherOnly at 0x8000).
    init(openSSLBits bits: UInt32) {
        var usage: KeyUsage = []
        for bit in 0..<8 where bits & (0x80 >> UInt32(bit)) != 0 {
            usage.insert(KeyUsage(rawValue: 1 << UInt16(bit)))
        }
        if bits & 0x8000 != 0 { usage.insert(.decipherOnly) }
        self = usage
    }
}

extension Certificate {
    /// The certificate as a PEM block (`-----BEGIN CERTIFICATE-----`, base64 in 64-column lines).
    public var pemEncoded: String {
        let body = Data(derEncoded).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n"
    }
}
