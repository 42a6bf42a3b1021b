// When a store verifier checks a receipt's certificate chain.

public import Foundation
import ReceiptVerification

/// The instant at which a receipt's certificate chain must be valid, for the store verifiers.
///
/// The verifiers never read the system clock by themselves: either the receipt's own date is used,
/// or a clock the app passes in.
public enum ValidationTimeSource: Sendable {
    /// The receipt's own date, as Apple's verifyReceipt endpoint did: an app receipt's creation
    /// date (field 12), a transaction receipt's purchase date. Apple's signing certificates expire
    /// long before the receipts they signed stop mattering, so old receipts verify only at the
    /// date they were made. The date is part of the signed data, but whoever signed chooses it;
    /// use ``clock(_:)`` when certificates that expired since must be refused. A receipt without
    /// the date fails the check `validationTime`.
    case receiptDate
    /// The time `clock` returns when verification runs (for example a server-synchronised clock,
    /// or a test's fixed date).
    case clock(@Sendable () -> Date)

    /// The `ReceiptVerification` time for one verification (reads the clock now).
    var validationTime: ValidationTime {
        switch self {
        case .receiptDate: .creationDate
        case .clock(let now): .fixed(now())
        }
    }
}
