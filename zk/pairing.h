/* Optimal ate pairings of BN254 (bn_) and BLS12-381 (bls_), and the prime-order subgroup checks the
 * verifier needs. Miller loops work on G2 points "prepared" into their line coefficients, so fixed
 * verifying-key points are prepared once; a multi-Miller loop shares the Fq12 squarings of all pairs
 * and one final exponentiation turns the product into GT. Conventions: docs/verify.md. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "curve.h"

/* r = a*ξ in Fq2, the one operation the tower needs beyond zk/field.h. */
/* BN254: (a0 + a1 u)(9 + u) = (9 a0 - a1) + (a0 + 9 a1) u */
static inline void bn_fq2_mul_xi(bn_fq2_t *r, const bn_fq2_t *a) {
    bn_fq_t t0, t1;
    bn_fq_dbl(&t0, &a->c0);
    bn_fq_dbl(&t0, &t0);
    bn_fq_dbl(&t0, &t0);
    bn_fq_add(&t0, &t0, &a->c0);
    bn_fq_dbl(&t1, &a->c1);
    bn_fq_dbl(&t1, &t1);
    bn_fq_dbl(&t1, &t1);
    bn_fq_add(&t1, &t1, &a->c1);
    bn_fq_sub(&t0, &t0, &a->c1);
    bn_fq_add(&r->c1, &t1, &a->c0);
    r->c0 = t0;
}
/* BLS12-381: (a0 + a1 u)(1 + u) = (a0 - a1) + (a0 + a1) u */
static inline void bls_fq2_mul_xi(bls_fq2_t *r, const bls_fq2_t *a) {
    bls_fq_t t0;
    bls_fq_sub(&t0, &a->c0, &a->c1);
    bls_fq_add(&r->c1, &a->c0, &a->c1);
    r->c0 = t0;
}

#define TW bn
#define F2 bn_fq2
#define F bn_fq
#include "tower_tmpl.h"
#undef TW
#undef F2
#undef F

#define TW bls
#define F2 bls_fq2
#define F bls_fq
#include "tower_tmpl.h"
#undef TW
#undef F2
#undef F

/* One line of the Miller loop, evaluated at a G1 point P as y_P·ly + x_P·lx + l1 (where the three
 * terms sit in Fq12 is the twist's: zk/miller_tmpl.h). */
typedef struct {
    bn_fq2_t ly, lx, l1;
} bn_ell_t;
typedef struct {
    bls_fq2_t ly, lx, l1;
} bls_ell_t;

/* Enough for 6x+2 in NAF (66 digits) and the two Frobenius additions. */
#define BN_ELL_MAX 104
/* |x| has 64 bits, 6 of them set: 63 doublings and 5 additions. */
#define BLS_ELL_MAX 68

typedef struct {
    bool inf;
    uint32_t n;
    bn_ell_t ell[BN_ELL_MAX];
} bn_g2_prep_t;

typedef struct {
    bool inf;
    uint32_t n;
    bls_ell_t ell[BLS_ELL_MAX];
} bls_g2_prep_t;

/* q must be on the curve and in G2 (the loop relies on its order being r). */
void bn_g2_prepare(bn_g2_prep_t *r, const bn_g2_aff_t *q);
void bls_g2_prepare(bls_g2_prep_t *r, const bls_g2_aff_t *q);

/* f = prod_i f_{loop, q[i]}(p[i]), before the final exponentiation. Pairs with an infinite point
 * contribute 1. */
void bn_miller_loop(bn_fq12_t *f, const bn_g1_aff_t *p, const bn_g2_prep_t *const *q, size_t n);
void bls_miller_loop(bls_fq12_t *f, const bls_g1_aff_t *p, const bls_g2_prep_t *const *q, size_t n);

/* The final exponentiation: the easy part f^((q^6-1)(q^2+1)), then the published x-addition chain of
 * the hard part. Gives the same GT values as snarkjs (tests/test_verify.c, vk_alphabeta_12). */
void bn_final_exp(bn_fq12_t *r, const bn_fq12_t *f);
void bls_final_exp(bls_fq12_t *r, const bls_fq12_t *f);

/* r = a^(q^k), k = 1, 2, 3. */
void bn_fq12_frobenius(bn_fq12_t *r, const bn_fq12_t *a, int k);
void bls_fq12_frobenius(bls_fq12_t *r, const bls_fq12_t *a, int k);

/* e(p, q) for single points (tests, benchmarks). */
void bn_pairing(bn_fq12_t *r, const bn_g1_aff_t *p, const bn_g2_aff_t *q);
void bls_pairing(bls_fq12_t *r, const bls_g1_aff_t *p, const bls_g2_aff_t *q);

/* ψ = untwist ∘ Frobenius ∘ twist on the G2 curve; on G2 it acts as multiplication by q mod r. */
void bn_g2_psi(bn_g2_xyzz_t *r, const bn_g2_xyzz_t *p);
void bls_g2_psi(bls_g2_xyzz_t *r, const bls_g2_xyzz_t *p);
/* φ(x, y) = (β x, y) on BLS12-381 G1, β the cube root of unity for which φ acts as −x² on G1. */
void bls_g1_phi(bls_g1_xyzz_t *r, const bls_g1_xyzz_t *p);

/* Prime-order subgroup membership of a point already known to be on its curve (infinity is in it).
 * BN254 G1 has cofactor 1, so every curve point is in G1. */
bool bn_g2_in_subgroup(const bn_g2_aff_t *q);
bool bls_g1_in_subgroup(const bls_g1_aff_t *p);
bool bls_g2_in_subgroup(const bls_g2_aff_t *q);
