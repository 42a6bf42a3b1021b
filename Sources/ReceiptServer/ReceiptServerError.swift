/// An error of the ReceiptServer module: a configuration the endpoints cannot serve.
public struct ReceiptServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong; codes can be added without breaking callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String
        /// A configuration value is malformed or missing.
        public static let invalidConfiguration = Code(name: "invalidConfiguration")
        /// The code's name.
        public var description: String { name }
    }

    /// What went wrong.
    public let code: Code
    /// Why, for people (input is quoted as JSON text, so it carries no raw control characters).
    public let reason: String

    /// Creates an error.
    public init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The reason.
    public var description: String { reason }

    /// Errors are equal when their codes are.
    public static func == (lhs: ReceiptServerError, rhs: ReceiptServerError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
