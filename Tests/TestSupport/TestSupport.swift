// TestSupport: what several test targets (and Benchmarks) share, in one place instead of copies.
//
// - Fixtures: the files under the repository's TestReceipts/ (and the package root), the lists of
//   real receipts, Apple's certificates, and the iOS 6 transaction receipts with what they hold.
// - PKIs: Apple-shaped test PKIs generated once per test process (RSA key generation is the slow
//   part), and FixedTestPKI, a PKI with fixed serial numbers and validity built from ReceiptCrypto
//   alone for the crypto tests.
// - Helpers: `utc(...)`, hex, seeded garbage bytes, temporary directories, `TestError`, and the
//   store's `NotificationLog`.
// - HTTP: a raw HTTP/1.1 connection to 127.0.0.1 and a server running a scripted handler.
//
// A non-product target: only test targets and Benchmarks depend on it. It does not import Testing,
// so that Benchmarks can use it too; helpers that need `#require` stay in their test targets.
// Everything here is `package`.
