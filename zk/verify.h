/* Native Groth16 verifier with snarkjs's conventions (formats.md §7; invariants in docs/verify.md):
 *   e(−πA, πB) · e(vk_x, γ2) · e(πC, δ2) · e(α1, β2) == 1,  vk_x = IC0 + Σ pub_i · IC_{i+1}.
 * Every point is checked to be on its curve and in the prime-order subgroup, every public signal to
 * be < r, and the number of signals to match the key. The key's fixed G2 points are prepared once
 * (their Miller-loop lines, and the Miller loop of (α1, β2)), so one verification costs three
 * Miller loops sharing one final exponentiation.
 * Return codes: 0 valid; -EBADMSG a well-formed proof that does not verify; -EINVAL malformed input
 * (a point off the curve or outside the subgroup, a value out of range, a count mismatch, bad JSON);
 * -ENOMEM, or the errno of a failed read. The reason is in err. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "curve_info.h"
#include "groth16.h"
#include "zkey.h"

typedef struct zk_vk {
    const zk_curve_t *curve;
    uint32_t n_pub;
    /* affine Montgomery bytes, the zkey layout; all zero = infinity */
    uint8_t alpha1[ZK_MAX_G1];
    uint8_t beta2[ZK_MAX_G2], gamma2[ZK_MAX_G2], delta2[ZK_MAX_G2];
    uint8_t *ic; /* (n_pub + 1) G1 points, g1_size bytes each; malloc'd */
    void *pre;   /* prepared lines of γ2 and δ2 and the Miller loop of (α1, β2); malloc'd */
} zk_vk_t;

/* The JSON readers need json-c: built when it was found (ZK_HAVE_JSONC), as on every machine the
 * README sets up; a GPU check machine without it still proves and verifies against a .zkey. */
/* snarkjs's verification_key.json. */
int zk_vk_from_json(zk_vk_t *vk, const char *path, zk_err_t *err);
/* The verifying part of an open .zkey (header points and IC, copied; z may be closed afterwards). */
int zk_vk_from_zkey(zk_vk_t *vk, const zk_zkey_t *z, zk_err_t *err);
/* Either of the above, by the file's first bytes ("zkey" magic or JSON). Only a regular file is read
 * (zk_open_regular: a FIFO or device is refused, never waited on). */
int zk_vk_load(zk_vk_t *vk, const char *path, zk_err_t *err);
/* Checks every point of an open .zkey (header, IC, PointsA/B1/B2/C/H): coordinates below q, on the
 * curve, and with subgroup in the prime-order subgroup. For the failure path of a proof that does
 * not check out (the reader does not look inside points): "Z: section 9 (PointsH): point 17 (G1) is
 * not on the curve". 0 when every point is good. */
int zk_zkey_check_points(const zk_zkey_t *z, const char *name, bool subgroup, zk_err_t *err);
void zk_vk_free(zk_vk_t *vk);

/* proof.json: pi_a, pi_b, pi_c (projective Jacobian coordinates as snarkjs writes them, z = 1 in
 * practice; z = 0 is infinity). Checks the range of every coordinate and that the points are on the
 * curve and in the prime-order subgroup ("P: pi_b: point is not in the prime-order subgroup of G2");
 * "protocol" and "curve", when present, must be "groth16" and the key's curve. */
int zk_proof_from_json(zk_proof_t *p, const zk_curve_t *curve, const char *path, zk_err_t *err);
/* public.json: an array of decimal strings, each < r. *ret_pub: n x 32 bytes, standard form LE,
 * malloc'd (NULL when n = 0). */
int zk_public_from_json(uint8_t **ret_pub, uint32_t *ret_n, const zk_curve_t *curve, const char *path, zk_err_t *err);
/* The three readers above on a JSON image already in memory (name is only used in messages). The
 * *_from_json ones read regular files only, bounded by their size (zk_read_file). */
int zk_vk_parse_json(zk_vk_t *vk, const char *name, const char *text, size_t len, zk_err_t *err);
int zk_proof_parse_json(zk_proof_t *p, const zk_curve_t *curve, const char *name, const char *text, size_t len,
                        zk_err_t *err);
int zk_public_parse_json(uint8_t **ret_pub, uint32_t *ret_n, const zk_curve_t *curve, const char *name,
                         const char *text, size_t len, zk_err_t *err);

/* The check itself; pub holds n_pub standard-form LE scalars of 32 bytes. Thread-safe (the vk is
 * only read). */
int zk_verify_proof(const zk_vk_t *vk, const zk_proof_t *p, const uint8_t *pub, uint32_t n_pub, zk_err_t *err);
