/* bench/msm_ntt: throughput of the library's MSM (G1, G2) and NTT on bn128 (or bls12381) for sizes
 * 2^lo..2^hi and 1..T threads: the median of R runs of one MSM / one forward NTT of each size.
 * Bases are consecutive multiples of a random point (an MSM's cost does not depend on them),
 * scalars uniform in [0, r). The last column is the process's CPU time (median): with 1 thread it
 * is the work itself, much less disturbed than wall time by other jobs on a shared machine.
 * `--only inv` times 2^lo..2^hi chained inversions of the base field instead (1 thread): Fermat
 * (FPF(inv)) and the variable-time one of the batch inversion (FPF(inv_vartime)).
 * `--only mul` times 2^lo..2^hi products of the base field (FPF(mul), the kernel set's; 1 thread):
 * one chain x <- x·y (each product waits for the one before: the latency) and eight independent
 * chains side by side (the throughput the bucket additions and the NTT can reach).
 * `--only reduce` times one window's bucket reduction (G_msm_bucket_sum: the MSM's own choice of
 * path for the kernel set, copies of the buckets included) over 2^lo..2^hi full buckets, G1 and
 * G2 (1 thread).
 * Usage: msm_ntt [--curve bn128|bls12381] [--lo 16] [--hi 20] [--threads 2] [--runs 1] [--no-g2]
 *        [--only g1|g2|ntt|inv|mul|reduce] */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "zk/curve.h"
#include "zk/groth16.h"
#include "zk/msm.h"
#include "zk/ntt.h"

/* n products x[k] <- x[k]·y over `chains` independent chains taken in turns (--only mul); the
 * sum of the chains goes to out, so that nothing is left out as unused. */
#define MUL_CHAINS(F, chains, n, out)                                                                                 \
    do {                                                                                                               \
        F##_t x_[8], y_ = F##_ONE;                                                                                     \
        F##_add(&y_, &y_, &y_);                                                                                        \
        for (int k_ = 0; k_ < 8; k_++) x_[k_] = y_, F##_add(&y_, &y_, &F##_ONE);                                       \
        for (size_t i_ = 0; i_ < (n) / (chains); i_++)                                                                 \
            for (int k_ = 0; k_ < (chains); k_++) F##_mul(&x_[k_], &x_[k_], &y_);                                      \
        for (int k_ = 1; k_ < 8; k_++) F##_add(&x_[0], &x_[0], &x_[k_]);                                               \
        memcpy((out), &x_[0], sizeof(x_[0]));                                                                          \
    } while (0)

static double clock_s(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void *xalloc(size_t n) {
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
    if (!p) {
        fprintf(stderr, "msm_ntt: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

/* n scalars uniform in [0, r), 32 bytes each. */
static void random_scalars(const zk_curve_t *c, uint8_t *s, size_t n) {
    for (size_t i = 0; i + 1 < n; i += 2)
        if (zk_random_rs(c, s + 32 * i, s + 32 * (i + 1)) < 0) exit(1);
    if (n % 2) {
        uint8_t t[32];
        if (zk_random_rs(c, s + 32 * (n - 1), t) < 0) exit(1);
    }
}

/* Bases P, 2P, 3P, ... for a random P = k·G, converted to affine 4096 at a time. */
#define MAKE_BASES(G, F, gen)                                                                                          \
    static G##_aff_t *G##_bases(const zk_curve_t *c, size_t n) {                                                       \
        G##_aff_t *b = xalloc(n * sizeof(*b));                                                                         \
        G##_xyzz_t g, p, *x = xalloc(4096 * sizeof(*x));                                                               \
        F##_t *zi = xalloc(4096 * sizeof(*zi)), *tmp = xalloc(4096 * sizeof(*tmp));                                    \
        uint8_t k[64];                                                                                                 \
        if (zk_random_rs(c, k, k + 32) < 0) exit(1);                                                                   \
        uint64_t kl[4];                                                                                                \
        memcpy(kl, k, 32);                                                                                             \
        G##_xyzz_from_aff(&g, &gen);                                                                                   \
        G##_xyzz_mul(&g, &g, kl, 4);                                                                                   \
        p = g;                                                                                                         \
        for (size_t i0 = 0; i0 < n; i0 += 4096) {                                                                      \
            size_t m = n - i0 < 4096 ? n - i0 : 4096;                                                                  \
            for (size_t i = 0; i < m; i++) {                                                                           \
                x[i] = p;                                                                                              \
                zi[i] = p.zzz;                                                                                         \
                G##_xyzz_add(&p, &p, &g);                                                                              \
            }                                                                                                          \
            F##_batch_inv(zi, tmp, m);                                                                                 \
            for (size_t i = 0; i < m; i++) {                                                                           \
                F##_t iz, izz;                                                                                         \
                F##_mul(&iz, &zi[i], &x[i].zz);                                                                        \
                F##_sqr(&izz, &iz);                                                                                    \
                F##_mul(&b[i0 + i].x, &x[i].x, &izz);                                                                  \
                F##_mul(&b[i0 + i].y, &x[i].y, &zi[i]);                                                                \
            }                                                                                                          \
        }                                                                                                              \
        free(x);                                                                                                       \
        free(zi);                                                                                                      \
        free(tmp);                                                                                                     \
        return b;                                                                                                      \
    }
MAKE_BASES(bn_g1, bn_fq, bn_g1_gen)
MAKE_BASES(bn_g2, bn_fq2, bn_g2_gen)
MAKE_BASES(bls_g1, bls_fq, bls_g1_gen)
MAKE_BASES(bls_g2, bls_fq2, bls_g2_gen)

static void fmt_rate(char *out, size_t len, double per_s) {
    if (per_s >= 1e6)
        snprintf(out, len, "%.2f M/s", per_s / 1e6);
    else
        snprintf(out, len, "%.1f k/s", per_s / 1e3);
}

int main(int argc, char **argv) {
    static const struct option opts[] = {
        {"curve", required_argument, NULL, 'c'}, {"lo", required_argument, NULL, 'l'},
        {"hi", required_argument, NULL, 'H'},    {"threads", required_argument, NULL, 't'},
        {"runs", required_argument, NULL, 'r'},  {"no-g2", no_argument, NULL, 'n'},
        {"only", required_argument, NULL, 'o'},  {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    const zk_curve_t *curve = &zk_curve_bn128;
    int lo = 16, hi = 20, max_threads = 2, runs = 1, g2 = 1, only = -1, o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case 'c':
            curve = zk_curve_by_name(optarg);
            if (!curve) {
                fprintf(stderr, "msm_ntt: unknown curve '%s'\n", optarg);
                return 2;
            }
            break;
        case 'l':
            lo = atoi(optarg);
            break;
        case 'H':
            hi = atoi(optarg);
            break;
        case 't':
            max_threads = atoi(optarg);
            break;
        case 'r':
            runs = atoi(optarg);
            break;
        case 'n':
            g2 = 0;
            break;
        case 'o':
            only = !strcmp(optarg, "g1")    ? 0
                   : !strcmp(optarg, "g2")  ? 1
                   : !strcmp(optarg, "ntt") ? 2
                   : !strcmp(optarg, "inv") ? 3
                   : !strcmp(optarg, "reduce") ? 5
                   : !strcmp(optarg, "mul")    ? 7
                                            : -2;
            if (only == -2) {
                fprintf(stderr, "msm_ntt: --only takes g1, g2, ntt, inv, mul or reduce, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'h':
            printf("Usage: msm_ntt [--curve bn128|bls12381] [--lo 16] [--hi 20] [--threads 2] [--runs 1] [--no-g2]\n"
                   "               [--only g1|g2|ntt|inv|mul|reduce]\n");
            return 0;
        default:
            return 2;
        }
    }
    if (lo < 1 || hi > 24 || lo > hi || max_threads < 1 || runs < 1 || runs > 15) {
        fprintf(stderr, "msm_ntt: bad arguments\n");
        return 2;
    }
    if (only >= 0 && only != 1 && only != 5) g2 = 0;
    int bn = curve->id == ZK_CURVE_BN128;
    size_t nmax = (size_t)1 << hi;
    fprintf(stderr, "msm_ntt: preparing %zu random scalars and bases on %s...\n", nmax, curve->name);
    uint8_t *sc = xalloc(nmax * 32);
    random_scalars(curve, sc, nmax);
    void *b1 = only > 0 && only != 5 ? NULL : bn ? (void *)bn_g1_bases(curve, nmax) : (void *)bls_g1_bases(curve, nmax);
    void *b2 = !g2 ? NULL : bn ? (void *)bn_g2_bases(curve, nmax) : (void *)bls_g2_bases(curve, nmax);
    uint8_t *ntt = xalloc(nmax * 32), *tw = xalloc(nmax / 2 * 32 + 32);

    printf("MSM and NTT throughput, %s, median of %d run%s (points or elements per second)\n", curve->name, runs,
           runs > 1 ? "s" : "");
    printf("%-8s %-6s %7s %12s %14s %12s\n", "op", "size", "threads", "time (ms)", "throughput", "cpu (ms)");
    /* the buckets of a reduction: all occupied (bases, distinct points), no side accumulator */
    uint8_t *state = only == 5 ? xalloc(nmax) : NULL;
    void *side = only == 5 ? calloc(nmax, bn ? sizeof(bn_g2_xyzz_t) : sizeof(bls_g2_xyzz_t)) : NULL;
    if (state) memset(state, 1, nmax);
    for (int ops = 0; ops < 9; ops++) {
        if (((ops == 1 || ops == 6) && !g2) ||
            (only >= 0 && ops != only && !(only == 3 && ops == 4) && !(only == 5 && ops == 6) && !(only == 7 && ops == 8)) ||
            (ops >= 3 && ops <= 4 && only != 3) || (ops >= 5 && ops <= 6 && only != 5) || (ops >= 7 && only != 7))
            continue;
        const char *names[] = {"G1 MSM", "G2 MSM", "NTT", "inv", "inv vt", "G1 reduce", "G2 reduce", "mul", "mul x8"},
                   *name = names[ops];
        for (int lg = lo; lg <= hi; lg++) {
            size_t n = (size_t)1 << lg;
            if (ops == 2) { /* twiddles w^k, k < n/2 */
                uint8_t w[32];
                zk_fr_root_of_unity(curve, (unsigned)lg, w);
                if (bn) {
                    bn_fr_t *t = (bn_fr_t *)tw, r;
                    memcpy(r.l, w, 32);
                    bn_fr_one(&t[0]);
                    for (size_t k = 1; k < n / 2; k++) bn_fr_mul(&t[k], &t[k - 1], &r);
                } else {
                    bls_fr_t *t = (bls_fr_t *)tw, r;
                    memcpy(r.l, w, 32);
                    bls_fr_one(&t[0]);
                    for (size_t k = 1; k < n / 2; k++) bls_fr_mul(&t[k], &t[k - 1], &r);
                }
            }
            for (int th = 1; th <= (ops >= 3 ? 1 : max_threads); th++) {
                double t[15], cpu[15];
                for (int r = 0; r < runs; r++) {
                    if (ops == 2) memcpy(ntt, sc, n * 32); /* scalars < r double as field elements */
                    double t0 = now(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
                    if (ops == 0) {
                        if (bn) {
                            bn_g1_xyzz_t out;
                            bn_g1_msm(&out, b1, sc, n, th);
                        } else {
                            bls_g1_xyzz_t out;
                            bls_g1_msm(&out, b1, sc, n, th);
                        }
                    } else if (ops == 1) {
                        if (bn) {
                            bn_g2_xyzz_t out;
                            bn_g2_msm(&out, b2, sc, n, th);
                        } else {
                            bls_g2_xyzz_t out;
                            bls_g2_msm(&out, b2, sc, n, th);
                        }
                    } else if (ops >= 7) { /* one chain, or eight side by side, of products by y */
                        if (bn)
                            MUL_CHAINS(bn_fq, ops == 7 ? 1 : 8, n, ntt);
                        else
                            MUL_CHAINS(bls_fq, ops == 7 ? 1 : 8, n, ntt);
                    } else if (ops >= 5) {
                        if (bn && ops == 5) {
                            bn_g1_xyzz_t out;
                            bn_g1_msm_bucket_sum(&out, b1, side, state, n);
                        } else if (bn) {
                            bn_g2_xyzz_t out;
                            bn_g2_msm_bucket_sum(&out, b2, side, state, n);
                        } else if (ops == 5) {
                            bls_g1_xyzz_t out;
                            bls_g1_msm_bucket_sum(&out, b1, side, state, n);
                        } else {
                            bls_g2_xyzz_t out;
                            bls_g2_msm_bucket_sum(&out, b2, side, state, n);
                        }
                    } else if (ops == 2 && bn) {
                        bn_ntt_dif((bn_fr_t *)ntt, n, (const bn_fr_t *)tw, th);
                    } else if (ops == 2) {
                        bls_ntt_dif((bls_fr_t *)ntt, n, (const bls_fr_t *)tw, th);
                    } else if (bn) { /* x <- 1/(x + 1): a chain, so nothing is computed ahead */
                        bn_fq_t x = bn_fq_ONE;
                        for (size_t i = 0; i < n; i++) {
                            bn_fq_add(&x, &x, &bn_fq_ONE);
                            if (ops == 3)
                                bn_fq_inv(&x, &x);
                            else
                                bn_fq_inv_vartime(&x, &x);
                        }
                        memcpy(ntt, &x, sizeof(x));
                    } else {
                        bls_fq_t x = bls_fq_ONE;
                        for (size_t i = 0; i < n; i++) {
                            bls_fq_add(&x, &x, &bls_fq_ONE);
                            if (ops == 3)
                                bls_fq_inv(&x, &x);
                            else
                                bls_fq_inv_vartime(&x, &x);
                        }
                        memcpy(ntt, &x, sizeof(x));
                    }
                    t[r] = now() - t0;
                    cpu[r] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
                }
                double m = median(t, runs), mc = median(cpu, runs);
                char rate[32];
                fmt_rate(rate, sizeof(rate), (double)n / m);
                printf("%-8s 2^%-4d %7d %12.*f %14s %12.*f\n", name, lg, th, ops >= 5 ? 3 : 1, m * 1e3, rate,
                       ops >= 5 ? 3 : 1, mc * 1e3);
                fflush(stdout);
            }
        }
    }
    free(state);
    free(side);
    free(sc);
    free(b1);
    free(b2);
    free(ntt);
    free(tw);
    return 0;
}
