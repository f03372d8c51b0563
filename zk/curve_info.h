/* Curve identification and sizes shared by the file readers, the prover and the verifier. */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef enum {
    ZK_CURVE_BN128 = 1,
    ZK_CURVE_BLS12381 = 2,
} zk_curve_id;

typedef struct {
    zk_curve_id id;
    const char *name;   /* "bn128" | "bls12381", as snarkjs writes it */
    unsigned n8q, n8r;  /* bytes per base-field / scalar-field element */
    unsigned g1_size;   /* affine G1 bytes: 2*n8q */
    unsigned g2_size;   /* affine G2 bytes: 4*n8q */
    const uint8_t *q;   /* modulus, n8q bytes LE standard */
    const uint8_t *r;   /* group order, n8r bytes LE standard */
} zk_curve_t;

extern const zk_curve_t zk_curve_bn128;
extern const zk_curve_t zk_curve_bls12381;

/* The curve whose scalar field r has these n8 LE bytes, or NULL. */
const zk_curve_t *zk_curve_by_r(const uint8_t *r, size_t n8);
/* The curve whose base field q has these n8 LE bytes, or NULL. */
const zk_curve_t *zk_curve_by_q(const uint8_t *q, size_t n8);
/* By name ("bn128", "bn254", "bls12381", "bls12-381"), or NULL. */
const zk_curve_t *zk_curve_by_name(const char *name);

/* Largest sizes over both curves, for fixed-size records in shared memory. */
#define ZK_MAX_N8Q 48
#define ZK_MAX_G1 96
#define ZK_MAX_G2 192

/* Error text of the library: one line that names the file and what is wrong. Library code never
 * prints; callers print err.msg once. */
typedef struct {
    char msg[512];
} zk_err_t;

/* printf-style setter; returns -code (code is a positive errno) so callers can `return zk_fail(...)`. */
int zk_fail(zk_err_t *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
