// ReceiptCrypto module
