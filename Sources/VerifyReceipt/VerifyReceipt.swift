// VerifyReceipt: Apple's verifyReceipt protocol, both sides, for code that still speaks it.
//
// - VerifyReceiptStatus: the `status` codes and what they mean.
// - VerifyReceiptRequest / VerifyReceiptResponseWriter / VerifyReceiptResponse: request and
//   response bodies for app receipts and iOS 6 transaction receipts, written and read.
// - VerifyReceiptClient: URLSession client with Apple's production → sandbox (21007) and
//   sandbox → production (21008) routing, and typed transport errors.
// - HTTPServer + VerifyReceiptEndpoint: a local, offline stand-in for Apple's endpoint
//   (`receipt-tool serve`).
