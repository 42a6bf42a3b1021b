// VerifyReceipt module
