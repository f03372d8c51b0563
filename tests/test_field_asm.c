/* The x86-64 kernels (zk/fp_x86_64.h: MULX/ADCX/ADOX Montgomery mul behind FPF(mul)/FPF(sqr) when the
 * mulx kernel set is selected (zk/kernels.h; skipped on a CPU without BMI2+ADX), ADC/SBB add/sub
 * behind FPF(add)/FPF(sub)/FPF(dbl), on every x86-64 build) against the portable
 * FPF(mul_portable), FPF(add_portable), FPF(sub_portable), per field: every pair of edge values,
 * edge x random, and 1e5+ random pairs (uniform below p, and carry-heavy limb patterns), each
 * also with the output aliasing an input; every result must be fully reduced (< p).
 * Every modulus is below 2^(64N-1), so the largest legal inputs, the top of the range the
 * kernels accept, are p-1, p-2, ... and values whose low limbs are all ones under p's top limb. */
#include "test.h"
#include "zk/field.h"
#include "zk/kernels.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void) { /* splitmix64: deterministic, so a failure reproduces */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#define N_RANDOM 150000
#define N_EDGE_MAX 64

#define ASM_TESTS(F, NL)                                                                                             \
    /* x < p as a big integer (also what "fully reduced" means). */                                                  \
    static bool F##_below_p(const F##_t *x) { return !F##_geq_p(x->l); }                                             \
                                                                                                                     \
    /* Uniform below p by rejection: the top limb is masked to p's bit length. */                                   \
    static void F##_rand(F##_t *x) {                                                                                 \
        uint64_t top = F##_P.l[NL - 1], mask = ~0ULL >> __builtin_clzll(top);                                        \
        do {                                                                                                         \
            for (int i = 0; i < NL; i++) x->l[i] = rng();                                                            \
            x->l[NL - 1] &= mask;                                                                                    \
        } while (!F##_below_p(x));                                                                                   \
    }                                                                                                                \
                                                                                                                     \
    /* Carry-heavy patterns: each limb 0, 1, all ones, p's limb, p's limb - 1 or random; reduced mod p                \
     * by subtracting p while >= p (the top limb is capped at p's top limb first). */                                \
    static void F##_rand_pattern(F##_t *x) {                                                                         \
        for (int i = 0; i < NL; i++) {                                                                               \
            switch (rng() % 6) {                                                                                     \
            case 0: x->l[i] = 0; break;                                                                              \
            case 1: x->l[i] = 1; break;                                                                              \
            case 2: x->l[i] = ~0ULL; break;                                                                          \
            case 3: x->l[i] = F##_P.l[i]; break;                                                                     \
            case 4: x->l[i] = F##_P.l[i] - 1; break;                                                                 \
            default: x->l[i] = rng(); break;                                                                         \
            }                                                                                                        \
        }                                                                                                            \
        if (x->l[NL - 1] > F##_P.l[NL - 1]) x->l[NL - 1] = F##_P.l[NL - 1];                                          \
        while (!F##_below_p(x)) {                                                                                    \
            unsigned __int128 bw = 0;                                                                                \
            for (int i = 0; i < NL; i++) {                                                                           \
                unsigned __int128 d = (unsigned __int128)x->l[i] - F##_P.l[i] - (uint64_t)bw;                       \
                x->l[i] = (uint64_t)d;                                                                               \
                bw = (d >> 64) & 1;                                                                                  \
            }                                                                                                        \
        }                                                                                                            \
    }                                                                                                                \
                                                                                                                     \
    static int F##_edges(F##_t *e) {                                                                                 \
        int n = 0;                                                                                                   \
        for (uint64_t k = 0; k < 4; k++) { /* 0, 1, 2, 3 and p-1, p-2, p-3, p-4 */                                   \
            F##_zero(&e[n]); e[n++].l[0] = k;                                                                        \
            e[n] = F##_P; e[n++].l[0] -= k + 1; /* p[0] is odd and > 4: no borrow */                                 \
        }                                                                                                            \
        e[n++] = F##_ONE;                        /* R mod p */                                                      \
        F##_neg(&e[n], &F##_ONE); n++;           /* -R mod p */                                                     \
        e[n++] = F##_R2;                                                                                             \
        for (int i = 0; i < NL; i++) { /* 2^(64i), 2^(64i) - 1 */                                                    \
            F##_zero(&e[n]); e[n++].l[i] = 1;                                                                        \
            F##_zero(&e[n]);                                                                                         \
            for (int j = 0; j < i; j++) e[n].l[j] = ~0ULL;                                                           \
            n++;                                                                                                     \
        }                                                                                                            \
        /* Just under p's top limb with every lower limb all ones; and 2^(bits(p)-1), the top bit of p. */           \
        F##_zero(&e[n]);                                                                                             \
        for (int j = 0; j < NL - 1; j++) e[n].l[j] = ~0ULL;                                                          \
        e[n++].l[NL - 1] = F##_P.l[NL - 1] - 1;                                                                      \
        F##_zero(&e[n]);                                                                                             \
        e[n++].l[NL - 1] = 1ULL << (63 - __builtin_clzll(F##_P.l[NL - 1]));                                          \
        /* p - 2^(64i) for i > 0 (a borrow run through the limbs) */                                                 \
        for (int i = 1; i < NL; i++) {                                                                               \
            e[n] = F##_P;                                                                                            \
            for (int j = i; j < NL; j++) {                                                                           \
                if (e[n].l[j]--) break;                                                                              \
            }                                                                                                        \
            n++;                                                                                                     \
        }                                                                                                            \
        return n;                                                                                                    \
    }                                                                                                                \
                                                                                                                     \
    /* Compares mul/sqr with the portable reference on (a, b), also with r aliasing a, b or both. */                \
    static int F##_check_pair(const F##_t *a, const F##_t *b) {                                                      \
        F##_t want, got, x;                                                                                          \
        F##_mul_portable(&want, a, b);                                                                               \
        F##_mul(&got, a, b);                                                                                         \
        CHECK_MSG(F##_eq(&got, &want) && F##_below_p(&got), "%s mul a[0]=%016" PRIx64 " b[0]=%016" PRIx64,           \
                  #F, a->l[0], b->l[0]);                                                                             \
        x = *a; F##_mul(&x, &x, b); CHECK(F##_eq(&x, &want));                                                        \
        x = *b; F##_mul(&x, a, &x); CHECK(F##_eq(&x, &want));                                                        \
        F##_mul_portable(&want, a, a);                                                                               \
        F##_sqr(&got, a);                                                                                            \
        CHECK_MSG(F##_eq(&got, &want) && F##_below_p(&got), "%s sqr a[0]=%016" PRIx64, #F, a->l[0]);                 \
        x = *a; F##_mul(&x, &x, &x); CHECK(F##_eq(&x, &want));                                                       \
        x = *a; F##_sqr(&x, &x); CHECK(F##_eq(&x, &want));                                                           \
        F##_add_portable(&want, a, b);                                                                               \
        F##_add(&got, a, b);                                                                                         \
        CHECK_MSG(F##_eq(&got, &want) && F##_below_p(&got), "%s add a[0]=%016" PRIx64 " b[0]=%016" PRIx64,           \
                  #F, a->l[0], b->l[0]);                                                                             \
        x = *a; F##_add(&x, &x, b); CHECK(F##_eq(&x, &want));                                                        \
        x = *b; F##_add(&x, a, &x); CHECK(F##_eq(&x, &want));                                                        \
        F##_sub_portable(&want, a, b);                                                                               \
        F##_sub(&got, a, b);                                                                                         \
        CHECK_MSG(F##_eq(&got, &want) && F##_below_p(&got), "%s sub a[0]=%016" PRIx64 " b[0]=%016" PRIx64,           \
                  #F, a->l[0], b->l[0]);                                                                             \
        x = *a; F##_sub(&x, &x, b); CHECK(F##_eq(&x, &want));                                                        \
        x = *b; F##_sub(&x, a, &x); CHECK(F##_eq(&x, &want));                                                        \
        F##_add_portable(&want, a, a);                                                                               \
        x = *a; F##_dbl(&x, &x); CHECK(F##_eq(&x, &want));                                                           \
        x = *a; F##_sub(&x, &x, &x); CHECK(F##_is_zero(&x));                                                         \
        return 0;                                                                                                    \
    }                                                                                                                \
                                                                                                                     \
    TEST(F##_asm_vs_portable) {                                                                                      \
        if (!zk_field_asm || zk_kernels_select(ZK_KERNELS_MULX) != 0) return TEST_SKIP;                             \
        F##_t e[N_EDGE_MAX];                                                                                         \
        int ne = F##_edges(e);                                                                                       \
        CHECK(ne <= N_EDGE_MAX);                                                                                     \
        for (int i = 0; i < ne; i++) CHECK_MSG(F##_below_p(&e[i]), "%s edge %d not < p", #F, i);                    \
        for (int i = 0; i < ne; i++)                                                                                 \
            for (int j = 0; j < ne; j++)                                                                             \
                if (F##_check_pair(&e[i], &e[j])) return 1;                                                          \
        for (int it = 0; it < N_RANDOM; it++) {                                                                      \
            F##_t a, b;                                                                                              \
            if (it % 3 == 2) F##_rand_pattern(&a), F##_rand_pattern(&b);                                             \
            else F##_rand(&a), F##_rand(&b);                                                                         \
            if (it % 16 == 0) a = e[it / 16 % ne];                                                                   \
            if (F##_check_pair(&a, &b)) return 1;                                                                    \
        }                                                                                                            \
        /* A long dependent chain (x <- x*y, y <- y^2) stays equal to the reference all along. */                   \
        F##_t x = e[ne - 1], y = e[3], xr = x, yr = y;                                                               \
        for (int it = 0; it < 20000; it++) {                                                                         \
            F##_mul(&x, &x, &y); F##_sqr(&y, &y);                                                                    \
            F##_mul_portable(&xr, &xr, &yr); F##_mul_portable(&yr, &yr, &yr);                                        \
            if (F##_is_zero(&y)) y = F##_R2, yr = F##_R2;                                                            \
        }                                                                                                            \
        CHECK(F##_eq(&x, &xr) && F##_eq(&y, &yr) && F##_below_p(&x));                                                \
        return 0;                                                                                                    \
    }

#if defined(ZK_X86_KERNELS) && defined(__x86_64__)
static const bool zk_field_asm = true;
#else
static const bool zk_field_asm = false; /* built without the x86-64 kernels: nothing to compare */
#endif

ASM_TESTS(bn_fq, 4)
ASM_TESTS(bn_fr, 4)
ASM_TESTS(bls_fq, 6)
ASM_TESTS(bls_fr, 4)

/* Fq2's product in one reduction per half (zk/fp2_tmpl.h, the mulx set: FQ_mulw, FQ_redc) against
 * Karatsuba's three Montgomery products: every pair of edge values in each half (p-1, 0, carry
 * patterns ...), random and carry-heavy elements, also with r aliasing a, b or both; every result
 * fully reduced. And p^2 (FQ_PSQ, which c0 adds) against a schoolbook square of p. */
#ifdef ZK_FQ2_WIDE /* zk/fp2_tmpl.h: x86-64 kernels built in, not an AddressSanitizer build */
#define FQ2_WIDE_TEST(FQ, NL)                                                                                        \
    TEST(FQ##2_mul_one_reduction) {                                                                                  \
        if (!zk_field_asm || zk_kernels_select(ZK_KERNELS_MULX) != 0) return TEST_SKIP;                             \
        CHECK(FQ##_wide_on());                                                                                       \
        uint64_t sq[2 * NL] = {0};                                                                                   \
        for (int i = 0; i < NL; i++) {                                                                               \
            unsigned __int128 c = 0;                                                                                 \
            for (int j = 0; j < NL; j++) {                                                                           \
                c += (unsigned __int128)FQ##_P.l[i] * FQ##_P.l[j] + sq[i + j];                                       \
                sq[i + j] = (uint64_t)c;                                                                             \
                c >>= 64;                                                                                            \
            }                                                                                                        \
            sq[i + NL] = (uint64_t)c;                                                                                \
        }                                                                                                            \
        CHECK_MSG(memcmp(sq, FQ##2_PSQ, sizeof sq) == 0, #FQ "2_PSQ is not p^2");                                    \
        FQ##_t e[N_EDGE_MAX];                                                                                        \
        int ne = FQ##_edges(e);                                                                                      \
        long n = 0;                                                                                                  \
        for (int it = 0; it < 4 * ne * ne + 100000; it++) {                                                          \
            FQ##2_t a, b, want, got, x;                                                                              \
            if (it < 4 * ne * ne) { /* edge pairs: one half of each side from the list, the other p-1 or 0 */       \
                int i = it / 4 % ne, j = it / 4 / ne, k = it % 4;                                                    \
                a.c0 = e[i], b.c1 = e[j];                                                                            \
                a.c1 = k & 1 ? e[0] : e[1], b.c0 = k & 2 ? e[0] : e[1]; /* 0 or p-1 */                               \
                if (k == 3) a.c1 = e[j], b.c0 = e[i];                                                                \
            } else if (it % 3 == 0) {                                                                                \
                FQ##_rand_pattern(&a.c0), FQ##_rand_pattern(&a.c1), FQ##_rand_pattern(&b.c0), FQ##_rand_pattern(&b.c1); \
            } else {                                                                                                 \
                FQ##_rand(&a.c0), FQ##_rand(&a.c1), FQ##_rand(&b.c0), FQ##_rand(&b.c1);                              \
            }                                                                                                        \
            FQ##2_mul_karatsuba(&want, &a, &b);                                                                      \
            FQ##2_mul(&got, &a, &b);                                                                                 \
            bool ok = FQ##2_eq(&got, &want) && FQ##_below_p(&got.c0) && FQ##_below_p(&got.c1);                      \
            x = a, FQ##2_mul(&x, &x, &b), ok = ok && FQ##2_eq(&x, &want);                                            \
            x = b, FQ##2_mul(&x, &a, &x), ok = ok && FQ##2_eq(&x, &want);                                            \
            FQ##2_mul_karatsuba(&want, &a, &a);                                                                      \
            x = a, FQ##2_mul(&x, &x, &x), ok = ok && FQ##2_eq(&x, &want);                                            \
            CHECK_MSG(ok, #FQ "2 mul, case %d: a.c0[0]=%016" PRIx64 " b.c1[0]=%016" PRIx64, it, a.c0.l[0], b.c1.l[0]); \
            n++;                                                                                                     \
        }                                                                                                            \
        fprintf(stderr, #FQ "2: %ld products equal to Karatsuba's\n", n);                                            \
        return 0;                                                                                                    \
    }
FQ2_WIDE_TEST(bn_fq, 4)
FQ2_WIDE_TEST(bls_fq, 6)
#endif

/* The vector bucket additions (zk/msm_ifma.c, the ifma kernel set, G1 and G2 of both curves;
 * zk/msm_avx2.c, the avx2 set, G1 and G2 of BN254; each skipped on a CPU without its set) against
 * the affine addition formulas of the scalar flush (zk/msm_tmpl.h) in the scalar kernels:
 * coordinates are edge values (p-1, 1, carry patterns ...) and random field elements (the formulas
 * do not need points on the curve), batch sizes 1..17 (lanes left over in the last vector), 63, 64,
 * 1000 and 1024, buckets in a scattered order; every result must be fully reduced. */
#include "zk/msm_avx2.h"
#include "zk/msm_ifma.h"

/* Coordinates for the flush tests over the base field FQ and FQ2: edge values, carry patterns,
 * random elements, and in FQ2 now and then a zero half. */
#define IFMA_PICK(FQ)                                                                                                \
    static void FQ##_pick(FQ##_t *x, const FQ##_t *e, int ne) {                                                      \
        int pick = (int)(rng() % 3);                                                                                 \
        if (pick == 0) *x = e[rng() % (unsigned)ne];                                                                 \
        else if (pick == 1) FQ##_rand_pattern(x);                                                                    \
        else FQ##_rand(x);                                                                                           \
    }                                                                                                                \
    static void FQ##2_pick(FQ##2_t *x, const FQ##_t *e, int ne) {                                                    \
        FQ##_pick(&x->c0, e, ne);                                                                                    \
        FQ##_pick(&x->c1, e, ne);                                                                                    \
        if (rng() % 8 == 0) FQ##_zero(rng() % 2 ? &x->c0 : &x->c1);                                                  \
    }                                                                                                                \
    static bool FQ##2_below_p(const FQ##2_t *x) { return FQ##_below_p(&x->c0) && FQ##_below_p(&x->c1); }
IFMA_PICK(bn_fq)
IFMA_PICK(bls_fq)

_Static_assert(ZK_AVX2_BATCH_MAX == ZK_IFMA_BATCH_MAX, "one batch size for the flush tests");
#define VEC_FLUSH_TEST(G, F, FQ, SET, SETNAME, FLUSH)                                                                                        \
    static void G##_##SETNAME##_ref_add(G##_aff_t *b, const G##_aff_t *p) {                                                 \
        F##_t d, lam, t, x3;                                                                                         \
        F##_sub(&d, &p->x, &b->x);                                                                                   \
        F##_inv(&d, &d);                                                                                             \
        F##_sub(&t, &p->y, &b->y);                                                                                   \
        F##_mul(&lam, &t, &d);                                                                                       \
        F##_sqr(&x3, &lam);                                                                                          \
        F##_sub(&x3, &x3, &b->x);                                                                                    \
        F##_sub(&x3, &x3, &p->x);                                                                                    \
        F##_sub(&t, &b->x, &x3);                                                                                     \
        F##_mul(&t, &t, &lam);                                                                                       \
        F##_sub(&b->y, &t, &b->y);                                                                                   \
        b->x = x3;                                                                                                   \
    }                                                                                                                \
                                                                                                                     \
    TEST(G##_##SETNAME##_flush_vs_scalar) {                                                                                 \
        if (!(zk_kernels_supported() & (1u << SET))) return TEST_SKIP;                                 \
        enum { NB = 2048 };                                                                                          \
        static G##_aff_t bucket[NB], want[NB], pt[ZK_AVX2_BATCH_MAX];                                                \
        static F##_t den[ZK_AVX2_BATCH_MAX];                                                                         \
        static uint32_t bidx[ZK_AVX2_BATCH_MAX];                                                                     \
        FQ##_t e[N_EDGE_MAX];                                                                                        \
        int ne = FQ##_edges(e);                                                                                      \
        static const unsigned sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 63, 64, 1000, 1024}; \
        for (unsigned si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {                                         \
            unsigned n = sizes[si];                                                                                  \
            for (unsigned i = 0; i < NB; i++) {                                                                      \
                F##_pick(&bucket[i].x, e, ne);                                                                       \
                F##_pick(&bucket[i].y, e, ne);                                                                       \
                want[i] = bucket[i];                                                                                 \
            }                                                                                                        \
            uint32_t step = 2 * (uint32_t)(rng() % 500) + 1, start = (uint32_t)(rng() % NB); /* odd: distinct */   \
            for (unsigned j = 0; j < n; j++) {                                                                       \
                bidx[j] = (start + j * step) % NB;                                                                   \
                do {                                                                                                 \
                    F##_pick(&pt[j].x, e, ne);                                                                       \
                    F##_pick(&pt[j].y, e, ne);                                                                       \
                    F##_sub(&den[j], &pt[j].x, &bucket[bidx[j]].x);                                                  \
                } while (F##_is_zero(&den[j]));                                                                      \
                G##_##SETNAME##_ref_add(&want[bidx[j]], &pt[j]);                                                            \
            }                                                                                                        \
            FLUSH(bucket, bidx, pt, den, n);                                                           \
            for (unsigned i = 0; i < NB; i++) {                                                                      \
                bool same = F##_eq(&bucket[i].x, &want[i].x) && F##_eq(&bucket[i].y, &want[i].y);                    \
                CHECK_MSG(same && F##_below_p(&bucket[i].x) && F##_below_p(&bucket[i].y),                            \
                          #G " " #SETNAME " flush of %u additions: bucket %u differs", n, i);                                 \
                if (!same) return 1;                                                                                 \
            }                                                                                                        \
        }                                                                                                            \
        return 0;                                                                                                    \
    }

VEC_FLUSH_TEST(bn_g1, bn_fq, bn_fq, ZK_KERNELS_IFMA, ifma, zk_ifma_bn_g1_flush)
VEC_FLUSH_TEST(bn_g2, bn_fq2, bn_fq, ZK_KERNELS_IFMA, ifma, zk_ifma_bn_g2_flush)
VEC_FLUSH_TEST(bls_g1, bls_fq, bls_fq, ZK_KERNELS_IFMA, ifma, zk_ifma_bls_g1_flush)
VEC_FLUSH_TEST(bls_g2, bls_fq2, bls_fq, ZK_KERNELS_IFMA, ifma, zk_ifma_bls_g2_flush)
VEC_FLUSH_TEST(bn_g1, bn_fq, bn_fq, ZK_KERNELS_AVX2, avx2, zk_avx2_bn_g1_flush)
VEC_FLUSH_TEST(bn_g2, bn_fq2, bn_fq, ZK_KERNELS_AVX2, avx2, zk_avx2_bn_g2_flush)

/* The vector bucket reduction (zk_ifma_*_reduce, the ifma set) against the scalar running sum, on
 * real points (multiples of the generator): random empty/occupied/side patterns, every bucket the
 * same point (doublings in both running sums), a point and its negative next to each other
 * (cancellation to infinity mid-run), everything empty, sides only; nb = 64 .. 16384. */
#define IFMA_REDUCE_TEST(G)                                                                                          \
    static void G##_small_mul(G##_xyzz_t *r, uint64_t k) {                                                           \
        G##_xyzz_t g;                                                                                                \
        G##_xyzz_from_aff(&g, &G##_gen);                                                                             \
        uint64_t kl[4] = {k, 0, 0, 0};                                                                               \
        G##_xyzz_mul(r, &g, kl, 1);                                                                                  \
    }                                                                                                                \
    TEST(G##_ifma_reduce_vs_scalar) {                                                                                \
        if (!(zk_kernels_supported() & (1u << ZK_KERNELS_IFMA))) return TEST_SKIP;                                 \
        enum { NBMAX = 16384, NPTS = 64 };                                                                           \
        static G##_aff_t bucket[NBMAX], pts[NPTS];                                                                   \
        static G##_xyzz_t side[NBMAX], sides[NPTS];                                                                  \
        static uint8_t state[NBMAX];                                                                                 \
        for (int i = 0; i < NPTS; i++) {                                                                             \
            G##_xyzz_t p;                                                                                            \
            G##_small_mul(&p, 1 + rng() % 1000000);                                                                  \
            G##_xyzz_to_aff(&pts[i], &p);                                                                            \
            G##_small_mul(&sides[i], 1 + rng() % 1000000); /* ZZ != 1 */                                             \
        }                                                                                                            \
        static const size_t nbs[] = {64, 128, 256, 2048, 16384}; /* 16384: the window c = 15 */                      \
        for (int mode = 0; mode < 6; mode++)                                                                         \
            for (size_t ni = 0; ni < sizeof(nbs) / sizeof(nbs[0]); ni++) {                                           \
                size_t nb = nbs[ni];                                                                                 \
                for (size_t i = 0; i < nb; i++) {                                                                    \
                    unsigned r = (unsigned)(rng() % 8);                                                              \
                    state[i] = 0;                                                                                    \
                    bucket[i] = pts[rng() % NPTS];                                                                   \
                    side[i] = sides[rng() % NPTS];                                                                   \
                    if (mode == 0) state[i] = r < 3 ? 0 : r < 7 ? 1 : 5;    /* mixed */                              \
                    if (mode == 1) state[i] = 1, bucket[i] = pts[0];        /* all the same point */                 \
                    if (mode == 2) {                                        /* P, -P pairs and runs of one point */  \
                        state[i] = 1;                                                                                \
                        bucket[i] = pts[(i / 4) % 3];                                                                \
                        if (i % 2) G##_aff_neg(&bucket[i], &bucket[i]);                                              \
                    }                                                                                                \
                    if (mode == 3) state[i] = 0;                            /* all empty */                          \
                    if (mode == 4) state[i] = r < 4 ? 4 : 0;                /* sides only */                         \
                    if (mode == 5) state[i] = i % 64 == 7 ? 1 : 0;          /* sparse: long empty runs */            \
                }                                                                                                    \
                G##_xyzz_t want, sum, got;                                                                           \
                G##_xyzz_set_inf(&want), G##_xyzz_set_inf(&sum);                                                     \
                for (size_t i = nb; i-- > 0;) {                                                                      \
                    if (state[i] & 1) G##_xyzz_add_aff(&sum, &sum, &bucket[i]);                                      \
                    if (state[i] & 4) G##_xyzz_add(&sum, &sum, &side[i]);                                            \
                    G##_xyzz_add(&want, &want, &sum);                                                                \
                }                                                                                                    \
                zk_ifma_##G##_reduce(&got, bucket, side, state, nb);                                                 \
                CHECK_MSG(G##_xyzz_eq(&got, &want), #G " ifma reduce, mode %d, %zu buckets", mode, nb);              \
            }                                                                                                        \
        return 0;                                                                                                    \
    }

IFMA_REDUCE_TEST(bn_g1)
IFMA_REDUCE_TEST(bn_g2)
IFMA_REDUCE_TEST(bls_g1)
IFMA_REDUCE_TEST(bls_g2)

/* The lazy two-product reduction of the Fq2 flush (zk/ifma52_tmpl.h: mul2_lz, (a·b + c·d)·R^-1
 * in one reduction) at the ends of its bounds: a, c in [0, 2p) (edge values, carry patterns and
 * random elements, each also plus p), b, d in [0, 2p] (2p itself included), eight lanes at once;
 * the result must be below 3p and equal the scalar kernels' a·b + c·d mod p. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "zk/ifma52.h"

#define IFMA_MUL2_TEST(FQ, V, NW, INVC)                                                                                  \
    /* r = x + y (NW words, no carry out: both below 2p < 2^(64 NW - 1)) */                                          \
    static void FQ##_add_raw(FQ##_t *r, const FQ##_t *x, const FQ##_t *y) {                                          \
        unsigned __int128 c = 0;                                                                                     \
        for (int i = 0; i < (NW); i++) {                                                                             \
            c += (unsigned __int128)x->l[i] + y->l[i];                                                               \
            r->l[i] = (uint64_t)c;                                                                                   \
            c >>= 64;                                                                                                \
        }                                                                                                            \
    }                                                                                                                \
    /* x mod p for x < 4p, and how many p it took off */                                                             \
    static int FQ##_mod_raw(FQ##_t *x) {                                                                             \
        int k = 0;                                                                                                   \
        while (!FQ##_below_p(x)) {                                                                                   \
            unsigned __int128 b = 0;                                                                                 \
            for (int i = 0; i < (NW); i++) {                                                                         \
                unsigned __int128 d = (unsigned __int128)x->l[i] - FQ##_P.l[i] - b;                                  \
                x->l[i] = (uint64_t)d;                                                                               \
                b = (d >> 64) & 1;                                                                                   \
            }                                                                                                        \
            k++;                                                                                                     \
        }                                                                                                            \
        return k;                                                                                                    \
    }                                                                                                                \
    /* below 2p: a pick, plus p half of the time; with top, 2p now and then too */                                  \
    static void FQ##_lazy(FQ##_t *x, const FQ##_t *e, int ne, bool top) {                                            \
        FQ##_pick(x, e, ne);                                                                                         \
        if (top && rng() % 16 == 0) *x = FQ##_P, FQ##_add_raw(x, x, &FQ##_P);                                       \
        else if (rng() % 2) FQ##_add_raw(x, x, &FQ##_P);                                                             \
    }                                                                                                                \
    static V##_t FQ##_vec(const FQ##_t x[8], const V##_mod_t *m) IFMA_TARGET;                                        \
    static V##_t FQ##_vec(const FQ##_t x[8], const V##_mod_t *m) {                                                   \
        __m512i q[NW];                                                                                               \
        for (int k = 0; k < (NW); k++) {                                                                             \
            uint64_t w[8];                                                                                           \
            for (int l = 0; l < 8; l++) w[l] = x[l].l[k];                                                            \
            q[k] = _mm512_loadu_si512(w);                                                                            \
        }                                                                                                            \
        V##_t r;                                                                                                     \
        V##_from64(&r, q, 0, m);                                                                                     \
        return r;                                                                                                    \
    }                                                                                                                \
    static int FQ##_mul2_check(void) IFMA_TARGET;                                                                    \
    static int FQ##_mul2_check(void) {                                                                               \
        V##_mod_t m;                                                                                                 \
        V##_mod_init(&m, FQ##_P.l, INVC, FQ##_ONE.l);                                                            \
        FQ##_t e[N_EDGE_MAX];                                                                                        \
        int ne = FQ##_edges(e);                                                                                      \
        for (int round = 0; round < 4000; round++) {                                                                 \
            FQ##_t a[8], b[8], c[8], d[8];                                                                           \
            for (int l = 0; l < 8; l++)                                                                              \
                FQ##_lazy(&a[l], e, ne, false), FQ##_lazy(&b[l], e, ne, true), FQ##_lazy(&c[l], e, ne, false),       \
                    FQ##_lazy(&d[l], e, ne, true);                                                                   \
            V##_t va = FQ##_vec(a, &m), vb = FQ##_vec(b, &m), vc = FQ##_vec(c, &m), vd = FQ##_vec(d, &m), bs, ds, r; \
            V##_shl(&bs, &vb, &m);                                                                                   \
            V##_shl(&ds, &vd, &m);                                                                                   \
            V##_mul2_lz(&r, &va, &bs, &vc, &ds, &m);                                                                 \
            __m512i q[NW];                                                                                           \
            V##_to64(q, &r);                                                                                         \
            for (int l = 0; l < 8; l++) {                                                                            \
                FQ##_t got, want, t;                                                                                 \
                for (int k = 0; k < (NW); k++) got.l[k] = (uint64_t)q[k][l];                                         \
                FQ##_mod_raw(&a[l]), FQ##_mod_raw(&b[l]), FQ##_mod_raw(&c[l]), FQ##_mod_raw(&d[l]);                  \
                FQ##_mul(&want, &a[l], &b[l]);                                                                       \
                FQ##_mul(&t, &c[l], &d[l]);                                                                          \
                FQ##_add(&want, &want, &t);                                                                          \
                int k = FQ##_mod_raw(&got);                                                                          \
                CHECK_MSG(k <= 2 && FQ##_eq(&got, &want), #FQ " mul2_lz, round %d lane %d: %d p over", round, l, k);   \
                if (k > 2 || !FQ##_eq(&got, &want)) return 1;                                                        \
            }                                                                                                        \
        }                                                                                                            \
        return 0;                                                                                                    \
    }                                                                                                                \
    TEST(FQ##_ifma_mul2_lz) {                                                                                        \
        if (!(zk_kernels_supported() & (1u << ZK_KERNELS_IFMA))) return TEST_SKIP;                                 \
        return FQ##_mul2_check();                                                                                    \
    }

#define IFMA_TARGET __attribute__((target("avx512f,avx512ifma")))
IFMA_MUL2_TEST(bn_fq, v52, 4, BN_FQ_INV)
IFMA_MUL2_TEST(bls_fq, v52x, 6, BLS_FQ_INV)

/* The AVX2 arithmetic of the avx2 set's flush (zk/avx2_29.h, 29-bit limbs, four lanes) against the
 * scalar kernels at the ends of its bounds: the product of a, b in [0, 2p] (2p itself included),
 * with b shifted as an integer or given as 2^5·b mod p, must be below 2p and equal a·b; a - b + p for
 * a < 3p, b < p must equal a - b and not exceed a + p; the reductions from [0, 2p) and [0, 4p) must
 * leave the value mod p, below p. 4000 rounds of four lanes, each operand an edge value, a carry
 * pattern or random, plus p or 2p at random. */
#include "zk/avx2_29.h"
#define AVX2_TARGET __attribute__((target("avx2")))
static v29_t bn_v29(const bn_fq_t x[4], int shl, const v29_mod_t *m) AVX2_TARGET;
static v29_t bn_v29(const bn_fq_t x[4], int shl, const v29_mod_t *m) {
    const uint64_t *e[4] = {x[0].l, x[1].l, x[2].l, x[3].l};
    v29_t r;
    v29_load4(&r, e, shl, m);
    return r;
}
static void bn_v29_out(bn_fq_t x[4], const v29_t *a) AVX2_TARGET;
static void bn_v29_out(bn_fq_t x[4], const v29_t *a) {
    uint64_t *e[4] = {x[0].l, x[1].l, x[2].l, x[3].l};
    v29_store4(e, 4, a);
}
/* Every lane of got equals want mod p and holds at most max_over multiples of p above it (0: fully
 * reduced); 0, else 1 with one line naming the operation, the round and the lane. */
static int bn_v29_lanes(const bn_fq_t got[4], const bn_fq_t want[4], int max_over, const char *what, int round) {
    for (int l = 0; l < 4; l++) {
        bn_fq_t g = got[l];
        int k = bn_fq_mod_raw(&g);
        CHECK_MSG(k <= max_over && bn_fq_eq(&g, &want[l]), "v29 %s, round %d lane %d: %d p over", what, round, l, k);
        if (k > max_over || !bn_fq_eq(&g, &want[l])) return 1;
    }
    return 0;
}
static int bn_v29_check(void) AVX2_TARGET;
static int bn_v29_check(void) {
    v29_mod_t m;
    v29_mod_init(&m, bn_fq_P.l, BN_FQ_INV);
    bn_fq_t e[N_EDGE_MAX], k32 = bn_fq_ONE;
    int ne = bn_fq_edges(e);
    for (int i = 0; i < 5; i++) bn_fq_dbl(&k32, &k32); /* 2^5 */
    for (int round = 0; round < 4000; round++) {
        bn_fq_t a[4], b[4], b32[4], d[4], r4[4], got[4];
        for (int l = 0; l < 4; l++) {
            bn_fq_lazy(&a[l], e, ne, true), bn_fq_lazy(&b[l], e, ne, true);
            bn_fq_pick(&b32[l], e, ne);
            bn_fq_pick(&d[l], e, ne);
            bn_fq_pick(&r4[l], e, ne);
            int k = (int)(rng() % 4); /* below 4p */
            for (int i = 0; i < k; i++) bn_fq_add_raw(&r4[l], &r4[l], &bn_fq_P);
        }
        v29_t va = bn_v29(a, 0, &m), vbs = bn_v29(b, 1, &m), r;
        v29_mul_lz(&r, &va, &vbs, &m);
        bn_v29_out(got, &r);
        bn_fq_t want[4], b32m[4];
        for (int l = 0; l < 4; l++) {
            bn_fq_t am = a[l], bm = b[l];
            bn_fq_mod_raw(&am), bn_fq_mod_raw(&bm);
            bn_fq_mul(&want[l], &am, &bm);
            bn_fq_mul(&b32m[l], &b32[l], &k32); /* 2^5·b mod p: the operand form as a field element */
        }
        if (bn_v29_lanes(got, want, 1, "product", round)) return 1;
        v29_t vb32 = bn_v29(b32m, 0, &m);
        v29_mul_lz(&r, &va, &vb32, &m);
        bn_v29_out(got, &r);
        for (int l = 0; l < 4; l++) {
            bn_fq_t am = a[l];
            bn_fq_mod_raw(&am);
            bn_fq_mul(&want[l], &am, &b32[l]);
        }
        if (bn_v29_lanes(got, want, 1, "product by 2^5 b", round)) return 1;
        /* a - d + p for a below 3p (the flush's largest first operand) */
        bn_fq_t a3[4];
        for (int l = 0; l < 4; l++) {
            bn_fq_pick(&a3[l], e, ne);
            int k = (int)(rng() % 3);
            for (int i = 0; i < k; i++) bn_fq_add_raw(&a3[l], &a3[l], &bn_fq_P);
        }
        v29_t vc = bn_v29(a3, 0, &m), vd = bn_v29(d, 0, &m);
        v29_subz(&r, &vc, &vd, &m);
        bn_v29_out(got, &r);
        for (int l = 0; l < 4; l++) {
            bn_fq_t am = a3[l], bound = a3[l];
            bn_fq_mod_raw(&am);
            bn_fq_sub(&want[l], &am, &d[l]);
            bn_fq_add_raw(&bound, &bound, &bn_fq_P);
            bn_fq_t g = got[l];
            bn_fq_mod_raw(&g);
            bool below = true; /* got <= a + p */
            for (int i = 3; i >= 0; i--)
                if (got[l].l[i] != bound.l[i]) {
                    below = got[l].l[i] < bound.l[i];
                    break;
                }
            CHECK_MSG(below && bn_fq_eq(&g, &want[l]), "v29 a - b + p, round %d lane %d", round, l);
            if (!below || !bn_fq_eq(&g, &want[l])) return 1;
        }
        v29_t v4 = bn_v29(r4, 0, &m);
        v29_red2(&v4, &m);
        bn_v29_out(got, &v4);
        for (int l = 0; l < 4; l++) want[l] = r4[l], bn_fq_mod_raw(&want[l]);
        if (bn_v29_lanes(got, want, 0, "reduction from 4p", round)) return 1;
        for (int l = 0; l < 4; l++) bn_fq_lazy(&r4[l], e, ne, false); /* [0, 2p) */
        v29_t v2 = bn_v29(r4, 0, &m);
        v29_red1(&v2, &m);
        bn_v29_out(got, &v2);
        for (int l = 0; l < 4; l++) want[l] = r4[l], bn_fq_mod_raw(&want[l]);
        if (bn_v29_lanes(got, want, 0, "reduction from 2p", round)) return 1;
    }
    return 0;
}
TEST(bn_fq_avx2_arith) {
    if (!(zk_kernels_supported() & (1u << ZK_KERNELS_AVX2))) return TEST_SKIP;
    return bn_v29_check();
}
#endif
