public import ReceiptVerification

// The checks with which the store's verifier matches a signed transaction to the transaction it
// was given (``JWSTransactionStoreVerifier``).

extension VerificationCheck.Name {
    /// The signed transaction's `transactionId` is this transaction's identifier (a restored
    /// transaction: its own or its original's, as `transactionId` or `originalTransactionId`).
    public static let transactionId = VerificationCheck.Name(rawValue: "transactionId")
    /// A renewal's signed `originalTransactionId` is the transaction's original identifier.
    public static let originalTransactionId = VerificationCheck.Name(rawValue: "originalTransactionId")
    /// The signed transaction's `productId` is the transaction's product.
    public static let productId = VerificationCheck.Name(rawValue: "productId")
    /// The signed transaction's `quantity` is the payment's.
    public static let quantity = VerificationCheck.Name(rawValue: "quantity")
}
