/* AVX-512 IFMA arithmetic modulo one prime, eight elements per vector in 52-bit limbs, instantiated
 * by zk/ifma52.h with V52_NL (52-bit limbs), V52_NW (64-bit words of the scalar form), V52_(name)
 * (the prefix), V52_T, V52_MOD_T (the element and modulus types) and V52_MUL_FN (the product's
 * attributes: inlined, or one call). See zk/ifma52.h for the representation and the bounds. */

#define V52_SH (52 * V52_NL - 64 * V52_NW) /* the operand form's shift: 2^(52 NL) / 2^(64 NW) */

typedef struct {
    __m512i l[V52_NL];
} V52_T;

/* p in 52-bit limbs, -p^-1 mod 2^52, and 1 in Montgomery form (64-bit words). */
typedef struct {
    __m512i p[V52_NL], p2[V52_NL], inv, mask; /* p2: 2p (< 2^(64 NW)) */
    uint64_t one[V52_NW];
} V52_MOD_T;

/* Bits [b, b + 52) of the NW-word integer w, b >= 0. */
static inline uint64_t V52_(bits52)(const uint64_t *w, int b) {
    int k = b / 64, o = b % 64;
    uint64_t x = k < V52_NW ? w[k] >> o : 0;
    if (o > 12 && k + 1 < V52_NW) x |= w[k + 1] << (64 - o);
    return x & M52;
}

IFMA_FN void V52_(mod_init)(V52_MOD_T *m, const uint64_t p[V52_NW], uint64_t inv, const uint64_t one[V52_NW]) {
    uint64_t p2[V52_NW];
    for (int i = 0; i < V52_NW; i++) p2[i] = p[i] << 1 | (i ? p[i - 1] >> 63 : 0);
    for (int i = 0; i < V52_NL; i++) {
        m->p[i] = _mm512_set1_epi64((long long)V52_(bits52)(p, 52 * i));
        m->p2[i] = _mm512_set1_epi64((long long)V52_(bits52)(p2, 52 * i));
    }
    m->inv = _mm512_set1_epi64((long long)(inv & M52));
    memcpy(m->one, one, sizeof(m->one));
    m->mask = _mm512_set1_epi64((long long)M52);
}

/* NW 64-bit word vectors (word k of eight elements in q[k]) -> NL 52-bit limbs; shl = 1 gives
 * 2^V52_SH times the value (the operand form of mul). Shift counts are constants once unrolled. */
IFMA_FN void V52_(from64)(V52_T *r, const __m512i q[V52_NW], int shl, const V52_MOD_T *m) {
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) {
        int b = 52 * i - (shl ? V52_SH : 0);
        __m512i x;
        if (b < 0) {
            x = _mm512_slli_epi64(q[0], (unsigned)-b);
        } else {
            int k = b / 64, o = b % 64;
            x = k < V52_NW ? _mm512_srli_epi64(q[k], (unsigned)o) : _mm512_setzero_si512();
            if (o > 12 && k + 1 < V52_NW) x = _mm512_or_si512(x, _mm512_slli_epi64(q[k + 1], (unsigned)(64 - o)));
        }
        r->l[i] = _mm512_and_si512(x, m->mask);
    }
}

IFMA_FN void V52_(to64)(__m512i q[V52_NW], const V52_T *a) {
#pragma GCC unroll 8
    for (int k = 0; k < V52_NW; k++) {
        __m512i x = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int i = 0; i < V52_NL; i++) {
            int s = 52 * i - 64 * k; /* limb i's place within word k */
            if (s <= -52 || s >= 64) continue;
            x = _mm512_or_si512(x, s >= 0 ? _mm512_slli_epi64(a->l[i], (unsigned)s)
                                          : _mm512_srli_epi64(a->l[i], (unsigned)-s));
        }
        q[k] = x;
    }
}

/* r = 2^V52_SH·a (a < 2p < 2^(64 NW): no reduction needed for the operand form). */
IFMA_FN void V52_(shl)(V52_T *r, const V52_T *a, const V52_MOD_T *m) {
    __m512i c = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) {
        __m512i x = a->l[i];
        r->l[i] = _mm512_or_si512(_mm512_and_si512(_mm512_slli_epi64(x, V52_SH), m->mask), c);
        c = _mm512_srli_epi64(x, 52 - V52_SH);
    }
}

/* r = t with its carries propagated: limbs possibly negative or above 52 bits in, every limb but the
 * top one in [0, 2^52) out, the top one signed (negative exactly when the value is). */
IFMA_FN void V52_(carry)(V52_T *r, __m512i t[V52_NL], const V52_MOD_T *m) {
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL - 1; i++) {
        t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_srai_epi64(t[i], 52));
        t[i] = _mm512_and_si512(t[i], m->mask);
    }
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) r->l[i] = t[i];
}

/* t += a·bi, one row of a product: the low halves into t[0 .. NL), the high halves into t[1 .. NL]. */
IFMA_FN void V52_(mac_row)(__m512i t[V52_NL + 1], const V52_T *a, __m512i bi) {
#pragma GCC unroll 8
    for (int j = 0; j < V52_NL; j++) t[j] = _mm512_madd52lo_epu64(t[j], a->l[j], bi);
#pragma GCC unroll 8
    for (int j = 0; j < V52_NL; j++) t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a->l[j], bi);
}

/* One Montgomery round: t += q·p with q = t0·(-1/p) mod 2^52, so that t0 = 0 mod 2^52, then t shifted
 * down one limb (t0's carry into the next). */
IFMA_FN void V52_(redc_round)(__m512i t[V52_NL + 1], const V52_MOD_T *m) {
    const __m512i z = _mm512_setzero_si512();
    __m512i q = _mm512_madd52lo_epu64(z, t[0], m->inv);
#pragma GCC unroll 8
    for (int j = 0; j < V52_NL; j++) t[j] = _mm512_madd52lo_epu64(t[j], q, m->p[j]);
#pragma GCC unroll 8
    for (int j = 0; j < V52_NL; j++) t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], q, m->p[j]);
    t[0] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
#pragma GCC unroll 8
    for (int j = 1; j < V52_NL; j++) t[j] = t[j + 1];
    t[V52_NL] = z;
}

/* r = a·bs·2^-(52 NL) with bs = 2^V52_SH·b in operand form: the Montgomery product a·b·2^-(64 NW),
 * normalized limbs, not reduced: r < a·b/2^(64 NW) + p, which is < 2p for a, b < 2p (4p < 2^(64 NW)
 * for both primes). */
V52_MUL_FN void V52_(mul_lz)(V52_T *r, const V52_T *a, const V52_T *bs, const V52_MOD_T *m) {
    __m512i t[V52_NL + 1];
#pragma GCC unroll 9
    for (int i = 0; i < V52_NL + 1; i++) t[i] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) {
        V52_(mac_row)(t, a, bs->l[i]);
        V52_(redc_round)(t, m);
    }
    V52_(carry)(r, t, m);
}

/* r = (a·b + c·d)·2^-(64 NW), one Montgomery reduction for both products (bs = 2^V52_SH·b and
 * ds = 2^V52_SH·d in operand form), normalized limbs, not reduced: for a, c < 2p and b, d <= 2p,
 * r < (a·b + c·d)/2^(64 NW) + p <= 8p^2/2^(64 NW) + p < 3p (p < 2^(64 NW)/4; the sum times 2^V52_SH
 * stays below 2^(104 NL), and each limb's column adds at most 6 terms < 2^52 a round). For Fq2's
 * products: a0·b0 − a1·b1 as a0·b0 + a1·(2p − b1), and a0·b1 + a1·b0; four products and two
 * reductions, with no sum or difference of the inputs to reduce first, as Karatsuba's three need. */
V52_MUL_FN void V52_(mul2_lz)(V52_T *r, const V52_T *a, const V52_T *bs, const V52_T *c, const V52_T *ds,
                              const V52_MOD_T *m) {
    __m512i t[V52_NL + 1];
#pragma GCC unroll 9
    for (int i = 0; i < V52_NL + 1; i++) t[i] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) {
        V52_(mac_row)(t, a, bs->l[i]);
        V52_(mac_row)(t, c, ds->l[i]);
        V52_(redc_round)(t, m);
    }
    V52_(carry)(r, t, m);
}

/* r = a - kp if that is not negative, else a (a normalized, kp the limbs of p or 2p). */
IFMA_FN void V52_(csub)(V52_T *r, const V52_T *a, const __m512i kp[V52_NL], const V52_MOD_T *m) {
    __m512i s[V52_NL];
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) s[i] = _mm512_sub_epi64(a->l[i], kp[i]);
    V52_T d;
    V52_(carry)(&d, s, m);
    __mmask8 ge = _mm512_cmpge_epi64_mask(d.l[V52_NL - 1], _mm512_setzero_si512());
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) r->l[i] = _mm512_mask_blend_epi64(ge, a->l[i], d.l[i]);
}

/* The fully reduced Montgomery product, < p for a, b < 2p. */
IFMA_FN void V52_(mul)(V52_T *r, const V52_T *a, const V52_T *bs, const V52_MOD_T *m) {
    V52_(mul_lz)(r, a, bs, m);
    V52_(csub)(r, r, m->p, m);
}

/* r = a - b + p, not reduced: in (0, a + p) for b < p; normalized limbs (a + p < 2^(52 NL)). */
IFMA_FN void V52_(sub_lz)(V52_T *r, const V52_T *a, const V52_T *b, const V52_MOD_T *m) {
    __m512i t[V52_NL];
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) t[i] = _mm512_add_epi64(_mm512_sub_epi64(a->l[i], b->l[i]), m->p[i]);
    V52_(carry)(r, t, m);
}

/* r = 2p - a for a <= 2p: in [0, 2p], normalized, not reduced (an operand of mul2_lz's). */
IFMA_FN void V52_(neg2_lz)(V52_T *r, const V52_T *a, const V52_MOD_T *m) {
    __m512i t[V52_NL];
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) t[i] = _mm512_sub_epi64(m->p2[i], a->l[i]);
    V52_(carry)(r, t, m);
}

/* r = a - b mod p (a, b < p). */
IFMA_FN void V52_(sub)(V52_T *r, const V52_T *a, const V52_T *b, const V52_MOD_T *m) {
    __m512i t[V52_NL];
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) t[i] = _mm512_sub_epi64(a->l[i], b->l[i]);
    V52_T d;
    V52_(carry)(&d, t, m);
    __mmask8 neg = _mm512_cmplt_epi64_mask(d.l[V52_NL - 1], _mm512_setzero_si512());
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) t[i] = _mm512_mask_add_epi64(d.l[i], neg, d.l[i], m->p[i]);
    V52_(carry)(r, t, m);
}

/* Loads field element `off` (in 64-bit words) of eight records at word index idx. */
IFMA_FN void V52_(gather)(V52_T *r, __mmask8 k, __m512i idx, const uint64_t *base, int off, int shl,
                          const __m512i fill[V52_NW], const V52_MOD_T *m) {
    __m512i q[V52_NW];
#pragma GCC unroll 8
    for (int i = 0; i < V52_NW; i++)
        q[i] = _mm512_mask_i64gather_epi64(fill[i], k, _mm512_add_epi64(idx, _mm512_set1_epi64(off + i)),
                                           (const long long *)base, 8);
    V52_(from64)(r, q, shl, m);
}

IFMA_FN void V52_(scatter)(uint64_t *base, __mmask8 k, __m512i idx, int off, const V52_T *a) {
    __m512i q[V52_NW];
    V52_(to64)(q, a);
#pragma GCC unroll 8
    for (int i = 0; i < V52_NW; i++)
        _mm512_mask_i64scatter_epi64((long long *)base, k, _mm512_add_epi64(idx, _mm512_set1_epi64(off + i)), q[i], 8);
}

/* r = a·b mod p for a, b < 2p (b put in operand form here): < p, or with mulr_lz < 2p. */
IFMA_FN void V52_(mulr)(V52_T *r, const V52_T *a, const V52_T *b, const V52_MOD_T *m) {
    V52_T bs;
    V52_(shl)(&bs, b, m);
    V52_(mul)(r, a, &bs, m);
}
IFMA_FN void V52_(mulr_lz)(V52_T *r, const V52_T *a, const V52_T *b, const V52_MOD_T *m) {
    V52_T bs;
    V52_(shl)(&bs, b, m);
    V52_(mul_lz)(r, a, &bs, m);
}

/* r = a + b mod p (a, b < p). */
IFMA_FN void V52_(add)(V52_T *r, const V52_T *a, const V52_T *b, const V52_MOD_T *m) {
    __m512i t[V52_NL];
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) t[i] = _mm512_add_epi64(a->l[i], b->l[i]);
    V52_(carry)(r, t, m);
    V52_(csub)(r, r, m->p, m);
}

/* Mask of the lanes equal to 0. */
IFMA_FN __mmask8 V52_(is_zero)(const V52_T *a) {
    __m512i o = a->l[0];
#pragma GCC unroll 8
    for (int i = 1; i < V52_NL; i++) o = _mm512_or_si512(o, a->l[i]);
    return _mm512_cmpeq_epi64_mask(o, _mm512_setzero_si512());
}

/* r = b in the lanes of k. */
IFMA_FN void V52_(blend)(V52_T *r, __mmask8 k, const V52_T *b) {
#pragma GCC unroll 8
    for (int i = 0; i < V52_NL; i++) r->l[i] = _mm512_mask_blend_epi64(k, r->l[i], b->l[i]);
}

#undef V52_SH
#undef V52_NL
#undef V52_NW
#undef V52_
#undef V52_T
#undef V52_MOD_T
#undef V52_MUL_FN
