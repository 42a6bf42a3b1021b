import Internals
public import JSON

/// The `alg` of a JWS header. Unknown values are kept; a verifier accepts only the one it
/// expects (``es256`` for the App Store) and never lets the header choose the algorithm.
public struct JWSAlgorithm: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value as written.
    public let rawValue: String

    /// A value from its raw string (known or not).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The raw value.
    public var description: String { rawValue }

    /// `ES256`: ECDSA P-256 with SHA-256, the only algorithm the App Store uses.
    public static let es256 = JWSAlgorithm(rawValue: "ES256")
    /// `ES384`: ECDSA P-384 with SHA-384.
    public static let es384 = JWSAlgorithm(rawValue: "ES384")
    /// `HS256`: HMAC with SHA-256 (a symmetric key; never acceptable for App Store data).
    public static let hs256 = JWSAlgorithm(rawValue: "HS256")
    /// `none`: no signature (never acceptable).
    public static let none = JWSAlgorithm(rawValue: "none")
}

/// A JOSE header (RFC 7515 §4) as read from a compact JWS: `alg`, `x5c` decoded to DER, `kid`,
/// `typ`, and every other member kept.
public struct JWSHeader: Sendable, Hashable {
    /// `alg` (required).
    public let algorithm: JWSAlgorithm
    /// `x5c` decoded from strict standard base64: DER certificates, leaf first. `nil` when the
    /// header has no `x5c`; an empty array when it is `[]`. Untrusted until a verifier chains
    /// them to an anchor it was given.
    public let certificateChain: [[UInt8]]?
    /// `kid`, when present (Xcode writes `Apple_Xcode_Key`).
    public let keyID: String?
    /// `typ`, when present (`JWT`).
    public let type: String?
    /// The other members, in document order.
    public let unknownFields: [(String, JSONValue)]
    /// The decoded header JSON, exactly.
    public let json: [UInt8]

    enum Field: String, PayloadField {
        case alg, x5c, kid, typ

        /// The fields by name and position, made once.
        static let table = PayloadFieldTable<Field>()
    }

    /// Reads a header from its decoded JSON.
    /// - Throws: ``JWSError`` with offsets in `json`.
    public init(json: [UInt8], limits: JWSLimits = .default) throws(JWSError) {
        self = try PayloadReader.decode(json, limits: limits) { (reader) throws(JWSError) -> JWSHeader in
            try JWSHeader(reading: &reader, json: json, limits: limits)
        }
    }

    init(reading reader: inout PayloadReader, json: [UInt8], limits: JWSLimits) throws(JWSError) {
        var algorithm: JWSAlgorithm?
        var chain: [[UInt8]]?
        var keyID: String?
        var type: String?
        var state: ObjectState<Field>
        do {
            state = try reader.beginObject("header", Field.self)
        } catch {
            throw Self.asHeaderError(error)
        }
        while true {
            let next: Field?
            do {
                next = try reader.nextField(&state, nullIsError: true)
            } catch {
                throw Self.asHeaderError(error)
            }
            guard let field = next else { break }
            do {
                switch field {
                case .alg: algorithm = JWSAlgorithm(rawValue: try reader.string(field))
                case .kid: keyID = try reader.string(field)
                case .typ: type = try reader.string(field)
                case .x5c: chain = try Self.readChain(&reader, limits: limits)
                }
            } catch {
                throw Self.asHeaderError(error)
            }
        }
        // RFC 7515 gives each known member a type, and null is none of them (nullIsError above).
        guard let algorithm else { throw .make(.invalidHeader, 0, "the header has no \"alg\"") }
        self.algorithm = algorithm
        self.certificateChain = chain
        self.keyID = keyID
        self.type = type
        self.unknownFields = state.unknown
        self.json = json
    }

    /// Type errors in the header are ``JWSError/Code/invalidHeader``.
    static func asHeaderError(_ error: JWSError) -> JWSError {
        guard error.code == .invalidField else { return error }
        return JWSError(code: .invalidHeader, offset: error.offset, reason: error.reason, underlying: error.underlying)
    }

    static func readChain(_ reader: inout PayloadReader, limits: JWSLimits) throws(JWSError) -> [[UInt8]] {
        var state: JSONReader.ContainerState
        do throws(JSONError) {
            try reader.json.expectType(UInt8(ascii: "["), "an array of base64 certificates")
            state = try reader.json.beginArray()
        } catch {
            throw .json(error, context: "x5c")
        }
        var chain: [[UInt8]] = []
        chain.reserveCapacity(3)
        while true {
            let more: Bool
            do throws(JSONError) {
                more = try reader.json.nextElement(&state)
            } catch {
                throw .json(error, context: "x5c")
            }
            guard more else { break }
            reader.json.skipSpace()
            let start = reader.json.position
            guard chain.count < limits.maximumCertificates else {
                throw .make(.tooManyCertificates, start, "x5c holds more than \(limits.maximumCertificates) certificates")
            }
            let token: JSONReader.StringToken
            do throws(JSONError) {
                token = try reader.json.readStringToken()
            } catch {
                throw .json(error, context: "x5c[\(chain.count)]")
            }
            chain.append(try decodeCertificate(token, reader.json.buffer, at: start, index: chain.count, limits: limits))
        }
        return chain
    }

    static func decodeCertificate(
        _ token: JSONReader.StringToken, _ buffer: UnsafeBufferPointer<UInt8>, at start: Int, index: Int, limits: JWSLimits
    ) throws(JWSError) -> [UInt8] {
        let count: Int
        switch token {
        case .plain(let range): count = range.count
        case .escaped(let bytes): count = bytes.count
        }
        guard count / 4 * 3 <= limits.maximumCertificateSize + 2 else {
            throw .make(
                .certificateTooLarge, start, "x5c[\(index)] of about \(count / 4 * 3) bytes exceeds \(limits.maximumCertificateSize)")
        }
        guard count > 0 else { throw .make(.invalidCertificateEncoding, start, "x5c[\(index)] is empty") }
        let der: [UInt8]
        do {
            switch token {
            case .plain(let range):
                der = try Base64.decode(buffer: UnsafeBufferPointer(rebasing: buffer[range]), rules: .strictStandard)
            case .escaped(let bytes):
                der = try Base64.decode(bytes, rules: .strictStandard)
            }
        } catch {
            // Offsets inside an escaped string are approximate (escapes change the length).
            throw .make(.invalidCertificateEncoding, start + 1 + error.offset, "x5c[\(index)]: \(error.reason)")
        }
        guard der.count <= limits.maximumCertificateSize else {
            throw .make(.certificateTooLarge, start, "x5c[\(index)] of \(der.count) bytes exceeds \(limits.maximumCertificateSize)")
        }
        return der
    }

    /// Equal when the decoded header JSON bytes are.
    public static func == (lhs: JWSHeader, rhs: JWSHeader) -> Bool { lhs.json == rhs.json }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(json) }
}
