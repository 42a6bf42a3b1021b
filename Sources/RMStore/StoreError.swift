// The store's errors: RMStore's codes (100, 200, 300) kept with their meaning, plus the codes the
// port needs.

public import Foundation

/// An error produced by the store, a persistor or the simulated App Store.
///
/// Compare `code`, not the message. RMStore's codes keep their numbers: 100 unknown product,
/// 200 unable to complete verification, 300 download cancelled.
public struct StoreError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// The error domain RMStore used.
    public static let domain = "net.robotmedia.store"

    /// What went wrong. A struct rather than an enum so that codes can be added without breaking
    /// `switch` statements in apps.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The number; RMStore's codes keep theirs (100, 200, 300).
        public let rawValue: Int
        /// Wraps any number, so that codes from other sources can be compared with the named ones.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// `addPayment` for a product no products request returned (RMStore 100).
        public static let unknownProductIdentifier = Code(rawValue: 100)
        /// The verifier could not reach a verdict (network, refresh); the transaction stays
        /// unfinished and is delivered again (RMStore 200).
        public static let unableToCompleteVerification = Code(rawValue: 200)
        /// A store-hosted download was cancelled (RMStore 300).
        public static let downloadCanceled = Code(rawValue: 300)
        /// A store-hosted download failed without an error of its own.
        public static let downloadFailed = Code(rawValue: 301)
        /// The receipt verifier rejected the transaction.
        public static let verificationFailed = Code(rawValue: 400)
        /// The user cancelled the payment.
        public static let paymentCancelled = Code(rawValue: 500)
        /// The queue failed the payment without saying why.
        public static let paymentFailed = Code(rawValue: 501)
        /// The user may not make payments.
        public static let paymentNotAllowed = Code(rawValue: 502)
        /// An Ask to Buy request was declined.
        public static let paymentDeclined = Code(rawValue: 503)
        /// The purchase was interrupted and needs an action from the user.
        public static let paymentInterrupted = Code(rawValue: 504)
        /// The payment's parameters are invalid (for example a quantity below 1).
        public static let paymentInvalid = Code(rawValue: 505)
        /// The transaction persistor failed to record a transaction.
        public static let persistenceFailed = Code(rawValue: 600)
        /// A restore for another application username is already running.
        public static let restoreInProgress = Code(rawValue: 700)
        /// The products request failed.
        public static let productsRequestFailed = Code(rawValue: 800)
        /// The store has no receipt refresher, or the refresh failed.
        public static let receiptRefreshFailed = Code(rawValue: 900)

        /// The code's name and number, such as `unknownProductIdentifier(100)`, or `code(<n>)` for
        /// a number without a name.
        public var description: String {
            switch self {
            case .unknownProductIdentifier: return "unknownProductIdentifier(100)"
            case .unableToCompleteVerification: return "unableToCompleteVerification(200)"
            case .downloadCanceled: return "downloadCanceled(300)"
            case .downloadFailed: return "downloadFailed(301)"
            case .verificationFailed: return "verificationFailed(400)"
            case .paymentCancelled: return "paymentCancelled(500)"
            case .paymentFailed: return "paymentFailed(501)"
            case .paymentNotAllowed: return "paymentNotAllowed(502)"
            case .paymentDeclined: return "paymentDeclined(503)"
            case .paymentInterrupted: return "paymentInterrupted(504)"
            case .paymentInvalid: return "paymentInvalid(505)"
            case .persistenceFailed: return "persistenceFailed(600)"
            case .restoreInProgress: return "restoreInProgress(700)"
            case .productsRequestFailed: return "productsRequestFailed(800)"
            case .receiptRefreshFailed: return "receiptRefreshFailed(900)"
            default: return "code(\(rawValue))"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable explanation (English).
    public let message: String
    /// The error that caused this one, if any.
    public let underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message ?? StoreError.defaultMessage(for: code)
        self.underlying = underlying
    }

    /// `StoreError <code>: <message>`, followed by the underlying error when there is one.
    public var description: String {
        if let underlying {
            return "StoreError \(code): \(message) (underlying: \(underlying))"
        }
        return "StoreError \(code): \(message)"
    }

    /// The message, for `localizedDescription` (Foundation's `LocalizedError`).
    public var errorDescription: String? { message }

    private static func defaultMessage(for code: Code) -> String {
        switch code {
        case .unknownProductIdentifier: return "Unknown product identifier"
        case .unableToCompleteVerification: return "Unable to complete verification"
        case .downloadCanceled: return "Download canceled"
        case .downloadFailed: return "Download failed"
        case .verificationFailed: return "The transaction failed verification"
        case .paymentCancelled: return "The payment was cancelled"
        case .paymentFailed: return "The payment failed"
        case .paymentNotAllowed: return "Payments are not allowed"
        case .paymentDeclined: return "The purchase request was declined"
        case .paymentInterrupted: return "The purchase was interrupted"
        case .paymentInvalid: return "The payment is invalid"
        case .persistenceFailed: return "The transaction could not be persisted"
        case .restoreInProgress: return "A restore for another user is in progress"
        case .productsRequestFailed: return "The products request failed"
        case .receiptRefreshFailed: return "The receipt could not be refreshed"
        default: return "Store error \(code.rawValue)"
        }
    }
}

extension StoreError {
    /// The store code of any error: `code` for a `StoreError`, `nil` otherwise.
    public static func code(of error: any Error) -> Code? {
        (error as? StoreError)?.code
    }
}
