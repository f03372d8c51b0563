/* MSM instantiations and the window/digit helpers they share. */
#include "msm.h"
#include "kernels.h"
#include "msm_avx2.h"
#include "msm_ifma.h"

#include <stdlib.h>

unsigned zk_msm_window(size_t n, size_t point_size, unsigned bits) {
    /* cost ~ windows * (n bucket additions * (1 + the batch's share) + W * 2^(c-1) buckets to
     * reduce). The batch (msm_tmpl.h) is nb/8 within [64, 1024], and each costs about 35 bucket
     * additions besides its own, so narrow windows pay for short batches. (35 was fitted when the
     * inverse alone cost that much; with the divstep inverse, three times faster, a refit to 12
     * would take c = 11 instead of 12 for 2^12 points, GLV's 2^13 halves, which measured 3 %
     * slower with mulx and no faster with ifma.) W fitted to bench/msm_ntt CPU times
     * (bn128 G1, 1 thread, c = 10..15 at 2^14..2^16 points: each measured within ~3 % of this model);
     * G2 buckets are twice as large, so caches favour fewer of them. */
    /* With the ifma kernels (BN254 G1, G2: 64- and 128-byte points) the widest window measured
     * fastest from 2^16 G1 / 2^17 G2 points on (bench/msm_ntt, 1 thread, CPU ms, c = 13 / 14 / 15:
     * G1 2^16 138 / 134 / 124, 2^17 273 / 254 / 225; G2 2^17 677 / 678 / 610; below that 13 or the
     * model's choice was within 5 %), which this model does not reproduce; the extra buckets cost
     * 1 MB (G1) or 2 MB (G2) per thread. */
    if (zk_kernels_ifma && bits > 128 &&
        ((point_size == 64 && n >= ((size_t)1 << 16)) || (point_size == 128 && n >= ((size_t)1 << 17))))
        return 15;
    unsigned best = 2;
    double best_cost = 1e300;
    for (unsigned c = 2; c <= 15; c++) /* digits are int16_t */ {
        zk_fixed_plan_t plain = {.c = c, .nwin = (bits + c) / c, .stride = 1, .stored = 1};
        double cost = zk_fixed_cost(&plain, n, point_size, 1); /* the model below, one thread */
        if (cost < best_cost) best_cost = cost, best = c;
    }
    return best;
}

void zk_msm_signed_digits(int16_t *d, const uint64_t k[4], unsigned c, unsigned nwin) {
    unsigned carry = 0;
    uint32_t full = 1u << c, half = 1u << (c - 1);
    for (unsigned w = 0; w < nwin; w++) {
        unsigned bit = w * c;
        uint32_t v = 0;
        if (bit < 256) {
            unsigned limb = bit / 64, off = bit % 64;
            uint64_t x = k[limb] >> off;
            if (off + c > 64 && limb + 1 < 4) x |= k[limb + 1] << (64 - off);
            v = (uint32_t)(x & (full - 1));
        }
        v += carry;
        if (v > half) {
            d[w] = (int16_t)((int32_t)v - (int32_t)full);
            carry = 1;
        } else {
            d[w] = v == 1u << 15 ? INT16_MIN : (int16_t)v; /* c = 16: 2^15 as INT16_MIN (zk_msm_digit) */
            carry = 0;
        }
    }
}

/* The basis comes from the extended Euclidean algorithm on (r, lambda), stopped at the remainders
 * around sqrt(r) (Gallant, Lambert, Vanstone 2001, section 4); beta is the cube root of unity in Fq
 * that pairs with this lambda. tests/test_msm.c checks them: the split of edge and random scalars
 * recombines to k mod r with |k1|, |k2| < 2^128, and phi(G) = lambda·G. */
const zk_glv_t zk_glv_bn = {
    .lambda = {0x8b17ea66b99c90ddULL, 0x5bfc41088d8daaa7ULL, 0xb3c4d79d41a91758ULL, 0},
    .g1 = {0xd91d232ec7e0b3d7ULL, 0x0000000000000002ULL, 0, 0},
    .g2 = {0x7a7bd9d4391eb18eULL, 0x4ccef014a773d2cfULL, 0x0000000000000002ULL, 0},
    .a1 = {0x89d3256894d213e3ULL, 0, 0, 0},                                                   /* 0x89d3256894d213e3 */
    .b1 = {0x7dee441482b0eed8ULL, 0x90b27db71147a603ULL, ~0ULL, ~0ULL}, /* -0x6f4d8248eeb859fc8211bbeb7d4f1128 */
    .a2 = {0x0be4e1541221250bULL, 0x6f4d8248eeb859fdULL, 0, 0},        /* 0x6f4d8248eeb859fd0be4e1541221250b */
    .b2 = {0x89d3256894d213e3ULL, 0, 0, 0},                                                   /* 0x89d3256894d213e3 */
};
const zk_glv_t zk_glv_bls = {
    .lambda = {0x00000000ffffffffULL, 0xac45a4010001a402ULL, 0, 0}, /* x^2 - 1 */
    .g1 = {2, 0, 0, 0},
    .g2 = {0x63f6e522f6cfee30ULL, 0x7c6becf1e01faaddULL, 1, 0},
    .a1 = {1, 0, 0, 0},
    .b1 = {0x0000000100000000ULL, 0xac45a4010001a402ULL, 0, 0}, /* 0xac45a4010001a4020000000100000000 */
    .a2 = {0x00000000ffffffffULL, 0xac45a4010001a402ULL, 0, 0}, /* lambda */
    .b2 = {~0ULL, ~0ULL, ~0ULL, ~0ULL},                         /* -1 */
};

/* r = a·b mod 2^256 */
static void glv_mul256(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    uint64_t t[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        unsigned __int128 c = 0;
        for (int j = 0; i + j < 4; j++) {
            c += (unsigned __int128)a[i] * b[j] + t[i + j];
            t[i + j] = (uint64_t)c;
            c >>= 64;
        }
    }
    memcpy(r, t, sizeof(t));
}

static void glv_neg256(uint64_t r[4], const uint64_t a[4]) {
    unsigned __int128 c = 1;
    for (int i = 0; i < 4; i++) {
        c += (uint64_t)~a[i];
        r[i] = (uint64_t)c;
        c >>= 64;
    }
}

static void glv_sub256(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    unsigned __int128 bw = 0;
    for (int i = 0; i < 4; i++) {
        unsigned __int128 d = (unsigned __int128)a[i] - b[i] - (uint64_t)bw;
        r[i] = (uint64_t)d;
        bw = (d >> 64) & 1;
    }
}

/* round(k·g / 2^256) for g < 2^192: the top limbs of k·g + 2^255 (only g's non-zero limbs). */
static void glv_round(uint64_t c[4], const uint64_t k[4], const uint64_t g[4]) {
    uint64_t t[8] = {0};
    int ng = 4;
    while (ng > 1 && g[ng - 1] == 0) ng--;
    for (int i = 0; i < 4; i++) {
        unsigned __int128 acc = 0;
        for (int j = 0; j < ng; j++) {
            acc += (unsigned __int128)k[i] * g[j] + t[i + j];
            t[i + j] = (uint64_t)acc;
            acc >>= 64;
        }
        t[i + ng] = (uint64_t)acc;
    }
    unsigned __int128 acc = (unsigned __int128)t[3] + (1ULL << 63);
    for (int i = 4; i < 8; i++) {
        acc = (acc >> 64) + t[i];
        c[i - 4] = (uint64_t)acc;
    }
}

static void glv_abs(uint64_t r[4], bool *neg, const uint64_t v[4]) {
    *neg = v[3] >> 63;
    if (*neg) glv_neg256(r, v);
    else memcpy(r, v, 32);
}

void zk_glv_split(const zk_glv_t *g, const uint64_t k[4], uint64_t k1[4], bool *neg1, uint64_t k2[4], bool *neg2) {
    if (k[2] == 0 && k[3] == 0) { /* k < 2^128 (witness bits, small values): k1 = k, k2 = 0 */
        memcpy(k1, k, 32);
        memset(k2, 0, 32);
        *neg1 = *neg2 = false;
        return;
    }
    uint64_t c1[4], c2[4], t[4], u[4];
    glv_round(c1, k, g->g1);
    if (g->neg_c1) glv_neg256(c1, c1);
    glv_round(c2, k, g->g2);
    if (g->neg_c2) glv_neg256(c2, c2);
    glv_mul256(t, c1, g->a1);
    glv_sub256(u, k, t);
    glv_mul256(t, c2, g->a2);
    glv_sub256(u, u, t);
    glv_abs(k1, neg1, u);
    glv_mul256(t, c1, g->b1);
    glv_neg256(u, t);
    glv_mul256(t, c2, g->b2);
    glv_sub256(u, u, t);
    glv_abs(k2, neg2, u);
}

/* Per group: the GLV constants and beta (Montgomery form) of phi(x, y) = (beta·x, y). Both groups of
 * both curves have it: on the twist that holds G2 the same map, with beta in Fq, is an endomorphism
 * too, and G2 (the curve's only subgroup of order r) is mapped into itself, multiplied by lambda or
 * lambda^2. For both curves it is lambda^2 with G1's beta and lambda with beta^2, so G2 takes beta^2
 * and the same split (tests/test_msm.c: phi(G) = lambda·G in every group). */
static const zk_glv_t *const bn_g1_glv = &zk_glv_bn, *const bls_g1_glv = &zk_glv_bls;
static const zk_glv_t *const bn_g2_glv = &zk_glv_bn, *const bls_g2_glv = &zk_glv_bls;
static const bn_fq_t bn_g1_glv_beta = {{0x71930c11d782e155ULL, 0xa6bb947cffbe3323ULL, 0xaa303344d4741444ULL,
                                        0x2c3b3f0d26594943ULL}};
static const bls_fq_t bls_g1_glv_beta = {{0xcd03c9e48671f071ULL, 0x5dab22461fcda5d2ULL, 0x587042afd3851b95ULL,
                                          0x8eb60ebe01bacb9eULL, 0x03f97d6e83d050d2ULL, 0x18f0206554638741ULL}};
static const bn_fq2_t bn_g2_glv_beta = {.c0 = {{0x3350c88e13e80b9cULL, 0x7dce557cdb5e56b9ULL, 0x6001b4b8b615564aULL,
                                                0x2682e617020217e0ULL}}}; /* beta^2 */
static const bls_fq2_t bls_g2_glv_beta = {.c0 = {{0x30f1361b798a64e8ULL, 0xf3b8ddab7ece5a2aULL, 0x16a8ca3ac61577f7ULL,
                                                  0xc26a2ff874fd029bULL, 0x3636b76660701c6eULL,
                                                  0x051ba4ab241b6160ULL}}}; /* beta^2 */

#define ZK_GROUP_TMPL "msm_tmpl.h"
#include "each_group.h"

/* Fixed-base MSM with window tables (zk/msm_fixed_tmpl.h). */
#include <errno.h>
#include <omp.h>
#include <stdint.h>

size_t zk_fixed_finite(const void *bases, size_t n, size_t point_size) {
    const uint8_t *b = bases;
    size_t m = 0;
    for (size_t i = 0; i < n; i++, b += point_size) {
        bool zero = true;
        for (size_t k = 0; k < point_size && zero; k++) zero = b[k] == 0;
        m += !zero;
    }
    return m;
}

size_t zk_fixed_bytes(const zk_fixed_plan_t *p, size_t n, size_t point_size) {
    return p->stored > 1 ? (size_t)(p->stored - 1) * n * point_size : 0;
}

/* The affine buckets of one pass stay within this. At 1 MiB (the core's L2 on the EPYC here) the
 * plans stopped at G1 c = 15, G2 c = 14 (bn128); 2 MiB lets G1 take c = 16 and G2 c = 15, and a
 * resident proof's core ran faster with every kernel set (build/bench/resident, pchain16 / pchain18,
 * core medians with tables, 1 MiB → 2 MiB: ifma 2^16 C 42.4 → 39.9, H 42.4 → 39.0 ms; 2^18 B2 140.5 →
 * 117.6, C 162.1 → 148.4; mulx 2^18 B2 255.8 → 245.2, C 319.2 → 299.3; bench/RESULTS.md): fewer
 * windows, and fewer points deferred for a bucket already in the batch, outweigh the misses. */
#define ZK_FIXED_BUCKET_BYTES ((size_t)2 << 20)
#define ZK_FIXED_C_MAX 16 /* digits are int16_t (zk_msm_digit) */

/* Wall cost in bucket additions, the one model of zk_msm_window and the plans: the plain MSM runs
 * its windows on the threads (each window n additions, the batch inversion's share 35/limit with
 * the MSM's batch limit, zk_msm_batch_limit, and a reduction of 2^(c-1) buckets at W_reduce
 * additions each); a table pass splits its n·rows pairs over the threads, each thread reducing its
 * own buckets once per pass. */
double zk_fixed_cost(const zk_fixed_plan_t *p, size_t n, size_t point_size, int threads) {
    double w_reduce = point_size >= 128 ? 3.6 : 1.8, T = threads < 1 ? 1 : threads;
    size_t nb = (size_t)1 << (p->c - 1);
    double add = (double)n * (1.0 + 35.0 / (double)zk_msm_batch_limit(nb)); /* one window's additions */
    if (p->stored <= 1)
        return (double)((p->nwin + (unsigned)T - 1) / (unsigned)T) * (add + w_reduce * (double)nb);
    return add * p->nwin / T + p->stride * w_reduce * (double)nb;
}

zk_fixed_plan_t zk_fixed_plan(size_t n, size_t point_size, size_t max_bytes, int threads) {
    unsigned pc = zk_msm_window(n, point_size, 255); /* at most as wide as the cache allows here, too */
    while (pc > 4 && ((size_t)1 << (pc - 1)) * point_size > ZK_FIXED_BUCKET_BYTES) pc--;
    unsigned pw = (255 + pc) / pc;
    zk_fixed_plan_t best = {.c = pc, .nwin = pw, .stride = pw, .stored = 1};
    double best_cost = zk_fixed_cost(&best, n, point_size, threads);
    for (unsigned c = 4; c <= ZK_FIXED_C_MAX; c++) {
        unsigned nwin = (255 + c) / c;
        if (c > 4 && ((size_t)1 << (c - 1)) * point_size > ZK_FIXED_BUCKET_BYTES) break;
        for (unsigned stride = 1; stride < nwin; stride++) {
            zk_fixed_plan_t p = {.c = c, .nwin = nwin, .stride = stride, .stored = (nwin + stride - 1) / stride};
            if (p.stored < 2 || zk_fixed_bytes(&p, n, point_size) > max_bytes) continue;
            double cost = zk_fixed_cost(&p, n, point_size, threads);
            if (cost < best_cost) best_cost = cost, best = p;
        }
    }
    return best;
}

void zk_order_largest_first(const double *cost, int k, int *order) {
    for (int i = 0; i < k; i++) order[i] = i;
    for (int i = 1; i < k; i++) /* insertion: k is a handful */
        for (int j = i; j > 0 && cost[order[j]] > cost[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
}

bool zk_msm_side_by_side(const double *cost1, const double *costT, int k, int threads, int *order) {
    double load[ZK_SIDE_MAX] = {0}, one_after_another = 0, side = 0;
    zk_order_largest_first(cost1, k, order);
    if (threads < 2 || k < 2 || k > ZK_SIDE_MAX) return false;
    int bins = threads < k ? threads : k;
    for (int i = 0; i < k; i++) {
        int least = 0;
        for (int b = 1; b < bins; b++)
            if (load[b] < load[least]) least = b;
        load[least] += cost1[order[i]];
        one_after_another += costT[order[i]];
    }
    for (int b = 0; b < bins; b++)
        if (load[b] > side) side = load[b];
    return side < one_after_another;
}

#define ZK_GROUP_TMPL "msm_fixed_tmpl.h"
#include "each_group.h"
