/* Multi-scalar multiplication on G1 and G2 of both curves (zk/msm_tmpl.h). */
#pragma once
#include "curve.h"

/* Window width for n points (bases of point_size bytes) and scalars of the given magnitude bits. */
unsigned zk_msm_window(size_t n, size_t point_size, unsigned bits);
/* Signed base-2^c digits of a 256-bit scalar k (< 2^255) into d[0..nwin), 2 <= c <= 16: each digit in
 * [-2^(c-1) + 1, 2^(c-1)], Σ d[w]·2^(c·w) = k. At c = 16 the digit 2^15 does not fit an int16_t and
 * is stored as INT16_MIN (no digit is -2^15): read digits through zk_msm_digit. */
void zk_msm_signed_digits(int16_t *d, const uint64_t k[4], unsigned c, unsigned nwin);
static inline int zk_msm_digit(int16_t d) { return d == INT16_MIN ? 1 << 15 : d; }

/* The batch-affine additions per batch for nb buckets (zk/msm_tmpl.h): nb/8 within [64,
 * ZK_MSM_BATCH]. A larger batch spreads the inversion over more additions, but more points then
 * find their bucket already waiting (about limit/(2*nb) of them) and are deferred. The cost model
 * (zk_fixed_cost) prices the inversion's share with the same limit. */
#define ZK_MSM_BATCH 1024
static inline unsigned zk_msm_batch_limit(size_t nb) {
    return (unsigned)(nb / 8 < 64 ? 64 : nb / 8 > ZK_MSM_BATCH ? ZK_MSM_BATCH : nb / 8);
}

/* The indices 0..k-1 into order, by cost largest first; equal costs keep their index order. */
void zk_order_largest_first(const double *cost, int k, int *order);

/* GLV decomposition for G1 (zk/msm.c): the endomorphism phi(x, y) = (beta·x, y) is multiplication by
 * lambda (lambda^2 + lambda + 1 = 0 mod r), and k = k1 + k2·lambda mod r with |k1|, |k2| < 2^128 from
 * the short lattice basis (a1, b1), (a2, b2) of {(a, b): a + b·lambda = 0 mod r}: c1 = round(b2·k/r),
 * c2 = round(-b1·k/r) (by g1 = round(|b2|·2^256/r), g2 = round(|b1|·2^256/r)), k1 = k − c1·a1 − c2·a2,
 * k2 = −c1·b1 − c2·b2. Constants mod 2^256 (two's complement). */
typedef struct zk_glv {
    uint64_t lambda[4]; /* standard form, < r */
    uint64_t g1[4], g2[4];
    uint64_t a1[4], b1[4], a2[4], b2[4];
    bool neg_c1, neg_c2; /* c1 = -round(|b2|·k/r) when set (and likewise c2) */
} zk_glv_t;
extern const zk_glv_t zk_glv_bn, zk_glv_bls;
/* k (< 2^256) -> |k1|, |k2| (< 2^128 each, in 4 limbs) and their signs (true: negative). */
void zk_glv_split(const zk_glv_t *g, const uint64_t k[4], uint64_t k1[4], bool *neg1, uint64_t k2[4], bool *neg2);

void bn_g1_msm(bn_g1_xyzz_t *out, const bn_g1_aff_t *bases, const uint8_t *scalars, size_t n, int threads);
void bn_g2_msm(bn_g2_xyzz_t *out, const bn_g2_aff_t *bases, const uint8_t *scalars, size_t n, int threads);
void bls_g1_msm(bls_g1_xyzz_t *out, const bls_g1_aff_t *bases, const uint8_t *scalars, size_t n, int threads);
void bls_g2_msm(bls_g2_xyzz_t *out, const bls_g2_aff_t *bases, const uint8_t *scalars, size_t n, int threads);

/* The bucket reduction of the MSM (zk/msm_tmpl.h: msm_reduce, with the kernel set in use): *out = Σ_(i < nb)
 * (i+1)·(bucket[i] where state[i] bit 0, + side[i] where bit 2). For the tests. */
#define ZK_BUCKET_SUM_DECL(G)                                                                                       \
    void G##_msm_bucket_sum(G##_xyzz_t *out, const G##_aff_t *bucket, const G##_xyzz_t *side, const uint8_t *state, \
                            size_t nb);
ZK_BUCKET_SUM_DECL(bn_g1)
ZK_BUCKET_SUM_DECL(bn_g2)
ZK_BUCKET_SUM_DECL(bls_g1)
ZK_BUCKET_SUM_DECL(bls_g2)
#undef ZK_BUCKET_SUM_DECL

/* Fixed-base MSM over precomputed window tables (zk/msm_fixed_tmpl.h), for keys that stay loaded:
 * scalars in nwin signed c-bit digits; one of every `stride` windows stored as a row of multiples
 * 2^(c·stride·j)·P_i (row 0: the bases themselves, not copied), stored = ceil(nwin / stride) rows.
 * The rows hold only the finite bases (m of the n; a key's A, B1 and B2 points are infinity for
 * every wire outside A or B), so that a proof reads them from memory without gaps. */
typedef struct zk_fixed_plan {
    unsigned c, nwin, stride, stored; /* stored <= 1: no table, the plain MSM runs */
} zk_fixed_plan_t;
typedef struct zk_fixed {
    zk_fixed_plan_t plan;
    size_t n;          /* bases */
    size_t m;          /* finite bases: the points of a row */
    uint32_t *idx;     /* their indices, increasing (malloc'd); NULL when m == n */
    const void *bases; /* row 0: the caller's points, which must stay mapped */
    void *pts;         /* rows 1 .. stored-1, m points each (malloc'd) */
} zk_fixed_t;
/* Table bytes of a plan for m (finite) points of point_size bytes. */
size_t zk_fixed_bytes(const zk_fixed_plan_t *p, size_t n, size_t point_size);
/* The fastest plan (by the cost model of zk_msm_window, for `threads` threads) whose table fits in
 * max_bytes; stored = 1 when no table beats the plain MSM within max_bytes. */
zk_fixed_plan_t zk_fixed_plan(size_t n, size_t point_size, size_t max_bytes, int threads);
/* That model's wall cost of plan p (stored <= 1: the plain MSM) over n points on `threads` threads,
 * in bucket additions of its group. */
double zk_fixed_cost(const zk_fixed_plan_t *p, size_t n, size_t point_size, int threads);
/* k <= ZK_SIDE_MAX MSMs that cost cost1[i] on one thread and costT[i] over all `threads` threads (in
 * one unit): whether they finish sooner side by side, one thread each, handed out largest first to
 * whichever thread is free (as OpenMP's dynamic schedule hands them out), than one after another
 * over all threads. order gets the largest-first order (cost1) either way. */
#define ZK_SIDE_MAX 8
bool zk_msm_side_by_side(const double *cost1, const double *costT, int k, int threads, int *order);
/* The finite points among n of point_size bytes (infinity is all-zero bytes). */
size_t zk_fixed_finite(const void *bases, size_t n, size_t point_size);
/* build: -ENOMEM (table freed) or 0; the table keeps `bases`, not a copy. msm: as the plain MSM. */
#define ZK_FIXED_DECL(G)                                                                                            \
    int G##_fixed_build(zk_fixed_t *t, const G##_aff_t *bases, size_t n, const zk_fixed_plan_t *plan, int threads); \
    void G##_fixed_msm(G##_xyzz_t *out, const zk_fixed_t *t, const uint8_t *scalars, int threads);                 \
    void G##_fixed_free(zk_fixed_t *t);
ZK_FIXED_DECL(bn_g1)
ZK_FIXED_DECL(bn_g2)
ZK_FIXED_DECL(bls_g1)
ZK_FIXED_DECL(bls_g2)
#undef ZK_FIXED_DECL
