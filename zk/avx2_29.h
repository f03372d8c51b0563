/* AVX2 arithmetic modulo the BN254 base field, four elements per vector in 29-bit limbs, for
 * zk/msm_avx2.c. Every function carries the target attribute itself, so a file that includes this
 * header may be compiled for baseline x86-64; its callers run only where zk/kernels.c selected the
 * avx2 set.
 *
 * Why 29 bits: AVX2's only 64-bit product is vpmuludq (32 x 32 -> 64 per lane); nine limbs of 29
 * bits hold 261 bits, and a column of a product sums at most 18 terms below 2^58 with a carry
 * below 2^35, which stays below 2^63, so no carry moves inside a product until its end.
 *
 * Representation: an element a·2^256 mod p (the Montgomery form of zk/fp_tmpl.h, unchanged) is
 * held as nine limbs, one lane per element, each limb in its own 64-bit lane slot. The vector
 * Montgomery product reduces by 2^261 (nine rounds of 29 bits), so M(x, y) = x·y·2^-261; every
 * product takes one operand times 2^5 (v29_shl), so that M(x, 2^5·y) = x·y·2^-256 is exactly the
 * scalar kernel's product. Bounds: for x, y < 2p, (x·2^5·y + m·p)/2^261 < x·y/2^256 + p < 2p, as
 * 4p < 2^256: v29_mul_lz leaves its product below 2p without a subtraction. Values in memory are
 * fully reduced (< p); the flush's lazy values stay below 4p (< 2^256) and below 2p wherever they
 * enter a product (zk/msm_avx2.c).
 *
 * AVX2 has no 64-bit arithmetic right shift, so no limb is ever negative: a difference a - b + kp
 * adds kp in a borrowed form whose limbs below the top are at least 2^29 - 1 (v29_mod_t.pb), and a
 * comparison with kp adds 2^261 - kp and looks at bit 261 (v29_csub). Only the top limb may wrap
 * below zero on the way, and it ends non-negative because the whole value does. */
#pragma once
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <stdint.h>

#define AVX2_FN static inline __attribute__((always_inline, target("avx2")))
#define V29_NL 9
#define V29_NW 4
#define V29_SH 5 /* 29·9 - 64·4 */
#define M29 0x1fffffffULL

typedef struct {
    __m256i l[V29_NL];
} v29_t;

/* p and its forms in 29-bit limbs, -p^-1 mod 2^29, the mask, and 1 in Montgomery form (words). */
typedef struct {
    __m256i p[V29_NL];
    __m256i pb[V29_NL];     /* p, borrowed: pb[0] = p0 + 2^29, pb[i] = p_i + 2^29 - 1, pb[8] = p8 - 1 */
    __m256i p2b[V29_NL];    /* 2p, borrowed the same way */
    __m256i cp[V29_NL];     /* 2^261 - p */
    __m256i cp2[V29_NL];    /* 2^261 - 2p */
    __m256i inv, mask;      /* mask: 2^29 - 1, also the largest normalized limb */
} v29_mod_t;

/* Bits [b, b + 29) of the NW-word integer w (b >= 0). */
static inline uint64_t v29_bits(const uint64_t *w, int b) {
    int k = b / 64, o = b % 64;
    uint64_t x = k < V29_NW ? w[k] >> o : 0;
    if (o > 35 && k + 1 < V29_NW) x |= w[k + 1] << (64 - o);
    return x & M29;
}

/* The limbs of 2^261 - v for a 256-bit v (0 < v < 2^256). */
static inline void v29_complement(uint64_t out[V29_NL], const uint64_t v[V29_NW]) {
    uint64_t borrow = 0;
    for (int i = 0; i < V29_NL; i++) {
        uint64_t x = (i == V29_NL - 1 ? (1ULL << 29) : 0) - v29_bits(v, 29 * i) - borrow;
        if (i < V29_NL - 1) {
            borrow = (x >> 63) & 1; /* the limb went below zero: take 2^29 from the next */
            x += borrow << 29;
        }
        out[i] = x;
    }
}

/* Limb i of an integer in the borrowed form: 2^29 more than limb i below the top, 1 less (taken by
 * the limb below) above the bottom; the limbs still sum to the integer. */
static inline uint64_t v29_borrowed(uint64_t limb, int i) {
    return limb + (i < V29_NL - 1 ? 1ULL << 29 : 0) - (i > 0 ? 1 : 0);
}

AVX2_FN void v29_mod_init(v29_mod_t *m, const uint64_t p[V29_NW], uint64_t inv64) {
    uint64_t p2[V29_NW], c1[V29_NL], c2[V29_NL];
    for (int i = 0; i < V29_NW; i++) p2[i] = p[i] << 1 | (i ? p[i - 1] >> 63 : 0);
    v29_complement(c1, p);
    v29_complement(c2, p2);
    for (int i = 0; i < V29_NL; i++) {
        uint64_t pi = v29_bits(p, 29 * i);
        m->p[i] = _mm256_set1_epi64x((long long)pi);
        m->pb[i] = _mm256_set1_epi64x((long long)v29_borrowed(pi, i));
        m->p2b[i] = _mm256_set1_epi64x((long long)v29_borrowed(v29_bits(p2, 29 * i), i));
        m->cp[i] = _mm256_set1_epi64x((long long)c1[i]);
        m->cp2[i] = _mm256_set1_epi64x((long long)c2[i]);
    }
    m->inv = _mm256_set1_epi64x((long long)(inv64 & M29));
    m->mask = _mm256_set1_epi64x((long long)M29);
}

/* Word vectors (word k of four elements in q[k]) -> limbs; shl = 1 gives 2^5 times the value (the
 * operand form of the product; the value must be below 2^256). */
AVX2_FN void v29_from64(v29_t *r, const __m256i q[V29_NW], int shl, const v29_mod_t *m) {
#pragma GCC unroll 9
    for (int i = 0; i < V29_NL; i++) {
        int b = 29 * i - (shl ? V29_SH : 0);
        __m256i x;
        if (b < 0) {
            x = _mm256_slli_epi64(q[0], -b);
        } else {
            int k = b / 64, o = b % 64;
            x = k < V29_NW ? _mm256_srli_epi64(q[k], o) : _mm256_setzero_si256();
            if (o > 35 && k + 1 < V29_NW) x = _mm256_or_si256(x, _mm256_slli_epi64(q[k + 1], 64 - o));
        }
        r->l[i] = _mm256_and_si256(x, m->mask);
    }
}

/* Limbs (normalized, value < 2^256) -> word vectors. */
AVX2_FN void v29_to64(__m256i q[V29_NW], const v29_t *a) {
#pragma GCC unroll 4
    for (int k = 0; k < V29_NW; k++) {
        __m256i x = _mm256_setzero_si256();
#pragma GCC unroll 9
        for (int i = 0; i < V29_NL; i++) {
            int s = 29 * i - 64 * k;
            if (s <= -29 || s >= 64) continue;
            x = _mm256_or_si256(x, s >= 0 ? _mm256_slli_epi64(a->l[i], s) : _mm256_srli_epi64(a->l[i], -s));
        }
        q[k] = x;
    }
}

/* r = 2^5·a for a < 2^256 (already normalized limbs in, normalized out). */
AVX2_FN void v29_shl(v29_t *r, const v29_t *a, const v29_mod_t *m) {
    __m256i c = _mm256_setzero_si256();
#pragma GCC unroll 9
    for (int i = 0; i < V29_NL; i++) {
        __m256i x = a->l[i];
        r->l[i] = _mm256_or_si256(_mm256_and_si256(_mm256_slli_epi64(x, V29_SH), m->mask), c);
        c = _mm256_srli_epi64(x, 29 - V29_SH);
    }
}

/* Carries propagated: every limb but the top one in [0, 2^29) out. The limbs below the top must be
 * non-negative (as 64-bit integers); the top one takes what comes and is right as long as the
 * whole value is non-negative. */
AVX2_FN void v29_carry(v29_t *r, __m256i t[V29_NL], const v29_mod_t *m) {
#pragma GCC unroll 9
    for (int i = 0; i < V29_NL - 1; i++) {
        t[i + 1] = _mm256_add_epi64(t[i + 1], _mm256_srli_epi64(t[i], 29));
        t[i] = _mm256_and_si256(t[i], m->mask);
    }
#pragma GCC unroll 9
    for (int i = 0; i < V29_NL; i++) r->l[i] = t[i];
}

/* t += a·bi, one row of a product (the columns keep their carries until v29_carry). */
AVX2_FN void v29_mac_row(__m256i t[V29_NL + 1], const v29_t *a, __m256i bi) {
#pragma GCC unroll 9
    for (int j = 0; j < V29_NL; j++) t[j] = _mm256_add_epi64(t[j], _mm256_mul_epu32(a->l[j], bi));
}

/* One Montgomery round: t += q·p with q = t0·(-1/p) mod 2^29, so that t0 = 0 mod 2^29, then t
 * shifted down one limb (t0's carry into the next). */
AVX2_FN void v29_redc_round(__m256i t[V29_NL + 1], const v29_mod_t *m) {
    __m256i q = _mm256_and_si256(_mm256_mul_epu32(t[0], m->inv), m->mask);
#pragma GCC unroll 9
    for (int j = 0; j < V29_NL; j++) t[j] = _mm256_add_epi64(t[j], _mm256_mul_epu32(q, m->p[j]));
    t[1] = _mm256_add_epi64(t[1], _mm256_srli_epi64(t[0], 29));
#pragma GCC unroll 9
    for (int j = 0; j < V29_NL; j++) t[j] = t[j + 1];
    t[V29_NL] = _mm256_setzero_si256();
}

/* r = a·bs·2^-261 with bs = 2^5·b (operand form): the Montgomery product a·b·2^-256, normalized,
 * below 2p for a, b < 2p (not reduced). */
AVX2_FN void v29_mul_lz(v29_t *r, const v29_t *a, const v29_t *bs, const v29_mod_t *m) {
    __m256i t[V29_NL + 1];
#pragma GCC unroll 10
    for (int i = 0; i <= V29_NL; i++) t[i] = _mm256_setzero_si256();
#pragma GCC unroll 9
    for (int i = 0; i < V29_NL; i++) {
        v29_mac_row(t, a, bs->l[i]);
        v29_redc_round(t, m);
    }
    v29_carry(r, t, m);
}

/* v29_mul_lz as a call: where a flush holds many products (G2's), inlining them all made the code
 * larger than the CPU's instruction caches hold, and calls ran faster (bench/RESULTS.md, "Issue 22,
 * the avx2 set"); G1's flush inlines its six. */
static __attribute__((noinline, target("avx2"))) void v29_mul_call(v29_t *r, const v29_t *a, const v29_t *bs,
                                                                  const v29_mod_t *m) {
    v29_mul_lz(r, a, bs, m);
}

/* r = (a·bs + c·ds)·2^-261, one Montgomery reduction for both products (bs, ds in operand form):
 * (a·b + c·d)·2^-256 for a, c < 2p and b, d <= 2p, below 3p (8p^2/2^256 + p, p < 2^254), not
 * reduced. A column then sums at most 27 terms below 2^58 and a carry: still below 2^63. For Fq2's
 * products: a0·b0 − a1·b1 as a0·b0 + a1·(2p − b1), and a0·b1 + a1·b0. A call, as v29_mul_call. */
static __attribute__((noinline, target("avx2"))) void v29_mul2_lz(v29_t *r, const v29_t *a, const v29_t *bs,
                                                                 const v29_t *c, const v29_t *ds, const v29_mod_t *m) {
    __m256i t[V29_NL + 1];
#pragma GCC unroll 10
    for (int i = 0; i <= V29_NL; i++) t[i] = _mm256_setzero_si256();
#pragma GCC unroll 9
    for (int i = 0; i < V29_NL; i++) {
        v29_mac_row(t, a, bs->l[i]);
        v29_mac_row(t, c, ds->l[i]);
        v29_redc_round(t, m);
    }
    v29_carry(r, t, m);
}

/* r = 2p - a for a <= 2p: in [0, 2p], normalized, not reduced (an operand of mul2_lz). */
AVX2_FN void v29_neg2(v29_t *r, const v29_t *a, const v29_mod_t *m) {
    __m256i t[V29_NL];
#pragma GCC unroll 9
    for (int i = 0; i < V29_NL; i++) t[i] = _mm256_sub_epi64(m->p2b[i], a->l[i]);
    v29_carry(r, t, m);
}

/* r = a - kp if a >= kp, else a (a normalized, below 2^260; ck the limbs of 2^261 - kp). */
AVX2_FN void v29_csub(v29_t *r, const v29_t *a, const __m256i ck[V29_NL], const v29_mod_t *m) {
    __m256i s[V29_NL];
#pragma GCC unroll 9
    for (int i = 0; i < V29_NL; i++) s[i] = _mm256_add_epi64(a->l[i], ck[i]);
    v29_t d;
    v29_carry(&d, s, m);
    /* a + 2^261 - kp >= 2^261 exactly when a >= kp: the top limb then exceeds 29 bits */
    __m256i ge = _mm256_cmpgt_epi64(d.l[V29_NL - 1], m->mask);
    d.l[V29_NL - 1] = _mm256_and_si256(d.l[V29_NL - 1], m->mask);
#pragma GCC unroll 9
    for (int i = 0; i < V29_NL; i++) r->l[i] = _mm256_blendv_epi8(a->l[i], d.l[i], ge);
}

/* r = a - b + p, not reduced: in (a, a + p] for b < p; normalized. */
AVX2_FN void v29_subz(v29_t *r, const v29_t *a, const v29_t *b, const v29_mod_t *m) {
    __m256i t[V29_NL];
#pragma GCC unroll 9
    for (int i = 0; i < V29_NL; i++) t[i] = _mm256_sub_epi64(_mm256_add_epi64(a->l[i], m->pb[i]), b->l[i]);
    v29_carry(r, t, m);
}

/* [0, 2p) -> [0, p) and [0, 4p) -> [0, p). */
AVX2_FN void v29_red1(v29_t *r, const v29_mod_t *m) { v29_csub(r, r, m->cp, m); }
AVX2_FN void v29_red2(v29_t *r, const v29_mod_t *m) {
    v29_csub(r, r, m->cp2, m);
    v29_csub(r, r, m->cp, m);
}

/* 4x4 transpose of 64-bit words: row l of q (element l's words) <-> column (word k of the four). */
AVX2_FN void v29_tr4(__m256i r[4], const __m256i q[4]) {
    __m256i t0 = _mm256_unpacklo_epi64(q[0], q[1]), t1 = _mm256_unpackhi_epi64(q[0], q[1]);
    __m256i t2 = _mm256_unpacklo_epi64(q[2], q[3]), t3 = _mm256_unpackhi_epi64(q[2], q[3]);
    r[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
    r[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
    r[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
    r[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

/* The four elements at e[0..3] (4 words each) -> limbs (shl as in v29_from64). */
AVX2_FN void v29_load4(v29_t *r, const uint64_t *const e[4], int shl, const v29_mod_t *m) {
    __m256i q[4], t[4];
#pragma GCC unroll 4
    for (int l = 0; l < 4; l++) q[l] = _mm256_loadu_si256((const __m256i *)e[l]);
    v29_tr4(t, q);
    v29_from64(r, t, shl, m);
}

/* Limbs (value < 2^256) -> the elements at e[l] for the first `lanes` lanes. */
AVX2_FN void v29_store4(uint64_t *const e[4], unsigned lanes, const v29_t *a) {
    __m256i q[4], t[4];
    v29_to64(q, a);
    v29_tr4(t, q);
    for (unsigned l = 0; l < lanes; l++) _mm256_storeu_si256((__m256i *)e[l], t[l]);
}
#endif
