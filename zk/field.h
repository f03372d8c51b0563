/* The four prime fields of zkpipe and their quadratic extensions, all in Montgomery form with
 * R = 2^(64*limbs): bn_fq, bn_fr (BN254), bls_fq, bls_fr (BLS12-381); bn_fq2, bls_fq2. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "constants.h"

#define FP bn_fq
#define FP_N 4
#define FP_CONST BN_FQ
#include "fp_tmpl.h"
#undef FP
#undef FP_N
#undef FP_CONST

#define FP bn_fr
#define FP_N 4
#define FP_CONST BN_FR
#include "fp_tmpl.h"
#undef FP
#undef FP_N
#undef FP_CONST

#define FP bls_fq
#define FP_N 6
#define FP_CONST BLS_FQ
#include "fp_tmpl.h"
#undef FP
#undef FP_N
#undef FP_CONST

#define FP bls_fr
#define FP_N 4
#define FP_CONST BLS_FR
#include "fp_tmpl.h"
#undef FP
#undef FP_N
#undef FP_CONST

#define F2 bn_fq2
#define F bn_fq
#define F2_PSQ BN_FQ_PSQ
#include "fp2_tmpl.h"
#undef F2
#undef F
#undef F2_PSQ

#define F2 bls_fq2
#define F bls_fq
#define F2_PSQ BLS_FQ_PSQ
#include "fp2_tmpl.h"
#undef F2
#undef F
#undef F2_PSQ

/* Decimal conversion of little-endian multi-limb integers (standard form, not Montgomery). */
/* Writes the decimal digits of l[0..n) into out (at least 20*n+1 bytes); returns the length. */
size_t zk_bigint_to_dec(const uint64_t *l, int n, char *out);
/* Parses a non-empty string of decimal digits into l[0..n); -ERANGE if it needs more than 64*n
 * bits, -EINVAL if it is empty or holds anything but digits. */
int zk_bigint_from_dec(const char *s, uint64_t *l, int n);
/* a < b on n limbs. */
bool zk_bigint_lt(const uint64_t *a, const uint64_t *b, int n);
