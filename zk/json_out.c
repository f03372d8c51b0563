/* snarkjs's JSON of points and the string they are written into (json_out.h). */
#include "json_out.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "field.h"

void zk_sb_printf(zk_sbuf_t *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) abort();
    if (b->len + (size_t)need + 1 > b->cap) {
        b->cap = (b->len + (size_t)need + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)need;
}

void zk_json_dec(const zk_curve_t *curve, const void *mont, char *out) {
    if (curve->id == ZK_CURVE_BN128) {
        bn_fq_t x;
        memcpy(x.l, mont, sizeof x.l);
        bn_fq_from_mont(&x, &x);
        zk_bigint_to_dec(x.l, 4, out);
    } else {
        bls_fq_t x;
        memcpy(x.l, mont, sizeof x.l);
        bls_fq_from_mont(&x, &x);
        zk_bigint_to_dec(x.l, 6, out);
    }
}

static bool all_zero(const void *p, size_t n) {
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i]) return false;
    return true;
}

void zk_json_g1(zk_sbuf_t *b, const zk_curve_t *curve, const void *p, const char *ind) {
    size_t q = curve->n8q;
    if (all_zero(p, 2 * q)) {
        zk_sb_printf(b, "[\n%s \"0\",\n%s \"1\",\n%s \"0\"\n%s]", ind, ind, ind, ind);
        return;
    }
    char x[130], y[130];
    zk_json_dec(curve, p, x);
    zk_json_dec(curve, (const unsigned char *)p + q, y);
    zk_sb_printf(b, "[\n%s \"%s\",\n%s \"%s\",\n%s \"1\"\n%s]", ind, x, ind, y, ind, ind);
}

void zk_json_g2(zk_sbuf_t *b, const zk_curve_t *curve, const void *p) {
    size_t q = curve->n8q;
    if (all_zero(p, 4 * q)) {
        zk_sb_printf(
            b, "[\n  [\n   \"0\",\n   \"0\"\n  ],\n  [\n   \"1\",\n   \"0\"\n  ],\n  [\n   \"0\",\n   \"0\"\n  ]\n ]");
        return;
    }
    char d[4][130];
    for (int i = 0; i < 4; i++) zk_json_dec(curve, (const unsigned char *)p + i * q, d[i]);
    zk_sb_printf(
        b, "[\n  [\n   \"%s\",\n   \"%s\"\n  ],\n  [\n   \"%s\",\n   \"%s\"\n  ],\n  [\n   \"1\",\n   \"0\"\n  ]\n ]",
        d[0], d[1], d[2], d[3]);
}
