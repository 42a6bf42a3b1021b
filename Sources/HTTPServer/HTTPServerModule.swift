// HTTPServer: a small HTTP/1.1 server with no dependencies, and its message parsing.
//
// - HTTPServer: one thread per connection up to a limit (then 503), keep-alive, per-request and
//   idle deadlines, a graceful stop on signals, statistics.
// - HTTPRequest / HTTPResponse / HTTPHeader: messages.
// - HTTPRequestParser: the request head and body parser, a state machine over the received bytes
//   (no sockets, no clocks; fuzzed by the `http` target) that enforces size and count limits while
//   reading and answers malformed HTTP with a clean 4xx.
// - HTTPHandler: what answers the requests.
//
// Generic: nothing here knows about receipts. ReceiptServer's endpoints are `HTTPHandler`s. Not a
// product of its own; it is linked through ReceiptServer and used by `receipt-tool serve`.
