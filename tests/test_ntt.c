/* NTT against the naive DFT for both curves, and the odd-coset transform against direct
 * evaluation of the interpolating polynomial at w_2n^(2i+1). */
#include <stdlib.h>

#include "kernel_sets.h"
#include "test.h"
#include "test_random.h"
#include "zk/groth16.h"
#include "zk/ntt.h"
#include "zk/ntt_ifma.h"

static size_t bitrev(size_t i, unsigned logn) {
    size_t r = 0;
    for (unsigned b = 0; b < logn; b++) r |= ((i >> b) & 1) << (logn - 1 - b);
    return r;
}

#define NTT_TEST(PFX, CURVE)                                                                                         \
    TEST(PFX##_ntt_vs_dft) {                                                                                         \
        for (unsigned logn = 1; logn <= 7; logn++) {                                                                 \
            size_t n = (size_t)1 << logn;                                                                            \
            PFX##_fr_t *a = calloc(n, sizeof(*a)), *x = calloc(n, sizeof(*x)), *tw = calloc(n, sizeof(*tw));         \
            PFX##_fr_t w;                                                                                            \
            zk_fr_root_of_unity(&CURVE, logn, (uint8_t *)w.l);                                                       \
            PFX##_fr_one(&tw[0]);                                                                                    \
            for (size_t k = 1; k < n; k++) PFX##_fr_mul(&tw[k], &tw[k - 1], &w);                                     \
            for (size_t i = 0; i < n; i++) {                                                                         \
                rnd(&a[i], 32);                                                                                      \
                a[i].l[3] >>= 4;                                                                                     \
            }                                                                                                        \
            memcpy(x, a, n * sizeof(*a));                                                                            \
            PFX##_ntt_dif(x, n, tw, 2); /* bit-reversed out */                                                      \
            for (size_t j = 0; j < n; j++) {                                                                         \
                PFX##_fr_t s, t;                                                                                     \
                PFX##_fr_zero(&s);                                                                                   \
                for (size_t k = 0; k < n; k++) {                                                                     \
                    PFX##_fr_mul(&t, &a[k], &tw[(j * k) % n]);                                                       \
                    PFX##_fr_add(&s, &s, &t);                                                                        \
                }                                                                                                    \
                CHECK_MSG(PFX##_fr_eq(&s, &x[bitrev(j, logn)]), "dif n=%zu j=%zu", n, j);                            \
            }                                                                                                        \
            /* dit(bit-reversed DFT) with the same twiddles == DFT of the DFT == n * a[-k] */                        \
            PFX##_ntt_dit(x, n, tw, 1);                                                                              \
            PFX##_fr_t nn;                                                                                           \
            PFX##_fr_set_u64(&nn, n);                                                                                \
            for (size_t k = 0; k < n; k++) {                                                                         \
                PFX##_fr_t t;                                                                                        \
                PFX##_fr_mul(&t, &a[(n - k) % n], &nn);                                                              \
                CHECK_MSG(PFX##_fr_eq(&t, &x[k]), "dit n=%zu k=%zu", n, k);                                          \
            }                                                                                                        \
            /* odd coset: values X(w^i) -> X(w_2n^(2i+1)) where X interpolates them */                              \
            PFX##_fr_t *ev = calloc(n, sizeof(*ev)), w2, pt;                                                         \
            for (size_t i = 0; i < n; i++) { /* evaluations of the polynomial with coefficients a */                \
                PFX##_fr_t s, pw, t;                                                                                 \
                PFX##_fr_zero(&s);                                                                                   \
                PFX##_fr_one(&pw);                                                                                   \
                for (size_t k = 0; k < n; k++) {                                                                     \
                    PFX##_fr_mul(&t, &a[k], &pw);                                                                    \
                    PFX##_fr_add(&s, &s, &t);                                                                        \
                    PFX##_fr_mul(&pw, &pw, &tw[i]);                                                                  \
                }                                                                                                    \
                ev[i] = s;                                                                                           \
            }                                                                                                        \
            CHECK(zk_fr_to_odd_coset(&CURVE, ev, logn, 2) == 0);                                                     \
            zk_fr_root_of_unity(&CURVE, logn + 1, (uint8_t *)w2.l);                                                  \
            pt = w2;                                                                                                 \
            for (size_t i = 0; i < n; i++) {                                                                         \
                PFX##_fr_t s, pw, t;                                                                                 \
                PFX##_fr_zero(&s);                                                                                   \
                PFX##_fr_one(&pw);                                                                                   \
                for (size_t k = 0; k < n; k++) {                                                                     \
                    PFX##_fr_mul(&t, &a[k], &pw);                                                                    \
                    PFX##_fr_add(&s, &s, &t);                                                                        \
                    PFX##_fr_mul(&pw, &pw, &pt);                                                                     \
                }                                                                                                    \
                CHECK_MSG(PFX##_fr_eq(&s, &ev[i]), "odd coset n=%zu i=%zu", n, i);                                   \
                PFX##_fr_mul(&pt, &pt, &w2);                                                                         \
                PFX##_fr_mul(&pt, &pt, &w2);                                                                         \
            }                                                                                                        \
            free(ev);                                                                                                \
            free(a);                                                                                                 \
            free(x);                                                                                                 \
            free(tw);                                                                                                \
        }                                                                                                            \
        return 0;                                                                                                    \
    }

NTT_TEST(bn, zk_curve_bn128)
NTT_TEST(bls, zk_curve_bls12381)

/* The odd coset at sizes with many scale blocks and chains (zk/ntt_tmpl.h: to_odd_coset; with the
 * ifma set from 2^11 on in lanes order, its chains up to 2^15 taking steps of up to 5 trailing ones),
 * 2^10 .. 2^15 on 1, 2 and 3 threads with every kernel set the CPU has, against the same three steps
 * written plainly: the inverse transform, coefficient k times n^-1·w_2n^k (a power for each k), the
 * forward transform. */
#define ODD_COSET_TEST(PFX, CURVE)                                                                                   \
    TEST(PFX##_odd_coset_large) {                                                                                    \
        enum zk_kernel_set was = zk_kernels_current();                                                              \
        for (unsigned logn = 10; logn <= 15; logn++) {                                                               \
            size_t n = (size_t)1 << logn;                                                                            \
            PFX##_fr_t *a = calloc(n, 32), *x = calloc(n, 32), *tw = calloc(n / 2, 32), *itw = calloc(n / 2, 32);    \
            PFX##_fr_t w, iw, inc, ninv;                                                                             \
            zk_fr_root_of_unity(&CURVE, logn, (uint8_t *)w.l);                                                       \
            zk_fr_root_of_unity(&CURVE, logn + 1, (uint8_t *)inc.l);                                                 \
            PFX##_fr_inv(&iw, &w);                                                                                   \
            PFX##_fr_one(&tw[0]);                                                                                    \
            PFX##_fr_one(&itw[0]);                                                                                   \
            for (size_t k = 1; k < n / 2; k++) {                                                                     \
                PFX##_fr_mul(&tw[k], &tw[k - 1], &w);                                                                \
                PFX##_fr_mul(&itw[k], &itw[k - 1], &iw);                                                             \
            }                                                                                                        \
            PFX##_fr_set_u64(&ninv, n);                                                                              \
            PFX##_fr_inv(&ninv, &ninv);                                                                              \
            for (size_t i = 0; i < n; i++) {                                                                         \
                rnd(&a[i], 32);                                                                                      \
                a[i].l[3] >>= 4;                                                                                     \
            }                                                                                                        \
            memcpy(x, a, n * 32);                                                                                    \
            PFX##_ntt_dif(x, n, itw, 1); /* coefficient k (times n) at position bitrev(k) */                         \
            for (size_t k = 0; k < n; k++) {                                                                         \
                size_t p = bitrev(k, logn);                                                                          \
                PFX##_fr_t f;                                                                                        \
                uint64_t e[1] = {k};                                                                                 \
                PFX##_fr_pow(&f, &inc, e, 1);                                                                        \
                PFX##_fr_mul(&f, &f, &ninv);                                                                         \
                PFX##_fr_mul(&x[p], &x[p], &f);                                                                      \
            }                                                                                                        \
            PFX##_ntt_dit(x, n, tw, 1);                                                                              \
            for (int set = 0; set < ZK_KERNELS_COUNT; set++) {                                                       \
                if (!(zk_kernels_supported() & (1u << set))) continue;                                               \
                CHECK(zk_kernels_select((enum zk_kernel_set)set) == 0);                                              \
                for (int threads = 1; threads <= 3; threads++) {                                                     \
                    PFX##_fr_t *y = calloc(n, 32);                                                                   \
                    memcpy(y, a, n * 32);                                                                            \
                    CHECK(zk_fr_to_odd_coset(&CURVE, y, logn, threads) == 0);                                        \
                    size_t bad = n;                                                                                  \
                    for (size_t i = 0; i < n && bad == n; i++)                                                       \
                        if (!PFX##_fr_eq(&x[i], &y[i]) || PFX##_fr_geq_p(y[i].l)) bad = i;                           \
                    free(y);                                                                                         \
                    CHECK_MSG(bad == n, "odd coset n=2^%u, kernels %s, %d threads: element %zu differs", logn,       \
                              zk_kernels_set_name((enum zk_kernel_set)set), threads, bad);                              \
                }                                                                                                    \
            }                                                                                                        \
            zk_kernels_select(was);                                                                                  \
            free(a);                                                                                                 \
            free(x);                                                                                                 \
            free(tw);                                                                                                \
            free(itw);                                                                                               \
        }                                                                                                            \
        return 0;                                                                                                    \
    }
ODD_COSET_TEST(bn, zk_curve_bn128)
ODD_COSET_TEST(bls, zk_curve_bls12381)

TEST(large_ntt_roundtrip) {
    /* 2^14, threaded: dif with w, scale, dit with w^-1 gives back the input */
    unsigned logn = 14;
    size_t n = (size_t)1 << logn;
    bn_fr_t *a = calloc(n, 32), *x = calloc(n, 32), *tw = calloc(n / 2, 32), *itw = calloc(n / 2, 32), w, iw, ninv;
    zk_fr_root_of_unity(&zk_curve_bn128, logn, (uint8_t *)w.l);
    bn_fr_inv(&iw, &w);
    bn_fr_one(&tw[0]);
    bn_fr_one(&itw[0]);
    for (size_t k = 1; k < n / 2; k++) {
        bn_fr_mul(&tw[k], &tw[k - 1], &w);
        bn_fr_mul(&itw[k], &itw[k - 1], &iw);
    }
    for (size_t i = 0; i < n; i++) {
        rnd(&a[i], 32);
        a[i].l[3] >>= 4;
    }
    memcpy(x, a, n * 32);
    bn_ntt_dif(x, n, tw, 2);
    bn_ntt_dit(x, n, itw, 2);
    bn_fr_set_u64(&ninv, n);
    bn_fr_inv(&ninv, &ninv);
    for (size_t i = 0; i < n; i++) {
        bn_fr_mul(&x[i], &x[i], &ninv);
        CHECK(bn_fr_eq(&x[i], &a[i]));
    }
    free(a);
    free(x);
    free(tw);
    free(itw);
    return 0;
}

/* The ifma NTT stages (zk/ntt_ifma.c) against the scalar ones, switching kernel sets in one run:
 * sizes 2^6 .. 2^15 (one block, blocks per thread, the threaded top stages), 1, 2 and 3 threads (3:
 * shares rounded to whole vectors), inputs random with r-1, 0 and 1 mixed in; DIF and DIT. */
TEST(bn_ntt_ifma_vs_scalar) {
    if (!(zk_kernels_supported() & (1u << ZK_KERNELS_IFMA))) return TEST_SKIP;
    enum zk_kernel_set was = zk_kernels_current();
    bn_fr_t rm1;
    bn_fr_zero(&rm1);
    bn_fr_sub(&rm1, &rm1, &bn_fr_ONE);
    int bad = 0;
    for (unsigned logn = 6; logn <= 15 && !bad; logn++) {
        size_t n = (size_t)1 << logn;
        bn_fr_t *a = calloc(n, 32), *x = calloc(n, 32), *y = calloc(n, 32), *tw = calloc(n / 2 + 1, 32), w;
        zk_fr_root_of_unity(&zk_curve_bn128, logn, (uint8_t *)w.l);
        bn_fr_one(&tw[0]);
        for (size_t k = 1; k <= n / 2; k++) bn_fr_mul(&tw[k], &tw[k - 1], &w);
        for (size_t i = 0; i < n; i++) {
            rnd(&a[i], 32);
            a[i].l[3] >>= 4;
            if (i % 17 == 3) a[i] = rm1;
            if (i % 23 == 5) bn_fr_zero(&a[i]);
            if (i % 29 == 7) a[i] = bn_fr_ONE;
        }
        for (int threads = 1; threads <= 3; threads++)
            for (int dit = 0; dit < 2; dit++) {
                memcpy(x, a, n * 32);
                memcpy(y, a, n * 32);
                CHECK(zk_kernels_select(ZK_KERNELS_IFMA) == 0);
                if (dit) bn_ntt_dit(x, n, tw, threads);
                else bn_ntt_dif(x, n, tw, threads);
                CHECK(zk_kernels_select(ZK_KERNELS_MULX) == 0);
                if (dit) bn_ntt_dit(y, n, tw, threads);
                else bn_ntt_dif(y, n, tw, threads);
                for (size_t i = 0; i < n && !bad; i++)
                    if (!bn_fr_eq(&x[i], &y[i]) || bn_fr_geq_p(x[i].l)) {
                        CHECK_MSG(0, "%s n=2^%u threads=%d: element %zu differs", dit ? "dit" : "dif", logn, threads, i);
                        bad = 1;
                    }
            }
        free(a);
        free(x);
        free(y);
        free(tw);
    }
    zk_kernels_select(was);
    return bad;
}

/* The ifma elementwise steps of the prover's H (zk/ntt_ifma.h: a·b, and the standard form of a - b,
 * eight to a vector in lanes order) against the scalar field operations, for both moduli, on values
 * that include 0, 1 and p - 1. */
#define IFMA_POINTWISE_TEST(PFX, MOD)                                                                                 \
    TEST(PFX##_ifma_pointwise_vs_scalar) {                                                                           \
        if (!(zk_kernels_supported() & (1u << ZK_KERNELS_IFMA))) return TEST_SKIP;                                 \
        enum { N = 1024 };                                                                                           \
        static PFX##_fr_t a[N], b[N], x[N], y[N];                                                                    \
        PFX##_fr_t pm1;                                                                                              \
        PFX##_fr_zero(&pm1);                                                                                         \
        PFX##_fr_sub(&pm1, &pm1, &PFX##_fr_ONE);                                                                     \
        for (size_t i = 0; i < N; i++) {                                                                             \
            rnd(&a[i], 32), rnd(&b[i], 32);                                                                          \
            a[i].l[3] >>= 4, b[i].l[3] >>= 4;                                                                        \
            if (i % 7 == 1) a[i] = pm1;                                                                              \
            if (i % 11 == 2) b[i] = pm1;                                                                             \
            if (i % 13 == 3) PFX##_fr_zero(&b[i]);                                                                   \
            if (i % 17 == 4) a[i] = PFX##_fr_ONE;                                                                    \
            if (i % 19 == 5) a[i] = b[i];                                                                            \
        }                                                                                                            \
        for (int op = 0; op < 2; op++) {                                                                             \
            memcpy(x, a, sizeof a);                                                                                  \
            memcpy(y, b, sizeof b);                                                                                  \
            zk_ifma_fr_to_lanes(x, N);                                                                               \
            zk_ifma_fr_to_lanes(y, N);                                                                               \
            if (op == 0) zk_ifma_fr_mul_lanes(&MOD, x, y, 0, N / 16), zk_ifma_fr_mul_lanes(&MOD, x, y, N / 16, N / 8); \
            else zk_ifma_fr_sub_std_lanes(&MOD, x, y, 0, N / 8);                                                    \
            zk_ifma_fr_from_lanes(x, N);                                                                             \
            for (size_t i = 0; i < N; i++) {                                                                         \
                PFX##_fr_t w;                                                                                        \
                if (op == 0) {                                                                                       \
                    PFX##_fr_mul(&w, &a[i], &b[i]);                                                                  \
                } else {                                                                                             \
                    PFX##_fr_sub(&w, &a[i], &b[i]);                                                                  \
                    PFX##_fr_from_mont(&w, &w);                                                                      \
                }                                                                                                    \
                CHECK_MSG(PFX##_fr_eq(&w, &x[i]), #PFX " %s: element %zu differs", op ? "a - b" : "a·b", i);        \
            }                                                                                                        \
        }                                                                                                            \
        return 0;                                                                                                    \
    }
IFMA_POINTWISE_TEST(bn, zk_ifma_bn_fr)
IFMA_POINTWISE_TEST(bls, zk_ifma_bls_fr)
