/* The CUDA backend against the CPU code on fresh random inputs (exit 77 without a GPU):
 * field ops, G1/G2 XYZZ ops, MSM G1/G2 at 2^10..2^20 with zero and one scalars and infinity
 * points, NTT/iNTT/coset 2^10..2^22, and every fixture proved on the GPU (raw points equal to the
 * CPU core's, finalised proof verified), partitions in flight on two lanes (three circuits, two
 * curves), plus a 2^20-variable bn128 core against the CPU core.
 * The bench_* cases time the kernels and print "TIME|what|value|unit" lines (tests/gpu/device-check.sh). */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "tests/test.h"
#include "tests/backend_fixture.h"
#include "gpud/cuda/devplan.h"
#include "gpud/cuda/zkcuda_check.h"
#include "zk/curve.h"
#include "zk/groth16.h"
#include "zk/msm.h"
#include "zk/ntt.h"
#include "zk/verify.h"
#include "zk/wtns.h"
#include "zk/zkey.h"

static void *g_ctx;
static zk_err_t g_err;

/* Built as test_cuda_emu (ZKCUDA_EMU) the same checks run against the host emulation of the backend
 * (gpud/cuda/emu.h) in CI, at sizes the emulation proves in seconds. */
#ifdef ZKCUDA_EMU
#define MAX_LOG 11   /* MSMs, NTTs, the synthetic core */
#define FIELD_N 4096 /* field op elements */
#else
#define MAX_LOG 22
#define FIELD_N 65536
#endif

static void rnd(void *p, size_t n) {
    uint8_t *b = p;
    while (n) {
        ssize_t k = getrandom(b, n > 33554432 ? 33554432 : n, 0);
        if (k > 0) b += k, n -= (size_t)k;
    }
}

static int ctx(void) {
    if (g_ctx) return 0;
    if (zkcuda_device_count() == 0) return TEST_SKIP;
    if (zk_backend_cuda.init(&g_ctx, 0, 16, 0, &g_err) < 0) {
        fprintf(stderr, "init: %s\n", g_err.msg);
        return 1;
    }
    /* the device, its compute capability and the image of this build it runs (device-check.sh) */
    printf("ARCH|%s\n", zkcuda_device_info(g_ctx));
    fflush(stdout);
    return 0;
}
#define NEED_GPU()                                                                                                     \
    do {                                                                                                               \
        int _r = ctx();                                                                                                \
        if (_r) return _r;                                                                                             \
    } while (0)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---- which image of a build runs on which compute capability (no device needed) ---- */
static int arch_case(const char *sass, int ptx, int cc, const char *want) {
    char got[96] = "";
    int ok = zkcuda_arch_image(sass, ptx, cc, got, sizeof got);
    CHECK_MSG(want ? ok && !strcmp(got, want) : !ok, "SASS %s + PTX %d on %d.%d: got %s, want %s", sass, ptx, cc / 10,
              cc % 10, ok ? got : "(refused)", want ? want : "(refused)");
    return 0;
}

TEST(arch_images) {
    const char *all = "80,86,89,90";
    CHECK(arch_case(all, 90, 80, "sm_80 SASS") == 0); /* A100 */
    CHECK(arch_case(all, 90, 86, "sm_86 SASS") == 0); /* A10G, A40, 3090 */
    CHECK(arch_case(all, 90, 87, "sm_86 SASS") == 0); /* Orin: same major, newer minor */
    CHECK(arch_case(all, 90, 89, "sm_89 SASS") == 0); /* L4, L40S, 4090 */
    CHECK(arch_case(all, 90, 90, "sm_90 SASS") == 0); /* H100, H200 */
    CHECK(arch_case(all, 90, 100, "compute_90 PTX, JIT-compiled by the driver") == 0); /* B200 */
    CHECK(arch_case(all, 90, 120, "compute_90 PTX, JIT-compiled by the driver") == 0);
    CHECK(arch_case(all, 90, 75, NULL) == 0); /* T4: older than every image */
    CHECK(arch_case(all, 90, 70, NULL) == 0);
    CHECK(arch_case("90", 90, 89, NULL) == 0); /* SASS does not run on an older minor, PTX not below its arch */
    CHECK(arch_case("90", 90, 86, NULL) == 0);
    CHECK(arch_case("86", 86, 89, "sm_86 SASS") == 0);
    CHECK(arch_case("86", 86, 90, "compute_86 PTX, JIT-compiled by the driver") == 0);
    return 0;
}

/* random reduced element of a prime field with NL 64-bit limbs */
#define RAND_FP(F, NL, out)                                                                                            \
    do {                                                                                                               \
        for (;;) {                                                                                                     \
            rnd(&(out), sizeof(out));                                                                                  \
            (out).l[NL - 1] &= (2ULL << (63 - __builtin_clzll(F##_P.l[NL - 1]))) - 1;                                  \
            if (!F##_geq_p((out).l)) break;                                                                            \
        }                                                                                                              \
    } while (0)

/* many random reduced elements at once: one getrandom, top bits cut to the modulus' length, one
 * conditional subtraction (the slight bias does not matter here) */
#define RAND_FP_BULK(F, NL, arr, count)                                                                                \
    do {                                                                                                               \
        rnd((arr), (count) * sizeof(*(arr)));                                                                          \
        uint64_t _m = (2ULL << (63 - __builtin_clzll(F##_P.l[NL - 1]))) - 1;                                           \
        for (size_t _i = 0; _i < (count); _i++) {                                                                      \
            (arr)[_i].l[NL - 1] &= _m;                                                                                 \
            F##_reduce_once(&(arr)[_i], (arr)[_i].l);                                                                  \
        }                                                                                                              \
    } while (0)

/* ---- field ops: NAME's ops on n random elements of type T (made of NL-limb elements of F) ---- */
#define REF_OP(P, op, r, x, y)                                                                                         \
    do {                                                                                                               \
        if (op == 0)                                                                                                   \
            P##_add(&r, &x, &y);                                                                                       \
        else if (op == 1)                                                                                              \
            P##_sub(&r, &x, &y);                                                                                       \
        else if (op == 2)                                                                                              \
            P##_mul(&r, &x, &y);                                                                                       \
        else                                                                                                           \
            P##_sqr(&r, &x);                                                                                           \
    } while (0)
#define FIELD_CASE(NAME, F, NL, CURVE, FID, T)                                                                         \
    static int field_##NAME(size_t n) {                                                                                \
        T *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *o = malloc(n * sizeof *o);                          \
        F##_t *fa = (F##_t *)a, *fb = (F##_t *)b;                                                                      \
        size_t k = sizeof(T) / sizeof(F##_t);                                                                          \
        for (size_t i = 0; i < n * k; i++) {                                                                           \
            RAND_FP(F, NL, fa[i]);                                                                                     \
            RAND_FP(F, NL, fb[i]);                                                                                     \
        }                                                                                                              \
        for (int op = 0; op < 4; op++) {                                                                               \
            CHECK_MSG(zkcuda_field_op(g_ctx, &CURVE, FID, op, a, b, o, n, &g_err) == 0, "%s", g_err.msg);              \
            for (size_t i = 0; i < n; i++) {                                                                           \
                T r;                                                                                                   \
                REF_OP(NAME, op, r, a[i], b[i]);                                                                       \
                CHECK_MSG(memcmp(&r, &o[i], sizeof r) == 0, #NAME " op %d element %zu", op, i);                        \
            }                                                                                                          \
        }                                                                                                              \
        free(a);                                                                                                       \
        free(b);                                                                                                       \
        free(o);                                                                                                       \
        return 0;                                                                                                      \
    }
FIELD_CASE(bn_fq, bn_fq, 4, zk_curve_bn128, ZKCUDA_FQ, bn_fq_t)
FIELD_CASE(bn_fr, bn_fr, 4, zk_curve_bn128, ZKCUDA_FR, bn_fr_t)
FIELD_CASE(bls_fq, bls_fq, 6, zk_curve_bls12381, ZKCUDA_FQ, bls_fq_t)
FIELD_CASE(bls_fr, bls_fr, 4, zk_curve_bls12381, ZKCUDA_FR, bls_fr_t)
FIELD_CASE(bn_fq2, bn_fq, 4, zk_curve_bn128, ZKCUDA_FQ2, bn_fq2_t)
FIELD_CASE(bls_fq2, bls_fq, 6, zk_curve_bls12381, ZKCUDA_FQ2, bls_fq2_t)

TEST(field_ops) {
    NEED_GPU();
    size_t n = FIELD_N;
    CHECK(field_bn_fq(n) == 0);
    CHECK(field_bn_fr(n) == 0);
    CHECK(field_bls_fq(n) == 0);
    CHECK(field_bls_fr(n) == 0);
    CHECK(field_bn_fq2(n) == 0);
    CHECK(field_bls_fq2(n) == 0);
    return 0;
}

/* ---- curve ops: XYZZ results must equal the CPU's byte for byte (same formulas) ---- */
#define EC_CASE(G, GEN, CURVE, ISG2)                                                                                   \
    static int ec_##G(size_t n) {                                                                                      \
        G##_xyzz_t *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q), *o = malloc(n * sizeof *o);                 \
        G##_aff_t *qa = malloc(n * sizeof *qa);                                                                        \
        G##_xyzz_t g, step;                                                                                            \
        uint64_t k[4];                                                                                                 \
        G##_xyzz_from_aff(&g, &GEN);                                                                                   \
        rnd(k, 8);                                                                                                     \
        G##_xyzz_mul(&p[0], &g, k, 1);                                                                                 \
        rnd(k, 8);                                                                                                     \
        G##_xyzz_mul(&step, &g, k, 1);                                                                                 \
        for (size_t i = 1; i < n; i++) G##_xyzz_add(&p[i], &p[i - 1], &step);                                          \
        for (size_t i = 0; i < n; i++) {                                                                               \
            q[i] = p[(i * 7 + 3) % n];                                                                                 \
            if (i % 11 == 0) q[i] = p[i];                /* doubling case */                                           \
            if (i % 13 == 0) G##_xyzz_neg(&q[i], &p[i]); /* P - P */                                                   \
            if (i % 17 == 0) G##_xyzz_set_inf(&q[i]);                                                                  \
            if (i % 19 == 0) G##_xyzz_set_inf(&p[i]);                                                                  \
            G##_xyzz_to_aff(&qa[i], &q[i]);                                                                            \
        }                                                                                                              \
        for (int op = 0; op < 3; op++) {                                                                               \
            CHECK_MSG(zkcuda_ec_op(g_ctx, &CURVE, ISG2, op, p, op == 0 ? (void *)qa : (void *)q, o, n, &g_err) == 0,   \
                      "%s", g_err.msg);                                                                                \
            for (size_t i = 0; i < n; i++) {                                                                           \
                G##_xyzz_t r;                                                                                          \
                if (op == 0)                                                                                           \
                    G##_xyzz_add_aff(&r, &p[i], &qa[i]);                                                               \
                else if (op == 1)                                                                                      \
                    G##_xyzz_add(&r, &p[i], &q[i]);                                                                    \
                else                                                                                                   \
                    G##_xyzz_dbl(&r, &p[i]);                                                                           \
                CHECK_MSG(memcmp(&r, &o[i], sizeof r) == 0, #G " op %d point %zu", op, i);                             \
            }                                                                                                          \
        }                                                                                                              \
        free(p);                                                                                                       \
        free(q);                                                                                                       \
        free(o);                                                                                                       \
        free(qa);                                                                                                      \
        return 0;                                                                                                      \
    }
EC_CASE(bn_g1, bn_g1_gen, zk_curve_bn128, 0)
EC_CASE(bn_g2, bn_g2_gen, zk_curve_bn128, 1)
EC_CASE(bls_g1, bls_g1_gen, zk_curve_bls12381, 0)
EC_CASE(bls_g2, bls_g2_gen, zk_curve_bls12381, 1)

TEST(ec_ops) {
    NEED_GPU();
    CHECK(ec_bn_g1(4096) == 0);
    CHECK(ec_bn_g2(4096) == 0);
    CHECK(ec_bls_g1(4096) == 0);
    CHECK(ec_bls_g2(4096) == 0);
    return 0;
}

/* ---- MSM: points P_j = (a + j·b)·G for j < M (every 97th replaced by infinity), tiled to n;
 * scalars a quarter zero, a quarter one, the rest random < r. Expected = (Σ s_i·k_i)·G, computed
 * in Fr; small sizes are also compared with the CPU MSM of zk/. ---- */
#define MSM_CASE(PFX, G, F, GEN, CURVE, ISG2)                                                                          \
    static int msm_##G(size_t n, int window, int time_only, double *ms) { /* window 0: the backend's */                \
        size_t M = n < ((size_t)1 << 16) ? n : ((size_t)1 << 16);                                                      \
        G##_xyzz_t *p = malloc(M * sizeof *p), g, step;                                                                \
        G##_aff_t *pts = malloc(n * sizeof *pts);                                                                      \
        PFX##_fr_t *k = malloc(M * sizeof *k), kb, acc, t;                                                             \
        F##_t *zzz = malloc(M * sizeof *zzz), *tmp = malloc(M * sizeof *tmp);                                          \
        uint8_t *sc = malloc(n * 32);                                                                                  \
        G##_xyzz_from_aff(&g, &GEN);                                                                                   \
        RAND_FP(PFX##_fr, 4, k[0]);                                                                                    \
        RAND_FP(PFX##_fr, 4, kb);                                                                                      \
        {                                                                                                              \
            PFX##_fr_t s;                                                                                              \
            PFX##_fr_from_mont(&s, &k[0]);                                                                             \
            G##_xyzz_mul(&p[0], &g, s.l, 4);                                                                           \
            PFX##_fr_from_mont(&s, &kb);                                                                               \
            G##_xyzz_mul(&step, &g, s.l, 4);                                                                           \
        }                                                                                                              \
        for (size_t j = 1; j < M; j++) {                                                                               \
            G##_xyzz_add(&p[j], &p[j - 1], &step);                                                                     \
            PFX##_fr_add(&k[j], &k[j - 1], &kb);                                                                       \
        }                                                                                                              \
        for (size_t j = 0; j < M; j++) zzz[j] = p[j].zzz;                                                              \
        F##_batch_inv(zzz, tmp, M);                                                                                    \
        for (size_t j = 0; j < M; j++) {                                                                               \
            F##_t iz, izz;                                                                                             \
            F##_mul(&iz, &zzz[j], &p[j].zz);                                                                           \
            F##_sqr(&izz, &iz);                                                                                        \
            F##_mul(&pts[j].x, &p[j].x, &izz);                                                                         \
            F##_mul(&pts[j].y, &p[j].y, &zzz[j]);                                                                      \
            if (j % 97 == 13) {                                                                                        \
                memset(&pts[j], 0, sizeof pts[j]);                                                                     \
                PFX##_fr_zero(&k[j]);                                                                                  \
            }                                                                                                          \
        }                                                                                                              \
        for (size_t i = M; i < n; i++) pts[i] = pts[i % M];                                                            \
        rnd(sc, n * 32);                                                                                               \
        PFX##_fr_zero(&acc);                                                                                           \
        for (size_t i = 0; i < n; i++) {                                                                               \
            PFX##_fr_t s;                                                                                              \
            uint8_t *si = sc + 32 * i;                                                                                 \
            if (si[0] % 4 == 0)                                                                                        \
                memset(si, 0, 32);                                                                                     \
            else if (si[0] % 4 == 1) {                                                                                 \
                memset(si, 0, 32);                                                                                     \
                si[0] = 1;                                                                                             \
            } else {                                                                                                   \
                si[31] &= 0x1f;                                                                                        \
            }                                                                                                          \
            memcpy(s.l, si, 32);                                                                                       \
            PFX##_fr_to_mont(&s, &s);                                                                                  \
            PFX##_fr_mul(&t, &s, &k[i % M]);                                                                           \
            PFX##_fr_add(&acc, &acc, &t);                                                                              \
        }                                                                                                              \
        G##_aff_t got, want;                                                                                           \
        CHECK_MSG(zkcuda_msm(g_ctx, &CURVE, ISG2, pts, sc, n, window, &got, ms, &g_err) == 0, "%s", g_err.msg);    \
        if (!time_only) {                                                                                              \
            G##_xyzz_t e;                                                                                              \
            PFX##_fr_from_mont(&acc, &acc);                                                                            \
            G##_xyzz_mul(&e, &g, acc.l, 4);                                                                            \
            G##_xyzz_to_aff(&want, &e);                                                                                \
            CHECK_MSG(memcmp(&got, &want, sizeof got) == 0, #G " MSM of %zu points", n);                               \
            if (n <= ((size_t)1 << 14)) {                                                                              \
                G##_xyzz_t c;                                                                                          \
                G##_msm(&c, pts, sc, n, 16);                                                                           \
                G##_xyzz_to_aff(&want, &c);                                                                            \
                CHECK_MSG(memcmp(&got, &want, sizeof got) == 0, #G " MSM of %zu points vs zk/ msm", n);                \
            }                                                                                                          \
            /* all-zero scalars and all-infinity points give infinity */                                               \
            if (n == 1024) {                                                                                           \
                memset(sc, 0, n * 32);                                                                                 \
                CHECK(zkcuda_msm(g_ctx, &CURVE, ISG2, pts, sc, n, 0, &got, NULL, &g_err) == 0);                        \
                CHECK(G##_aff_is_inf(&got));                                                                           \
                rnd(sc, n * 32);                                                                                       \
                for (size_t i = 0; i < n; i++) sc[32 * i + 31] &= 0x1f;                                                \
                memset(pts, 0, n * sizeof *pts);                                                                       \
                CHECK(zkcuda_msm(g_ctx, &CURVE, ISG2, pts, sc, n, 0, &got, NULL, &g_err) == 0);                        \
                CHECK(G##_aff_is_inf(&got));                                                                           \
            }                                                                                                          \
        }                                                                                                              \
        free(p);                                                                                                       \
        free(pts);                                                                                                     \
        free(k);                                                                                                       \
        free(zzz);                                                                                                     \
        free(tmp);                                                                                                     \
        free(sc);                                                                                                      \
        return 0;                                                                                                      \
    }
MSM_CASE(bn, bn_g1, bn_fq, bn_g1_gen, zk_curve_bn128, 0)
MSM_CASE(bn, bn_g2, bn_fq2, bn_g2_gen, zk_curve_bn128, 1)
MSM_CASE(bls, bls_g1, bls_fq, bls_g1_gen, zk_curve_bls12381, 0)
MSM_CASE(bls, bls_g2, bls_fq2, bls_g2_gen, zk_curve_bls12381, 1)

TEST(msm) {
    NEED_GPU();
    size_t sizes[] = {1024, 1 << 14, 1 << 17, 1 << 20};
    for (int i = 0; i < 4; i++) {
        size_t n = sizes[i];
        if (n > ((size_t)1 << MAX_LOG)) continue;
        CHECK_MSG(msm_bn_g1(n, 0, 0, NULL) == 0, "n=%zu", n);
        CHECK_MSG(msm_bn_g2(n, 0, 0, NULL) == 0, "n=%zu", n);
        CHECK_MSG(msm_bls_g1(n, 0, 0, NULL) == 0, "n=%zu", n);
        CHECK_MSG(msm_bls_g2(n, 0, 0, NULL) == 0, "n=%zu", n);
    }
    /* odd sizes and tiny windows */
    CHECK(msm_bn_g1(1, 0, 0, NULL) == 0);
    CHECK(msm_bn_g1(777, 0, 0, NULL) == 0);
    CHECK(msm_bls_g2(333, 0, 0, NULL) == 0);
    return 0;
}

/* ---- NTT: forward checked by Horner at random points, inverse by round trip, coset against the
 * CPU's zk_fr_to_odd_coset. ---- */
#define NTT_CASE(PFX, CURVE)                                                                                           \
    static int ntt_##PFX(unsigned logn, int time_only, double *ms_fwd, double *ms_coset) {                             \
        size_t n = (size_t)1 << logn;                                                                                  \
        PFX##_fr_t *a = malloc(n * sizeof *a), *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), w;              \
        RAND_FP_BULK(PFX##_fr, 4, a, n);                                                                               \
        memcpy(x, a, n * sizeof *a);                                                                                   \
        CHECK_MSG(zkcuda_ntt(g_ctx, &CURVE, x, logn, ZKCUDA_NTT_FORWARD, ms_fwd, &g_err) == 0, "%s", g_err.msg);       \
        zk_fr_root_of_unity(&CURVE, logn, (uint8_t *)w.l);                                                             \
        if (!time_only) {                                                                                              \
            for (int it = 0; it < 3; it++) {                                                                           \
                uint64_t j;                                                                                            \
                rnd(&j, 8);                                                                                            \
                j %= n;                                                                                                \
                PFX##_fr_t pt, s, t;                                                                                   \
                PFX##_fr_pow(&pt, &w, &j, 1);                                                                          \
                PFX##_fr_zero(&s);                                                                                     \
                for (size_t k = n; k-- > 0;) {                                                                         \
                    PFX##_fr_mul(&t, &s, &pt);                                                                         \
                    PFX##_fr_add(&s, &t, &a[k]);                                                                       \
                }                                                                                                      \
                CHECK_MSG(PFX##_fr_eq(&s, &x[j]), #PFX " NTT 2^%u at %llu", logn, (unsigned long long)j);              \
            }                                                                                                          \
            memcpy(y, x, n * sizeof *x);                                                                               \
            CHECK_MSG(zkcuda_ntt(g_ctx, &CURVE, y, logn, ZKCUDA_NTT_INVERSE, NULL, &g_err) == 0, "%s", g_err.msg);     \
            CHECK_MSG(memcmp(y, a, n * sizeof *a) == 0, #PFX " iNTT(NTT) 2^%u", logn);                                 \
        }                                                                                                              \
        memcpy(y, x, n * sizeof *x);                                                                                   \
        CHECK_MSG(zkcuda_ntt(g_ctx, &CURVE, y, logn, ZKCUDA_NTT_COSET, ms_coset, &g_err) == 0, "%s", g_err.msg);       \
        if (!time_only) {                                                                                              \
            CHECK(zk_fr_to_odd_coset(&CURVE, x, logn, 16) == 0);                                                       \
            CHECK_MSG(memcmp(x, y, n * sizeof *x) == 0, #PFX " coset 2^%u vs CPU", logn);                              \
        }                                                                                                              \
        free(a);                                                                                                       \
        free(x);                                                                                                       \
        free(y);                                                                                                       \
        return 0;                                                                                                      \
    }
NTT_CASE(bn, zk_curve_bn128)
NTT_CASE(bls, zk_curve_bls12381)

TEST(ntt) {
    NEED_GPU();
    unsigned logs[] = {1, 5, 10, 11, 14, 18, 20, 22};
    for (int i = 0; i < 8; i++) {
        if (logs[i] > MAX_LOG) continue;
        CHECK_MSG(ntt_bn(logs[i], 0, NULL, NULL) == 0, "2^%u", logs[i]);
        CHECK_MSG(ntt_bls(logs[i], 0, NULL, NULL) == 0, "2^%u", logs[i]);
    }
    return 0;
}

/* ---- the NTT in blocks (docs/cuda.md, "NTT in blocks"): P = standard(A·B − C) of the odd-coset
 * evaluations, computed by the blocked path at every block size from one row of columns to the
 * whole domain, equal to the CPU's zk_fr_to_odd_coset and products ---- */
#define NTT_BLOCKED_CASE(PFX, CURVE)                                                                                   \
    static int ntt_blocked_##PFX(unsigned logn) {                                                                      \
        size_t n = (size_t)1 << logn;                                                                                  \
        PFX##_fr_t *v = malloc(3 * n * sizeof *v), *x = malloc(3 * n * sizeof *x), *got = malloc(n * sizeof *got);     \
        RAND_FP_BULK(PFX##_fr, 4, v, 3 * n);                                                                           \
        memcpy(x, v, 3 * n * sizeof *v);                                                                               \
        for (int k = 0; k < 3; k++) CHECK(zk_fr_to_odd_coset(&CURVE, x + k * n, logn, 16) == 0);                       \
        for (size_t i = 0; i < n; i++) {                                                                               \
            PFX##_fr_mul(&x[i], &x[i], &x[n + i]);                                                                     \
            PFX##_fr_sub(&x[i], &x[i], &x[2 * n + i]);                                                                 \
            PFX##_fr_from_mont(&x[i], &x[i]);                                                                          \
        }                                                                                                              \
        for (size_t block = n >> (logn / 2); block <= n; block *= 2) {                                                 \
            memset(got, 0, n * sizeof *got);                                                                           \
            CHECK_MSG(zkcuda_h_blocked(g_ctx, &CURVE, v, v + n, v + 2 * n, got, logn, (uint32_t)block, &g_err) == 0,   \
                      "%s", g_err.msg);                                                                                \
            CHECK_MSG(memcmp(got, x, n * sizeof *x) == 0, #PFX " 2^%u in blocks of %zu differs from the CPU", logn,    \
                      block);                                                                                          \
        }                                                                                                              \
        free(v);                                                                                                       \
        free(x);                                                                                                       \
        free(got);                                                                                                     \
        return 0;                                                                                                      \
    }
NTT_BLOCKED_CASE(bn, zk_curve_bn128)
NTT_BLOCKED_CASE(bls, zk_curve_bls12381)

TEST(ntt_blocked) {
    NEED_GPU();
    unsigned logs[] = {1, 2, 5, 10, 11, 14, 20};
    for (int i = 0; i < 7; i++) {
        if (logs[i] > MAX_LOG) continue;
        CHECK_MSG(ntt_blocked_bn(logs[i]) == 0, "2^%u", logs[i]);
        CHECK_MSG(ntt_blocked_bls(logs[i]) == 0, "2^%u", logs[i]);
    }
    return 0;
}

/* ---- proving: GPU raw points == CPU core's, and the finalised proof verifies ---- */
static int prove_pair(const char *zkp, const char *wtp, int *ret_ok) {
    fixture_t f;
    zk_err_t err;
    CHECK(fixture_load(&f, zkp, wtp) == 0);
    size_t n = f.z.domain_size;
    zk_raw_t gpu;
    const zk_raw_t *cpu = &f.want;
    CHECK_MSG(zk_backend_cuda.load_key(g_ctx, &f.z, &err) == 0, "%s", err.msg);
    for (int rep = 0; rep < 2; rep++) { /* the second run uses the resident key */
        CHECK_MSG(zk_backend_prove(&zk_backend_cuda, g_ctx, &f.z, f.w.values, f.abc, f.abc + 32 * n, f.abc + 64 * n,
                                   &gpu, NULL, &err) == 0,
                  "%s", err.msg);
        CHECK_MSG(memcmp(cpu->a, gpu.a, sizeof cpu->a) == 0, "%s: A differs", wtp);
        CHECK_MSG(memcmp(cpu->b1, gpu.b1, sizeof cpu->b1) == 0, "%s: B1 differs", wtp);
        CHECK_MSG(memcmp(cpu->b2, gpu.b2, sizeof cpu->b2) == 0, "%s: B2 differs", wtp);
        CHECK_MSG(memcmp(cpu->c, gpu.c, sizeof cpu->c) == 0, "%s: C differs", wtp);
        CHECK_MSG(memcmp(cpu->h, gpu.h, sizeof cpu->h) == 0, "%s: H differs", wtp);
    }
    uint8_t r[32], s[32];
    CHECK(zk_random_rs(f.z.curve, r, s) == 0);
    zk_proof_t proof;
    CHECK(zk_finalize(&f.z, &gpu, r, s, &proof) == 0);
    zk_vk_t vk;
    CHECK_MSG(zk_vk_from_zkey(&vk, &f.z, &err) == 0, "%s", err.msg);
    CHECK_MSG(zk_verify_proof(&vk, &proof, f.w.values + 32, f.z.n_pub, &err) == 0, "%s: %s", wtp, err.msg);
    zk_vk_free(&vk);
    fixture_free(&f);
    (*ret_ok)++;
    return 0;
}

TEST(prove_fixtures) {
    NEED_GPU();
    static const char *pairs[][2] = {
        {"bn128/mulchain/mulchain.zkey", "bn128/mulchain/witness-1.wtns"},
        {"bn128/mulchain/mulchain.zkey", "bn128/mulchain/witness-2.wtns"},
        {"bn128/poseidon/poseidon.zkey", "bn128/poseidon/witness-1.wtns"},
        {"bn128/poseidon/poseidon.zkey", "bn128/poseidon/witness-2.wtns"},
        {"bn128/poseidon/poseidon.zkey", "bn128/poseidon/witness-3.wtns"},
        {"bn128/poseidon/poseidon.zkey", "bn128/poseidon/witness-4.wtns"},
        {"bn128/medium/medium.zkey", "bn128/medium/witness.wtns"},
        {"bls12381/mulchain/mulchain.zkey", "bls12381/mulchain/witness-1.wtns"},
        {"bls12381/mulchain/mulchain.zkey", "bls12381/mulchain/witness-2.wtns"},
        {"vectors/bn128_mc.zkey", "vectors/bn128_mc.wtns"},
        {"vectors/bls12381_mc.zkey", "vectors/bls12381_mc.wtns"},
    };
    int ok = 0;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        CHECK_MSG(prove_pair(pairs[i][0], pairs[i][1], &ok) == 0, "%s", pairs[i][1]);
    fprintf(stderr, "proved and verified %d fixture witnesses on the CUDA backend\n", ok);
    return 0;
}

/* ---- partitions in flight: lanes 0 and 1 alternate over three circuits on two curves, each
 * partition submitted before the previous one is collected; every result equals the CPU core's ---- */
TEST(prove_inflight) {
    NEED_GPU();
    CHECK(zk_backend_cuda.depth >= 2);
    fixture_t f[3];
    CHECK(fixture_load(&f[0], "bn128/medium/medium.zkey", "bn128/medium/witness.wtns") == 0);
    CHECK(fixture_load(&f[1], "bls12381/mulchain/mulchain.zkey", "bls12381/mulchain/witness-1.wtns") == 0);
    CHECK(fixture_load(&f[2], "bn128/poseidon/poseidon.zkey", "bn128/poseidon/witness-2.wtns") == 0);
    CHECK(fixture_prove_in_flight(&zk_backend_cuda, g_ctx, f, 3, 9) == 0);
    zk_raw_t gpu;
    CHECK(zk_backend_cuda.collect(g_ctx, 0, &gpu, NULL, &g_err) < 0); /* nothing submitted there */
    for (int i = 0; i < 3; i++) fixture_free(&f[i]);
    return 0;
}

/* ---- a synthetic bn128 key of 2^20 variables and a 2^21 domain (2^20 constraints plus the
 * public rows): points tiled from a random set, a and b random, c = a∘b ---- */
typedef struct {
    zk_zkey_t z;
    uint8_t *pts, *h, *wit, *abc;
} big_key_t;

static int big_key_make(big_key_t *k, unsigned log_vars, unsigned log_domain) {
    memset(k, 0, sizeof *k);
    size_t nv = (size_t)1 << log_vars, n = (size_t)1 << log_domain, M = 4096;
    bn_g1_xyzz_t g, p;
    bn_g1_xyzz_from_aff(&g, &bn_g1_gen);
    bn_g1_aff_t base[4096];
    bn_g2_aff_t base2[64];
    for (size_t j = 0; j < M; j++) {
        uint64_t s;
        rnd(&s, 8);
        bn_g1_xyzz_mul(&p, &g, &s, 1);
        bn_g1_xyzz_to_aff(&base[j], &p);
        if (j % 50 == 7) memset(&base[j], 0, sizeof base[j]);
    }
    bn_g2_xyzz_t g2, p2;
    bn_g2_xyzz_from_aff(&g2, &bn_g2_gen);
    for (size_t j = 0; j < 64; j++) {
        uint64_t s;
        rnd(&s, 8);
        bn_g2_xyzz_mul(&p2, &g2, &s, 1);
        bn_g2_xyzz_to_aff(&base2[j], &p2);
    }
    k->pts = malloc(nv * (3 * 64 + 128));
    k->h = malloc(n * 64);
    bn_g1_aff_t *pa = (bn_g1_aff_t *)k->pts, *pb1 = pa + nv, *pc = pb1 + nv;
    bn_g2_aff_t *pb2 = (bn_g2_aff_t *)(pc + nv);
    for (size_t i = 0; i < nv; i++) {
        pa[i] = base[i % M];
        pb1[i] = base[(i * 7) % M];
        pc[i] = base[(i * 13) % M];
        pb2[i] = base2[(i * 5) % 64];
    }
    for (size_t i = 0; i < n; i++) ((bn_g1_aff_t *)k->h)[i] = base[(i * 3) % M];
    k->wit = malloc(nv * 32);
    rnd(k->wit, nv * 32);
    for (size_t i = 0; i < nv; i++) {
        uint8_t *v = k->wit + 32 * i;
        if (i == 0 || v[0] % 3 == 0) {
            memset(v, 0, 32);
            v[0] = 1;
        } else if (v[0] % 3 == 1)
            memset(v, 0, 32);
        else
            v[31] &= 0x1f;
    }
    k->abc = aligned_alloc(64, 3 * n * 32);
    bn_fr_t *a = (bn_fr_t *)k->abc, *b = a + n, *c = b + n;
    RAND_FP_BULK(bn_fr, 4, a, n);
    RAND_FP_BULK(bn_fr, 4, b, n);
    for (size_t i = 0; i < n; i++) bn_fr_mul(&c[i], &a[i], &b[i]);
    zk_zkey_t *z = &k->z;
    z->curve = &zk_curve_bn128;
    z->n_vars = (uint32_t)nv;
    z->n_pub = 1;
    z->domain_size = (uint32_t)n;
    z->log_domain = log_domain;
    z->points_a = pa;
    z->points_b1 = pb1;
    z->points_b2 = pb2;
    z->points_c = pc;
    z->points_h = k->h;
    return 0;
}

static void big_key_free(big_key_t *k) {
    free(k->pts);
    free(k->h);
    free(k->wit);
    free(k->abc);
}

TEST(prove_large) {
    NEED_GPU();
    big_key_t k;
    big_key_make(&k, MAX_LOG < 20 ? MAX_LOG - 1 : 20, MAX_LOG < 20 ? MAX_LOG : 21);
    size_t n = k.z.domain_size;
    zk_raw_t cpu, gpu;
    uint8_t *scratch = aligned_alloc(64, zk_core_scratch_size(&k.z));
    CHECK(zk_prove_core(&k.z, k.wit, k.abc, k.abc + 32 * n, k.abc + 64 * n, scratch, &cpu, NULL, 16) == 0);
    CHECK_MSG(zk_backend_prove(&zk_backend_cuda, g_ctx, &k.z, k.wit, k.abc, k.abc + 32 * n, k.abc + 64 * n, &gpu, NULL,
                               &g_err) == 0,
              "%s", g_err.msg);
    CHECK(memcmp(&cpu, &gpu, sizeof cpu) == 0);
    free(scratch);
    big_key_free(&k);
    return 0;
}

/* ---- device memory: the same synthetic core proved with no cap (not chunked where the device
 * has room), with a cap that keeps the key resident but chunks the MSMs, one that leaves no room
 * for the key (its points streamed chunk by chunk), and one that leaves no room for a whole NTT
 * (the NTT in blocks, every scalar streamed); each equal to the CPU core's and so to the
 * unchunked result. After each, the device memory the context holds is its plan's, and the
 * device's free memory fell by that much (exactly on the emulation; within the driver's 2 MiB pages
 * on a device). Run once more on a 64 MiB emulated device (meson: test_cuda_emu_64m), where an
 * allocation beyond the plan fails as it would on a device. ---- */
#ifdef ZKCUDA_EMU
#define CHUNK_LOG 16 /* a 2^16 circuit */
#define CAP_CHUNKED ((uint64_t)52 << 20)
#define CAP_STREAMED ((uint64_t)28 << 20)
#define CAP_BLOCKED ((uint64_t)12 << 20)
#define CHUNK_LANES 1 /* the emulation's time: one partition a case */
#else
#define CHUNK_LOG 20
#define CAP_CHUNKED ((uint64_t)1536 << 20)
#define CAP_STREAMED ((uint64_t)800 << 20)
#define CAP_BLOCKED ((uint64_t)256 << 20)
#define CHUNK_LANES 2
#endif

/* After a case's partitions: the context holds its plan (less the lanes it did not use), and the
 * device lost as much free memory since free_before. */
static int memory_matches_plan(void *c, const zk_zkey_t *z, uint64_t free_before, int lanes) {
    zkcuda_memory_t m;
    CHECK_MSG(zkcuda_memory(c, z, &m, &g_err) == 0, "%s", g_err.msg);
    uint64_t want = m.plan_need - (uint64_t)(2 - lanes) * m.plan_lane, used = free_before - m.device_free;
    fprintf(stderr,
            "  device memory: planned %.2f MiB (%d lane%s), held %.2f MiB, device free fell by %.2f MiB; "
            "pinned host %.2f MiB\n",
            want / 1048576.0, lanes, lanes > 1 ? "s" : "", m.held / 1048576.0, used / 1048576.0,
            m.plan_pinned / 1048576.0);
    CHECK_MSG(m.held == want, "the context holds %llu bytes, its plan %llu", (unsigned long long)m.held,
              (unsigned long long)want);
#ifdef ZKCUDA_EMU
    CHECK_MSG(used == want, "the device lost %llu bytes, the plan says %llu", (unsigned long long)used,
              (unsigned long long)want);
#else
    /* The driver maps device memory in 2 MiB pages and packs small allocations into pages it has
     * already mapped for this process, so a small plan can take a little less free memory than it
     * holds (on an H200 a 4.75 MiB plan took 4.00 MiB): two pages below the plan are allowed. */
    const uint64_t page = (uint64_t)2 << 20;
    CHECK_MSG(used + 2 * page >= want && used <= want + want / 10 + ((uint64_t)64 << 20),
              "the device lost %llu bytes, the plan says %llu", (unsigned long long)used, (unsigned long long)want);
#endif
    return 0;
}

TEST(prove_chunked) {
    NEED_GPU();
    big_key_t k;
    big_key_make(&k, CHUNK_LOG, CHUNK_LOG + (CHUNK_LOG >= 20));
    size_t n = k.z.domain_size;
    zk_raw_t cpu, gpu;
    uint8_t *scratch = aligned_alloc(64, zk_core_scratch_size(&k.z));
    CHECK(zk_prove_core(&k.z, k.wit, k.abc, k.abc + 32 * n, k.abc + 64 * n, scratch, &cpu, NULL, 16) == 0);
    free(scratch);
    const struct {
        uint64_t cap;
        const char *mode, *chunks, *ntt; /* what key_info must say (NULL: either) */
    } cases[] = {{0, "key points resident", NULL, "NTT whole"},
                 {CAP_CHUNKED, "key points resident", "MSMs in chunks of", "NTT whole"},
                 {CAP_STREAMED, "streamed", "MSMs in chunks of", "NTT whole"},
                 {CAP_BLOCKED, "streamed", "MSMs in chunks of", "NTT in blocks of"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
#ifdef ZKCUDA_EMU
        /* on a small emulated device (test_cuda_emu_64m) no cap already means chunks, and the
         * chunked cap adds nothing */
        bool small = getenv("ZKPIPE_EMU_DEVICE_MEMORY") != NULL;
        if (small && cases[i].cap == CAP_CHUNKED) continue;
#endif
        zkcuda_memory_t before; /* the device's free memory (filled whether or not g_ctx holds the key) */
        (void)zkcuda_memory(g_ctx, &k.z, &before, &g_err);
        void *c;
        CHECK_MSG(zk_backend_cuda.init(&c, 0, 16, 0, &g_err) == 0, "%s", g_err.msg);
        CHECK(zk_backend_cuda.set_device_memory(c, cases[i].cap, &g_err) == 0);
        CHECK_MSG(zk_backend_cuda.load_key(c, &k.z, &g_err) == 0, "cap %llu MiB: %s",
                  (unsigned long long)(cases[i].cap >> 20), g_err.msg);
        const char *info = zk_backend_cuda.key_info(c, &k.z);
        CHECK(info != NULL);
        fprintf(stderr, "2^%d core, cap %llu MiB: %s\n", CHUNK_LOG, (unsigned long long)(cases[i].cap >> 20), info);
        CHECK_STR_CONTAINS(info, cases[i].mode);
        if (cases[i].chunks) CHECK_STR_CONTAINS(info, cases[i].chunks);
        CHECK_STR_CONTAINS(info, cases[i].ntt);
#ifdef ZKCUDA_EMU
        if (small && !cases[i].cap) CHECK_STR_CONTAINS(info, "MSMs in chunks of");
#endif
        /* partitions in flight on the lanes, as gpud runs them */
        for (int lane = 0; lane < CHUNK_LANES; lane++)
            CHECK_MSG(zk_backend_cuda.submit(c, lane, &k.z, k.wit, k.abc, k.abc + 32 * n, k.abc + 64 * n, &g_err) == 0,
                      "cap %llu MiB: %s", (unsigned long long)(cases[i].cap >> 20), g_err.msg);
        for (int lane = 0; lane < CHUNK_LANES; lane++) {
            CHECK_MSG(zk_backend_cuda.collect(c, lane, &gpu, NULL, &g_err) == 0, "%s", g_err.msg);
            CHECK_MSG(memcmp(&cpu, &gpu, sizeof cpu) == 0, "cap %llu MiB lane %d: the core differs from the CPU's",
                      (unsigned long long)(cases[i].cap >> 20), lane);
        }
        CHECK(memory_matches_plan(c, &k.z, before.device_free, CHUNK_LANES) == 0);
        zk_backend_cuda.destroy(c);
    }
    /* a cap below what even the NTT in blocks needs: the key is refused with the sizes */
    void *c;
    CHECK(zk_backend_cuda.init(&c, 0, 16, 0, &g_err) == 0);
    CHECK(zk_backend_cuda.set_device_memory(c, (uint64_t)1 << 20, &g_err) == 0);
    CHECK(zk_backend_cuda.load_key(c, &k.z, &g_err) == -ENOMEM);
    fprintf(stderr, "cap 1 MiB: %s\n", g_err.msg);
    CHECK_STR_CONTAINS(g_err.msg, "CUDA: device memory: a partition of this circuit");
    CHECK_STR_CONTAINS(g_err.msg, "NTT in blocks of");
    CHECK_STR_CONTAINS(g_err.msg, "the budget is 1.0 MiB");
    zk_backend_cuda.destroy(c);
    big_key_free(&k);

    /* the fixtures of both curves with the NTT in blocks: a cap between the smallest plan with the
     * NTT whole and the smallest in blocks (devplan.c's figures, CUB's sizes estimated) */
    const char *fx[][2] = {{"bn128/medium/medium.zkey", "bn128/medium/witness.wtns"},
                           {"bls12381/mulchain/mulchain.zkey", "bls12381/mulchain/witness-1.wtns"}};
    for (int i = 0; i < 2; i++) {
        fixture_t f;
        CHECK(fixture_load(&f, fx[i][0], fx[i][1]) == 0);
        zc_plan_circuit_t pc = {f.z.curve, f.z.n_vars, f.z.n_pub, f.z.log_domain};
        zc_dev_plan_t whole, blocked;
        CHECK(zc_plan_needs(&pc, ZC_MIN_CHUNK, false, 0, &zc_plan_cub_estimate, &whole) == 0);
        CHECK(zc_plan_needs(&pc, ZC_MIN_CHUNK, false, (uint32_t)f.z.domain_size >> (f.z.log_domain / 2),
                            &zc_plan_cub_estimate, &blocked) == 0);
        CHECK(blocked.need < whole.need);
        zkcuda_memory_t before;
        (void)zkcuda_memory(g_ctx, &f.z, &before, &g_err);
        CHECK(zk_backend_cuda.init(&c, 0, 16, 0, &g_err) == 0);
        CHECK(zk_backend_cuda.set_device_memory(c, (blocked.need + whole.need) / 2, &g_err) == 0);
        CHECK_MSG(zk_backend_cuda.load_key(c, &f.z, &g_err) == 0, "%s: %s", fx[i][0], g_err.msg);
        const char *info = zk_backend_cuda.key_info(c, &f.z);
        fprintf(stderr, "%s, cap %.1f MiB: %s\n", fx[i][0], (blocked.need + whole.need) / 2 / 1048576.0, info);
        CHECK_STR_CONTAINS(info, "NTT in blocks of");
        fixture_t two[1] = {f};
        CHECK(fixture_prove_in_flight(&zk_backend_cuda, c, two, 1, 2) == 0);
        CHECK(memory_matches_plan(c, &f.z, before.device_free, 2) == 0);
        zk_backend_cuda.destroy(c);
        fixture_free(&f);
    }
    return 0;
}

/* ---- timings ---- */
static void tline(const char *what, double v, const char *unit) { printf("TIME|%s|%.3f|%s\n", what, v, unit); }

TEST(bench_msm) {
    NEED_GPU();
    unsigned logs[] = {20, 22};
    for (int i = 0; i < 2; i++) {
        size_t n = (size_t)1 << logs[i];
        char name[64];
        double ms, best;
#define BEST(call, label)                                                                                              \
    best = 1e30;                                                                                                       \
    for (int rep = 0; rep < 3; rep++) {                                                                                \
        CHECK((call) == 0);                                                                                            \
        if (ms < best) best = ms;                                                                                      \
    }                                                                                                                  \
    snprintf(name, sizeof name, label " 2^%u", logs[i]);                                                               \
    tline(name, best, "ms");
        BEST(msm_bn_g1(n, 0, rep > 0, &ms), "MSM G1 bn128");
        BEST(msm_bn_g2(n, 0, rep > 0, &ms), "MSM G2 bn128");
        BEST(msm_bls_g1(n, 0, rep > 0, &ms), "MSM G1 bls12381");
        BEST(msm_bls_g2(n, 0, rep > 0, &ms), "MSM G2 bls12381");
    }
    return 0;
}

/* Every window size the backend takes (ZKPIPE_CHECK_WINDOWS="c c ..." restricts them) on bn128
 * G1 and G2 of 2^20 points (ZKPIPE_CHECK_MSM_LOG=L: 2^L): each result checked, then timed (best of
 * two; named only by hand, not part of device-check.sh's table), to choose the backend's window. */
TEST(msm_windows) {
    NEED_GPU();
    const char *env = getenv("ZKPIPE_CHECK_WINDOWS"), *lenv = getenv("ZKPIPE_CHECK_MSM_LOG");
    int lg = lenv ? atoi(lenv) : 20;
    CHECK_MSG(lg >= 10 && lg <= 24, "ZKPIPE_CHECK_MSM_LOG=%s: 10 to 24", lenv);
    size_t n = (size_t)1 << lg;
    unsigned windows = 0x1fff0; /* 4..16 */
    if (env) {
        windows = 0;
        for (char *end;; env = end) {
            long c = strtol(env, &end, 10);
            if (end == env) break;
            if (c >= 4 && c <= 16) windows |= 1u << c;
        }
    }
    for (int c = 4; c <= 16; c++) {
        if (!(windows >> c & 1)) continue;
        char name[64];
        double ms, best1 = 1e30, best2 = 1e30;
        for (int rep = 0; rep < 2; rep++) {
            CHECK_MSG(msm_bn_g1(n, c, rep > 0, &ms) == 0, "G1 window %d", c);
            if (ms < best1) best1 = ms;
            CHECK_MSG(msm_bn_g2(n, c, rep > 0, &ms) == 0, "G2 window %d", c);
            if (ms < best2) best2 = ms;
        }
        snprintf(name, sizeof name, "MSM G1 bn128 2^%d window %d", lg, c);
        tline(name, best1, "ms");
        snprintf(name, sizeof name, "MSM G2 bn128 2^%d window %d", lg, c);
        tline(name, best2, "ms");
    }
    return 0;
}

TEST(bench_ntt) {
    NEED_GPU();
    unsigned logs[] = {20, 22};
    for (int i = 0; i < 2; i++) {
        double f, c, bf = 1e30, bc = 1e30;
        char name[64];
        for (int rep = 0; rep < 3; rep++) {
            CHECK(ntt_bn(logs[i], 1, &f, &c) == 0);
            if (f < bf) bf = f;
            if (c < bc) bc = c;
        }
        snprintf(name, sizeof name, "NTT bn128 2^%u", logs[i]);
        tline(name, bf, "ms");
        snprintf(name, sizeof name, "iNTT+coset+NTT bn128 2^%u", logs[i]);
        tline(name, bc, "ms");
        bf = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            CHECK(ntt_bls(logs[i], 1, &f, &c) == 0);
            if (f < bf) bf = f;
        }
        snprintf(name, sizeof name, "NTT bls12381 2^%u", logs[i]);
        tline(name, bf, "ms");
    }
    return 0;
}

static int bench_core_key(const zk_zkey_t *z, const uint8_t *wit, const uint8_t *abc, const char *label) {
    size_t n = z->domain_size;
    zk_raw_t out;
    zk_core_times_t t;
    CHECK_MSG(zk_backend_cuda.load_key(g_ctx, z, &g_err) == 0, "%s", g_err.msg);
    double best = 1e30;
    zk_core_times_t bt;
    for (int rep = 0; rep < 4; rep++) {
        double t0 = now_ms();
        CHECK_MSG(
            zk_backend_prove(&zk_backend_cuda, g_ctx, z, wit, abc, abc + 32 * n, abc + 64 * n, &out, &t, &g_err) == 0,
            "%s", g_err.msg);
        double dt = now_ms() - t0;
        if (rep > 0 && dt < best) best = dt, bt = t;
    }
    char name[128];
    snprintf(name, sizeof name, "core %s (wall, incl. H2D)", label);
    tline(name, best, "ms");
    /* back to back, as gpud runs it: partition i+1 submitted before partition i is collected */
    const int parts = 8, depth = zk_backend_cuda.depth;
    double t0 = now_ms();
    for (int i = 0; i < parts + depth - 1; i++) {
        if (i < parts)
            CHECK_MSG(zk_backend_cuda.submit(g_ctx, i % depth, z, wit, abc, abc + 32 * n, abc + 64 * n, &g_err) == 0,
                      "%s", g_err.msg);
        int j = i - (depth - 1);
        if (j >= 0) CHECK_MSG(zk_backend_cuda.collect(g_ctx, j % depth, &out, NULL, &g_err) == 0, "%s", g_err.msg);
    }
    snprintf(name, sizeof name, "core %s, %d in flight, per partition", label, depth);
    tline(name, (now_ms() - t0) / parts, "ms");
    snprintf(name, sizeof name, "  %s steps: H2D / NTT+H / MSM A,B1,B2,C,H", label);
    printf("TIME|%s|%.2f / %.2f / %.2f,%.2f,%.2f,%.2f,%.2f|ms\n", name, bt.h2d_ns / 1e6, bt.ntt_ns / 1e6,
           bt.msm_a_ns / 1e6, bt.msm_b1_ns / 1e6, bt.msm_b2_ns / 1e6, bt.msm_c_ns / 1e6, bt.msm_h_ns / 1e6);
    return 0;
}

TEST(bench_core) {
    NEED_GPU();
    zk_zkey_t z;
    zk_wtns_t w;
    zk_err_t err;
    CHECK_MSG(zk_zkey_open(&z, test_data("bn128/medium/medium.zkey"), &err) == 0, "%s", err.msg);
    CHECK_MSG(zk_wtns_load(&w, test_data("bn128/medium/witness.wtns"), &err) == 0, "%s", err.msg);
    uint8_t *abc = aligned_alloc(64, zk_abc_size(&z));
    size_t n = z.domain_size;
    CHECK(zk_synth(&z, w.values, abc, abc + 32 * n, abc + 64 * n, 16) == 0);
    char label[64];
    snprintf(label, sizeof label, "bn128 medium (2^%u)", z.log_domain);
    CHECK(bench_core_key(&z, w.values, abc, label) == 0);
    free(abc);
    zk_wtns_free(&w);
    zk_zkey_close(&z);
    big_key_t k;
    big_key_make(&k, 20, 21);
    /* register the inputs as gpud registers its slabs */
    CHECK_MSG(zk_backend_cuda.register_memory(g_ctx, k.abc, 3 * (size_t)k.z.domain_size * 32, &g_err) == 0, "%s",
              g_err.msg);
    CHECK(bench_core_key(&k.z, k.wit, k.abc, "bn128 2^20 vars, 2^21 domain") == 0);
    k.abc = NULL; /* stays registered (and allocated) until the process ends */
    big_key_free(&k);
    return 0;
}

TEST(bench_h2d) {
    NEED_GPU();
    size_t len = (size_t)1 << 30;
    uint8_t *pageable = aligned_alloc(4096, len), *slab = aligned_alloc(4096, len);
    memset(pageable, 1, len);
    memset(slab, 2, len);
    double gp = 0, gr = 0, g;
    for (int rep = 0; rep < 3; rep++) {
        CHECK(zkcuda_h2d(g_ctx, pageable, len, &g, &g_err) == 0);
        if (g > gp) gp = g;
    }
    CHECK_MSG(zk_backend_cuda.register_memory(g_ctx, slab, len, &g_err) == 0, "%s", g_err.msg);
    for (int rep = 0; rep < 3; rep++) {
        CHECK(zkcuda_h2d(g_ctx, slab, len, &g, &g_err) == 0);
        if (g > gr) gr = g;
    }
    tline("H2D 1 GiB pageable", gp, "GB/s");
    tline("H2D 1 GiB registered slab", gr, "GB/s");
    tline("H2D registered/pageable", gp > 0 ? gr / gp : 0, "x");
    /* slab stays registered until the context goes: freeing it would need cudaHostUnregister */
    free(pageable);
    return 0;
}
