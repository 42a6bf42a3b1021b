// ReceiptVerification module
