// C yardsticks for the Benchmarks: plain C doing the least work a task needs, measured side by side
// with the Swift code on the same bytes. Not a product; nothing but Benchmarks links it.
#ifndef CYARDSTICKS_H
#define CYARDSTICKS_H

#include <stddef.h>
#include <stdint.h>

/// What one walk found.
typedef struct {
    /// In-app purchase records (attributes of type 17).
    int64_t records;
    /// Attributes framed, receipt and in-app together.
    int64_t attributes;
    /// A checksum of every INTEGER value and every string length decoded, so no work is skipped.
    uint64_t checksum;
} cy_walk_result;

/// Walks a DER PKCS#7 app receipt without allocating: frames the ContentInfo, the SignedData and
/// the encapsulated content down to the payload OCTET STRING, frames each embedded certificate
/// and SignerInfo as one element, then every TLV of the payload: the attribute SET, each attribute
/// SEQUENCE, its type and version INTEGERs (decoded), its value OCTET STRING and the element inside
/// it when the value holds one (INTEGERs decoded, string lengths summed; values of raw octets such
/// as the opaque value and the hash are only measured), descending into the SET of each in-app record
/// (type 17) the same way. Definite lengths only (DER); one-octet tags.
///
/// Returns 0 and fills `result`, or -1 for anything malformed or not DER.
int cy_walk_receipt(const uint8_t *bytes, size_t count, cy_walk_result *result);

/// Bytes a caller owns: `length` bytes at `bytes`.
typedef struct {
    const uint8_t *bytes;
    size_t length;
} cy_bytes;

/// The floor of a cold app receipt chain: every certificate of `chain` (leaf first, anchor last,
/// DER) parsed with `d2i_X509`, each valid at `time` (POSIX seconds), each issuer's name, CA flag
/// and key usage checked, each certificate's signature verified with its issuer's key (the digest
/// its signature algorithm names, fetched once per process), then the leaf's RSA signature over the
/// receipt's `payload` with SHA-256. Returns 1 when everything holds, 0 or -1 otherwise.
int cy_receipt_chain_floor(const cy_bytes *chain, size_t count, cy_bytes payload, cy_bytes signature, int64_t time);

/// The floor of a cold JWS chain: the signature math. Each certificate of `chain` (leaf first,
/// anchor last, DER) is split into its TBSCertificate, SubjectPublicKeyInfo and signature; an EC
/// key is built from each SubjectPublicKeyInfo (`EVP_PKEY_fromdata`); each certificate's
/// signature is verified with its issuer's key, then the token's DER ECDSA `signature` over
/// `signingInput` with SHA-256 (ES256) with the leaf's key. Returns 1 when every signature holds.
int cy_jws_chain_floor(const cy_bytes *chain, size_t count, cy_bytes signingInput, cy_bytes signature);

#endif
