// CryptoBaselines: OpenSSL's own ways of doing what the package does in Swift, kept for comparison.
//
// - OpenSSLBaselines: RMStore's way of reading a receipt (`d2i_PKCS7` and an `ASN1_get_object`
//   walk) and of verifying one (`PKCS7_verify`), measured against the package by `Benchmarks`.
// - OpenSSLPKCS7Verifier: `PKCS7_verify` against pinned anchors, a cross-check for the package's
//   PKCS#7 reader and signer. It checks no receipt policy (no marker OIDs, no root pinning beyond
//   the anchors given), so it is not a receipt verifier; ReceiptVerification is.
// - CMSSigner: PKCS#7 SignedData made by OpenSSL, to cross-check the package's own builder.
// - OwnReaderDifferential: ReceiptCrypto's own certificate reader and key import against
//   `d2i_X509` and `d2i_PUBKEY`, the oracles of the `certificate` and `public-key` fuzz targets.
//
// A non-product target: only the tests, the fuzz targets and `Benchmarks` depend on it, and no
// library product links it. Besides ReceiptCrypto it is the only module that imports COpenSSL. It
// reaches the OpenSSL objects behind ReceiptCrypto's `Certificate`, `PublicKey` and `PrivateKey`
// (and its own reader's fields) through `package` accessors, so
// ReceiptCrypto's public API stays free of C types and of anything a user could take for the
// verifier. Everything here is `package`.
