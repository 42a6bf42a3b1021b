// VerifyReceipt: Apple's verifyReceipt protocol, both sides, for code that still speaks it.
//
// - VerifyReceiptStatus: the `status` codes and what they mean.
// - VerifyReceiptRequest / VerifyReceiptResponseWriter / VerifyReceiptResponse: request and
//   response bodies for app receipts and iOS 6 transaction receipts, written and read.
// - VerifyReceiptClient: URLSession client with Apple's production → sandbox (21007) and
//   sandbox → production (21008) routing, and typed transport errors.
//
// No server here: the endpoint that answers verifyReceipt requests is ReceiptServer's
// `VerifyReceiptEndpoint`, on the HTTP/1.1 server of the HTTPServer target, so an app that only
// calls Apple (or uses the store verifiers) links no socket server.
