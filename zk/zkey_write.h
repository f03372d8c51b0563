/* Writer of snarkjs Groth16 .zkey files (the layout zk/zkey.h reads), for `zkpipe keygen`: the file
 * header, the section table in an order that keeps the large point sections 8-byte aligned (so the
 * reader uses them in place), sections 1 (protocol), 2 (Groth16 header) and 10 (no contributions),
 * and the payloads of the other sections from the caller, written to PATH.tmp.<pid>, synced and
 * renamed into place. */
#pragma once
#include <stdint.h>
#include <stdio.h>

#include "curve_info.h"

typedef struct zk_zkey_spec {
    const zk_curve_t *curve;
    uint32_t n_vars, n_pub, domain_size, n_coefs;
    /* header points, affine Montgomery bytes of the curve's sizes */
    const void *alpha1, *beta1, *beta2, *gamma2, *delta1, *delta2;
    /* Writes the payload of section id to f: 3 IC (n_pub+1 G1), 4 coefs (u32 n_coefs, then n_coefs
     * records of 12 + n8r bytes), 5 A, 6 B1 (n_vars G1), 7 B2 (n_vars G2), 8 C (n_vars-n_pub-1 G1),
     * 9 H (domain_size G1). 0 or a negative errno. */
    int (*write_section)(void *ctx, int id, FILE *f);
    void *ctx;
} zk_zkey_spec_t;

/* Writes the key; *file_size (may be NULL) gets its length. Errors name the file. */
int zk_zkey_write(const char *path, const zk_zkey_spec_t *s, uint64_t *file_size, zk_err_t *err);
