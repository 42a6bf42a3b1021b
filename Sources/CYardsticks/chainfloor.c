// The floors of cold verification: what the chain of an app receipt and of an App Store JWS cost
// in plain C over OpenSSL 3 when nothing but the necessary is done (see CYardsticks.h). Digests are
// fetched once per process; everything else (certificates, keys, contexts) is made per operation,
// because that is what a first verification pays.

#include "CYardsticks.h"

#include <string.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/params.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

typedef struct {
    const uint8_t *p;
    const uint8_t *end;
} cf_reader;

// One TLV at r->p (one-octet tag, definite length of at most 4 octets); `whole` spans the element.
static int cf_next(cf_reader *r, uint8_t *tag, cf_reader *content, cy_bytes *whole) {
    const uint8_t *p = r->p;
    if (r->end - p < 2) return -1;
    uint8_t t = p[0];
    if ((t & 0x1F) == 0x1F) return -1;
    size_t length = p[1];
    p += 2;
    if (length & 0x80) {
        size_t octets = length & 0x7F;
        if (octets == 0 || octets > 4 || (size_t)(r->end - p) < octets) return -1;
        length = 0;
        for (size_t i = 0; i < octets; i++) length = (length << 8) | p[i];
        p += octets;
    }
    if ((size_t)(r->end - p) < length) return -1;
    if (tag) *tag = t;
    if (content) {
        content->p = p;
        content->end = p + length;
    }
    if (whole) {
        whole->bytes = r->p;
        whole->length = (size_t)(p + length - r->p);
    }
    r->p = p + length;
    return 0;
}

// The parts of a DER certificate the floors read: the TBSCertificate element, its
// SubjectPublicKeyInfo element, the signature algorithm OID's content and the signature's bits.
typedef struct {
    cy_bytes tbs;
    cy_bytes spki;
    cy_bytes signatureOID;
    cy_bytes signature;
} cf_certificate;

static int cf_split(cy_bytes der, cf_certificate *out) {
    cf_reader top = {der.bytes, der.bytes + der.length}, certificate, tbs, algorithm, bits, oid;
    uint8_t tag;
    if (cf_next(&top, &tag, &certificate, NULL) != 0 || tag != 0x30 || top.p != top.end) return -1;
    if (cf_next(&certificate, &tag, &tbs, &out->tbs) != 0 || tag != 0x30) return -1;
    if (cf_next(&certificate, &tag, &algorithm, NULL) != 0 || tag != 0x30) return -1;
    if (cf_next(&algorithm, &tag, &oid, NULL) != 0 || tag != 0x06) return -1;
    out->signatureOID.bytes = oid.p;
    out->signatureOID.length = (size_t)(oid.end - oid.p);
    if (cf_next(&certificate, &tag, &bits, NULL) != 0 || tag != 0x03 || bits.end - bits.p < 2 || bits.p[0] != 0) return -1;
    out->signature.bytes = bits.p + 1;
    out->signature.length = (size_t)(bits.end - bits.p - 1);
    // TBSCertificate: [0] version, serial, signature, issuer, validity, subject, subjectPublicKeyInfo.
    if (tbs.p < tbs.end && tbs.p[0] == 0xA0 && cf_next(&tbs, NULL, NULL, NULL) != 0) return -1;
    for (int skip = 0; skip < 5; skip++)
        if (cf_next(&tbs, NULL, NULL, NULL) != 0) return -1;
    if (cf_next(&tbs, &tag, NULL, &out->spki) != 0 || tag != 0x30) return -1;
    return 0;
}

static const uint8_t oidECDSAWithSHA256[] = {0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02};
static const uint8_t oidECDSAWithSHA384[] = {0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x03};
static const uint8_t oidSHA256WithRSA[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B};
static const uint8_t oidSHA1WithRSA[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x05};
static const uint8_t oidSHA384WithRSA[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0C};
static const uint8_t oidECPublicKey[] = {0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01};
static const uint8_t oidP256[] = {0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07};
static const uint8_t oidP384[] = {0x2B, 0x81, 0x04, 0x00, 0x22};

static int cf_is(cy_bytes oid, const uint8_t *expected, size_t length) {
    return oid.length == length && memcmp(oid.bytes, expected, length) == 0;
}

// The digests, fetched once per process (on first use; the Benchmarks warm up before timing).
static EVP_MD *cf_sha1, *cf_sha256, *cf_sha384;

static void cf_fetch(void) {
    if (cf_sha256 != NULL) return;
    cf_sha1 = EVP_MD_fetch(NULL, "SHA1", NULL);
    cf_sha384 = EVP_MD_fetch(NULL, "SHA384", NULL);
    cf_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *cf_digest_of(cy_bytes signatureOID) {
    if (cf_is(signatureOID, oidSHA256WithRSA, sizeof oidSHA256WithRSA)) return cf_sha256;
    if (cf_is(signatureOID, oidECDSAWithSHA384, sizeof oidECDSAWithSHA384)) return cf_sha384;
    if (cf_is(signatureOID, oidECDSAWithSHA256, sizeof oidECDSAWithSHA256)) return cf_sha256;
    if (cf_is(signatureOID, oidSHA384WithRSA, sizeof oidSHA384WithRSA)) return cf_sha384;
    if (cf_is(signatureOID, oidSHA1WithRSA, sizeof oidSHA1WithRSA)) return cf_sha1;
    return NULL;
}

// One signature over `data` with a fetched digest.
static int cf_verify(EVP_PKEY *key, const EVP_MD *md, cy_bytes data, cy_bytes signature) {
    if (key == NULL || md == NULL) return 0;
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context == NULL) return 0;
    int ok = EVP_DigestVerifyInit(context, NULL, md, NULL, key) == 1 &&
             EVP_DigestVerify(context, signature.bytes, signature.length, data.bytes, data.length) == 1;
    EVP_MD_CTX_free(context);
    return ok;
}

int cy_receipt_chain_floor(const cy_bytes *chain, size_t count, cy_bytes payload, cy_bytes signature, int64_t time) {
    if (count < 2 || count > 4) return -1;
    cf_fetch();
    X509 *certificates[4] = {NULL, NULL, NULL, NULL};
    int result = -1;
    time_t at = (time_t)time;
    for (size_t i = 0; i < count; i++) {
        const unsigned char *cursor = chain[i].bytes;
        certificates[i] = d2i_X509(NULL, &cursor, (long)chain[i].length);
        if (certificates[i] == NULL || cursor != chain[i].bytes + chain[i].length) goto done;
        // Validity at the given time.
        if (X509_cmp_time(X509_get0_notBefore(certificates[i]), &at) >= 0) goto done;
        if (X509_cmp_time(X509_get0_notAfter(certificates[i]), &at) <= 0) goto done;
    }
    for (size_t i = 0; i + 1 < count; i++) {
        X509 *subject = certificates[i], *issuer = certificates[i + 1];
        // Names chain, the issuer is a CA allowed to sign certificates.
        if (X509_NAME_cmp(X509_get_issuer_name(subject), X509_get_subject_name(issuer)) != 0) goto done;
        uint32_t flags = X509_get_extension_flags(issuer);
        if ((flags & EXFLAG_INVALID) || !(flags & EXFLAG_CA)) goto done;
        if ((flags & EXFLAG_KUSAGE) && !(X509_get_key_usage(issuer) & KU_KEY_CERT_SIGN)) goto done;
        if (X509_get_extension_flags(subject) & EXFLAG_INVALID) goto done;
        // The issuer's signature over the TBSCertificate, with the algorithm the certificate names.
        cf_certificate parts;
        if (cf_split(chain[i], &parts) != 0) goto done;
        if (!cf_verify(X509_get0_pubkey(issuer), cf_digest_of(parts.signatureOID), parts.tbs, parts.signature)) goto done;
    }
    // The leaf's signature over the payload (SHA-256, as the SignerInfo names).
    result = cf_verify(X509_get0_pubkey(certificates[0]), cf_sha256, payload, signature) ? 1 : 0;
done:
    for (size_t i = 0; i < count; i++) X509_free(certificates[i]);
    return result;
}

// An EC public key from a SubjectPublicKeyInfo: the curve by OID, the point through
// EVP_PKEY_fromdata (which checks that it lies on the curve).
static EVP_PKEY *cf_ec_key(cy_bytes spki) {
    cf_reader top = {spki.bytes, spki.bytes + spki.length}, info, algorithm, type, curve, point;
    uint8_t tag;
    if (cf_next(&top, &tag, &info, NULL) != 0 || tag != 0x30) return NULL;
    if (cf_next(&info, &tag, &algorithm, NULL) != 0 || tag != 0x30) return NULL;
    if (cf_next(&algorithm, &tag, &type, NULL) != 0 || tag != 0x06) return NULL;
    if (cf_next(&algorithm, &tag, &curve, NULL) != 0 || tag != 0x06) return NULL;
    if (cf_next(&info, &tag, &point, NULL) != 0 || tag != 0x03 || point.end - point.p < 2 || point.p[0] != 0) return NULL;
    cy_bytes typeOID = {type.p, (size_t)(type.end - type.p)}, curveOID = {curve.p, (size_t)(curve.end - curve.p)};
    if (!cf_is(typeOID, oidECPublicKey, sizeof oidECPublicKey)) return NULL;
    char *group;
    if (cf_is(curveOID, oidP256, sizeof oidP256)) group = "P-256";
    else if (cf_is(curveOID, oidP384, sizeof oidP384)) group = "P-384";
    else return NULL;
    OSSL_PARAM params[3];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, group, 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)(point.p + 1), (size_t)(point.end - point.p - 1));
    params[2] = OSSL_PARAM_construct_end();
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    EVP_PKEY *key = NULL;
    if (context == NULL || EVP_PKEY_fromdata_init(context) != 1 || EVP_PKEY_fromdata(context, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = NULL;
    EVP_PKEY_CTX_free(context);
    return key;
}

int cy_jws_chain_floor(const cy_bytes *chain, size_t count, cy_bytes signingInput, cy_bytes signature) {
    if (count < 2 || count > 4) return -1;
    cf_fetch();
    EVP_PKEY *keys[4] = {NULL, NULL, NULL, NULL};
    cf_certificate parts[4];
    int result = 0;
    for (size_t i = 0; i < count; i++) {
        if (cf_split(chain[i], &parts[i]) != 0) goto done;
        if ((keys[i] = cf_ec_key(parts[i].spki)) == NULL) goto done;
    }
    for (size_t i = 0; i + 1 < count; i++)
        if (!cf_verify(keys[i + 1], cf_digest_of(parts[i].signatureOID), parts[i].tbs, parts[i].signature)) goto done;
    result = cf_verify(keys[0], cf_sha256, signingInput, signature);
done:
    for (size_t i = 0; i < count; i++) EVP_PKEY_free(keys[i]);
    return result;
}
