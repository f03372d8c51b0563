/* AVX-512 IFMA arithmetic modulo a prime p < 2^254, eight elements per vector in 52-bit limbs, for
 * zk/msm_ifma.c (Fq, Fq2 of BN254) and zk/ntt_ifma.c (Fr of BN254). Every function carries the
 * target attribute itself, so a file that includes this header may be compiled for baseline
 * x86-64; its callers run only where zk/kernels.c selected the ifma set.
 *
 * Representation: an element a·2^256 mod p (the Montgomery form of zk/fp_tmpl.h, unchanged) is
 * held as five 52-bit limbs, one lane per element. The vector Montgomery product reduces by 2^260
 * (five rounds of 52 bits), so M(x, y) = x·y·2^-260; every product here takes one operand times 16
 * (16·y < 2^258 still fits five limbs, shifted in by v52_shl4), so that M(x, 16·y) = x·y·2^-256 is
 * exactly the scalar kernel's product. Bounds: for x < p and y < 2^259, (x·16y + m·p)/2^260 < 2p,
 * so one conditional subtraction leaves every value < p: all inputs and outputs are fully reduced. */
#pragma once
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define IFMA_FN static inline __attribute__((always_inline, target("avx512f,avx512ifma")))
#define M52 0xfffffffffffffULL

typedef struct {
    __m512i l[5];
} v52_t;

/* p in 52-bit limbs, -p^-1 mod 2^52, and 1 in Montgomery form (64-bit limbs), from the scalar
 * field's constants: p (4 limbs, < 2^254), inv = -p^-1 mod 2^64. */
typedef struct {
    __m512i p[5], inv, mask;
    uint64_t one[4];
} v52_mod_t;

IFMA_FN void v52_mod_init(v52_mod_t *m, const uint64_t p[4], uint64_t inv, const uint64_t one[4]) {
    uint64_t l[5] = {p[0] & M52, ((p[0] >> 52) | (p[1] << 12)) & M52, ((p[1] >> 40) | (p[2] << 24)) & M52,
                     ((p[2] >> 28) | (p[3] << 36)) & M52, p[3] >> 16};
    for (int i = 0; i < 5; i++) m->p[i] = _mm512_set1_epi64((long long)l[i]);
    m->inv = _mm512_set1_epi64((long long)(inv & M52));
    memcpy(m->one, one, sizeof(m->one));
    m->mask = _mm512_set1_epi64((long long)M52);
}

/* Four 64-bit limb vectors (limb k of eight elements in q[k]) -> five 52-bit limbs; shl4 = 1 gives
 * 16 times the value (the operand form of v52_mul). */
IFMA_FN void v52_from64(v52_t *r, const __m512i q[4], int shl4, const v52_mod_t *m) {
    if (!shl4) {
        r->l[0] = _mm512_and_si512(q[0], m->mask);
        r->l[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(q[0], 52), _mm512_slli_epi64(q[1], 12)), m->mask);
        r->l[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(q[1], 40), _mm512_slli_epi64(q[2], 24)), m->mask);
        r->l[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(q[2], 28), _mm512_slli_epi64(q[3], 36)), m->mask);
        r->l[4] = _mm512_srli_epi64(q[3], 16);
    } else {
        r->l[0] = _mm512_and_si512(_mm512_slli_epi64(q[0], 4), m->mask);
        r->l[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(q[0], 48), _mm512_slli_epi64(q[1], 16)), m->mask);
        r->l[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(q[1], 36), _mm512_slli_epi64(q[2], 28)), m->mask);
        r->l[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(q[2], 24), _mm512_slli_epi64(q[3], 40)), m->mask);
        r->l[4] = _mm512_srli_epi64(q[3], 12);
    }
}

IFMA_FN void v52_to64(__m512i q[4], const v52_t *a) {
    q[0] = _mm512_or_si512(a->l[0], _mm512_slli_epi64(a->l[1], 52));
    q[1] = _mm512_or_si512(_mm512_srli_epi64(a->l[1], 12), _mm512_slli_epi64(a->l[2], 40));
    q[2] = _mm512_or_si512(_mm512_srli_epi64(a->l[2], 24), _mm512_slli_epi64(a->l[3], 28));
    q[3] = _mm512_or_si512(_mm512_srli_epi64(a->l[3], 36), _mm512_slli_epi64(a->l[4], 16));
}

/* r = 16·a (a < p < 2^255: no reduction needed for the operand form). */
IFMA_FN void v52_shl4(v52_t *r, const v52_t *a, const v52_mod_t *m) {
    __m512i c = _mm512_setzero_si512();
    for (int i = 0; i < 5; i++) {
        __m512i x = a->l[i];
        r->l[i] = _mm512_or_si512(_mm512_and_si512(_mm512_slli_epi64(x, 4), m->mask), c);
        c = _mm512_srli_epi64(x, 48);
    }
}

/* t (limbs possibly negative or above 52 bits, value in [0, 2p)) -> normalized, minus p if >= p. */
IFMA_FN void v52_norm_reduce(v52_t *r, __m512i t[5], const v52_mod_t *m) {
    for (int i = 0; i < 4; i++) {
        t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_srai_epi64(t[i], 52));
        t[i] = _mm512_and_si512(t[i], m->mask);
    }
    __m512i s[5];
    for (int i = 0; i < 5; i++) s[i] = _mm512_sub_epi64(t[i], m->p[i]);
    for (int i = 0; i < 4; i++) {
        s[i + 1] = _mm512_add_epi64(s[i + 1], _mm512_srai_epi64(s[i], 52));
        s[i] = _mm512_and_si512(s[i], m->mask);
    }
    __mmask8 ge = _mm512_cmpge_epi64_mask(s[4], _mm512_setzero_si512()); /* t - p >= 0 */
    for (int i = 0; i < 5; i++) r->l[i] = _mm512_mask_blend_epi64(ge, t[i], s[i]);
}

/* r = a·b16·2^-260 with b16 = 16·b in operand form: the Montgomery product a·b·2^-256, < p. */
IFMA_FN void v52_mul(v52_t *r, const v52_t *a, const v52_t *b16, const v52_mod_t *m) {
    __m512i t[6];
    const __m512i z = _mm512_setzero_si512();
    for (int i = 0; i < 6; i++) t[i] = z;
    for (int i = 0; i < 5; i++) {
        __m512i bi = b16->l[i];
        for (int j = 0; j < 5; j++) t[j] = _mm512_madd52lo_epu64(t[j], a->l[j], bi);
        for (int j = 0; j < 5; j++) t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a->l[j], bi);
        __m512i q = _mm512_madd52lo_epu64(z, t[0], m->inv); /* t0·(-1/p) mod 2^52 */
        for (int j = 0; j < 5; j++) t[j] = _mm512_madd52lo_epu64(t[j], q, m->p[j]);
        for (int j = 0; j < 5; j++) t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], q, m->p[j]);
        /* t0 is now 0 mod 2^52: shift one limb down, its carry into the next */
        t[0] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
        for (int j = 1; j < 5; j++) t[j] = t[j + 1];
        t[5] = z;
    }
    v52_norm_reduce(r, t, m);
}

/* r = a - b mod p (a, b < p). */
IFMA_FN void v52_sub(v52_t *r, const v52_t *a, const v52_t *b, const v52_mod_t *m) {
    __m512i t[5];
    for (int i = 0; i < 5; i++) t[i] = _mm512_sub_epi64(a->l[i], b->l[i]);
    for (int i = 0; i < 4; i++) {
        t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_srai_epi64(t[i], 52));
        t[i] = _mm512_and_si512(t[i], m->mask);
    }
    __mmask8 neg = _mm512_cmplt_epi64_mask(t[4], _mm512_setzero_si512());
    for (int i = 0; i < 5; i++) t[i] = _mm512_mask_add_epi64(t[i], neg, t[i], m->p[i]);
    for (int i = 0; i < 4; i++) {
        t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_srai_epi64(t[i], 52));
        t[i] = _mm512_and_si512(t[i], m->mask);
    }
    for (int i = 0; i < 5; i++) r->l[i] = t[i];
}

/* Loads field element `off` (in 64-bit words) of eight records of `stride` words at index idx. */
IFMA_FN void v52_gather(v52_t *r, __mmask8 k, __m512i idx, const uint64_t *base, int off, int shl4,
                        const __m512i fill[4], const v52_mod_t *m) {
    __m512i q[4];
    for (int i = 0; i < 4; i++)
        q[i] = _mm512_mask_i64gather_epi64(fill[i], k, _mm512_add_epi64(idx, _mm512_set1_epi64(off + i)),
                                           (const long long *)base, 8);
    v52_from64(r, q, shl4, m);
}

IFMA_FN void v52_scatter(uint64_t *base, __mmask8 k, __m512i idx, int off, const v52_t *a) {
    __m512i q[4];
    v52_to64(q, a);
    for (int i = 0; i < 4; i++)
        _mm512_mask_i64scatter_epi64((long long *)base, k, _mm512_add_epi64(idx, _mm512_set1_epi64(off + i)), q[i], 8);
}

/* r = a·b mod p for a, b < p (b put in operand form here). */
IFMA_FN void v52_mulr(v52_t *r, const v52_t *a, const v52_t *b, const v52_mod_t *m) {
    v52_t b16;
    v52_shl4(&b16, b, m);
    v52_mul(r, a, &b16, m);
}

/* r = a + b mod p (a, b < p). */
IFMA_FN void v52_add(v52_t *r, const v52_t *a, const v52_t *b, const v52_mod_t *m) {
    __m512i t[5];
    for (int i = 0; i < 5; i++) t[i] = _mm512_add_epi64(a->l[i], b->l[i]);
    v52_norm_reduce(r, t, m);
}
#endif
