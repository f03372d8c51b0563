/* AVX-512 IFMA batch-affine bucket additions and bucket reductions for G1 and G2 of BN254
 * (zk/msm_ifma.h), eight field elements per vector in 52-bit limbs, from the templates of
 * zk/msm_ifma_tmpl.h.
 *
 * Compiled for every x86-64 build with function-level target attributes only, so the rest of the
 * binary never contains an AVX-512 instruction; zk/kernels.c selects it only where cpuid reports
 * AVX512F + AVX512IFMA and XGETBV says the OS saves the zmm state. */
#include "msm_ifma.h"

#include <stdlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include "msm_ifma_tmpl.h"

/* Fq in 4 words, five limbs, everything inlined */
IFMA_ELEMS(e1, e2, v52, 4, IFMA_FN)

/* 8 consecutive elements of 4 words held as two per vector (q[i] = elements 2i, 2i+1) -> limb
 * vectors (limb k of the eight in r[k]): an 8x4 transpose by two rounds of permutes. */
IFMA_FN void tr8x4(__m512i r[4], const __m512i q[4]) {
    const __m512i ia = _mm512_set_epi64(13, 9, 5, 1, 12, 8, 4, 0), ib = _mm512_set_epi64(15, 11, 7, 3, 14, 10, 6, 2);
    const __m512i lo = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0), hi = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
    __m512i t0 = _mm512_permutex2var_epi64(q[0], ia, q[1]), t1 = _mm512_permutex2var_epi64(q[0], ib, q[1]);
    __m512i t2 = _mm512_permutex2var_epi64(q[2], ia, q[3]), t3 = _mm512_permutex2var_epi64(q[2], ib, q[3]);
    r[0] = _mm512_permutex2var_epi64(t0, lo, t2);
    r[1] = _mm512_permutex2var_epi64(t0, hi, t2);
    r[2] = _mm512_permutex2var_epi64(t1, lo, t3);
    r[3] = _mm512_permutex2var_epi64(t1, hi, t3);
}
/* Fq elements j0 .. j0+7 of a contiguous array (the lanes past k: 1 when one, else 0). */
IFMA_FN void e1_load_seq(e1_t *r, __mmask8 k, const uint64_t *base, size_t j0, bool one, const v52_mod_t *m) {
    __m512i q[4], t[4];
    for (int i = 0; i < 4; i++) q[i] = _mm512_loadu_si512(base + 4 * j0 + 8 * i);
    tr8x4(t, q);
    for (int i = 0; i < 4; i++)
        t[i] = _mm512_mask_blend_epi64(k, _mm512_set1_epi64(one ? (long long)m->one[i] : 0), t[i]);
    v52_from64(r, t, 0, m);
}
/* x and y of the G1 points j0 .. j0+7 of a contiguous array (8 words each). */
IFMA_FN void e1_load_pts(e1_t *x, e1_t *y, __mmask8 k, const uint64_t *base, size_t j0, const v52_mod_t *m) {
    const __m512i xs = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0), ys = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
    __m512i p[8], qx[4], qy[4], t[4];
    for (int i = 0; i < 8; i++) p[i] = _mm512_loadu_si512(base + 8 * (j0 + (size_t)i));
    for (int i = 0; i < 4; i++) {
        qx[i] = _mm512_permutex2var_epi64(p[2 * i], xs, p[2 * i + 1]);
        qy[i] = _mm512_permutex2var_epi64(p[2 * i], ys, p[2 * i + 1]);
    }
    tr8x4(t, qx);
    for (int i = 0; i < 4; i++) t[i] = _mm512_maskz_mov_epi64(k, t[i]);
    v52_from64(x, t, 0, m);
    tr8x4(t, qy);
    for (int i = 0; i < 4; i++) t[i] = _mm512_maskz_mov_epi64(k, t[i]);
    v52_from64(y, t, 0, m);
}

IFMA_CURVE(bn, e1, e2, v52, 4, bn_fq, BN_FQ_INV)

#else /* the stubs of both curves (zk/msm_ifma_bls.c is empty here) */
void zk_ifma_bn_g1_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n) {
    (void)bucket, (void)bidx, (void)pt, (void)den, (void)n;
    abort(); /* never selected: zk/kernels.c offers the ifma set only on x86-64 */
}
void zk_ifma_bn_g2_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n) {
    zk_ifma_bn_g1_flush(bucket, bidx, pt, den, n);
}
void zk_ifma_bls_g1_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n) {
    zk_ifma_bn_g1_flush(bucket, bidx, pt, den, n);
}
void zk_ifma_bls_g2_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n) {
    zk_ifma_bn_g1_flush(bucket, bidx, pt, den, n);
}
void zk_ifma_bn_g1_reduce(void *out, const void *bucket, const void *side, const uint8_t *state, size_t nb) {
    (void)out, (void)bucket, (void)side, (void)state, (void)nb;
    abort();
}
void zk_ifma_bn_g2_reduce(void *out, const void *bucket, const void *side, const uint8_t *state, size_t nb) {
    zk_ifma_bn_g1_reduce(out, bucket, side, state, nb);
}
void zk_ifma_bls_g1_reduce(void *out, const void *bucket, const void *side, const uint8_t *state, size_t nb) {
    zk_ifma_bn_g1_reduce(out, bucket, side, state, nb);
}
void zk_ifma_bls_g2_reduce(void *out, const void *bucket, const void *side, const uint8_t *state, size_t nb) {
    zk_ifma_bn_g1_reduce(out, bucket, side, state, nb);
}
#endif
