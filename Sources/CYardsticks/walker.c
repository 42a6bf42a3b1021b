// A zero-allocation TLV walker over a DER app receipt: the yardstick for the Swift parse (see
// CYardsticks.h). Written the way a careful C programmer would walk DER: one framing function for
// identifier and length (short and long form, bounds checked), one INTEGER decoder, no recursion
// beyond the two levels receipts have.

#include "CYardsticks.h"

typedef struct {
    const uint8_t *p;
    const uint8_t *end;
} cy_reader;

typedef struct {
    uint8_t tag;
    const uint8_t *content;
    size_t length;
} cy_tlv;

// Reads the element at r->p: a one-octet tag and a definite length; advances past it.
static inline int cy_next(cy_reader *r, cy_tlv *out) {
    const uint8_t *p = r->p;
    if (r->end - p < 2) return -1;
    uint8_t tag = p[0];
    if ((tag & 0x1F) == 0x1F) return -1;  // multi-octet tags: not in receipts
    size_t length = p[1];
    p += 2;
    if (length & 0x80) {
        size_t octets = length & 0x7F;
        if (octets == 0 || octets > 4 || (size_t)(r->end - p) < octets) return -1;  // indefinite or huge
        length = 0;
        for (size_t i = 0; i < octets; i++) length = (length << 8) | p[i];
        p += octets;
    }
    if ((size_t)(r->end - p) < length) return -1;
    out->tag = tag;
    out->content = p;
    out->length = length;
    r->p = p + length;
    return 0;
}

// A two's complement INTEGER of 1 to 8 content octets.
static inline int cy_integer(const cy_tlv *t, int64_t *value) {
    if (t->tag != 0x02 || t->length < 1 || t->length > 8) return -1;
    int64_t v = (t->content[0] & 0x80) ? -1 : 0;
    for (size_t i = 0; i < t->length; i++) v = (int64_t)((uint64_t)v << 8) | t->content[i];
    *value = v;
    return 0;
}

static inline int cy_expect(cy_reader *r, uint8_t tag, cy_reader *inside) {
    cy_tlv t;
    if (cy_next(r, &t) != 0 || t.tag != tag) return -1;
    inside->p = t.content;
    inside->end = t.content + t.length;
    return 0;
}

// The attributes of one SET: SEQUENCE { INTEGER type, INTEGER version, OCTET STRING value }.
static int cy_walk_set(cy_reader set, int nested, cy_walk_result *result) {
    while (set.p < set.end) {
        cy_reader attribute, octets;
        cy_tlv type, version, inner;
        int64_t typeValue, versionValue;
        if (cy_expect(&set, 0x30, &attribute) != 0) return -1;
        if (cy_next(&attribute, &type) != 0 || cy_integer(&type, &typeValue) != 0) return -1;
        if (cy_next(&attribute, &version) != 0 || cy_integer(&version, &versionValue) != 0) return -1;
        if (cy_expect(&attribute, 0x04, &octets) != 0 || attribute.p != attribute.end) return -1;
        result->attributes++;
        result->checksum += (uint64_t)typeValue * 31 + (uint64_t)versionValue;
        size_t valueLength = (size_t)(octets.end - octets.p);
        if (valueLength == 0) continue;
        // Most values hold one element; a few (4, 5 and some undocumented ones) hold raw octets.
        if (cy_next(&octets, &inner) != 0 || octets.p != octets.end) {
            if (!nested && typeValue == 17) return -1;
            result->checksum += valueLength;
            continue;
        }
        if (!nested && typeValue == 17) {
            if (inner.tag != 0x31) return -1;
            result->records++;
            cy_reader record = {inner.content, inner.content + inner.length};
            if (cy_walk_set(record, 1, result) != 0) return -1;
        } else if (inner.tag == 0x02) {
            int64_t value;
            if (cy_integer(&inner, &value) == 0) result->checksum += (uint64_t)value;
            else result->checksum += inner.length;
        } else {
            result->checksum += inner.length;
        }
    }
    return 0;
}

int cy_walk_receipt(const uint8_t *bytes, size_t count, cy_walk_result *result) {
    result->records = 0;
    result->attributes = 0;
    result->checksum = 0;
    cy_reader top = {bytes, bytes + count}, contentInfo, explicit0, signedData, encapsulated, eContent, payload;
    cy_tlv t;
    if (cy_expect(&top, 0x30, &contentInfo) != 0) return -1;
    if (cy_next(&contentInfo, &t) != 0 || t.tag != 0x06) return -1;  // id-signedData
    if (cy_expect(&contentInfo, 0xA0, &explicit0) != 0) return -1;
    if (cy_expect(&explicit0, 0x30, &signedData) != 0) return -1;
    if (cy_next(&signedData, &t) != 0 || t.tag != 0x02) return -1;  // version
    if (cy_next(&signedData, &t) != 0 || t.tag != 0x31) return -1;  // digestAlgorithms
    if (cy_expect(&signedData, 0x30, &encapsulated) != 0) return -1;
    if (cy_next(&encapsulated, &t) != 0 || t.tag != 0x06) return -1;  // id-data
    if (cy_expect(&encapsulated, 0xA0, &eContent) != 0) return -1;
    if (cy_expect(&eContent, 0x04, &payload) != 0) return -1;
    // Certificates [0] and SignerInfos SET: each element framed once.
    while (signedData.p < signedData.end) {
        if (cy_next(&signedData, &t) != 0) return -1;
        if (t.tag == 0xA0 || t.tag == 0x31) {
            cy_reader list = {t.content, t.content + t.length};
            while (list.p < list.end) {
                cy_tlv element;
                if (cy_next(&list, &element) != 0) return -1;
                result->checksum += element.length;
            }
        }
    }
    cy_reader attributes;
    if (cy_expect(&payload, 0x31, &attributes) != 0 || payload.p != payload.end) return -1;
    return cy_walk_set(attributes, 0, result);
}
