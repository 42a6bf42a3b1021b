// ReceiptSigning module
