// ReceiptVerification: fail-closed verification of app receipts.
//
// Entry point: `AppReceiptVerifier` (AppReceiptVerifier.swift). Trust comes only from
// `TrustAnchors` built from bytes (TrustAnchors.swift, with Apple's public roots bundled under
// Anchors/ and pinned by SHA-256); the validation time is an explicit `ValidationTime`; the
// result is a `ReceiptVerdict` of named checks (Verdict.swift); chain rules are small
// `ChainPolicy` values (Policy.swift); validated chains are cached in a bounded, thread-safe
// `ChainCache` (ChainCache.swift). OpenSSL is reached only through `ReceiptCrypto`.
