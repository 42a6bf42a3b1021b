// ReceiptVerification: one fail-closed verification machinery for every signed format.
//
// `SignedDataVerifier<Format>` (SignedDataVerifier.swift) runs a `SignedFormat` through the same
// steps: parse, the format's own signature checks, the validation time (`ValidationTime`), the
// chain to a pinned anchor (OpenSSL through `ReceiptCrypto`, cached in `ChainCache`), the chain
// policy (`VerificationPolicy` of `ChainPolicy` values, Policy.swift) and the format's
// expectations. The result is a `Verdict<Payload>` of named `VerificationCheck`s (Verdict.swift).
// Formats: app receipts (`AppReceiptFormat`, `AppReceiptVerifier`) and iOS 6 transaction receipts
// (`TransactionReceiptFormat`, `TransactionReceiptVerifier`). Trust comes only from `TrustAnchors`
// built from bytes (TrustAnchors.swift, with Apple's public certificates bundled under Anchors/
// and pinned by SHA-256).
import ASN1
import Internals
import Receipts
