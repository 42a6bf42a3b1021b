public import Foundation

// Temporary: minimal versions of the validation-time and check types that the app-receipt
// verifier (branch `verify`) defines. This file is deleted when that branch is merged; the
// legacy verifier then uses the shared types unchanged.

/// The instant at which every certificate of a receipt's chain must be valid.
public enum ValidationTime: Sendable, Hashable {
    /// The date the receipt was made: for a transaction receipt, its purchase date.
    case creationDate
    /// The system clock, read when verification runs.
    case now
    /// A fixed instant.
    case fixed(Date)
}

/// One check the verifier performed, and its outcome.
public struct ReceiptCheck: Sendable, Hashable, CustomStringConvertible {
    /// The stable name of a check.
    public struct Name: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The name as text.
        public let rawValue: String
        /// Wraps a name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The name as text.
        public var description: String { rawValue }

        /// The input parses.
        public static let parse = Name(rawValue: "parse")
        /// The verifier has at least one trust anchor.
        public static let trustAnchors = Name(rawValue: "trustAnchors")
        /// The signature verifies.
        public static let signature = Name(rawValue: "signature")
        /// The validation time could be determined.
        public static let validationTime = Name(rawValue: "validationTime")
        /// The chain validates to an anchor.
        public static let chain = Name(rawValue: "chain")
        /// The chain ends at a pinned anchor.
        public static let pinnedAnchor = Name(rawValue: "pinnedAnchor")
        /// The chain has the required length.
        public static let chainLength = Name(rawValue: "chainLength")
        /// The bundle identifier matches.
        public static let bundleIdentifier = Name(rawValue: "bundleIdentifier")
        /// The environment is allowed.
        public static let environment = Name(rawValue: "environment")
    }

    /// Which check this is.
    public let name: Name
    /// Whether it passed.
    public let passed: Bool
    /// Why it passed or failed.
    public let reason: String

    /// Creates a check outcome.
    public init(name: Name, passed: Bool, reason: String) {
        self.name = name
        self.passed = passed
        self.reason = reason
    }

    /// `"✓ name: reason"` or `"✗ name: reason"`.
    public var description: String { "\(passed ? "✓" : "✗") \(name): \(reason)" }
}
