/* A BLS12-381 base-field product in double precision, four elements a vector (AVX2 + FMA), against
 * MULX's (zk_x86_mont_mul6), per element: the multiplier a bls12381 vector path without IFMA would
 * use, since AVX2's 32-bit integer products do not pay at 14 limbs (bench/avx2-limbs). Built and run
 * by bench/fp64-limbs; not part of the build.
 *
 * Representation: eight limbs of 48 bits held as doubles (exact integers), so R = 2^384 as in
 * zk/fp_tmpl.h and the product is the scalar kernel's x·y·2^-384, left below 2p for inputs below 2p
 * (4p < 2^384) without a final subtraction.
 *
 * A limb product x·y < 2^96 is split exactly by two FMAs: hi = fma(x, y, 2^100) rounds x·y to a
 * multiple of 2^48 (the ulp of [2^100, 2^101)), h = hi - 2^100 = H·2^48, and lo = fma(x, y, -h) =
 * x·y - H·2^48 in [-2^47, 2^47]. A column sums at most 16 lo and 16 H (the product's and the
 * reduction's), below 2^53 in magnitude, so the sums stay exact in doubles; each column becomes an
 * integer by the magic-number trick (bits of 1.5·2^52 + lo-sum, of 2^52 + H-sum), carried with
 * 64-bit integer shifts under a 2^62 bias (AVX2 has no 64-bit arithmetic shift). Montgomery's
 * reduction runs word by word inside the product scan: m_c = (column c mod 2^48)·(-p^-1) mod 2^48
 * by three 32-bit products, then m_c·p into columns c..c+8. */
#include <cpuid.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench/mulx_chains.h"

#define NL 8
#define FN static inline __attribute__((always_inline, target("avx2,fma")))
#define M48 ((1ULL << 48) - 1)
#define PINV48 (BLS_FQ_INV & M48) /* -p^-1 mod 2^48 */
#define UNROLL _Pragma("GCC unroll 16")

static const uint64_t P[6] = BLS_FQ_P;

typedef struct {
    __m256d l[NL];
} vd_t;

typedef struct {
    __m256d p[NL];
    __m256i k[2 * NL]; /* added to the carry into column c: every offset the column's sums carry */
} mod_t;

static uint64_t limb48(const uint64_t w[6], int i) {
    int b = 48 * i, k = b / 64, o = b % 64;
    uint64_t x = w[k] >> o;
    if (o > 16 && k + 1 < 6) x |= w[k + 1] << (64 - o);
    return x & M48;
}

static uint64_t dbits(double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* Column c's integer is bits(lo-sum + 1.5·2^52) + bits(H-sum·2^-48 + 2^52) + carry + k[c]: k[c]
 * takes both magic numbers' bits back, adds the 2^62 bias and takes back the bias the carry brought
 * (2^14 after the shift), and for c - 1 < NL the 1.5·2^52 of column c-1's m·p0 low half, added after
 * its m was read (0x4338 after the shift: its bits are a multiple of 2^48). */
__attribute__((target("avx2"))) static void mod_init(mod_t *m) {
    for (int i = 0; i < NL; i++) m->p[i] = _mm256_set1_pd((double)limb48(P, i));
    for (int c = 0; c < 2 * NL; c++) {
        uint64_t k = (1ULL << 62) - dbits(0x3p51) - dbits(0x1p52);
        if (c > 0) k -= (1ULL << 14) + (c - 1 < NL ? dbits(0x3p51) >> 48 : 0);
        if (c == 2 * NL - 1) k += dbits(0x3p51); /* the top column has H alone */
        m->k[c] = _mm256_set1_epi64x((long long)k);
    }
}

FN __m256d to_d(__m256i x) { /* x < 2^52 */
    const __m256d two52 = _mm256_set1_pd(0x1p52);
    return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(x, _mm256_castpd_si256(two52))), two52);
}

/* la += lo(x·y), hn += H(x·y)·2^48 */
#define SPLIT_ADD(x, y, la, hn)                                                                                        \
    do {                                                                                                               \
        __m256d h_ = _mm256_sub_pd(_mm256_fmadd_pd(x, y, c1), c1);                                                     \
        la = _mm256_add_pd(la, _mm256_fmsub_pd(x, y, h_));                                                             \
        hn = _mm256_add_pd(hn, h_);                                                                                    \
    } while (0)

/* r = a·b·2^-384 mod p, below 2p, for a, b below 2p; r may alias a or b */
FN void fp64_mul(vd_t *r, const vd_t *a, const vd_t *b, const mod_t *m) {
    const __m256d c1 = _mm256_set1_pd(0x1p100), mL = _mm256_set1_pd(0x3p51), mH = _mm256_set1_pd(0x1p52),
                  s48 = _mm256_set1_pd(0x1p-48);
    const __m256i mask = _mm256_set1_epi64x((long long)M48), m24 = _mm256_set1_epi64x((1 << 24) - 1);
    const __m256i q0 = _mm256_set1_epi64x((long long)(PINV48 & ((1 << 24) - 1))),
                  q1 = _mm256_set1_epi64x((long long)(PINV48 >> 24));
    __m256d md[NL], out[NL], hcur = _mm256_setzero_pd();
    __m256i carry = m->k[0];
    UNROLL for (int c = 0; c < 2 * NL - 1; c++) {
        __m256d la[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()}, hn[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
        int q = 0;
        UNROLL for (int i = 0; i < NL; i++) {
            if (c - i < 0 || c - i >= NL) continue;
            SPLIT_ADD(a->l[i], b->l[c - i], la[q & 1], hn[q & 1]);
            q++;
        }
        UNROLL for (int k = 0; k < NL; k++) {
            if (k >= c || c - k >= NL) continue;
            SPLIT_ADD(md[k], m->p[c - k], la[q & 1], hn[q & 1]);
            q++;
        }
        __m256d hnxt = _mm256_add_pd(hn[0], hn[1]);
        __m256i v = _mm256_add_epi64(carry, _mm256_castpd_si256(_mm256_add_pd(_mm256_add_pd(la[0], la[1]), mL)));
        v = _mm256_add_epi64(v, _mm256_castpd_si256(_mm256_fmadd_pd(hcur, s48, mH)));
        if (c < NL) { /* m_c from the column's low 48 bits, then m_c·p0 zeroes them */
            __m256i u = _mm256_and_si256(v, mask), u0 = _mm256_and_si256(u, m24), u1 = _mm256_srli_epi64(u, 24);
            __m256i mm = _mm256_add_epi64(_mm256_mul_epu32(u0, q1), _mm256_mul_epu32(u1, q0));
            mm = _mm256_add_epi64(_mm256_mul_epu32(u0, q0), _mm256_slli_epi64(mm, 24));
            md[c] = to_d(_mm256_and_si256(mm, mask));
            __m256d h = _mm256_sub_pd(_mm256_fmadd_pd(md[c], m->p[0], c1), c1);
            hnxt = _mm256_add_pd(hnxt, h);
            v = _mm256_add_epi64(v, _mm256_castpd_si256(_mm256_add_pd(_mm256_fmsub_pd(md[c], m->p[0], h), mL)));
        } else {
            out[c - NL] = to_d(_mm256_and_si256(v, mask));
        }
        carry = _mm256_add_epi64(_mm256_srli_epi64(v, 48), m->k[c + 1]);
        hcur = hnxt;
    }
    __m256i v = _mm256_add_epi64(carry, _mm256_castpd_si256(_mm256_fmadd_pd(hcur, s48, mH)));
    out[NL - 1] = to_d(_mm256_and_si256(v, mask));
    for (int i = 0; i < NL; i++) r->l[i] = out[i];
}

__attribute__((target("avx"))) static void load4(vd_t *v, uint64_t w[4][6]) {
    for (int i = 0; i < NL; i++) {
        double d[4];
        for (int l = 0; l < 4; l++) d[l] = (double)limb48(w[l], i);
        v->l[i] = _mm256_loadu_pd(d);
    }
}

/* the lanes back as 6 words plus a seventh that flags a limb out of range or a value >= 2^384 */
__attribute__((target("avx"))) static void store4(uint64_t w[4][7], const vd_t *v) {
    double d[NL][4];
    for (int i = 0; i < NL; i++) _mm256_storeu_pd(d[i], v->l[i]);
    for (int l = 0; l < 4; l++) {
        memset(w[l], 0, 7 * 8);
        for (int i = 0; i < NL; i++) {
            uint64_t x = (uint64_t)d[i][l];
            int b = 48 * i, k = b / 64, o = b % 64;
            if (x >> 48 || (double)x != d[i][l]) w[l][6] = 1;
            w[l][k] |= x << o;
            if (o > 16 && k + 1 < 6) w[l][k + 1] |= x >> (64 - o);
        }
    }
}

static int geq_p(const uint64_t a[6]) {
    for (int i = 5; i >= 0; i--)
        if (a[i] != P[i]) return a[i] > P[i];
    return 1;
}

static void add_sub_p(uint64_t a[6], int sub) {
    unsigned __int128 c = 0;
    for (int i = 0; i < 6; i++) {
        if (sub) {
            unsigned __int128 d = (unsigned __int128)a[i] - P[i] - (uint64_t)c;
            a[i] = (uint64_t)d;
            c = (d >> 64) & 1;
        } else {
            c += (unsigned __int128)a[i] + P[i];
            a[i] = (uint64_t)c;
            c >>= 64;
        }
    }
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t xorshift(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static void random_below_p(uint64_t a[6]) {
    do {
        for (int i = 0; i < 6; i++) a[i] = xorshift();
        a[5] &= (1ULL << 61) - 1;
    } while (geq_p(a));
}

/* Products of random and edge values (p - 1, p - 2, p - 3, 0, 1 and 2^64 in words), with either
 * operand raised by p (the lazy inputs, below 2p), against zk_x86_mont_mul6; mismatches. */
__attribute__((target("avx2,fma"))) static int check(const mod_t *m) {
    int bad = 0;
    for (int it = 0; it < 50000; it++) {
        uint64_t x[4][6], y[4][6], want[4][6], got[4][7];
        for (int l = 0; l < 4; l++) {
            random_below_p(x[l]);
            random_below_p(y[l]);
            if (it < 16)
                for (int i = 0; i < 6; i++) {
                    x[l][i] = P[i] - (i == 0 ? (uint64_t)(it % 3) + 1 : 0);
                    y[l][i] = it & 1 ? x[l][i] : (uint64_t)(i == (l + it / 2) % 6 && l < 3);
                }
            zk_x86_mont_mul6(want[l], x[l], y[l], P, BLS_FQ_INV);
            if (it & 2) add_sub_p(x[l], 0);
            if (it & 4) add_sub_p(y[l], 0);
        }
        vd_t a, b, r;
        load4(&a, x);
        load4(&b, y);
        fp64_mul(&r, &a, &b, m);
        store4(got, &r);
        for (int l = 0; l < 4; l++) {
            if (got[l][6]) {
                bad++;
                continue;
            }
            if (geq_p(got[l])) add_sub_p(got[l], 1);
            if (geq_p(got[l]) || memcmp(got[l], want[l], sizeof(want[l]))) bad++;
        }
    }
    return bad;
}

/* seconds per four-lane product: two chains that start apart (one chain for both would read half) */
__attribute__((target("avx2,fma"), noinline)) static double vec(int steps, const mod_t *m, uint64_t *sink) {
    uint64_t w[4][6];
    vd_t a, b, c;
    for (int l = 0; l < 4; l++) random_below_p(w[l]);
    load4(&a, w);
    load4(&c, w);
    for (int l = 0; l < 4; l++) random_below_p(w[l]);
    load4(&b, w);
    double t0 = bench_now();
    for (int i = 0; i < steps; i++) {
        fp64_mul(&a, &a, &c, m);
        fp64_mul(&b, &b, &c, m);
    }
    double t = bench_now() - t0;
    double s[4];
    _mm256_storeu_pd(s, _mm256_add_pd(a.l[3], b.l[5]));
    *sink += (uint64_t)s[1];
    return t / (steps * 2.0);
}

int main(void) {
    unsigned a, b, c, d, fma = 0, ext = 0;
    if (__get_cpuid(1, &a, &b, &c, &d)) fma = c >> 12 & 1;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
        ext = (b >> 5 & 1) && (b >> 8 & 1) && (b >> 19 & 1); /* AVX2 BMI2 ADX */
    if (!fma || !ext) {
        fprintf(stderr, "fp64-limbs: needs AVX2, FMA, BMI2 and ADX\n");
        return 1;
    }
    mod_t m;
    mod_init(&m);
    int bad = check(&m);
    if (bad) {
        fprintf(stderr, "fp64-limbs: %d of 200000 products differ from zk_x86_mont_mul6\n", bad);
        return 1;
    }
    uint64_t sink = 0;
    double v = 1e9, s = 1e9;
    for (int r = 0; r < 7; r++) {
        double a = vec(20000, &m, &sink), b = bench_mulx(6, 20000, &sink);
        if (a < v) v = a;
        if (b < s) s = b;
    }
    printf("BLS12-381 Fq, 8 x 48-bit doubles vs 6 words: vector %6.1f ns a product (%5.1f an element), MULX %5.1f ns: "
           "vector/MULX per element %.2f (200000 products checked)\n",
           v * 1e9, v * 1e9 / 4, s * 1e9, v / 4 / s);
    return sink == 1; /* keeps the products */
}
