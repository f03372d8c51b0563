/* Writing snarkjs's JSON: a growing string and the points as snarkjs prints them (proof.json,
 * vk.json). Used by the proof writer (groth16.c) and the dev key generator (keygen). */
#pragma once
#include <stddef.h>

#include "curve_info.h"

/* A growing string; aborts on out of memory (these outputs are a few KiB). */
typedef struct {
    char *p;
    size_t len, cap;
} zk_sbuf_t;

__attribute__((format(printf, 2, 3))) void zk_sb_printf(zk_sbuf_t *b, const char *fmt, ...);

/* Decimal of a base-field element (n8q bytes, Montgomery form); out holds 130 bytes. */
void zk_json_dec(const zk_curve_t *curve, const void *mont, char *out);
/* An affine G1 point (zkey layout: x, y Montgomery; all zero = infinity) as [x, y, "1"], each line
 * indented by ind plus one space; infinity as ["0", "1", "0"]. */
void zk_json_g1(zk_sbuf_t *b, const zk_curve_t *curve, const void *p, const char *ind);
/* An affine G2 point (x.c0, x.c1, y.c0, y.c1) as [[x0, x1], [y0, y1], ["1", "0"]] at indent 1;
 * infinity as [["0", "0"], ["1", "0"], ["0", "0"]]. */
void zk_json_g2(zk_sbuf_t *b, const zk_curve_t *curve, const void *p);
