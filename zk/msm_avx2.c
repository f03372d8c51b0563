/* AVX2 batch-affine bucket additions for BN254 G1 and G2 (zk/msm_avx2.h), four additions per vector
 * in 29-bit limbs (zk/avx2_29.h).
 *
 * Compiled for every x86-64 build with function-level target attributes only, so the rest of the
 * binary never contains an AVX2 instruction; zk/kernels.c selects it only where cpuid reports AVX2
 * and XGETBV says the OS saves the ymm state. */
#include "msm_avx2.h"

#include <stdlib.h>

#include "curve.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "avx2_29.h"

#define AVX2_MAXV (ZK_AVX2_BATCH_MAX / 4)

/* Products by v29_mul_lz, M(x, y) = x·y·2^-261: M(x, 2^5·y) is the field product x·y·2^-256 for y
 * shifted as an integer (v29_shl, or loaded with shl) or for y = 2^5·z mod p, which the inverses
 * below are: the batch's inverse is kept times 2^10, so that M(prefix, it) is 2^5 / den (or / its
 * norm). Prefix products and norms wait in word form (v29_to64: 128 bytes a vector), not in limbs. */

/* The elements of the four lanes (lanes past `left` repeat lane 0: computed, never stored). */
#define LANE_PTRS(PTR, EXPR)                                                                                           \
    for (unsigned l = 0; l < 4; l++) {                                                                                 \
        unsigned j = 4 * v + (l < left ? l : 0);                                                                       \
        PTR[l] = (EXPR);                                                                                               \
    }

/* (x3, y3) = (bx, by) + (px, py) in affine coordinates, given invo = 1/(px - bx) in operand form:
 * lambda = (py - by)·invo, x3 = lambda^2 - bx - px, y3 = lambda (bx - x3) - by, below p for
 * px, py, bx, by < p (the lazy forms' bounds in brackets). One body for G1 (T an Fq vector, its
 * operand form the shifted value) and G2 (Fq2, three shifted forms). */
#define AVX2_AFFINE_ADD(NAME, T, OPT, OP, MUL, SUBZ, RED2)                                                             \
    AVX2_FN void NAME(T *x3, T *y3, const T *bx, const T *by, const T *px, const T *py, const OPT *invo,               \
                      const v29_mod_t *m) {                                                                            \
        T t, lam;                                                                                                      \
        OPT lamo;                                                                                                      \
        SUBZ(&t, py, by, m);      /* [2p) */                                                                           \
        MUL(&lam, &t, invo, m);   /* [2p) */                                                                           \
        OP(&lamo, &lam, m);                                                                                            \
        MUL(x3, &lam, &lamo, m);  /* [2p) */                                                                           \
        SUBZ(x3, x3, bx, m);      /* [3p) */                                                                           \
        SUBZ(x3, x3, px, m);      /* [4p) */                                                                           \
        RED2(x3, m);              /* [p) */                                                                            \
        SUBZ(&t, bx, x3, m);      /* [2p) */                                                                           \
        MUL(y3, &t, &lamo, m);    /* [2p) */                                                                           \
        SUBZ(y3, y3, by, m);      /* [3p) */                                                                           \
        RED2(y3, m);              /* [p) */                                                                            \
    }
AVX2_AFFINE_ADD(e1_affine_add, v29_t, v29_t, v29_shl, v29_mul_lz, v29_subz, v29_red2)

/* acc (the product of every lane's values, < 2p) -> 2^10 / acc, by the scalar batch inversion of the
 * four lanes (none is zero: no den is). */
AVX2_FN void lanes_inverse(v29_t *acc, const v29_mod_t *m) {
    v29_red1(acc, m);
    bn_fq_t lanes[4], tmp[4];
    uint64_t *w[4] = {lanes[0].l, lanes[1].l, lanes[2].l, lanes[3].l};
    v29_store4(w, 4, acc);
    bn_fq_batch_inv(lanes, tmp, 4);
    bn_fq_t k10 = bn_fq_ONE;
    for (int i = 0; i < 10; i++) bn_fq_dbl(&k10, &k10);
    for (int l = 0; l < 4; l++) bn_fq_mul(&lanes[l], &lanes[l], &k10);
    const uint64_t *r[4] = {lanes[0].l, lanes[1].l, lanes[2].l, lanes[3].l};
    v29_load4(acc, r, 0, m);
}

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
    v29_mod_init(&m, bn_fq_P.l, BN_FQ_INV);
    unsigned nv = (n + 3) / 4;
    __m256i pre[AVX2_MAXV][4]; /* the product of den over the vectors before v, lane by lane */
    v29_t acc, t;
    const uint64_t *e[4], *one = bn_fq_ONE.l;
    for (unsigned l = 0; l < 4; l++) e[l] = one;
    v29_load4(&acc, e, 0, &m);
    for (unsigned v = 0; v < nv; v++) {
        v29_to64(pre[v], &acc);
        for (unsigned l = 0; l < 4; l++) e[l] = 4 * v + l < n ? den[4 * v + l].l : one; /* den 1 past n */
        v29_load4(&t, e, 1, &m);
        v29_mul_lz(&acc, &acc, &t, &m); /* < 2p, as everything below until red1/red2 */
    }
    lanes_inverse(&acc, &m);
    for (unsigned v = nv; v-- > 0;) {
        unsigned left = n - 4 * v < 4 ? n - 4 * v : 4;
        v29_t d, inv, bx, by, px, py, x3, y3;
        const uint64_t *bxe[4], *bye[4], *pxe[4], *pye[4];
        uint64_t *bxo[4], *byo[4];
        LANE_PTRS(bxo, bucket[bidx[j]].x.l)
        LANE_PTRS(byo, bucket[bidx[j]].y.l)
        LANE_PTRS(pxe, pt[j].x.l)
        LANE_PTRS(pye, pt[j].y.l)
        LANE_PTRS(e, l < left ? den[j].l : one)
        for (unsigned l = 0; l < 4; l++) bxe[l] = bxo[l], bye[l] = byo[l];
        /* acc = 2^10 / (the product of den over the vectors up to v) */
        v29_load4(&d, e, 1, &m);
        v29_from64(&t, pre[v], 0, &m);
        v29_mul_lz(&inv, &t, &acc, &m); /* 2^5 / den */
        v29_mul_lz(&acc, &acc, &d, &m);
        v29_load4(&bx, bxe, 0, &m);
        v29_load4(&by, bye, 0, &m);
        v29_load4(&px, pxe, 0, &m);
        v29_load4(&py, pye, 0, &m);
        e1_affine_add(&x3, &y3, &bx, &by, &px, &py, &inv, &m);
        v29_store4(bxo, left, &x3);
        v29_store4(byo, left, &y3);
    }
}

/* Fq2 = Fq[u]/(u^2 + 1) in two limb vectors. */
typedef struct {
    v29_t c0, c1;
} v29x2_t;

/* The operand forms of b for v29x2_mul: 2^5·b0, 2^5·b1, 2^5·(2p - b1). */
typedef struct {
    v29_t s0, s1, n1;
} v29x2_op_t;

AVX2_FN void v29x2_op(v29x2_op_t *o, const v29x2_t *b, const v29_mod_t *m) {
    v29_t nb1;
    v29_neg2(&nb1, &b->c1, m);
    v29_shl(&o->s0, &b->c0, m);
    v29_shl(&o->s1, &b->c1, m);
    v29_shl(&o->n1, &nb1, m);
}

/* r = a·b for components below 2p: c0 = a0 b0 + a1 (2p - b1), c1 = a0 b1 + a1 b0, each one reduction
 * (< 3p) and one conditional subtraction of 2p: below 2p. */
static __attribute__((noinline, target("avx2"))) void v29x2_mul(v29x2_t *r, const v29x2_t *a, const v29x2_op_t *b, const v29_mod_t *m) {
    v29_t c0;
    v29_mul2_lz(&c0, &a->c0, &b->s0, &a->c1, &b->n1, m);
    v29_mul2_lz(&r->c1, &a->c0, &b->s1, &a->c1, &b->s0, m);
    v29_csub(&r->c0, &c0, m->cp2, m);
    v29_csub(&r->c1, &r->c1, m->cp2, m);
}

AVX2_FN void v29x2_subz(v29x2_t *r, const v29x2_t *a, const v29x2_t *b, const v29_mod_t *m) {
    v29_subz(&r->c0, &a->c0, &b->c0, m);
    v29_subz(&r->c1, &a->c1, &b->c1, m);
}

AVX2_FN void v29x2_red2(v29x2_t *r, const v29_mod_t *m) {
    v29_red2(&r->c0, m);
    v29_red2(&r->c1, m);
}

/* The Fq2 elements at p[0..3], one a lane. */
AVX2_FN void v29x2_load(v29x2_t *r, const bn_fq2_t *const p[4], const v29_mod_t *m) {
    const uint64_t *e0[4] = {p[0]->c0.l, p[1]->c0.l, p[2]->c0.l, p[3]->c0.l};
    const uint64_t *e1[4] = {p[0]->c1.l, p[1]->c1.l, p[2]->c1.l, p[3]->c1.l};
    v29_load4(&r->c0, e0, 0, m);
    v29_load4(&r->c1, e1, 0, m);
}

AVX2_FN void v29x2_store(bn_fq2_t *const p[4], unsigned left, const v29x2_t *a) {
    uint64_t *e0[4] = {p[0]->c0.l, p[1]->c0.l, p[2]->c0.l, p[3]->c0.l};
    uint64_t *e1[4] = {p[0]->c1.l, p[1]->c1.l, p[2]->c1.l, p[3]->c1.l};
    v29_store4(e0, left, &a->c0);
    v29_store4(e1, left, &a->c1);
}

AVX2_AFFINE_ADD(e2_affine_add, v29x2_t, v29x2_op_t, v29x2_op, v29x2_mul, v29x2_subz, v29x2_red2)

/* The G2 flush: as the G1 flush, with the batch inverting the norms d0^2 + d1^2 of den in Fq (one
 * reduction for both squares), and 1/den = conj(den)/norm. */
__attribute__((target("avx2"))) void zk_avx2_bn_g2_flush(void *bucket_v, const uint32_t *bidx, const void *pt_v,
                                                         const void *den_v, unsigned n) {
    bn_g2_aff_t *bucket = bucket_v;
    const bn_g2_aff_t *pt = pt_v;
    const bn_fq2_t *den = den_v;
    if (n == 0) return;
    v29_mod_t m;
    v29_mod_init(&m, bn_fq_P.l, BN_FQ_INV);
    unsigned nv = (n + 3) / 4;
    __m256i pre[AVX2_MAXV][4], nrm[AVX2_MAXV][4]; /* prefix products of the norms, and the norms */
    static const bn_fq2_t one2 = {{BN_FQ_ONE}, {{0}}};
    const bn_fq2_t *e[4];
    v29_t acc, t, ns;
    const uint64_t *ones[4] = {bn_fq_ONE.l, bn_fq_ONE.l, bn_fq_ONE.l, bn_fq_ONE.l};
    v29_load4(&acc, ones, 0, &m);
    for (unsigned v = 0; v < nv; v++) {
        v29x2_t d;
        v29x2_op_t ds;
        v29_to64(pre[v], &acc);
        for (unsigned l = 0; l < 4; l++) e[l] = 4 * v + l < n ? &den[4 * v + l] : &one2; /* den 1 past n */
        v29x2_load(&d, e, &m);
        v29_shl(&ds.s0, &d.c0, &m);
        v29_shl(&ds.s1, &d.c1, &m);
        v29_mul2_lz(&t, &d.c0, &ds.s0, &d.c1, &ds.s1, &m); /* d0^2 + d1^2, < 3p */
        v29_csub(&t, &t, m.cp2, &m);                       /* < 2p */
        v29_to64(nrm[v], &t);
        v29_shl(&ns, &t, &m);
        v29_mul_call(&acc, &acc, &ns, &m);
    }
    lanes_inverse(&acc, &m);
    for (unsigned v = nv; v-- > 0;) {
        unsigned left = n - 4 * v < 4 ? n - 4 * v : 4;
        bn_fq2_t *bxo[4], *byo[4];
        const bn_fq2_t *bxe[4], *bye[4], *pxe[4], *pye[4];
        LANE_PTRS(bxo, &bucket[bidx[j]].x)
        LANE_PTRS(byo, &bucket[bidx[j]].y)
        for (unsigned l = 0; l < 4; l++) bxe[l] = bxo[l], bye[l] = byo[l];
        LANE_PTRS(pxe, &pt[j].x)
        LANE_PTRS(pye, &pt[j].y)
        LANE_PTRS(e, l < left ? &den[j] : &one2)
        v29x2_t d, inv, bx, by, px, py, x3, y3;
        v29_t ninv;
        v29x2_load(&d, e, &m);
        v29_from64(&t, pre[v], 0, &m);
        v29_mul_call(&ninv, &t, &acc, &m); /* 2^5 / norm */
        v29_from64(&ns, nrm[v], 1, &m);
        v29_mul_call(&acc, &acc, &ns, &m);
        v29_neg2(&t, &d.c1, &m); /* 2p - d1 for -d1 */
        v29_mul_call(&inv.c0, &d.c0, &ninv, &m);
        v29_mul_call(&inv.c1, &t, &ninv, &m); /* 1 / den, components < 2p */
        v29x2_load(&bx, bxe, &m);
        v29x2_load(&by, bye, &m);
        v29x2_load(&px, pxe, &m);
        v29x2_load(&py, pye, &m);
        v29x2_op_t invo;
        v29x2_op(&invo, &inv, &m);
        e2_affine_add(&x3, &y3, &bx, &by, &px, &py, &invo, &m);
        v29x2_store(bxo, left, &x3);
        v29x2_store(byo, left, &y3);
    }
}

#else
void zk_avx2_bn_g1_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n) {
    (void)bucket, (void)bidx, (void)pt, (void)den, (void)n;
    abort(); /* never selected: zk/kernels.c offers the avx2 set only on x86-64 */
}
void zk_avx2_bn_g2_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n) {
    zk_avx2_bn_g1_flush(bucket, bidx, pt, den, n);
}
#endif
