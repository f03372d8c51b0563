/* MSM against naive double-and-add on random inputs, for G1 and G2 of both curves: sizes 1, 2, 3
 * and sizes that are not powers of two, with zero scalars, scalar 1, r-1, and infinity bases; the
 * scalar patterns (all zero, all one, mixed 0/1/small/large, scalars around lambda and 2^128) and
 * repeated points of the GLV path (every group); the GLV split itself on edge and random scalars, and
 * the endomorphism it relies on (phi = lambda on G1 and G2). */
#include <stdlib.h>

#include "kernel_sets.h"
#include "test.h"
#include "test_random.h"
#include "zk/curve_info.h"
#include "zk/msm.h"

#define MSM_TEST(G, CURVE)                                                                                           \
    static int G##_case(size_t n, int threads) {                                                                     \
        const zk_curve_t *c = &CURVE;                                                                                \
        G##_aff_t *bases = calloc(n, sizeof(*bases));                                                                \
        uint8_t *sc = calloc(n, 32);                                                                                 \
        G##_xyzz_t p, q, acc, t;                                                                                     \
        uint8_t k0[32];                                                                                              \
        rnd_scalar(k0, c->r);                                                                                        \
        G##_xyzz_from_aff(&q, &G##_gen);                                                                             \
        G##_xyzz_mul(&p, &q, (const uint64_t *)k0, 4); /* random start */                                           \
        rnd_scalar(k0, c->r);                                                                                        \
        G##_xyzz_mul(&q, &q, (const uint64_t *)k0, 4); /* random step */                                            \
        for (size_t i = 0; i < n; i++) {                                                                             \
            G##_xyzz_add(&p, &p, &q);                                                                                \
            if (i % 7 == 3) memset(&bases[i], 0, sizeof(bases[i])); /* infinity */                                 \
            else G##_xyzz_to_aff(&bases[i], &p);                                                                     \
            rnd_scalar(sc + 32 * i, c->r);                                                                           \
            if (i % 5 == 1) memset(sc + 32 * i, 0, 32);                                                              \
            if (i % 5 == 2) { memset(sc + 32 * i, 0, 32); sc[32 * i] = 1; }                                          \
            if (i % 11 == 4) { memcpy(sc + 32 * i, c->r, 32); sc[32 * i] -= 1; } /* r - 1 */                        \
            if (i % 13 == 6) { memset(sc + 32 * i, 0xff, 31); sc[32 * i + 31] = 0x1f; } /* all low bits set */    \
        }                                                                                                            \
        G##_xyzz_set_inf(&acc);                                                                                      \
        for (size_t i = 0; i < n; i++) {                                                                             \
            G##_xyzz_t b;                                                                                            \
            G##_xyzz_from_aff(&b, &bases[i]);                                                                        \
            G##_xyzz_mul(&t, &b, (const uint64_t *)(sc + 32 * i), 4);                                                \
            G##_xyzz_add(&acc, &acc, &t);                                                                            \
        }                                                                                                            \
        G##_msm(&t, bases, sc, n, threads);                                                                          \
        free(bases);                                                                                                 \
        free(sc);                                                                                                    \
        CHECK_MSG(G##_xyzz_eq(&t, &acc), #G " msm of %zu points, %d threads", n, threads);                            \
        return 0;                                                                                                    \
    }                                                                                                                \
    TEST(G##_msm_vs_naive) {                                                                                         \
        static const size_t sizes[] = {1, 2, 3, 17, 100, 257};                                                       \
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)                                                \
            if (G##_case(sizes[i], 1 + (int)(i % 2))) return 1;                                                      \
        G##_xyzz_t t;                                                                                                \
        G##_msm(&t, NULL, NULL, 0, 2);                                                                               \
        CHECK(G##_xyzz_is_inf(&t));                                                                                  \
        /* every base infinity (nothing reaches Pippenger or the sum of ones), scalars random, 1 and 0 */           \
        G##_aff_t *inf = calloc(300, sizeof(*inf));                                                                  \
        uint8_t *sc = calloc(300, 32);                                                                               \
        for (size_t i = 0; i < 300; i++) {                                                                           \
            rnd_scalar(sc + 32 * i, CURVE.r);                                                                        \
            if (i % 3 == 1) memset(sc + 32 * i, 0, 32), sc[32 * i] = 1;                                              \
            if (i % 3 == 2) memset(sc + 32 * i, 0, 32);                                                              \
        }                                                                                                            \
        for (int threads = 1; threads <= 2; threads++) {                                                             \
            G##_msm(&t, inf, sc, 300, threads);                                                                      \
            CHECK_MSG(G##_xyzz_is_inf(&t), #G " msm of 300 infinity bases, %d threads", threads);                    \
        }                                                                                                            \
        free(inf);                                                                                                   \
        free(sc);                                                                                                    \
        return 0;                                                                                                    \
    }

/* Scalar patterns: 0 all zero, 1 all one, 2 mixed 0/1/small/large, 3 around lambda and 2^128 (the
 * GLV split's edges), 4 random with every point the same base (repeated points); for the sum of the
 * scalars 1 (zk/msm_tmpl.h: msm_sum; 3001 points on 2 threads are 2 runs, their sums added): 5 all
 * one with every point the same base (doublings in the accumulators and between the runs), 6 all one with bases P, -P, P, -P ... and infinity (cancellations), 7 a witness of
 * bits (60 % zero, 40 % one), 8 ones and a few large scalars among them; for deferred collisions
 * (zk/msm_tmpl.h: msm_ctx_t), 9 every scalar 7 and 10 every scalar one large value (every point
 * to the same bucket of every window: the deferred area fills, then the side path). */
static void pattern_scalar(uint8_t *s, const zk_curve_t *c, const zk_glv_t *glv, int pattern, size_t i) {
    memset(s, 0, 32);
    switch (pattern) {
    case 0: break;
    case 1: s[0] = 1; break;
    case 2:
        if (i % 4 == 0) break;
        if (i % 4 == 1) s[0] = 1;
        else if (i % 4 == 2) s[0] = (uint8_t)(2 + i % 200), s[1] = (uint8_t)(i % 3);
        else rnd_scalar(s, c->r);
        break;
    case 3: {
        uint64_t k[4] = {0};
        if (i % 3 == 0) memcpy(k, glv->lambda, 32), k[0] += i % 5; /* lambda + small */
        else if (i % 3 == 1) k[2] = 1ull << (i % 2), k[0] = (uint64_t)-(int64_t)(i % 2); /* 2^128, 2^129 - 1.. */
        else memcpy(k, glv->lambda, 32), k[0] -= 1 + i % 3;                               /* lambda - small */
        memcpy(s, k, 32);
        break;
    }
    case 5:
    case 6: s[0] = 1; break;
    case 7: s[0] = (uint8_t)(i * 7 % 10 < 4); break;
    case 8:
        if (i % 50 == 3) rnd_scalar(s, c->r);
        else s[0] = 1;
        break;
    case 9: s[0] = 7; break;
    case 10: memset(s, 0x5a, 31); break;
    default: rnd_scalar(s, c->r); break;
    }
}

#define MSM_PATTERN_TEST(G, CURVE, GLV)                                                                              \
    TEST(G##_msm_patterns) {                                                                                         \
        static const size_t sizes[] = {1, 2, 3, 31, 64, 200, 3001};                                                  \
        for (int pattern = 0; pattern < 11; pattern++)                                                               \
            for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {                                       \
                size_t n = sizes[si];                                                                                \
                if (n > 1000 && pattern < 5) continue; /* the large size for the sums of ones */                     \
                G##_aff_t *bases = calloc(n, sizeof(*bases));                                                        \
                uint8_t *sc = calloc(n, 32), k0[32];                                                                 \
                G##_xyzz_t p, q, acc, t;                                                                             \
                rnd_scalar(k0, CURVE.r);                                                                             \
                G##_xyzz_from_aff(&q, &G##_gen);                                                                     \
                G##_xyzz_mul(&p, &q, (const uint64_t *)k0, 4);                                                       \
                for (size_t i = 0; i < n; i++) {                                                                     \
                    if (pattern != 4 && pattern != 5 && i % 3 == 1) G##_xyzz_add(&p, &p, &q); /* else a repeat */   \
                    if ((pattern == 2 && i % 9 == 8) || (pattern == 6 && i % 7 == 6))                               \
                        memset(&bases[i], 0, sizeof(bases[i]));                                                      \
                    else G##_xyzz_to_aff(&bases[i], &p);                                                             \
                    if (pattern == 6 && i % 2) G##_aff_neg(&bases[i], &bases[i - 1]);                                \
                    pattern_scalar(sc + 32 * i, &CURVE, GLV, pattern, i);                                            \
                }                                                                                                    \
                G##_xyzz_set_inf(&acc);                                                                              \
                for (size_t i = 0; i < n && pattern >= 9; i++) G##_xyzz_add_aff(&acc, &acc, &bases[i]);              \
                if (pattern >= 9) { /* one scalar for all: k·(sum of the bases) */                                   \
                    uint64_t kl[4];                                                                                  \
                    memcpy(kl, sc, 32);                                                                              \
                    G##_xyzz_mul(&acc, &acc, kl, 4);                                                                 \
                }                                                                                                    \
                for (size_t i = 0; i < n && pattern < 9; i++) {                                                      \
                    G##_xyzz_t b;                                                                                    \
                    G##_xyzz_from_aff(&b, &bases[i]);                                                                \
                    uint64_t kl[4];                                                                                  \
                    memcpy(kl, sc + 32 * i, 32);                                                                     \
                    int nl = 4;                                                                                      \
                    while (nl > 1 && kl[nl - 1] == 0) nl--;                                                          \
                    G##_xyzz_mul(&t, &b, kl, nl);                                                                    \
                    G##_xyzz_add(&acc, &acc, &t);                                                                    \
                }                                                                                                    \
                for (int threads = 1; threads <= 2; threads++) {                                                     \
                    G##_msm(&t, bases, sc, n, threads);                                                              \
                    CHECK_MSG(G##_xyzz_eq(&t, &acc), #G " msm pattern %d, %zu points, %d threads", pattern, n,       \
                              threads);                                                                              \
                }                                                                                                    \
                free(bases);                                                                                         \
                free(sc);                                                                                            \
            }                                                                                                        \
        return 0;                                                                                                    \
    }

/* k1 + k2·lambda = k (mod r) with |k1|, |k2| < 2^128, on edge scalars and random ones. */
#define GLV_SPLIT_TEST(PFX, FR, CURVE)                                                                               \
    TEST(PFX##_glv_split) {                                                                                          \
        const zk_glv_t *g = &zk_glv_##PFX;                                                                           \
        FR##_t lam;                                                                                                  \
        memcpy(lam.l, g->lambda, 32);                                                                                \
        FR##_to_mont(&lam, &lam);                                                                                    \
        for (int it = 0; it < 20000; it++) {                                                                         \
            uint64_t k[4] = {0}, rr[4];                                                                              \
            memcpy(rr, CURVE.r, 32);                                                                                 \
            switch (it) {                                                                                            \
            case 0: break;                                                                                           \
            case 1: k[0] = 1; break;                                                                                 \
            case 2: memcpy(k, rr, 32), k[0] -= 1; break;                                                             \
            case 3: memcpy(k, rr, 32), k[0] -= 2; break;                                                             \
            case 4: memcpy(k, g->lambda, 32); break;                                                                 \
            case 5: memcpy(k, g->lambda, 32), k[0] += 1; break;                                                      \
            case 6: k[2] = 1; break;                                                                                 \
            case 7: k[1] = k[0] = ~0ull; break;                                                                      \
            case 8: memcpy(k, rr, 32), k[0] >>= 1, k[0] |= k[1] << 63, k[1] >>= 1, k[1] |= k[2] << 63,               \
                    k[2] >>= 1, k[2] |= k[3] << 63, k[3] >>= 1; break; /* (r-1)/2 */                                 \
            default: rnd_scalar((uint8_t *)k, CURVE.r); break;                                                       \
            }                                                                                                        \
            uint64_t k1[4], k2[4];                                                                                   \
            bool n1, n2;                                                                                             \
            zk_glv_split(g, k, k1, &n1, k2, &n2);                                                                    \
            CHECK_MSG(k1[2] == 0 && k1[3] == 0 && k2[2] == 0 && k2[3] == 0, #PFX " split of case %d too long", it);   \
            FR##_t a, b, want;                                                                                       \
            memcpy(a.l, k1, 32), memcpy(b.l, k2, 32), memcpy(want.l, k, 32);                                         \
            FR##_to_mont(&a, &a), FR##_to_mont(&b, &b), FR##_to_mont(&want, &want);                                  \
            if (n1) FR##_neg(&a, &a);                                                                                \
            if (n2) FR##_neg(&b, &b);                                                                                \
            FR##_mul(&b, &b, &lam);                                                                                  \
            FR##_add(&a, &a, &b);                                                                                    \
            CHECK_MSG(FR##_eq(&a, &want), #PFX " split of case %d does not recombine", it);                         \
        }                                                                                                            \
        return 0;                                                                                                    \
    }

/* phi(x, y) = (beta·x, y) acts as lambda on every group (zk/msm.c; on G2 with beta^2): a one-point
 * MSM with scalar lambda (split into |k1|, |k2| < 2^128, so k2 != 0 and phi(P) is summed) against
 * lambda·P by double-and-add, on the generator and on random multiples of it, one and two threads. */
#define GLV_ENDO_TEST(G, CURVE, GLV)                                                                                 \
    TEST(G##_glv_endomorphism) {                                                                                     \
        for (int it = 0; it < 8; it++) {                                                                             \
            G##_xyzz_t p, want, got;                                                                                 \
            G##_aff_t base;                                                                                          \
            G##_xyzz_from_aff(&p, &G##_gen);                                                                         \
            if (it) {                                                                                                \
                uint8_t k0[32];                                                                                      \
                rnd_scalar(k0, CURVE.r);                                                                             \
                G##_xyzz_mul(&p, &p, (const uint64_t *)k0, 4);                                                       \
            }                                                                                                        \
            G##_xyzz_to_aff(&base, &p);                                                                              \
            G##_xyzz_mul(&want, &p, (GLV)->lambda, 4);                                                               \
            G##_msm(&got, &base, (const uint8_t *)(GLV)->lambda, 1, 1 + it % 2);                                     \
            CHECK_MSG(G##_xyzz_eq(&got, &want), #G " lambda·P by the endomorphism, case %d", it);                    \
        }                                                                                                            \
        return 0;                                                                                                    \
    }

GLV_SPLIT_TEST(bn, bn_fr, zk_curve_bn128)
GLV_SPLIT_TEST(bls, bls_fr, zk_curve_bls12381)
GLV_ENDO_TEST(bn_g1, zk_curve_bn128, &zk_glv_bn)
GLV_ENDO_TEST(bn_g2, zk_curve_bn128, &zk_glv_bn)
GLV_ENDO_TEST(bls_g1, zk_curve_bls12381, &zk_glv_bls)
GLV_ENDO_TEST(bls_g2, zk_curve_bls12381, &zk_glv_bls)
MSM_PATTERN_TEST(bn_g1, zk_curve_bn128, &zk_glv_bn)
MSM_PATTERN_TEST(bn_g2, zk_curve_bn128, &zk_glv_bn)
MSM_PATTERN_TEST(bls_g1, zk_curve_bls12381, &zk_glv_bls)
MSM_PATTERN_TEST(bls_g2, zk_curve_bls12381, &zk_glv_bls)

MSM_TEST(bn_g1, zk_curve_bn128)
MSM_TEST(bn_g2, zk_curve_bn128)
MSM_TEST(bls_g1, zk_curve_bls12381)
MSM_TEST(bls_g2, zk_curve_bls12381)

/* c = 2..16 (16: the fixed-base tables' widest, its digit 2^15 stored as INT16_MIN); random scalars
 * below 2^255, and at it = 0 one whose every 16-bit word is 0x8000 (at c = 16 every digit 2^15, at
 * other widths long runs of carries). */
TEST(signed_digits_reconstruct) {
    for (unsigned c = 2; c <= 16; c++) {
        unsigned nwin = (255 + c) / c;
        for (int it = 0; it < 50; it++) {
            uint64_t k[4];
            rnd(k, 32);
            k[3] &= (1ull << 63) - 1;
            if (it == 0)
                for (int i = 0; i < 4; i++) k[i] = 0x8000800080008000ull & (i == 3 ? (1ull << 63) - 1 : ~0ull);
            int16_t d[128];
            zk_msm_signed_digits(d, k, c, nwin);
            /* Σ d_w 2^(cw) == k, evaluated with 64-bit limbs and signed carries */
            __int128 acc[6] = {0};
            int saw_half = 0;
            for (unsigned w = 0; w < nwin; w++) {
                int dv = zk_msm_digit(d[w]);
                CHECK(dv <= (1 << (c - 1)) && dv > -(1 << (c - 1)));
                saw_half |= dv == 1 << (c - 1);
                unsigned bit = w * c;
                acc[bit / 64] += (__int128)dv * ((__int128)1 << (bit % 64)); /* no shift of a negative */
            }
            if (c == 16 && it == 0) CHECK(saw_half);
            for (int i = 0; i < 5; i++) {
                __int128 lo = (__int128)(uint64_t)acc[i];
                __int128 carry = (acc[i] - lo) >> 64;
                acc[i] = lo;
                acc[i + 1] += carry;
            }
            for (int i = 0; i < 4; i++) CHECK((uint64_t)acc[i] == k[i]);
            CHECK(acc[4] == 0 && acc[5] == 0);
        }
    }
    return 0;
}

/* Large sizes, where batches fill and buckets collide: bases i·G (i = 1..n), so that
 * Σ k_i·(i·G) = (Σ k_i·i mod r)·G is checked with one scalar multiplication. MIXED: a third of the
 * scalars are 1 (all in one bucket), some are 0, every 29th base is infinity; otherwise every scalar
 * is random and the bases with i % INF == 7 are infinity (the MSM leaves them out of Pippenger, so
 * that INF sets the number of its terms exactly). */
#define MSM_LARGE_TEST(G, FR, CURVE, N, NAME, MIXED, INF)                                                            \
    TEST(G##_msm_##NAME) {                                                                                           \
        const size_t n = N;                                                                                          \
        G##_aff_t *bases = calloc(n, sizeof(*bases));                                                                \
        uint8_t *sc = calloc(n, 32);                                                                                 \
        G##_xyzz_t p, g, t;                                                                                          \
        G##_xyzz_from_aff(&g, &G##_gen);                                                                             \
        p = g;                                                                                                       \
        FR##_t sum, term, idx, k;                                                                                    \
        FR##_zero(&sum);                                                                                             \
        for (size_t i = 0; i < n; i++) {                                                                             \
            G##_xyzz_to_aff(&bases[i], &p); /* (i+1)·G */                                                            \
            G##_xyzz_add(&p, &p, &g);                                                                                \
            rnd_scalar(sc + 32 * i, CURVE.r);                                                                        \
            if (MIXED && i % 3 == 0) { memset(sc + 32 * i, 0, 32); sc[32 * i] = 1; }                                 \
            if (MIXED && i % 17 == 5) memset(sc + 32 * i, 0, 32);                                                    \
            if (i % (MIXED ? 29 : (INF)) == 7) { memset(&bases[i], 0, sizeof(bases[i])); continue; }                \
            memcpy(k.l, sc + 32 * i, 32);                                                                            \
            FR##_to_mont(&k, &k);                                                                                    \
            FR##_set_u64(&idx, i + 1);                                                                               \
            FR##_mul(&term, &k, &idx);                                                                               \
            FR##_add(&sum, &sum, &term);                                                                             \
        }                                                                                                            \
        FR##_from_mont(&sum, &sum);                                                                                  \
        G##_xyzz_t want, got;                                                                                        \
        G##_xyzz_mul(&want, &g, sum.l, 4);                                                                           \
        /* 3 threads: windows that do not divide among them are cut into runs of points (msm_pippenger) */       \
        for (int threads = 1; threads <= 3; threads++) {                                                             \
            G##_msm(&got, bases, sc, n, threads);                                                                    \
            CHECK_MSG(G##_xyzz_eq(&got, &want), #G " large msm, %d threads", threads);                                \
        }                                                                                                            \
        (void)t;                                                                                                     \
        free(bases);                                                                                                 \
        free(sc);                                                                                                    \
        return 0;                                                                                                    \
    }

MSM_LARGE_TEST(bn_g1, bn_fr, zk_curve_bn128, 5000, large, 1, 0)
MSM_LARGE_TEST(bn_g2, bn_fr, zk_curve_bn128, 5000, large, 1, 0)
MSM_LARGE_TEST(bls_g1, bls_fr, zk_curve_bls12381, 5000, large, 1, 0)
MSM_LARGE_TEST(bls_g2, bls_fr, zk_curve_bls12381, 5000, large, 1, 0)
/* Either side of the size where the MSM stops using the GLV split (zk/msm_tmpl.h: MSM_GLV_MAX =
 * 2^15 terms), 2^15 + 16 pairs: 8 infinity bases leave 2^15 + 8 terms (plain), 17 leave 2^15 - 1
 * (GLV). */
MSM_LARGE_TEST(bn_g1, bn_fr, zk_curve_bn128, 32784, above_glv, 0, 4096)
MSM_LARGE_TEST(bn_g1, bn_fr, zk_curve_bn128, 32784, at_glv, 0, 2048)
MSM_LARGE_TEST(bls_g1, bls_fr, zk_curve_bls12381, 32784, above_glv, 0, 4096)
MSM_LARGE_TEST(bn_g2, bn_fr, zk_curve_bn128, 32784, above_glv, 0, 4096)
MSM_LARGE_TEST(bn_g2, bn_fr, zk_curve_bn128, 32784, at_glv, 0, 2048)
MSM_LARGE_TEST(bls_g2, bls_fr, zk_curve_bls12381, 32784, at_glv, 0, 2048)
/* 2^16 terms and one infinity base: with the ifma kernels G1 takes the widest window, c = 15
 * (zk_msm_window), whose 18th window is empty (scalars < r < 2^254) and left out, and the 17 others
 * do not divide between 2 threads: the last is cut in two runs of points. */
MSM_LARGE_TEST(bn_g1, bn_fr, zk_curve_bn128, 65537, wide_window, 0, 1 << 20)

/* The bucket reduction (msm_reduce: batch-affine runs from 512 buckets, the XYZZ running sum below
 * that or for sparse windows, the vectors of the ifma set for BN254) against the XYZZ running sum,
 * on multiples of the generator: mixed with a few side accumulators, every bucket the same point
 * (doublings in both running sums), P and -P next to each other (cancellations to infinity), all
 * empty, many sides, sparse, half empty in runs, one point in 3/4 of the buckets; 64 .. 16384. */
static uint64_t bs_rng_state = 0x2545f4914f6cdd1dULL;
static uint64_t rng(void) { /* splitmix64: deterministic, so a failure reproduces */
    uint64_t z = (bs_rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
#define BUCKET_SUM_TEST(G)                                                                                           \
    TEST(G##_bucket_sum) {                                                                                           \
        enum { NBMAX = 16384, NPTS = 64 };                                                                           \
        G##_aff_t *bucket = calloc(NBMAX, sizeof(*bucket)), pts[NPTS];                                              \
        G##_xyzz_t *side = calloc(NBMAX, sizeof(*side)), sides[NPTS], g;                                            \
        uint8_t *state = calloc(NBMAX, 1);                                                                           \
        G##_xyzz_from_aff(&g, &G##_gen);                                                                             \
        for (int i = 0; i < NPTS; i++) {                                                                             \
            G##_xyzz_t p;                                                                                            \
            uint64_t k[1] = {1 + rng() % 1000000};                                                                   \
            G##_xyzz_mul(&p, &g, k, 1);                                                                              \
            G##_xyzz_to_aff(&pts[i], &p);                                                                            \
            k[0] = 1 + rng() % 1000000;                                                                              \
            G##_xyzz_mul(&sides[i], &g, k, 1); /* ZZ != 1 */                                                         \
        }                                                                                                            \
        static const size_t nbs[] = {64, 256, 512, 1024, 4096, 16384};                                               \
        for (int mode = 0; mode < 8; mode++)                                                                         \
            for (size_t ni = 0; ni < sizeof(nbs) / sizeof(nbs[0]); ni++) {                                           \
                size_t nb = nbs[ni];                                                                                 \
                for (size_t i = 0; i < nb; i++) {                                                                    \
                    unsigned r = (unsigned)(rng() % 8);                                                              \
                    bucket[i] = pts[rng() % NPTS];                                                                   \
                    side[i] = sides[rng() % NPTS];                                                                   \
                    state[i] = 0;                                                                                    \
                    if (mode == 0) state[i] = r < 1 ? 0 : i % 97 == 5 ? 5 : 1; /* mixed, few sides */               \
                    if (mode == 1) state[i] = 1, bucket[i] = pts[0];           /* all the same point */             \
                    if (mode == 2) {                                           /* P, -P pairs, runs of one point */ \
                        state[i] = 1;                                                                                \
                        bucket[i] = pts[(i / 4) % 3];                                                                \
                        if (i % 2) G##_aff_neg(&bucket[i], &bucket[i]);                                              \
                    }                                                                                                \
                    if (mode == 4) state[i] = r < 4 ? 5 : 1;                   /* many sides */                     \
                    if (mode == 5) state[i] = i % 64 == 7 ? 1 : 0;             /* sparse */                         \
                    if (mode == 6) state[i] = (i / 8) % 2 ? 1 : 0;             /* half empty, in runs of 8 */       \
                    if (mode == 7) state[i] = r < 6 ? 1 : 0, bucket[i] = pts[1]; /* one point, 3/4 of them */       \
                }                                                                                                    \
                G##_xyzz_t want, sum, got;                                                                           \
                G##_xyzz_set_inf(&want), G##_xyzz_set_inf(&sum);                                                     \
                for (size_t i = nb; i-- > 0;) {                                                                      \
                    if (state[i] & 1) G##_xyzz_add_aff(&sum, &sum, &bucket[i]);                                      \
                    if (state[i] & 4) G##_xyzz_add(&sum, &sum, &side[i]);                                            \
                    G##_xyzz_add(&want, &want, &sum);                                                                \
                }                                                                                                    \
                G##_msm_bucket_sum(&got, bucket, side, state, nb);                                                   \
                CHECK_MSG(G##_xyzz_eq(&got, &want), #G " bucket sum, mode %d, %zu buckets", mode, nb);               \
            }                                                                                                        \
        free(bucket);                                                                                                \
        free(side);                                                                                                  \
        free(state);                                                                                                 \
        return 0;                                                                                                    \
    }
BUCKET_SUM_TEST(bn_g1)
BUCKET_SUM_TEST(bn_g2)
BUCKET_SUM_TEST(bls_g1)
BUCKET_SUM_TEST(bls_g2)
