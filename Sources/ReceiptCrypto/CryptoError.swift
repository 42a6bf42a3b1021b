/// An error thrown by ``ReceiptCrypto``.
///
/// The error carries a ``code`` that callers can compare against (``CryptoError/Code``), a
/// human-readable ``reason``, and the entries that were waiting in OpenSSL's per-thread error
/// queue when the failure was detected (``openSSLErrors``), rendered as strings. OpenSSL's packed
/// error integers never leave the module.
///
/// Two errors are equal when their codes are equal; the reason, the OpenSSL entries and the source
/// location are diagnostics only.
public struct CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added in later versions.
    public var code: Code
    /// A sentence describing what went wrong, for logs and humans.
    public var reason: String
    /// The OpenSSL error queue at the time of the failure, oldest first.
    public var openSSLErrors: [OpenSSLErrorEntry]
    /// The source file (`#fileID`) that raised the error.
    public var file: String
    /// The source line that raised the error.
    public var line: UInt

    /// Creates an error. Prefer the static factories, which fill in the source location.
    public init(
        code: Code,
        reason: String,
        openSSLErrors: [OpenSSLErrorEntry] = [],
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.reason = reason
        self.openSSLErrors = openSSLErrors
        self.file = file
        self.line = line
    }

    /// Errors are equal when their codes are equal.
    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool {
        lhs.code == rhs.code
    }

    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    /// A one-line rendering for logs.
    public var description: String {
        var text = "CryptoError.\(code): \(reason)"
        if !openSSLErrors.isEmpty {
            text += " [" + openSSLErrors.map(\.description).joined(separator: "; ") + "]"
        }
        return text + " (\(file):\(line))"
    }

    /// One entry of OpenSSL's error queue, as text.
    public struct OpenSSLErrorEntry: Sendable, Hashable, CustomStringConvertible {
        /// The OpenSSL library that reported the entry, for example `"asn1 encoding routines"`.
        public var library: String
        /// OpenSSL's reason text, for example `"wrong tag"`.
        public var reason: String

        /// Creates an entry from its two strings.
        public init(library: String, reason: String) {
            self.library = library
            self.reason = reason
        }

        /// A one-line rendering for logs.
        public var description: String { "\(library): \(reason)" }
    }

    /// The kind of a ``CryptoError``. A struct wrapping a private enum, so that codes can be added
    /// without breaking code that compares against the existing ones.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Backing: Hashable {
            case malformedInput
            case trailingBytes
            case emptyInput
            case unsupportedAlgorithm
            case invalidArgument
            case keyMismatch
            case operationFailed
            case resourceExhausted
            case verificationFailed
            case notFound
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The bytes or text are not a valid encoding of the expected object (syntax error).
        public static let malformedInput = Code(.malformedInput)
        /// A complete object was decoded but bytes remained after it.
        public static let trailingBytes = Code(.trailingBytes)
        /// The input was empty, or held no object of the expected kind.
        public static let emptyInput = Code(.emptyInput)
        /// The algorithm, key type or curve is not supported or is refused (MD5 for signatures).
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// A caller-supplied value is out of range or inconsistent (for example an invalid OID string).
        public static let invalidArgument = Code(.invalidArgument)
        /// A private key does not belong to the certificate it was paired with.
        public static let keyMismatch = Code(.keyMismatch)
        /// OpenSSL reported a failure while signing, encoding or generating.
        public static let operationFailed = Code(.operationFailed)
        /// OpenSSL could not allocate an object.
        public static let resourceExhausted = Code(.resourceExhausted)
        /// A signature or its signer was checked and refused (for example an OCSP response not
        /// signed by the certificate's issuer or a responder it authorised).
        public static let verificationFailed = Code(.verificationFailed)
        /// The object holds nothing about what was asked (for example an OCSP response without an
        /// answer for the certificate).
        public static let notFound = Code(.notFound)

        /// A one-line rendering for logs.
        public var description: String {
            switch backing {
            case .malformedInput: "malformedInput"
            case .trailingBytes: "trailingBytes"
            case .emptyInput: "emptyInput"
            case .unsupportedAlgorithm: "unsupportedAlgorithm"
            case .invalidArgument: "invalidArgument"
            case .keyMismatch: "keyMismatch"
            case .operationFailed: "operationFailed"
            case .resourceExhausted: "resourceExhausted"
            case .verificationFailed: "verificationFailed"
            case .notFound: "notFound"
            }
        }
    }
}

extension CryptoError {
    /// An error with `code`, draining the calling thread's OpenSSL error queue into it.
    @inline(never)
    package static func openSSL(
        _ code: Code,
        _ reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: code, reason: reason, openSSLErrors: OpenSSLErrorQueue.drain(), file: file, line: line)
    }

    /// An error with `code` that does not come from OpenSSL. Clears the OpenSSL error queue so
    /// that stale entries cannot leak into a later error on this thread.
    @inline(never)
    package static func plain(
        _ code: Code,
        _ reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> CryptoError {
        OpenSSLErrorQueue.clear()
        return CryptoError(code: code, reason: reason, file: file, line: line)
    }

    /// `resourceExhausted` for an OpenSSL allocator that returned NULL.
    @inline(never)
    package static func allocation(_ what: String, file: String = #fileID, line: UInt = #line) -> CryptoError {
        openSSL(.resourceExhausted, "OpenSSL could not allocate \(what)", file: file, line: line)
    }
}
