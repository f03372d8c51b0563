/* AVX2 batch-affine bucket additions for BN254 G1 (zk/msm_avx2.h), four additions per vector in
 * 29-bit limbs (zk/avx2_29.h).
 *
 * Compiled for every x86-64 build with function-level target attributes only, so the rest of the
 * binary never contains an AVX2 instruction; zk/kernels.c selects it only where cpuid reports AVX2
 * and XGETBV says the OS saves the ymm state. */
#include "msm_avx2.h"

#include <stdlib.h>
#include <time.h>

#include "curve.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "avx2_29.h"

#define AVX2_MAXV (ZK_AVX2_BATCH_MAX / 4)

/* The flush of zk/msm_ifma_tmpl.h's IFMA_FLUSH, four lanes: element j in lane j % 4 of vector j / 4;
 * lanes past n hold den = 1 and are neither read from nor written to memory. One inversion (of the
 * four lane products, by the scalar batch inversion) for the whole batch. */
__attribute__((target("avx2"))) void zk_avx2_bn_g1_flush(void *bucket_v, const uint32_t *bidx, const void *pt_v,
                                                         const void *den_v, unsigned n) {
    bn_g1_aff_t *bucket = bucket_v;
    const bn_g1_aff_t *pt = pt_v;
    const bn_fq_t *den = den_v;
    if (n == 0) return;
    v29_mod_t m;
    v29_mod_init(&m, bn_fq_P.l, BN_FQ_INV, bn_fq_ONE.l);
    unsigned nv = (n + 3) / 4;
    /* Products by v29_mul_lz, M(x, y) = x·y·2^-261: M(x, 2^5·y) is the field product x·y·2^-256 for y
     * shifted as an integer (den loaded with shl) or for y = 2^5·z mod p (the inverses below), so
     * that only lambda needs a shift of its own (v29_shl). */
    v29_t pre[AVX2_MAXV], acc, t;
    const uint64_t *e[4];
    /* den of the lanes past n: 1 */
    const uint64_t *one = bn_fq_ONE.l;
    for (unsigned l = 0; l < 4; l++) e[l] = one;
    v29_load4(&acc, e, 0, &m);
    for (unsigned v = 0; v < nv; v++) {
        pre[v] = acc; /* the product of den over the vectors before v, lane by lane */
        for (unsigned l = 0; l < 4; l++) e[l] = 4 * v + l < n ? den[4 * v + l].l : one;
        v29_load4(&t, e, 1, &m);
        v29_mul_lz(&acc, &acc, &t, &m); /* < 2p, as everything below until red1/red2 */
    }
    v29_red1(&acc, &m);
    bn_fq_t lanes[4], tmp[4];
    {
        uint64_t *w[4] = {lanes[0].l, lanes[1].l, lanes[2].l, lanes[3].l};
        v29_store4(w, 4, &acc);
        bn_fq_batch_inv(lanes, tmp, 4); /* the lane products are not zero: no den is */
        bn_fq_t k10 = bn_fq_ONE;
        for (int i = 0; i < 10; i++) bn_fq_dbl(&k10, &k10);
        for (int l = 0; l < 4; l++) bn_fq_mul(&lanes[l], &lanes[l], &k10); /* 2^10 / product */
        const uint64_t *r[4] = {lanes[0].l, lanes[1].l, lanes[2].l, lanes[3].l};
        v29_load4(&acc, r, 0, &m);
    }
    for (unsigned v = nv; v-- > 0;) {
        unsigned left = n - 4 * v < 4 ? n - 4 * v : 4;
        v29_t d, inv, bx, by, px, py, lam, lams, x3, y3;
        const uint64_t *bxe[4], *bye[4], *pxe[4], *pye[4];
        uint64_t *bxo[4], *byo[4];
        for (unsigned l = 0; l < 4; l++) {
            unsigned j = 4 * v + (l < left ? l : 0); /* lanes past n repeat lane 0: computed, never stored */
            bn_g1_aff_t *b = &bucket[bidx[j]];
            bxe[l] = b->x.l, bye[l] = b->y.l, bxo[l] = b->x.l, byo[l] = b->y.l;
            pxe[l] = pt[j].x.l, pye[l] = pt[j].y.l;
            e[l] = l < left ? den[j].l : one;
        }
        /* acc = 2^10 / (the product of den over the vectors up to v) */
        v29_load4(&d, e, 1, &m);
        v29_mul_lz(&inv, &pre[v], &acc, &m); /* 2^5 / den */
        v29_mul_lz(&acc, &acc, &d, &m);
        v29_load4(&bx, bxe, 0, &m);
        v29_load4(&by, bye, 0, &m);
        v29_load4(&px, pxe, 0, &m);
        v29_load4(&py, pye, 0, &m);
        /* lambda = (py - by) / (px - bx), x3 = lambda^2 - bx - px, y3 = lambda (bx - x3) - by; the
         * bounds of the lazy forms in brackets (px, py, bx, by < p) */
        v29_subz(&t, &py, &by, &m);     /* [2p) */
        v29_mul_lz(&lam, &t, &inv, &m); /* [2p) */
        v29_shl(&lams, &lam, &m);
        v29_mul_lz(&x3, &lam, &lams, &m); /* [2p) */
        v29_subz(&x3, &x3, &bx, &m);    /* [3p) */
        v29_subz(&x3, &x3, &px, &m);    /* [4p) */
        v29_red2(&x3, &m);              /* [p) */
        v29_subz(&t, &bx, &x3, &m);     /* [2p) */
        v29_mul_lz(&y3, &t, &lams, &m); /* [2p) */
        v29_subz(&y3, &y3, &by, &m);    /* [3p) */
        v29_red2(&y3, &m);              /* [p) */
        v29_store4(bxo, left, &x3);
        v29_store4(byo, left, &y3);
    }
}

#ifdef ZK_X86_KERNELS
#include "fp_x86_64.h"

static double probe_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Eight chains of products each way, PROBE_STEPS long: two vectors of four lanes (v29_mul_lz,
 * the flush's product) against eight MULX products (the scalar flush's); the least time of
 * PROBE_ROUNDS alternating rounds each. About 0.2 ms in all on the CPU this was written on. */
#define PROBE_STEPS 256
#define PROBE_ROUNDS 3
__attribute__((target("avx2"), noinline)) static double probe_vec(uint64_t *sink) {
    v29_mod_t m;
    v29_mod_init(&m, bn_fq_P.l, BN_FQ_INV, bn_fq_ONE.l);
    const uint64_t *e[4] = {bn_fq_ONE.l, bn_fq_P.l, bn_fq_ONE.l, bn_fq_P.l};
    v29_t a, b, c;
    v29_load4(&a, e, 0, &m);
    v29_load4(&b, e, 0, &m);
    v29_load4(&c, e, 1, &m);
    double t0 = probe_now();
    for (int i = 0; i < PROBE_STEPS; i++) {
        v29_mul_lz(&a, &a, &c, &m);
        v29_mul_lz(&b, &b, &c, &m);
    }
    double t = probe_now() - t0;
    uint64_t w[4][4], *o[4] = {w[0], w[1], w[2], w[3]};
    v29_store4(o, 4, &a);
    *sink += w[0][0];
    v29_store4(o, 4, &b);
    *sink += w[1][1];
    return t;
}
__attribute__((noinline)) static double probe_mulx(uint64_t *sink) {
    uint64_t x[8][4], k[4];
    for (int l = 0; l < 8; l++)
        for (int i = 0; i < 4; i++) x[l][i] = bn_fq_ONE.l[i];
    for (int i = 0; i < 4; i++) k[i] = bn_fq_ONE.l[i] ^ 1;
    double t0 = probe_now();
    for (int i = 0; i < PROBE_STEPS; i++)
        for (int l = 0; l < 8; l++) zk_x86_mont_mul4(x[l], x[l], k, bn_fq_P.l, BN_FQ_INV);
    double t = probe_now() - t0;
    for (int l = 0; l < 8; l++) *sink += x[l][0];
    return t;
}

int zk_avx2_probe(void) {
    volatile uint64_t keep;
    uint64_t sink = 0;
    double tv = 1e30, tm = 1e30;
    for (int r = 0; r < PROBE_ROUNDS; r++) {
        double a = probe_vec(&sink), b = probe_mulx(&sink);
        if (a < tv) tv = a;
        if (b < tm) tm = b;
    }
    keep = sink;
    (void)keep;
    /* the flush's other work (loads, carries, conditional subtractions) costs more in vectors than in
     * words, so the products must win by a margin: 0.8 (the flush measured 0.84 of the scalar flush
     * where the products measured 0.67) */
    return tv < 0.8 * tm;
}
#else
int zk_avx2_probe(void) { return 0; }
#endif

#else
int zk_avx2_probe(void) { return 0; }
void zk_avx2_bn_g1_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n) {
    (void)bucket, (void)bidx, (void)pt, (void)den, (void)n;
    abort(); /* never selected: zk/kernels.c offers the avx2 set only on x86-64 */
}
#endif
