/* Reader of circom .wtns witness files (formats.md §2). Values are standard-form LE, n8 = 32 bytes.
 * Validation: magic, version <= 2, section table bounds, header size, n8 == 32, known prime (the
 * curve), section 2 size == nWitness*n8 and inside the file, every value < r ("witness value K is
 * not < r"), w[0] == 1. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "curve_info.h"
#include "zkey.h"

typedef struct zk_wtns {
    const zk_curve_t *curve;
    uint32_t n;             /* nWitness */
    const uint8_t *values;  /* n x 32 bytes, standard LE, 8-byte aligned */
    /* private */
    void *buf;
    size_t buf_size;
    void *copy; /* aligned copy of the values (zk_wtns_parse of an unaligned image) */
} zk_wtns_t;

/* Reads and validates the whole file. */
int zk_wtns_load(zk_wtns_t *w, const char *path, zk_err_t *err);
/* Validates a file image already in memory (name is only used in messages). On success values
 * point into data (which must stay alive and be 8-byte aligned at the values for fast paths; it is
 * copied otherwise). */
int zk_wtns_parse(zk_wtns_t *w, const char *name, const uint8_t *data, size_t len, zk_err_t *err);
void zk_wtns_free(zk_wtns_t *w);

/* The witness fits the key: same curve ("W: witness is for another curve (bls12381), the zkey Z is
 * for bn128") and nWitness == nVars ("W: witness is for another circuit: it has 557 values, the
 * zkey Z needs 1003"). */
int zk_wtns_check_zkey(const zk_wtns_t *w, const char *wtns_name, const zk_zkey_t *z, const char *zkey_name,
                       zk_err_t *err);
