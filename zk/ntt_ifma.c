/* AVX-512 IFMA NTT stages over Fr of either curve (zk/ntt_ifma.h), eight butterflies per vector with
 * the arithmetic of zk/ifma52.h; compiled for baseline x86-64 with function-level target attributes. */
#include "ntt_ifma.h"

#include <stdbool.h>
#include <stdlib.h>

const zk_ifma_fr_mod_t zk_ifma_bn_fr = {BN_FR_P, BN_FR_ONE, BN_FR_INV};
const zk_ifma_fr_mod_t zk_ifma_bls_fr = {BLS_FR_P, BLS_FR_ONE, BLS_FR_INV};

void zk_ifma_fr_to_lanes(void *av, size_t n) {
    bn_fr_t *a = av;
    for (size_t b = 0; b < n; b += 8) {
        uint64_t t[32], *w = a[b].l;
        memcpy(t, w, sizeof(t));
        for (int e = 0; e < 8; e++)
            for (int k = 0; k < 4; k++) w[8 * k + e] = t[4 * e + k];
    }
}

void zk_ifma_fr_from_lanes(void *av, size_t n) {
    bn_fr_t *a = av;
    for (size_t b = 0; b < n; b += 8) {
        uint64_t t[32], *w = a[b].l;
        memcpy(t, w, sizeof(t));
        for (int e = 0; e < 8; e++)
            for (int k = 0; k < 4; k++) w[4 * e + k] = t[8 * k + e];
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include "ifma52.h"

IFMA_FN void fr_mod(v52_mod_t *m, const zk_ifma_fr_mod_t *f) { v52_mod_init(m, f->p, f->inv, f->one); }

/* the block of 8 elements at word w (lanes order) */
IFMA_FN void blk_load(v52_t *r, const uint64_t *w, const v52_mod_t *m) {
    __m512i q[4];
    for (int k = 0; k < 4; k++) q[k] = _mm512_loadu_si512(w + 8 * k);
    v52_from64(r, q, 0, m);
}
IFMA_FN void blk_store(uint64_t *w, const v52_t *a) {
    __m512i q[4];
    v52_to64(q, a);
    for (int k = 0; k < 4; k++) _mm512_storeu_si512(w + 8 * k, q[k]);
}
/* tw[idx[l]] for the eight lanes (twiddles in natural layout) */
IFMA_FN void tw_gather(v52_t *r, const bn_fr_t *tw, __m512i idx, const v52_mod_t *m) {
    const __m512i z = _mm512_setzero_si512(), fill[4] = {z, z, z, z};
    v52_gather(r, 0xff, _mm512_slli_epi64(idx, 2), tw[0].l, 0, 0, fill, m);
}
IFMA_FN void v52_perm(v52_t *r, const v52_t *a, __m512i idx) {
    for (int i = 0; i < 5; i++) r->l[i] = _mm512_permutexvar_epi64(idx, a->l[i]);
}

#define NTT_FN __attribute__((target("avx512f,avx512ifma")))

/* One radix-2 stage on blocks [lo, hi): DIF (x, y) -> (x + y, (x − y)·w), DIT (x, y) -> (x + y·w,
 * x − y·w); dit is a constant at each call, so each entry point is its own loop. */
static inline __attribute__((always_inline, target("avx512f,avx512ifma"))) void
fr_stage(const zk_ifma_fr_mod_t *f, void *av, size_t len, size_t stride, const void *twv, size_t lo, size_t hi, bool dit) {
    bn_fr_t *a = av;
    const bn_fr_t *tw = twv;
    v52_mod_t m;
    fr_mod(&m, f);
    unsigned sh = (unsigned)__builtin_ctzll(len);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), vs = _mm512_set1_epi64((long long)stride);
    for (size_t i = lo; i < hi; i += 8) {
        size_t blk = i >> sh, j = i & (len - 1), xo = (blk << (sh + 1)) + j;
        uint64_t *x = a[xo].l, *y = a[xo + len].l;
        v52_t X, Y, T, S, D;
        blk_load(&X, x, &m);
        blk_load(&Y, y, &m);
        __m512i ti = _mm512_add_epi64(_mm512_set1_epi64((long long)j), lane);
        tw_gather(&T, tw, _mm512_mullox_epi64(ti, vs), &m);
        if (dit) v52_mulr(&Y, &Y, &T, &m);
        v52_add(&S, &X, &Y, &m);
        v52_sub(&D, &X, &Y, &m);
        if (!dit) v52_mulr(&D, &D, &T, &m);
        blk_store(x, &S);
        blk_store(y, &D);
    }
}

NTT_FN void zk_ifma_fr_dif_stage(const zk_ifma_fr_mod_t *f, void *av, size_t len, size_t stride, const void *twv,
                                  size_t lo, size_t hi) {
    fr_stage(f, av, len, stride, twv, lo, hi, false);
}

NTT_FN void zk_ifma_fr_dit_stage(const zk_ifma_fr_mod_t *f, void *av, size_t len, size_t stride, const void *twv,
                                  size_t lo, size_t hi) {
    fr_stage(f, av, len, stride, twv, lo, hi, true);
}

/* Two radix-2 stages in one pass (radix 2^2), half-lengths len and len/2 (len/2 >= 8), for the quads
 * [lo, hi) of n/4: quad i of block i / (len/2) (2·len elements) at offset j = i % (len/2) holds
 * x0..x3 = elements j, j + len/2, j + len, j + 3len/2 of the block; T1 = tw[j·s], T2 = tw[(j +
 * len/2)·s] (the len stage, stride s) and T3 = tw[2j·s] (the len/2 stage, stride 2s). DIF runs the
 * len stage first, DIT the len/2 one; either way each element is loaded, converted and stored once
 * for the two stages instead of twice. */
static inline __attribute__((always_inline, target("avx512f,avx512ifma"))) void
fr_stage2(const zk_ifma_fr_mod_t *f, void *av, size_t len, size_t stride, const void *twv, size_t lo, size_t hi,
          bool dit) {
    bn_fr_t *a = av;
    const bn_fr_t *tw = twv;
    v52_mod_t m;
    fr_mod(&m, f);
    size_t h = len / 2;
    unsigned sh = (unsigned)__builtin_ctzll(h);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), vs = _mm512_set1_epi64((long long)stride);
    for (size_t i = lo; i < hi; i += 8) {
        size_t blk = i >> sh, j = i & (h - 1), o = (blk << (sh + 2)) + j;
        uint64_t *p0 = a[o].l, *p1 = a[o + h].l, *p2 = a[o + len].l, *p3 = a[o + len + h].l;
        v52_t X0, X1, X2, X3, T1, T2, T3, S, D;
        blk_load(&X0, p0, &m);
        blk_load(&X1, p1, &m);
        blk_load(&X2, p2, &m);
        blk_load(&X3, p3, &m);
        __m512i ti = _mm512_mullox_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)j), lane), vs);
        tw_gather(&T1, tw, ti, &m);
        tw_gather(&T2, tw, _mm512_add_epi64(ti, _mm512_set1_epi64((long long)(h * stride))), &m);
        tw_gather(&T3, tw, _mm512_add_epi64(ti, ti), &m);
        if (!dit) {
            v52_add(&S, &X0, &X2, &m), v52_sub(&D, &X0, &X2, &m), X0 = S, v52_mulr(&X2, &D, &T1, &m);
            v52_add(&S, &X1, &X3, &m), v52_sub(&D, &X1, &X3, &m), X1 = S, v52_mulr(&X3, &D, &T2, &m);
            v52_add(&S, &X0, &X1, &m), v52_sub(&D, &X0, &X1, &m), X0 = S, v52_mulr(&X1, &D, &T3, &m);
            v52_add(&S, &X2, &X3, &m), v52_sub(&D, &X2, &X3, &m), X2 = S, v52_mulr(&X3, &D, &T3, &m);
        } else {
            v52_mulr(&X1, &X1, &T3, &m), v52_add(&S, &X0, &X1, &m), v52_sub(&X1, &X0, &X1, &m), X0 = S;
            v52_mulr(&X3, &X3, &T3, &m), v52_add(&S, &X2, &X3, &m), v52_sub(&X3, &X2, &X3, &m), X2 = S;
            v52_mulr(&X2, &X2, &T1, &m), v52_add(&S, &X0, &X2, &m), v52_sub(&X2, &X0, &X2, &m), X0 = S;
            v52_mulr(&X3, &X3, &T2, &m), v52_add(&S, &X1, &X3, &m), v52_sub(&X3, &X1, &X3, &m), X1 = S;
        }
        blk_store(p0, &X0);
        blk_store(p1, &X1);
        blk_store(p2, &X2);
        blk_store(p3, &X3);
    }
}

NTT_FN void zk_ifma_fr_stage2(const zk_ifma_fr_mod_t *f, void *av, size_t len, size_t stride, const void *twv,
                               size_t lo, size_t hi, bool dit) {
    if (dit) /* a constant in each inlined copy: two loops */
        fr_stage2(f, av, len, stride, twv, lo, hi, true);
    else
        fr_stage2(f, av, len, stride, twv, lo, hi, false);
}

/* Inside a block: lane l pairs with lane l ^ h; the low lane of a pair holds x, the high one y, and
 * both use the twiddle tw[(l & (h - 1))·stride]. */
IFMA_FN void small_setup(v52_t *T, __m512i *perm, __mmask8 *high, unsigned h, size_t stride, const bn_fr_t *tw,
                         const v52_mod_t *m) {
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    *perm = _mm512_xor_si512(lane, _mm512_set1_epi64(h));
    *high = _mm512_test_epi64_mask(lane, _mm512_set1_epi64(h));
    __m512i j = _mm512_and_si512(lane, _mm512_set1_epi64(h - 1));
    tw_gather(T, tw, _mm512_mullox_epi64(j, _mm512_set1_epi64((long long)stride)), m);
}

NTT_FN void zk_ifma_fr_dif_small(const zk_ifma_fr_mod_t *f, void *av, size_t n, size_t stride4, const void *twv) {
    bn_fr_t *a = av;
    const bn_fr_t *tw = twv;
    v52_mod_t m;
    fr_mod(&m, f);
    v52_t T4, T2;
    __m512i p4, p2, p1;
    __mmask8 h4, h2, h1;
    small_setup(&T4, &p4, &h4, 4, stride4, tw, &m);
    small_setup(&T2, &p2, &h2, 2, 2 * stride4, tw, &m);
    {
        v52_t T1;
        small_setup(&T1, &p1, &h1, 1, 4 * stride4, tw, &m); /* twiddle 1: no product */
    }
    for (size_t b = 0; b < n; b += 8) {
        uint64_t *w = a[b].l;
        v52_t V, P, S, D;
        blk_load(&V, w, &m);
        /* x' = x + y in the low lane, y' = (x - y)·tw in the high lane */
        v52_perm(&P, &V, p4);
        v52_add(&S, &V, &P, &m);
        v52_sub(&D, &P, &V, &m);
        v52_mulr(&D, &D, &T4, &m);
        for (int i = 0; i < 5; i++) V.l[i] = _mm512_mask_blend_epi64(h4, S.l[i], D.l[i]);
        v52_perm(&P, &V, p2);
        v52_add(&S, &V, &P, &m);
        v52_sub(&D, &P, &V, &m);
        v52_mulr(&D, &D, &T2, &m);
        for (int i = 0; i < 5; i++) V.l[i] = _mm512_mask_blend_epi64(h2, S.l[i], D.l[i]);
        v52_perm(&P, &V, p1);
        v52_add(&S, &V, &P, &m);
        v52_sub(&D, &P, &V, &m);
        for (int i = 0; i < 5; i++) V.l[i] = _mm512_mask_blend_epi64(h1, S.l[i], D.l[i]);
        blk_store(w, &V);
    }
}

NTT_FN void zk_ifma_fr_dit_small(const zk_ifma_fr_mod_t *f, void *av, size_t n, size_t stride1, const void *twv) {
    bn_fr_t *a = av;
    const bn_fr_t *tw = twv;
    v52_mod_t m;
    fr_mod(&m, f);
    v52_t T1, T2, T4;
    __m512i p1, p2, p4;
    __mmask8 h1, h2, h4;
    small_setup(&T1, &p1, &h1, 1, stride1, tw, &m);
    small_setup(&T2, &p2, &h2, 2, stride1 / 2, tw, &m);
    small_setup(&T4, &p4, &h4, 4, stride1 / 4, tw, &m);
    (void)T1;
    for (size_t b = 0; b < n; b += 8) {
        uint64_t *w = a[b].l;
        v52_t V, P, Q, S, D;
        blk_load(&V, w, &m);
        /* half-length 1 (twiddle 1): x + y, x - y */
        v52_perm(&P, &V, p1);
        v52_add(&S, &V, &P, &m);
        v52_sub(&D, &P, &V, &m);
        for (int i = 0; i < 5; i++) V.l[i] = _mm512_mask_blend_epi64(h1, S.l[i], D.l[i]);
        /* v = y·tw (meaningful in the high lane): x' = x + v (low), y' = x - v (high) */
        v52_mulr(&Q, &V, &T2, &m);
        v52_perm(&P, &Q, p2);
        v52_add(&S, &V, &P, &m);
        v52_perm(&P, &V, p2);
        v52_sub(&D, &P, &Q, &m);
        for (int i = 0; i < 5; i++) V.l[i] = _mm512_mask_blend_epi64(h2, S.l[i], D.l[i]);
        v52_mulr(&Q, &V, &T4, &m);
        v52_perm(&P, &Q, p4);
        v52_add(&S, &V, &P, &m);
        v52_perm(&P, &V, p4);
        v52_sub(&D, &P, &Q, &m);
        for (int i = 0; i < 5; i++) V.l[i] = _mm512_mask_blend_epi64(h4, S.l[i], D.l[i]);
        blk_store(w, &V);
    }
}
/* Lanes-blocks [q0, q0 + chains·cl) of a times their coset factors: chain c runs over the blocks
 * q0 + c·cl + k, k < cl, its factors (one per lane) starting at f0[8c .. 8c + 8) and multiplied
 * after block q by step[t], t the trailing ones of q. The chains' products are independent, so
 * they overlap instead of each waiting on the one before. */
NTT_FN void zk_ifma_fr_coset_scale(const zk_ifma_fr_mod_t *f, void *av, size_t q0, size_t cl, unsigned chains,
                                   const void *f0v, const void *stepv) {
    bn_fr_t *a = av;
    const bn_fr_t *f0 = f0v, *step = stepv;
    v52_mod_t m;
    fr_mod(&m, f);
    v52_t F[ZK_IFMA_SCALE_CHAINS];
    for (unsigned c = 0; c < chains; c++) {
        __m512i q[4];
        for (int k = 0; k < 4; k++) /* f0 in natural layout: word k of the eight elements */
            q[k] = _mm512_i64gather_epi64(_mm512_set_epi64(28 + k, 24 + k, 20 + k, 16 + k, 12 + k, 8 + k, 4 + k, k),
                                          (const long long *)f0[8 * c].l, 8);
        v52_from64(&F[c], q, 0, &m);
    }
    for (size_t k = 0; k < cl; k++)
        for (unsigned c = 0; c < chains; c++) {
            size_t qb = q0 + c * cl + k;
            uint64_t *w = a[8 * qb].l;
            v52_t X;
            blk_load(&X, w, &m);
            v52_mulr(&X, &X, &F[c], &m);
            blk_store(w, &X);
            if (k + 1 < cl) {
                const bn_fr_t *st = &step[__builtin_ctzll(~(uint64_t)qb)];
                __m512i q[4];
                for (int i = 0; i < 4; i++) q[i] = _mm512_set1_epi64((long long)st->l[i]);
                v52_t S;
                v52_from64(&S, q, 0, &m);
                v52_mulr(&F[c], &F[c], &S, &m);
            }
        }
}
/* a = a·b (op 0) or a = (a - b)·2^-(64·4), the standard form of a - b (op 1), on the lanes-blocks
 * [q0, q1) of two arrays in the same order. */
static inline __attribute__((always_inline, target("avx512f,avx512ifma"))) void
fr_pointwise(const zk_ifma_fr_mod_t *f, void *av, const void *bv, size_t q0, size_t q1, int op) {
    bn_fr_t *a = av;
    const bn_fr_t *b = bv;
    v52_mod_t m;
    fr_mod(&m, f);
    const __m512i z = _mm512_setzero_si512();
    const __m512i one64[4] = {_mm512_set1_epi64(1), z, z, z}; /* the integer 1: M(x, 1) = x·R^-1 */
    v52_t ONE;
    v52_from64(&ONE, one64, 0, &m);
    for (size_t q = q0; q < q1; q++) {
        v52_t X, Y;
        blk_load(&X, a[8 * q].l, &m);
        blk_load(&Y, b[8 * q].l, &m);
        if (op == 0) {
            v52_mulr(&X, &X, &Y, &m);
        } else {
            v52_sub(&X, &X, &Y, &m);
            v52_mulr(&X, &X, &ONE, &m);
        }
        blk_store(a[8 * q].l, &X);
    }
}
NTT_FN void zk_ifma_fr_mul_lanes(const zk_ifma_fr_mod_t *f, void *a, const void *b, size_t q0, size_t q1) {
    fr_pointwise(f, a, b, q0, q1, 0);
}
NTT_FN void zk_ifma_fr_sub_std_lanes(const zk_ifma_fr_mod_t *f, void *a, const void *b, size_t q0, size_t q1) {
    fr_pointwise(f, a, b, q0, q1, 1);
}
#else
void zk_ifma_fr_stage2(const zk_ifma_fr_mod_t *f, void *a, size_t len, size_t stride, const void *tw, size_t lo,
                       size_t hi, bool dit) {
    (void)f, (void)a, (void)len, (void)stride, (void)tw, (void)lo, (void)hi, (void)dit;
    abort(); /* never selected: zk/kernels.c offers the ifma set only on x86-64 */
}
void zk_ifma_fr_mul_lanes(const zk_ifma_fr_mod_t *f, void *a, const void *b, size_t q0, size_t q1) {
    (void)f, (void)a, (void)b, (void)q0, (void)q1;
    abort(); /* never selected: zk/kernels.c offers the ifma set only on x86-64 */
}
void zk_ifma_fr_sub_std_lanes(const zk_ifma_fr_mod_t *f, void *a, const void *b, size_t q0, size_t q1) {
    zk_ifma_fr_mul_lanes(f, a, b, q0, q1);
}
void zk_ifma_fr_coset_scale(const zk_ifma_fr_mod_t *f, void *a, size_t q0, size_t cl, unsigned chains, const void *f0,
                            const void *step) {
    (void)f, (void)a, (void)q0, (void)cl, (void)chains, (void)f0, (void)step;
    abort(); /* never selected: zk/kernels.c offers the ifma set only on x86-64 */
}
void zk_ifma_fr_dif_stage(const zk_ifma_fr_mod_t *f, void *a, size_t len, size_t stride, const void *tw, size_t lo,
                          size_t hi) {
    (void)f, (void)a, (void)len, (void)stride, (void)tw, (void)lo, (void)hi;
    abort(); /* never selected: zk/kernels.c offers the ifma set only on x86-64 */
}
void zk_ifma_fr_dit_stage(const zk_ifma_fr_mod_t *f, void *a, size_t len, size_t stride, const void *tw, size_t lo,
                          size_t hi) {
    zk_ifma_fr_dif_stage(f, a, len, stride, tw, lo, hi);
}
void zk_ifma_fr_dif_small(const zk_ifma_fr_mod_t *f, void *a, size_t n, size_t stride4, const void *tw) {
    zk_ifma_fr_dif_stage(f, a, n, stride4, tw, 0, 0);
}
void zk_ifma_fr_dit_small(const zk_ifma_fr_mod_t *f, void *a, size_t n, size_t stride1, const void *tw) {
    zk_ifma_fr_dif_stage(f, a, n, stride1, tw, 0, 0);
}
#endif
