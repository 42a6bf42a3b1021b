#ifndef RMSTORE_COPENSSL_SHIM_H
#define RMSTORE_COPENSSL_SHIM_H

/*
 * OpenSSL 3 headers for ReceiptCrypto (and CryptoBaselines, its test-only comparison module),
 * plus small `static inline` wrappers.
 *
 * A SwiftPM system-library target compiles no C sources, so every helper lives here as a
 * `static inline` function. They exist because Swift cannot import function-like macros
 * (the STACK_OF(X509) family, OPENSSL_free, BIO_get_mem_data, the PKCS7_type_is_* tests) or
 * because reaching into a C union from Swift would be noisier and less obviously NULL-safe.
 * Every wrapper is a thin forwarder; none allocates except where its name says so.
 */

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/pkcs7.h>
#include <openssl/cms.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/bio.h>
#include <openssl/asn1.h>
#include <openssl/objects.h>
#include <openssl/core_names.h>
#include <openssl/ocsp.h>
#include <openssl/ssl.h>

/* ---- STACK_OF(X509) ---------------------------------------------------------------------- */

/** Allocates an empty certificate stack; NULL on allocation failure. */
static inline STACK_OF(X509) *rmshim_sk_X509_new_null(void) { return sk_X509_new_null(); }

/** Appends `x` (without taking a reference); returns the new count, or 0 on failure. */
static inline int rmshim_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }

/** Number of entries; -1 if `sk` is NULL. */
static inline int rmshim_sk_X509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }

/** Entry at `i`, or NULL when `i` is out of range. */
static inline X509 *rmshim_sk_X509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }

/** Frees the stack only (entries are not owned). */
static inline void rmshim_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }

/** Frees the stack and calls X509_free on every entry (for stacks returned by *_get1_*). */
static inline void rmshim_sk_X509_pop_free(STACK_OF(X509) *sk) { sk_X509_pop_free(sk, X509_free); }

/* ---- STACK_OF(OPENSSL_STRING) (X509_get1_ocsp) ------------------------------------------- */

/** Number of entries; -1 if `sk` is NULL. */
static inline int rmshim_sk_OPENSSL_STRING_num(const STACK_OF(OPENSSL_STRING) *sk) { return sk_OPENSSL_STRING_num(sk); }

/** Entry at `i`, or NULL when `i` is out of range. */
static inline const char *rmshim_sk_OPENSSL_STRING_value(const STACK_OF(OPENSSL_STRING) *sk, int i) {
    return sk_OPENSSL_STRING_value(sk, i);
}

/* ---- memory and BIO ---------------------------------------------------------------------- */

/** OPENSSL_free is a macro (it records file and line). */
static inline void rmshim_OPENSSL_free(void *p) { OPENSSL_free(p); }

/** Pointer to and length of the bytes held by a memory BIO; returns the length (<= 0: none). */
static inline long rmshim_BIO_get_mem_data(BIO *b, char **out) { return BIO_get_mem_data(b, out); }

/* ---- errors ------------------------------------------------------------------------------ */

static inline int rmshim_ERR_GET_REASON(unsigned long e) { return ERR_GET_REASON(e); }
static inline int rmshim_ERR_GET_LIB(unsigned long e) { return ERR_GET_LIB(e); }

/* ---- PKCS7 ------------------------------------------------------------------------------- */

/** 1 if `p7` is a SignedData ContentInfo. */
static inline int rmshim_PKCS7_type_is_signed(const PKCS7 *p7) {
    return p7 != NULL && p7->type != NULL && PKCS7_type_is_signed(p7);
}

/**
 * The encapsulated `data` OCTET STRING of a SignedData, or NULL when `p7` is not SignedData,
 * its content is not of type data, or the content is absent (detached signature).
 */
static inline ASN1_OCTET_STRING *rmshim_PKCS7_signed_data_octets(PKCS7 *p7) {
    if (!rmshim_PKCS7_type_is_signed(p7)) return NULL;
    PKCS7_SIGNED *sign = p7->d.sign;
    if (sign == NULL || sign->contents == NULL) return NULL;
    PKCS7 *inner = sign->contents;
    if (inner->type == NULL || !PKCS7_type_is_data(inner)) return NULL;
    return inner->d.data;
}

/* ---- TLS client (HTTPClient) ----------------------------------------------------------- */

/** SNI: the host name the client asks for (a macro over SSL_ctrl). */
static inline int rmshim_SSL_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }

/** Reads a peer's close without close_notify as the end of the stream (HTTPClient checks
 * lengths itself). */
static inline void rmshim_SSL_CTX_ignore_unexpected_eof(SSL_CTX *ctx) { SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF); }

/** The oldest protocol version the context accepts (a macro over SSL_CTX_ctrl). */
static inline int rmshim_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}

#endif
