/* Host-side Fr helpers of the NTT set-up (roots of unity, inverses, power tables), kept free of
 * CUDA so that tests/test_cuda_host.cpp checks them against zk/. */
#pragma once
#include "ff.cuh"

/* Host-side exponentiation by a multi-word exponent (table setup only). */
template <class F>
static F zc_pow_words(F b, const uint32_t *e, int nwords) {
    F acc = F::one();
    for (int i = nwords * 32 - 1; i >= 0; i--) {
        acc = acc.sqr();
        if ((e[i / 32] >> (i % 32)) & 1) acc = acc * b;
    }
    return acc;
}
/* e = p - k, with the borrow carried (BLS12-381 r ends in the word 0x00000001) */
template <class F>
static void zc_p_minus(uint32_t *e, uint32_t k) {
    uint64_t borrow = k;
    for (int i = 0; i < F::N; i++) {
        uint64_t v = (uint64_t)F::modulus().l[i] - borrow;
        e[i] = (uint32_t)v;
        borrow = (v >> 63) & 1;
    }
}
template <class F>
static F zc_inv(F a) {
    uint32_t e[F::N];
    zc_p_minus<F>(e, 2);
    return zc_pow_words(a, e, F::N);
}
template <class F>
static F zc_from_u64(uint64_t v) {
    F s = F::zero();
    s.l[0] = (uint32_t)v;
    s.l[1] = (uint32_t)(v >> 32);
    return s.to_mont();
}
/* w[k] = 5^((r-1)/2^k), the snarkjs roots (formats.md §5.2). */
template <class F>
static F zc_root(uint32_t k) {
    uint32_t e[F::N];
    zc_p_minus<F>(e, 1);
    for (uint32_t s = 0; s < k; s++) { /* e >>= 1 */
        for (int i = 0; i < F::N; i++) e[i] = (e[i] >> 1) | (i + 1 < F::N ? e[i + 1] << 31 : 0);
    }
    return zc_pow_words(zc_from_u64<F>(5), e, F::N);
}

template <class F>
static void zc_host_pow_halves(F base, F first, uint32_t logn, uint32_t split, F *lo, F *hi) {
    /* lo[j] = first·base^j (j < 2^split), hi[k] = base^(k·2^split) (k < 2^(logn-split)) */
    F acc = first;
    for (uint32_t j = 0; j < (1u << split); j++) {
        lo[j] = acc;
        acc = acc * base;
    }
    F step = base;
    for (uint32_t i = 0; i < split; i++) step = step.sqr();
    acc = F::one();
    uint32_t nh = logn > split ? 1u << (logn - split) : 1;
    for (uint32_t k = 0; k < nh; k++) {
        hi[k] = acc;
        acc = acc * step;
    }
}

