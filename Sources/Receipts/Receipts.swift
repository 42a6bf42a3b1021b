// Receipts module
