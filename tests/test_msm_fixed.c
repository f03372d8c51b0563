/* The fixed-base MSM over window tables (zk/msm_fixed_tmpl.h) against naive double-and-add, for G1
 * and G2 of both curves: sizes 1, 2, 3 and non-powers of two; scalar patterns all zero, all one,
 * mixed 0/1/small/large (r-1 among them), random, and random over repeated points; infinity bases;
 * plans from one stored row per window (stride 1) to two rows, narrow and wide windows (c = 16: the
 * digit 2^15 stored as INT16_MIN), 1 to 3 threads; the planner's budget (nothing fits: the plain
 * MSM; each plan's table within its budget). */
#include <stdlib.h>

#include "kernel_sets.h"
#include "test.h"
#include "test_random.h"
#include "zk/curve_info.h"
#include "zk/msm.h"

/* 0 all zero, 1 all one, 2 mixed 0/1/small/large/r-1/random, 3 random, 4 random on one repeated base */
static void pattern_scalar(uint8_t *s, const zk_curve_t *c, int pattern, size_t i) {
    memset(s, 0, 32);
    switch (pattern) {
    case 0: break;
    case 1: s[0] = 1; break;
    case 2:
        switch (i % 6) {
        case 0: break;
        case 1: s[0] = 1; break;
        case 2: s[0] = (uint8_t)(2 + i % 200), s[1] = (uint8_t)(i % 3); break;
        case 3: memcpy(s, c->r, 32), s[0] -= 1; break;        /* r - 1: every digit at its largest */
        case 4: /* all low bits set, or every 16-bit word below the top one 0x8000 (c = 16: digits 2^15) */
            if (i % 12 == 4) memset(s, 0xff, 31), s[31] = 0x1f;
            else for (int b = 1; b < 30; b += 2) s[b] = 0x80;
            break;
        default: rnd_scalar(s, c->r); break;
        }
        break;
    default: rnd_scalar(s, c->r); break;
    }
}

static zk_fixed_plan_t plan_of(unsigned c, unsigned stride) {
    unsigned nwin = (255 + c) / c;
    if (stride >= nwin) stride = nwin - 1;
    return (zk_fixed_plan_t){.c = c, .nwin = nwin, .stride = stride, .stored = (nwin + stride - 1) / stride};
}

#define FIXED_TEST(G, FR, CURVE)                                                                                         \
    static int G##_fixed_check(const G##_aff_t *bases, const uint8_t *sc, size_t n, const G##_xyzz_t *want,         \
                               const zk_fixed_plan_t *pl, const char *what) {                                        \
        zk_fixed_t t;                                                                                                \
        CHECK_MSG(G##_fixed_build(&t, bases, n, pl, 2) == 0, #G " table build (%s)", what);                         \
        for (int threads = 1; threads <= 3; threads++) {                                                             \
            G##_xyzz_t got;                                                                                          \
            G##_fixed_msm(&got, &t, sc, threads);                                                                    \
            CHECK_MSG(G##_xyzz_eq(&got, want), #G " fixed msm, %s, %zu points, c %u stride %u stored %u, %d threads", \
                      what, n, pl->c, pl->stride, pl->stored, threads);                                              \
        }                                                                                                            \
        G##_fixed_free(&t);                                                                                          \
        return 0;                                                                                                    \
    }                                                                                                                \
    TEST(G##_fixed_vs_naive) {                                                                                       \
        const zk_curve_t *cv = &CURVE;                                                                               \
        static const size_t sizes[] = {1, 2, 3, 17, 100, 257};                                                       \
        const zk_fixed_plan_t plans[] = {plan_of(4, 1), plan_of(7, 3), plan_of(13, 99), plan_of(16, 1)};           \
        for (int pattern = 0; pattern < 5; pattern++)                                                                \
            for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {                                       \
                size_t n = sizes[si];                                                                                \
                G##_aff_t *bases = calloc(n, sizeof(*bases));                                                        \
                uint8_t *sc = calloc(n, 32), k0[32];                                                                 \
                G##_xyzz_t p, q, want, t;                                                                            \
                rnd_scalar(k0, cv->r);                                                                               \
                G##_xyzz_from_aff(&q, &G##_gen);                                                                     \
                G##_xyzz_mul(&p, &q, (const uint64_t *)k0, 4);                                                       \
                for (size_t i = 0; i < n; i++) {                                                                     \
                    if (pattern != 4) G##_xyzz_add(&p, &p, &q); /* pattern 4: the same base throughout */           \
                    if (i % 7 == 3) memset(&bases[i], 0, sizeof(bases[i])); /* infinity */                          \
                    else G##_xyzz_to_aff(&bases[i], &p);                                                             \
                    pattern_scalar(sc + 32 * i, cv, pattern, i);                                                     \
                }                                                                                                    \
                G##_xyzz_set_inf(&want);                                                                             \
                for (size_t i = 0; i < n; i++) {                                                                     \
                    G##_xyzz_t b;                                                                                    \
                    G##_xyzz_from_aff(&b, &bases[i]);                                                                \
                    G##_xyzz_mul(&t, &b, (const uint64_t *)(sc + 32 * i), 4);                                        \
                    G##_xyzz_add(&want, &want, &t);                                                                  \
                }                                                                                                    \
                char what[32];                                                                                       \
                snprintf(what, sizeof what, "pattern %d", pattern);                                                  \
                for (size_t k = 0; k < sizeof(plans) / sizeof(plans[0]); k++)                                       \
                    if (G##_fixed_check(bases, sc, n, &want, &plans[k], what)) return 1;                            \
                zk_fixed_plan_t best = zk_fixed_plan(n, sizeof(G##_aff_t), SIZE_MAX, 2);                             \
                if (G##_fixed_check(bases, sc, n, &want, &best, "planned")) return 1;                                \
                free(bases);                                                                                         \
                free(sc);                                                                                            \
            }                                                                                                        \
        { /* every base infinity: rows of no point (the table holds the finite bases only) */                      \
            G##_aff_t bases[9];                                                                                      \
            uint8_t sc[9 * 32];                                                                                      \
            G##_xyzz_t want;                                                                                         \
            memset(bases, 0, sizeof bases);                                                                          \
            for (int i = 0; i < 9; i++) rnd_scalar(sc + 32 * i, cv->r);                                              \
            G##_xyzz_set_inf(&want);                                                                                 \
            for (size_t k = 0; k < sizeof(plans) / sizeof(plans[0]); k++)                                           \
                if (G##_fixed_check(bases, sc, 9, &want, &plans[k], "all infinity")) return 1;                      \
        }                                                                                                            \
        return 0;                                                                                                    \
    }                                                                                                                \
    /* bases (i+1)·G: Σ k_i·(i+1)·G = (Σ k_i·(i+1) mod r)·G, one scalar multiplication to check 3001 points */       \
    TEST(G##_fixed_large) {                                                                                          \
        const zk_curve_t *cv = &CURVE;                                                                               \
        const size_t n = 3001;                                                                                       \
        G##_aff_t *bases = calloc(n, sizeof(*bases));                                                                \
        uint8_t *sc = calloc(n, 32);                                                                                 \
        G##_xyzz_t p, g, want;                                                                                       \
        G##_xyzz_from_aff(&g, &G##_gen);                                                                             \
        p = g;                                                                                                       \
        FR##_t sum, term, idx, k;                                                                                    \
        FR##_zero(&sum);                                                                                             \
        for (size_t i = 0; i < n; i++) {                                                                             \
            G##_xyzz_to_aff(&bases[i], &p); /* (i+1)·G */                                                            \
            G##_xyzz_add(&p, &p, &g);                                                                                \
            pattern_scalar(sc + 32 * i, cv, 2, i);                                                                   \
            if (i % 29 == 7) { memset(&bases[i], 0, sizeof(bases[i])); continue; }                                  \
            memcpy(k.l, sc + 32 * i, 32);                                                                            \
            FR##_to_mont(&k, &k);                                                                                    \
            FR##_set_u64(&idx, i + 1);                                                                               \
            FR##_mul(&term, &k, &idx);                                                                               \
            FR##_add(&sum, &sum, &term);                                                                             \
        }                                                                                                            \
        FR##_from_mont(&sum, &sum);                                                                                  \
        G##_xyzz_mul(&want, &g, sum.l, 4);                                                                           \
        /* c = 15, 16: 2^14, 2^15 buckets, the largest batch (msm_batch_limit), 16 the widest plan */           \
        const zk_fixed_plan_t plans[] = {plan_of(10, 1), plan_of(12, 4), plan_of(15, 1), plan_of(16, 1),             \
                                         zk_fixed_plan(n, sizeof(G##_aff_t), SIZE_MAX, 2)};                          \
        for (size_t j = 0; j < sizeof(plans) / sizeof(plans[0]); j++)                                               \
            if (G##_fixed_check(bases, sc, n, &want, &plans[j], "large")) return 1;                                  \
        free(bases);                                                                                                 \
        free(sc);                                                                                                    \
        return 0;                                                                                                    \
    }

FIXED_TEST(bn_g1, bn_fr, zk_curve_bn128)
FIXED_TEST(bn_g2, bn_fr, zk_curve_bn128)
FIXED_TEST(bls_g1, bls_fr, zk_curve_bls12381)
FIXED_TEST(bls_g2, bls_fr, zk_curve_bls12381)

/* zk_msm_side_by_side: MSMs of even size go side by side when splitting them costs more than it
 * gains, one that would leave the other threads idle does not, one thread never; the order is
 * largest first and stable. */
TEST(msm_side_by_side) {
    int order[ZK_SIDE_MAX];
    const double even1[] = {10, 10, 10, 10}, evenT[] = {6, 6, 6, 6}; /* side 20 < 24 */
    CHECK(zk_msm_side_by_side(even1, evenT, 4, 2, order));
    CHECK(!zk_msm_side_by_side(even1, evenT, 4, 1, order));
    CHECK(!zk_msm_side_by_side(even1, evenT, 1, 2, order));
    const double big1[] = {10, 100, 10}, bigT[] = {6, 55, 6}; /* side 100 > 67 */
    CHECK(!zk_msm_side_by_side(big1, bigT, 3, 2, order));
    CHECK(order[0] == 1 && order[1] == 0 && order[2] == 2);
    /* three threads for five: 9 | 9 | 3+2+1: side 9 < 4+4+2+1+1 = 12; largest first, ties in order */
    const double five1[] = {3, 9, 9, 1, 2}, fiveT[] = {2, 4, 4, 1, 1};
    CHECK(zk_msm_side_by_side(five1, fiveT, 5, 3, order));
    CHECK(order[0] == 1 && order[1] == 2 && order[2] == 0 && order[3] == 4 && order[4] == 3);
    const double slim1[] = {3, 9, 9, 1, 2}, slimT[] = {1, 3, 3, 1, 1}; /* side 9 == 9: not sooner */
    CHECK(!zk_msm_side_by_side(slim1, slimT, 5, 3, order));
    return 0;
}

/* The planner never exceeds its budget; with no budget (or one too small for a single row) it
 * chooses the plain MSM, and a table build of that plan allocates nothing. */
TEST(fixed_plan_budget) {
    static const size_t sizes[] = {1, 3, 1000, 65536, 1u << 20};
    static const size_t psize[] = {64, 128, 96, 192};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
        for (size_t pi = 0; pi < 4; pi++) {
            size_t n = sizes[si], ps = psize[pi];
            zk_fixed_plan_t p0 = zk_fixed_plan(n, ps, 0, 2);
            CHECK_MSG(p0.stored == 1 && zk_fixed_bytes(&p0, n, ps) == 0, "budget 0, %zu points: stored %u", n,
                      p0.stored);
            zk_fixed_plan_t p1 = zk_fixed_plan(n, ps, n * ps - 1, 2); /* less than one row */
            CHECK_MSG(p1.stored == 1, "budget below one row, %zu points: stored %u", n, p1.stored);
            size_t budgets[] = {n * ps, 4 * n * ps, 10 * n * ps, SIZE_MAX};
            for (size_t b = 0; b < 4; b++) {
                zk_fixed_plan_t p = zk_fixed_plan(n, ps, budgets[b], 2);
                CHECK_MSG(zk_fixed_bytes(&p, n, ps) <= budgets[b], "plan over budget: %zu > %zu",
                          zk_fixed_bytes(&p, n, ps), budgets[b]);
                if (p.stored > 1)
                    CHECK(p.c >= 4 && p.c <= 16 && p.nwin * p.c > 255 && p.stride >= 1 && p.stride < p.nwin &&
                          p.stored == (p.nwin + p.stride - 1) / p.stride);
            }
            /* at 2^16 points and above, an unbounded budget buys a table */
            if (n >= 65536) CHECK_MSG(zk_fixed_plan(n, ps, SIZE_MAX, 2).stored > 1, "no table for %zu points", n);
        }
    zk_fixed_t t;
    zk_fixed_plan_t p0 = zk_fixed_plan(100, sizeof(bn_g1_aff_t), 0, 1);
    CHECK(bn_g1_fixed_build(&t, &bn_g1_gen, 1, &p0, 1) == 0 && t.pts == NULL);
    bn_g1_fixed_free(&t);
    return 0;
}

