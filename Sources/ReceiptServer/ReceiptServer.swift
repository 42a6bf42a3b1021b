// ReceiptServer: App Store endpoints served on the HTTPServer target's HTTP/1.1 server.
//
// - VerifyReceiptEndpoint: a local, offline stand-in for Apple's retired verifyReceipt endpoint
//   (`receipt-tool serve`), answering in Apple's JSON with the VerifyReceipt module's messages.
// - NotificationsEndpoint: App Store Server Notifications V2 (`POST /notifications`) through
//   ServerNotifications' receiver, and ReceiptServerRoutes, which serves both and `GET /health`.
//
// Apps that only call Apple or verify receipts need none of this; they use VerifyReceipt or
// ReceiptVerification, which link no server.
