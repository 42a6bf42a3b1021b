import Internals
public import JSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Bounds applied while reading a JWS, so no token costs unbounded memory or time.
public struct JWSLimits: Sendable, Hashable {
    /// Longest accepted token, in bytes (a notification with two nested tokens is about 18 KB).
    /// Default 256 KiB.
    public var maximumTokenSize: Int
    /// Longest decoded header, in bytes (Apple's, with three certificates, is about 3.3 KB).
    /// Default 16 KiB.
    public var maximumHeaderSize: Int
    /// Most certificates in `x5c`. Default 8 (Apple sends 3; a verifier rejects any other count,
    /// but parsing keeps up to this many so the verdict can name the problem).
    public var maximumCertificates: Int
    /// Longest certificate in `x5c`, in DER bytes. Default 8 KiB.
    public var maximumCertificateSize: Int
    /// Longest signature, in bytes (ES256 is 64). Default 512.
    public var maximumSignatureSize: Int
    /// Deepest JSON nesting in the header and payload. Default 32.
    public var maximumJSONDepth: Int
    /// Most JSON members and elements in the header or payload. Default 65,536.
    public var maximumJSONMembers: Int

    /// Creates limits; the defaults are listed on each property.
    public init(
        maximumTokenSize: Int = 256 << 10, maximumHeaderSize: Int = 16 << 10, maximumCertificates: Int = 8,
        maximumCertificateSize: Int = 8 << 10, maximumSignatureSize: Int = 512, maximumJSONDepth: Int = 32,
        maximumJSONMembers: Int = 1 << 16
    ) {
        self.maximumTokenSize = maximumTokenSize
        self.maximumHeaderSize = maximumHeaderSize
        self.maximumCertificates = maximumCertificates
        self.maximumCertificateSize = maximumCertificateSize
        self.maximumSignatureSize = maximumSignatureSize
        self.maximumJSONDepth = maximumJSONDepth
        self.maximumJSONMembers = maximumJSONMembers
    }

    /// The defaults listed on each property.
    public static let `default` = JWSLimits()

    /// The strict JSON options these limits imply.
    public var jsonOptions: JSONParseOptions {
        JSONParseOptions(
            rejectsDuplicateKeys: true, maximumInputSize: maximumTokenSize, maximumDepth: maximumJSONDepth,
            maximumMembers: maximumJSONMembers)
    }
}

/// A JWS in compact serialization (RFC 7515 §7.1), split and decoded, **not verified**.
///
/// Parsing checks the shape only: exactly three segments of strict base64url (URL-safe
/// alphabet, no padding, no whitespace, zero unused bits in the last character), a JSON header
/// with a string `alg`, and the limits of ``JWSLimits``, all while reading. Nothing here checks
/// the signature, the certificate chain, the dates or the payload's claims: a `CompactJWS` is
/// attacker-controlled data until a verifier that pins an anchor says otherwise. That is why the
/// payload is exposed only as ``unverifiedPayload`` (and, to the package's verifiers, decoded by
/// `decodePayloadToVerify(as:)`); a verified payload comes from a verifier's valid verdict, never
/// from this type.
///
/// What a verifier needs is kept exactly: ``signingInput`` (the ASCII bytes `header.payload` as
/// they appeared in the token), ``signature`` (the raw bytes, `r ‖ s` for ES256) and the `x5c`
/// certificates as DER (``JWSHeader/certificateChain``).
public struct CompactJWS: Sendable, Hashable {
    /// The token's bytes, exactly as given.
    public let token: [UInt8]
    /// Offset of the first dot (end of the header segment).
    public let headerEnd: Int
    /// Offset of the second dot (end of the signing input).
    public let signingInputEnd: Int
    /// The decoded, parsed header.
    public let header: JWSHeader
    /// The decoded payload bytes (JSON for every App Store payload). Unverified: see the type's
    /// documentation.
    public let unverifiedPayload: [UInt8]
    /// The decoded signature (64 bytes `r ‖ s` for ES256; the verifier checks the length).
    public let signature: [UInt8]

    /// The signed bytes: `base64url(header) . base64url(payload)` exactly as they appear in the
    /// token.
    public var signingInput: ArraySlice<UInt8> { token[..<signingInputEnd] }

    /// The token as text.
    public var text: String { String(decoding: token, as: UTF8.self) }

    /// Splits and decodes a compact JWS.
    ///
    /// With a `headerCache`, a header segment seen before (same bytes, same limits) is not
    /// decoded again; the result is the same either way.
    /// - Throws: ``JWSError`` with the offset of the first offending byte of `token`.
    public init(_ token: [UInt8], limits: JWSLimits = .default, headerCache: JWSHeaderCache? = nil) throws(JWSError) {
        guard token.count <= limits.maximumTokenSize else {
            throw .make(.tokenTooLarge, limits.maximumTokenSize, "a token of \(token.count) bytes exceeds \(limits.maximumTokenSize)")
        }
        let parts = try token.span.withUnsafeBufferPointer { (buffer) throws(JWSError) -> Parts in
            try Self.split(buffer, limits: limits, headerCache: headerCache)
        }
        self.token = token
        self.headerEnd = parts.firstDot
        self.signingInputEnd = parts.secondDot
        self.header = parts.header
        self.unverifiedPayload = parts.payload
        self.signature = parts.signature
        self.limits = limits
    }

    /// Splits and decodes a compact JWS given as text.
    public init(_ token: String, limits: JWSLimits = .default, headerCache: JWSHeaderCache? = nil) throws(JWSError) {
        try self.init(Array(token.utf8), limits: limits, headerCache: headerCache)
    }

    /// Splits and decodes a compact JWS held in a slice; offsets count from the slice's start.
    public init(_ token: ArraySlice<UInt8>, limits: JWSLimits = .default, headerCache: JWSHeaderCache? = nil) throws(JWSError) {
        try self.init(Array(token), limits: limits, headerCache: headerCache)
    }

    /// Decodes the payload as `type`, for the package's verifiers, which go on to verify it:
    /// `package`, not `public`, so that no caller outside the package reads a payload without a
    /// verdict (tools that must, such as `receipt-tool dump`, use
    /// ``AppStorePayload/decodeUnverified(_:as:)``, whose name says so). Offsets in errors point
    /// into the token.
    package func decodePayloadToVerify<Payload: JWSPayload>(as type: Payload.Type = Payload.self) throws(JWSError) -> Payload {
        do {
            return try Payload(jsonPayload: unverifiedPayload, limits: limits)
        } catch {
            throw error.mapped(toSegmentAt: headerEnd + 1)
        }
    }

    /// The limits the token was read with; the payload decoders use them too.
    let limits: JWSLimits

    struct Parts {
        var firstDot: Int
        var secondDot: Int
        var header: JWSHeader
        var payload: [UInt8]
        var signature: [UInt8]
    }

    static func split(_ buffer: UnsafeBufferPointer<UInt8>, limits: JWSLimits, headerCache: JWSHeaderCache?) throws(JWSError) -> Parts {
        let count = buffer.count
        guard let first = Self.firstDot(buffer, from: 0) else {
            throw .make(.wrongSegmentCount, count, "one segment (no '.')")
        }
        guard let second = Self.firstDot(buffer, from: first + 1) else {
            throw .make(.wrongSegmentCount, count, "two segments (one '.')")
        }
        if let third = Self.firstDot(buffer, from: second + 1) {
            throw .make(.wrongSegmentCount, third, "more than three segments (a third '.')")
        }
        // The header: strict base64url, bounded before decoding.
        guard first / 4 * 3 <= limits.maximumHeaderSize else {
            throw .make(.headerTooLarge, 0, "a header of about \(first / 4 * 3) bytes exceeds \(limits.maximumHeaderSize)")
        }
        let headerSegment = UnsafeBufferPointer(rebasing: buffer[0..<first])
        let header: JWSHeader
        if let cached = headerCache?.header(for: headerSegment, limits: limits) {
            header = cached
        } else {
            let headerJSON = try decodeSegment(buffer, 0..<first, "header")
            guard headerJSON.count <= limits.maximumHeaderSize else {
                throw .make(.headerTooLarge, 0, "a header of \(headerJSON.count) bytes exceeds \(limits.maximumHeaderSize)")
            }
            do {
                header = try JWSHeader(json: headerJSON, limits: limits)
            } catch {
                throw error.mapped(toSegmentAt: 0)
            }
            headerCache?.insert(header, for: headerSegment, limits: limits)
        }
        let payload = try decodeSegment(buffer, first + 1..<second, "payload")
        let signatureLength = count - second - 1
        guard signatureLength / 4 * 3 <= limits.maximumSignatureSize else {
            throw .make(
                .signatureTooLarge, second + 1,
                "a signature of about \(signatureLength / 4 * 3) bytes exceeds \(limits.maximumSignatureSize)")
        }
        let signature = try decodeSegment(buffer, second + 1..<count, "signature")
        guard signature.count <= limits.maximumSignatureSize else {
            throw .make(.signatureTooLarge, second + 1, "a signature of \(signature.count) bytes exceeds \(limits.maximumSignatureSize)")
        }
        return Parts(firstDot: first, secondDot: second, header: header, payload: payload, signature: signature)
    }

    /// The position of the first `.` at or after `start`.
    static func firstDot(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < buffer.count, let base = buffer.baseAddress else { return nil }
        guard let found = memchr(base + start, Int32(UInt8(ascii: ".")), buffer.count - start) else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }

    static func decodeSegment(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ name: String) throws(JWSError) -> [UInt8] {
        do {
            return try Base64.decode(buffer: UnsafeBufferPointer(rebasing: buffer[range]), rules: .strictURL)
        } catch {
            throw .make(.invalidBase64URL, range.lowerBound + error.offset, "\(name): \(error.reason)")
        }
    }
}

extension CompactJWS {
    /// Equal when the token bytes are.
    public static func == (lhs: CompactJWS, rhs: CompactJWS) -> Bool { lhs.token == rhs.token }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(token) }
}
