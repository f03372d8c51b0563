/* Reader of circom .r1cs files (formats.md §3) and the witness check A·w ∘ B·w = C·w. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "curve_info.h"

typedef struct zk_r1cs {
    const zk_curve_t *curve;
    uint32_t n_wires, n_pub_out, n_pub_in, n_prv_in, n_constraints;
    uint64_t n_labels;
    const uint8_t *constraints; /* section 2 payload, validated: every LC's terms are inside it */
    size_t constraints_size;
    /* private */
    void *map;
    size_t map_size;
} zk_r1cs_t;

int zk_r1cs_open(zk_r1cs_t *r, const char *path, zk_err_t *err);
/* Validates an r1cs image already in memory (name is only used in messages); r points into data,
 * which must outlive it. zk_r1cs_close leaves data alone. */
int zk_r1cs_parse(zk_r1cs_t *r, const char *name, const uint8_t *data, size_t size, zk_err_t *err);
void zk_r1cs_close(zk_r1cs_t *r);

/* Checks every constraint on the standard-form witness w[0..n) (n must equal n_wires, every value
 * must be < r: "witness value K is not < r"). Allocates a Montgomery copy of w (n x 32 bytes)
 * for the duration of the call; -ENOMEM if that fails.
 * Returns 0 if all hold; -EINVAL with *ret_failed = index of the first failing constraint and a
 * message "witness does not satisfy constraint K of FILE" otherwise. */
int zk_r1cs_check(const zk_r1cs_t *r, const char *r1cs_name, const uint8_t *w, uint32_t n, int64_t *ret_failed,
                  zk_err_t *err);
