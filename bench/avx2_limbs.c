/* The avx2 set's product (zk/avx2_29.h, four elements a vector in 29-bit limbs) against MULX's,
 * per element, for BN254's base field (9 limbs against 4 words, as zk/kernels.c's start-up race)
 * and for BLS12-381's (14 limbs against 6 words: the header's own code with V29_NL 14, V29_NW 6,
 * V29_SH 22, made by bench/avx2-limbs). Two chains of vector products against eight of MULX
 * products, the least of 5 rounds. Built and run by bench/avx2-limbs; not part of the build. */
#include <stdio.h>

#include AVX2_HDR
#include "bench/mulx_chains.h"

#if V29_NW == 4
static const uint64_t P[4] = BN_FQ_P, ONE[4] = BN_FQ_ONE;
#define INV BN_FQ_INV
#define FIELD "BN254 Fq, 9 limbs vs 4 words"
#else
static const uint64_t P[6] = BLS_FQ_P, ONE[6] = BLS_FQ_ONE;
#define INV BLS_FQ_INV
#define FIELD "BLS12-381 Fq, 14 limbs vs 6 words"
#endif

/* seconds per four-lane product (two chains; the products' count checked in bench/avx2-limbs) */
__attribute__((target("avx2"), noinline)) static double vec(int steps, uint64_t *sink) {
    v29_mod_t m;
    v29_mod_init(&m, P, INV);
    v29_t a, b, c;
    for (int i = 0; i < V29_NL; i++) { /* a and b differ, or the compiler may compute one chain for both */
        a.l[i] = c.l[i] = _mm256_set1_epi64x((long long)v29_bits(ONE, 29 * i));
        b.l[i] = _mm256_set1_epi64x((long long)v29_bits(P, 29 * i));
    }
    double t0 = bench_now();
    for (int i = 0; i < steps; i++) {
        v29_mul_lz(&a, &a, &c, &m);
        v29_mul_lz(&b, &b, &c, &m);
    }
    double t = bench_now() - t0;
    *sink += (uint64_t)_mm256_extract_epi64(a.l[3], 1) + (uint64_t)_mm256_extract_epi64(b.l[5], 2);
    return t / (steps * 2.0);
}

int main(void) {
    uint64_t sink = 0;
    double v = 1e9, s = 1e9;
    for (int r = 0; r < 5; r++) {
        double a = vec(4096, &sink), b = bench_mulx(V29_NW, 4096, &sink);
        if (a < v) v = a;
        if (b < s) s = b;
    }
    printf("%-34s vector %6.1f ns a product (%5.1f an element), MULX %5.1f ns: vector/MULX per element %.2f\n", FIELD,
           v * 1e9, v * 1e9 / 4, s * 1e9, v / 4 / s);
    return sink == 1; /* keeps the products */
}
