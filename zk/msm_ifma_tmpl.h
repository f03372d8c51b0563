/* The templates of the AVX-512 IFMA bucket additions and bucket reductions (zk/msm_ifma.h),
 * instantiated by zk/msm_ifma.c (BN254) and zk/msm_ifma_bls.c (BLS12-381): two files, so that a
 * build compiles them side by side. The arithmetic (52-bit limbs, Montgomery form unchanged) is
 * zk/ifma52.h. Only for x86-64 with GCC or Clang. */
#pragma once
#include <stdlib.h>

#include "curve.h"
#include "ifma52.h"
#include "msm_ifma.h"

/* Elements j0 .. j0+7 (SEQ; the lanes past k: 1 when one, else 0) of a contiguous array of WE-word
 * elements E, and x, y of the affine points j0 .. j0+7 (PTS; 2 WE words each), by gathers. */
#define IFMA_GATHER_LOADS(E, SEQ, PTS, V, WE)                                                                          \
    IFMA_FN void SEQ(E##_t *r, __mmask8 k, const uint64_t *base, size_t j0, bool one, const V##_mod_t *m) {           \
        E##_load(r, k, rec_idx(j0, WE), base, 0, one, m);                                                              \
    }                                                                                                                  \
    IFMA_FN void PTS(E##_t *x, E##_t *y, __mmask8 k, const uint64_t *base, size_t j0, const V##_mod_t *m) {           \
        __m512i pi = rec_idx(j0, 2 * (WE));                                                                            \
        E##_load(x, k, pi, base, 0, false, m);                                                                         \
        E##_load(y, k, pi, base, WE, false, m);                                                                        \
    }

/* The element types of the flush and reduction templates, for a field of W 64-bit words and its
 * vector arithmetic V (zk/ifma52.h): E1 the base field (G1), E2 = E1[u]/(u^2 + 1) (G2), eight per
 * vector. Loads and stores take the element's offset `off` in 64-bit words within records that idx
 * points to (idx in words); `one` fills the lanes that k leaves out with 1 instead of 0. to_words
 * and from_words convert between vectors and eight consecutive elements in memory. */
#define IFMA_ELEMS(E1, E2, V, W, MULFN)                                                                                \
    typedef V##_t E1##_t;                                                                                              \
    typedef struct {                                                                                                   \
        V##_t c0, c1;                                                                                                  \
    } E2##_t;                                                                                                          \
    IFMA_FN void E1##_load(E1##_t *r, __mmask8 k, __m512i idx, const uint64_t *base, int off, bool one,               \
                           const V##_mod_t *m) {                                                                       \
        __m512i fill[W];                                                                                               \
        for (int i = 0; i < (W); i++) fill[i] = _mm512_set1_epi64(one ? (long long)m->one[i] : 0);                     \
        V##_gather(r, k, idx, base, off, 0, fill, m);                                                                  \
    }                                                                                                                  \
    IFMA_FN void E1##_store(uint64_t *base, __mmask8 k, __m512i idx, int off, const E1##_t *a) {                       \
        V##_scatter(base, k, idx, off, a);                                                                             \
    }                                                                                                                  \
    IFMA_FN void E1##_mul(E1##_t *r, const E1##_t *a, const E1##_t *b, const V##_mod_t *m) { V##_mulr(r, a, b, m); }  \
    IFMA_FN void E1##_sqr(E1##_t *r, const E1##_t *a, const V##_mod_t *m) { V##_mulr(r, a, a, m); }                   \
    IFMA_FN void E1##_sub(E1##_t *r, const E1##_t *a, const E1##_t *b, const V##_mod_t *m) { V##_sub(r, a, b, m); }   \
    IFMA_FN void E1##_add(E1##_t *r, const E1##_t *a, const E1##_t *b, const V##_mod_t *m) { V##_add(r, a, b, m); }   \
    /* the flush's lazy forms (zk/ifma52.h): mulz < 2p for inputs < 2p, subz = a - b + p for b < p, red1 from       \
     * [0, 2p) and red2 from [0, 4p) to [0, p) */                                                                     \
    IFMA_FN void E1##_mulz(E1##_t *r, const E1##_t *a, const E1##_t *b, const V##_mod_t *m) { V##_mulr_lz(r, a, b, m); } \
    IFMA_FN void E1##_subz(E1##_t *r, const E1##_t *a, const E1##_t *b, const V##_mod_t *m) { V##_sub_lz(r, a, b, m); } \
    IFMA_FN void E1##_red1(E1##_t *r, const V##_mod_t *m) { V##_csub(r, r, m->p, m); }                               \
    IFMA_FN void E1##_red2(E1##_t *r, const V##_mod_t *m) {                                                            \
        V##_csub(r, r, m->p2, m);                                                                                      \
        V##_csub(r, r, m->p, m);                                                                                       \
    }                                                                                                                  \
    IFMA_FN __mmask8 E1##_is_zero(const E1##_t *a) { return V##_is_zero(a); }                                         \
    IFMA_FN void E1##_blend(E1##_t *r, __mmask8 k, const E1##_t *b) { V##_blend(r, k, b); }                           \
    /* the flush inverts in the base field: an element of Fq is its own "norm", and its inverse is the  \
     * norm's (E2 below: the norm a0^2 + a1^2 and the conjugate) */                                        \
    IFMA_FN void E1##_norm(E1##_t *n, const E1##_t *d, const V##_mod_t *m) { (void)m, *n = *d; }                    \
    IFMA_FN void E1##_adjoint(E1##_t *inv, const E1##_t *d, const E1##_t *ninv, const V##_mod_t *m) {                \
        (void)d, (void)m;                                                                                              \
        *inv = *ninv;                                                                                                  \
    }                                                                                                                  \
    /* lane l of a <-> w[W l .. W l + W) (the 64-bit words of element l) */                                            \
    IFMA_FN void E1##_to_words(uint64_t *w, const E1##_t *a) {                                                         \
        __m512i q[W];                                                                                                  \
        V##_to64(q, a);                                                                                                \
        for (int i = 0; i < (W); i++) {                                                                                \
            uint64_t t[8];                                                                                             \
            _mm512_storeu_si512(t, q[i]);                                                                              \
            for (int l = 0; l < 8; l++) w[(W)*l + i] = t[l];                                                           \
        }                                                                                                              \
    }                                                                                                                  \
    IFMA_FN void E1##_from_words(E1##_t *r, const uint64_t *w, const V##_mod_t *m) {                                   \
        __m512i q[W];                                                                                                  \
        for (int i = 0; i < (W); i++) {                                                                                \
            uint64_t t[8];                                                                                             \
            for (int l = 0; l < 8; l++) t[l] = w[(W)*l + i];                                                           \
            q[i] = _mm512_loadu_si512(t);                                                                              \
        }                                                                                                              \
        V##_from64(r, q, 0, m);                                                                                        \
    }                                                                                                                  \
    IFMA_FN void E2##_load(E2##_t *r, __mmask8 k, __m512i idx, const uint64_t *base, int off, bool one,               \
                           const V##_mod_t *m) {                                                                       \
        E1##_load(&r->c0, k, idx, base, off, one, m);                                                                  \
        E1##_load(&r->c1, k, idx, base, off + (W), false, m);                                                          \
    }                                                                                                                  \
    IFMA_FN void E2##_store(uint64_t *base, __mmask8 k, __m512i idx, int off, const E2##_t *a) {                       \
        V##_scatter(base, k, idx, off, &a->c0);                                                                        \
        V##_scatter(base, k, idx, off + (W), &a->c1);                                                                  \
    }                                                                                                                  \
    /* the flush's lazy forms over Fq2, each component as E1's: mulz < 2p for components < 2p, by       \
     * schoolbook products summed before one reduction each (mul2_lz, < 3p, then one conditional        \
     * subtraction of 2p): c0 = a0 b0 + a1 (2p - b1), c1 = a0 b1 + a1 b0 */                                  \
    MULFN void E2##_mulz(E2##_t *r, const E2##_t *a, const E2##_t *b, const V##_mod_t *m) {                         \
        V##_t b0s, b1s, nb1, nb1s, c0;                                                                               \
        V##_shl(&b0s, &b->c0, m);                                                                                    \
        V##_shl(&b1s, &b->c1, m);                                                                                    \
        V##_neg2_lz(&nb1, &b->c1, m);                                                                                \
        V##_shl(&nb1s, &nb1, m);                                                                                     \
        V##_mul2_lz(&c0, &a->c0, &b0s, &a->c1, &nb1s, m);                                                            \
        V##_mul2_lz(&r->c1, &a->c0, &b1s, &a->c1, &b0s, m);                                                          \
        V##_csub(&r->c0, &c0, m->p2, m);                                                                             \
        V##_csub(&r->c1, &r->c1, m->p2, m);                                                                          \
    }                                                                                                                  \
    /* c0 = a0 b0 − a1 b1, c1 = a0 b1 + a1 b0, reduced: E2_mulz and one conditional subtraction of p    \
     * each (Karatsuba's three products needed their sum and differences reduced, and cost more) */        \
    MULFN void E2##_mul(E2##_t *r, const E2##_t *a, const E2##_t *b, const V##_mod_t *m) {                          \
        E2##_mulz(r, a, b, m);                                                                                         \
        V##_csub(&r->c0, &r->c0, m->p, m);                                                                             \
        V##_csub(&r->c1, &r->c1, m->p, m);                                                                             \
    }                                                                                                                  \
    /* c0 = (a0 + a1)(a0 - a1), c1 = 2 a0 a1 */                                                                        \
    MULFN void E2##_sqr(E2##_t *r, const E2##_t *a, const V##_mod_t *m) {                                           \
        V##_t s, d, p;                                                                                                 \
        V##_add(&s, &a->c0, &a->c1, m);                                                                                \
        V##_sub(&d, &a->c0, &a->c1, m);                                                                                \
        V##_mulr(&p, &a->c0, &a->c1, m);                                                                               \
        V##_mulr(&r->c0, &s, &d, m);                                                                                   \
        V##_add(&r->c1, &p, &p, m);                                                                                    \
    }                                                                                                                  \
    IFMA_FN void E2##_sub(E2##_t *r, const E2##_t *a, const E2##_t *b, const V##_mod_t *m) {                          \
        V##_sub(&r->c0, &a->c0, &b->c0, m);                                                                            \
        V##_sub(&r->c1, &a->c1, &b->c1, m);                                                                            \
    }                                                                                                                  \
    IFMA_FN void E2##_add(E2##_t *r, const E2##_t *a, const E2##_t *b, const V##_mod_t *m) {                          \
        V##_add(&r->c0, &a->c0, &b->c0, m);                                                                            \
        V##_add(&r->c1, &a->c1, &b->c1, m);                                                                            \
    }                                                                                                                  \
    IFMA_FN void E2##_subz(E2##_t *r, const E2##_t *a, const E2##_t *b, const V##_mod_t *m) {                         \
        E1##_subz(&r->c0, &a->c0, &b->c0, m);                                                                          \
        E1##_subz(&r->c1, &a->c1, &b->c1, m);                                                                          \
    }                                                                                                                  \
    IFMA_FN void E2##_red1(E2##_t *r, const V##_mod_t *m) { E1##_red1(&r->c0, m), E1##_red1(&r->c1, m); }            \
    /* 1/d = conj(d) / (d0^2 + d1^2): the norm (< 2p for d < p: both squares in one reduction) is what   \
     * the flush inverts, in Fq; the inverse is then conj(d)·(1/norm), two Fq products, each < 2p */       \
    MULFN void E2##_norm(E1##_t *n, const E2##_t *d, const V##_mod_t *m) {                                          \
        V##_t d0s, d1s;                                                                                                \
        V##_shl(&d0s, &d->c0, m);                                                                                    \
        V##_shl(&d1s, &d->c1, m);                                                                                    \
        V##_mul2_lz(n, &d->c0, &d0s, &d->c1, &d1s, m);                                                               \
    }                                                                                                                  \
    MULFN void E2##_adjoint(E2##_t *inv, const E2##_t *d, const E1##_t *ninv, const V##_mod_t *m) {                  \
        V##_t nd1;                                                                                                     \
        V##_neg2_lz(&nd1, &d->c1, m); /* 2p - d1 for -d1: an operand <= 2p */                                         \
        V##_mulr_lz(&inv->c0, &d->c0, ninv, m);                                                                      \
        V##_mulr_lz(&inv->c1, &nd1, ninv, m);                                                                        \
    }                                                                                                                  \
    IFMA_FN void E2##_red2(E2##_t *r, const V##_mod_t *m) { E1##_red2(&r->c0, m), E1##_red2(&r->c1, m); }            \
    IFMA_FN __mmask8 E2##_is_zero(const E2##_t *a) { return V##_is_zero(&a->c0) & V##_is_zero(&a->c1); }              \
    IFMA_FN void E2##_blend(E2##_t *r, __mmask8 k, const E2##_t *b) {                                                  \
        V##_blend(&r->c0, k, &b->c0);                                                                                  \
        V##_blend(&r->c1, k, &b->c1);                                                                                  \
    }                                                                                                                  \
    IFMA_FN void E2##_to_words(uint64_t *w, const E2##_t *a) {                                                         \
        uint64_t t0[8 * (W)], t1[8 * (W)];                                                                             \
        E1##_to_words(t0, &a->c0);                                                                                     \
        E1##_to_words(t1, &a->c1);                                                                                     \
        for (int l = 0; l < 8; l++)                                                                                    \
            memcpy(w + 2 * (W)*l, t0 + (W)*l, 8 * (W)), memcpy(w + 2 * (W)*l + (W), t1 + (W)*l, 8 * (W));              \
    }                                                                                                                  \
    IFMA_FN void E2##_from_words(E2##_t *r, const uint64_t *w, const V##_mod_t *m) {                                   \
        uint64_t t0[8 * (W)], t1[8 * (W)];                                                                             \
        for (int l = 0; l < 8; l++)                                                                                    \
            memcpy(t0 + (W)*l, w + 2 * (W)*l, 8 * (W)), memcpy(t1 + (W)*l, w + 2 * (W)*l + (W), 8 * (W));              \
        E1##_from_words(&r->c0, t0, m);                                                                                \
        E1##_from_words(&r->c1, t1, m);                                                                                \
    }                                                                                                                  \
    IFMA_GATHER_LOADS(E2, E2##_load_seq, E2##_load_pts, V, 2 * (W))                                                   \
    IFMA_GATHER_LOADS(E1, E1##_gload_seq, E1##_gload_pts, V, W)

/* x·w for lanes x < 2^32 and w < 2^32 (record indices and offsets): one vpmuludq (AVX512F's
 * 32 x 32 -> 64-bit product of each lane's low half; AVX512DQ's vpmullq is not assumed). A sum of
 * shifts over w's bits was a 32-step loop that GCC kept as a loop: 3 % of the G1 flush's samples. */
IFMA_FN __m512i mul_w(__m512i x, unsigned w) { return _mm512_mul_epu32(x, _mm512_set1_epi64((long long)w)); }
/* The word offsets of records j0 .. j0+7 of WR words each. */
IFMA_FN __m512i rec_idx(size_t j0, unsigned wr) {
    return mul_w(_mm512_add_epi64(_mm512_set1_epi64((long long)j0), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0)), wr);
}

#define IFMA_MAXV (ZK_IFMA_BATCH_MAX / 8)

/* The flush for element type E (e1, e2) of W 64-bit words, the group's affine type AFF and the
 * scalar field F (for the one inversion of the eight lane products). Element j sits in lane j % 8 of
 * vector j / 8; lanes past n hold den = 1 and are neither read from nor written to memory. */
#define IFMA_FLUSH(NAME, E, W, AFF, F, V, FQ, INV, EB)                                                                             \
    __attribute__((target("avx512f,avx512ifma"))) void NAME(void *bucket_v, const uint32_t *bidx, const void *pt_v,    \
                                                            const void *den_v, unsigned n) {                           \
        uint64_t *bucket = bucket_v; /* the records as 64-bit words (both types are arrays of them) */                 \
        const uint64_t *pt = pt_v, *den = den_v;                                                                       \
        _Static_assert(sizeof(AFF) == 16 * (W) && sizeof(F##_t) == 8 * (W), "layout");                                 \
        V##_mod_t m;                                                                                                   \
        V##_mod_init(&m, FQ##_P.l, INV, FQ##_ONE.l);                                                                   \
        unsigned nv = (n + 7) / 8;                                                                                     \
        /* the inversion runs over the norms of den in the base field EB (for G1 den itself) */                       \
        EB##_t pre[IFMA_MAXV], nrm[IFMA_MAXV], acc;                                                                    \
        E##_t t;                                                                                                       \
        const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);                                                 \
        EB##_load(&acc, 0, lane, den, 0, true, &m); /* all lanes 1 */                                                  \
        for (unsigned v = 0; v < nv; v++) {                                                                            \
            unsigned left = n - 8 * v;                                                                                 \
            __mmask8 k = left >= 8 ? 0xff : (__mmask8)((1u << left) - 1);                                              \
            pre[v] = acc;                                                                                              \
            E##_load_seq(&t, k, den, 8 * (size_t)v, true, &m);                                                         \
            E##_norm(&nrm[v], &t, &m);                                                                                 \
            EB##_mulz(&acc, &acc, &nrm[v], &m); /* < 2p, as everything below until red1/red2 */                        \
        }                                                                                                              \
        EB##_red1(&acc, &m);                                                                                           \
        FQ##_t lanes[8], tmp[8];                                                                                       \
        EB##_to_words((uint64_t *)lanes, &acc);                                                                        \
        FQ##_batch_inv(lanes, tmp, 8);                                                                                 \
        EB##_from_words(&acc, (const uint64_t *)lanes, &m); /* the inverses of the lane products */                    \
        for (unsigned v = nv; v-- > 0;) {                                                                              \
            unsigned left = n - 8 * v;                                                                                 \
            __mmask8 k = left >= 8 ? 0xff : (__mmask8)((1u << left) - 1);                                              \
            __m512i bi = mul_w(                                                                         \
                _mm512_cvtepu32_epi64(_mm512_castsi512_si256(_mm512_maskz_loadu_epi32((__mmask16)k, bidx + 8 * v))),   \
                2 * (W));                                                                                              \
            E##_t inv, d, bx, by, px, py, lam, x3, y3;                                                                 \
            EB##_t ninv;                                                                                               \
            E##_load_seq(&d, k, den, 8 * (size_t)v, true, &m);                                                         \
            EB##_mulz(&ninv, &acc, &pre[v], &m); /* 1 / norm(den) */                                                   \
            EB##_mulz(&acc, &acc, &nrm[v], &m);                                                                        \
            E##_adjoint(&inv, &d, &ninv, &m); /* 1 / den */                                                            \
            E##_load(&bx, k, bi, bucket, 0, false, &m);                                                                \
            E##_load(&by, k, bi, bucket, W, false, &m);                                                                \
            E##_load_pts(&px, &py, k, pt, 8 * (size_t)v, &m);                                                          \
            /* lambda = (py - by) / (px - bx), x3 = lambda^2 - bx - px, y3 = lambda (bx - x3) - by; the bounds of     \
             * the lazy forms in brackets (p x p: px, py, bx, by < p) */                                               \
            E##_subz(&t, &py, &by, &m);        /* [2p) */                                                              \
            E##_mulz(&lam, &t, &inv, &m);      /* [2p) */                                                              \
            E##_mulz(&x3, &lam, &lam, &m);     /* [2p) */                                                              \
            E##_subz(&x3, &x3, &bx, &m);       /* [3p) */                                                              \
            E##_subz(&x3, &x3, &px, &m);       /* [4p) */                                                              \
            E##_red2(&x3, &m);                 /* [p) */                                                               \
            E##_subz(&t, &bx, &x3, &m);        /* [2p) */                                                              \
            E##_mulz(&y3, &lam, &t, &m);       /* [2p) */                                                              \
            E##_subz(&y3, &y3, &by, &m);       /* [3p) */                                                              \
            E##_red2(&y3, &m);                 /* [p) */                                                               \
            E##_store(bucket, k, bi, 0, &x3);                                                                          \
            E##_store(bucket, k, bi, W, &y3);                                                                          \
        }                                                                                                              \
    }

/* Eight XYZZ points per vector (lane l: one point of eight), for the bucket reduction. */
#define IFMA_XYZZ(E, V)                                                                                                \
    typedef struct {                                                                                                   \
        E##_t x, y, zz, zzz;                                                                                           \
    } E##_xyzz_t;                                                                                                      \
    /* the end of both additions: x3 = R^2 - PPP - 2 Q, y3 = R (Q - x3) - ys */                                        \
    IFMA_FN void E##_xyzz_xy(E##_xyzz_t *t, const E##_t *R, const E##_t *PPP, const E##_t *Q, const E##_t *ys,         \
                             const V##_mod_t *m) {                                                                     \
        E##_t u;                                                                                                       \
        E##_sqr(&u, R, m);                                                                                             \
        E##_sub(&u, &u, PPP, m);                                                                                       \
        E##_sub(&u, &u, Q, m);                                                                                         \
        E##_sub(&t->x, &u, Q, m);                                                                                      \
        E##_sub(&u, Q, &t->x, m);                                                                                      \
        E##_mul(&u, &u, R, m);                                                                                         \
        E##_sub(&t->y, &u, ys, m);                                                                                     \
    }

/* The bucket reduction sum_i (i+1)·(bucket[i] + side[i]) (zk/msm_tmpl.h: msm_reduce) with the nb
 * buckets cut into eight runs of L = nb/8, one per lane: lane l keeps the running sum S_l and the
 * weighted sum A_l of its run (from the top down, as the scalar reduction does), so that the result
 * is sum_l (A_l + l·L·S_l). The vector XYZZ additions (madd-2008-s, add-2008-s) cover the usual
 * case; a lane whose addition is exceptional (equal x: a doubling or a cancellation) or whose bucket
 * has a side accumulator is done by the scalar group law, and infinity is a lane mask. */
#define IFMA_REDUCE(NAME, E, W, G, F, V, FQ, INV)                                                                                  \
    IFMA_FN void NAME##_get(G##_xyzz_t r[8], const E##_xyzz_t *v) {                                                    \
        uint64_t w[4][8 * (W)];                                                                                        \
        E##_to_words(w[0], &v->x), E##_to_words(w[1], &v->y), E##_to_words(w[2], &v->zz);                              \
        E##_to_words(w[3], &v->zzz);                                                                                   \
        for (int l = 0; l < 8; l++) {                                                                                  \
            memcpy(&r[l].x, w[0] + (W)*l, 8 * (W)), memcpy(&r[l].y, w[1] + (W)*l, 8 * (W));                            \
            memcpy(&r[l].zz, w[2] + (W)*l, 8 * (W)), memcpy(&r[l].zzz, w[3] + (W)*l, 8 * (W));                         \
        }                                                                                                              \
    }                                                                                                                  \
    IFMA_FN void NAME##_put(E##_xyzz_t *v, const G##_xyzz_t r[8], const V##_mod_t *m) {                                \
        uint64_t w[4][8 * (W)];                                                                                        \
        for (int l = 0; l < 8; l++) {                                                                                  \
            memcpy(w[0] + (W)*l, &r[l].x, 8 * (W)), memcpy(w[1] + (W)*l, &r[l].y, 8 * (W));                            \
            memcpy(w[2] + (W)*l, &r[l].zz, 8 * (W)), memcpy(w[3] + (W)*l, &r[l].zzz, 8 * (W));                         \
        }                                                                                                              \
        E##_from_words(&v->x, w[0], m), E##_from_words(&v->y, w[1], m), E##_from_words(&v->zz, w[2], m);               \
        E##_from_words(&v->zzz, w[3], m);                                                                              \
    }                                                                                                                  \
    __attribute__((target("avx512f,avx512ifma"))) void NAME(void *out_v, const void *bucket_v, const void *side_v,     \
                                                            const uint8_t *state, size_t nb) {                         \
        const uint64_t *bucket = bucket_v;                                                                             \
        const G##_aff_t *baff = bucket_v;                                                                              \
        const G##_xyzz_t *side = side_v;                                                                               \
        G##_xyzz_t *out = out_v;                                                                                       \
        V##_mod_t m;                                                                                                   \
        V##_mod_init(&m, FQ##_P.l, INV, FQ##_ONE.l);                                                                   \
        const size_t L = nb / 8;                                                                                       \
        const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);                                                 \
        const __m512i start = mul_w(lane, L); /* L is a power of two */                                 \
        E##_t one;                                                                                                     \
        E##_load(&one, 0, lane, bucket, 0, true, &m);                                                                  \
        E##_xyzz_t S = {one, one, one, one}, A = S, T;                                                                 \
        __mmask8 sinf = 0xff, ainf = 0xff;                                                                             \
        G##_xyzz_t sl[8], al[8];                                                                                       \
        for (size_t t = 0; t < L; t++) {                                                                               \
            size_t off = L - 1 - t;                                                                                    \
            __mmask8 occ = 0, sd = 0, exc = 0;                                                                         \
            for (int l = 0; l < 8; l++) {                                                                              \
                uint8_t st = state[(size_t)l * L + off];                                                               \
                occ |= (__mmask8)((st & 1u) << l);                                                                     \
                sd |= (__mmask8)(((st >> 2) & 1u) << l);                                                               \
            }                                                                                                          \
            if (occ) { /* S += bucket */                                                                               \
                __m512i bi =                                                                                           \
                    mul_w(_mm512_add_epi64(start, _mm512_set1_epi64((long long)off)), 2 * (W));         \
                E##_t bx, by, u, P, R, PP, PPP, Q;                                                                     \
                E##_load(&bx, occ, bi, bucket, 0, false, &m);                                                          \
                E##_load(&by, occ, bi, bucket, W, false, &m);                                                          \
                E##_mul(&u, &bx, &S.zz, &m);                                                                           \
                E##_sub(&P, &u, &S.x, &m);                                                                             \
                E##_mul(&u, &by, &S.zzz, &m);                                                                          \
                E##_sub(&R, &u, &S.y, &m);                                                                             \
                E##_sqr(&PP, &P, &m);                                                                                  \
                E##_mul(&PPP, &P, &PP, &m);                                                                            \
                E##_mul(&Q, &S.x, &PP, &m);                                                                            \
                E##_mul(&T.zz, &S.zz, &PP, &m);                                                                        \
                E##_mul(&T.zzz, &S.zzz, &PPP, &m);                                                                     \
                E##_mul(&u, &S.y, &PPP, &m);                                                                           \
                E##_xyzz_xy(&T, &R, &PPP, &Q, &u, &m);                                                                 \
                __mmask8 pz = E##_is_zero(&P), upd = occ & ~sinf & ~pz, set = occ & sinf;                              \
                exc = occ & ~sinf & pz;                                                                                \
                E##_blend(&S.x, upd, &T.x), E##_blend(&S.y, upd, &T.y);                                                \
                E##_blend(&S.zz, upd, &T.zz), E##_blend(&S.zzz, upd, &T.zzz);                                          \
                E##_blend(&S.x, set, &bx), E##_blend(&S.y, set, &by);                                                  \
                E##_blend(&S.zz, set, &one), E##_blend(&S.zzz, set, &one);                                             \
                sinf &= (__mmask8)~set;                                                                                \
            }                                                                                                          \
            if (exc | sd) { /* the scalar group law for these lanes */                                                 \
                NAME##_get(sl, &S);                                                                                    \
                for (int l = 0; l < 8; l++) {                                                                          \
                    size_t i = (size_t)l * L + off;                                                                    \
                    if (!((exc | sd) >> l & 1)) continue;                                                              \
                    if (sinf >> l & 1) G##_xyzz_set_inf(&sl[l]);                                                       \
                    if (exc >> l & 1) G##_xyzz_add_aff(&sl[l], &sl[l], &baff[i]);                                      \
                    if (sd >> l & 1) G##_xyzz_add(&sl[l], &sl[l], &side[i]);                                           \
                    if (G##_xyzz_is_inf(&sl[l])) {                                                                     \
                        sinf |= (__mmask8)(1u << l);                                                                   \
                        F##_one(&sl[l].x),                                                                             \
                            sl[l].y = sl[l].zz = sl[l].zzz = sl[l].x; /* any value: the mask says inf */               \
                    } else {                                                                                           \
                        sinf &= (__mmask8) ~(1u << l);                                                                 \
                    }                                                                                                  \
                }                                                                                                      \
                NAME##_put(&S, sl, &m);                                                                                \
            }                                                                                                          \
            __mmask8 live = (__mmask8)~sinf;                                                                           \
            if (live) { /* A += S */                                                                                   \
                E##_t u1, u2, s1, s2, P, R, PP, PPP, Q, u;                                                             \
                E##_mul(&u1, &A.x, &S.zz, &m);                                                                         \
                E##_mul(&u2, &S.x, &A.zz, &m);                                                                         \
                E##_mul(&s1, &A.y, &S.zzz, &m);                                                                        \
                E##_mul(&s2, &S.y, &A.zzz, &m);                                                                        \
                E##_sub(&P, &u2, &u1, &m);                                                                             \
                E##_sub(&R, &s2, &s1, &m);                                                                             \
                E##_sqr(&PP, &P, &m);                                                                                  \
                E##_mul(&PPP, &P, &PP, &m);                                                                            \
                E##_mul(&Q, &u1, &PP, &m);                                                                             \
                E##_mul(&u, &A.zz, &S.zz, &m);                                                                         \
                E##_mul(&T.zz, &u, &PP, &m);                                                                           \
                E##_mul(&u, &A.zzz, &S.zzz, &m);                                                                       \
                E##_mul(&T.zzz, &u, &PPP, &m);                                                                         \
                E##_mul(&s1, &s1, &PPP, &m);                                                                           \
                E##_xyzz_xy(&T, &R, &PPP, &Q, &s1, &m);                                                                \
                __mmask8 pz = E##_is_zero(&P), upd = live & ~ainf & ~pz, set = live & ainf;                            \
                __mmask8 exc2 = live & ~ainf & pz;                                                                     \
                E##_blend(&A.x, upd, &T.x), E##_blend(&A.y, upd, &T.y);                                                \
                E##_blend(&A.zz, upd, &T.zz), E##_blend(&A.zzz, upd, &T.zzz);                                          \
                E##_blend(&A.x, set, &S.x), E##_blend(&A.y, set, &S.y);                                                \
                E##_blend(&A.zz, set, &S.zz), E##_blend(&A.zzz, set, &S.zzz);                                          \
                ainf &= (__mmask8)~set;                                                                                \
                if (exc2) {                                                                                            \
                    NAME##_get(al, &A);                                                                                \
                    NAME##_get(sl, &S);                                                                                \
                    for (int l = 0; l < 8; l++) {                                                                      \
                        if (!(exc2 >> l & 1)) continue;                                                                \
                        G##_xyzz_add(&al[l], &al[l], &sl[l]);                                                          \
                        if (G##_xyzz_is_inf(&al[l])) {                                                                 \
                            ainf |= (__mmask8)(1u << l);                                                               \
                            F##_one(&al[l].x), al[l].y = al[l].zz = al[l].zzz = al[l].x;                               \
                        }                                                                                              \
                    }                                                                                                  \
                    NAME##_put(&A, al, &m);                                                                            \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
        NAME##_get(sl, &S);                                                                                            \
        NAME##_get(al, &A);                                                                                            \
        G##_xyzz_t total, run, wsum;                                                                                   \
        G##_xyzz_set_inf(&total), G##_xyzz_set_inf(&run), G##_xyzz_set_inf(&wsum);                                     \
        for (int l = 8; l-- > 0;) {                                                                                    \
            if (sinf >> l & 1) G##_xyzz_set_inf(&sl[l]);                                                               \
            if (ainf >> l & 1) G##_xyzz_set_inf(&al[l]);                                                               \
            G##_xyzz_add(&total, &total, &al[l]);                                                                      \
            if (l > 0) G##_xyzz_add(&run, &run, &sl[l]), G##_xyzz_add(&wsum, &wsum, &run); /* sum_l l·S_l */          \
        }                                                                                                              \
        for (size_t k = 1; k < L; k <<= 1) G##_xyzz_dbl(&wsum, &wsum);                                                 \
        G##_xyzz_add(out, &total, &wsum);                                                                              \
    }

/* Everything of one curve: the flush and the reduction of G1 (E1) and G2 (E2), Fq in W words with
 * its vector arithmetic V, FQ its prefix and INV its -p^-1 mod 2^64. */
#define IFMA_CURVE(C, E1, E2, V, W, FQ, INV)                                                                           \
    IFMA_FLUSH(zk_ifma_##C##_g1_flush, E1, W, C##_g1_aff_t, FQ, V, FQ, INV, E1)                                        \
    IFMA_FLUSH(zk_ifma_##C##_g2_flush, E2, 2 * (W), C##_g2_aff_t, FQ##2, V, FQ, INV, E1)                               \
    IFMA_XYZZ(E1, V)                                                                                                   \
    IFMA_XYZZ(E2, V)                                                                                                   \
    IFMA_REDUCE(zk_ifma_##C##_g1_reduce, E1, W, C##_g1, FQ, V, FQ, INV)                                                \
    IFMA_REDUCE(zk_ifma_##C##_g2_reduce, E2, 2 * (W), C##_g2, FQ##2, V, FQ, INV)
